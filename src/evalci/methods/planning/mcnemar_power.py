"""McNemar's test as :func:`evalci.mcnemar` runs it: exact power, n and effect.

For the paired design from the discordance with one run per input, power is
computed exactly for mcnemar's default decision rule (exact binomial below
``MCNEMAR_EXACT_BELOW`` discordant inputs, continuity-corrected chi-squared
from there on): the rejection region per number of discordant inputs, the
power summed over their binomial distribution, and the smallest n or effect
that reaches a wanted power.
"""

from __future__ import annotations

import numpy as np

from evalci.methods.analytic import MCNEMAR_EXACT_BELOW


def _mcnemar_upper(m, alpha):
    """Per number of discordant inputs m: the smallest n01 > m/2 that rejects.

    ``evalci.mcnemar``'s default rule (``exact=None``) at level ``alpha``
    (reject when the p-value is <= alpha): below ``MCNEMAR_EXACT_BELOW``
    discordant inputs the two-sided binomial test with p = 1/2, whose p-value
    at n01 = x > m/2 is min(1, 2 P(K >= x)), K ~ Binomial(m, 1/2); from there
    on the continuity-corrected chi-squared (|n01 - n10| - 1)^2 / m, which
    rejects from x >= (m + 1 + sqrt(m chi2_(1, alpha))) / 2. Both rules are
    symmetric: n01 <= m - u(m) rejects too. ``m + 1`` where nothing rejects.
    """
    from scipy import stats  # slow to import: only when used

    m = np.asarray(m, dtype=np.int64)
    u = np.empty(len(m), dtype=np.int64)
    small = m < MCNEMAR_EXACT_BELOW
    ms = m[small][:, None]
    x = np.arange(MCNEMAR_EXACT_BELOW + 1)[None, :]
    pval = np.minimum(1.0, 2 * stats.binom.sf(x - 1, ms, 0.5))
    ok = (2 * x > ms) & (x <= ms) & (pval <= alpha)
    u[small] = np.where(ok.any(axis=1), np.argmax(ok, axis=1), ms[:, 0] + 1)
    ml = m[~small].astype(float)
    if len(ml):
        crit = stats.chi2.isf(alpha, 1)

        def rejects(xx):
            d = 2 * xx - ml
            return (d > 0) & (stats.chi2.sf((d - 1) ** 2 / ml, 1) <= alpha)

        cand = np.ceil((ml + 1 + np.sqrt(ml * crit)) / 2)
        # the p-value itself decides where rounding puts cand on the boundary
        cand = np.where(rejects(cand - 1), cand - 1, cand)
        cand = np.where(rejects(cand), cand, cand + 1)
        u[~small] = np.minimum(cand, ml + 1).astype(np.int64)
    return u


def _mcnemar_power(n, psi, delta, alpha, alternative):
    """Exact power of ``evalci.mcnemar``'s decision rule on n paired inputs.

    The number of discordant inputs is m ~ Binomial(n, psi) and, given m,
    n01 (only b right) ~ Binomial(m, q) with q = (psi + delta) / (2 psi);
    the power is sum_m P(m) P(n01 in the rejection region of m). One-sided
    alternatives use mcnemar's p-value halved in the planned direction
    (its one-sided version: reject if the gap has the planned sign and
    p <= 2 alpha). Vectorised over m; m outside the central 1 - 2e-14 of
    its distribution is ignored.
    """
    from scipy import stats  # slow to import: only when used

    lo = int(stats.binom.ppf(1e-14, n, psi))
    hi = int(stats.binom.isf(1e-14, n, psi))
    m = np.arange(max(lo - 1, 0), min(hi + 1, n) + 1)
    w = stats.binom.pmf(m, n, psi)
    q = min(max((psi + delta) / (2 * psi), 0.0), 1.0)
    two = alternative == "two-sided"
    u = _mcnemar_upper(m, alpha if two else min(2 * alpha, 1.0))
    up = stats.binom.sf(u - 1, m, q)  # n01 >= u: b better
    down = stats.binom.cdf(m - u, m, q)  # n01 <= m - u: a better
    rej = up + down if two else (up if alternative == "greater" else down)
    return float(min(np.sum(w * rej), 1.0))


def _mcnemar_sample_size(psi, delta, alpha, power, alternative, start):
    """Smallest n found by bisection with exact power >= ``power`` (n - 1 below).

    Exact power rises with n up to small ripples (the discreteness of the
    test is averaged over m ~ Binomial(n, psi)); bisection returns an n with
    power(n) >= target > power(n - 1).
    """

    def enough(n):
        return _mcnemar_power(n, psi, delta, alpha, alternative) >= power

    lo, hi = 0, max(int(start), 1)
    while not enough(hi):
        lo, hi = hi, 2 * hi
        if hi > 10**12:
            raise ValueError(
                f"no n up to 10^12 reaches power {power:g} for discordance {psi:g} "
                f"and p2 - p1 = {delta:g}."
            )
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def _mcnemar_mde(n, psi, alpha, power, alternative):
    """Smallest |p2 - p1| whose exact McNemar power at n is ``power`` (NaN if none)."""
    from scipy import optimize  # slow to import: only when used

    sign = -1.0 if alternative == "less" else 1.0

    def gap(d):
        return _mcnemar_power(n, psi, sign * d, alpha, alternative) - power

    if gap(psi) < 0:
        return float("nan")
    lo = psi * 1e-9
    if gap(lo) >= 0:
        return lo
    return float(optimize.brentq(gap, lo, psi, xtol=1e-13, rtol=1e-12))
