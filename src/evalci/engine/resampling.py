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
products ``W @ T`` per block of groups (:func:`~evalci.engine.tiles.group_blocks`; issue 23).

**Input tiles (issue 12).** For the cluster strategy with ``N > TILE_SIZE``
inputs the counts are drawn in two stages, so that a task holding one tile of
inputs (``TILE_SIZE`` consecutive inputs in unit order) can compute its part
exactly. *Pieces* are the non-empty intersections of tiles with strata, in
order (:func:`~evalci.engine.tiles.pieces`). Per stream:

1. stage one, stream ``(BOOT, u, s)``: for each stratum in order,
   ``multinomial(N_h, piece_sizes / N_h, size=STREAM_SIZE)``, the number of
   draws that land in each of its pieces (:func:`~evalci.engine.tiles.tile_totals`);
2. stage two, stream ``(BOOT, u, s, 1 + p)`` for piece ``p``: the replicates'
   uniform draws inside the piece, ``integers(0, n_p, total)``, one call per
   group of ``max(1, DRAW_CALL // n_p)`` consecutive replicates (bounded
   memory; the grouping depends on the piece size only)
   (:func:`~evalci.engine.tiles.piece_sums`).

Given its totals, a piece's counts are Multinomial(total, 1/n_p) on its
inputs, so the counts of a stratum are Multinomial(N_h, 1/N_h): the law of
the one-stage kernel, other numbers. The pieces' partial sums are added in
piece order (:func:`~evalci.engine.tiles.combine_pieces`), which a Dask combine task receiving the
parts in that order reproduces bit for bit. Units with ``N <= TILE_SIZE`` and
the run-level strategies keep the one-stage draws above. Tiles apply to the
Metric kernels only: :func:`drawn_rows` (callable metrics) stays untiled, so
for ``N > TILE_SIZE`` its draws differ from the Metric kernel's (same law).

**Poisson weights** (``weights="poisson"``, cluster strategy, any N; for
streaming data): every input gets an independent Poisson(1) count; piece ``p``
draws ``poisson(1.0, (STREAM_SIZE, n_p))`` from stream ``(POISSON, u, s, p)``
(:func:`~evalci.engine.tiles.poisson_piece_sums`); strata do not change the weights, but pieces are
still cut at strata. Replicate sums are then not of N draws: right for ratio
metrics from N ~ 100 (``DASK-NOTES.md``), wrong for unnormalised totals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalci._base.streams import seed_sequence
from evalci._base.text import as_written

__all__ = [
    "STREAM_SIZE",
    "TILE_SIZE",
    "WEIGHTS",
    "seed_sequence",
    "stream",
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
#: Bytes of statistics per block of groups (:func:`~evalci.engine.tiles.group_blocks`), one Dask
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


def n_streams_for(n_resamples: int) -> int:
    return -(-n_resamples // STREAM_SIZE)


def streams_per_block(unit: Unit, strategy: str) -> int:
    """How many streams one block processes; memory only, never results."""
    width = unit.n_clusters
    if strategy in ("single_draw", "hierarchical"):
        width = max(width, max(r.shape[0] for r in unit.rows))
    return max(1, BLOCK_WEIGHTS // (STREAM_SIZE * max(width, 1)))


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

    The slow general path: the same streams and draws as :func:`~evalci.engine.tiles.replicate_sums`
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
