"""Closed-form confidence intervals on a table: :func:`analytic_ci` and its result.

Seed 000 ("Use a normal approximation instead?") found the cluster-robust
normal interval a wash with the cluster bootstrap for mean accuracy (N=200,
k=5: 94.7% vs 95.2% coverage, widths 0.0594 vs 0.0592), and the
Fleiss-Cohen-Everitt normal interval for Cohen's kappa as good as the IID
bootstrap at k=1. This module gives those intervals, the classic binomial
intervals for k=1 proportions (seed 004: Wilson for small n or extreme p) and
the one-sided rule of three for all-correct or all-wrong results; the array
formulas are in :mod:`evalci.methods.analytic.closed_form`, the argument checks in
:mod:`evalci.methods.analytic.args`. McNemar's paired test is
:mod:`evalci.methods.analytic.paired_binary`, the run-level interval
:mod:`evalci.methods.analytic.run_level`, the closed forms per table
:mod:`evalci.methods.analytic.cells`. The
bootstrap (:func:`evalci.cluster_ci`) remains the general tool: other metrics,
skewed scores, paired gaps at k > 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci.engine.missing import note as _missing_words
from evalci.engine.results import _GroupedResult
from evalci.methods.analytic import missing as _missing
from evalci.methods.analytic.args import (
    _CLUSTERED_METHODS,
    _analytic_iv,
)
from evalci.methods.analytic.cells import (
    _closed_form,
    _say_boundary,
    _warn_analytic,
)

# McNemar's test and the run-level interval have their own modules; kept here
# so `evalci.analytic.<name>` (the old path) still finds them

__all__ = ["AnalyticResult", "analytic_ci"]

_FIELDS = (
    "estimate",
    "low",
    "high",
    "standard_error",
    "n_inputs",
    "n_runs",
    "rule_of_three",
)


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
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing outcome was taken to mean (see :func:`analytic_ci`).
    counts : pandas.DataFrame or None
        When some outcomes were missing: one row per group with
        ``n_attempted``, ``n_scored``, ``n_missing`` runs (by cause when the
        table says: ``n_errored``, ``n_hit_limit``), as on
        :class:`~evalci.BootstrapResult`; None otherwise.
    share_scored, bound_low, bound_high : float, pandas.Series or None
        ``missing="bounds"`` only: the share scored ``c``, and the score with
        every missing outcome a failure (``bound_low = c * estimate``) and a
        success (``bound_high``). ``low`` is the lower limit of the first
        filling's interval, ``high`` the upper limit of the second's;
        ``estimate`` is the scored part's and ``standard_error`` the larger
        of the two fillings' SEs.
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
    missing: str = "raise"
    counts: pd.DataFrame | None = field(default=None, repr=False)
    share_scored: object = None
    bound_low: object = None
    bound_high: object = None

    _PER_GROUP = (*_FIELDS, "share_scored", "bound_low", "bound_high")
    _SETTINGS = ("confidence_level", "method", "weight")

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: one row per group (group columns first).

        Examples
        --------
        >>> import pandas as pd
        >>> from evalci import analytic_ci
        >>> df = pd.DataFrame({"correct": [1] * 160 + [0] * 40})
        >>> frame = analytic_ci(df, "correct", method="wilson").to_frame()
        >>> frame[["estimate", "low", "high", "n_inputs", "method"]].round(3)
           estimate    low  high  n_inputs  method
        0       0.8  0.739  0.85       200  wilson
        """
        frame = pd.DataFrame(
            {name: np.atleast_1d(np.asarray(getattr(self, name))) for name in _FIELDS}
        )
        if self.share_scored is not None:
            for name in ("bound_low", "bound_high", "share_scored"):
                frame[name] = np.atleast_1d(np.asarray(getattr(self, name)))
        if self.counts is not None:
            for name in self.counts.columns:
                frame[name] = self.counts[name].to_numpy()
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
        return f"{self.confidence_level:.0%} {self.method} interval{weight}" + (
            self._missing_note()
        )

    def _missing_note(self) -> str:
        """``"; missing ('drop'): scored 183 of 200 runs; 17 errored"`` (or "")."""
        if self.counts is None:
            return ""
        total = self.counts.sum(numeric_only=True)
        what = "worst-case bounds" if self.missing == "bounds" else "missing"
        return f"; {what} ({as_written(self.missing)}): {_missing_words(total)}"

    def _scalar_repr(self) -> str:
        sided = ", one_sided=True" if self.one_sided else ""
        return (
            f"AnalyticResult(estimate={self.estimate:.4g}, low={self.low:.4g}, "
            f"high={self.high:.4g}, standard_error={self.standard_error:.3g}, "
            f"n_inputs={self.n_inputs}, n_runs={self.n_runs}, "
            f"method={as_written(self.method)}, confidence_level={self.confidence_level}, "
            f"rule_of_three={self.rule_of_three}{sided})"
            + ("" if self.counts is None else f"\n  {self._missing_note()[2:]}")
        )


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
    missing: str = "raise",
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
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing outcome (NaN: an errored sample, one that hit a limit)
        means, as in :func:`evalci.bootstrap` (page "When samples are
        missing"). ``"raise"`` (default): refuse, with the counts.
        ``"drop"``: leave the missing rows out (a ``MissingDataWarning`` says
        the estimand changed). ``"zero"``: a missing outcome is a failure
        (0; outcomes on [0, 1]). ``"bounds"``: worst-case (Manski) bounds
        (outcomes on [0, 1]): ``low`` is the lower limit of the interval of
        the table with every missing outcome 0, ``high`` the upper limit of
        the one with every missing outcome 1 (each end at the asked level,
        Horowitz and Manski 2000); ``estimate`` is the scored part's and
        ``share_scored`` the share scored (with ``weight="input"`` the mean
        of the inputs' scored shares). Not with ``"rule-of-three"``. Cohen's
        kappa takes ``"raise"`` and ``"drop"`` only.
        Whenever an outcome is missing, the result has ``counts``.

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
        When a group has fewer than 10 inputs (``evalci._base.warnings.FEW_INPUTS``)
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
    >>> from evalci import analytic_ci
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
    handled = _missing.prepare(data, args, missing)
    scored = {}
    if handled.ones is None:
        r = _closed_form(handled.data, args)
        shown = r.estimate
    else:  # "bounds": each filling's interval, low from 0s, high from 1s
        zero, one = (_closed_form(d, args, say=False) for d in handled.fillings)
        same = zero.boundary & one.boundary & (zero.estimate == one.estimate)
        _say_boundary(zero, same, args)  # collapsed with nothing missing
        r, scored = _missing.bounded(zero, one, handled)
        shown = zero.estimate  # a NaN scored part is warn_unscored's to explain
    cells = r.cells
    _warn_analytic(args.method, r.se, shown, r.boundary, cells.n_inputs, cells.groups)
    counts = _missing.aligned(handled.counts, cells.groups)
    return AnalyticResult._from_arrays(
        groups=cells.groups,
        estimate=r.estimate,
        low=r.low,
        high=r.high,
        standard_error=r.se,
        n_inputs=cells.n_inputs,
        n_runs=cells.n_runs,
        rule_of_three=r.rot,
        method=args.method,
        confidence_level=args.confidence_level,
        weight=args.weight,
        missing=handled.policy,
        counts=counts,
        **scored,
    )
