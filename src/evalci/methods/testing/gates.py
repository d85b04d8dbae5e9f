"""Assertions for users' own tests: gate a release on what the interval supports.

Each assertion raises ``AssertionError`` with the numbers that decided it, so
a failing CI job says why.

Examples
--------
>>> import evalci
>>> from evalci import testing
>>> df = evalci.load_example()
>>> res = df.evalci.cluster_ci("correct", cluster="input_id", by="system", rng=0)
>>> testing.assert_score_above(res, 0.5)
>>> gaps = df.evalci.compare("correct", cluster="input_id", rng=0)
>>> testing.assert_no_regression(gaps)
Traceback (most recent call last):
...
AssertionError: regression: openai/gpt-5.4-mini-2026-03-17 is worse than openai/gpt-5-nano-2025-08-07: gap -0.05859 [-0.1141, -0.00404]
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_frame,
    check_name,
    check_number,
)
from evalci.engine.results import BootstrapResult
from evalci.methods.compare import ComparisonResult, decide

__all__ = [
    "assert_score_above",
    "assert_no_regression",
    "assert_no_regression_sequential",
    "assert_results_equal",
    "confidence_sequence",
    "sequential_gap",
    "SequentialGap",
]


def assert_score_above(result, threshold: float) -> None:
    """The whole interval of every group's score lies above ``threshold``.

    Parameters
    ----------
    result : BootstrapResult or AnalyticResult
        Scores with intervals (one per group with ``by``); every group's
        ``low`` must exceed ``threshold``.
    threshold : float
        E.g. the score a release must be shown to reach.
    """
    frame = result.to_frame()
    bad = frame[~(frame["low"] > threshold)]
    if len(bad):
        groups = [c for c in frame.columns if c not in _RESULT_COLUMNS]
        where = ", ".join(
            f"{' '.join(str(r[g]) for g in groups) or 'score'}: "
            f"{r['estimate']:.4g} [{r['low']:.4g}, {r['high']:.4g}]"
            for _, r in bad.iterrows()
        )
        raise AssertionError(f"not shown to be above {threshold:g}: {where}")


_RESULT_COLUMNS = {
    "estimate",
    "low",
    "high",
    "standard_error",
    "n_inputs",
    "n_runs",
    "confidence_level",
    "method",
    "strategy",
    "weight",
    "metric",
    "z0",
    "acceleration",
    "rule_of_three",
}


def assert_no_regression(
    comparison: ComparisonResult, mme: float | None = None
) -> None:
    """No pair is shown to be worse, by the rule :func:`evalci.decide` applies.

    Without ``mme`` a pair regresses when its gap interval lies below 0. With
    ``mme``, as in :func:`evalci.compare`, a significant loss (interval below
    0) regresses when its estimate is a loss of at least ``mme``, or when the
    whole interval lies below ``-mme``: a missed regression costs more than a
    false alarm (seed 002).

    Parameters
    ----------
    comparison : ComparisonResult
        Paired gaps ``b - a`` from :func:`evalci.compare` (``b`` the candidate).
    mme : float, optional
        Minimum meaningful effect, on the metric's scale (0.02 = 2 points).
        Default None: any gap interval below 0 is a regression.

    Raises
    ------
    AssertionError
        Naming each pair shown worse, with its gap and interval.

    Examples
    --------
    >>> import evalci
    >>> from evalci import testing
    >>> df = evalci.load_example()
    >>> gaps = df.evalci.compare("correct", cluster="input_id", rng=0)
    >>> testing.assert_no_regression(gaps, mme=0.1)  # a loss under 10 points is fine
    """
    if not isinstance(comparison, ComparisonResult):
        raise TypeError("`comparison` must be a ComparisonResult (evalci.compare).")
    t = comparison.table
    worse = [
        decide(lo, hi, mme, estimate=gap)[0] == "worse"
        for lo, hi, gap in zip(t["low"], t["high"], t["gap"], strict=True)
    ]
    bad = t[np.asarray(worse, dtype=bool)]
    if len(bad):
        where = "; ".join(
            f"{r.b} is worse than {r.a}: gap {r.gap:.4g} [{r.low:.4g}, {r.high:.4g}]"
            for r in bad.itertuples()
        )
        raise AssertionError(f"regression: {where}")


def assert_results_equal(a: BootstrapResult, b: BootstrapResult) -> None:
    """Two bootstrap results are the same: estimates, intervals and replicates.

    For reproducibility tests: the same seed must give the same numbers, on
    any row order and on numpy or Dask.

    Parameters
    ----------
    a, b : BootstrapResult
        The two results; ``estimate``, ``low``, ``high``, ``standard_error``
        and ``bootstrap_distribution`` must agree to a relative 1e-12 (NaN
        equals NaN).

    Raises
    ------
    AssertionError
        Naming the first field that differs.

    Examples
    --------
    >>> import evalci
    >>> from evalci import testing
    >>> df = evalci.load_example()
    >>> kw = dict(cluster="input_id", by="system", rng=0, n_resamples=200)
    >>> r1 = df.evalci.cluster_ci("correct", **kw)
    >>> r2 = df.sample(frac=1, random_state=1).evalci.cluster_ci("correct", **kw)
    >>> testing.assert_results_equal(r1, r2)  # row order does not matter
    """
    for name in ("estimate", "low", "high", "standard_error"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        if not np.allclose(x, y, rtol=1e-12, atol=0, equal_nan=True):
            raise AssertionError(f"{name} differs: {x} != {y}")
    if not np.allclose(
        a.bootstrap_distribution,
        b.bootstrap_distribution,
        rtol=1e-12,
        atol=0,
        equal_nan=True,
    ):
        raise AssertionError("bootstrap distributions differ")


# ------------------------------------------------ gates under repeated looks
def confidence_sequence(total, t, sigma, alpha=0.05, planned=500):
    """Half-width of a time-uniform confidence sequence for a mean, at ``t`` observations.

    The two-sided normal-mixture boundary of Robbins (1970) as given by
    Howard, Ramdas, McAuliffe & Sekhon (2021, "Time-uniform, nonparametric,
    nonasymptotic confidence sequences", Ann. Statist. 49(2), eq. (14)): for
    independent observations, ``sigma``-sub-Gaussian around their mean mu
    (any variable in an interval of length ``2 sigma`` is, by Hoeffding's
    lemma), ``P(exists t: |S_t - t mu| >= sqrt((t s^2 + r) log((t s^2 + r) /
    (r alpha^2)))) <= alpha``, so ``total / t +- half`` covers mu at every ``t`` at once, however often
    it is looked at. ``r`` makes the boundary tightest near ``planned``
    observations (their approximate optimum, ``r = s^2 planned / (2 log(1 /
    alpha) + log(1 + 2 log(1 / alpha)))``). Vectorised over ``total`` and ``t``.

    Parameters
    ----------
    total : float or array_like
        The sum ``S_t`` of the first ``t`` observations.
    t : int or array_like
        How many observations ``total`` sums (broadcast against ``total``).
    sigma : float
        Sub-Gaussian scale of one observation: half the length of the
        interval it lies in (a paired difference of two scores in
        ``[lo, hi]`` has ``sigma = hi - lo``).
    alpha : float
        Chance that the sequence ever misses the mean; default 0.05.
    planned : float
        The number of observations where the boundary should be tightest,
        at least 1; default 500. The sequence is valid for any value.

    Returns
    -------
    mean, half : ndarray
        ``total / t`` and the half-width: ``mean +- half`` is the interval.

    Examples
    --------
    >>> from evalci import testing
    >>> mean, half = testing.confidence_sequence(60.0, 100, 1.0)
    >>> float(mean), bool(half > 0.2)
    (0.6, True)
    """
    total, t, sigma, alpha, planned = _sequence_iv(total, t, sigma, alpha, planned)
    # eq. (14) with sigma^2 factored out of v = sigma^2 t and rho = sigma^2 r,
    # and the logarithm split, so that no square or ratio overflows:
    # half = sigma sqrt((1 + r / t) (log(t + r) - log(r) - 2 log(alpha)) / t)
    la = -np.log(alpha)
    r = planned / (2.0 * la + np.log1p(2.0 * la))
    log_ratio = np.log(t + r) - np.log(r) + 2.0 * la
    with np.errstate(over="ignore"):
        half = sigma * np.sqrt((1.0 + r / t) * log_ratio / t)
    if not np.isfinite(half).all():
        raise ValueError(
            f"`sigma`={as_written(sigma)} is too large: the half-width overflows float64; "
            "rescale the scores (sigma is half the length of their range)."
        )
    return total / t, half


def _real_array(x, name: str, what: str) -> np.ndarray:
    """``x`` as a float array of finite numbers (booleans, strings, objects refused)."""
    try:
        raw = np.asarray(x)
        if raw.dtype == object and all(_is_real(v) for v in raw.reshape(-1)):
            raw = raw.astype(float)  # Python ints beyond int64
    except (TypeError, ValueError, OverflowError):  # ragged, or beyond float64
        raw = np.asarray(None)
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be {what}; got {_show(x)}.")
    arr = raw.astype(float)
    if not np.isfinite(arr).all():
        bad = arr[~np.isfinite(arr)].reshape(-1)[0]
        raise ValueError(f"`{name}` must be finite ({what}); got {as_written(bad)}.")
    return arr


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _show(x) -> str:
    text = as_written(x)
    return text if len(text) <= 60 else f"{type(x).__name__} {text[:50]}..."


def _sequence_iv(total, t, sigma, alpha, planned):
    """:func:`confidence_sequence`'s checks: one error per argument, naming it."""
    total = _real_array(total, "total", "a number or an array of numbers (sums)")
    t = _real_array(t, "t", "a positive integer or an array of them (counts)")
    if t.size and ((t < 1).any() or (t != np.round(t)).any()):
        bad = t[(t < 1) | (t != np.round(t))].reshape(-1)[0]
        raise ValueError(
            f"`t` must count observations: integers >= 1; got {as_written(bad)}."
        )
    try:
        np.broadcast_shapes(total.shape, t.shape)
    except ValueError:
        raise ValueError(
            f"`total` (shape {total.shape}) and `t` (shape {t.shape}) must "
            "broadcast: one count per sum, or one count for all."
        ) from None
    sigma = check_number(
        sigma,
        "sigma",
        low=0,
        low_open=True,
        hint=", e.g. 1 for scores in [0, 1] differenced",
    )
    alpha = check_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    planned = check_number(planned, "planned", low=1, hint=", e.g. 500 observations")
    return total, t, sigma, alpha, planned


@dataclass(frozen=True)
class SequentialGap:
    """A paired gap ``b - a`` with a confidence sequence (valid at every look).

    Returned by :func:`sequential_gap`.

    Attributes
    ----------
    a, b : object
        The two systems; the gap is ``b - a``.
    gap : float
        Mean over inputs of the paired difference of per-input means.
    low, high : float
        The confidence sequence at this number of inputs.
    n_inputs : int
        Inputs with runs of both systems.
    alpha : float
        Chance of a wrong decision over every look.
    margin : float
        The non-inferiority margin :attr:`decision` uses.
    """

    a: object
    b: object
    gap: float
    low: float
    high: float
    n_inputs: int
    alpha: float
    margin: float

    @property
    def decision(self) -> str:
        """``"worse"``, ``"not worse"`` (shown above ``-margin``) or ``"continue"``."""
        if self.high < -self.margin:
            return "worse"
        if self.low > -self.margin:
            return "not worse"
        return "continue"


def sequential_gap(
    data: pd.DataFrame,
    value: str,
    cluster,
    system: str,
    a,
    b,
    *,
    margin: float = 0.0,
    alpha: float = 0.05,
    bounds=(0.0, 1.0),
    planned_inputs: int = 500,
) -> SequentialGap:
    """The gap ``b - a`` over the inputs seen so far, with an anytime-valid interval.

    For release gates that check after every run: each input's paired
    difference (the mean of ``b``'s runs minus the mean of ``a``'s) is an
    independent draw from the population of inputs, bounded by ``bounds``
    (the score's range), so the confidence sequence of
    :func:`confidence_sequence` covers the true gap at every number of
    inputs at once. Looking after every run, and stopping at the first
    decision, keeps the chance of a wrong "worse" or "not worse" below
    ``alpha`` -- which repeated use of a fixed-sample interval does not (at
    40 looks its false-alarm rate is several times alpha). The price is
    width: the sequence is wider than one fixed-sample interval at the same
    N. Inputs present for one system only are left out.

    Parameters
    ----------
    data : pandas.DataFrame
        The tidy table: one row per (input, run, system).
    value : str
        The outcome column: numbers within ``bounds``.
    cluster : str or list of str
        The input column(s); each input's runs are averaged first.
    system : str
        The system column.
    a, b : object
        The two systems (values of ``system``); the gap is ``b - a``.
    margin : float
        Non-negative non-inferiority margin: ``b`` is "worse" when the whole
        sequence lies below ``-margin``, "not worse" when it lies above.
        Default 0.
    alpha : float
        Chance of a wrong decision over every look at once; default 0.05.
    bounds : (float, float)
        The score's range ``(low, high)``, default ``(0, 1)``: the guarantee
        rests on it, and values outside raise.
    planned_inputs : int
        The number of inputs at which the sequence should be narrowest
        (``planned`` of :func:`confidence_sequence`); default 500.

    Returns
    -------
    SequentialGap

    Examples
    --------
    >>> import evalci
    >>> from evalci import testing
    >>> df = evalci.load_example()
    >>> a, b = sorted(df.system.unique())
    >>> g = testing.sequential_gap(df, "correct", "input_id", "system", a, b)
    >>> g.n_inputs, g.decision
    (198, 'continue')
    """
    return _sequential_gap(
        data, value, cluster, system, a, b, margin, alpha, bounds, planned_inputs,
        names=("a", "b"),
    )  # fmt: skip


def _gate_iv(data, value, cluster, system, a, b, margin, alpha, bounds, planned, names):
    """:func:`sequential_gap`'s checks: one error per argument, naming it and the fix."""
    check_frame(data)
    check_name(value, "value")
    check_name(system, "system")
    if cluster is None or (isinstance(cluster, (list, tuple)) and not cluster):
        raise ValueError(
            "`cluster` is required: the input column(s), e.g. 'input_id'; each "
            "input's runs are averaged first."
        )
    keys = as_columns(cluster, "cluster", allow_none=False)
    for key in keys:
        check_name(key, "cluster")
    check_columns(data, [value], "value")
    check_columns(data, keys, "cluster")
    check_columns(data, [system], "system")
    used = [value, system, *keys]
    if len(set(used)) < len(used):
        raise ValueError(
            "`value`, `cluster` and `system` must name different columns; got "
            f"value={as_written(value)}, cluster={as_written(cluster)}, system={as_written(system)}."
        )
    dup = [c for c in used if (data.columns == c).sum() > 1]
    if dup:
        raise ValueError(
            f"column {as_written(dup[0])} appears more than once in the DataFrame; rename "
            "the copies first."
        )
    for key in keys:
        na = data[key].isna()
        if na.any():
            raise ValueError(
                f"`cluster` column {as_written(key)} has {int(na.sum())} missing values: those "
                "rows would belong to no input; drop them or fill the key."
            )
    for name, s in zip(names, (a, b), strict=True):
        try:
            hash(s)
        except TypeError:
            raise TypeError(
                f"`{name}` must be one system (a value of column {as_written(system)}), not "
                f"{type(s).__name__}."
            ) from None
    if a == b:
        raise ValueError(
            f"`{names[0]}` and `{names[1]}` name the same system {as_written(a)}; compare two "
            "different ones."
        )
    alpha = check_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    lo, hi = _bounds_iv(bounds)
    margin = check_number(margin, "margin", low=0)
    if margin >= hi - lo:
        raise ValueError(
            f"`margin` must be less than the score range {hi - lo:g} (`bounds`); "
            f"got {as_written(margin)}: no gap could then be shown worse."
        )
    planned = check_number(planned, "planned_inputs", low=1, hint=", e.g. 500")
    return keys, margin, alpha, lo, hi, planned


def _bounds_iv(bounds) -> tuple[float, float]:
    """``bounds`` as two finite floats ``low < high``."""
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__"):
        bounds_ok = False
    else:
        bounds_ok = len(bounds) == 2
    if not bounds_ok:
        raise ValueError(
            f"`bounds` must be (low, high), the score's range, e.g. (0, 1); got "
            f"{_show(bounds)}."
        )
    lo, hi = (check_number(x, "bounds", hint=", e.g. (0, 1)") for x in bounds)
    if not hi > lo:
        raise ValueError(f"`bounds` must be (low, high) with low < high; got {bounds}.")
    if not np.isfinite(hi - lo):
        raise ValueError(
            f"`bounds` {bounds} span more than float64 holds; rescale the scores."
        )
    return lo, hi


def _sequential_gap(
    data, value, cluster, system, a, b, margin, alpha, bounds, planned, names
) -> SequentialGap:
    keys, margin, alpha, lo, hi, planned = _gate_iv(
        data, value, cluster, system, a, b, margin, alpha, bounds, planned, names
    )
    raw = data[value]
    numeric = pd.api.types.is_numeric_dtype(raw) or pd.api.types.is_bool_dtype(raw)
    if not numeric or pd.api.types.is_complex_dtype(raw):
        raise ValueError(
            f"`value` column {as_written(value)} is not numeric (dtype {raw.dtype}); the gate "
            "needs scores within `bounds`, e.g. df[value].astype(float)."
        )
    y = pd.to_numeric(raw, errors="coerce")
    if y.isna().any() or ((y < lo) | (y > hi)).any():
        raise ValueError(
            f"`value` column {as_written(value)} must hold numbers within `bounds`={bounds} "
            "(no missing values): the guarantee rests on that range."
        )
    per = (
        data.assign(**{value: y}).groupby([system, *keys], observed=True)[value].mean()
    )
    wide = per.unstack(system)
    for name, s in zip(names, (a, b), strict=True):
        if s not in wide.columns:
            raise ValueError(
                f"`{name}`: system {as_written(s)} is not in column {as_written(system)}; its systems "
                f"are {list(wide.columns)[:10]}."
            )
    d = (wide[b] - wide[a]).dropna().to_numpy()
    if len(d) < 1:
        raise ValueError(
            f"no input has runs of both {as_written(a)} and {as_written(b)}: the gap needs inputs run "
            "on both systems."
        )
    mean, half = confidence_sequence(d.sum(), len(d), hi - lo, alpha, planned)
    return SequentialGap(
        a, b, float(mean), float(mean - half), float(mean + half), len(d), alpha, margin
    )


def assert_no_regression_sequential(
    data,
    value,
    cluster,
    system,
    baseline,
    candidate,
    *,
    margin: float = 0.0,
    alpha: float = 0.05,
    bounds=(0.0, 1.0),
    planned_inputs: int = 500,
) -> SequentialGap:
    """Fail when ``candidate`` is shown worse than ``baseline`` by more than ``margin``.

    Safe to call after every run (anytime-valid): if the candidate is in truth
    no worse, the chance that any of the checks ever fails is below
    ``alpha``. Returns the :class:`SequentialGap` when it passes. Arguments
    as :func:`sequential_gap`.

    Parameters
    ----------
    data : pandas.DataFrame
        The tidy table: one row per (input, run, system).
    value : str
        The outcome column (numbers within ``bounds``).
    cluster : str or list of str
        The input column(s).
    system : str
        The system column.
    baseline, candidate : object
        The two systems; the gap is ``candidate - baseline``.
    margin, alpha, bounds, planned_inputs
        As in :func:`sequential_gap`.

    Returns
    -------
    SequentialGap

    Raises
    ------
    AssertionError
        When the candidate is shown worse by more than ``margin``.

    Examples
    --------
    >>> import evalci
    >>> from evalci import testing
    >>> df = evalci.load_example()
    >>> a, b = sorted(df.system.unique())
    >>> testing.assert_no_regression_sequential(
    ...     df, "correct", "input_id", "system", a, b).decision
    'continue'
    """
    g = _sequential_gap(
        data, value, cluster, system, baseline, candidate, margin, alpha, bounds,
        planned_inputs, names=("baseline", "candidate"),
    )  # fmt: skip
    if g.decision == "worse":
        raise AssertionError(
            f"regression (anytime-valid, alpha={g.alpha:g}): {candidate} is worse "
            f"than {baseline} by more than {g.margin:g}: gap {g.gap:.4g} "
            f"[{g.low:.4g}, {g.high:.4g}] over {g.n_inputs} inputs"
        )
    return g
