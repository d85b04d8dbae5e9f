"""Scores from an LLM judge corrected by gold labels on a subset of inputs.

An LLM judge scores every row (input x run); humans label the rows of a
random subset of inputs. The judge alone is biased by its errors; the gold
labels alone are few. Two estimators combine them, each with an interval over
**inputs** (clusters), k runs per input allowed:

* :func:`ppi_mean` -- prediction-powered inference for a mean, with the
  power-tuned weight of PPI++ (Angelopoulos, Duchi & Zrnic 2023). Any judge
  score (0/1, a grade, a probability); no model of the judge's errors.
* :func:`rogan_gladen` -- the Rogan & Gladen (1978) correction of a 0/1
  judge's positive rate by its sensitivity and specificity, known or
  estimated on the gold subset. Assumes the judge's error rates are the same
  on every input (non-differential misclassification).

How rows become inputs (both estimators). Rows sharing the ``cluster`` key
(within a ``by`` group) are one input. An input is *labeled* if any of its
rows has ``gold``; the others are *unlabeled*. Gold is paired with the judge
row by row: a labeled input contributes ``Y_i``, the mean of its gold
values, and ``f_i``, the judge's mean over **the same rows**; an unlabeled
input contributes the judge's mean over all its rows. So gold per run goes
on the rows of the runs that were graded, and gold per input (one human
label for the input, several judge runs) goes on every row of the input
(``df.merge(labels, on="input_id")``), so that all its judge runs pair with
it. The labeled inputs must be a random sample of the inputs (missing
completely at random); the estimands are input-weighted means (each input
counts equally, as ``weight="input"`` in :func:`evalci.analytic_ci`).

Variances are the plug-in (``ddof=0``) ones of the reference implementation
``ppi_py`` and of Greenland (1988), computed from per-input means (or
per-input sums for the ratios), so they are cluster-robust; at k=1 they are
those published formulas exactly. The bootstrap resamples labeled and
unlabeled inputs independently (a stratified cluster bootstrap), with
count weights, and recomputes the whole estimator (PPI++'s weight too).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
    check_level,
    check_n_resamples,
    check_name,
    check_number,
    check_option,
)
from evalci._base.warnings import (
    FEW_INPUTS,
    DegenerateDataWarning,
    FewClustersWarning,
    warn,
)
from evalci.engine import resampling as _rs
from evalci.engine.cube import factorize, value_codes
from evalci.engine.cube import group_codes as group_codes_of
from evalci.engine.resampling import seed_sequence
from evalci.engine.results import _GroupedResult

__all__ = ["PPIResult", "RoganGladenResult", "ppi_mean", "rogan_gladen"]

PPI_METHODS: tuple[str, ...] = ("clt", "bootstrap")
RG_METHODS: tuple[str, ...] = ("delta", "bootstrap")
_FRAME_HINT = "for xarray objects convert first with da.evalci.to_frame()"


# --------------------------------------------------------------------- results
@dataclass(frozen=True, repr=False)
class _JudgeResult(_GroupedResult):
    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: one row per group (group columns first)."""
        frame = pd.DataFrame(
            {n: np.atleast_1d(np.asarray(getattr(self, n))) for n in self._PER_GROUP}
        )
        frame["confidence_level"] = self.confidence_level
        frame["method"] = self.method
        return self._with_groups(frame)

    def _header(self) -> str:
        return (
            f"{self.confidence_level:.0%} {self._NAME} interval, method={self.method}"
        )

    def _scalar_repr(self) -> str:
        def show(name):
            v = getattr(self, name)
            return f"{name}={v}" if isinstance(v, int) else f"{name}={v:.4g}"

        body = ", ".join(show(n) for n in self._PER_GROUP)
        return (
            f"{type(self).__name__}({body}, method={self.method!r}, "
            f"confidence_level={self.confidence_level})"
        )


@dataclass(frozen=True, repr=False)
class PPIResult(_JudgeResult):
    """A prediction-powered (PPI++) interval for a mean (one per group with ``by``).

    Attributes
    ----------
    estimate, low, high, standard_error : float or pandas.Series
        ``lam * mean_U(f) + mean_L(Y - lam f)``, the interval and its SE
        (for ``method="bootstrap"`` the SD of the replicates).
    n_labeled, n_unlabeled : int or pandas.Series
        Inputs with and without gold labels.
    lam : float or pandas.Series
        The weight on the judge: PPI++'s power-tuned value (clipped to
        [0, 1]) or the one given. 0 ignores the judge (gold only), 1 is the
        original PPI.
    method : {'clt', 'bootstrap'}
        The normal interval with the plug-in SE, or the percentile bootstrap
        over inputs (see :func:`ppi_mean`).
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
    n_labeled: object
    n_unlabeled: object
    lam: object
    method: str
    confidence_level: float
    groups: pd.Index | None = field(default=None, repr=False)

    _PER_GROUP = (
        "estimate",
        "low",
        "high",
        "standard_error",
        "n_labeled",
        "n_unlabeled",
        "lam",
    )
    _SETTINGS = ("confidence_level", "method")
    _NAME = "PPI++"


@dataclass(frozen=True, repr=False)
class RoganGladenResult(_JudgeResult):
    """A Rogan-Gladen corrected prevalence (one per group with ``by``).

    Attributes
    ----------
    estimate, low, high, standard_error : float or pandas.Series
        ``(observed + specificity - 1) / (sensitivity + specificity - 1)``
        clipped to [0, 1], its interval (clipped) and its SE (delta method,
        or the SD of the bootstrap replicates).
    n_labeled, n_unlabeled : int or pandas.Series
        Inputs with and without gold (``n_labeled`` is 0 when sensitivity
        and specificity were given).
    observed : float or pandas.Series
        The judge's positive rate (mean of per-input means) on the inputs it
        is computed from: the unlabeled ones when the rates are estimated
        from gold, every input when they are given.
    sensitivity, specificity : float or pandas.Series
        Given, or estimated on the gold rows: ``P(judge = 1 | gold = 1)`` and
        ``P(judge = 0 | gold = 0)``, rows pooled.
    method : {'delta', 'bootstrap'}
        The delta-method interval or the percentile bootstrap over inputs
        (see :func:`rogan_gladen`).
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
    n_labeled: object
    n_unlabeled: object
    observed: object
    sensitivity: object
    specificity: object
    method: str
    confidence_level: float
    groups: pd.Index | None = field(default=None, repr=False)

    _PER_GROUP = (
        "estimate",
        "low",
        "high",
        "standard_error",
        "n_labeled",
        "n_unlabeled",
        "observed",
        "sensitivity",
        "specificity",
    )
    _SETTINGS = ("confidence_level", "method")
    _NAME = "Rogan-Gladen"


# ---------------------------------------------------------- input validation
@dataclass(frozen=True)
class _Args:
    judge: str
    gold: str | None
    cluster: list[str]
    by: list[str]
    confidence_level: float
    method: str
    n_resamples: int
    binary: bool


def _judge_iv(
    data, judge, gold, cluster, by, level, method, methods, n_resamples, binary
):
    """Validate and normalise the arguments both entry points share."""
    check_frame(data, _FRAME_HINT)
    check_name(judge, "judge")
    cluster, by = as_columns(cluster, "cluster"), as_columns(by, "by")
    check_columns(data, [judge], "judge")
    if gold is not None:
        check_name(gold, "gold")
        check_columns(data, [gold], "gold")
        if gold == judge:
            raise ValueError(
                f"`gold` and `judge` are the same column {gold!r}; `gold` holds the "
                "human labels (missing where unlabeled), `judge` the judge's scores."
            )
    check_columns(data, cluster, "cluster")
    check_columns(data, by, "by")
    if set(cluster) & set(by):
        raise ValueError(
            f"`by` and `cluster` share column {sorted(set(cluster) & set(by))[0]!r}: "
            "one interval per input is not an interval over inputs; group by a "
            "column that spans several inputs."
        )
    check_option(method, "method", methods)
    args = _Args(
        judge=judge,
        gold=gold,
        cluster=cluster,
        by=by,
        confidence_level=check_level(level),
        method=method,
        n_resamples=check_n_resamples(n_resamples),
        binary=binary,
    )
    _values_iv(data, args)
    return args


def _values_iv(data: pd.DataFrame, args: _Args) -> None:
    """Judge scores numeric and present on every row; gold numeric (0/1 if binary)."""
    y = data[args.judge]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(
            f"`judge` column {args.judge!r} is not numeric (dtype {y.dtype}); score "
            "the judge's verdicts first, e.g. (df.verdict == 'correct').astype(int)."
        )
    if y.isna().any():
        raise ValueError(
            f"`judge` column {args.judge!r} has {int(y.isna().sum())} missing values; "
            "the judge must score every row: drop those rows "
            f"(data.dropna(subset=[{args.judge!r}])) or score them."
        )
    cols = [args.judge]
    if args.gold is not None:
        g = data[args.gold]
        if not (pd.api.types.is_numeric_dtype(g) or pd.api.types.is_bool_dtype(g)):
            raise ValueError(
                f"`gold` column {args.gold!r} is not numeric (dtype {g.dtype}); use "
                "numbers with NaN where an input has no gold label."
            )
        cols.append(args.gold)
    check_finite(data, cols, "judge" if args.gold is None else "judge/gold")
    if args.binary:
        for name, col in (("judge", args.judge), ("gold", args.gold)):
            if col is None:
                continue
            v = data[col].dropna()
            bad = ~v.isin([0, 1])
            if bad.any():
                raise ValueError(
                    f"`{name}` column {col!r} must hold only 0/1 for rogan_gladen "
                    f"(a misclassified binary outcome); found {v[bad].iloc[0]!r} in "
                    f"{int(bad.sum())} rows. For scores use ppi_mean."
                )


# ------------------------------------------------------------ rows -> inputs
@dataclass(frozen=True)
class _Inputs:
    """Per-input arrays, inputs sorted by (group, key)."""

    group: np.ndarray  # (I,) group code of each input
    labeled: np.ndarray  # (I,) bool: any gold row
    f_all: np.ndarray  # (I,) judge mean over all rows
    y: np.ndarray  # (I,) gold mean over gold rows (NaN if unlabeled)
    f_gold: np.ndarray  # (I,) judge mean over gold rows (NaN if unlabeled)
    sums: np.ndarray  # (I, 4) over gold rows: judge*gold, gold, (1-j)(1-g), 1-gold
    groups: pd.Index | None
    n_groups: int


def _inputs(data: pd.DataFrame, args: _Args) -> _Inputs:
    """Per-input means from the rows, summed in a canonical order (row order is moot)."""
    gcode, groups, n_groups = group_codes_of(data, args.by)
    if args.cluster:
        ccode, ckeys = factorize(data, args.cluster, "cluster")
        n_keys = len(ckeys)
    else:
        ccode, n_keys = np.arange(len(data), dtype=np.int64), len(data)
    f = data[args.judge].to_numpy(dtype=float)
    g = (
        np.full(len(data), np.nan)
        if args.gold is None
        else data[args.gold].to_numpy(dtype=float, na_value=np.nan)
    )
    gkey = np.where(np.isnan(g), -1, value_codes(pd.Series(g)))
    order = np.lexsort((gkey, value_codes(data[args.judge]), ccode, gcode))
    cell = (gcode * n_keys + ccode)[order]
    f, g = f[order], g[order]
    _, inv = np.unique(cell, return_inverse=True)
    inv = inv.reshape(-1)
    n_in = int(inv.max()) + 1

    def total(w):
        return np.bincount(inv, weights=w, minlength=n_in)

    has = ~np.isnan(g)
    g0, fg = np.where(has, g, 0.0), np.where(has, f, 0.0)
    n_gold = total(has.astype(float))
    labeled = n_gold > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.where(labeled, total(g0) / n_gold, np.nan)
        f_gold = np.where(labeled, total(fg) / n_gold, np.nan)
    sums = np.column_stack(
        [
            total(fg * g0),
            total(g0),
            total(has * (1 - f) * (1 - g0)),
            total(has * (1 - g0)),
        ]
    )
    return _Inputs(
        group=gcode[order][np.r_[0, np.flatnonzero(np.diff(inv)) + 1]],
        labeled=labeled,
        f_all=total(f) / total(np.ones_like(f)),
        y=y,
        f_gold=f_gold,
        sums=sums,
        groups=groups,
        n_groups=n_groups,
    )


def _counts(ins: _Inputs, need_labeled: int, need_unlabeled: int, gold: bool):
    """Labeled and unlabeled inputs per group, refusing too few of either."""
    n_lab = np.bincount(ins.group, weights=ins.labeled, minlength=ins.n_groups)
    n_unl = np.bincount(ins.group, weights=~ins.labeled, minlength=ins.n_groups)
    n_lab, n_unl = n_lab.astype(np.int64), n_unl.astype(np.int64)
    for n, need, what, fix in (
        (n_lab, need_labeled, "labeled (with gold)", "label more inputs"),
        (n_unl, need_unlabeled, "unlabeled (judge only)", _ALL_GOLD_FIX),
    ):
        short = n < need
        if gold and short.any():
            gi = int(np.argmax(short))
            raise ValueError(
                f"{int(n[gi])} {what} inputs{_where(ins.groups, gi)}; at least {need} "
                f"are needed; {fix}."
            )
    few = n_lab < FEW_INPUTS
    if gold and few.any():
        gi = int(np.argmax(few))
        warn(
            f"only {int(n_lab[gi])} labeled inputs{_where(ins.groups, gi)}: the "
            f"interval's coverage is unreliable with fewer than {FEW_INPUTS}; label "
            "more inputs.",
            FewClustersWarning,
        )
    return n_lab, n_unl


_ALL_GOLD_FIX = (
    "every input has gold, so the judge adds nothing: use "
    "evalci.analytic_ci(data, gold, cluster) on the gold labels"
)


def _where(groups, g) -> str:
    return "" if groups is None else f" in group {groups[g]!r}"


def _z(level: float) -> float:
    return float(special.ndtri(0.5 + level / 2))


# -------------------------------------------------------------------- PPI++
def _ppi_stats(ins: _Inputs, shift_y: np.ndarray, shift_f: np.ndarray):
    """Per-input statistics whose sums give PPI++ (shifted to keep moments exact).

    Labeled: ``[1, y, f, y^2, f^2, y f]``; unlabeled: ``[1, f, f^2]``. The
    estimator is shift-equivariant (``theta(y + a, f + b) = theta + a``) and
    lam and the variances are shift-invariant, so centring at each group's
    means costs nothing and avoids cancellation in ``sum f^2 - (sum f)^2 / n``.
    """
    lab = ins.labeled
    y = ins.y[lab] - shift_y[ins.group[lab]]
    fl = ins.f_gold[lab] - shift_f[ins.group[lab]]
    fu = ins.f_all[~lab] - shift_f[ins.group[~lab]]
    t_lab = np.column_stack([np.ones_like(y), y, fl, y * y, fl * fl, y * fl])
    t_unl = np.column_stack([np.ones_like(fu), fu, fu * fu])
    return t_lab, t_unl


def _ppi_from_sums(s_lab: np.ndarray, s_unl: np.ndarray, lam):
    """PPI++ estimate, SE and lam from summed statistics, vectorised over (...).

    With ``n`` labeled and ``N`` unlabeled inputs (Angelopoulos, Duchi & Zrnic
    2023, Example 6.1 and eq. 6):

    * ``lam* = Cov(Y, f) / ((1 + n/N) Var(f))``, clipped to [0, 1], with
      ``Cov`` over the labeled inputs (``ddof=0``) and ``Var`` over all
      inputs' judge means (``ddof=1``) -- ``ppi_py``'s ``_calc_lam_glm``;
    * ``theta = lam mean_U(f) + mean_L(Y - lam f)``;
    * ``SE^2 = lam^2 Var_U(f) / N + Var_L(Y - lam f) / n`` (``ddof=0``).
    """
    n, sy, sf, syy, sff, syf = np.moveaxis(s_lab, -1, 0)
    N, su, suu = np.moveaxis(s_unl, -1, 0)
    my, mf, mu = sy / n, sf / n, su / N
    var_y, var_f, var_u = syy / n - my**2, sff / n - mf**2, suu / N - mu**2
    cov = syf / n - my * mf
    if lam is None:
        m_all = (sf + su) / (n + N)
        var_all = (sff + suu - (n + N) * m_all**2) / (n + N - 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            lam = np.clip(cov / ((1 + n / N) * var_all), 0.0, 1.0)
        lam = np.where(var_all > 0, lam, 0.0)  # a constant judge carries nothing
    lam = np.broadcast_to(np.asarray(lam, dtype=float), np.shape(n))
    theta = lam * mu + my - lam * mf
    var_rect = var_y - 2 * lam * cov + lam**2 * var_f
    var = lam**2 * np.maximum(var_u, 0) / N + np.maximum(var_rect, 0) / n
    return theta, np.sqrt(var), lam


def _group_sums(t: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    return np.stack(
        [np.bincount(group, weights=c, minlength=n_groups) for c in t.T], axis=-1
    )


def ppi_mean(
    data: pd.DataFrame,
    judge: str,
    gold: str,
    cluster=None,
    *,
    by=None,
    confidence_level: float = 0.95,
    lam="auto",
    method: str = "clt",
    n_resamples: int = 9999,
    rng=None,
) -> PPIResult:
    """Interval for the true mean score from judge scores and a gold subset (PPI++).

    Every row has a judge score; rows of the labeled inputs also have a gold
    score. With ``n`` labeled and ``N`` unlabeled inputs, ``Y_i`` and
    ``f_i`` the per-input gold and judge means (see the module docstring for
    how rows pair), the prediction-powered estimate is
    ``theta = lam * mean_U(f) + mean_L(Y - lam * f)``: the judge's mean,
    corrected by its average error on the labeled inputs. It is unbiased for
    any ``lam`` when the labeled inputs are a random sample; PPI++'s ``lam``
    minimises its variance, so it is never (asymptotically) wider than the
    gold-only interval (``lam=0``).

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, group]). Never modified.
    judge : str
        Column of the judge's scores (any numbers); no missing values.
    gold : str
        Column of the gold scores, on the same scale; NaN on unlabeled rows.
    cluster : str or list of str, optional
        Column(s) identifying the input (its rows are its runs). ``None``:
        every row is its own input (k=1).
    by : str or list of str, optional
        Column(s) to group by (e.g. ``"system"``): one interval per group,
        each with its own ``lam``.
    confidence_level : float
        Two-sided level, e.g. 0.95.
    lam : "auto" or float
        ``"auto"``: PPI++'s power-tuned weight,
        ``Cov(Y, f) / ((1 + n/N) Var(f))`` clipped to [0, 1]. A number fixes
        it: 1 is the original PPI (Angelopoulos et al. 2023), 0 the gold-only
        (classical) interval.
    method : {'clt', 'bootstrap'}
        ``"clt"``: ``theta +/- z SE`` with
        ``SE^2 = lam^2 Var_U(f) / N + Var_L(Y - lam f) / n`` (plug-in
        variances over inputs, ``ppi_py``'s ``ppi_mean_ci``; ``lam`` treated
        as fixed). ``"bootstrap"``: percentile interval of the same
        estimator (``lam`` re-tuned in each replicate) over ``n_resamples``
        cluster resamples, labeled and unlabeled inputs drawn independently.
    n_resamples : int
        Bootstrap replicates (``method="bootstrap"`` only).
    rng : int, numpy.random.Generator or numpy.random.SeedSequence, optional
        Seed of the bootstrap (SPEC 7).

    Returns
    -------
    PPIResult
        ``estimate``, ``low``, ``high``, ``standard_error``, ``n_labeled``,
        ``n_unlabeled``, ``lam`` (Series by group with ``by``).

    See Also
    --------
    rogan_gladen : the correction of a 0/1 judge by its error rates.

    References
    ----------
    A. N. Angelopoulos, J. C. Duchi, T. Zrnic (2023). PPI++: Efficient
    prediction-powered inference. arXiv:2311.01453.
    A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic
    (2023). Prediction-powered inference. Science 382, 669-674.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evalci.judge import ppi_mean
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2000) < 0.6                      # true outcomes
    >>> judge = np.where(truth, rng.random(2000) < 0.95, rng.random(2000) < 0.3)
    >>> gold = np.where(np.arange(2000) < 200, truth, np.nan)  # 200 labeled
    >>> df = pd.DataFrame({"judge": judge.astype(int), "gold": gold})
    >>> print(f"truth {truth.mean():.3f}, judge alone {df.judge.mean():.3f}")
    truth 0.605, judge alone 0.693
    >>> res = ppi_mean(df, "judge", "gold")
    >>> print(f"{res.estimate:.3f} [{res.low:.3f}, {res.high:.3f}] lam={res.lam:.2f}")
    0.556 [0.504, 0.608] lam=0.67
    """
    if gold is None:
        raise ValueError(
            "`gold` is required: the column of gold scores (NaN where unlabeled)."
        )
    args = _judge_iv(
        data, judge, gold, cluster, by, confidence_level, method, PPI_METHODS,
        n_resamples, binary=False,
    )  # fmt: skip
    lam = _lam_iv(lam)
    ins = _inputs(data, args)
    n_lab, n_unl = _counts(ins, 2, 1, gold=True)
    lab = ins.labeled
    shift_y = _group_sums(ins.y[lab, None], ins.group[lab], ins.n_groups)[:, 0] / n_lab
    shift_f = _group_sums(ins.f_all[:, None], ins.group, ins.n_groups)[:, 0] / (
        n_lab + n_unl
    )
    t_lab, t_unl = _ppi_stats(ins, shift_y, shift_f)
    s_lab = _group_sums(t_lab, ins.group[lab], ins.n_groups)
    s_unl = _group_sums(t_unl, ins.group[~lab], ins.n_groups)
    theta, se, lam_hat = _ppi_from_sums(s_lab, s_unl, lam)
    if method == "clt":
        z = _z(args.confidence_level)
        low, high = theta - z * se, theta + z * se
    else:

        def replicate(sl, su):
            return _ppi_from_sums(sl, su, lam)[0]

        parts = [(ins.group[lab], t_lab), (ins.group[~lab], t_unl)]
        reps = _bootstrap(parts, ins.n_groups, replicate, args.n_resamples, rng)
        low, high, se = _percentile(reps, args.confidence_level)
    if np.any(se == 0):
        warn(
            "the standard error is zero (every labeled input has the same gold and "
            "judge score, and the judge is constant): the interval has zero width.",
            DegenerateDataWarning,
        )
    return PPIResult._from_arrays(
        groups=ins.groups,
        estimate=theta + shift_y,
        low=low + shift_y,
        high=high + shift_y,
        standard_error=se,
        n_labeled=n_lab,
        n_unlabeled=n_unl,
        lam=lam_hat,
        method=method,
        confidence_level=args.confidence_level,
    )


def _lam_iv(lam):
    """``"auto"`` -> None (tune), else a finite float."""
    if isinstance(lam, str) and lam == "auto":
        return None
    if isinstance(lam, str) or not isinstance(lam, numbers.Real):
        raise ValueError(
            f"`lam` must be 'auto' (PPI++'s tuned weight) or a number, e.g. 1 for "
            f"the original PPI or 0 for gold only; got {lam!r}."
        )
    return check_number(lam, "lam", hint=", e.g. 1 for the original PPI")


# ------------------------------------------------------------- bootstrap
def _bootstrap(parts, n_groups: int, replicate, n_resamples: int, rng) -> np.ndarray:
    """(G, B) replicates; each part (e.g. labeled, unlabeled) resampled on its own.

    ``parts`` is a list of ``(group codes, statistics)``, one row per input.
    The inputs of group ``g``'s part ``q`` are one draw unit of the engine's
    index kernel (:func:`evalci.resampling.replicate_sums`, unit index
    ``g * len(parts) + q``, so parts and groups draw independently);
    ``replicate(*sums)`` maps the parts' (B, m) sums to (B,).
    """
    root = seed_sequence(rng)
    reps = np.empty((n_groups, n_resamples))
    for gi in range(n_groups):  # groups are few; replicates are vectorised
        sums = []
        for q, (g, t) in enumerate(parts):
            rows = t[g == gi]
            unit = _rs.Unit(
                index=gi * len(parts) + q,
                T=rows[:, None, :],
                strata_bounds=np.array([0, len(rows)]),
            )
            sums.append(_rs.replicate_sums(unit, root, "cluster", n_resamples)[:, 0])
        reps[gi] = replicate(*sums)
    return reps


def _percentile(reps: np.ndarray, level: float):
    """Percentile interval and SD of (G, B) replicates (NaN replicates dropped)."""
    bad = np.isnan(reps)
    if bad.any():
        warn(
            f"{int(bad.sum())} bootstrap replicates are undefined (e.g. a resample "
            "with sensitivity + specificity <= 1) and were dropped.",
            DegenerateDataWarning,
        )
    alpha = 1 - level
    low = np.nanquantile(reps, alpha / 2, axis=-1)
    high = np.nanquantile(reps, 1 - alpha / 2, axis=-1)
    return low, high, np.nanstd(reps, axis=-1, ddof=1)


# ------------------------------------------------------------- Rogan-Gladen
def _rg_from_sums(s_lab, p, sens, spec):
    """Corrected prevalence (unclipped), vectorised; rates estimated if ``sens`` is None."""
    if sens is None:
        tp, pos, tn, neg = np.moveaxis(s_lab, -1, 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            sens, spec = tp / pos, tn / neg
    j = sens + spec - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(j > 0, (p + spec - 1) / j, np.nan), sens, spec


def _rg_variance(ins: _Inputs, theta, p, sens, spec, known: bool, obs_mask):
    """Delta-method variance (Greenland 1988, eq. 4), cluster-robust over inputs.

    ``Var = [Var p + theta^2 Var Se + (1 - theta)^2 Var Sp
    - 2 theta (1 - theta) Cov(Se, Sp)] / (Se + Sp - 1)^2``, with ``Var p``
    the plug-in variance of the mean of per-input means and the ratio
    variances from per-input residual sums, ``sum_i (tp_i - Se pos_i)^2 /
    P^2`` (``ddof=0``; at k=1 these are ``p(1-p)/N``, ``Se(1-Se)/n_1`` and
    ``Sp(1-Sp)/n_0``, and the covariance is 0).
    """
    G = ins.n_groups
    go, fo = ins.group[obs_mask], ins.f_all[obs_mask]
    n_obs = np.bincount(go, minlength=G)
    var_p = np.bincount(go, weights=(fo - p[go]) ** 2, minlength=G) / n_obs**2
    j = sens + spec - 1
    if known:
        return var_p / j**2
    lab = ins.labeled
    gl = ins.group[lab]
    tp, pos, tn, neg = ins.sums[lab].T
    r_se = tp - sens[gl] * pos
    r_sp = tn - spec[gl] * neg
    pos_t = np.bincount(gl, weights=pos, minlength=G)
    neg_t = np.bincount(gl, weights=neg, minlength=G)
    var_se = np.bincount(gl, weights=r_se**2, minlength=G) / pos_t**2
    var_sp = np.bincount(gl, weights=r_sp**2, minlength=G) / neg_t**2
    cov = np.bincount(gl, weights=r_se * r_sp, minlength=G) / (pos_t * neg_t)
    th = theta
    num = var_p + th**2 * var_se + (1 - th) ** 2 * var_sp - 2 * th * (1 - th) * cov
    return num / j**2


def rogan_gladen(
    data: pd.DataFrame,
    judge: str,
    cluster=None,
    *,
    gold: str | None = None,
    sensitivity=None,
    specificity=None,
    by=None,
    confidence_level: float = 0.95,
    method: str = "delta",
    n_resamples: int = 9999,
    rng=None,
) -> RoganGladenResult:
    """The true positive rate behind a 0/1 judge, corrected for its errors.

    The judge says 1 with probability
    ``p = Se * prevalence + (1 - Sp) * (1 - prevalence)``, so
    ``prevalence = (p + Sp - 1) / (Se + Sp - 1)`` (Rogan & Gladen 1978),
    clipped to [0, 1]. ``Se = P(judge = 1 | gold = 1)`` and
    ``Sp = P(judge = 0 | gold = 0)`` are either known (``sensitivity``,
    ``specificity``: then ``p`` is the judge's rate over every input) or
    estimated from the gold rows (``gold``: then ``p`` is the judge's rate
    over the unlabeled inputs, so that the two parts are independent). Valid
    when the judge errs at the same rates on every input.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, group]). Never modified.
    judge : str
        Column of the judge's 0/1 verdicts; no missing values.
    cluster : str or list of str, optional
        Column(s) identifying the input. ``None``: every row is an input.
    gold : str, optional
        Column of 0/1 gold labels, NaN on unlabeled rows. Give either
        ``gold`` or both ``sensitivity`` and ``specificity``.
    sensitivity, specificity : float, optional
        Known error rates of the judge, in [0, 1] with
        ``sensitivity + specificity > 1``.
    by : str or list of str, optional
        Column(s) to group by: one correction per group (rates estimated per
        group too).
    confidence_level : float
        Two-sided level.
    method : {'delta', 'bootstrap'}
        ``"delta"``: ``estimate +/- z SE`` with the delta-method SE of
        Greenland (1988) made cluster-robust (see the module docstring), then
        clipped to [0, 1]. ``"bootstrap"``: percentile interval of the
        clipped estimator over ``n_resamples`` resamples of the inputs
        (labeled and unlabeled drawn independently).
    n_resamples : int
        Bootstrap replicates (``method="bootstrap"`` only).
    rng : int, numpy.random.Generator or numpy.random.SeedSequence, optional
        Seed of the bootstrap (SPEC 7).

    Returns
    -------
    RoganGladenResult

    References
    ----------
    W. J. Rogan, B. Gladen (1978). Estimating prevalence from the results of
    a screening test. American Journal of Epidemiology 107(1), 71-76.
    S. Greenland (1988). Variance estimation for epidemiologic effect
    estimates under misclassification. Statistics in Medicine 7, 745-757.

    Examples
    --------
    A judge that passes 95% of correct answers and 30% of wrong ones:

    >>> import numpy as np, pandas as pd
    >>> from evalci.judge import rogan_gladen
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2000) < 0.6
    >>> judge = np.where(truth, rng.random(2000) < 0.95, rng.random(2000) < 0.3)
    >>> df = pd.DataFrame({"judge": judge.astype(int)})
    >>> res = rogan_gladen(df, "judge", sensitivity=0.95, specificity=0.7)
    >>> print(f"{res.observed:.3f} -> {res.estimate:.3f} [{res.low:.3f}, {res.high:.3f}]")
    0.693 -> 0.605 [0.574, 0.636]
    """
    known = sensitivity is not None or specificity is not None
    if known == (gold is not None) or (
        known and (sensitivity is None or specificity is None)
    ):
        raise ValueError(
            "give either `gold` (a column of 0/1 gold labels, to estimate the "
            "judge's error rates) or both `sensitivity` and `specificity` (known "
            "rates), not both and not neither."
        )
    args = _judge_iv(
        data, judge, gold, cluster, by, confidence_level, method, RG_METHODS,
        n_resamples, binary=True,
    )  # fmt: skip
    ins = _inputs(data, args)
    n_lab, n_unl = _counts(ins, 1, 1, gold=not known)
    sens0 = spec0 = None
    if known:
        sens0 = check_number(sensitivity, "sensitivity", low=0, high=1)
        spec0 = check_number(specificity, "specificity", low=0, high=1)
        _useful_iv(sens0, spec0, "")
        n_lab, n_unl = np.zeros_like(n_lab), n_lab + n_unl
    obs = np.ones_like(ins.labeled) if known else ~ins.labeled
    p = _group_sums(ins.f_all[obs, None], ins.group[obs], ins.n_groups)[:, 0] / n_unl
    s_lab = _group_sums(ins.sums[ins.labeled], ins.group[ins.labeled], ins.n_groups)
    if not known:
        _rates_iv(s_lab, ins.groups)
    theta, sens, spec = _rg_from_sums(s_lab, p, sens0, spec0)
    sens, spec = np.broadcast_to(sens, p.shape), np.broadcast_to(spec, p.shape)
    if method == "delta":
        se = np.sqrt(_rg_variance(ins, theta, p, sens, spec, known, obs))
        z = _z(args.confidence_level)
        low, high = np.clip(theta - z * se, 0, 1), np.clip(theta + z * se, 0, 1)
    else:
        reps = _rg_bootstrap(ins, obs, sens0, spec0, args, rng)
        low, high, se = _percentile(reps, args.confidence_level)
    _warn_clipped(theta, p, spec, ins.groups)
    return RoganGladenResult._from_arrays(
        groups=ins.groups,
        estimate=np.clip(theta, 0, 1),
        low=low,
        high=high,
        standard_error=se,
        n_labeled=n_lab,
        n_unlabeled=n_unl,
        observed=p,
        sensitivity=sens,
        specificity=spec,
        method=method,
        confidence_level=args.confidence_level,
    )


def _rg_bootstrap(ins: _Inputs, obs, sens0, spec0, args: _Args, rng) -> np.ndarray:
    """Replicates of the clipped estimator: observed-rate inputs and gold inputs apart."""
    t_obs = np.column_stack([np.ones(int(obs.sum())), ins.f_all[obs]])
    parts = [(ins.group[obs], t_obs)]
    if sens0 is None:
        parts.append((ins.group[ins.labeled], ins.sums[ins.labeled]))

    def replicate(so, sl=None):
        est = _rg_from_sums(sl, so[:, 1] / so[:, 0], sens0, spec0)[0]
        return np.clip(est, 0, 1)

    return _bootstrap(parts, ins.n_groups, replicate, args.n_resamples, rng)


def _useful_iv(sens, spec, where: str) -> None:
    """Refuse ``sens + spec <= 1``: the judge then carries no information (or inverts)."""
    if sens + spec <= 1:
        raise ValueError(
            f"sensitivity + specificity must be > 1 for the Rogan-Gladen correction"
            f"{where}; got {sens:.4g} + {spec:.4g} = {sens + spec:.4g}. At 1 the "
            "judge's verdicts are independent of the truth; below 1 it is worse than "
            "chance (flip its verdicts)."
        )


def _rates_iv(s_lab: np.ndarray, groups) -> None:
    """Refuse gold without positives or negatives, and useless estimated rates."""
    tp, pos, tn, neg = s_lab.T
    for gi in range(len(pos)):
        where = _where(groups, gi)
        for n, what, rate in ((pos, "1", "sensitivity"), (neg, "0", "specificity")):
            if n[gi] == 0:
                raise ValueError(
                    f"no gold row is {what}{where}, so the judge's {rate} cannot be "
                    "estimated; label more inputs, or pass `sensitivity` and "
                    "`specificity` if they are known."
                )
        _useful_iv(
            tp[gi] / pos[gi], tn[gi] / neg[gi], f" (estimated on the gold rows{where})"
        )


def _warn_clipped(theta, p, spec, groups) -> None:
    """Warn where the unclipped correction falls outside [0, 1]."""
    out = (theta < 0) | (theta > 1)
    if out.any():
        gi = int(np.argmax(out))
        side = "below 1 - specificity" if theta[gi] < 0 else "above the sensitivity"
        warn(
            f"the judge's positive rate {p[gi]:.4g} is {side}{_where(groups, gi)}, so "
            f"the corrected prevalence {theta[gi]:.4g} lies outside [0, 1] and was "
            "clipped; the error rates may be wrong for these data (differential "
            "misclassification) or too few inputs were scored.",
            DegenerateDataWarning,
        )
