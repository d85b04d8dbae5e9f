"""Scale out: the engine's resampling as Dask tasks.

The engine pass (:mod:`evalci.engine.passes`) has three steps: build the draw units,
resample them block by block, read estimates and jackknife. This module runs
the middle step -- the heavy one, O(B N) on the index kernel -- as a Dask
graph with one task per (draw unit, block of :data:`TASK_STREAMS` streams),
and, for units of more than :data:`evalci.engine.resampling.TILE_SIZE` inputs, one
task per (block, input tile) too:

* ``evalci-statistics``: what a unit's blocks read (:class:`engine.UnitWork`:
  its per-input statistics or pattern table, never rows): a graph key holding
  the object, on every scheduler -- never a scattered future, so a worker
  lost with the only copy costs a recomputation, not the job; one key per
  block of groups when the statistics exceed
  :data:`evalci.engine.resampling.GROUP_BLOCK_BYTES` (a task holds one block);
* ``evalci-resample``: the replicates of one block, *finished* (the metric of
  each replicate's sums, ``(1024, G)``), so no task ever holds the replicate
  sums of every block; ``evalci-groups`` puts a block's groups side by side;
* ``evalci-tiles`` / ``evalci-tile`` / ``evalci-combine``: the exact two-stage
  multinomial of a tiled unit -- each replicate's tile totals, then each
  tile's draws inside it, then the tiles' partial sums added in tile order;
* ``evalci-finish``: estimates, jackknife and intervals from the gathered
  ``(B, G)`` replicates.

Streams are keyed by index (:mod:`evalci.engine.resampling`), never by task, so any
scheduler and any blocking give the numbers of the numpy path, bit for bit.
Callable metrics resample rows and stay in one process.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import replace

import numpy as np

from evalci._base.options import MIN_TILE_SIZE
from evalci.engine import passes as engine
from evalci.engine import resampling as _rs
from evalci.engine import tiles

__all__ = ["TASK_STREAMS", "finish", "lazy_finish", "replicate_blocks"]

_RUN_LEVEL = ("single_draw", "hierarchical")

#: Streams (of 64 replicates) per task: 1,024 replicates. Scheduling and
#: memory only; results never depend on it.
TASK_STREAMS = 16


def active_client():
    """The ``distributed`` Client that ``dask.compute`` would use now, or None."""
    import dask.base

    scheduler = dask.base.get_scheduler()
    owner = getattr(scheduler, "__self__", None)
    return owner if type(owner).__name__ == "Client" else None


def _ship(obj, name: str):
    """``obj`` as a graph input every task can read: one named key holding
    the object itself.

    It lives in the graph, not in a worker's memory only: on a ``distributed``
    client the scheduler keeps the task, so if the worker holding the object
    dies before a copy exists the key is simply computed again elsewhere (a
    scattered future would be lost with it, and every task reading it
    cancelled). Its size is bounded by :func:`_group_works` and the tiles.
    """
    import dask

    return dask.delayed(obj, name=name, traverse=False)


def _blocks(n_resamples: int) -> list[tuple[int, int]]:
    """``(first stream, streams)`` of every task, covering ``n_resamples``."""
    total = _rs.n_streams_for(n_resamples)
    return [
        (first, min(TASK_STREAMS, total - first))
        for first in range(0, total, TASK_STREAMS)
    ]


def _tiled(work: engine.UnitWork) -> bool:
    """Whether the unit's index kernel draws tile by tile (very many inputs)."""
    return work.unit is not None and _rs.tiled(work.unit, work.strategy, work.tile_size)


def _group_works(work: engine.UnitWork) -> list:
    """``(lo, hi, work)`` per block of groups of an untiled index-kernel unit
    (:func:`evalci.engine.tiles.group_blocks`); one block, the unit's
    own work, for the other kernels."""
    unit = work.unit
    one = [(0, None, work)]
    if unit is None or work.weights == "poisson" or work.strategy in _RUN_LEVEL:
        return one
    n, g, m = unit.T.shape
    spans = tiles.group_blocks(n, g, m)
    if len(spans) == 1:
        return one
    return [
        (
            lo,
            hi,
            replace(work, unit=replace(unit, T=np.ascontiguousarray(unit.T[:, lo:hi]))),
        )
        for lo, hi in spans
    ]


def _group_block(work, first: int, n_streams: int):
    """One ``evalci-resample`` task of a block of groups: its finished replicates."""
    sums = tiles.stream_replicate_sums(
        work.unit,
        work.root,
        work.strategy,
        first,
        n_streams,
        weights=work.weights,
        group_block=True,
        tile_size=work.tile_size,
    )
    return work.finalize(sums)


def _join(parts):
    """One ``evalci-groups`` task: a block's replicates, its groups' blocks side by side."""
    return np.concatenate(parts, axis=1)


def _block(work, first: int, n_streams: int):
    """One ``evalci-resample`` task: finished replicates of a block."""
    if work is None:
        return None
    return work.replicates(first, n_streams)


def _combine(finalize, parts):
    """One ``evalci-combine`` task: a block's tile sums, in tile order, finished."""
    return finalize(tiles.combine_pieces(parts))


def _tile_graph(work: engine.UnitWork, token: str, u: int, blocks):
    """The replicate blocks of a tiled unit: totals, tiles, combine."""
    import dask

    unit, size = work.unit, work.tile_size
    pieces = tiles.pieces(unit.strata_bounds, size)
    shipped = [
        _ship(np.ascontiguousarray(unit.T[lo:hi]), f"evalci-statistics-{token}-{u}-{p}")
        for p, (lo, hi, _) in enumerate(pieces)
    ]
    out = []
    for b, (first, n) in enumerate(blocks):
        if work.weights == "poisson":
            parts = [
                dask.delayed(tiles.poisson_piece_sums, pure=True)(
                    t,
                    work.root,
                    work.index,
                    p,
                    first,
                    n,
                    size,
                    dask_key_name=f"evalci-tile-{token}-{u}-{b}-{p}",
                )
                for p, t in enumerate(shipped)
            ]
        else:
            totals = dask.delayed(tiles.tile_totals, pure=True)(
                work.root,
                work.index,
                unit.strata_bounds,
                first,
                n,
                size,
                dask_key_name=f"evalci-tiles-{token}-{u}-{b}",
            )
            parts = [
                dask.delayed(tiles.piece_sums, pure=True)(
                    t,
                    work.root,
                    work.index,
                    p,
                    first,
                    n,
                    totals[:, p],
                    size,
                    dask_key_name=f"evalci-tile-{token}-{u}-{b}-{p}",
                )
                for p, t in enumerate(shipped)
            ]
        out.append(
            dask.delayed(_combine, pure=True)(
                work.finalize, parts, dask_key_name=f"evalci-combine-{token}-{u}-{b}"
            )
        )
    return out


def replicate_blocks(p: engine.Pass, token: str | None = None) -> list[list]:
    """Per unit, the Delayed finished replicates of each block (in order).

    Builds the ``evalci-statistics`` and ``evalci-resample`` tasks (and, for
    units over :data:`evalci.engine.resampling.TILE_SIZE` inputs, the
    ``evalci-tiles``/``-tile``/``-combine`` tasks) without computing them.

    Parameters
    ----------
    p : evalci.engine.passes.Pass
        A pass of a Metric metric (``p.fast``), from
        :func:`evalci.engine.passes.start_pass` or :func:`evalci.engine.passes.pass_of_cube`.
    token : str, optional
        The suffix that makes the task names unique; default a fresh UUID.
        The same token names the same keys, so pass one only to reuse a
        graph on purpose.

    Returns
    -------
    list of list of dask.delayed.Delayed
        ``out[u][b]``: unit ``u``'s replicates of block ``b`` (blocks of
        :data:`TASK_STREAMS` streams, ``(n, G_u)`` floats each), in stream
        order; concatenated, the unit's first ``n_resamples`` replicates.
    """
    import dask

    token = token or uuid.uuid4().hex
    blocks = _blocks(p.args.n_resamples)
    out = []
    for u in range(len(p.units)):
        work = p.work(u)
        if _tiled(work):
            out.append(_tile_graph(work, token, u, blocks))
            continue
        groups = _group_works(work)
        if len(groups) == 1:
            shipped = _ship(work, f"evalci-statistics-{token}-{u}")
            out.append(
                [
                    dask.delayed(_block, pure=True)(
                        shipped,
                        first,
                        n,
                        dask_key_name=f"evalci-resample-{token}-{u}-{b}",
                    )
                    for b, (first, n) in enumerate(blocks)
                ]
            )
            continue
        shipped = [
            _ship(w, f"evalci-statistics-{token}-{u}-g{c}")
            for c, (_, _, w) in enumerate(groups)
        ]
        out.append(
            [
                dask.delayed(_join, pure=True)(
                    [
                        dask.delayed(_group_block, pure=True)(
                            w,
                            first,
                            n,
                            dask_key_name=f"evalci-resample-{token}-{u}-{b}-g{c}",
                        )
                        for c, w in enumerate(shipped)
                    ],
                    dask_key_name=f"evalci-groups-{token}-{u}-{b}",
                )
                for b, (first, n) in enumerate(blocks)
            ]
        )
    return out


#: Bytes of a worker's own that a task cannot use, when it cannot be
#: measured (:func:`worker_memory`): an idle worker process with numpy,
#: pandas, pyarrow, distributed and evalci imported measured 176 MB resident.
WORKER_BASELINE = 180 * 2**20

#: The least room (``memory_limit`` x pause threshold, less the worker's own
#: resident memory) the reduction of a Dask DataFrame is let start in. Below
#: it a worker cannot hold a modest partition's reduction; above it, whether
#: a large table's shuffle fits depends on the data, which is not known before
#: the reduction (docs/scaling.md, Memory limits: at 200,000 inputs x 5 runs x
#: 10 systems in partitions of 100,000 rows, ~50 MiB (300 MB) and ~87 MiB
#: (350 MB) of room paused the workers for good, ~130 MiB (400 MB) finished;
#: a 60-input table ran in 62 MiB).
REDUCE_ROOM = 32 * 2**20


def _warm_rss(dask_worker=None) -> int:
    """On a worker: import what evalci's tasks import, then its resident set."""
    import dask.dataframe  # noqa: F401 - imported by every reduction task
    import pandas  # noqa: F401

    import evalci.engine.passes  # noqa: F401 - and so evalci itself

    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page


def worker_memory(client) -> list[tuple[int, int]]:
    """``(memory_limit, resident bytes)`` of every worker with a limit.

    The resident set is read on each worker after importing what evalci's
    tasks import (they would import it anyway), so it is the memory the
    worker itself takes; :data:`WORKER_BASELINE` where it cannot be read.
    """
    limits = {
        addr: w.get("memory_limit") or 0
        for addr, w in client.scheduler_info(n_workers=-1)["workers"].items()
    }
    limits = {a: x for a, x in limits.items() if x}
    if not limits:
        return []
    try:
        rss = client.run(_warm_rss, workers=list(limits))
    except Exception:  # noqa: BLE001 - no /proc, or a worker gone: assume
        rss = {}
    return [(x, rss.get(a, WORKER_BASELINE)) for a, x in limits.items()]


def _tightest(client, sizes=None):
    """``(memory_limit, own bytes, pause, room)`` of the worker with the least
    room (``memory_limit`` x pause threshold, less its own memory), or None
    when no worker has a limit (``sizes``: :func:`worker_memory`, if read)."""
    import dask

    sizes = worker_memory(client) if sizes is None else sizes
    if not sizes:
        return None
    pause = dask.config.get("distributed.worker.memory.pause") or 1.0
    limit, own = min(sizes, key=lambda s: s[0] * pause - s[1])
    return limit, own, pause, limit * pause - own


#: Bytes of room a worker needs, per byte of the columns it reduces of the
#: rows it is sent, for the shuffle of the reduction: an empirical rule, fitted
#: to five runs of 10 systems x 5 runs of scores on 2 workers (docs/scaling.md,
#: Memory limits): at 10^7 rows, ~50 and ~88 MiB of room paused the workers
#: for good, ~97 and ~130 MiB finished (the rule asks 94 MiB); at 5 x 10^7
#: rows, ~200 MiB paused them and ~585 MiB finished (the rule asks 342 MiB;
#: ~374 MiB, its advice, then ran too).
SHUFFLE_ROOM_PER_BYTE = 1.0


def known_rows(ddf) -> int | None:
    """The rows of a Dask DataFrame when the client knows them without a task
    (read straight from Parquet, whose footers count them, or made from
    pandas), else None."""
    expr = getattr(ddf, "expr", None)
    kind = type(expr).__name__
    try:
        if kind.startswith("ReadParquet"):
            lengths = expr._get_lengths()
            return None if lengths is None else int(sum(lengths))
        if kind == "FromPandas":
            return len(expr.operand("frame"))
    except Exception:  # noqa: BLE001 - footers without counts: no estimate
        return None
    return None


def row_bytes(dtypes) -> int:
    """Bytes per row of columns of these dtypes (16 for strings and objects)."""
    return sum(
        16 if d.kind in "OSUT" or getattr(d, "itemsize", 0) == 0 else d.itemsize
        for d in (getattr(d, "numpy_dtype", d) for d in dtypes)
    )


def shuffle_share(rows: int, nbytes: int, n_workers: int) -> tuple[float, str]:
    """``(bytes, what)``: a worker's share of shuffling ``rows`` rows of ``nbytes`` bytes."""
    extra = SHUFFLE_ROOM_PER_BYTE * rows * nbytes / n_workers
    what = f"its share of shuffling {rows:,} rows of {nbytes} bytes ({extra / 2**20:,.0f} MiB)"
    return extra, what


def check_reduce_memory(client, table=None, share=None) -> None:
    """Refuse, before the reduction starts, workers whose ``memory_limit``
    leaves less than :data:`REDUCE_ROOM` above their own memory, or less than
    that plus what the reduction's tasks hold beyond it: their share of the
    shuffle (:func:`shuffle_share`) of a table whose rows are known (``table()``
    gives ``(rows or None, bytes per row)``), or ``share(n workers, room)``'s
    ``(bytes, what, advice)`` for a reduction that does not shuffle (None: it
    shuffles); both are called only when some worker has a limit."""
    sizes = [] if client is None else worker_memory(client)
    if not sizes:
        return
    limit, own, pause, room = _tightest(client, sizes)
    sized = None if share is None else share(len(sizes), room - REDUCE_ROOM)
    if sized is None:
        rows, nbytes = table() if table is not None else (None, 0)
        sized = (*shuffle_share(rows or 0, nbytes, len(sizes)), ", or more workers")
    extra, what, advice = sized
    need = REDUCE_ROOM + extra
    if room >= need:
        return
    # the limit advised leaves 2% to spare: a worker's own memory moves
    held = f" and {what}" if extra else ""
    raise ValueError(
        f"the workers' memory_limit={limit / 1e6:,.0f} MB leaves "
        f"{max(room, 0) / 2**20:,.0f} MiB for evalci's tasks (paused at "
        f"{pause:.0%} of the limit; the worker itself holds "
        f"{own / 2**20:,.0f} MiB with pandas, Dask and evalci imported), and "
        f"reducing this Dask DataFrame needs about {need / 2**20:,.0f} MiB per "
        f"worker ({REDUCE_ROOM / 2**20:.0f} MiB{held}): start the workers with "
        f"memory_limit of at least {1.02 * (own + need) / pause / 1e6:,.0f} MB"
        f"{advice if extra else ''} (docs/scaling.md, Memory "
        "limits); nothing has been computed."
    )


def task_bytes(work: engine.UnitWork, tile_size: int | None = None) -> int:
    """About the peak bytes one resample task of ``work`` holds.

    Its statistics (a block of groups, or a tile of inputs), its draws (index,
    counts and weights: 24 bytes per draw of one row chunk; a tile's draws
    are also repeated per replicate: 32 bytes per draw of one call) and its
    replicate sums and finished replicates. Pattern tables are small: their
    tasks count their output only. ``tile_size`` replaces the work's own.
    """
    unit = work.unit
    out = _rs.STREAM_SIZE * TASK_STREAMS * 8
    if unit is None:
        return out
    n, g, m = unit.T.shape
    out *= 2 * g * m
    size = work.tile_size if tile_size is None else tile_size
    tile = _rs.TILE_SIZE if size is None else size
    if _rs.tiled(unit, work.strategy, size):
        return out + 8 * min(n, tile) * g * m + 32 * _rs.draw_call(size)
    if work.weights == "poisson":
        piece = min(n, tile)
        rows = tiles._rows_per_call(piece, size)
        return out + 8 * piece * g * m + 24 * rows * piece
    if work.strategy in _RUN_LEVEL or unit.block_length:
        rows = sum(r.nbytes for r in unit.rows)
        return out + unit.T.nbytes + rows + 24 * _rs.STREAM_SIZE * n
    widest = max(hi - lo for lo, hi in tiles.group_blocks(n, g, m))
    return out + 8 * n * widest * m + 24 * _rs.draw_rows(n, size) * n


def _fitting_tile(works: list, room: float) -> int | None:
    """The largest power-of-two ``tile_size`` whose tasks fit in 90% of
    ``room`` bytes (a margin for the worker's own memory, which moves), or
    None if none does (or tiles would not help: run-level strategies, moving
    blocks)."""
    room = 0.9 * room
    if any(
        w.unit is not None
        and (w.strategy in _RUN_LEVEL or w.unit.block_length)
        and task_bytes(w) > room
        for w in works
    ):
        return None
    size = _rs.TILE_SIZE
    while size >= MIN_TILE_SIZE:
        if all(task_bytes(w, size) <= room for w in works):
            return size
        size //= 2
    return None


def check_worker_memory(p: engine.Pass, client) -> None:
    """Refuse, before any task runs, a pass whose resample tasks cannot fit
    in the workers' ``memory_limit`` (below the pause threshold, less the
    worker's own memory: :func:`worker_memory`), naming the ``memory_limit``
    that would, and the ``tile_size`` that would fit these workers when tiles
    can."""
    tightest = _tightest(client) if p.fast else None
    if tightest is None:
        return
    limit, own, pause, room = tightest
    works = [p.work(u) for u in range(len(p.units))]
    need = max(task_bytes(w) for w in works)
    if need <= room:
        return
    tile = _fitting_tile(works, room)
    smaller = (
        f", or cut the draws into smaller tiles: evalci.set_options(tile_size="
        f"2**{tile.bit_length() - 1}) (the same law; other draws from the same "
        "seed where a unit has more inputs than that; the same on numpy and on "
        "Dask)"
        if tile is not None
        else ""
    )
    raise ValueError(
        f"a resample task needs about {need / 2**20:,.0f} MiB, and the smallest "
        f"worker allows {max(room, 0) / 2**20:,.0f} MiB (memory_limit="
        f"{limit / 1e6:,.0f} MB, paused at {pause:.0%}, less "
        f"{own / 2**20:.0f} MiB for the worker itself); start the "
        f"workers with memory_limit of at least "
        f"{(need + own) / pause / 1e6:,.0f} MB{smaller}."
    )


def finish(p: engine.Pass) -> engine.Replicates:
    """Resample every unit of ``p`` on the current Dask scheduler, then finish.

    The replicates are gathered (``(B, G)`` floats, not their sums) and the
    estimates, jackknife and intervals read here.

    Parameters
    ----------
    p : evalci.engine.passes.Pass
        The validated pass, split into draw units. A callable metric's pass
        (``p.fast`` False) resamples rows in this process instead.

    Returns
    -------
    evalci.engine.passes.Replicates
        Estimates, replicates ``(G, B)`` and BCa acceleration of every group:
        the numbers :func:`evalci.engine.passes.finish_pass` gives without Dask, bit
        for bit.
    """
    import dask

    if not p.fast:  # a callable resamples rows: one process
        return engine.finish_pass(p)
    client = active_client()
    if client is not None:
        check_worker_memory(p, client)
    graph = replicate_blocks(p)
    # the statistics travel in the graph (see _ship): no warning for that
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1TB"}):
        computed = dask.compute(*graph)
    reps = [np.concatenate(blocks) for blocks in computed]
    return engine.finish_pass(p, finished=reps)


# ------------------------------------------------------------- lazy graphs
def _work_of(p: engine.Pass, u: int):
    """One ``evalci-statistics`` task of a lazy graph: unit ``u``'s work."""
    if not p.fast or u >= len(p.units):
        return None
    return p.work(u)


def _finish_task(p: engine.Pass, blocks, finish):
    """``evalci-finish``: the pass from its gathered blocks, then ``finish``."""
    reps = [None if not b or b[0] is None else np.concatenate(b) for b in blocks]
    reps = reps[: len(p.units)]
    if len(reps) < len(p.units) or any(r is None for r in reps):
        reps = None  # a callable, or more units than foreseen: resample here
    return finish(engine.finish_pass(p, finished=reps), p)


def lazy_finish(p, n_units: int, n_resamples: int, finish, name: str = "finish"):
    """A Delayed of ``finish(replicates, pass)`` from a Delayed pass ``p``.

    ``n_units`` is the number of draw units foreseen before the data is
    seen (tasks for units that turn out not to exist return None; units not
    foreseen are resampled in the finishing task). Every block is its own
    ``evalci-resample`` task.

    Parameters
    ----------
    p : dask.delayed.Delayed
        A Delayed :class:`evalci.engine.passes.Pass` (its data are reduced by
        earlier tasks of the same graph).
    n_units : int
        Draw units foreseen (resample tasks are made for units ``0 ..
        n_units - 1``).
    n_resamples : int
        Bootstrap replicates, which fixes the blocks of the graph.
    finish : callable
        ``finish(replicates, pass)``: turns the :class:`evalci.engine.passes.Replicates`
        of the pass, and the pass, into what the graph returns (a result, or
        arrays for a lazy DataArray).
    name : str
        The finishing task is named ``evalci-<name>-<token>``; default
        ``"finish"``.

    Returns
    -------
    dask.delayed.Delayed
        ``finish(replicates, pass)``, computed when the Delayed is.
    """
    import dask

    token = uuid.uuid4().hex
    blocks = _blocks(n_resamples)
    graph = []
    for u in range(n_units):
        work = dask.delayed(_work_of, pure=True)(
            p, u, dask_key_name=f"evalci-statistics-{token}-{u}"
        )
        graph.append(
            [
                dask.delayed(_block, pure=True)(
                    work, first, n, dask_key_name=f"evalci-resample-{token}-{u}-{b}"
                )
                for b, (first, n) in enumerate(blocks)
            ]
        )
    return dask.delayed(_finish_task, pure=True)(
        p, graph, finish, dask_key_name=f"evalci-{name}-{token}"
    )
