"""The law of a replicate's total, when one statistic varies (issue 27).

A moving-block replicate on patterns (:func:`evalci.engine.patterns_draw.block_plan`)
sums ``n_h`` iid draws from each of a few groups of block sums (``nb - 1``
full blocks, and one partial block). When every block sum of a group has
the same value in all columns but one -- the same column ``j`` for every
group -- the replicate's sums are fixed by one integer, the total ``T`` of
column ``j``: one system's successes when every input has the same number
of runs (a tidy 0/1 table), or one system's counts with equal trials. ``T``
is a sum of independent integer variables, so its law is the convolution
of their probability mass functions, computed once per unit with an FFT;
a replicate then draws ``T`` by inverse CDF from one uniform instead of a
multinomial over the V distinct block sums (about V binomial variates).
Same law as the multinomial form (and the index kernel), other draws.

Accuracy. The support of ``T`` is ``0 .. sum_h n_h span_h`` (up to ``k N``),
but its mass sits within a few standard deviations of the mean: the window
``lo .. hi`` is cut by Chernoff bounds computed from the exact per-draw
pmfs, ``P(T < lo) <= 2**-70`` and ``P(T > hi) <= 2**-70``, and the FFT is
cyclic of length ``M >= hi - lo + 1`` (a power of two), so the mass that
wraps around is bounded by the same tails. The FFT powers carry rounding
of about ``n_h * 1e-16`` per frequency, so the CDF's error grows with the
number of blocks: measured against exact integer arithmetic and direct
convolution, 1e-14 at a few hundred blocks; against scipy's binomial CDF
(block sums of two values), 3e-13 at 15,000 blocks, 6e-12 at 150,000 and
2e-11 at 750,000 (``tests/engine/test_block_kernels.py``). A replicate's total
differs from exact inverse-CDF sampling only when its uniform falls that
close to a step of the CDF.

Where it does not apply. Block sums that vary in several columns (two
systems on the same inputs, or unequal runs per input) make the replicate
a function of a d-dimensional total, whose law would need a d-dimensional
FFT over the product of the windows (about 5e7 points for two systems at
N = 100,000, L = 46): those units keep the multinomial, or the index
kernel's block sums (:mod:`evalci.engine.blocks`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TotalLaw", "total_law", "TOTAL_RATIO", "TOTAL_MAX"]

#: Each tail of the total's law left outside the window holds at most this.
TAIL = 2.0**-70

#: The total form replaces the multinomial when its window is at most
#: ``TOTAL_RATIO`` times the V categories of the multinomial (about V
#: binomials per replicate) and at most ``TOTAL_MAX`` points. Measured on 2
#: shared cores: the FFT of 2**16 / 2**18 / 2**20 points took 11 / 47 / 258
#: ms, a multinomial over 64 categories for B=10,000 about 120-150 ms, so
#: the break-even is at 8,000-14,000 V; 4,096 keeps the total form at least
#: about twice as cheap at B=10,000. Data shape only, never the number of
#: resamples.
TOTAL_RATIO = 1 << 12
TOTAL_MAX = 1 << 22


@dataclass(frozen=True)
class TotalLaw:
    """The law of a replicate's sums through one integer total.

    A replicate's flattened sums ``(G * m,)`` are ``base`` with ``T`` added
    to column ``column``; ``T = lo + t`` where ``t`` is drawn by inverse CDF:
    the smallest ``t`` with ``cdf[t] > u`` for one uniform ``u`` on [0, 1).
    """

    column: int
    base: np.ndarray  # (G * m,) the sums at T = 0 (whole numbers)
    lo: int
    cdf: np.ndarray  # (hi - lo + 1,) increasing, cdf[-1] == 1.0

    def sums(self, u: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Flattened replicate sums ``(len(u), G * m)`` for uniforms ``u``."""
        if out is None:
            out = np.empty((len(u), len(self.base)))
        out[:] = self.base
        out[:, self.column] += self.lo + np.searchsorted(self.cdf, u, side="right")
        return out


def _window(pmfs, draws) -> tuple[int, int]:
    """``lo, hi`` with ``P(T < lo), P(T > hi) <= TAIL`` (Chernoff bounds).

    For any ``theta > 0``, ``P(T >= a) <= exp(-theta a + sum_h n_h K_h(theta))``
    with ``K_h`` the cumulant generating function of a draw of group h (and
    the mirror bound for ``theta < 0``); every ``theta`` of the grid gives a
    valid cut, the best one is kept.
    """
    top = sum(n * (len(p) - 1) for p, n in zip(pmfs, draws, strict=True))
    mean = var = 0.0
    support = []
    for p, n in zip(pmfs, draws, strict=True):
        x = np.flatnonzero(p)
        w = p[x]
        mu = float(x @ w)
        mean += n * mu
        var += n * float(((x - mu) ** 2) @ w)
        support.append((x.astype(float), np.log(w), n))
    if var == 0.0:
        t = round(mean)
        return t, t
    z = np.geomspace(1e-2, 1e3, 97) / np.sqrt(var)
    cuts = []
    for theta in (z, -z):
        k = np.zeros(len(theta))
        for x, logw, n in support:
            e = theta[:, None] * x[None, :] + logw[None, :]
            big = e.max(axis=1)
            k += n * (big + np.log(np.exp(e - big[:, None]).sum(axis=1)))
        cuts.append((k - np.log(TAIL)) / theta)
    hi = min(top, int(np.ceil(cuts[0].min())) - 1)
    lo = max(0, int(np.floor(cuts[1].max())) + 1)
    return lo, max(lo, hi)


def _pmf_of_total(pmfs, draws, lo: int, hi: int) -> np.ndarray:
    """``P(T = lo ... hi)`` by a cyclic FFT of length ``M >= hi - lo + 1``."""
    width = hi - lo + 1
    size = 1 << max(width - 1, 1).bit_length()
    spectrum = np.ones(size // 2 + 1, dtype=complex)
    for p, n in zip(pmfs, draws, strict=True):
        if len(p) > size:  # fold: a cyclic transform sees the pmf modulo M
            p = np.bincount(np.arange(len(p)) % size, weights=p, minlength=size)
        spectrum *= np.fft.rfft(p, size) ** n
    q = np.fft.irfft(spectrum, size)
    return np.maximum(q[(lo + np.arange(width)) % size], 0.0)


def _column_ranges(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column minimum and maximum (column by column: numpy's axis-0
    reductions over a narrow array are ~50x slower)."""
    cols = range(sums.shape[1])
    return (
        np.array([sums[:, c].min() for c in cols]),
        np.array([sums[:, c].max() for c in cols]),
    )


def total_law(parts) -> TotalLaw | None:
    """The :class:`TotalLaw` of a plan's groups of draws, or None.

    ``parts`` are ``(sums, n_h)``: per group, the ``(S, G * m)`` whole-number
    sums of its equally likely draws (one row per block start) and how many
    iid draws a replicate makes. None when the sums vary in more than one
    column, or when the FFT would cost more than the multinomial over the V
    distinct sums it replaces (:data:`TOTAL_RATIO`, :data:`TOTAL_MAX`).
    """
    ranges = [_column_ranges(sums) for sums, _ in parts]
    varying = set()
    for low, high in ranges:
        varying.update(np.flatnonzero(high > low).tolist())
    if len(varying) > 1:
        return None
    j = max(varying, default=0)
    if any(high[j] - low[j] >= TOTAL_MAX for low, high in ranges):
        return None  # one draw's law alone would not fit the window
    base = np.zeros(parts[0][0].shape[1])
    pmfs, draws = [], []
    for (sums, n), (low, _) in zip(parts, ranges, strict=True):
        base += n * low
        pmfs.append(np.bincount((sums[:, j] - low[j]).astype(np.int64)) / len(sums))
        draws.append(int(n))
    n_categories = sum(np.count_nonzero(p) for p in pmfs)
    lo, hi = _window(pmfs, draws)
    width = hi - lo + 1
    if width > min(TOTAL_RATIO * n_categories, TOTAL_MAX):
        return None
    pmf = _pmf_of_total(pmfs, draws, lo, hi)
    cdf = np.cumsum(pmf)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return TotalLaw(column=j, base=base, lo=lo, cdf=cdf)
