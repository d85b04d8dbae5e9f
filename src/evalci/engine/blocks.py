"""Moving blocks on the index kernel: a replicate is a sum of block sums.

:func:`evalci.engine.resampling.draw_moving_blocks` draws ``nb = ceil(N / L)``
block starts per replicate, uniform on ``0 .. N - L``, and keeps the first
N of their ``nb L`` inputs: a replicate's sums are the sums of ``nb - 1``
full blocks and of the first ``r = N - (nb - 1) L`` inputs of the last.
For whole-number statistics (0/1 sums, counts) every such sum is exact, so
adding precomputed block sums gives the row-gathering kernel's replicates
bit for bit, from the same streams and the same draws, at ``nb`` gathers
per replicate and column instead of N: L times fewer (issue 27). Other
statistics keep the row-gathering kernel (their sums would round
differently in another order).
"""

from __future__ import annotations

import numpy as np

from evalci._base.streams import streams
from evalci.engine import resampling as _rs

__all__ = ["block_tables", "exact_sums", "stream_replicate_sums"]


def exact_sums(flat: np.ndarray) -> bool:
    """Whether every sum of rows of ``flat`` (N, C), repeats allowed, is exact
    in float64, in any order: whole numbers whose N-fold magnitude stays
    below 2**53, and no negative zero (whose sums' sign depends on order)."""
    big = float(np.abs(flat).max()) if flat.size else 0.0
    if big * len(flat) >= 2.0**53 or not np.array_equal(flat, np.trunc(flat)):
        return False
    return not (np.signbit(flat) & (flat == 0)).any()  # -0.0: its sums' sign


def block_tables(flat: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact sums ``(N - L + 1, C)`` of the block at each start: of its ``L``
    inputs (``full``) and of its first ``r`` (``last``, the truncated last
    block; ``full`` itself when ``r = L``), from prefix sums of whole numbers."""
    n = len(flat)
    n_starts = n - length + 1
    rest = n - (-(-n // length) - 1) * length
    csum = np.zeros((n + 1, flat.shape[1]))
    np.cumsum(flat, axis=0, out=csum[1:])
    full = csum[length:] - csum[:-length]
    last = full if rest == length else csum[rest : rest + n_starts] - csum[:n_starts]
    return full, last


def stream_replicate_sums(
    unit, root, strategy, first, n_streams, *, weights, tile_size=None
):
    """:func:`evalci.engine.resampling.stream_replicate_sums`, moving blocks
    of whole numbers (``block_length > 1``) as sums of block sums.

    Stream ``(BOOT, unit.index, first + s)`` draws ``integers(0, N - L + 1,
    size=(64, nb))`` block starts, as ``draw_moving_blocks`` does; replicate
    b's sums are ``full[starts[b, :-1]].sum() + last[starts[b, -1]]``.
    """
    n, g, m = unit.T.shape
    flat = unit.T.reshape(n, g * m)
    if unit.block_length <= 1 or weights != "multinomial" or not exact_sums(flat):
        return _rs.stream_replicate_sums(
            unit, root, strategy, first, n_streams, weights=weights, tile_size=tile_size
        )
    length, size = unit.block_length, _rs.STREAM_SIZE
    full, last = (t.T.copy() for t in block_tables(flat, length))  # (C, S) each
    n_blocks = -(-n // length)
    out = np.empty((n_streams * size, g * m))
    # a column whose block sums are all equal (the runs column at equal k)
    # has the same exact sum in every replicate: it is not gathered
    # the others are gathered as the narrowest integers that hold them (less
    # memory traffic) and summed in int64: exact, as every sum is
    big = max(float(np.abs(full).max()), float(np.abs(last).max()))
    narrow = np.int16 if big < 2**15 else np.int32 if big < 2**31 else np.int64
    drawn = []
    for j in range(g * m):
        if (full[j] == full[j, 0]).all() and (last[j] == last[j, 0]).all():
            out[:, j] = full[j, 0] * (n_blocks - 1) + last[j, 0]
        else:
            drawn.append((j, full[j].astype(narrow), last[j].astype(np.int64)))
    for s, gen in enumerate(streams(root, (_rs._BOOT, unit.index), first, n_streams)):
        starts = gen.integers(0, n - length + 1, size=(size, n_blocks))
        head, tail = starts[:, :-1], starts[:, -1]
        rows = out[s * size : (s + 1) * size]
        for j, f, t in drawn:
            rows[:, j] = np.take(f, head).sum(axis=1, dtype=np.int64) + t[tail]
    return out.reshape(-1, g, m)
