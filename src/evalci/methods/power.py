"""Power and sample size for comparing the accuracy of two systems.

A design -- independent or paired inputs, runs per input, the intraclass
correlation, the test's level and sidedness -- ties together three numbers:
the inputs per system ``n``, the difference to detect (the *effect*, p2 - p1)
and the power. :func:`sample_size`, :func:`power` and
:func:`minimum_detectable_effect` each validate the design into a
:class:`_Design` and hand it to :func:`_solve`, which (like statsmodels'
``solve_power``) solves for whichever of the three is left as None: exactly,
for McNemar's test as :func:`evalci.mcnemar` runs it (paired, from the
discordance, one run per input), else by the normal approximation. The
``*_from_data`` forms take accuracy, rho and k from a pilot table
(:func:`evalci.variance.icc`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.validate import as_columns, check_integer, check_number, check_option
from evalci.methods.analytic import MCNEMAR_EXACT_BELOW
from evalci.methods.variance import icc

__all__ = [
    "mde_from_data",
    "minimum_detectable_effect",
    "power",
    "sample_size",
    "sample_size_from_data",
]

_ALTERNATIVES = ("two-sided", "greater", "less")


# ================================================================== validation
def _z_alpha(alpha, alternative):
    from scipy import stats  # slow to import: only when used

    alpha = check_number(
        alpha, "alpha", low=0, high=1, low_open=True, high_open=True, hint=", e.g. 0.05"
    )
    check_option(alternative, "alternative", _ALTERNATIVES)
    q = alpha / 2 if alternative == "two-sided" else alpha
    return float(stats.norm.ppf(1 - q))


def _z_power(pw):
    from scipy import stats  # slow to import: only when used

    pw = check_number(
        pw, "power", low=0, high=1, low_open=True, high_open=True, hint=", e.g. 0.8"
    )
    return float(stats.norm.ppf(pw))


def _design_effect(k, rho):
    """rho + (1 - rho) / k: the variance of a k-run input mean over one run's."""
    k = check_number(k, "k", low=1, hint=" (runs per input)")
    if k == 1:
        return 1.0
    if rho is None:
        raise ValueError(
            f"`rho` is required with k = {k:g} runs per input: the variance of a "
            "k-run mean is sigma2 (rho + (1 - rho) / k); estimate rho with icc(...) "
            "on a pilot, or pass rho=0 if runs are truly independent."
        )
    rho = check_number(rho, "rho", low=0, high=1, hint=" (an intraclass correlation)")
    return rho + (1 - rho) / k


def _paired_iv(paired, discordance, sd_diff):
    if not paired:
        if discordance is not None or sd_diff is not None:
            raise ValueError(
                "`discordance` and `sd_diff` describe a paired design (both systems "
                "on the same inputs); pass paired=True."
            )
        return None, None
    if (discordance is None) == (sd_diff is None):
        raise ValueError(
            "paired=True needs exactly one of `discordance` (share of inputs where "
            "the two systems disagree, McNemar) or `sd_diff` (SD of the per-input "
            "difference b - a)."
        )
    if discordance is not None:
        discordance = check_number(
            discordance,
            "discordance",
            low=0,
            high=1,
            low_open=True,
            hint=" (a share of inputs)",
        )
    if sd_diff is not None:
        sd_diff = check_number(sd_diff, "sd_diff", low=0, low_open=True)
    return discordance, sd_diff


def _proportion(p, name):
    return check_number(
        p, name, low=0, high=1, low_open=True, high_open=True, hint=" (an accuracy)"
    )


def _variances(p1, p2, discordance, sd_diff, paired, deff):
    """Per-input variance of the difference under H0 and under H1, times deff."""
    delta = p2 - p1
    if not paired:
        v = (p1 * (1 - p1) + p2 * (1 - p2)) * deff
        return v, v
    if discordance is not None:
        # Connor (1987): discordant share psi; Var under H0 psi, under H1 psi - delta^2
        return discordance * deff, (discordance - delta**2) * deff
    return sd_diff**2 * deff, sd_diff**2 * deff


def _check_discordance(p1, p2, psi):
    delta = p2 - p1
    if psi < abs(delta) - 1e-12:  # rounding: 0.8 - 0.5 > 0.3
        raise ValueError(
            f"`discordance` = {psi:g} is smaller than |p2 - p1| = {abs(delta):g}: the "
            "systems must disagree on at least that share of inputs."
        )
    # p01 = share where only b is right, p10 = only a: bounded by the margins
    p01, p10 = (psi + delta) / 2, (psi - delta) / 2
    if p01 > min(p2, 1 - p1) + 1e-12 or p10 > min(p1, 1 - p2) + 1e-12:
        raise ValueError(
            f"`discordance` = {psi:g} is impossible with accuracies p1 = {p1:g} and "
            f"p2 = {p2:g}: too many disagreements for those margins."
        )


def _direction_iv(delta, alternative):
    if alternative == "greater" and delta <= 0:
        raise ValueError(
            "alternative='greater' tests p2 > p1, but p2 - p1 = "
            f"{delta:g}; swap p1 and p2 or use alternative='less'."
        )
    if alternative == "less" and delta >= 0:
        raise ValueError(
            "alternative='less' tests p2 < p1, but p2 - p1 = "
            f"{delta:g}; swap p1 and p2 or use alternative='greater'."
        )


def _mcnemar_exact(paired, discordance, k):
    """Whether the design is the one mcnemar tests: paired, from discordance, k = 1."""
    return bool(paired) and discordance is not None and float(k) == 1.0


# ==================================================================== the design
@dataclass(frozen=True)
class _Design:
    """A validated comparison of two systems: all but n, the effect and the power.

    ``p1`` is the accuracy of the first system (the baseline ``p`` of
    :func:`minimum_detectable_effect`; None for a paired design or one given
    by ``sigma2``), ``sigma2`` the variance of one run's outcome, ``deff`` the
    design effect rho + (1 - rho) / k and ``za`` the quantile of the test.
    """

    alpha: float
    alternative: str
    za: float
    deff: float
    k: float
    paired: bool
    discordance: float | None = None
    sd_diff: float | None = None
    p1: float | None = None
    sigma2: float | None = None

    @property
    def exact(self) -> bool:
        """McNemar's design (paired, from the discordance, k = 1): exact power."""
        return _mcnemar_exact(self.paired, self.discordance, self.k)

    def variances(self, p2):
        """Per-input variance of the difference under H0 and H1 for accuracies p1, p2."""
        return _variances(
            self.p1, p2, self.discordance, self.sd_diff, self.paired, self.deff
        )


def _design_iv(za, alpha, alternative, paired, discordance, sd_diff, k, rho, p1, p2):
    """The design after ``za``: paired arguments, discordance vs p1, p2, design effect."""
    discordance, sd_diff = _paired_iv(paired, discordance, sd_diff)
    if discordance is not None and p2 is not None:
        _check_discordance(p1, p2, discordance)
    deff = _design_effect(k, rho)
    return _Design(
        alpha=float(alpha),
        alternative=alternative,
        za=za,
        deff=deff,
        k=float(k),
        paired=bool(paired),
        discordance=discordance,
        sd_diff=sd_diff,
        p1=p1,
    )


def _baseline_iv(design: _Design, p, sigma2) -> _Design:
    """The minimum detectable effect's baseline: ``p`` or ``sigma2`` (independent)."""
    if design.paired:
        if p is not None or sigma2 is not None:
            raise ValueError(
                "`p` and `sigma2` describe the independent design; with paired=True "
                "give `sd_diff` or `discordance`."
            )
        return design
    if (p is None) == (sigma2 is None):
        raise ValueError(
            "give exactly one of `p` (baseline accuracy) or `sigma2` (variance of "
            "one run's outcome) for the independent design."
        )
    if sigma2 is not None:
        sigma2 = check_number(sigma2, "sigma2", low=0, low_open=True)
        return dataclasses.replace(design, sigma2=sigma2)
    return dataclasses.replace(design, p1=_proportion(p, "p"))


# ==================================================================== the solver
def _solve(design: _Design, *, n=None, p2=None, power=None):
    """Solve ``design`` for whichever of ``n``, ``p2`` and ``power`` is None.

    The effect is given as the second accuracy ``p2`` (p2 - p1 is the
    difference) and returned as the detectable ``|p2 - p1|``; ``n`` is the
    number of inputs per system (paired: inputs both systems run).
    """
    unknown = [k for k, v in (("n", n), ("p2", p2), ("power", power)) if v is None]
    if len(unknown) != 1:
        raise TypeError(f"_solve needs exactly one unknown, not {unknown}.")
    if power is None:
        return _power_of(design, n, p2)
    if n is None:
        return _inputs_for(design, p2, power)
    return _effect_for(design, n, power)


def _power_of(d: _Design, n, p2) -> float:
    """Power at ``n`` inputs: exact for McNemar's design, else normal."""
    from scipy import stats  # slow to import: only when used

    delta = p2 - d.p1
    if d.exact:
        return _mcnemar_power(n, d.discordance, delta, d.alpha, d.alternative)
    v0, v1 = d.variances(p2)
    if v1 <= 0:
        return 1.0
    sd0, sd1 = d.za * math.sqrt(v0), math.sqrt(v1)
    up = stats.norm.cdf((math.sqrt(n) * delta - sd0) / sd1)
    down = stats.norm.cdf((-math.sqrt(n) * delta - sd0) / sd1)
    if d.alternative == "greater":
        return float(up)
    if d.alternative == "less":
        return float(down)
    return float(up + down)


def _inputs_for(d: _Design, p2, power) -> int:
    """Inputs needed: (z_a sqrt(v0) + z_b sqrt(v1))^2 / (p2 - p1)^2, or McNemar's exact n."""
    zb = _z_power(power)
    v0, v1 = d.variances(p2)
    n = (d.za * math.sqrt(v0) + zb * math.sqrt(v1)) ** 2 / (p2 - d.p1) ** 2
    if d.exact:  # the normal n is where the search starts
        return _mcnemar_sample_size(
            d.discordance, p2 - d.p1, d.alpha, float(power), d.alternative, n
        )
    return int(math.ceil(n - 1e-9))


def _effect_for(d: _Design, n, power) -> float:
    """The detectable |p2 - p1|: closed form for a constant variance, else a root."""
    from scipy import optimize  # slow to import: only when used

    zb = _z_power(power)
    zz = d.za + zb
    if d.sd_diff is not None:
        return float(zz * d.sd_diff * math.sqrt(d.deff / n))
    if d.sigma2 is not None:
        return float(zz * math.sqrt(2 * d.sigma2 * d.deff / n))
    if d.exact:
        return _mcnemar_mde(n, d.discordance, d.alpha, float(power), d.alternative)
    n_req, hi = _inputs_needed(d, zb)
    if n_req(hi) > n:
        return float("nan")
    lo = hi * 1e-12
    return float(
        optimize.brentq(lambda x: n_req(x) - n, lo, hi, xtol=1e-14, rtol=1e-12)
    )


def _inputs_needed(d: _Design, zb):
    """Inputs needed as a function of the difference x > 0, and the largest x possible.

    The variance depends on x (Connor's v1 = psi - x^2; p2 = p +/- x), so the
    minimum detectable effect is the root of n_req(x) = n.
    """
    za, deff = d.za, d.deff
    if d.paired:
        psi = d.discordance

        def n_req(x):
            return (
                za * math.sqrt(psi * deff)
                + zb * math.sqrt(max(psi - x * x, 0.0) * deff)
            ) ** 2 / (x * x)

        return n_req, psi
    p, zz = d.p1, za + zb
    sign = -1.0 if d.alternative == "less" else 1.0

    def n_req(x):
        p2 = p + sign * x
        return zz**2 * deff * (p * (1 - p) + p2 * (1 - p2)) / (x * x)

    return n_req, (p if sign < 0 else 1 - p)


# ---------------------------------------------- McNemar's test as evalci runs it
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


# ============================================================== public functions
def sample_size(
    p1,
    p2,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    discordance=None,
    sd_diff=None,
    k=1,
    rho=None,
    alternative: str = "two-sided",
) -> int:
    """Inputs per system needed to detect accuracy p1 vs p2.

    **Paired, from the discordance rate, k = 1**: sized for the test evalci
    runs on such data, :func:`evalci.mcnemar` with its default rule (exact
    binomial below 25 discordant inputs, continuity-corrected chi-squared
    from there on; reject when the p-value is <= alpha). The returned n is
    the smallest whose *exact* power reaches ``power``: the number of
    discordant inputs is m ~ Binomial(n, psi), of which n01 (only b right)
    ~ Binomial(m, (psi + p2 - p1) / (2 psi)), and the power sums the
    probability of mcnemar's rejection region over both. Connor's (1987)
    normal formula below is for the *uncorrected* test: at its n the
    corrected test mcnemar runs has power 0.77, not 0.80, which is why it is
    not used here. One-sided alternatives use mcnemar's p-value halved in
    the planned direction.

    The other designs use the normal approximation n = (z_alpha sqrt(v0) +
    z_beta sqrt(v1))^2 / (p2 - p1)^2, with v0, v1 the per-input variance of
    the difference under the null and the alternative:

    * independent samples (different inputs per system; seed 004):
      v0 = v1 = p1 (1 - p1) + p2 (1 - p2);
    * paired, from the discordance rate psi with k > 1 runs per input
      (mcnemar needs k = 1; the paired comparison is then the paired cluster
      bootstrap): Connor's v0 = psi, v1 = psi - (p2 - p1)^2, times the design
      effect;
    * paired, from ``sd_diff``, the SD of the single-run paired difference
      b - a on an input: v0 = v1 = sd_diff^2.

    With k runs per input, each variance is multiplied by the design effect
    rho + (1 - rho) / k (seed 000: Var of a k-run input mean =
    sigma2 (rho + (1 - rho) / k)); rho is the intraclass correlation of the
    outcome (independent design) or of the paired difference (paired).

    Parameters
    ----------
    p1, p2 : float
        Accuracies of the two systems, in (0, 1).
    alpha : float
        Significance level.
    power : float
        Wanted power, 1 - beta.
    paired : bool
        Both systems scored on the same inputs; give ``discordance`` or
        ``sd_diff``.
    discordance : float, optional
        Share of inputs on which the systems disagree (one right, one wrong),
        >= ``|p2 - p1|``.
    sd_diff : float, optional
        SD of the paired difference of one run of each system on an input
        (between- plus within-input variance of the difference, i.e.
        ``sqrt(sigma2_between + sigma2_within)`` of an :func:`icc` pair row).
    k : int
        Runs per input and system.
    rho : float, optional
        Intraclass correlation; required when k > 1.
    alternative : {'two-sided', 'greater', 'less'}
        About p2 - p1; one-sided tests use z_(1 - alpha).

    Returns
    -------
    int
        Inputs per system (rounded up); with ``paired=True`` the number of
        inputs both systems are run on. Each input gets k runs.

    Notes
    -----
    Except for McNemar's design (exact), a normal approximation: it needs
    n p and n (1 - p) reasonably large, so answers of a few dozen inputs at
    accuracies near 0 or 1 are optimistic.

    References
    ----------
    Connor, R. J. (1987). Sample size for testing differences in proportions
    for the paired-sample design. *Biometrics* 43(1), 207-211.
    Edwards, A. L. (1948). Note on the "correction for continuity" in testing
    the significance of the difference between correlated proportions.
    *Psychometrika* 13(3), 185-187.
    Fleiss, J. L., Levin, B., & Paik, M. C. (2003). *Statistical Methods for
    Rates and Proportions*, 3rd ed., ch. 4. Wiley.

    Examples
    --------
    Seed 004 ("How many items do you need?"): 80% vs 83% needs "about 2,600
    items per system" (it rounds z to 1.96 + 0.84 = 2.8 and gets 2,622):

    >>> from evalci import planning
    >>> planning.sample_size(0.80, 0.83)
    2626

    Paired on the same inputs, with the systems disagreeing on 10% of them
    (McNemar's test as :func:`evalci.mcnemar` runs it; Connor's formula for
    the uncorrected test would say 870, where mcnemar's power is 0.77):

    >>> planning.sample_size(0.80, 0.83, paired=True, discordance=0.10)
    925
    >>> round(planning.power(0.80, 0.83, 925, paired=True, discordance=0.10), 4)
    0.8002

    Five runs per input, intraclass correlation 0.6 (design effect 0.68):

    >>> planning.sample_size(0.80, 0.83, k=5, rho=0.6)
    1786
    """
    p1, p2 = _proportion(p1, "p1"), _proportion(p2, "p2")
    if p1 == p2:
        raise ValueError("`p1` and `p2` are equal: there is no difference to detect.")
    za, _ = _z_alpha(alpha, alternative), _z_power(power)
    _direction_iv(p2 - p1, alternative)
    design = _design_iv(
        za, alpha, alternative, paired, discordance, sd_diff, k, rho, p1, p2
    )
    return _solve(design, p2=p2, power=power)


def power(
    p1,
    p2,
    n_inputs,
    *,
    alpha: float = 0.05,
    paired: bool = False,
    discordance=None,
    sd_diff=None,
    k=1,
    rho=None,
    alternative: str = "two-sided",
) -> float:
    """Power to detect p1 vs p2 with ``n_inputs`` inputs per system.

    The inverse of :func:`sample_size` (same designs and variances). Paired
    from ``discordance`` with k = 1: the exact power of
    :func:`evalci.mcnemar`'s decision rule (see :func:`sample_size`;
    ``n_inputs`` must then be whole). Otherwise the normal approximation
    ``power = Phi((sqrt(n) |delta| - z_alpha sqrt(v0)) / sqrt(v1))``, plus
    the (tiny) probability of rejecting in the wrong direction for a
    two-sided test.

    Parameters
    ----------
    p1, p2 : float
        Accuracies, in (0, 1).
    n_inputs : int
        Inputs per system (paired: inputs run by both systems).
    alpha, paired, discordance, sd_diff, k, rho, alternative
        As in :func:`sample_size`.

    Returns
    -------
    float

    Examples
    --------
    >>> from evalci import planning
    >>> round(planning.power(0.80, 0.83, 2626), 3)
    0.8
    >>> round(planning.power(0.80, 0.83, 200), 3)      # seed 004's 200-item eval
    0.121
    """
    p1, p2 = _proportion(p1, "p1"), _proportion(p2, "p2")
    n = check_number(n_inputs, "n_inputs", low=0, low_open=True)
    za = _z_alpha(alpha, alternative)
    design = _design_iv(
        za, alpha, alternative, paired, discordance, sd_diff, k, rho, p1, p2
    )
    if design.exact:
        n = check_integer(n_inputs, "n_inputs", hint=" (McNemar: whole paired inputs)")
    return _solve(design, n=n, p2=p2)


def minimum_detectable_effect(
    n_inputs,
    *,
    p=None,
    sigma2=None,
    k=1,
    rho=None,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    sd_diff=None,
    discordance=None,
    alternative: str = "two-sided",
) -> float:
    """Smallest difference in accuracy detectable with ``n_inputs`` per system.

    The inverse of :func:`sample_size`: the delta > 0 at which it returns
    ``n_inputs`` (before rounding up).

    * independent, from a baseline accuracy ``p``: solves for p2 = p + delta
      (p - delta for ``alternative="less"``) with the unequal variances
      p (1 - p) + p2 (1 - p2);
    * independent, from a common variance ``sigma2`` of one run:
      delta = (z_alpha + z_beta) sqrt(2 sigma2 D / n);
    * paired from ``sd_diff``: delta = (z_alpha + z_beta) sd_diff sqrt(D / n);
    * paired from ``discordance`` with k = 1: the delta at which the exact
      power of :func:`evalci.mcnemar`'s rule is ``power`` (as
      :func:`sample_size`), solved numerically; with k > 1, Connor's (1987)
      normal formula with the design effect;

    with D = rho + (1 - rho) / k the design effect.

    Parameters
    ----------
    n_inputs : int
        Inputs per system (paired: inputs run by both).
    p : float, optional
        Baseline accuracy (independent design).
    sigma2 : float, optional
        Variance of one run's outcome (independent design), e.g.
        sigma2_between + sigma2_within from :func:`icc`.
    k : int
        Runs per input.
    rho : float, optional
        Intraclass correlation; required when k > 1.
    alpha, power, alternative
        As in :func:`sample_size`.
    paired : bool
        Same inputs for both systems; give ``sd_diff`` or ``discordance``.
    sd_diff, discordance : float, optional
        As in :func:`sample_size`.

    Returns
    -------
    float
        The detectable ``|p2 - p1|``; NaN if no difference is detectable (e.g.
        ``p`` so close to 1 that even p2 = 1 is too close).

    Examples
    --------
    >>> from evalci import planning
    >>> round(planning.minimum_detectable_effect(2626, p=0.80), 4)
    0.03
    >>> round(planning.minimum_detectable_effect(200, p=0.80), 3)  # seed 004's 200 items
    0.099

    Paired, GPQA-like (SD of the per-run difference 0.54, rho 0.41, 5 runs):

    >>> round(planning.minimum_detectable_effect(198, paired=True, sd_diff=0.54,
    ...                                          k=5, rho=0.41), 3)
    0.078
    """
    n = check_number(n_inputs, "n_inputs", low=0, low_open=True)
    za, _ = _z_alpha(alpha, alternative), _z_power(power)
    design = _design_iv(
        za, alpha, alternative, paired, discordance, sd_diff, k, rho, None, None
    )
    design = _baseline_iv(design, p, sigma2)
    if design.exact:
        n = check_integer(n_inputs, "n_inputs", hint=" (McNemar: whole paired inputs)")
    return _solve(design, n=n, power=power)


# ----------------------------------------------------------- from a pilot table
def _pilot(data, value, cluster, by, system, pair, successes, trials):
    """Components per group (independent) or per by-group of the pair (paired)."""
    if pair is not None:
        if system is None:
            raise ValueError(
                "`pair` needs `system=`: name the column holding the systems, e.g. "
                "system='system', pair=('direct', 'cot')."
            )
        try:
            a, b = pair
        except (TypeError, ValueError):
            raise ValueError(f"`pair` must be a tuple (a, b); got {pair!r}.") from None
        comp = icc(
            data,
            value,
            cluster,
            by=by,
            system=system,
            pairs=[(a, b)],
            successes=successes,
            trials=trials,
        )
        by_cols = as_columns(by, "by")
        base = comp[(comp["kind"] == "system") & (comp[system] == a)]
        diff = comp[comp["kind"] == "difference"].reset_index(drop=True)
        if by_cols:
            base = diff[by_cols].merge(base, on=by_cols, how="left")
        p1 = base["mean"].to_numpy()
        return diff, by_cols + [system], p1
    comp = icc(
        data, value, cluster, by=by, system=system, successes=successes, trials=trials
    )
    cols = as_columns(by, "by") + ([system] if system else [])
    return comp, cols, comp["mean"].to_numpy()


def _k_column(ks):
    return ks.astype(np.int64) if np.all(ks == np.round(ks)) else ks


def _planned_k(k, comp):
    if k is not None:
        return np.full(len(comp), check_number(k, "k", low=1, hint=" (runs per input)"))
    return np.maximum(1.0, np.round(comp["mean_k"].to_numpy()))


def _test_iv(alpha, alternative, power, k) -> None:
    """Check the test and design arguments of a ``*_from_data`` function."""
    _z_alpha(alpha, alternative)
    _z_power(power)
    if k is not None:
        check_number(k, "k", low=1, hint=" (runs per input)")


def _pilot_frame(data, value, cluster, by, system, pair, successes, trials, k):
    """The pilot's components and a frame of its groups: group columns, rho, k[, sd_diff].

    Also returns the number of group columns and the baseline accuracies.
    """
    comp, cols, p1 = _pilot(data, value, cluster, by, system, pair, successes, trials)
    ks = _planned_k(k, comp)
    out = comp[cols].reset_index(drop=True).copy()
    out["rho"] = comp["rho"].to_numpy()
    out["k"] = _k_column(ks)
    if pair is not None:
        out["sd_diff"] = np.sqrt(
            comp["sigma2_between"] + comp["sigma2_within"]
        ).to_numpy()
    return comp, out, len(cols), p1


def _per_group(out, solve):
    """``solve(i, row)`` for each group whose rho was estimated; NaN for the others."""
    res = np.full(len(out), np.nan)
    for i in range(len(out)):  # one call per group, not per input
        row = out.iloc[i]
        if np.isfinite(row["rho"]):
            res[i] = solve(i, row)
    return res


def sample_size_from_data(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    effect,
    by=None,
    system: str | None = None,
    pair=None,
    k=None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    successes: str | None = None,
    trials: str | None = None,
) -> pd.DataFrame:
    """:func:`sample_size` with accuracy, rho and k taken from a pilot table.

    Without ``pair``: for each group (``by`` x ``system``) an independent
    design with p1 = the pilot's accuracy, p2 = p1 + ``effect``, the group's
    rho (clamped) and k. With ``pair=(a, b)``: a paired design for b - a with
    ``sd_diff`` = sqrt(sigma2_between + sigma2_within) and rho of the paired
    difference (:func:`icc` with ``pairs``) and p1 = the accuracy of a.

    Parameters
    ----------
    data, value, cluster, by, system, successes, trials
        The pilot, as in :func:`icc`.
    effect : float
        The difference p2 - p1 to detect. Choose it from what matters, not
        from the pilot's observed gap (which overstates it when it was
        selected for being large).
    pair : (a, b), optional
        Two values of ``system``: plan the paired comparison b - a.
    k : int, optional
        Runs per input planned; default the pilot's mean k, rounded.
    alpha, power, alternative
        As in :func:`sample_size`.

    Returns
    -------
    pandas.DataFrame
        Group columns, ``p1, p2, rho, k`` (and ``sd_diff`` when paired), and
        ``n_inputs``: inputs per system (paired: shared inputs). NaN where
        rho could not be estimated.

    Examples
    --------
    >>> import evalci
    >>> from evalci import planning
    >>> df = evalci.load_example()
    >>> a, b = sorted(df.system.unique())
    >>> out = planning.sample_size_from_data(df, "correct", "input_id",
    ...                                      system="system", pair=(a, b),
    ...                                      effect=-0.05)
    >>> out[["p1", "p2", "rho", "k", "sd_diff", "n_inputs"]].round(3)
          p1     p2    rho  k  sd_diff  n_inputs
    0  0.676  0.626  0.408  5    0.539       481
    """
    effect = check_number(
        effect, "effect", low=-1, high=1, hint=" (a difference p2 - p1)"
    )
    _test_iv(alpha, alternative, power, k)
    comp, out, at, p1 = _pilot_frame(
        data, value, cluster, by, system, pair, successes, trials, k
    )
    out.insert(at, "p1", p1)
    out.insert(at + 1, "p2", p1 + effect)

    def one(i, row):
        if not 0 < row["p2"] < 1:
            raise ValueError(
                f"`effect`: p1 + effect = {row['p2']:.4g} is outside (0, 1) for group "
                f"{i} (p1 = {row['p1']:.4g})."
            )
        kw = dict(
            alpha=alpha,
            power=power,
            k=row["k"],
            rho=row["rho"],
            alternative=alternative,
        )
        if pair is not None:
            kw.update(paired=True, sd_diff=row["sd_diff"])
        return sample_size(row["p1"], row["p2"], **kw)

    n = _per_group(out, one)
    # nullable integers: NaN where rho could not be estimated
    out["n_inputs"] = (
        pd.array(n, dtype="Float64").astype("Int64")
        if np.isnan(n).any()
        else n.astype(np.int64)
    )
    return out


def mde_from_data(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    n_inputs=None,
    k=None,
    by=None,
    system: str | None = None,
    pair=None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    successes: str | None = None,
    trials: str | None = None,
) -> pd.DataFrame:
    """:func:`minimum_detectable_effect` with p, rho and k taken from a pilot table.

    Without ``pair``: independent design per group, baseline p = the group's
    accuracy. With ``pair=(a, b)``: paired design from the SD and rho of the
    per-run difference b - a (:func:`icc` with ``pairs``).

    Parameters
    ----------
    data, value, cluster, by, system, successes, trials
        The pilot, as in :func:`icc`.
    n_inputs : int, optional
        Inputs per system planned; default the pilot's N (what this
        benchmark can detect).
    k : int, optional
        Runs per input planned; default the pilot's mean k, rounded.
    pair : (a, b), optional
        Two values of ``system``.
    alpha, power, alternative
        As in :func:`sample_size`.

    Returns
    -------
    pandas.DataFrame
        Group columns, ``p`` (baseline accuracy), ``rho``, ``n_inputs``,
        ``k`` (and ``sd_diff`` when paired) and ``mde``.

    Examples
    --------
    >>> import evalci
    >>> from evalci import planning
    >>> df = evalci.load_example()
    >>> a, b = sorted(df.system.unique())
    >>> out = planning.mde_from_data(df, "correct", "input_id", system="system",
    ...                              pair=(a, b))
    >>> out[["p", "rho", "n_inputs", "k", "sd_diff", "mde"]].round(3)
           p    rho  n_inputs  k  sd_diff    mde
    0  0.676  0.408       198  5    0.539  0.078
    """
    _test_iv(alpha, alternative, power, k)
    if n_inputs is not None:
        n_inputs = check_integer(n_inputs, "n_inputs", low=2)
    comp, out, at, p1 = _pilot_frame(
        data, value, cluster, by, system, pair, successes, trials, k
    )
    if n_inputs is None:
        nn = comp["n_inputs"].to_numpy()
    else:
        nn = np.full(len(comp), n_inputs)
    out.insert(at, "p", p1)
    out.insert(at + 2, "n_inputs", nn)  # after rho

    def one(i, row):
        kw = dict(
            k=row["k"],
            rho=row["rho"],
            alpha=alpha,
            power=power,
            alternative=alternative,
        )
        if pair is not None:
            return minimum_detectable_effect(
                row["n_inputs"], paired=True, sd_diff=row["sd_diff"], **kw
            )
        if 0 < row["p"] < 1:
            return minimum_detectable_effect(row["n_inputs"], p=row["p"], **kw)
        return np.nan

    out["mde"] = _per_group(out, one)
    return out
