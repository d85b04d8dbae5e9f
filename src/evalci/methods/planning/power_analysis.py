"""Power and sample size for comparing the accuracy of two systems.

A design -- independent or paired inputs, runs per input, the intraclass
correlation, the test's level and sidedness -- ties together three numbers:
the inputs per system ``n``, the difference to detect (the *effect*, p2 - p1)
and the power. :func:`sample_size`, :func:`power` and
:func:`minimum_detectable_effect` each validate the design into a
:class:`~evalci.methods.planning.power_design._Design` and hand it to
:func:`~evalci.methods.planning.power_solver._solve`, which (like statsmodels'
``solve_power``) solves for whichever of the three is left as None: exactly,
for McNemar's test as :func:`evalci.mcnemar` runs it (paired, from the
discordance, one run per input; :mod:`evalci.methods.planning.mcnemar_power`), else by
the normal approximation. The ``*_from_data`` forms take accuracy, rho and k
from a pilot table (:func:`evalci.methods.variance.components.icc`, read by
:mod:`evalci.methods.planning.power_pilot`). This module holds the public functions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.validate import check_integer, check_number
from evalci.methods.planning.power_design import (
    _baseline_iv,
    _design_iv,
    _direction_iv,
    _proportion,
    _z_power,
)
from evalci.methods.planning.power_pilot import _per_group, _pilot_frame, _test_iv
from evalci.methods.planning.power_solver import _solve

__all__ = [
    "mde_from_data",
    "minimum_detectable_effect",
    "power",
    "sample_size",
    "sample_size_from_data",
]


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

    >>> import evalci
    >>> evalci.sample_size(0.80, 0.83)
    2626

    Paired on the same inputs, with the systems disagreeing on 10% of them
    (McNemar's test as :func:`evalci.mcnemar` runs it; Connor's formula for
    the uncorrected test would say 870, where mcnemar's power is 0.77):

    >>> evalci.sample_size(0.80, 0.83, paired=True, discordance=0.10)
    925
    >>> round(evalci.power(0.80, 0.83, 925, paired=True, discordance=0.10), 4)
    0.8002

    Five runs per input, intraclass correlation 0.6 (design effect 0.68):

    >>> evalci.sample_size(0.80, 0.83, k=5, rho=0.6)
    1786
    """
    p1, p2 = _proportion(p1, "p1"), _proportion(p2, "p2")
    if p1 == p2:
        raise ValueError("`p1` and `p2` are equal: there is no difference to detect.")
    design = _design_iv(
        alpha, alternative, paired, discordance, sd_diff, k, rho, p1, p2
    )
    _z_power(power)
    _direction_iv(p2 - p1, alternative)
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
    >>> import evalci
    >>> round(evalci.power(0.80, 0.83, 2626), 3)
    0.8
    >>> round(evalci.power(0.80, 0.83, 200), 3)      # seed 004's 200-item eval
    0.121
    """
    p1, p2 = _proportion(p1, "p1"), _proportion(p2, "p2")
    n = check_number(n_inputs, "n_inputs", low=0, low_open=True)
    design = _design_iv(
        alpha, alternative, paired, discordance, sd_diff, k, rho, p1, p2
    )
    n = _whole_if_exact(design, n_inputs, n)
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
    >>> import evalci
    >>> round(evalci.minimum_detectable_effect(2626, p=0.80), 4)
    0.03
    >>> round(evalci.minimum_detectable_effect(200, p=0.80), 3)  # seed 004's 200 items
    0.099

    Paired, GPQA-like (SD of the per-run difference 0.54, rho 0.41, 5 runs):

    >>> round(evalci.minimum_detectable_effect(198, paired=True, sd_diff=0.54,
    ...                                          k=5, rho=0.41), 3)
    0.078
    """
    n = check_number(n_inputs, "n_inputs", low=0, low_open=True)
    design = _design_iv(
        alpha, alternative, paired, discordance, sd_diff, k, rho, None, None
    )
    _z_power(power)
    design = _baseline_iv(design, p, sigma2)
    n = _whole_if_exact(design, n_inputs, n)
    return _solve(design, n=n, power=power)


def _whole_if_exact(design, n_inputs, n):
    """``n_inputs`` as a whole number for McNemar's exact design, else ``n`` as is."""
    if design.exact:
        return check_integer(
            n_inputs, "n_inputs", hint=" (McNemar: whole paired inputs)"
        )
    return n


# ----------------------------------------------------------- from a pilot table
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
    >>> import evalci
    >>> df = evalci.load_example()
    >>> a, b = sorted(df.system.unique())
    >>> out = evalci.sample_size_from_data(df, "correct", "input_id",
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
    >>> import evalci
    >>> df = evalci.load_example()
    >>> a, b = sorted(df.system.unique())
    >>> out = evalci.mde_from_data(df, "correct", "input_id", system="system",
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
