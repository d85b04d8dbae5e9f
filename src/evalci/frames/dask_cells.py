"""The reduction of whole-number statistics (0/1 outcomes, counts) without a shuffle.

Whole numbers add exactly in any order while no partial sum reaches 2**53, so
a cell's sum need not see the cell's rows together: each partition sums the
rows it holds into partial cells (``evalci-cells``,
:func:`evalci.engine.cells.whole_cell_sums`), splits them into
``n_blocks`` input blocks by the cluster key (an integer modulo
``n_blocks``, else a hash), and each block's partial cells are added up a
tree of :data:`FAN_IN` at a time
(``evalci-sum``). No row moves between workers, and a task holds the
partial cells of one block only (about
:data:`~evalci.frames.dask_memory.BLOCK_PARTITIONS` partitions' worth at the
first level; :mod:`evalci.frames.dask_memory` sizes the tasks before the
call). The blocks' cells are those
:func:`evalci.engine.cells.cell_statistics` gives on the whole table, bit for
bit, whatever the partitioning and row order.

Whether every statistic is whole is known only once the rows are read: a
partition that finds one that is not returns None at once, and the caller
takes the shuffle (:func:`evalci.frames.dask_frame.cell_parts`). So does a
table whose largest statistic times a cell's rows reaches 2**53 (the test
of :func:`evalci.engine.table._sums_exact`). A lazy graph cannot change its
path once built: it takes this one only when the statistics are whole by
their type (integers or booleans in, integers out) and refuses a table too
large to add exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci.engine import cell_patterns
from evalci.engine import cells as _cells
from evalci.engine.table import CELL_RUNS
from evalci.frames.dask_memory import block_count

__all__ = [
    "FAN_IN",
    "Summaries",
    "block_cells",
    "checked",
    "exact",
    "merged",
    "summarised",
    "whole_by_type",
]

#: Partial cell tables one ``evalci-sum`` task adds at most.
FAN_IN = 64


def whole_by_type(meta: pd.DataFrame, args) -> bool:
    """Whether the metric's statistics are whole numbers by their type alone.

    The metric is run on the metadata's (empty) columns: integer or boolean
    columns in, an integer array out.
    """
    cols = list(dict.fromkeys([args.value, *args.metric.columns]))
    if not all(meta[c].dtype.kind in "biu" for c in cols):
        return False
    try:
        data = {c: meta[c].to_numpy() for c in cols}
        raw = np.asarray(args.metric.statistics(data, args.value))
    except Exception:  # a metric that cannot read no rows: not known
        return False
    return raw.dtype.kind in "biu"


def _partition(part: pd.DataFrame, args, n_blocks: int):
    """``evalci-cells``: a partition's partial cells by input block, and the
    largest statistic; ``(None,) * n_blocks, None`` when one is not whole."""
    summed = _cells.whole_cell_sums(part, args)
    if summed is None:
        return (None,) * n_blocks + (None,)
    cells, big = summed
    if n_blocks == 1 or len(cells) == 0:
        return (cells,) + (cells.iloc[:0],) * (n_blocks - 1) + (big,)
    block = input_blocks(cells[list(args.cluster)], n_blocks)
    order = np.argsort(block, kind="stable")
    ends = np.cumsum(np.bincount(block, minlength=n_blocks))
    cells = cells.take(order)
    pieces = [cells.iloc[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
    return (*pieces, big)


def input_blocks(keys: pd.DataFrame, n_blocks: int) -> np.ndarray:
    """Each cell's input block (int16): the same for the same cluster key in
    every partition. An integer key modulo ``n_blocks``, else a hash."""
    if _int_key(keys):
        values = keys.iloc[:, 0].to_numpy()
    else:
        values = pd.util.hash_pandas_object(keys, index=False).to_numpy()
    return (values % values.dtype.type(n_blocks)).astype(np.int16)


def _sum(args, *parts):
    """``evalci-sum``: partial cells of one block added, a cell a row (None
    if a partition found a statistic that is not whole)."""
    if any(p is None for p in parts):
        return None
    return _cells.add_cells(list(parts), args)


def _tree(parts: list, args, name: str) -> object:
    """The Delayed sum of ``parts``, at most :data:`FAN_IN` at a time, in
    as few levels as that allows (one up to :data:`FAN_IN` partitions)."""
    import dask

    level = 0
    while len(parts) > 1 or level == 0:
        groups = -(-len(parts) // FAN_IN)
        cut = np.linspace(0, len(parts), groups + 1).round().astype(int)
        parts = [
            dask.delayed(_sum, pure=True)(
                args, *parts[a:b], dask_key_name=f"{name}-{level}-{j}"
            )
            for j, (a, b) in enumerate(zip(cut[:-1], cut[1:], strict=True))
        ]
        level += 1
    return dask.delayed(_finish_block, pure=True)(
        parts[0], list(args.cluster), dask_key_name=f"{name}-sorted"
    )


def _finish_block(cells, cluster: list[str]):
    """A block's cells sorted by an integer input key (so the client merges
    the blocks instead of sorting them), statistics and runs as int32 when
    they fit: a third of the bytes to send, the same floats back."""
    if cells is None or len(cells) == 0:
        return cells
    if _int_key(cells[cluster]):
        order = np.argsort(cells[cluster[0]].to_numpy(), kind="stable")
        cells = cells.take(order).reset_index(drop=True)
    for name in [c for c in cells.columns if c.startswith("__evalci_s")] + [CELL_RUNS]:
        x = cells[name].to_numpy()
        if x.dtype.kind == "f" and np.abs(x).max() < 2.0**31:
            cells[name] = x.astype(np.int32)
    return cells


def _int_key(keys: pd.DataFrame) -> bool:
    dtype = keys.dtypes.iloc[0]
    return len(keys.columns) == 1 and isinstance(dtype, np.dtype) and dtype.kind in "iu"


def merged(blocks: list, cluster: list[str]) -> list:
    """The blocks' cells as one table: sorted runs of an integer key merged
    into key order (a stable sort of a few sorted runs), else concatenated."""
    full = [b for b in blocks if len(b)]
    if len(full) <= 1:
        return full or blocks[:1]
    cells = pd.concat(full, ignore_index=True)
    if _int_key(cells[cluster]):
        order = np.argsort(cells[cluster[0]].to_numpy(), kind="stable")
        cells = cells.take(order).reset_index(drop=True)
    return [cells]


def block_cells(ddf, args, token: str) -> tuple[list, list]:
    """``(blocks, bigs)``: Delayed cells of each input block, and each
    partition's largest statistic (None where one is not whole)."""
    import dask

    cols = [*args.cluster, *args.by, *args.strata, args.value, *args.metric.columns]
    cols = list(dict.fromkeys(cols))
    n_blocks = block_count(ddf.npartitions)
    split = [
        dask.delayed(_partition, pure=True, nout=n_blocks + 1)(
            part, args, n_blocks, dask_key_name=f"evalci-cells-{token}-{i}"
        )
        for i, part in enumerate(ddf[cols].to_delayed())
    ]
    blocks = [
        _tree([s[b] for s in split], args, f"evalci-sum-{token}-{b}")
        for b in range(n_blocks)
    ]
    return blocks, [s[n_blocks] for s in split]


def exact(blocks: list, bigs: list) -> bool:
    """Whether the blocks' sums are exact: every statistic whole, and the
    largest times a cell's rows below 2**53 (so in any order of adding)."""
    if any(b is None for b in blocks):
        return False
    return _exact_sums(
        [float(b[CELL_RUNS].max()) if len(b) else 0.0 for b in blocks], bigs
    )


def _exact_sums(most: list, bigs: list) -> bool:
    """:func:`exact` from each block's largest runs and each partition's
    largest statistic (None where a statistic is not whole)."""
    if any(x is None for x in [*most, *bigs]):
        return False
    return max(bigs, default=0.0) * max(most, default=0.0) < 2.0**53


def checked(cluster: list[str], blocks: list, *bigs):
    """``evalci-exact`` of a lazy graph: the blocks if their sums are exact."""
    if not exact(list(blocks), list(bigs)):
        raise ValueError(
            "the statistics are too large to add exactly in any order (the "
            "largest times an input's runs reaches 2**53): call with "
            "compute=True, which sums each input's runs in one task."
        )
    return merged(list(blocks), cluster)


@dataclass
class Summaries:
    """An eager reduction's input blocks, kept where they were computed (a
    persisted Delayed each), and each block's distinct inputs
    (:func:`evalci.engine.cell_patterns.block_signatures`: its
    representatives, or None when it has no summary)."""

    blocks: list
    representatives: list

    def release(self) -> None:
        """Drop the blocks (on a distributed client, their futures: the
        workers free them) once the pass no longer needs them."""
        self.blocks = []

    def table(self) -> pd.DataFrame | None:
        """Every block's representatives as one table (None if a block has
        no summary, or there are no inputs)."""
        if any(r is None for r in self.representatives):
            return None
        full = [r for r in self.representatives if len(r)]
        return pd.concat(full, ignore_index=True) if full else None


def summarised(ddf, args, token: str, gather) -> Summaries | None:
    """The eager reduction's blocks, kept on the workers, and their summaries
    (``evalci-summary``), brought here; None when the blocks' sums are not
    exact (:func:`exact`: a statistic not whole, or too large), which takes
    the shuffle.

    Only the summaries travel: one representative input per distinct
    signature and how many inputs share it, not a cell per input. The
    blocks are gathered only if the pass cannot be built from them.
    ``gather`` brings a list of Delayed here
    (:func:`evalci.frames.dask_frame.gathered`, a few at a time).
    """
    import dask

    blocks, bigs = block_cells(ddf, args, token)
    kept = dask.persist(*blocks, *bigs)  # one graph: each partition read once
    blocks, bigs = list(kept[: len(blocks)]), list(kept[len(blocks) :])
    summaries = [
        dask.delayed(cell_patterns.block_signatures, pure=True)(
            b, args, dask_key_name=f"evalci-summary-{token}-{i}"
        )
        for i, b in enumerate(blocks)
    ]
    out = gather([*summaries, *bigs])
    summaries, bigs = out[: len(summaries)], out[len(summaries) :]
    if not _exact_sums([m for _, m, _ in summaries], bigs):
        return None
    return Summaries(blocks, [r for r, _, _ in summaries])
