"""``analytic_ci(..., missing=)``: the four policies against hand computations.

Issue 22. The policies, messages and counts are the bootstrap's
(:mod:`evalci.engine.missing`); the closed-form numbers are worked out here
by hand on a small table: 5 inputs x 2 runs, three runs errored (input
``d`` wholly).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci.methods.analytic import analytic_ci

Z = stats.norm.ppf(0.975)
# five inputs keep the hand computations short; the normal interval says so
pytestmark = pytest.mark.filterwarnings(
    "ignore::evalci._base.warnings.FewClustersWarning"
)


@pytest.fixture
def df() -> pd.DataFrame:
    return pd.DataFrame({
        "input": list("aabbccddee"),
        "y": [1, np.nan, 0, 1, 1, 1, np.nan, np.nan, 0, 1.0],
        "error": [None, "boom", None, None, None, None, "x", "x", None, None],
    })  # fmt: skip


def quiet(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analytic_ci(*args, **kw)


def test_raise_is_the_default_and_counts(df):
    for kw in ({}, {"missing": "raise"}):
        with pytest.raises(ValueError) as e:
            analytic_ci(df, "y", "input", **kw)
        text = str(e.value)
        assert text.startswith("`value` column 'y' has 3 missing values (of 10 rows)")
        assert "in 2 inputs ('a', 'd'); 3 errored" in text
        assert "'drop' (leave them out; changes the estimand)" in text
        assert "'bounds' (worst-case bounds)" in text
        assert "data.dropna(subset=['y'])" in text


def test_an_unknown_policy_is_refused(df):
    with pytest.raises(
        ValueError, match=r"`missing` must be one of 'raise'.*not 'nope'"
    ):
        analytic_ci(df, "y", "input", missing="nope")
    with pytest.raises(ValueError, match=r"`missing` must be one of"):
        analytic_ci(df.dropna(), "y", "input", missing="nope")


def test_no_missing_value_changes_nothing(df):
    full = df.fillna({"y": 1.0})
    a, b = (
        analytic_ci(full, "y", "input"),
        analytic_ci(full, "y", "input", missing="bounds"),
    )
    assert (a.estimate, a.low, a.high) == (b.estimate, b.low, b.high)
    assert b.counts is None and b.share_scored is None


def test_drop_by_hand(df):
    with pytest.warns(evalci.MissingDataWarning, match="left out 3 of 10 runs"):
        r = analytic_ci(df, "y", "input", missing="drop")
    # per-input means of the scored runs: a 1, b 0.5, c 1, e 0.5 (d has none)
    m = np.array([1, 0.5, 1, 0.5])
    se = m.std(ddof=1) / np.sqrt(4)
    assert r.estimate == pytest.approx(0.75, abs=1e-15)
    assert r.standard_error == pytest.approx(se, rel=1e-12)
    assert (r.low, r.high) == pytest.approx((0.75 - Z * se, 0.75 + Z * se), rel=1e-12)
    assert (r.n_inputs, r.n_runs, r.missing) == (4, 7, "drop")
    row = r.to_frame().iloc[0]
    assert (row.n_attempted, row.n_scored, row.n_missing, row.n_errored) == (
        10,
        7,
        3,
        3,
    )
    assert row.n_inputs_unscored == 1


def test_zero_by_hand(df):
    r = analytic_ci(df, "y", "input", missing="zero")
    m = np.array([0.5, 0.5, 1, 0, 0.5])  # a missing run is a failure
    se = m.std(ddof=1) / np.sqrt(5)
    assert r.estimate == pytest.approx(0.5, abs=1e-15)
    assert (r.low, r.high) == pytest.approx((0.5 - Z * se, 0.5 + Z * se), rel=1e-12)
    assert (r.n_inputs, r.n_runs, r.missing) == (5, 10, "zero")
    assert r.to_frame().n_missing[0] == 3


def _clt_by_hand(means):
    """The clt interval of per-input means: mean +- z * sd / sqrt(N)."""
    m = np.asarray(means, dtype=float)
    se = m.std(ddof=1) / np.sqrt(len(m))
    return m.mean() - Z * se, m.mean() + Z * se, se


def test_bounds_clt_weight_input_by_hand(df):
    r = analytic_ci(df, "y", "input", missing="bounds")
    # every missing run a failure, then a success: per-input means a..e
    lo, _, se0 = _clt_by_hand([0.5, 0.5, 1, 0, 0.5])
    _, hi, se1 = _clt_by_hand([1, 0.5, 1, 1, 0.5])
    c = (0.5 + 1 + 1 + 0 + 1) / 5  # mean of the inputs' scored shares
    assert (r.low, r.high) == pytest.approx((lo, hi), rel=1e-12)
    assert r.standard_error == pytest.approx(max(se0, se1), rel=1e-12)
    assert r.share_scored == pytest.approx(c, rel=1e-12)
    # scored part: each run weighted 1/2 (its input's attempted runs)
    assert r.estimate == pytest.approx(5 / 7, rel=1e-12)
    assert (r.bound_low, r.bound_high) == pytest.approx((0.5, 0.8), rel=1e-12)
    assert r.bound_low == pytest.approx(c * r.estimate, rel=1e-12)
    assert (r.n_inputs, r.n_runs) == (5, 10)  # every attempted run
    # the same scored part and share as the bootstrap's bounds
    boot = evalci.cluster_ci(df, "y", cluster="input", missing="bounds",
                             n_resamples=200, rng=0)  # fmt: skip
    assert boot.estimate == pytest.approx(r.estimate, rel=1e-12)
    assert boot.share_scored == r.share_scored
    assert (boot.bound_low, boot.bound_high) == (r.bound_low, r.bound_high)


def test_bounds_clt_weight_run_by_hand(df):
    r = analytic_ci(df, "y", "input", missing="bounds", weight="run")
    zero = analytic_ci(df.fillna({"y": 0.0}), "y", "input", weight="run")
    one = analytic_ci(df.fillna({"y": 1.0}), "y", "input", weight="run")
    c = 7 / 10  # scored runs of attempted runs
    assert r.share_scored == pytest.approx(c)
    assert r.estimate == pytest.approx(5 / 7, rel=1e-12)
    assert (r.low, r.high) == (zero.low, one.high)


def wilson(x, n, z=Z):
    p = x / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def test_bounds_wilson_k1_by_hand():
    y = [1.0] * 12 + [0.0] * 4 + [np.nan] * 4  # 12 of 16 scored right, 4 errored
    r = analytic_ci(pd.DataFrame({"y": y}), "y", method="wilson", missing="bounds")
    # low: Wilson's lower limit with the 4 a failure (12 of 20); high: its
    # upper limit with the 4 a success (16 of 20)
    assert r.estimate == pytest.approx(0.75)
    assert (r.low, r.high) == pytest.approx(
        (wilson(12, 20)[0], wilson(16, 20)[1]), rel=1e-12
    )
    assert (r.bound_low, r.bound_high, r.share_scored) == (0.6, 0.8, 0.8)
    assert r.to_frame().n_missing[0] == 4
    z = quiet(pd.DataFrame({"y": y}), "y", method="wilson", missing="zero")
    assert (z.low, z.high) == pytest.approx(wilson(12, 20), rel=1e-12)


def test_bounds_per_group():
    frame = pd.DataFrame({
        "system": ["A"] * 10 + ["B"] * 10,
        "y": [1.0] * 8 + [np.nan] * 2 + [0.0] * 5 + [1.0] * 5,
    })  # fmt: skip
    r = analytic_ci(frame, "y", method="wilson", by="system", missing="bounds")
    assert r.share_scored.tolist() == pytest.approx([0.8, 1.0])
    # A: 8 of 10 with the 2 failures, 10 of 10 (Wilson's upper limit 1) with
    # the 2 successes; B has nothing missing: its own Wilson interval
    assert r.low.tolist() == pytest.approx([wilson(8, 10)[0], wilson(5, 10)[0]])
    assert r.high.tolist() == pytest.approx([1.0, wilson(5, 10)[1]], rel=1e-12)
    assert r.to_frame().n_missing.tolist() == [2, 0]


def test_clustered_wilson_bounds_are_the_fillings_ends(df):
    kw = dict(method="clustered-wilson")
    r = analytic_ci(df, "y", "input", missing="bounds", **kw)
    zero = analytic_ci(df.fillna({"y": 0.0}), "y", "input", **kw)
    one = analytic_ci(df.fillna({"y": 1.0}), "y", "input", **kw)
    assert (r.low, r.high) == (zero.low, one.high)
    assert r.estimate == pytest.approx(5 / 7, rel=1e-12)
    assert 0 <= r.low < r.bound_low < r.estimate < r.bound_high < r.high <= 1


def test_bounds_keep_a_wholly_missing_group_as_0_to_1():
    # issue 34: the group had silently disappeared; under "drop" it is named
    frame = pd.DataFrame({
        "q": list(range(12)) * 2,
        "system": ["A"] * 12 + ["B"] * 12,
        "y": [1.0, 0.0, 1.0] * 4 + [np.nan] * 12,
    })  # fmt: skip
    for method in ("clt", "wilson", "clopper-pearson", "clustered-wilson"):
        with pytest.warns(evalci.MissingDataWarning, match=r"group 'B' has no scored"):
            r = analytic_ci(frame, "y", "q", by="system", method=method,
                            missing="bounds")  # fmt: skip
        assert (r.low["B"], r.high["B"]) == (0.0, 1.0)
        assert np.isnan(r.estimate["B"]) and r.to_frame().n_scored.tolist() == [12, 0]
    with pytest.warns(
        evalci.MissingDataWarning, match=r"'B' has no scored run and is left out"
    ):
        r = analytic_ci(frame, "y", "q", by="system", missing="drop")
    assert r.groups.tolist() == ["A"]


def test_bounds_refuse_the_rule_of_three():
    frame = pd.DataFrame({"y": [1.0] * 20 + [np.nan] * 2})
    with pytest.raises(
        ValueError, match=r"missing='bounds' with method='rule-of-three'"
    ):
        analytic_ci(frame, "y", method="rule-of-three", missing="bounds")


def test_zero_and_bounds_need_scores_on_0_1(df):
    for m in ("zero", "bounds"):
        with pytest.raises(
            ValueError, match=rf"missing='{m}' needs scores in \[0, 1\]"
        ):
            analytic_ci(df.assign(y=df.y * 3), "y", "input", missing=m)
    quiet(df.assign(y=df.y * 3), "y", "input", missing="drop")  # any range


def test_kappa_takes_raise_and_drop_only():
    frame = pd.DataFrame({"pred": list("ABABBA") * 5, "label": list("AABBBA") * 5})
    frame.loc[[0, 7], "pred"] = None
    frame.loc[3, "label"] = None
    with pytest.raises(ValueError, match=r"`value` column 'pred' has 2 missing"):
        analytic_ci(frame, "pred", method="fce", truth="label")
    for m in ("zero", "bounds"):
        with pytest.raises(
            ValueError, match=rf"missing='{m}' is not defined for Cohen's kappa"
        ):
            analytic_ci(frame, "pred", method="fce", truth="label", missing=m)
    with pytest.warns(evalci.MissingDataWarning, match="left out 3 of 30 runs"):
        r = analytic_ci(frame, "pred", method="fce", truth="label", missing="drop")
    ref = analytic_ci(frame.dropna(), "pred", method="fce", truth="label")
    assert (r.estimate, r.low, r.high) == (ref.estimate, ref.low, ref.high)
    assert r.n_inputs == 27 and r.to_frame().n_missing[0] == 3


def test_the_repr_says_what_was_missing():
    df = pd.DataFrame(
        {
            "q": [1, 1, 2, 2, 3, 3],
            "y": [1, np.nan, 0, 1, 1, 1],
            "error": [None, "boom", None, None, None, None],
        }
    )
    with pytest.warns(evalci.MissingDataWarning):
        r = evalci.analytic_ci(df, "y", "q", missing="drop")
    assert "missing ('drop'): scored 5 of 6 runs; 1 errored" in repr(r)
    with pytest.warns(evalci.DegenerateDataWarning):  # group b: all 1
        grouped = evalci.analytic_ci(
            df.assign(s=["a"] * 3 + ["b"] * 3), "y", "q", by="s", missing="zero"
        )
    assert "missing ('zero'): scored 5 of 6 runs; 1 errored" in repr(grouped)
    plain = evalci.analytic_ci(df.dropna(subset=["y"]), "y", "q")
    assert "missing" not in repr(plain)
