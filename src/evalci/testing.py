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

import numpy as np

from .compare import ComparisonResult, decide
from .results import BootstrapResult

__all__ = ["assert_score_above", "assert_no_regression", "assert_results_equal"]


def assert_score_above(result, threshold: float) -> None:
    """The whole interval of every group's score lies above ``threshold``.

    Parameters
    ----------
    result : BootstrapResult or AnalyticResult
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
