"""What the reduction without a shuffle holds, and how many input blocks keep it small.

The reduction of whole-number statistics (:mod:`evalci.frames.dask_cells`)
runs two kinds of task: ``evalci-cells``, one a partition, and
``evalci-sum``, which adds the partial cells of one input block. Measured on
0/1 outcomes (2026-12-06; shuffled rows of 2 x 10^6 inputs x 5 runs, int64
ids and int8 outcomes: 9-byte rows, 32-byte cells):

* ``tracemalloc`` of one task: an ``evalci-cells`` task allocates 39-57
  bytes a row of its partition beyond the rows (1 and 10 systems); an
  ``evalci-sum`` task 1.8-2.0 times its block's partial cells, which are
  at most one a row;
* two workers with a ``memory_limit``, 10^7 rows: in 8 partitions and one
  block (before this rule) killed at 127 MiB of room, and, once the client
  took the blocks' summaries (the blocks kept on the workers), at 518 MiB
  too (it had finished there once before); 8 partitions in 8 blocks
  finished at 97 MiB and were killed at 74 MiB; 8 partitions in 32 blocks
  were killed at 85 MiB (the partitions, 1.25 x 10^6 rows each, the
  largest tasks); 32 partitions in 32 blocks finished at 74 MiB and paused
  for good at 51 MiB; 80 partitions in 10 blocks finished at 96 MiB.

The rule: :data:`IN_PLACE_ROOM` beyond
:data:`~evalci.engine.scaleout.REDUCE_ROOM` (pyarrow's buffers and the
worker's unmanaged memory), plus the larger of a partition's rows times
(the row's bytes + :data:`CELLS_PER_ROW` cells) and a block's rows times
:data:`SUM_CELLS_PER_ROW` cells: the partition's term fitted to the runs
above, the block's set near ``tracemalloc``'s whole-task figure (the
partial cells and 1.8-2.0 times them) after the 518 MiB failure. It asks
809, 141, 95, 70 and 122 MiB for the configurations in the order above: it
refuses every run that failed, and errs on the side of refusing where a
block of more than 10^6 rows finished with less (97 and 96 MiB).
The rows must
be known to the client (Parquet footers, pandas); a table too large for its
workers is refused with the ``memory_limit`` that fits and, where more
partitions would make the tasks fit, how many (each
:data:`BLOCK_PARTITIONS` partitions make one more input block).
"""

from __future__ import annotations

import math

import numpy as np

from evalci.engine import scaleout as _scaleout

__all__ = ["IN_PLACE_ROOM", "block_count", "cell_bytes", "in_place_share"]

#: Partitions whose cells make one input block (of at most :data:`MAX_BLOCKS`).
BLOCK_PARTITIONS = 8
#: The most input blocks (``evalci-sum`` trees) of one reduction.
MAX_BLOCKS = 16
#: Room the reduction without a shuffle needs beyond REDUCE_ROOM, whatever its size.
IN_PLACE_ROOM = 14 * 2**20
#: An ``evalci-cells`` task: cells' bytes a row of its partition, beyond the row.
CELLS_PER_ROW = 1.0
#: An ``evalci-sum`` task: cells' bytes a row summed into its block.
SUM_CELLS_PER_ROW = 2.5


def block_count(npartitions: int) -> int:
    """Input blocks of a reduction of ``npartitions`` partitions: one per
    :data:`BLOCK_PARTITIONS` partitions, at most :data:`MAX_BLOCKS`.

    More blocks for fewer partitions were tried (a block of at most 2**18
    rows): ten times the pieces, and at 97 MiB of room 10^7 rows in 8
    partitions and 39 blocks were killed where 8 blocks finished (a spilled
    partition's pieces are read back whole for each block).

    >>> block_count(8), block_count(64), block_count(1000)
    (1, 8, 16)
    """
    return max(1, min(MAX_BLOCKS, -(-max(int(npartitions), 1) // BLOCK_PARTITIONS)))


def cell_bytes(meta, args) -> int:
    """Bytes of one cell: its key columns, and its statistics and runs as float64."""
    keys = list(dict.fromkeys([*args.cluster, *args.by, *args.strata]))
    key_bytes = _scaleout.row_bytes(meta.dtypes[keys])
    cols = list(dict.fromkeys([args.value, *args.metric.columns]))
    try:
        data = {c: meta[c].to_numpy() for c in cols}
        raw = np.asarray(args.metric.statistics(data, args.value))
        m = int(raw.shape[1]) if raw.ndim == 2 else 1
    except Exception:  # a metric that cannot read no rows: one a column
        m = len(cols) + 1
    return key_bytes + 8 * (m + 1)


def _need(rows: int, parts: int, row_bytes: int, cell: int, blocks=None) -> tuple:
    """``(bytes, partition's rows, block's rows, the partition is larger)`` of
    ``parts`` partitions in ``blocks`` blocks (:func:`block_count`'s if None)."""
    per_part = math.ceil(rows / parts)
    per_block = math.ceil(rows / (blocks or block_count(parts)))
    part = per_part * (row_bytes + CELLS_PER_ROW * cell)
    block = per_block * SUM_CELLS_PER_ROW * cell
    return IN_PLACE_ROOM + max(part, block), per_part, per_block, part >= block


def in_place_share(rows: int, npartitions: int, row_bytes: int, cell: int, room=None):
    """``(bytes, what, advice)`` for :func:`evalci.engine.scaleout.check_reduce_memory`:
    :data:`IN_PLACE_ROOM` and the larger of an ``evalci-cells`` task and an
    ``evalci-sum`` task of a table of ``rows`` rows of ``row_bytes`` bytes
    in ``npartitions`` partitions, ``cell`` bytes a cell (every worker may
    run either). ``advice`` names the fewest partitions (a multiple of
    :data:`BLOCK_PARTITIONS`) whose tasks fit in ``room`` bytes beyond
    ``REDUCE_ROOM`` with 5% to spare (a worker's own memory moves by a MiB
    or two from one start to the next), if any does.

    >>> int(in_place_share(10**7, 8, 9, 32)[0] / 2**20)  # one block of 10^7 rows
    776
    """
    parts = max(int(npartitions), 1)
    need, per_part, per_block, by_part = _need(rows, parts, row_bytes, cell)
    if by_part:
        what = f"a partition's cells ({per_part:,} rows of {row_bytes} bytes"
    else:
        what = f"an input block's cells ({per_block:,} rows"
    what = (
        f"{what}: {(need - IN_PLACE_ROOM) / 2**20:,.0f} MiB) and "
        f"{IN_PLACE_ROOM / 2**20:.0f} MiB for reading"
    )
    step = BLOCK_PARTITIONS  # each step one more block, up to MAX_BLOCKS
    more = range(-(-(parts + 1) // step) * step, step * MAX_BLOCKS + 1, step)
    fits = (
        []
        if room is None
        else [p for p in more if _need(rows, p, row_bytes, cell)[0] <= 0.95 * room]
    )
    advice = (
        f", or split the table into {fits[0]:,} partitions "
        f"(ddf.repartition(npartitions={fits[0]}))"
        if fits
        else ""
    )
    return need, what, advice
