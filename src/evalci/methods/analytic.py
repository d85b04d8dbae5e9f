"""Closed-form intervals and McNemar's test: no resampling.

Seed 000 ("Use a normal approximation instead?") found the cluster-robust
normal interval a wash with the cluster bootstrap for mean accuracy (N=200,
k=5: 94.7% vs 95.2% coverage, widths 0.0594 vs 0.0592), and the
Fleiss-Cohen-Everitt normal interval for Cohen's kappa as good as the IID
bootstrap at k=1. This module gives those intervals, the classic binomial
intervals for k=1 proportions (seed 004: Wilson for small n or extreme p),
the one-sided rule of three for all-correct or all-wrong results, and
McNemar's paired test. The bootstrap (:func:`evalci.cluster_ci`) remains the general tool:
other metrics, skewed scores, paired gaps at k > 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.typing import WEIGHTS
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
    check_level,
    check_name,
    check_no_missing,
    check_option,
)
from evalci._base.warnings import (
    FEW_INPUTS,
    DegenerateDataWarning,
    FewClustersWarning,
    warn,
)
from evalci.engine.cube import factorize, value_codes
from evalci.engine.cube import group_codes as group_codes_of
from evalci.engine.results import _GroupedResult

__all__ = [
    "AnalyticResult",
    "McNemarResult",
    "analytic_ci",
    "mcnemar",
    "run_level_ci",
]

#: Canonical method names of :func:`analytic_ci`.
ANALYTIC_METHODS: tuple[str, ...] = (
    "clt",
    "wilson",
    "clopper-pearson",
    "jeffreys",
    "wald",
    "fleiss-cohen-everitt",
    "rule-of-three",
    "clustered-wilson",
)
_ALIASES = {
    "exact": "clopper-pearson",
    "fce": "fleiss-cohen-everitt",
    "wilson-clustered": "clustered-wilson",
}
# methods that use the cluster-robust variance over inputs (any k, N >= 2)
_CLUSTERED_METHODS = ("clt", "clustered-wilson")
_PROPORTION_METHODS = ("wilson", "clopper-pearson", "jeffreys", "wald")
# large-sample (normal) intervals: unreliable with fewer than FEW_INPUTS inputs
_NORMAL_METHODS = ("clt", "wald", "fleiss-cohen-everitt")
# intervals that collapse to a point when every outcome is 0 (or 1)
_COLLAPSING_METHODS = ("clt", "wald")
_FIELDS = (
    "estimate",
    "low",
    "high",
    "standard_error",
    "n_inputs",
    "n_runs",
    "rule_of_three",
)
# the exact McNemar test is used below this many discordant inputs (exact=None)
MCNEMAR_EXACT_BELOW = 25


# --------------------------------------------------------------------- results
@dataclass(frozen=True, repr=False)
class AnalyticResult(_GroupedResult):
    """A closed-form confidence interval (one per group when ``by`` was given).

    Attributes
    ----------
    estimate, low, high, standard_error : float or pandas.Series
        Point estimate, interval endpoints and standard error. Floats without
        ``by``; Series indexed by group with ``by``. For the binomial methods
        the standard error is the plug-in ``sqrt(p (1 - p) / N)``, reported for
        reference: only ``"wald"`` builds its interval from it. For
        ``"clt"`` and ``"clustered-wilson"`` it is the cluster-robust SE
        over inputs.
    n_inputs, n_runs : int or pandas.Series
        Number of inputs (clusters) and of rows (runs) behind each estimate.
    rule_of_three : bool or pandas.Series
        Whether the interval is the *one-sided* rule-of-three bound
        (``method="rule-of-three"``): ``[0, high]`` is a one-sided upper
        bound after every outcome was 0, ``[low, 1]`` a one-sided lower bound
        after every outcome was 1. It is never returned as a two-sided
        interval. See also :attr:`one_sided`.
    method : str
        Canonical method name (aliases resolved): ``"clt"``, ``"wilson"``,
        ``"clopper-pearson"``, ``"jeffreys"``, ``"wald"``,
        ``"fleiss-cohen-everitt"``, ``"rule-of-three"`` or
        ``"clustered-wilson"``.
    confidence_level : float
        Two-sided level, except for ``"rule-of-three"`` where it is the level
        of the one-sided bound.
    weight : str
        ``"input"`` (each input counts equally) or ``"run"`` (runs pooled);
        only ``"clt"`` and ``"clustered-wilson"`` can differ between the two
        (with unequal k).
    groups : pandas.Index or None
        The groups (one per ``by`` value; a MultiIndex for several ``by``
        columns) that index each per-group Series; None without ``by``.
    """

    estimate: object
    low: object
    high: object
    standard_error: object
    n_inputs: object
    n_runs: object
    method: str
    confidence_level: float
    weight: str
    rule_of_three: object = False
    groups: pd.Index | None = field(default=None, repr=False)

    _PER_GROUP = _FIELDS
    _SETTINGS = ("confidence_level", "method", "weight")

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: one row per group (group columns first).

        Examples
        --------
        >>> import pandas as pd
        >>> from evalci.analytic import analytic_ci
        >>> df = pd.DataFrame({"correct": [1] * 160 + [0] * 40})
        >>> frame = analytic_ci(df, "correct", method="wilson").to_frame()
        >>> frame[["estimate", "low", "high", "n_inputs", "method"]].round(3)
           estimate    low  high  n_inputs  method
        0       0.8  0.739  0.85       200  wilson
        """
        frame = pd.DataFrame(
            {name: np.atleast_1d(np.asarray(getattr(self, name))) for name in _FIELDS}
        )
        frame["confidence_level"] = self.confidence_level
        frame["method"] = self.method
        frame["weight"] = self.weight
        return self._with_groups(frame)

    @property
    def one_sided(self) -> bool:
        """True for the one-sided rule-of-three bound, False for two-sided intervals."""
        return self.method == "rule-of-three"

    def _header(self) -> str:
        if self.one_sided:
            return f"{self.confidence_level:.0%} one-sided rule-of-three bound"
        clustered = self.method in _CLUSTERED_METHODS
        weight = f", weight={self.weight}" if clustered else ""
        return f"{self.confidence_level:.0%} {self.method} interval{weight}"

    def _scalar_repr(self) -> str:
        sided = ", one_sided=True" if self.one_sided else ""
        return (
            f"AnalyticResult(estimate={self.estimate:.4g}, low={self.low:.4g}, "
            f"high={self.high:.4g}, standard_error={self.standard_error:.3g}, "
            f"n_inputs={self.n_inputs}, n_runs={self.n_runs}, "
            f"method={self.method!r}, confidence_level={self.confidence_level}, "
            f"rule_of_three={self.rule_of_three}{sided})"
        )


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test of two systems scored 0/1 on the same inputs (k=1).

    Attributes
    ----------
    statistic : float
        ``"chi-squared"``: ``(|n01 - n10| - 1)**2 / (n01 + n10)``;
        ``"exact"``: ``min(n01, n10)`` (statsmodels' convention).
    pvalue : float
        Two-sided p-value.
    n01, n10 : int
        Discordant inputs: ``n01`` where ``a`` is wrong and ``b`` right,
        ``n10`` where ``a`` is right and ``b`` wrong.
    n_inputs : int
        Inputs scored by both systems.
    method : {'exact', 'chi-squared'}
        How ``pvalue`` was computed: the exact binomial test on the
        discordant inputs, or the continuity-corrected chi-squared statistic.
    a, b : object
        The two systems (values of the ``system`` column).
    """

    statistic: float
    pvalue: float
    n01: int
    n10: int
    n_inputs: int
    method: str
    a: object
    b: object

    @property
    def difference(self) -> float:
        """Accuracy of ``b`` minus accuracy of ``a``: ``(n01 - n10) / n_inputs``."""
        return (self.n01 - self.n10) / self.n_inputs

    def __repr__(self) -> str:
        return (
            f"McNemarResult(statistic={self.statistic:.4g}, pvalue={self.pvalue:.4g}, "
            f"n01={self.n01}, n10={self.n10}, n_inputs={self.n_inputs}, "
            f"method={self.method!r}, a={_show(self.a)}, b={_show(self.b)})"
        )


# ----------------------------------------------------------- exposed kernels
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


# ---------------------------------------------------------- input validation
@dataclass(frozen=True)
class _Args:
    value: str
    cluster: list[str]
    by: list[str]
    method: str
    confidence_level: float
    truth: str | None
    weight: str


#: how :func:`check_frame` tells analytic_ci and mcnemar callers to get a DataFrame
_FRAME_HINT = "for xarray objects convert first with da.evalci.to_frame()"


def _analytic_iv(
    data, value, cluster, method, by, confidence_level, truth, weight
) -> _Args:
    """Validate and normalise the arguments of :func:`analytic_ci`."""
    check_frame(data, _FRAME_HINT)
    canonical = _ALIASES.get(method, method) if isinstance(method, str) else method
    check_option(
        canonical,
        "method",
        ANALYTIC_METHODS,
        describe=f"one of {ANALYTIC_METHODS} (aliases: 'exact' for "
        "'clopper-pearson', 'fce' for 'fleiss-cohen-everitt')",
    )
    check_option(
        weight,
        "weight",
        WEIGHTS,
        describe="'input' (each input counts equally) or 'run' (pool runs)",
    )
    level = check_level(confidence_level)
    check_name(value, "value")
    cluster = as_columns(cluster, "cluster")
    by = as_columns(by, "by")
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, by, "by")
    if canonical == "fleiss-cohen-everitt":
        if truth is None:
            raise ValueError(
                "`truth` is required for method='fleiss-cohen-everitt' (Cohen's "
                "kappa): name the column of true labels; `value` holds the predicted "
                "labels."
            )
        check_name(truth, "truth")
        check_columns(data, [truth], "truth")
    elif truth is not None:
        raise ValueError(
            f"`truth` is only used by method='fleiss-cohen-everitt' (Cohen's kappa), "
            f"not method={canonical!r}; for accuracy score the labels first, e.g. "
            f"correct = (df[{value!r}] == df[{truth!r}]).astype(int)."
        )
    overlap = set(cluster) & set(by)
    if overlap:
        raise ValueError(
            f"`by` and `cluster` share column {sorted(overlap)[0]!r}: one interval per "
            "input is not an interval over inputs; group by a column that spans "
            "several inputs."
        )
    return _Args(
        value=value,
        cluster=cluster,
        by=by,
        method=canonical,
        confidence_level=level,
        truth=truth,
        weight=weight,
    )


def _no_missing(frame: pd.DataFrame, col: str, name: str, hint: str) -> None:
    fix = f"drop those rows (data.dropna(subset=[{col!r}])) or {hint}"
    check_no_missing(frame, col, name, fix)


def _show(v) -> str:
    """repr of a key or value without numpy's scalar wrapper (np.int64(3) -> 3)."""
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ")"
    return repr(v.item() if isinstance(v, np.generic) else v)


def _where(groups, g) -> str:
    return "" if groups is None else f" in group {_show(groups[g])}"


def _numeric_values(frame: pd.DataFrame, args: _Args) -> np.ndarray:
    y = frame[args.value]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(
            f"`value` column {args.value!r} is not numeric (dtype {y.dtype}); "
            f"method={args.method!r} needs numbers. For predicted labels use "
            "method='fleiss-cohen-everitt' with truth=..., or score them first, e.g. "
            "(df.pred == df.label).astype(int)."
        )
    if args.method in (*_PROPORTION_METHODS, "rule-of-three", "clustered-wilson"):
        bad = ~y.isin([0, 1])
        if bad.any():
            raise ValueError(
                f"`value` column {args.value!r} must hold only 0/1 for "
                f"method={args.method!r} (a binomial proportion); found "
                f"{_show(y[bad].iloc[0])} in {int(bad.sum())} rows. For scores use "
                "method='clt'."
            )
    return y.to_numpy(dtype=float)


# ------------------------------------------------------------------ analytic
def analytic_ci(
    data: pd.DataFrame,
    value: str,
    cluster=None,
    *,
    method: str = "clt",
    by=None,
    confidence_level: float = 0.95,
    truth: str | None = None,
    weight: str = "input",
) -> AnalyticResult:
    """Closed-form confidence interval of a mean score, a proportion or kappa.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, group]). Never modified.
    value : str
        Column with the outcome: 0/1 correctness, a numeric score
        (``"clt"`` only), or predicted labels (``"fleiss-cohen-everitt"``).
    cluster : str or list of str, optional
        Column(s) identifying the input; rows sharing a key (within a group)
        are that input's runs. ``None``: every row is its own input (k=1).
    method : str
        ``"clt"`` (default)
            Cluster-robust normal interval for a mean over inputs x runs, any
            k (seed 000, "Use a normal approximation instead?"). With
            ``weight="input"`` the estimate is the mean of the per-input means
            and ``SE = s / sqrt(N)``, ``s`` the SD (``ddof=1``) of the N
            per-input means. With ``weight="run"`` it is the ratio estimator
            ``sum(y) / sum(k)`` with the cluster-robust (sandwich) SE of
            Miller (2024, "Clustered standard errors"),
            ``SE^2 = N/(N-1) * sum_i (sum_j y_ij - est * k_i)^2 / (sum_i k_i)^2``,
            whose ``N/(N-1)`` factor (as in Stata's ``vce(cluster)``) makes the
            two weights agree when k is constant. Not clipped to the range of
            the data.
        ``"wilson"``, ``"clopper-pearson"`` (alias ``"exact"``), ``"jeffreys"``, ``"wald"``
            Binomial intervals for 0/1 outcomes with one row per input (k=1),
            each with its own formula at 0/N and N/N (the values of
            statsmodels' ``proportion_confint``). Clopper-Pearson is the exact
            interval from Beta quantiles; at 0/N its upper end is the exact
            two-sided ``1 - (alpha/2)^(1/N)`` (3.689/N at 95%), so its
            coverage is never below the nominal level. Wilson is the score
            interval (at 0/N ``[0, z^2 / (N + z^2)]``, about 3.84/N); Jeffreys
            the equal-tailed Beta(x + 1/2, n - x + 1/2) interval with Brown,
            Cai & DasGupta's endpoint conventions; Wald is ``p +/- z sqrt(p
            (1 - p) / N)`` clipped to [0, 1] (unreliable for small N or
            extreme p: seed 004 prefers Wilson).
        ``"fleiss-cohen-everitt"`` (alias ``"fce"``)
            Cohen's kappa of ``value`` (predicted labels) against ``truth``
            with the large-sample SE of Fleiss, Cohen & Everitt (1969); normal
            interval, k=1 only (no extension to k > 1 is known; seed 000).
        ``"clustered-wilson"`` (alias ``"wilson-clustered"``)
            Wilson's score interval for 0/1 outcomes with k >= 1 runs per
            input, at the Korn & Graubard (1998) effective sample size:
            ``n_eff = n / deff = p (1 - p) / V``, ``V`` the cluster-robust
            variance of the estimate over inputs (``"clt"``'s SE squared),
            ``n`` the number of rows, ``x_eff = p n_eff``, and Student's t
            with N - 1 degrees of freedom in place of z -- the convention of
            Inspect AI's ``ci_wilson(cluster=...)``. ``n_eff`` is capped at
            ``n`` (never narrower than Wilson on pooled rows); where ``V = 0``
            with ``0 < p < 1`` it is ``n``. At 0/n and n/n (``deff`` is 0/0)
            ``n_eff = N`` inputs, not Inspect AI's ``n`` rows: valid for any
            within-input correlation. Stays inside [0, 1] where ``"clt"``
            need not; ``standard_error`` is the cluster-robust SE, so
            ``n_eff = min(p (1 - p) / standard_error**2, n_runs)``.
    ``"rule-of-three"``
            A **one-sided** bound, not an interval, for groups where every
            outcome is 0 (or every one is 1): the upper bound ``[0, b]`` after
            0 successes, the lower bound ``[1 - b, 1]`` after 0 failures, with
            ``b = -ln(alpha) / N``, ``alpha = 1 - confidence_level`` and N
            inputs (2.996/N, "3/N", at 95%; capped at 1; Hanley &
            Lippman-Hand 1983). ``confidence_level`` is then one-sided:
            "accuracy >= 1 - b with 95% confidence". Any k (N counts inputs).
            A group whose outcomes vary raises ``ValueError``. The result says
            ``one_sided=True`` and ``rule_of_three=True``.
    by : str or list of str, optional
        Column(s) to group by (e.g. ``"system"``): one interval per group.
    confidence_level : float
        Two-sided level, e.g. 0.95 (one-sided for ``"rule-of-three"``).
    truth : str, optional
        Column of true labels; required by, and only used by,
        ``"fleiss-cohen-everitt"``.
    weight : {'input', 'run'}
        ``"input"``: each input counts equally (seed 000's estimand: the
        expected score of one call on a random input); ``"run"``: runs are
        pooled. Matters only for ``"clt"`` with unequal k.

    Returns
    -------
    AnalyticResult

    Warns
    -----
    DegenerateDataWarning
        When every outcome of a group is 1 (or every one is 0) with
        ``"clt"`` or ``"wald"``, whose interval would have zero width: the
        exact two-sided Clopper-Pearson interval for N inputs is returned
        instead, ``[0, 1 - (alpha/2)^(1/N)]`` or ``[(alpha/2)^(1/N), 1]``
        (valid for any k: the first run of each input alone is N independent
        outcomes, all 0 or all 1). The binomial methods need no replacement.
        Also when a standard error is zero for another reason (identical
        per-input means, perfect agreement) or kappa is undefined (a single
        label on both sides: the result is NaN).
    FewClustersWarning
        When a group has fewer than 10 inputs (``evalci._warnings.FEW_INPUTS``)
        with a large-sample normal interval (``"clt"``, ``"wald"``,
        ``"fleiss-cohen-everitt"``): its coverage is then unreliable. The
        exact and score intervals (Clopper-Pearson, Wilson, Jeffreys) are
        built for small N and do not warn.

    Raises
    ------
    ValueError
        On misuse: k > 1 rows per input with a k=1 method, non-0/1 values
        with a binomial method or ``"rule-of-three"``, outcomes that vary
        with ``"rule-of-three"``, fewer than 2 inputs with ``"clt"`` or
        ``"clustered-wilson"``, missing
        or infinite values, unknown columns or options.

    See Also
    --------
    evalci.cluster_ci : the cluster bootstrap, for any metric and any k.
    mcnemar : paired test of two systems at k=1.

    References
    ----------
    Brown, L. D., Cai, T. T., & DasGupta, A. (2001). Interval estimation for a
    binomial proportion. Statistical Science 16(2), 101-133.
    Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial
    limits illustrated in the case of the binomial. Biometrika 26(4), 404-413.
    Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
    errors of kappa and weighted kappa. Psychological Bulletin 72(5), 323-327.
    Franco, C., Little, R. J. A., Louis, T. A., & Slud, E. V. (2019).
    Comparative study of confidence intervals for proportions in complex
    sample surveys. Journal of Survey Statistics and Methodology 7(3),
    334-364.
    Hanley, J. A., & Lippman-Hand, A. (1983). If nothing goes wrong, is
    everything all right? JAMA 249(13), 1743-1745.
    Korn, E. L., & Graubard, B. I. (1998). Confidence intervals for
    proportions with small expected number of positive counts estimated from
    survey data. Survey Methodology 24(2), 193-201.
    Miller, E. (2024). Adding error bars to evals: a statistical approach to
    language model evaluations. arXiv:2411.00640.
    Wilson, E. B. (1927). Probable inference, the law of succession, and
    statistical inference. JASA 22(158), 209-212.

    Examples
    --------
    Seed 004's worked example, 160 correct out of 200:

    >>> import pandas as pd
    >>> from evalci.analytic import analytic_ci
    >>> df = pd.DataFrame({"correct": [1] * 160 + [0] * 40})
    >>> r = analytic_ci(df, "correct", method="wilson")
    >>> round(r.low, 3), round(r.high, 3)
    (0.739, 0.85)

    The cluster-robust normal interval per system on 198 inputs x 5 runs:

    >>> import evalci
    >>> gpqa = evalci.load_example()
    >>> analytic_ci(gpqa, "correct", cluster="input_id", by="system")
    AnalyticResult: 95% clt interval, weight=input
                            system  estimate    low   high  standard_error  n_inputs  n_runs  rule_of_three
      openai/gpt-5-nano-2025-08-07    0.6758 0.6217 0.7298          0.0276       198     990          False
    openai/gpt-5.4-mini-2026-03-17    0.6172 0.5591 0.6752         0.02962       198     990          False

    The clustered Wilson interval on the same data: 990 rows count as about
    290 independent ones (``n_eff = p (1 - p) / SE^2``, a design effect of
    about 3.4):

    >>> r = analytic_ci(gpqa, "correct", cluster="input_id", by="system",
    ...                 method="clustered-wilson")
    >>> r.to_frame()[["low", "high"]].round(4)
          low    high
    0  0.6193  0.7275
    1  0.5575  0.6735
    >>> (r.estimate * (1 - r.estimate) / r.standard_error**2).round(0).tolist()
    [288.0, 269.0]

    With every answer right, Clopper-Pearson gives the exact two-sided
    interval; the rule of three is the one-sided statement "accuracy >= 97%":

    >>> perfect = pd.DataFrame({"correct": [1] * 100})
    >>> r = analytic_ci(perfect, "correct", method="clopper-pearson")
    >>> round(r.low, 4), r.high
    (0.9638, 1.0)
    >>> r = analytic_ci(perfect, "correct", method="rule-of-three")
    >>> r.one_sided, round(r.low, 4), r.high
    (True, 0.97, 1.0)
    """
    args = _analytic_iv(
        data, value, cluster, method, by, confidence_level, truth, weight
    )
    y = _outcome_iv(data, args)
    cells = _cells(data, args)
    _cells_iv(cells, args)
    if args.method == "fleiss-cohen-everitt":
        estimate, se, low, high = _kappa_interval(data, args, cells)
        rot = np.zeros(cells.n_groups, dtype=bool)
        boundary = np.zeros(cells.n_groups, dtype=bool)
    else:
        estimate, se, low, high, rot, boundary = _mean_interval(y, args, cells)
    _warn_analytic(args.method, se, estimate, boundary, cells.n_inputs, cells.groups)
    return AnalyticResult._from_arrays(
        groups=cells.groups,
        estimate=estimate,
        low=low,
        high=high,
        standard_error=se,
        n_inputs=cells.n_inputs,
        n_runs=cells.n_runs,
        rule_of_three=rot,
        method=args.method,
        confidence_level=args.confidence_level,
        weight=args.weight,
    )


def _outcome_iv(frame: pd.DataFrame, args: _Args):
    """Refuse empty tables and missing or infinite outcomes; the values (None for kappa)."""
    if len(frame) == 0:
        raise ValueError("`data` has no rows.")
    _no_missing(
        frame, args.value, "value", "fill them (e.g. count a missing answer as 0)"
    )
    check_finite(frame, [args.value], "value")
    if args.method == "fleiss-cohen-everitt":
        _no_missing(frame, args.truth, "truth", "fill them")
        check_finite(frame, [args.truth], "truth")
        return None
    return _numeric_values(frame, args)


@dataclass(frozen=True)
class _Cells:
    """Rows in canonical order, in one cell per (group, input)."""

    order: np.ndarray  # canonical position -> row of the table
    group_codes: np.ndarray  # per row, in canonical order
    cluster_codes: np.ndarray
    cluster_keys: pd.Index
    groups: pd.Index | None
    starts: np.ndarray  # first row of each cell
    k: np.ndarray  # rows of each cell
    cell_group: np.ndarray  # group of each cell
    n_inputs: np.ndarray  # per group
    n_runs: np.ndarray

    @property
    def n_groups(self) -> int:
        return len(self.n_inputs)


def _cells(frame: pd.DataFrame, args: _Args) -> _Cells:
    """Group and input codes in the order (group, input, value[, truth])."""
    group_codes, groups, n_groups = group_codes_of(frame, args.by)
    if args.cluster:
        cluster_codes, cluster_keys = factorize(frame, args.cluster, "cluster")
    else:
        cluster_codes = np.arange(len(frame), dtype=np.int64)
        cluster_keys = pd.RangeIndex(len(frame), name="row")
    # canonical order (group, input, value[, truth]): sums do not depend on row order
    keys = [value_codes(frame[args.value])]
    if args.method == "fleiss-cohen-everitt":
        keys.insert(0, value_codes(frame[args.truth]))
    order = np.lexsort((*keys, cluster_codes, group_codes))
    group_codes = group_codes[order]
    cluster_codes = cluster_codes[order]
    # one cell per (group, input); rows of a cell are contiguous
    cell = group_codes * len(cluster_keys) + cluster_codes
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    cell_group = group_codes[starts]
    return _Cells(
        order=order,
        group_codes=group_codes,
        cluster_codes=cluster_codes,
        cluster_keys=cluster_keys,
        groups=groups,
        starts=starts,
        k=np.diff(np.r_[starts, len(cell)]),
        cell_group=cell_group,
        n_inputs=np.bincount(cell_group, minlength=n_groups),
        n_runs=np.bincount(group_codes, minlength=n_groups),
    )


def _cells_iv(c: _Cells, args: _Args) -> None:
    """Refuse k > 1 rows per input for the k=1 methods and < 2 inputs for clt."""
    k, groups = c.k, c.groups
    if args.method not in (*_CLUSTERED_METHODS, "rule-of-three") and (k > 1).any():
        bad = int(np.argmax(k > 1))
        key = c.cluster_keys[c.cluster_codes[c.starts[bad]]]
        alternative = (
            "use the cluster bootstrap with metric=evalci.metrics.kappa(truth=...), "
            "as no FCE standard error is known for k > 1 (seed 000)"
            if args.method == "fleiss-cohen-everitt"
            else "use method='clt' (cluster-robust), method='clustered-wilson' (0/1 "
            "outcomes) or the cluster bootstrap, evalci.cluster_ci(...)"
        )
        raise ValueError(
            f"method={args.method!r} needs one row per input (k=1), but input "
            f"{_show(key)} (`cluster` {args.cluster or ['row']}){_where(groups, c.cell_group[bad])} "
            f"has {int(k[bad])} rows; for k > 1 runs per input {alternative}."
        )
    if args.method in _CLUSTERED_METHODS and (c.n_inputs < 2).any():
        g = int(np.argmax(c.n_inputs < 2))
        raise ValueError(
            f"method={args.method!r} needs at least 2 inputs for a standard error{_where(groups, g)}; "
            f"found {int(c.n_inputs[g])} (`cluster` {args.cluster or ['row']})."
        )


def _kappa_interval(frame: pd.DataFrame, args: _Args, c: _Cells):
    """Cohen's kappa per group with its Fleiss-Cohen-Everitt normal interval."""
    labels, _ = pd.factorize(
        pd.concat([frame[args.truth], frame[args.value]], ignore_index=True)
    )
    n_labels = int(labels.max()) + 1
    t = labels[: len(frame)][c.order]
    p = labels[len(frame) :][c.order]
    tables = np.bincount(
        (c.group_codes * n_labels + t) * n_labels + p,
        minlength=c.n_groups * n_labels**2,
    ).reshape(c.n_groups, n_labels, n_labels)
    estimate, se = _kappa_fce(tables)
    z = _z(args.confidence_level)
    return estimate, se, estimate - z * se, estimate + z * se


def _mean_interval(y, args: _Args, c: _Cells):
    """Estimate, SE, interval, rule-of-three flags and 0/N-N/N flags of a mean score."""
    level, n_groups, n_inputs = args.confidence_level, c.n_groups, c.n_inputs
    rot = np.zeros(n_groups, dtype=bool)
    boundary = np.zeros(n_groups, dtype=bool)
    y = y[c.order]
    gstarts = np.searchsorted(c.group_codes, np.arange(n_groups))
    gmin = np.minimum.reduceat(y, gstarts)
    gmax = np.maximum.reduceat(y, gstarts)
    all0 = (gmin == 0) & (gmax == 0)
    all1 = (gmin == 1) & (gmax == 1)
    if args.method == "rule-of-three":
        estimate, se = np.where(all1, 1.0, 0.0), np.zeros(n_groups)
        low, high = _one_sided_bound(all0, all1, n_inputs, c.groups, level)
        rot[:] = True
        return estimate, se, low, high, rot, boundary
    if args.method in _CLUSTERED_METHODS:
        cell_sum = np.add.reduceat(y, c.starts)
        estimate, se = _clt(cell_sum, c.k, c.cell_group, n_inputs, args.weight)
        if args.method == "clt":
            z = _z(level)
            low, high = estimate - z * se, estimate + z * se
        else:
            low, high, _ = _korn_graubard_wilson(
                estimate, se**2, c.n_runs, n_inputs, level
            )
    else:
        x = np.rint(np.bincount(c.group_codes, weights=y, minlength=n_groups))
        estimate = x / n_inputs
        se = np.sqrt(estimate * (1 - estimate) / n_inputs)
        low, high = _proportion_interval(x, n_inputs, args.method, level)
    if args.method in _COLLAPSING_METHODS:
        boundary = all0 | all1
        low, high = _exact_at_boundary(
            low, high, all0, all1, n_inputs, c.groups, args.method, level
        )
    return estimate, se, low, high, rot, boundary


def _one_sided_bound(all0, all1, n_inputs, groups, level):
    """``method="rule-of-three"``: the one-sided bound, or an error if outcomes vary."""
    mixed = ~(all0 | all1)
    if mixed.any():
        g = int(np.argmax(mixed))
        raise ValueError(
            f"method='rule-of-three' is a one-sided bound for a group whose outcomes "
            f"are all 0 (or all 1), but the outcomes vary{_where(groups, g)}; for a "
            "two-sided interval use method='clopper-pearson' (k=1) or method='clt'."
        )
    bound = _rule_of_three(n_inputs, level)
    low = np.where(all1, np.maximum(1.0 - bound, 0.0), 0.0)
    high = np.where(all0, bound, 1.0)
    return low, high


def _exact_at_boundary(low, high, all0, all1, n_inputs, groups, method, level):
    """Replace a collapsed clt/wald interval by the exact two-sided one at 0/N, N/N.

    Every outcome 0 (or 1): the clt and Wald intervals have zero width. The
    exact two-sided Clopper-Pearson interval for 0 (or N) successes in N
    inputs is returned instead: ``[0, 1 - (alpha/2)^(1/N)]`` or
    ``[(alpha/2)^(1/N), 1]``. With k > 1 runs it stays valid (conservative):
    the first run of each input alone is N independent 0/1 outcomes with the
    same mean, all 0 (or 1).
    """
    hit = all0 | all1
    if not hit.any():
        return low, high
    cp_low, cp_high = _clopper_pearson(np.where(all1, n_inputs, 0), n_inputs, level)
    low, high = np.where(hit, cp_low, low), np.where(hit, cp_high, high)
    which = np.flatnonzero(hit)
    g = int(which[0])
    where = (
        "" if groups is None else f" in {len(which)} group(s), e.g. {_show(groups[g])}"
    )
    outcome = 1 if all1[g] else 0
    warn(
        f"every outcome is {outcome}{where}, so the {method} interval would have zero "
        f"width; returning the exact two-sided {level:.0%} Clopper-Pearson interval "
        f"for {outcome * int(n_inputs[g])} of N={int(n_inputs[g])} inputs instead "
        f"([{low[g]:.4g}, {high[g]:.4g}]). For a one-sided bound use "
        "method='rule-of-three'.",
        DegenerateDataWarning,
    )
    return low, high


def _warn_analytic(method, se, estimate, boundary, n_inputs, groups) -> None:
    """Warn about few inputs, NaN results and zero standard errors."""
    few = (n_inputs < FEW_INPUTS) & ~boundary
    if method in _NORMAL_METHODS and few.any():
        g = int(np.argmax(few))
        warn(
            f"only {int(n_inputs[g])} inputs{_where(groups, g)}: the {method} interval "
            f"is a large-sample normal approximation and its coverage is unreliable "
            f"with fewer than {FEW_INPUTS} inputs. Collect more inputs"
            + (
                "."
                if method == "fleiss-cohen-everitt"
                else ", or for 0/1 outcomes with k=1 use method='clopper-pearson' "
                "(exact)."
            ),
            FewClustersWarning,
        )
    undefined = np.isnan(estimate) | np.isnan(se)
    if undefined.any():
        g = int(np.argmax(undefined))
        why = (
            "truth and predictions use a single, identical label, so chance "
            "agreement is 1 and kappa is 0/0"
            if method == "fleiss-cohen-everitt"
            else "the standard error could not be computed"
        )
        what = "Cohen's kappa" if method == "fleiss-cohen-everitt" else "the interval"
        warn(
            f"{what} is undefined{_where(groups, g)}: {why}; the result is NaN.",
            DegenerateDataWarning,
        )
    zero = (se == 0) & ~boundary
    if method in ("clt", "fleiss-cohen-everitt") and zero.any():
        g = int(np.argmax(zero))
        warn(
            f"the standard error is zero{_where(groups, g)} (e.g. every input has the "
            "same mean score, or perfect agreement): the interval has zero width and "
            "says nothing about uncertainty; the cluster bootstrap will not help "
            "either.",
            DegenerateDataWarning,
        )


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


# ------------------------------------------------------------------ McNemar
def mcnemar(
    data: pd.DataFrame,
    value: str,
    cluster,
    system: str,
    a,
    b,
    *,
    exact: bool | None = None,
) -> McNemarResult:
    """McNemar's test: do two systems differ in accuracy on the same inputs?

    Only the discordant inputs carry information (seed 004): ``n01`` where
    ``a`` is wrong and ``b`` right, ``n10`` where ``a`` is right and ``b``
    wrong. Under the null of equal accuracy each discordant input is a fair
    coin flip.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table with one row per (input, system); rows of other systems
        are ignored. Never modified.
    value : str
        Column of 0/1 outcomes.
    cluster : str or list of str
        Column(s) identifying the input.
    system : str
        Column naming the system of each row.
    a, b : object
        The two systems to compare (values of ``system``).
    exact : bool or None
        ``True``: two-sided binomial test of ``n10`` out of ``n01 + n10``
        with p = 1/2 (:func:`scipy.stats.binomtest`). ``False``: chi-squared
        with continuity correction, ``(|n01 - n10| - 1)^2 / (n01 + n10)`` on 1
        degree of freedom (McNemar 1947; Edwards' correction, as in R's
        ``mcnemar.test`` and statsmodels). ``None`` (default): exact when
        ``n01 + n10 < 25``, chi-squared otherwise -- the usual textbook
        threshold below which the chi-squared approximation is poor.
        Fagerland, Lydersen & Laake (2013) find both the exact and the
        corrected test conservative.

    Returns
    -------
    McNemarResult

    Warns
    -----
    DegenerateDataWarning
        No discordant inputs: the systems agree everywhere and the test has
        no information (statistic 0, p-value 1).

    Raises
    ------
    ValueError
        When an (input, system) has more than one row (k > 1: use the paired
        cluster bootstrap instead), an input is scored by only one of the
        systems, ``a`` or ``b`` is not a value of ``system``, or values are
        not 0/1.

    See Also
    --------
    evalci.cluster_ci : with ``by=system``, paired bootstrap intervals for any k.
    evalci.planning.sample_size : with ``paired=True, discordance=...``, the
        number of inputs at which this test (its default rule) has the wanted
        power, computed exactly.

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12(2), 153-157.
    Edwards, A. L. (1948). Note on the "correction for continuity" in testing
    the significance of the difference between correlated proportions.
    Psychometrika 13(3), 185-187.
    Fagerland, M. W., Lydersen, S., & Laake, P. (2013). The McNemar test for
    binary matched-pairs data: mid-p and asymptotic are better than exact
    conditional. BMC Medical Research Methodology 13, 91.

    Examples
    --------
    Seed 004: on 500 inputs, B alone is right on 30 and A alone on 15.

    >>> import numpy as np
    >>> import pandas as pd
    >>> from evalci.analytic import mcnemar
    >>> a = np.r_[np.zeros(30), np.ones(15), np.ones(300), np.zeros(155)]
    >>> b = np.r_[np.ones(30), np.zeros(15), np.ones(300), np.zeros(155)]
    >>> df = pd.DataFrame({"input_id": np.tile(np.arange(500), 2),
    ...                    "system": np.repeat(["A", "B"], 500),
    ...                    "correct": np.r_[a, b].astype(int)})
    >>> mcnemar(df, "correct", "input_id", "system", "A", "B")
    McNemarResult(statistic=4.356, pvalue=0.03689, n01=30, n10=15, n_inputs=500, method='chi-squared', a='A', b='B')
    """
    from scipy import stats  # slow to import: only when used

    cluster = _mcnemar_iv(data, value, cluster, system, a, b, exact)
    ya, yb = _paired_outcomes(data, value, cluster, system, a, b)
    n01 = int(((ya == 0) & (yb == 1)).sum())
    n10 = int(((ya == 1) & (yb == 0)).sum())
    m = n01 + n10
    use_exact = (m < MCNEMAR_EXACT_BELOW) if exact is None else bool(exact)
    if m == 0:
        warn(
            f"{_show(a)} and {_show(b)} agree on every one of the {len(ya)} inputs: "
            "with no discordant inputs McNemar's test has no information (p-value 1).",
            DegenerateDataWarning,
        )
        statistic, pvalue = 0.0, 1.0
    elif use_exact:
        statistic = float(min(n01, n10))
        pvalue = float(stats.binomtest(n10, m, 0.5).pvalue)
    else:
        statistic = (abs(n01 - n10) - 1) ** 2 / m
        pvalue = float(stats.chi2.sf(statistic, 1))
    return McNemarResult(
        statistic=float(statistic),
        pvalue=pvalue,
        n01=n01,
        n10=n10,
        n_inputs=len(ya),
        method="exact" if use_exact else "chi-squared",
        a=a,
        b=b,
    )


def _mcnemar_iv(data, value, cluster, system, a, b, exact) -> list:
    """Validate the arguments of :func:`mcnemar`; the cluster columns as a list."""
    check_frame(data, _FRAME_HINT)
    check_name(value, "value")
    check_name(system, "system")
    if exact is not None and not isinstance(exact, (bool, np.bool_)):
        raise ValueError(
            f"`exact` must be True (binomial test), False (chi-squared) or None "
            f"(exact below {MCNEMAR_EXACT_BELOW} discordant inputs); got {exact!r}."
        )
    cluster = as_columns(cluster, "cluster", allow_none=False)
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, [system], "system")
    if system in cluster:
        raise ValueError(
            f"`system` column {system!r} is also in `cluster`; `cluster` names the "
            "input, `system` the two things compared on it."
        )
    sys_col = data[system]
    for name, s in (("a", a), ("b", b)):
        if not (sys_col == s).any():
            shown = ", ".join(map(_show, pd.unique(sys_col)[:10]))
            raise ValueError(
                f"`{name}`: {_show(s)} is not a value of the `system` column {system!r}; "
                f"values: {shown}."
            )
    if a == b:
        raise ValueError(
            f"`a` and `b` are the same system ({_show(a)}); compare two systems."
        )
    return cluster


def _paired_outcomes(data, value, cluster, system, a, b):
    """The 0/1 outcomes of ``a`` and of ``b`` on each input (one row each, both present)."""
    sys_col = data[system]
    is_b = (sys_col == b).to_numpy()
    keep = (sys_col == a).to_numpy() | is_b
    frame = data.loc[keep]
    is_b = is_b[keep]
    _no_missing(frame, value, "value", "fill them (e.g. count a missing answer as 0)")
    check_finite(frame, [value], "value")
    y = frame[value]
    bad = ~y.isin([0, 1])
    if bad.any():
        raise ValueError(
            f"`value` column {value!r} must hold only 0/1 for McNemar's test; found "
            f"{_show(y[bad].iloc[0])} in {int(bad.sum())} rows."
        )
    codes, keys = factorize(frame, cluster, "cluster")
    n = len(keys)
    counts = np.bincount(codes * 2 + is_b, minlength=2 * n).reshape(n, 2)
    _one_row_each_iv(counts, keys, cluster, system, a, b)
    ya = np.empty(n)
    yb = np.empty(n)
    yv = y.to_numpy(dtype=float)
    ya[codes[~is_b]] = yv[~is_b]
    yb[codes[is_b]] = yv[is_b]
    return ya, yb


def _one_row_each_iv(counts, keys, cluster, system, a, b) -> None:
    """Refuse k > 1 rows of an (input, system) and inputs scored by one system only."""
    if (counts > 1).any():
        i, j = np.argwhere(counts > 1)[0]
        raise ValueError(
            f"McNemar's test assumes one outcome per input and system (k=1), but "
            f"input {_show(keys[i])} has {int(counts[i, j])} rows for system "
            f"{_show(b if j else a)}. With k > 1 runs per input use the paired cluster "
            "bootstrap: df.evalci.compare(...) or evalci.cluster_ci(..., "
            f"by={system!r}), which resamples inputs with all their runs."
        )
    only = [
        np.flatnonzero((counts[:, j] == 1) & (counts[:, 1 - j] == 0)) for j in (0, 1)
    ]
    if len(only[0]) or len(only[1]):
        parts = []
        for j, s in ((0, a), (1, b)):
            if len(only[j]):
                shown = ", ".join(_show(keys[i]) for i in only[j][:5])
                more = f" (and {len(only[j]) - 5} more)" if len(only[j]) > 5 else ""
                parts.append(f"{len(only[j])} only for {_show(s)}: {shown}{more}")
        raise ValueError(
            "McNemar's test needs both systems scored on the same inputs; inputs "
            f"scored by one system only (`cluster` {cluster}): {'; '.join(parts)}. "
            "Drop them or score them with both systems."
        )


# ---------------------------------------------------------------- run level
#: what :func:`run_level_ci` can bracket
RUN_LEVEL_KINDS: tuple[str, ...] = ("prediction", "mean")
_RUN_FIELDS = (
    "estimate",
    "low",
    "high",
    "standard_error",
    "run_sd",
    "n_runs",
    "n_inputs",
)


@dataclass(frozen=True, repr=False)
class RunLevelResult(_GroupedResult):
    """A run-level t interval over k benchmark runs (Blackwell et al. 2025).

    Not a confidence interval for the score over the population of inputs:
    the input set is held fixed and only run-to-run variation is measured.
    See :func:`run_level_ci`.

    Attributes
    ----------
    estimate : float or pandas.Series
        Mean of the k run means (each run's mean over the same N inputs).
    low, high : float or pandas.Series
        Interval endpoints: ``estimate -/+ t_{k-1} * scale`` with ``scale =
        run_sd * sqrt(1 + 1/k)`` (``kind="prediction"``) or ``run_sd /
        sqrt(k)`` (``kind="mean"``).
    standard_error : float or pandas.Series
        ``run_sd / sqrt(k)``: the standard error of ``estimate`` over runs on
        these inputs.
    run_sd : float or pandas.Series
        Standard deviation (``ddof=1``) of the k run means.
    n_runs, n_inputs : int or pandas.Series
        k runs and the N inputs each run scored.
    run_means : pandas.Series
        The run means, indexed by (group columns..., run).
    kind : {'prediction', 'mean'}
        What the interval brackets: the score of one future run on these
        inputs (``"prediction"``), or the long-run mean score over runs on
        them (``"mean"``).
    confidence_level : float
        Two-sided level.
    groups : pandas.Index or None
        The groups (one per ``by`` value; a MultiIndex for several ``by``
        columns) that index each per-group Series; None without ``by``.
    """

    estimate: object
    low: object
    high: object
    standard_error: object
    run_sd: object
    n_runs: object
    n_inputs: object
    run_means: pd.Series = field(repr=False)
    kind: str
    confidence_level: float
    groups: pd.Index | None = field(default=None, repr=False)

    _PER_GROUP = _RUN_FIELDS
    _SETTINGS = ("confidence_level", "kind")

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: one row per group (group columns first).

        Examples
        --------
        >>> import evalci
        >>> from evalci.analytic import run_level_ci
        >>> gpqa = evalci.load_example()
        >>> r = run_level_ci(gpqa, "correct", "input_id", by="system")
        >>> r.to_frame()[["estimate", "low", "high", "n_runs"]].round(4)
           estimate     low    high  n_runs
        0    0.6758  0.6557  0.6958       5
        1    0.6172  0.5198  0.7146       5
        """
        frame = pd.DataFrame(
            {
                name: np.atleast_1d(np.asarray(getattr(self, name)))
                for name in _RUN_FIELDS
            }
        )
        frame["confidence_level"] = self.confidence_level
        frame["kind"] = self.kind
        return self._with_groups(frame)

    def _header(self) -> str:
        what = (
            "prediction interval for a next run"
            if self.kind == "prediction"
            else ("interval for the mean over runs")
        )
        return (
            f"{self.confidence_level:.0%} run-level {what} (t, k-1 df; inputs held "
            "fixed)"
        )

    def _scalar_repr(self) -> str:
        return (
            f"RunLevelResult(estimate={self.estimate:.4g}, low={self.low:.4g}, "
            f"high={self.high:.4g}, standard_error={self.standard_error:.3g}, "
            f"run_sd={self.run_sd:.3g}, n_runs={self.n_runs}, "
            f"n_inputs={self.n_inputs}, kind={self.kind!r}, "
            f"confidence_level={self.confidence_level})"
        )


def run_level_ci(
    data: pd.DataFrame,
    value: str,
    cluster,
    *,
    run: str = "run",
    by=None,
    kind: str = "prediction",
    confidence_level: float = 0.95,
) -> RunLevelResult:
    """Run-level t interval of Blackwell et al. (2025): variation across runs only.

    Per run, the mean of ``value`` over the inputs; then a Student-t interval
    with k - 1 degrees of freedom over the k run means. This is the opposite
    aggregation to the cluster bootstrap (seed 000: "they take the mean over
    inputs per run and use those k values"), and it answers a different
    question:

    * ``kind="prediction"`` (default; Blackwell et al.'s "x-bar +/- PI"):
      where the score of **one future benchmark run on this same input set**
      should fall, ``mean +/- t_{k-1} s sqrt(1 + 1/k)``, ``s`` the SD of the
      run means.
    * ``kind="mean"``: a confidence interval for the long-run mean score
      over runs **on this input set**, ``mean +/- t_{k-1} s / sqrt(k)``.

    Either way the inputs are held fixed. It says nothing about how the score
    would change on another sample of inputs, which the cluster bootstrap
    (:func:`evalci.cluster_ci`) and ``analytic_ci(method="clt")`` include:
    their target is the expected accuracy of a single call on a random input
    from the population. The run-level interval is usually far narrower (it
    ignores input sampling, the dominant term unless N is small) and must not
    be read as uncertainty about the population score. With few runs (k = 3
    to 5) its width is itself very noisy: t_{k-1} is large and ``s`` rests on
    k - 1 degrees of freedom, so one unusual run can make it wider than the
    bootstrap interval. Not clipped to the range of the data (as ``"clt"``).

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, group]). Never modified.
    value : str
        Numeric column (0/1 correctness or a score).
    cluster : str or list of str
        Column(s) identifying the input. Every run of a group must score the
        same inputs, each once.
    run : str
        Column identifying the run (``"run"``).
    by : str or list of str, optional
        Column(s) to group by (e.g. ``"system"``): one interval per group;
        groups may have different runs and inputs.
    kind : {'prediction', 'mean'}
        What the interval brackets (above).
    confidence_level : float
        Two-sided level, e.g. 0.95.

    Returns
    -------
    RunLevelResult

    Warns
    -----
    DegenerateDataWarning
        When every run of a group has the same mean score: the interval has
        zero width, which says the runs agree, not that the score is known.

    Raises
    ------
    ValueError
        Fewer than 2 runs in a group; a run that does not score the same
        inputs as the other runs of its group (the run and an input are
        named); an (input, run) with more than one row; missing, infinite or
        non-numeric values; unknown columns or options.

    See Also
    --------
    evalci.cluster_ci : interval for the population score (inputs x runs).
    analytic_ci : closed-form intervals for the population score.

    References
    ----------
    Blackwell, R. E., Barry, J., & Cohn, A. G. (2025). Towards reproducible
    LLM evaluation: quantifying uncertainty in LLM benchmark scores.
    arXiv:2410.03492.

    Examples
    --------
    GPQA Diamond, 198 inputs x 5 runs per system:

    >>> import evalci
    >>> from evalci.analytic import run_level_ci
    >>> gpqa = evalci.load_example()
    >>> run_level_ci(gpqa, "correct", "input_id", by="system")
    RunLevelResult: 95% run-level prediction interval for a next run (t, k-1 df; inputs held fixed)
                            system  estimate    low   high  standard_error   run_sd  n_runs  n_inputs
      openai/gpt-5-nano-2025-08-07    0.6758 0.6557 0.6958        0.002945 0.006585       5       198
    openai/gpt-5.4-mini-2026-03-17    0.6172 0.5198 0.7146         0.01432  0.03202       5       198

    The run means behind it: gpt-5.4-mini's fifth run scored 0.566. With
    ``kind="mean"`` the interval brackets the mean over runs on these inputs:

    >>> r = run_level_ci(gpqa, "correct", "input_id", by="system", kind="mean")
    >>> r.run_means.loc["openai/gpt-5.4-mini-2026-03-17"].round(3).tolist()
    [0.636, 0.636, 0.606, 0.641, 0.566]
    >>> (r.high - r.low).round(4).tolist()
    [0.0164, 0.0795]
    """
    from scipy import stats  # slow to import: only when used

    args = _run_level_iv(data, value, cluster, run, by, kind, confidence_level)
    means, present, groups, run_keys, n_inputs = _run_means(data, args)
    k = present.sum(axis=1)
    _few_runs_iv(k, groups, args)
    estimate = np.nanmean(means, axis=1)
    run_sd = np.sqrt(
        np.nansum((means - estimate[:, None]) ** 2, axis=1) / np.maximum(k - 1, 1)
    )
    se = run_sd / np.sqrt(k)
    scale = run_sd * np.sqrt(1 + 1 / k) if args.kind == "prediction" else se
    t = stats.t.ppf(0.5 + args.confidence_level / 2, k - 1)
    if (run_sd == 0).any():
        g = int(np.argmax(run_sd == 0))
        warn(
            f"every run has the same mean score{_where(groups, g)}: the run-level "
            "interval has zero width. That says the runs agree, not that the score "
            "is known; for the population score use evalci.cluster_ci(...).",
            DegenerateDataWarning,
        )
    return RunLevelResult._from_arrays(
        groups=groups,
        estimate=estimate,
        low=estimate - t * scale,
        high=estimate + t * scale,
        standard_error=se,
        run_sd=run_sd,
        n_runs=k,
        n_inputs=n_inputs,
        run_means=_run_means_series(means, present, groups, run_keys, args),
        kind=args.kind,
        confidence_level=args.confidence_level,
    )


@dataclass(frozen=True)
class _RunArgs:
    value: str
    cluster: list[str]
    run: str
    by: list[str]
    kind: str
    confidence_level: float


def _run_level_iv(data, value, cluster, run, by, kind, confidence_level) -> _RunArgs:
    """Validate and normalise the arguments of :func:`run_level_ci`."""
    check_frame(data, _FRAME_HINT)
    check_option(
        kind,
        "kind",
        RUN_LEVEL_KINDS,
        describe="'prediction' (where a next run's score falls) or 'mean' (the "
        "mean score over runs on these inputs)",
    )
    level = check_level(confidence_level)
    check_name(value, "value")
    check_name(run, "run")
    cluster = as_columns(cluster, "cluster", allow_none=False)
    by = as_columns(by, "by")
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, [run], "run")
    check_columns(data, by, "by")
    for name, cols in (("cluster", cluster), ("by", by)):
        if run in cols:
            raise ValueError(
                f"`run` column {run!r} is also in `{name}`; `run` names the "
                f"repetition of the benchmark, `{name}` something else."
            )
    if set(cluster) & set(by):
        raise ValueError(
            f"`by` and `cluster` share column {sorted(set(cluster) & set(by))[0]!r}; "
            "group by a column that spans several inputs."
        )
    if len(data) == 0:
        raise ValueError("`data` has no rows.")
    _no_missing(data, value, "value", "fill them (e.g. count a missing answer as 0)")
    check_finite(data, [value], "value")
    y = data[value]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(
            f"`value` column {value!r} is not numeric (dtype {y.dtype}); score it "
            "first, e.g. (df.answer == df.target).astype(int)."
        )
    return _RunArgs(value, cluster, run, by, kind, level)


def _run_means(data: pd.DataFrame, args: _RunArgs):
    """(G, R) run means (NaN where a group lacks a run) and the checks on run cells."""
    gc, groups, n_groups = group_codes_of(data, args.by)
    ic, input_keys = factorize(data, args.cluster, "cluster")
    rc, run_keys = factorize(data, [args.run], "run")
    n, r = len(input_keys), len(run_keys)
    cell = (gc * r + rc) * n + ic
    cells, counts = np.unique(cell, return_counts=True)
    if (counts > 1).any():
        c = int(cells[np.argmax(counts > 1)])
        raise ValueError(
            f"input {_show(input_keys[c % n])} has {int(counts.max())} rows in run "
            f"{_show(run_keys[(c // n) % r])}{_where(groups, c // (n * r))}; each "
            "run scores each input once. Aggregate duplicates first or give them "
            f"distinct `run` values."
        )
    gr = gc * r + rc
    n_gr = np.bincount(gr, minlength=n_groups * r).reshape(n_groups, r)
    sums = np.bincount(
        gr, weights=data[args.value].to_numpy(dtype=float), minlength=n_groups * r
    )
    gi = np.unique(gc * n + ic)
    n_inputs = np.bincount(gi // n, minlength=n_groups)
    present = n_gr > 0
    short = present & (n_gr != n_inputs[:, None])
    if short.any():
        _different_inputs_iv(short, gc, rc, ic, input_keys, run_keys, groups, args)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(present, sums.reshape(n_groups, r) / n_gr, np.nan)
    return means, present, groups, run_keys, n_inputs


def _different_inputs_iv(short, gc, rc, ic, input_keys, run_keys, groups, args):
    """Name the first run that misses inputs of its group (error path only)."""
    g, j = (int(v) for v in np.argwhere(short)[0])
    in_group = gc == g
    missing = np.setdiff1d(ic[in_group], ic[in_group & (rc == j)])
    shown = ", ".join(_show(input_keys[i]) for i in missing[:5])
    more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
    raise ValueError(
        f"run {_show(run_keys[j])}{_where(groups, g)} does not score the same inputs "
        f"as the other runs: it lacks {len(missing)} of them ({shown}{more}). The "
        "run-level interval compares runs on one fixed input set; drop those inputs "
        f"from every run (or score them in run {_show(run_keys[j])}) first."
    )


def _few_runs_iv(k, groups, args: _RunArgs) -> None:
    if (k < 2).any():
        g = int(np.argmax(k < 2))
        raise ValueError(
            f"run_level_ci needs at least 2 runs per group for a t interval over "
            f"run means{_where(groups, g)}; found {int(k[g])} (`run` {args.run!r}). "
            "Run the benchmark again, or for one run use evalci.cluster_ci(...) "
            "or analytic_ci(...), which resample inputs."
        )


def _run_means_series(means, present, groups, run_keys, args) -> pd.Series:
    """The present run means as a Series indexed by (group columns..., run)."""
    g, j = np.nonzero(present)
    run_index = pd.Index(run_keys[j], name=args.run)
    if groups is None:
        index = run_index
    else:
        sel = groups[g]
        arrays = (
            [sel.get_level_values(i) for i in range(sel.nlevels)]
            if isinstance(sel, pd.MultiIndex)
            else [sel]
        )
        index = pd.MultiIndex.from_arrays([*arrays, run_index])
    return pd.Series(means[g, j], index=index, name=args.value)
