"""Tables of per-cell sums: each (cluster, group, strata) cell's summed statistics.

What the Dask reductions hand the engine instead of rows. :func:`cell_statistics`
sums a cell's rows in the canonical order, so it needs every row of the cells
it sums (bit for bit :func:`evalci.engine.table.prepare`'s sums);
:func:`whole_cell_sums` sums whole-number statistics in any order, so a cell
may be summed in pieces (a partition's rows of it) and the pieces added
anywhere; :func:`prepare_cells` builds the cube of a cell table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci.engine.args import BootstrapArgs
from evalci.engine.cube import Cube, factorize
from evalci.engine.cube import group_codes as group_codes_of
from evalci.engine.table import (
    CELL_RUNS,
    _canonical_order,
    _check_strata,
    _clean_values,
    _metric_data,
    check_magnitude,
    largest,
    stat_columns,
    whole_numbers,
)

__all__ = ["add_cells", "cell_statistics", "prepare_cells", "whole_cell_sums"]


def cell_statistics(rows: pd.DataFrame, args: BootstrapArgs, runs=None):
    """Summed statistics of every (cluster, group, strata) cell that ``rows`` hold whole.

    ``runs`` names a column of multiplicities (a row standing for that many
    identical runs). The values are checked as :func:`prepare` checks them,
    each row's statistics formed, and a cell's rows summed in the canonical
    order, so the sums are bit for bit those of :func:`prepare` on the whole
    table. One row per cell: the key columns, :func:`stat_columns` and
    :data:`CELL_RUNS`. The per-partition step of the Dask reduction.
    """
    frame = _clean_values(rows, args)
    if runs is not None:
        frame = frame.iloc[np.repeat(np.arange(len(frame)), frame[runs].to_numpy())]
    if len(frame) == 0:
        return _no_cells(args)
    out, cell = _cells_of(frame, args)
    order = _canonical_order(frame, args, cell)
    frame, cell = frame.iloc[order], cell[order]
    stats = _row_statistics(frame, args)[1]
    return _summed(out, cell, stats)


def whole_cell_sums(rows: pd.DataFrame, args: BootstrapArgs):
    """``(cells, largest |statistic|)`` of ``rows`` when every statistic is whole.

    :func:`cell_statistics` without the canonical order: whole numbers add
    exactly in any order while no partial sum reaches 2**53 (the caller
    checks ``largest`` times a cell's rows against that, as
    :func:`_sums_exact` does), so these cells may hold only part of an input's
    rows and be summed with the rest anywhere. None when a statistic is not
    whole (its sums depend on their order). The map step of the Dask reduction
    of 0/1 and count data, which needs no shuffle.
    """
    frame = _clean_values(rows, args)
    if len(frame) == 0:
        return _no_cells(args), 0.0
    raw, stats = _row_statistics(frame, args)
    big = largest(stats)
    if raw.dtype.kind not in "biu" and not whole_numbers(stats):
        return None
    out, cell = _cells_of(frame, args)
    return _summed(out, cell, stats), big


def add_cells(parts: list, args: BootstrapArgs) -> pd.DataFrame:
    """Partial cells of :func:`whole_cell_sums` added: one row a cell.

    Exact in any order (whole numbers, partial sums below 2**53): a cell's
    statistics and runs are summed with one bincount per column, in O(N)
    when the keys are integers of moderate range (no sort, no hashing).
    """
    full = [p for p in parts if len(p)]
    if len(full) <= 1:
        return full[0] if full else parts[0]
    both = pd.concat(full, ignore_index=True)
    out, cell = _cells_of(both, args)
    for name in [c for c in both.columns if c.startswith("__evalci_s")] + [CELL_RUNS]:
        w = both[name].to_numpy(dtype=float)
        out[name] = np.bincount(cell, weights=w, minlength=len(out))
    return out


def _no_cells(args: BootstrapArgs) -> pd.DataFrame:
    keys = list(dict.fromkeys([*args.cluster, *args.by, *args.strata]))
    return pd.DataFrame(columns=keys + [CELL_RUNS])


def _cells_of(frame: pd.DataFrame, args: BootstrapArgs):
    """``(keys, cell)``: each cell's key columns (one row a cell) and each row's cell."""
    keys = list(dict.fromkeys([*args.cluster, *args.by, *args.strata]))
    # each role's codes (and its messages), then one code per cell
    cluster, uniques = factorize(frame, args.cluster, "cluster")
    if keys == list(args.cluster) and len(keys) == 1:
        if isinstance(frame[keys[0]].dtype, np.dtype):  # the keys are the uniques
            return pd.DataFrame({keys[0]: uniques.to_numpy()}), cluster
    codes = [cluster, group_codes_of(frame, args.by)[0]]
    if args.strata:
        codes.append(factorize(frame, args.strata, "strata")[0])
    flat = np.ravel_multi_index(codes, [int(c.max()) + 1 for c in codes])
    first, cell = _dense_cells(flat)
    return frame[keys].iloc[first].reset_index(drop=True), cell


def _dense(size: int, rows: int) -> bool:
    """Whether a table of ``size`` slots is cheap next to ``rows`` rows."""
    return size <= 4 * rows + (1 << 16)


def _dense_cells(flat: np.ndarray):
    """``(first, cell)`` as ``np.unique(flat, return_index=True,
    return_inverse=True)`` gives them, except that ``first`` may be any row of
    its cell (they hold the same keys); in O(N) through a table of the codes
    present when their range is small, no sort."""
    size = int(flat.max()) + 1
    if not _dense(size, len(flat)):
        _, first, cell = np.unique(flat, return_index=True, return_inverse=True)
        return first, cell
    present = np.zeros(size, dtype=bool)
    present[flat] = True
    slot = np.empty(size, dtype=np.int64)
    slot[flat] = np.arange(len(flat), dtype=np.int64)
    lut = np.cumsum(present, dtype=np.int64) - 1
    return slot[present], lut[flat]


def _cell_order(cluster, group, n_clusters: int, n_groups: int) -> np.ndarray:
    """``np.lexsort((cluster, group))`` of cells, each (cluster, group) once
    (None when that is the order they are in): in O(N G) by placing each at
    its key when that table is small (a repeated cell, which the strata check
    refuses first, takes the sort)."""
    size = n_clusters * n_groups
    key = cluster if n_groups == 1 else group * n_clusters + cluster
    if (key[1:] > key[:-1]).all():  # in order already (merged sorted blocks)
        return None
    if _dense(size, len(cluster)):
        slot = np.full(size, -1, dtype=np.int64)
        slot[key] = np.arange(len(cluster), dtype=np.int64)
        order = slot[slot >= 0]
        if len(order) == len(cluster):
            return order
    return np.lexsort((cluster, group))


def _row_statistics(frame: pd.DataFrame, args: BootstrapArgs):
    """``(raw, stats)``: the metric's per-row statistics as returned and as floats."""
    raw = np.asarray(args.metric.statistics(_metric_data(frame, args), args.value))
    stats = np.asarray(raw, dtype=float)
    check_magnitude(stats, args.value, f"metric {as_written(args.metric.name)}")
    return raw, stats


def _summed(out: pd.DataFrame, cell: np.ndarray, stats: np.ndarray) -> pd.DataFrame:
    """``out`` with each cell's summed statistics and its number of rows."""
    n = len(out)
    for j, name in enumerate(stat_columns(stats.shape[1])):
        out[name] = np.bincount(cell, weights=stats[:, j], minlength=n)
    out[CELL_RUNS] = np.bincount(cell, minlength=n).astype(float)
    return out


def prepare_cells(cells: pd.DataFrame, args: BootstrapArgs) -> tuple[Cube, np.ndarray]:
    """The cube of a cell table (:func:`cell_statistics` of every cell).

    What :func:`prepare` gives on the rows behind the table, for
    ``strategy="cluster"`` with inputs as clusters.
    """
    if len(cells) == 0:
        raise ValueError("no rows left to resample (after dropping missing values).")
    group_codes, groups, n_groups = group_codes_of(cells, args.by)
    cluster_codes, cluster_keys = factorize(cells, args.cluster, "cluster")
    strata_codes = None
    if args.strata:
        strata_codes = _check_strata(
            cells, cluster_codes, len(cluster_keys), args.strata[0], args.cluster
        )
    runs = cells[CELL_RUNS].to_numpy(dtype=float)
    n_runs = np.bincount(group_codes, weights=runs, minlength=n_groups)
    order = _cell_order(cluster_codes, group_codes, len(cluster_keys), n_groups)

    def ordered(x):  # in (group, cluster) order: a copy, or the array as it is
        return np.ascontiguousarray(x) if order is None else x[order]

    cube = Cube(
        row_group=ordered(group_codes),
        row_cluster=ordered(cluster_codes),
        cluster_keys=cluster_keys,
        groups=groups,
        strata=strata_codes,
    )
    names = [c for c in cells.columns if c.startswith("__evalci_s")]
    cube.stats = ordered(cells[names].to_numpy(dtype=float))
    check_magnitude(cube.stats, args.value, f"metric {as_written(args.metric.name)}")
    cube.runs = ordered(runs)
    return cube, n_runs.astype(np.int64)
