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
from evalci.analytic import analytic_ci

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


def test_bounds_clt_weight_input_by_hand(df):
    r = analytic_ci(df, "y", "input", missing="bounds")
    # scored part: each run weighted 1/2 (its input's attempted runs)
    a = np.array([0.5, 0.5, 1.0, 0.5])  # sum of w*y per scored input
    b = np.array([0.5, 1.0, 1.0, 1.0])  # sum of w
    est = a.sum() / b.sum()
    se = np.sqrt(4 / 3 * ((a - est * b) ** 2).sum()) / b.sum()
    c = (0.5 + 1 + 1 + 0 + 1) / 5  # mean of the inputs' scored shares
    lo, hi = est - Z * se, est + Z * se
    assert r.estimate == pytest.approx(5 / 7, rel=1e-12)
    assert r.standard_error == pytest.approx(se, rel=1e-12)
    assert r.share_scored == pytest.approx(c, rel=1e-12)
    assert (r.low_scored, r.high_scored) == pytest.approx((lo, hi), rel=1e-12)
    assert (r.low, r.high) == pytest.approx((c * lo, c * hi + 1 - c), rel=1e-12)
    # the score of every attempted sample, if each missing one were 0 or 1
    for fill in (0.0, 1.0):
        truth = df.fillna({"y": fill}).groupby("input").y.mean().mean()
        assert r.low <= truth <= r.high
    # the same scored part and share as the bootstrap's bounds
    boot = evalci.cluster_ci(df, "y", cluster="input", missing="bounds",
                             n_resamples=200, rng=0)  # fmt: skip
    assert boot.estimate == pytest.approx(r.estimate, rel=1e-12)
    assert boot.share_scored == pytest.approx(r.share_scored, rel=1e-12)


def test_bounds_clt_weight_run_by_hand(df):
    r = analytic_ci(df, "y", "input", missing="bounds", weight="run")
    scored = analytic_ci(df.dropna(subset=["y"]), "y", "input", weight="run")
    c = 7 / 10  # scored runs of attempted runs
    assert r.share_scored == pytest.approx(c)
    assert r.estimate == pytest.approx(5 / 7, rel=1e-12)
    assert (r.low, r.high) == pytest.approx(
        (c * scored.low, c * scored.high + 1 - c), rel=1e-12
    )


def wilson(x, n, z=Z):
    p = x / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def test_bounds_wilson_k1_by_hand():
    y = [1.0] * 12 + [0.0] * 4 + [np.nan] * 4  # 12 of 16 scored right, 4 errored
    r = analytic_ci(pd.DataFrame({"y": y}), "y", method="wilson", missing="bounds")
    lo, hi = wilson(12, 16)
    c = 16 / 20
    assert r.estimate == pytest.approx(0.75)
    assert (r.low_scored, r.high_scored) == pytest.approx((lo, hi), rel=1e-12)
    assert (r.low, r.high) == pytest.approx((c * lo, c * hi + 1 - c), rel=1e-12)
    assert r.to_frame().n_missing[0] == 4
    z = quiet(pd.DataFrame({"y": y}), "y", method="wilson", missing="zero")
    assert (z.low, z.high) == pytest.approx(wilson(12, 20), rel=1e-12)


def test_bounds_per_group():
    frame = pd.DataFrame({
        "system": ["A"] * 10 + ["B"] * 10,
        "y": [1.0] * 8 + [np.nan] * 2 + [0.0] * 5 + [1.0] * 5,
    })  # fmt: skip
    r = analytic_ci(frame, "y", method="wilson", by="system", missing="bounds")
    (la, ha), (lb, hb) = wilson(8, 8), wilson(5, 10)
    assert r.share_scored.tolist() == pytest.approx([0.8, 1.0])
    assert r.low.tolist() == pytest.approx([0.8 * la, lb], rel=1e-12)
    assert r.high.tolist() == pytest.approx([0.8 * ha + 0.2, hb], rel=1e-12)
    assert r.to_frame().n_missing.tolist() == [2, 0]


def test_clustered_wilson_bounds_rescale_its_scored_part(df):
    r = analytic_ci(df, "y", "input", method="clustered-wilson", missing="bounds")
    c = r.share_scored
    assert r.estimate == pytest.approx(5 / 7, rel=1e-12)
    assert r.low == pytest.approx(c * r.low_scored, rel=1e-12)
    assert r.high == pytest.approx(c * r.high_scored + 1 - c, rel=1e-12)
    assert 0 <= r.low_scored < r.estimate < r.high_scored <= 1


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
