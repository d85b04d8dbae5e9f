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

The cluster-level count matrix ``W`` (how often each input was drawn in each
replicate) comes from one flattened ``bincount``; replicate statistics are
then one matrix product ``W @ T``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["STREAM_SIZE", "seed_sequence", "stream"]

#: Replicates drawn from one random stream. Fixed: changing it changes results.
STREAM_SIZE = 64
#: Aim for blocks of about this many weights (memory ~ 8 bytes each, twice).
BLOCK_WEIGHTS = 2**21
#: Up to this many statistic columns, replicate sums gather instead of count.
GATHER_COLUMNS = 4

# Spawn-key schemes: one namespace per use of randomness.
_BOOT, _MODE = 0, 1


def seed_sequence(rng) -> np.random.SeedSequence:
    """The root SeedSequence for ``rng`` (SPEC 7: None, int, Generator, SeedSequence).

    A Generator is advanced (four 64-bit draws give the entropy), so two calls
    with the same Generator give different, reproducible results, as with scipy.
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        entropy = rng.integers(0, 2**63, size=4, dtype=np.uint64)
        return np.random.SeedSequence([int(e) for e in entropy])
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError("`rng` must be a non-negative integer seed.")
        return np.random.SeedSequence(int(rng))
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "`rng` must be an int, numpy.random.Generator or SeedSequence; "
            "legacy RandomState is not supported (use np.random.default_rng)."
        )
    raise TypeError(
        "`rng` must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.SeedSequence, not {type(rng).__name__}."
    )


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


def stream_replicate_sums(
    unit: Unit, root: np.random.SeedSequence, strategy: str, first: int, n_streams: int
) -> np.ndarray:
    """Summed statistics ``(n_streams * STREAM_SIZE, G, m)`` for a block of streams.

    This is the per-block kernel: the numpy path calls it on consecutive blocks
    of streams; a Dask path maps it over the same blocks.
    """
    n, g, m = unit.T.shape
    n_rep = n_streams * STREAM_SIZE
    out = np.empty((n_rep, g, m))
    if strategy not in ("single_draw", "hierarchical"):
        # One stream at a time: its (64 x N) counts stay in cache, and the
        # bincount, the cast and the product each touch them once.
        # With few statistic columns, gathering them by index and summing is
        # cheaper than counting (measured ~3x at N=1,000 for 2 columns); the
        # choice depends on the data's shape only, never on scheduling.
        t = unit.T.reshape(n, g * m)
        # A column constant within every stratum (the runs column at equal k)
        # sums to the same value in every replicate, n_h draws per stratum:
        # no need to gather it (21-29% of the time for accuracy).
        fixed = _fixed_sums(t, unit.strata_bounds)
        cols = [np.ascontiguousarray(t[:, j]) for j in range(g * m)]
        gather = g * m <= GATHER_COLUMNS
        offsets = (np.arange(STREAM_SIZE) * n)[:, None]
        w = np.empty((STREAM_SIZE, n))
        flat = out.reshape(n_rep, g * m)
        for s in range(n_streams):
            gen = stream(root, _BOOT, unit.index, first + s)
            block = draw_clusters(gen, STREAM_SIZE, unit.strata_bounds)
            rows = slice(s * STREAM_SIZE, (s + 1) * STREAM_SIZE)
            if gather:
                for j, col in enumerate(cols):
                    if fixed[j] is None:
                        flat[rows, j] = np.take(col, block).sum(axis=1)
                    else:
                        flat[rows, j] = fixed[j]
            else:
                block += offsets
                w[...] = _counts(block.ravel(), STREAM_SIZE, n)
                np.matmul(w, t, out=flat[rows])
        return out
    # Run-level strategies, also one stream at a time: per group, the drawn
    # rows of each replicate; their statistics are gathered and summed (few
    # columns) or counted and multiplied (many).
    for s in range(n_streams):
        gen = stream(root, _BOOT, unit.index, first + s)
        block = draw_clusters(gen, STREAM_SIZE, unit.strata_bounds)
        rows = slice(s * STREAM_SIZE, (s + 1) * STREAM_SIZE)
        for j in range(g):
            rep, row = draw_runs(gen, block, unit.starts[j], unit.counts[j], strategy)
            out[rows, j, :] = _sum_rows(unit.rows[j], rep, row)
    return out


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
    unit: Unit, root: np.random.SeedSequence, strategy: str, n_resamples: int
) -> np.ndarray:
    """All replicate sums ``(n_resamples, G, m)`` of a unit, block by block."""
    total = n_streams_for(n_resamples)
    step = streams_per_block(unit, strategy)
    parts = [
        stream_replicate_sums(unit, root, strategy, first, min(step, total - first))
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

    The slow general path: the same streams and draws as :func:`replicate_sums`,
    expressed as gathered unit-local rows (with repetition) for an arbitrary
    callable. ``copies`` gives, for each row, the copy number of the drawn
    input it belongs to (0 for the first draw of that input, 1 for the
    second, ...), so the caller can give every drawn copy its own identity.
    """
    for s in range(n_streams_for(n_resamples)):
        gen = stream(root, _BOOT, unit.index, s)
        block = draw_clusters(gen, STREAM_SIZE, unit.strata_bounds)
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
