"""Array formulas of the closed-form intervals: no frames, no validation.

The binomial intervals (Wilson, Clopper-Pearson, Jeffreys, Wald), the
one-sided rule of three, the clustered (Korn-Graubard) Wilson interval, the
Fleiss-Cohen-Everitt standard error of Cohen's kappa and the cluster-robust
(CLT) mean and standard error, each vectorised over groups. The functions on
tables are :func:`evalci.analytic_ci` (:mod:`evalci.methods.analytic.intervals`),
:func:`evalci.mcnemar` and :func:`evalci.run_level_ci`.
"""

from __future__ import annotations

import numpy as np


def _z(confidence_level: float) -> float:
    from scipy import stats  # slow to import: only when used

    return float(stats.norm.ppf(0.5 + confidence_level / 2))


def _rule_of_three(n, confidence_level: float) -> np.ndarray:
    """ONE-sided upper bound on a rate after 0 events in ``n`` trials.

    ``-ln(alpha) / n`` with ``alpha = 1 - confidence_level``: 2.996/n, "3/n",
    at 95% (Hanley & Lippman-Hand 1983). It approximates the exact one-sided
    Clopper-Pearson bound ``1 - alpha**(1/n)`` from above, so it is slightly
    conservative. Capped at 1. Only ``method="rule-of-three"`` returns it,
    labelled one-sided: used as a two-sided 95% interval (as evalci once did
    at 0/n and n/n) it drops the exact minimum coverage to 93.9-94.2% for
    n = 20..1000, because its upper tail alone has probability 5%.
    """
    alpha = 1.0 - confidence_level
    return np.minimum(-np.log(alpha) / np.asarray(n, dtype=float), 1.0)


def _clopper_pearson(x, n, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided Clopper-Pearson interval, vectorised over groups.

    Beta quantiles (Clopper & Pearson 1934; statsmodels' ``method="beta"``):
    ``low = Beta(x, n - x + 1).ppf(alpha / 2)``, ``high = Beta(x + 1, n - x)
    .ppf(1 - alpha / 2)``, with ``low = 0`` at x = 0 and ``high = 1`` at
    x = n. At the boundary this is the exact two-sided endpoint, e.g. at
    x = 0 ``high = 1 - (alpha / 2)**(1/n)`` (3.689/n at 95%), not the
    one-sided rule of three: the minimum coverage stays >= the nominal level.
    """
    from scipy import stats  # slow to import: only when used

    x = np.asarray(x, dtype=float)
    n = np.asarray(n, dtype=float)
    alpha = 1.0 - confidence_level
    with np.errstate(invalid="ignore"):
        low = stats.beta.ppf(alpha / 2, x, n - x + 1)
        high = stats.beta.ppf(1 - alpha / 2, x + 1, n - x)
    return np.where(x == 0, 0.0, low), np.where(x == n, 1.0, high)


def _wilson(x, n, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval, vectorised (Wilson 1927; Newcombe 1998 form).

    ``(x + z^2/2) / (n + z^2) +/- z sqrt(x (n - x) / n + z^2/4) / (n + z^2)``,
    with ``low = 0`` at x = 0 and ``high = 1`` at x = n (as scipy and
    statsmodels). At the boundary Wilson's own formula is kept rather than
    replaced: it does not collapse there (at x = 0 it gives ``[0, z^2 / (n +
    z^2)]``, 3.84/n at 95%, next to the exact two-sided 3.689/n), it is what
    "Wilson" means in statsmodels, R's ``prop.test(correct=FALSE)`` and scipy,
    and a patch at x = 0 would not cure Wilson's known coverage dip near
    p = 0.1/n, which comes from x = 1 (Brown, Cai & DasGupta 2001, sec. 4.1.1).
    """
    x = np.asarray(x, dtype=float)
    n = np.asarray(n, dtype=float)
    z = _z(confidence_level)
    z2 = z * z
    center = (x + z2 / 2) / (n + z2)
    half = z * np.sqrt(np.maximum(x * (n - x) / n + z2 / 4, 0.0)) / (n + z2)
    low = np.where(x == 0, 0.0, np.maximum(center - half, 0.0))
    high = np.where(x == n, 1.0, np.minimum(center + half, 1.0))
    return low, high


def _jeffreys(x, n, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed Jeffreys interval: Beta(x + 1/2, n - x + 1/2) quantiles.

    Brown, Cai & DasGupta (2001, sec. 4.1.2): the lower end is 0 when x = 0
    and the upper end 1 when x = n, so coverage does not drop to 0 near the
    boundaries.
    """
    from scipy import stats  # slow to import: only when used

    x = np.asarray(x, dtype=float)
    n = np.asarray(n, dtype=float)
    alpha = 1.0 - confidence_level
    low = stats.beta.ppf(alpha / 2, x + 0.5, n - x + 0.5)
    high = stats.beta.ppf(1 - alpha / 2, x + 0.5, n - x + 0.5)
    return np.where(x == 0, 0.0, low), np.where(x == n, 1.0, high)


def _korn_graubard_wilson(
    p, var, n, n_clusters, confidence_level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Wilson interval at the Korn-Graubard effective sample size (clustered 0/1 data).

    Korn & Graubard (1998): with the design effect ``deff = var / (p (1 - p)
    / n)`` of a clustered proportion, use ``n_eff = n / deff = p (1 - p) /
    var`` observations and ``x_eff = p n_eff`` successes in a binomial
    interval. Here ``var`` is the cluster-robust variance of ``p`` over
    inputs (``method="clt"``'s SE squared) and ``n`` the number of rows. As
    Inspect AI's ``ci_wilson(cluster=...)`` (``inspect_ai/scorer/_metrics/
    std.py``, v0.3.285):

    * ``n_eff`` is capped at ``n``, so negative within-input correlation
      never makes the interval narrower than Wilson on pooled rows;
    * ``var = 0`` with ``0 < p < 1`` (every input has the same mean) uses
      ``n_eff = n``;
    * the critical value is Student's t with ``n_clusters - 1`` degrees of
      freedom instead of z. Wilson's formula depends on (z, n) only through
      ``z^2 / n``, so this is Wilson at Korn & Graubard's
      degrees-of-freedom-adjusted ``n_eff (z / t)^2`` (their eq. for
      ``n*_eff``; Franco et al. 2019 recommend this version).

    One deliberate difference from Inspect AI: at ``p = 0`` or ``p = 1``
    (``deff`` is 0/0) Inspect falls back to ``n`` rows, which treats k
    identical runs as k independent trials; here ``n_eff = n_clusters``: the
    first run of each input alone is ``n_clusters`` independent 0/1 outcomes
    with the same mean, all 0 (or all 1), so the interval stays valid at any
    within-input correlation. Returns ``(low, high, n_eff)``.
    """
    from scipy import stats  # slow to import: only when used

    p = np.asarray(p, dtype=float)
    var = np.asarray(var, dtype=float)
    n = np.asarray(n, dtype=float)
    n_clusters = np.asarray(n_clusters, dtype=float)
    num = p * (1.0 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(
            num > 0, np.where(var > 0, np.minimum(num / var, n), n), n_clusters
        )
    crit = stats.t.ppf(0.5 + confidence_level / 2, n_clusters - 1)
    c2 = crit * crit
    denom = 1.0 + c2 / n_eff
    center = (p + c2 / (2.0 * n_eff)) / denom
    half = crit * np.sqrt(num / n_eff + c2 / (4.0 * n_eff * n_eff)) / denom
    low = np.where(p == 0, 0.0, np.maximum(center - half, 0.0))
    high = np.where(p == 1, 1.0, np.minimum(center + half, 1.0))
    return low, high, n_eff


def _proportion_interval(x, n, method: str, confidence_level: float):
    """Binomial interval for ``x`` successes in ``n`` trials (arrays of shape (G,)).

    Every method uses its own formula at x = 0 and x = n; the Wald interval
    is clipped to [0, 1] (as statsmodels does) and collapses there, which
    :func:`analytic_ci` handles.
    """
    x = np.asarray(x, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    if method == "jeffreys":
        return _jeffreys(x, n, confidence_level)
    if method == "clopper-pearson":
        return _clopper_pearson(x, n, confidence_level)
    if method == "wilson":
        return _wilson(x, n, confidence_level)
    p = x / n
    half = _z(confidence_level) * np.sqrt(p * (1 - p) / n)
    return np.clip(p - half, 0, 1), np.clip(p + half, 0, 1)


def _kappa_fce(table) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa and its Fleiss-Cohen-Everitt large-sample standard error.

    ``table`` has shape ``(..., C, C)`` (rows = true label, columns =
    predicted; kappa and its SE are symmetric in the two). With cell
    proportions ``p_ij``, margins ``p_i.``, ``p_.j``, ``p_o = sum p_ii`` and
    ``p_e = sum p_i. p_.i``, Fleiss, Cohen & Everitt (1969) give

        Var = [ sum_i p_ii (1 - (p_i. + p_.i)(1 - kappa))^2
                + (1 - kappa)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
                - (kappa - p_e (1 - kappa))^2 ] / (N (1 - p_e)^2).

    Returns NaN for both when ``p_e = 1`` (one label on both sides: kappa is
    0/0).
    """
    t = np.asarray(table, dtype=float)
    n = t.sum(axis=(-2, -1))
    p = t / n[..., None, None]
    row = p.sum(axis=-1)  # p_i.
    col = p.sum(axis=-2)  # p_.j
    diag = np.diagonal(p, axis1=-2, axis2=-1)
    p_o = diag.sum(axis=-1)
    p_e = (row * col).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (p_o - p_e) / (1 - p_e)
        one_minus = (1 - kappa)[..., None]
        term_a = (diag * (1 - (row + col) * one_minus) ** 2).sum(axis=-1)
        # [i, j] -> (p_.i + p_j.)^2, the off-diagonal weights
        w = (col[..., :, None] + row[..., None, :]) ** 2
        off = p * w
        off_sum = off.sum(axis=(-2, -1)) - np.diagonal(off, axis1=-2, axis2=-1).sum(
            axis=-1
        )
        term_b = (1 - kappa) ** 2 * off_sum
        term_c = (kappa - p_e * (1 - kappa)) ** 2
        var = (term_a + term_b - term_c) / ((1 - p_e) ** 2 * n)
    # rounding can leave -1e-18 at kappa = 1
    se = np.sqrt(np.where(np.isnan(var), np.nan, np.maximum(var, 0.0)))
    return kappa, se


def _clt(cell_sum, k, cell_group, n_inputs, weight):
    """Estimate and cluster-robust SE per group from per-input sums.

    ``weight="input"``: mean of per-input means, ``SE = s / sqrt(N)`` with
    ``s`` the ``ddof=1`` SD of those means (seed 000). ``weight="run"``: ratio
    estimator ``sum y / sum k`` with the sandwich variance
    ``N/(N-1) sum_i (T_i - est k_i)^2 / K^2`` (Miller 2024, clustered SEs).
    """
    n_groups = len(n_inputs)
    n = n_inputs.astype(float)
    if weight == "input":
        m = cell_sum / k
        est = np.bincount(cell_group, weights=m, minlength=n_groups) / n
        ss = np.bincount(
            cell_group, weights=(m - est[cell_group]) ** 2, minlength=n_groups
        )
        se = np.sqrt(ss / (n - 1) / n)
    else:
        total_k = np.bincount(cell_group, weights=k, minlength=n_groups)
        est = np.bincount(cell_group, weights=cell_sum, minlength=n_groups) / total_k
        resid = cell_sum - est[cell_group] * k
        ss = np.bincount(cell_group, weights=resid**2, minlength=n_groups)
        se = np.sqrt(n / (n - 1) * ss) / total_k
    return est, se
