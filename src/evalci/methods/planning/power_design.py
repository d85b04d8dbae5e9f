"""The design of a comparison of two systems, validated: all but n, effect, power.

A :class:`_Design` holds what :func:`evalci.methods.planning.power_solver._solve`
needs besides the number of inputs, the difference and the power: the test
(level, sidedness, quantile), the design effect rho + (1 - rho) / k of k runs
per input, and the pairing (discordance or SD of the paired difference).
The checks here give the public functions of :mod:`evalci.methods.planning.power_analysis`
their error messages.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from evalci._base.validate import check_number, check_option

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


def _design_iv(alpha, alternative, paired, discordance, sd_diff, k, rho, p1, p2):
    """The design: level and sidedness (``za``), paired arguments, discordance
    vs p1, p2, design effect."""
    za = _z_alpha(alpha, alternative)
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
