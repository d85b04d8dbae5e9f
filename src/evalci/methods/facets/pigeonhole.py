"""The pigeonhole bootstrap: inputs and each random facet's levels resampled
independently (McCullagh 2000, "Resampling and exchangeable arrays"; Owen
2007, "The pigeonhole bootstrap").

Replicate ``b`` weighs cell ``(i, t, j)`` by ``W_i W_t W_j``, the counts of
its levels in independent draws with replacement of each dimension, and its
score is ``sum W m p / sum W p`` over the present cells (``p``) of cell
means ``m``. Every group (system) uses the same draws, so gaps are paired.

Reproducibility: dimension ``d``'s counts for replicates ``64 s`` to
``64 s + 63`` come from stream ``(PIGEONHOLE, d, s)`` of the root seed, drawn
over the dimension's sorted levels, whatever the row order or backend.

Cost: the input counts (B x N draws) dominate; the contraction is one matrix
product per block of replicates, ``(B, N) @ (N, 2 G C)`` for G groups and C
facet cells per input, then a weighted sum over each facet.

The pigeonhole variance counts the interactions and the run noise more than
once (Owen 2007, Theorem 2: for two crossed factors its expectation exceeds
the variance of the mean by about the interaction's share over each
dimension), so its intervals are conservative; the family's default
interval (``method="components"``) uses the estimated components instead.
"""

from __future__ import annotations

import numpy as np

from evalci.engine.resampling import STREAM_SIZE, stream

__all__ = ["pigeonhole_replicates"]

#: The key of the pigeonhole streams under the root seed (the engine's are 0-2).
PIGEONHOLE = 7
#: Aim for blocks of about this many floats in the contraction.
BLOCK_FLOATS = 2**23


#: Bins of one bincount call: a chunk of replicates' counts stays in cache.
CACHE_BINS = 2**14


def _counts(root, d: int, size: int, first: int, n_rep: int) -> np.ndarray:
    """Counts of dimension ``d`` (``size`` levels) for replicates ``first...``.

    Stream ``s`` draws ``integers(0, size, (64, size), dtype=int32)``; the
    counts come from one bincount per chunk of replicates whose bins fit in
    cache (about twice as fast as one bincount over the whole block).
    """
    out = np.empty((n_rep, size), dtype=np.float64)
    rows = max(1, min(STREAM_SIZE, CACHE_BINS // size))
    offsets = (np.arange(rows) * size)[:, None]
    s0, s1 = first // STREAM_SIZE, -(-(first + n_rep) // STREAM_SIZE)
    for s in range(s0, s1):
        idx = stream(root, PIGEONHOLE, d, s).integers(0, size, (STREAM_SIZE, size),
                                                      dtype=np.int32)
        lo, hi = max(first, s * STREAM_SIZE), min(first + n_rep, (s + 1) * STREAM_SIZE)
        for b in range(lo, hi, rows):
            k = min(rows, hi - b)
            part = idx[b - s * STREAM_SIZE:b - s * STREAM_SIZE + k] + offsets[:k]
            out[b - first:b - first + k] = np.bincount(
                part.ravel(), minlength=k * size).reshape(k, size)
    return out


def _contract(top: np.ndarray, weights: list) -> np.ndarray:
    """``top`` (B, G, L1, ..., Lk) summed over the facets with each replicate's counts."""
    for w in weights:
        shape = (w.shape[0], 1, w.shape[1]) + (1,) * (top.ndim - 3)
        top = (top * w.reshape(shape)).sum(axis=2)
    return top


def pigeonhole_replicates(root, present: np.ndarray, means: np.ndarray,
                          n_resamples: int) -> np.ndarray:
    """Replicates, shape (G, B), of each group's mean of cell means."""
    groups, shape = present.shape[0], present.shape[1:]
    n_in, rest = shape[0], int(np.prod(shape[1:], dtype=np.int64))
    p = np.moveaxis(present.astype(float), 1, 0).reshape(n_in, groups * rest)
    pm = np.moveaxis(present * means, 1, 0).reshape(n_in, groups * rest)
    both = np.concatenate([pm, p], axis=1)
    widest = max(n_in, 2 * groups * rest)  # the input counts, or the contraction
    block = max(STREAM_SIZE, BLOCK_FLOATS // widest // STREAM_SIZE * STREAM_SIZE)
    out = np.empty((groups, n_resamples))
    for first in range(0, n_resamples, block):
        n_rep = min(block, n_resamples - first)
        w_in = _counts(root, 0, n_in, first, n_rep)
        top = (w_in @ both).reshape(n_rep, 2 * groups, *shape[1:])
        weights = [_counts(root, d, shape[d], first, n_rep) for d in range(1, len(shape))]
        sums = _contract(top, weights)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, first:first + n_rep] = (sums[:, :groups] / sums[:, groups:]).T
    return out
