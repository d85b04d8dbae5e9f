"""Resampling weights for every strategy, drawn from index-keyed random streams.

Reproducibility contract (``DESIGN.md``, ``DASK-NOTES.md``): replicate ``b``
of draw unit ``u`` always comes from the stream
``SeedSequence(entropy, spawn_key=(BOOT, u, b // STREAM_SIZE))``. Streams are
keyed by index, never by how the work is split into blocks or tasks, so the
numpy path and any Dask schedule give bit-identical replicates.

Within one stream the order of draws is fixed:

1. for each stratum (in stratum order), ``integers(0, n_h, (STREAM_SIZE, n_h))``
   cluster indices;
2. for run-level strategies, then for each group of the unit in order, the run
   offsets inside the drawn clusters.

The count matrix ``W`` (how often each input was drawn in each replicate)
comes from bincounts of row chunks (:func:`draw_rows`), the statistics from
products ``W @ T`` per block of groups (:func:`group_blocks`; issue 23).

**Input tiles (issue 12).** For the cluster strategy with ``N > TILE_SIZE``
inputs the counts are drawn in two stages, so that a task holding one tile of
inputs (``TILE_SIZE`` consecutive inputs in unit order) can compute its part
exactly. *Pieces* are the non-empty intersections of tiles with strata, in
order (:func:`pieces`). Per stream:

1. stage one, stream ``(BOOT, u, s)``: for each stratum in order,
   ``multinomial(N_h, piece_sizes / N_h, size=STREAM_SIZE)``, the number of
   draws that land in each of its pieces (:func:`tile_totals`);
2. stage two, stream ``(BOOT, u, s, 1 + p)`` for piece ``p``: the replicates'
   uniform draws inside the piece, ``integers(0, n_p, total)``, one call per
   group of ``max(1, DRAW_CALL // n_p)`` consecutive replicates (bounded
   memory; the grouping depends on the piece size only)
   (:func:`piece_sums`).

Given its totals, a piece's counts are Multinomial(total, 1/n_p) on its
inputs, so the counts of a stratum are Multinomial(N_h, 1/N_h): the law of
the one-stage kernel, other numbers. The pieces' partial sums are added in
piece order (:func:`combine_pieces`), which a Dask combine task receiving the
parts in that order reproduces bit for bit. Units with ``N <= TILE_SIZE`` and
the run-level strategies keep the one-stage draws above. Tiles apply to the
Metric kernels only: :func:`drawn_rows` (callable metrics) stays untiled, so
for ``N > TILE_SIZE`` its draws differ from the Metric kernel's (same law).

**Poisson weights** (``weights="poisson"``, cluster strategy, any N; for
streaming data): every input gets an independent Poisson(1) count; piece ``p``
draws ``poisson(1.0, (STREAM_SIZE, n_p))`` from stream ``(POISSON, u, s, p)``
(:func:`poisson_piece_sums`); strata do not change the weights, but pieces are
still cut at strata. Replicate sums are then not of N draws: right for ratio
metrics from N ~ 100 (``DASK-NOTES.md``), wrong for unnormalised totals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalci._base.streams import seed_sequence, streams
from evalci._base.text import as_written

__all__ = [
    "STREAM_SIZE",
    "TILE_SIZE",
    "WEIGHTS",
    "seed_sequence",
    "stream",
    "pieces",
    "tile_totals",
    "piece_sums",
    "poisson_piece_sums",
    "combine_pieces",
]

#: Replicates drawn from one random stream. Fixed: changing it changes results.
STREAM_SIZE = 64
#: Aim for blocks of about this many weights (memory ~ 8 bytes each, twice).
BLOCK_WEIGHTS = 2**21
#: Up to this many statistic columns, replicate sums gather instead of count.
GATHER_COLUMNS = 4
#: Inputs per tile (issue 12). Fixed: changing it changes results for units
#: with more inputs than this (and only for them).
TILE_SIZE = 2**20
#: Draws of one random call inside a piece are at most about this many
#: (replicates grouped by ``max(1, DRAW_CALL // n_p)``). Fixed: changing it
#: changes results of tiled units.
DRAW_CALL = 2**21
#: Bytes of statistics per block of groups (:func:`group_blocks`), one Dask
#: task's share. Fixed: a BLAS may round other blocks differently.
GROUP_BLOCK_BYTES = 2**25
#: The resampling weights: exact multinomial counts, or Poisson(1) per input.
WEIGHTS = ("multinomial", "poisson")
_RUN_LEVEL = ("single_draw", "hierarchical")

# Spawn-key schemes: one namespace per use of randomness.
_BOOT, _MODE, _POISSON = 0, 1, 2


def stream(root: np.random.SeedSequence, *key: int) -> np.random.Generator:
    """Generator for the stream at ``key``: the same as ``root.spawn`` would give."""
    seq = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + key)
    return np.random.Generator(np.random.PCG64(seq))


@dataclass(frozen=True)
class Unit:
    """Clusters and groups that share one set of draws.

    ``T`` holds effective per-cluster statistics (already divided by k for
    ``weight="input"``), clusters ordered by (stratum, key).
    """

    index: int  # position of the unit: the stream key
    T: np.ndarray  # (N, G, m) effective statistics
    strata_bounds: np.ndarray  # (H + 1,) cluster offsets of each stratum
    # run level, per group: row starts (N,), run counts (N,), row stats (R_g, m)
    starts: tuple[np.ndarray, ...] = ()
    counts: tuple[np.ndarray, ...] = ()
    rows: tuple[np.ndarray, ...] = ()
    block_length: int = 0  # moving-block bootstrap: inputs drawn in runs of this

    @property
    def n_clusters(self) -> int:
        return self.T.shape[0]


def draw_clusters(
    gen: np.random.Generator, n_rep: int, bounds: np.ndarray
) -> np.ndarray:
    """Cluster indices ``(n_rep, N)``, drawn with replacement within each stratum."""
    n = int(bounds[-1])
    if len(bounds) == 2:
        return gen.integers(0, n, size=(n_rep, n))
    idx = np.empty((n_rep, n), dtype=np.int64)
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        idx[:, lo:hi] = gen.integers(lo, hi, size=(n_rep, hi - lo))
    return idx


def draw_moving_blocks(gen: np.random.Generator, n_rep: int, n: int, length: int):
    """Input indices ``(n_rep, n)`` of the moving-block bootstrap (Kunsch 1989).

    Each replicate concatenates ``ceil(n / length)`` blocks of ``length``
    consecutive inputs, their starts uniform on ``0 .. n - length``, and
    keeps the first ``n`` indices. ``length == 1`` draws exactly what
    :func:`draw_clusters` draws for one stratum.
    """
    n_blocks = -(-n // length)
    starts = gen.integers(0, n - length + 1, size=(n_rep, n_blocks))
    idx = starts[:, :, None] + np.arange(length)
    return idx.reshape(n_rep, n_blocks * length)[:, :n]


def draw_inputs(gen: np.random.Generator, n_rep: int, unit: Unit) -> np.ndarray:
    """A unit's input indices ``(n_rep, N)``: clusters, or moving blocks."""
    if unit.block_length:
        return draw_moving_blocks(gen, n_rep, unit.n_clusters, unit.block_length)
    return draw_clusters(gen, n_rep, unit.strata_bounds)


def draw_runs(
    gen: np.random.Generator,
    idx: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
    strategy: str,
) -> tuple[np.ndarray | None, np.ndarray]:
    """Run-level draws inside the drawn clusters.

    ``single_draw`` takes one run per drawn cluster; ``hierarchical`` takes
    ``k_i`` runs with replacement per drawn cluster (Multinomial(W_i k_i, 1/k_i)
    in total for a cluster drawn W_i times).

    Returns ``(None, rows)`` with ``rows`` of shape ``(n_rep, L)`` when every
    replicate draws the same number of runs (single_draw, or equal k), else
    ``(rep, rows)``: flat arrays, replicate ids ascending.
    """
    n_rep, n = idx.shape
    k_const = int(counts[0]) if (counts == counts[0]).all() else None
    if strategy == "single_draw":
        high = k_const if k_const is not None else counts[idx]
        return None, starts[idx] + gen.integers(0, high, size=idx.shape)
    if k_const is not None:
        # the same numbers, in the same order, as one flat draw per (b, i, r)
        offset = gen.integers(0, k_const, size=(n_rep, n, k_const))
        return None, (starts[idx][:, :, None] + offset).reshape(n_rep, n * k_const)
    flat = idx.ravel()
    per = counts[flat]
    drawn = np.repeat(flat, per)
    offset = gen.integers(0, counts[drawn])
    rep = np.repeat(np.arange(n_rep), per.reshape(n_rep, n).sum(axis=1))
    return rep, starts[drawn] + offset


def _counts(flat_ids: np.ndarray, n_rep: int, size: int) -> np.ndarray:
    return np.bincount(flat_ids, minlength=n_rep * size).reshape(n_rep, size)


def check_weights(weights, strategy: str | None = None) -> str:
    """Validate ``weights`` (and that Poisson weights fit ``strategy``)."""
    if not isinstance(weights, str) or weights not in WEIGHTS:
        raise ValueError(
            "`weights` must be 'multinomial' (exact cluster bootstrap, the "
            f"default) or 'poisson' (streaming data); got {as_written(weights)}."
        )
    if weights == "poisson" and strategy in _RUN_LEVEL:
        raise ValueError(
            "`weights='poisson'` resamples inputs only, not runs; got "
            f"strategy={as_written(strategy)}; use strategy='cluster' with Poisson weights, "
            "or weights='multinomial' for run-level strategies."
        )
    return weights


def tiled(unit: Unit, strategy: str, tile_size: int | None = None) -> bool:
    """Whether the unit draws tile by tile (the two-stage multinomial).

    Cluster-level draws of more than ``tile_size`` inputs (default
    :data:`TILE_SIZE`, read at call time); never run-level strategies or
    moving blocks, whose draws are not a multinomial over inputs. The one
    rule the kernel here and the Dask graph (:mod:`evalci.engine.scaleout`) follow.
    """
    return (
        strategy not in _RUN_LEVEL
        and not unit.block_length
        and unit.n_clusters > (TILE_SIZE if tile_size is None else tile_size)
    )


def draw_call(tile_size: int | None = None) -> int:
    """Draws of one random call inside a piece of a ``tile_size`` tiling:
    :data:`DRAW_CALL` for the default tiles, twice the tile otherwise (so
    that a task's draws shrink with its tile; ``evalci.set_options``)."""
    return DRAW_CALL if tile_size is None else 2 * int(tile_size)


def stream_replicate_sums(
    unit: Unit,
    root: np.random.SeedSequence,
    strategy: str,
    first: int,
    n_streams: int,
    *,
    weights: str = "multinomial",
    group_block: bool = False,
    tile_size: int | None = None,
) -> np.ndarray:
    """Summed statistics ``(n_streams * STREAM_SIZE, G, m)`` for a block of streams.

    This is the per-block kernel: the numpy path calls it on consecutive blocks
    of streams; a Dask path maps it over the same blocks. The cluster strategy
    with more than :data:`TILE_SIZE` inputs, and Poisson weights, combine the
    partial sums of the unit's :func:`pieces` (a Dask graph may compute those
    in separate tasks, one tile of inputs each, with the same bits).

    ``group_block=True``: ``unit.T`` is one block of :func:`group_blocks` of
    a wider unit (a Dask task's share): the bits of those columns of the whole.
    ``tile_size``: inputs per tile (``evalci.set_options``); None for
    :data:`TILE_SIZE`.
    """
    check_weights(weights, strategy)
    size = tile_size
    if weights == "poisson":
        parts = (
            poisson_piece_sums(
                unit.T[lo:hi], root, unit.index, p, first, n_streams, tile_size=size
            )
            for p, (lo, hi, _) in enumerate(pieces(unit.strata_bounds, size))
        )
        return combine_pieces(parts)
    if tiled(unit, strategy, size):
        bounds = unit.strata_bounds
        totals = tile_totals(root, unit.index, bounds, first, n_streams, size)
        parts = (
            piece_sums(
                unit.T[lo:hi],
                root,
                unit.index,
                p,
                first,
                n_streams,
                totals[:, p],
                tile_size=size,
            )
            for p, (lo, hi, _) in enumerate(pieces(bounds, size))
        )
        return combine_pieces(parts)
    return _one_stage_sums(unit, root, strategy, first, n_streams, group_block, size)


def _one_stage_sums(
    unit: Unit,
    root: np.random.SeedSequence,
    strategy: str,
    first: int,
    n_streams: int,
    group_block: bool = False,
    tile_size: int | None = None,
) -> np.ndarray:
    """The untiled kernel: every draw of a stream from its one generator."""
    n, g, m = unit.T.shape
    n_rep = n_streams * STREAM_SIZE
    out = np.empty((n_rep, g, m))
    if strategy not in ("single_draw", "hierarchical"):
        # A stream's draws are made, counted and multiplied in row chunks
        # (draw_rows): 24 bytes x rows x N, not x 64; the same numbers.
        # With few statistic columns, gathering them by index and summing is
        # cheaper than counting (measured ~3x at N=1,000 for 2 columns); the
        # choice depends on the data's shape only, never on scheduling.
        t = unit.T.reshape(n, g * m)
        gather = g * m <= GATHER_COLUMNS and not group_block
        # A column constant within every stratum (the runs column at equal k)
        # sums to the same value in every replicate, n_h draws per stratum:
        # no need to gather it (21-29% of the time for accuracy).
        fixed = _fixed_sums(t, unit.strata_bounds) if gather else []
        cols = [np.ascontiguousarray(t[:, j]) for j in range(g * m)] if gather else []
        # the product runs per block of groups, the blocks a Dask task holds
        spans = [(0, g)] if group_block else group_blocks(n, g, m)
        spans = [(lo * m, hi * m) for lo, hi in spans]
        # each block contiguous: a chunk's product then reads its block only
        parts = (
            [t]
            if len(spans) == 1
            else [np.ascontiguousarray(t[:, a:b]) for a, b in spans]
        )
        rows_per = STREAM_SIZE if unit.block_length else draw_rows(n, tile_size)
        offsets = (np.arange(rows_per) * n)[:, None]
        w = np.empty((rows_per, n))
        flat = out.reshape(n_rep, g * m)
        gens = streams(root, (_BOOT, unit.index), first, n_streams)
        for s, gen in enumerate(gens):
            for r0, block in _draw_chunks(gen, unit, rows_per):
                rows = slice(s * STREAM_SIZE + r0, s * STREAM_SIZE + r0 + rows_per)
                if gather:
                    for j, col in enumerate(cols):
                        if fixed[j] is None:
                            flat[rows, j] = np.take(col, block).sum(axis=1)
                        else:
                            flat[rows, j] = fixed[j]
                    continue
                block += offsets
                w[...] = _counts(block.ravel(), rows_per, n)
                for (a, b), part in zip(spans, parts, strict=True):
                    np.matmul(w, part, out=flat[rows, a:b])
        return out
    # Run-level strategies, also one stream at a time: per group, the drawn
    # rows of each replicate; their statistics are gathered and summed (few
    # columns) or counted and multiplied (many).
    for s, gen in enumerate(streams(root, (_BOOT, unit.index), first, n_streams)):
        block = draw_inputs(gen, STREAM_SIZE, unit)
        rows = slice(s * STREAM_SIZE, (s + 1) * STREAM_SIZE)
        for j in range(g):
            rep, row = draw_runs(gen, block, unit.starts[j], unit.counts[j], strategy)
            out[rows, j, :] = _sum_rows(unit.rows[j], rep, row)
    return out


def draw_rows(n: int, tile_size: int | None = None) -> int:
    """Replicates of a stream drawn and counted at once for ``n`` inputs: the
    largest power of two up to 64 with at most :func:`draw_call` draws (>= 2).
    Memory only: the numbers are those of the whole stream."""
    rows, most = STREAM_SIZE, draw_call(tile_size)
    while rows > 2 and rows * n > most:
        rows //= 2
    return rows


def _draw_chunks(gen: np.random.Generator, unit: Unit, rows: int):
    """``(first row, indices (rows, N))``: :func:`draw_inputs`'s whole stream
    in row chunks. Strata are drawn one after the other (all rows each), so
    each stratum gets its own generator, moved to its start by drawing (and
    dropping) the strata before it once."""
    if rows >= STREAM_SIZE or unit.block_length:
        yield 0, draw_inputs(gen, STREAM_SIZE, unit)
        return
    bounds = unit.strata_bounds
    strata = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    gens = []
    for lo, hi in strata[:-1]:  # the last stratum draws from ``gen`` itself
        gens.append(np.random.Generator(type(gen.bit_generator)()))
        gens[-1].bit_generator.state = gen.bit_generator.state
        for _ in range(0, STREAM_SIZE, rows):
            gen.integers(lo, hi, size=(rows, hi - lo))
    gens.append(gen)
    for r0 in range(0, STREAM_SIZE, rows):
        idx = np.empty((rows, int(bounds[-1])), dtype=np.int64)
        for here, (lo, hi) in zip(gens, strata, strict=True):
            idx[:, lo:hi] = here.integers(lo, hi, size=(rows, hi - lo))
        yield r0, idx


def group_blocks(n: int, g: int, m: int) -> list[tuple[int, int]]:
    """Blocks of groups ``(lo, hi)`` of the index kernel's product, for ``n``
    inputs, ``g`` groups, ``m`` statistics: one unless ``8 n g m`` bytes
    exceed :data:`GROUP_BLOCK_BYTES`, else nearly equal blocks of about that
    size, each of more than :data:`GATHER_COLUMNS` columns (multiplied, as
    the whole is). The numpy kernel and the Dask graph (a task per block)
    both use them: the same bits.

    >>> group_blocks(1_000_000, 10, 2)
    [(0, 4), (4, 7), (7, 10)]
    """
    if g * m <= GATHER_COLUMNS:
        return [(0, g)]
    least = GATHER_COLUMNS // m + 1
    per = max(least, GROUP_BLOCK_BYTES // max(8 * n * m, 1))
    k = max(1, min(-(-g // per), g // least))
    sizes = [g // k + (i < g % k) for i in range(k)]
    edges = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    return list(zip(edges[:-1], edges[1:], strict=True))


# ------------------------------------------------------------ input tiles
def pieces(bounds, tile_size: int | None = None) -> np.ndarray:
    """The non-empty intersections of input tiles with strata, in order.

    Parameters
    ----------
    bounds : (H + 1,) array_like of int
        Input offsets of the strata (``Unit.strata_bounds``), from 0 to N.
    tile_size : int, optional
        Inputs per tile; :data:`TILE_SIZE` (read at call time) by default.

    Returns
    -------
    (P, 3) int64 array
        Row ``p`` is ``lo, hi, stratum``: piece ``p`` holds inputs
        ``lo .. hi - 1``, all in tile ``lo // tile_size`` and in ``stratum``.

    Examples
    --------
    >>> from evalci.engine.resampling import pieces
    >>> pieces([0, 5, 12], tile_size=4)
    array([[ 0,  4,  0],
           [ 4,  5,  0],
           [ 5,  8,  1],
           [ 8, 12,  1]])
    """
    size = TILE_SIZE if tile_size is None else int(tile_size)
    if size < 1:
        raise ValueError(f"`tile_size` must be a positive integer; got {tile_size}.")
    bounds = np.asarray(bounds, dtype=np.int64)
    n = int(bounds[-1])
    cuts = np.union1d(bounds, np.arange(0, n + 1, size, dtype=np.int64))
    lo, hi = cuts[:-1], cuts[1:]
    stratum = np.searchsorted(bounds, lo, side="right") - 1
    return np.stack([lo, hi, stratum], axis=1).astype(np.int64)


def _stratum_spans(table: np.ndarray) -> list[tuple[int, int]]:
    """Column ranges ``(a, b)`` of the pieces of each stratum, in order."""
    cuts = np.flatnonzero(np.diff(table[:, 2])) + 1
    edges = [0, *cuts.tolist(), len(table)]
    return [(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


def tile_totals(
    root: np.random.SeedSequence,
    unit_index: int,
    bounds,
    first: int,
    n_streams: int,
    tile_size: int | None = None,
) -> np.ndarray:
    """Stage one of the tiled draws: how many of each replicate's draws land in
    each piece.

    Stream ``first + s`` draws, for each stratum in order,
    ``multinomial(N_h, piece_sizes / N_h, size=STREAM_SIZE)`` over its pieces.

    Returns
    -------
    (n_streams * STREAM_SIZE, P) int64 array
        Column ``p`` is piece ``p`` of :func:`pieces`; per replicate the
        columns of a stratum sum to ``N_h``.

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine.resampling import tile_totals
    >>> tot = tile_totals(np.random.SeedSequence(1), 0, [0, 5, 12], 0, 2, 4)
    >>> tot.shape
    (128, 4)
    >>> bool((tot[:, :2].sum(axis=1) == 5).all() and (tot[:, 2:].sum(axis=1) == 7).all())
    True
    """
    table = pieces(bounds, tile_size)
    sizes = table[:, 1] - table[:, 0]
    spans = _stratum_spans(table)
    out = np.empty((n_streams * STREAM_SIZE, len(table)), dtype=np.int64)
    for s, gen in enumerate(streams(root, (_BOOT, unit_index), first, n_streams)):
        rows = slice(s * STREAM_SIZE, (s + 1) * STREAM_SIZE)
        for a, b in spans:
            n_h = int(sizes[a:b].sum())
            out[rows, a:b] = gen.multinomial(n_h, sizes[a:b] / n_h, size=STREAM_SIZE)
    return out


def _rows_per_call(n_piece: int, tile_size: int | None = None) -> int:
    return max(1, min(STREAM_SIZE, draw_call(tile_size) // max(n_piece, 1)))


def _constants(t: np.ndarray) -> list:
    """Per column of ``t`` (n, c), its value when constant over the rows, else None."""
    return [
        float(col[0]) if len(col) and (col == col[0]).all() else None for col in t.T
    ]


def piece_sums(
    T_piece: np.ndarray,
    root: np.random.SeedSequence,
    unit_index: int,
    piece: int,
    first: int,
    n_streams: int,
    totals,
    tile_size: int | None = None,
) -> np.ndarray:
    """Stage two of the tiled draws: one piece's partial replicate sums.

    Parameters
    ----------
    T_piece : (n_p, G, m) array
        The piece's per-input statistics, ``unit.T[lo:hi]``.
    root, unit_index
        The pass's root SeedSequence and the unit's stream key.
    piece : int
        Position of the piece in :func:`pieces` (its stream key).
    first, n_streams : int
        The block of streams.
    totals : (n_streams * STREAM_SIZE,) array_like of int
        The piece's column of :func:`tile_totals` for the same streams.
    tile_size : int, optional
        The tiling's tile size (None: :data:`TILE_SIZE`), which fixes how
        many replicates share one random call (:func:`draw_call`).

    Returns
    -------
    (n_streams * STREAM_SIZE, G, m) float array
        Replicate ``b`` sums ``T_piece`` over ``totals[b]`` uniform draws from
        the piece (stream ``(BOOT, unit_index, first + s, 1 + piece)``).

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine.resampling import piece_sums
    >>> T = np.ones((3, 1, 1))
    >>> piece_sums(T, np.random.SeedSequence(0), 0, 0, 0, 1, np.full(64, 5))[:2, 0, 0]
    array([5., 5.])
    """
    n, g, m = T_piece.shape
    t = np.ascontiguousarray(T_piece.reshape(n, g * m), dtype=float)
    totals = np.asarray(totals, dtype=np.int64)
    out = np.empty((n_streams * STREAM_SIZE, g * m))
    const = _constants(t)
    cols = [
        None if c is not None else np.ascontiguousarray(t[:, j])
        for j, c in enumerate(const)
    ]
    need = any(c is None for c in const) or t.shape[1] > GATHER_COLUMNS
    step = _rows_per_call(n, tile_size)
    for s in range(n_streams):
        gen = stream(root, _BOOT, unit_index, first + s, 1 + piece)
        for r0 in range(s * STREAM_SIZE, (s + 1) * STREAM_SIZE, step):
            rows = slice(r0, min(r0 + step, (s + 1) * STREAM_SIZE))
            tot = totals[rows]
            # columns all constant over the piece: their sums need no draws
            draws = gen.integers(0, n, int(tot.sum())) if need else None
            _sum_draws(t, const, cols, draws, tot, out[rows])
    return out.reshape(n_streams * STREAM_SIZE, g, m)


def _sum_draws(t, const, cols, draws, tot, out) -> None:
    """Fill ``out`` (r, c): per replicate, the sum of ``t`` over its draws.

    Replicate ``i`` owns ``tot[i]`` consecutive entries of ``draws``. With few
    columns, gathering beats counting (as in the one-stage kernel); a column
    constant over the piece sums to ``tot * value`` without drawing.
    """
    r, n = len(tot), t.shape[0]
    rep = None if draws is None else np.repeat(np.arange(r), tot)
    if t.shape[1] <= GATHER_COLUMNS:
        for j, col in enumerate(cols):
            if col is None:
                out[:, j] = tot * const[j]
            else:
                out[:, j] = np.bincount(rep, np.take(col, draws), minlength=r)
        return
    rep *= n
    rep += draws
    w = np.bincount(rep, minlength=r * n).reshape(r, n).astype(float)
    np.matmul(w, t, out=out)


def poisson_piece_sums(
    T_piece: np.ndarray,
    root: np.random.SeedSequence,
    unit_index: int,
    piece: int,
    first: int,
    n_streams: int,
    tile_size: int | None = None,
) -> np.ndarray:
    """One piece's partial replicate sums with Poisson(1) weights.

    Stream ``(POISSON, unit_index, first + s, piece)`` draws the weights
    ``poisson(1.0, (STREAM_SIZE, n_p))`` (in row groups of
    ``max(1, draw_call(tile_size) // n_p)`` replicates: numpy's Poisson
    sampler keeps no state between calls, so that is the same numbers as one
    call); the sums are ``W @ T_piece``.

    Returns
    -------
    (n_streams * STREAM_SIZE, G, m) float array

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine.resampling import poisson_piece_sums
    >>> s = poisson_piece_sums(np.ones((50, 1, 1)), np.random.SeedSequence(0), 0, 0, 0, 4)
    >>> s.shape, bool(abs(s.mean() - 50) < 3)
    ((256, 1, 1), True)
    """
    n, g, m = T_piece.shape
    t = np.ascontiguousarray(T_piece.reshape(n, g * m), dtype=float)
    out = np.empty((n_streams * STREAM_SIZE, g * m))
    step = _rows_per_call(n, tile_size)
    for s in range(n_streams):
        gen = stream(root, _POISSON, unit_index, first + s, piece)
        for r0 in range(s * STREAM_SIZE, (s + 1) * STREAM_SIZE, step):
            rows = slice(r0, min(r0 + step, (s + 1) * STREAM_SIZE))
            w = gen.poisson(1.0, (rows.stop - rows.start, n)).astype(float)
            np.matmul(w, t, out=out[rows])
    return out.reshape(n_streams * STREAM_SIZE, g, m)


def combine_pieces(parts) -> np.ndarray:
    """Add pieces' partial sums in the order given (piece order): ``acc + part``.

    The numpy kernel and a Dask combine task both call this, so receiving the
    parts in piece order gives identical bits.

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine.resampling import combine_pieces
    >>> combine_pieces([np.ones(2), np.full(2, 2.0), np.full(2, 0.5)])
    array([3.5, 3.5])
    """
    it = iter(parts)
    try:
        acc = np.array(next(it), dtype=float)
    except StopIteration:
        raise ValueError(
            "`parts` must hold at least one piece's sums; got none."
        ) from None
    for part in it:
        acc = acc + part
    return acc


def _fixed_sums(t: np.ndarray, bounds: np.ndarray) -> list:
    """Per column, its replicate sum when constant within every stratum, else None."""
    out = []
    for j in range(t.shape[1]):
        col, total = t[:, j], 0.0
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if hi > lo and not (col[lo:hi] == col[lo]).all():
                out.append(None)
                break
            total += (hi - lo) * col[lo] if hi > lo else 0.0
        else:
            out.append(total)
    return out


def _sum_rows(x: np.ndarray, rep: np.ndarray | None, row: np.ndarray) -> np.ndarray:
    """Per-replicate sums ``(STREAM_SIZE, m)`` of drawn rows (see :func:`draw_runs`)."""
    n_rows, m = x.shape
    if m > GATHER_COLUMNS:
        if rep is None:
            ids = (row + (np.arange(STREAM_SIZE) * n_rows)[:, None]).ravel()
        else:
            ids = rep * n_rows + row
        return _counts(ids, STREAM_SIZE, n_rows).astype(float) @ x
    res = np.empty((STREAM_SIZE, m))
    for c in range(m):
        vals = np.take(x[:, c], row)
        if rep is None:
            res[:, c] = vals.sum(axis=1)
        else:
            res[:, c] = np.bincount(rep, weights=vals, minlength=STREAM_SIZE)
    return res


def n_streams_for(n_resamples: int) -> int:
    return -(-n_resamples // STREAM_SIZE)


def streams_per_block(unit: Unit, strategy: str) -> int:
    """How many streams one block processes; memory only, never results."""
    width = unit.n_clusters
    if strategy in ("single_draw", "hierarchical"):
        width = max(width, max(r.shape[0] for r in unit.rows))
    return max(1, BLOCK_WEIGHTS // (STREAM_SIZE * max(width, 1)))


def replicate_sums(
    unit: Unit,
    root: np.random.SeedSequence,
    strategy: str,
    n_resamples: int,
    *,
    weights: str = "multinomial",
) -> np.ndarray:
    """All replicate sums ``(n_resamples, G, m)`` of a unit, block by block."""
    check_weights(weights, strategy)
    total = n_streams_for(n_resamples)
    step = streams_per_block(unit, strategy)
    parts = [
        stream_replicate_sums(
            unit, root, strategy, first, min(step, total - first), weights=weights
        )
        for first in range(0, total, step)
    ]
    return np.concatenate(parts)[:n_resamples]


def occurrence(idx: np.ndarray) -> np.ndarray:
    """For each drawn index, how many earlier draws of the same row picked it.

    ``occurrence([[3, 1, 3, 3]]) == [[0, 0, 1, 2]]``: the copy number of each
    draw, so that an input drawn twice becomes two distinct inputs.
    """
    order = np.argsort(idx, axis=-1, kind="stable")
    ranked = np.take_along_axis(idx, order, axis=-1)
    pos = np.broadcast_to(np.arange(idx.shape[-1]), idx.shape)
    new = np.ones(idx.shape, dtype=bool)
    new[..., 1:] = ranked[..., 1:] != ranked[..., :-1]
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    out = np.empty_like(idx)
    np.put_along_axis(out, order, pos - first, axis=-1)
    return out


def drawn_rows(
    unit: Unit, root: np.random.SeedSequence, strategy: str, n_resamples: int
):
    """Yield ``(b, j, rows, copies)``: the rows of group ``j`` in replicate ``b``.

    The slow general path: the same streams and draws as :func:`replicate_sums`
    for units of at most :data:`TILE_SIZE` inputs (it is untiled: for larger
    units it keeps the one-stage draws, the same law as the tiled kernel),
    expressed as gathered unit-local rows (with repetition) for an arbitrary
    callable. ``copies`` gives, for each row, the copy number of the drawn
    input it belongs to (0 for the first draw of that input, 1 for the
    second, ...), so the caller can give every drawn copy its own identity.
    """
    for s in range(n_streams_for(n_resamples)):
        gen = stream(root, _BOOT, unit.index, s)
        block = draw_inputs(gen, STREAM_SIZE, unit)
        occ = occurrence(block)
        n_in = min(STREAM_SIZE, n_resamples - s * STREAM_SIZE)
        per_group = []
        for j in range(len(unit.starts)):
            starts, counts = unit.starts[j], unit.counts[j]
            if strategy in ("single_draw", "hierarchical"):
                rep, row = draw_runs(gen, block, starts, counts, strategy)
                if rep is None:
                    per = row.shape[1] // block.shape[1]
                    copies = np.repeat(occ, per, axis=1)
                    per_group.append(list(zip(row, copies, strict=True)))
                else:
                    copies = np.repeat(occ.ravel(), counts[block.ravel()])
                    cuts = np.searchsorted(rep, np.arange(1, STREAM_SIZE))
                    per_group.append(
                        list(
                            zip(
                                np.split(row, cuts), np.split(copies, cuts), strict=True
                            )
                        )
                    )
            else:
                lists = []
                for b in range(STREAM_SIZE):
                    c = counts[block[b]]
                    first = np.repeat(starts[block[b]] - np.cumsum(c) + c, c)
                    lists.append((first + np.arange(c.sum()), np.repeat(occ[b], c)))
                per_group.append(lists)
        for b in range(n_in):
            for j, lists in enumerate(per_group):
                yield (s * STREAM_SIZE + b, j, *lists[b])


def mode_stream(root: np.random.SeedSequence) -> np.random.Generator:
    """The stream that breaks mode ties (mode-aggregate strategy)."""
    return stream(root, _MODE)
