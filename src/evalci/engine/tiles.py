"""Replicate sums by stream block, and tiles: a large unit's sums cut into
pieces that fit in memory (the count-weight and Poisson kernels per piece,
the pieces combined in a fixed order), the blocks of groups drawn together.

The streams, the draws and the sizes that cut the work
(``TILE_SIZE``, ``GROUP_BLOCK_BYTES``, ``GATHER_COLUMNS``) are
:mod:`evalci.engine.resampling`'s, read at call time.
"""

from __future__ import annotations

import numpy as np

from evalci._base.streams import streams
from evalci.engine import resampling as _rs
from evalci.engine.products import CountProduct, constant_sums


def stream_replicate_sums(
    unit: _rs.Unit,
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
    _rs.check_weights(weights, strategy)
    size = tile_size
    if weights == "poisson":
        parts = (
            poisson_piece_sums(
                unit.T[lo:hi], root, unit.index, p, first, n_streams, tile_size=size
            )
            for p, (lo, hi, _) in enumerate(pieces(unit.strata_bounds, size))
        )
        return combine_pieces(parts)
    if _rs.tiled(unit, strategy, size):
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
    unit: _rs.Unit,
    root: np.random.SeedSequence,
    strategy: str,
    first: int,
    n_streams: int,
    group_block: bool = False,
    tile_size: int | None = None,
) -> np.ndarray:
    """The untiled kernel: every draw of a stream from its one generator."""
    n, g, m = unit.T.shape
    n_rep = n_streams * _rs.STREAM_SIZE
    out = np.empty((n_rep, g, m))
    if strategy not in ("single_draw", "hierarchical"):
        # A stream's draws are made, counted and multiplied in row chunks
        # (draw_rows): 24 bytes x rows x N, not x 64; the same numbers.
        # With few statistic columns, gathering them by index and summing is
        # cheaper than counting (measured ~3x at N=1,000 for 2 columns); the
        # choice depends on the data's shape only, never on scheduling.
        t = unit.T.reshape(n, g * m)
        gather = g * m <= _rs.GATHER_COLUMNS and not group_block
        # A column constant within every stratum (the runs column at equal k)
        # sums to the same value in every replicate, n_h draws per stratum:
        # no need to gather it (21-29% of the time for accuracy).
        fixed = constant_sums(t, unit.strata_bounds) if gather else []
        cols = [np.ascontiguousarray(t[:, j]) for j in range(g * m)] if gather else []
        # the product runs per block of groups, the blocks a Dask task holds
        spans = [(0, g)] if group_block else group_blocks(n, g, m)
        product = (
            None
            if gather
            else CountProduct(
                unit.T, unit.strata_bounds, [(lo * m, hi * m) for lo, hi in spans]
            )
        )
        rows_per = _rs.STREAM_SIZE if unit.block_length else _rs.draw_rows(n, tile_size)
        flat = out.reshape(n_rep, g * m)
        gens = streams(root, (_rs._BOOT, unit.index), first, n_streams)
        for s, gen in enumerate(gens):
            for r0, block in _rs._draw_chunks(gen, unit, rows_per):
                rows = slice(
                    s * _rs.STREAM_SIZE + r0, s * _rs.STREAM_SIZE + r0 + rows_per
                )
                if product is not None:
                    product(block, flat[rows])
                    continue
                for j, col in enumerate(cols):
                    if fixed[j] is None:
                        flat[rows, j] = np.take(col, block).sum(axis=1)
                    else:
                        flat[rows, j] = fixed[j]
        return out
    # Run-level strategies, also one stream at a time: per group, the drawn
    # rows of each replicate; their statistics are gathered and summed (few
    # columns) or counted and multiplied (many).
    for s, gen in enumerate(streams(root, (_rs._BOOT, unit.index), first, n_streams)):
        block = _rs.draw_inputs(gen, _rs.STREAM_SIZE, unit)
        rows = slice(s * _rs.STREAM_SIZE, (s + 1) * _rs.STREAM_SIZE)
        for j in range(g):
            rep, row = _rs.draw_runs(
                gen, block, unit.starts[j], unit.counts[j], strategy
            )
            out[rows, j, :] = _sum_rows(unit.rows[j], rep, row)
    return out


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
    if g * m <= _rs.GATHER_COLUMNS:
        return [(0, g)]
    least = _rs.GATHER_COLUMNS // m + 1
    per = max(least, _rs.GROUP_BLOCK_BYTES // max(8 * n * m, 1))
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
    >>> from evalci.engine.tiles import pieces
    >>> pieces([0, 5, 12], tile_size=4)
    array([[ 0,  4,  0],
           [ 4,  5,  0],
           [ 5,  8,  1],
           [ 8, 12,  1]])
    """
    size = _rs.TILE_SIZE if tile_size is None else int(tile_size)
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
    >>> from evalci.engine.tiles import tile_totals
    >>> tot = tile_totals(np.random.SeedSequence(1), 0, [0, 5, 12], 0, 2, 4)
    >>> tot.shape
    (128, 4)
    >>> bool((tot[:, :2].sum(axis=1) == 5).all() and (tot[:, 2:].sum(axis=1) == 7).all())
    True
    """
    table = pieces(bounds, tile_size)
    sizes = table[:, 1] - table[:, 0]
    spans = _stratum_spans(table)
    out = np.empty((n_streams * _rs.STREAM_SIZE, len(table)), dtype=np.int64)
    for s, gen in enumerate(streams(root, (_rs._BOOT, unit_index), first, n_streams)):
        rows = slice(s * _rs.STREAM_SIZE, (s + 1) * _rs.STREAM_SIZE)
        for a, b in spans:
            n_h = int(sizes[a:b].sum())
            out[rows, a:b] = gen.multinomial(
                n_h, sizes[a:b] / n_h, size=_rs.STREAM_SIZE
            )
    return out


def _rows_per_call(n_piece: int, tile_size: int | None = None) -> int:
    return max(1, min(_rs.STREAM_SIZE, _rs.draw_call(tile_size) // max(n_piece, 1)))


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
    >>> from evalci.engine.tiles import piece_sums
    >>> T = np.ones((3, 1, 1))
    >>> piece_sums(T, np.random.SeedSequence(0), 0, 0, 0, 1, np.full(64, 5))[:2, 0, 0]
    array([5., 5.])
    """
    n, g, m = T_piece.shape
    t = np.ascontiguousarray(T_piece.reshape(n, g * m), dtype=float)
    totals = np.asarray(totals, dtype=np.int64)
    out = np.empty((n_streams * _rs.STREAM_SIZE, g * m))
    const = _constants(t)
    cols = [
        None if c is not None else np.ascontiguousarray(t[:, j])
        for j, c in enumerate(const)
    ]
    need = any(c is None for c in const) or t.shape[1] > _rs.GATHER_COLUMNS
    step = _rows_per_call(n, tile_size)
    for s in range(n_streams):
        gen = _rs.stream(root, _rs._BOOT, unit_index, first + s, 1 + piece)
        for r0 in range(s * _rs.STREAM_SIZE, (s + 1) * _rs.STREAM_SIZE, step):
            rows = slice(r0, min(r0 + step, (s + 1) * _rs.STREAM_SIZE))
            tot = totals[rows]
            # columns all constant over the piece: their sums need no draws
            draws = gen.integers(0, n, int(tot.sum())) if need else None
            _sum_draws(t, const, cols, draws, tot, out[rows])
    return out.reshape(n_streams * _rs.STREAM_SIZE, g, m)


def _sum_draws(t, const, cols, draws, tot, out) -> None:
    """Fill ``out`` (r, c): per replicate, the sum of ``t`` over its draws.

    Replicate ``i`` owns ``tot[i]`` consecutive entries of ``draws``. With few
    columns, gathering beats counting (as in the one-stage kernel); a column
    constant over the piece sums to ``tot * value`` without drawing.
    """
    r, n = len(tot), t.shape[0]
    rep = None if draws is None else np.repeat(np.arange(r), tot)
    if t.shape[1] <= _rs.GATHER_COLUMNS:
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
    >>> from evalci.engine.tiles import poisson_piece_sums
    >>> s = poisson_piece_sums(np.ones((50, 1, 1)), np.random.SeedSequence(0), 0, 0, 0, 4)
    >>> s.shape, bool(abs(s.mean() - 50) < 3)
    ((256, 1, 1), True)
    """
    n, g, m = T_piece.shape
    t = np.ascontiguousarray(T_piece.reshape(n, g * m), dtype=float)
    out = np.empty((n_streams * _rs.STREAM_SIZE, g * m))
    step = _rows_per_call(n, tile_size)
    for s in range(n_streams):
        gen = _rs.stream(root, _rs._POISSON, unit_index, first + s, piece)
        for r0 in range(s * _rs.STREAM_SIZE, (s + 1) * _rs.STREAM_SIZE, step):
            rows = slice(r0, min(r0 + step, (s + 1) * _rs.STREAM_SIZE))
            w = gen.poisson(1.0, (rows.stop - rows.start, n)).astype(float)
            np.matmul(w, t, out=out[rows])
    return out.reshape(n_streams * _rs.STREAM_SIZE, g, m)


def combine_pieces(parts) -> np.ndarray:
    """Add pieces' partial sums in the order given (piece order): ``acc + part``.

    The numpy kernel and a Dask combine task both call this, so receiving the
    parts in piece order gives identical bits.

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine.tiles import combine_pieces
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


def _sum_rows(x: np.ndarray, rep: np.ndarray | None, row: np.ndarray) -> np.ndarray:
    """Per-replicate sums ``(STREAM_SIZE, m)`` of drawn rows (see :func:`draw_runs`)."""
    n_rows, m = x.shape
    if m > _rs.GATHER_COLUMNS:
        if rep is None:
            ids = (row + (np.arange(_rs.STREAM_SIZE) * n_rows)[:, None]).ravel()
        else:
            ids = rep * n_rows + row
        return _rs._counts(ids, _rs.STREAM_SIZE, n_rows).astype(float) @ x
    res = np.empty((_rs.STREAM_SIZE, m))
    for c in range(m):
        vals = np.take(x[:, c], row)
        if rep is None:
            res[:, c] = vals.sum(axis=1)
        else:
            res[:, c] = np.bincount(rep, weights=vals, minlength=_rs.STREAM_SIZE)
    return res


def replicate_sums(
    unit: _rs.Unit,
    root: np.random.SeedSequence,
    strategy: str,
    n_resamples: int,
    *,
    weights: str = "multinomial",
) -> np.ndarray:
    """All replicate sums ``(n_resamples, G, m)`` of a unit, block by block."""
    _rs.check_weights(weights, strategy)
    total = _rs.n_streams_for(n_resamples)
    step = _rs.streams_per_block(unit, strategy)
    parts = [
        stream_replicate_sums(
            unit, root, strategy, first, min(step, total - first), weights=weights
        )
        for first in range(0, total, step)
    ]
    return np.concatenate(parts)[:n_resamples]
