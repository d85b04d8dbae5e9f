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

from dataclasses import dataclass

import numpy as np

from evalci._base.streams import streams
from evalci.engine import resampling as _rs
from evalci.engine import tiles

__all__ = [
    "PackedWord",
    "block_tables",
    "exact_sums",
    "pack_columns",
    "stream_replicate_sums",
]


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


@dataclass(frozen=True)
class PackedWord:
    """Block sums of several columns in one integer per start.

    Column ``columns[i]``'s block sum, less its minimum ``low[i]``, sits in
    bits ``shift[i]`` upwards, each field wide enough for a sum of ``count``
    of them: a replicate's sum of ``count`` packed values (in int64) holds
    every column's sum exactly, one gather and one sum for all of them.
    """

    table: np.ndarray  # (S,) int32 or int64
    columns: tuple
    low: np.ndarray  # (c,) int64
    shift: np.ndarray  # (c,) int64
    width: np.ndarray  # (c,) bits
    count: int

    def unpack(self, total: np.ndarray) -> list[np.ndarray]:
        """Each column's sum of ``count`` block sums from packed totals."""
        return [
            ((total >> int(sh)) & ((1 << int(w)) - 1)) + int(lo) * self.count
            for lo, sh, w in zip(self.low, self.shift, self.width, strict=True)
        ]


def pack_columns(full: np.ndarray, count: int) -> list[PackedWord]:
    """Whole-number block sums ``(C, S)`` packed into as few words as fit.

    A field holds a column's sum of ``count`` blocks (less ``count`` times its
    minimum): ``bit_length(count * range)`` bits; words hold 63 bits of
    fields, stored as int32 where every packed value fits.
    """
    full = full.astype(np.int64)
    low = full.min(axis=1)
    rng = full.max(axis=1) - low
    widths = [max(1, int(count * int(r)).bit_length()) for r in rng]
    groups, cols, used = [], [], 0
    for j, w in enumerate(widths):
        if cols and used + w > 63:
            groups.append(cols)
            cols, used = [], 0
        cols.append(j)
        used += w
    groups += [cols] if cols else []
    words = []
    for cols in groups:
        shift = np.cumsum([0] + [widths[i] for i in cols[:-1]])
        table = np.zeros(full.shape[1], np.int64)
        for i, sh in zip(cols, shift, strict=True):
            table += (full[i] - low[i]) << int(sh)
        narrow = np.int32 if int(table.max(initial=0)) < 2**31 else np.int64
        width = np.array([widths[i] for i in cols])
        words.append(
            PackedWord(
                table.astype(narrow), tuple(cols), low[cols], shift, width, count
            )
        )
    return words


def stream_replicate_sums(
    unit, root, strategy, first, n_streams, *, weights, tile_size=None
):
    """:func:`evalci.engine.tiles.stream_replicate_sums`, moving blocks
    of whole numbers (``block_length > 1``) as sums of block sums.

    Stream ``(BOOT, unit.index, first + s)`` draws ``integers(0, N - L + 1,
    size=(64, nb))`` block starts, as ``draw_moving_blocks`` does; replicate
    b's sums are ``full[starts[b, :-1]].sum() + last[starts[b, -1]]``.
    """
    n, g, m = unit.T.shape
    flat = unit.T.reshape(n, g * m)
    if unit.block_length <= 1 or weights != "multinomial" or not exact_sums(flat):
        return tiles.stream_replicate_sums(
            unit, root, strategy, first, n_streams, weights=weights, tile_size=tile_size
        )
    length, size = unit.block_length, _rs.STREAM_SIZE
    full, last = (t.T.copy() for t in block_tables(flat, length))  # (C, S) each
    n_blocks = -(-n // length)
    out = np.empty((n_streams * size, g * m))
    # a column whose block sums are all equal (the runs column at equal k)
    # has the same exact sum in every replicate: it is not gathered; the
    # others are packed several to an integer (one gather and one int64 sum
    # for all of them, exact: every field holds its whole sum)
    drawn = []
    for j in range(g * m):
        if (full[j] == full[j, 0]).all() and (last[j] == last[j, 0]).all():
            out[:, j] = full[j, 0] * (n_blocks - 1) + last[j, 0]
        else:
            drawn.append(j)
    words = pack_columns(full[drawn], n_blocks - 1)
    tails = [last[j].astype(np.int64) for j in drawn]
    for s, gen in enumerate(streams(root, (_rs._BOOT, unit.index), first, n_streams)):
        starts = gen.integers(0, n - length + 1, size=(size, n_blocks))
        head, tail = starts[:, :-1], starts[:, -1]
        rows = out[s * size : (s + 1) * size]
        for word in words:
            total = np.take(word.table, head).sum(axis=1, dtype=np.int64)
            for j, total_j in zip(word.columns, word.unpack(total), strict=True):
                rows[:, drawn[j]] = total_j + tails[j][tail]
    return out.reshape(-1, g, m)
