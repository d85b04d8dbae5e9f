"""``missing=`` in paired comparisons, reports and leaderboards (issue 22).

Each policy is checked against a hand computation: the table filled by hand
(slow, obvious loops) and compared as complete data, or the worst-case gaps
computed from per-input means by hand.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci import MissingDataWarning, MissingInputsWarning

B = 2000


def _holed(seed=0, n=30, k=3, scores=False):
    """Two systems, ``k`` runs per input; b misses runs of 3 inputs (one
    input wholly), a lacks input 7 altogether (a one-sided input). 0/1
    values, or ``scores`` in [0, 1]."""
    rng = np.random.default_rng(seed)

    def draw(s):
        p = 0.5 if s == "a" else 0.65
        return rng.beta(2 * p, 2 * (1 - p)) if scores else float(rng.random() < p)

    rows = [(i, s, r, draw(s)) for i in range(n) for s in ("a", "b") for r in range(k)]
    df = pd.DataFrame(rows, columns=["input", "system", "run", "y"])
    b = df.system == "b"
    df.loc[b & (df.input == 2) & (df.run == 0), "y"] = np.nan
    df.loc[b & (df.input == 4) & (df.run > 0), "y"] = np.nan
    df.loc[b & (df.input == 5), "y"] = np.nan  # no scored run at all
    df["error"] = np.where(df.y.isna(), "RuntimeError: timeout", None)
    return df[~((df.system == "a") & (df.input == 7))].reset_index(drop=True)


def _by_hand(df, fill_a, fill_b):
    """Missing runs filled, and a's missing input 7 given b's runs, filled:
    with loops over the rows, the obvious way."""
    out = []
    for row in df.itertuples(index=False):
        y = row.y
        if np.isnan(y):
            y = fill_a if row.system == "a" else fill_b
        out.append((row.input, row.system, row.run, y))
    for row in df.itertuples(index=False):
        if row.system == "b" and row.input == 7:
            out.append((row.input, "a", row.run, fill_a))
    return pd.DataFrame(out, columns=["input", "system", "run", "y"])


def _input_means(frame):
    return frame.groupby(["system", "input"]).y.mean().unstack("system")


def test_zero_is_the_comparison_of_the_table_filled_by_hand():
    df = _holed()
    res = evalci.compare(df, "y", "input", missing="zero", n_resamples=B, rng=1)
    ref = evalci.compare(_by_hand(df, 0.0, 0.0), "y", "input", n_resamples=B, rng=1)
    pd.testing.assert_frame_equal(res.table, ref.table)
    # runs, not inputs: input 2 keeps its 3 runs for b (one a failure), input 7
    # enters a with b's 3 runs, all failures; every one of the 30 inputs stays
    assert res.table.n_inputs[0] == 30
    c = res.counts
    assert c.loc["b", ["n_attempted", "n_scored", "n_missing"]].tolist() == [90, 84, 6]
    assert c.loc["b", "n_errored"] == 6 and c.loc["b", "n_inputs_unscored"] == 1
    assert c.loc["a", "n_inputs_missing"] == 1 and c.loc["a", "n_missing"] == 0


def test_drop_is_the_comparison_of_the_shared_scored_inputs():
    df = _holed()
    with (
        pytest.warns(MissingDataWarning, match="left out 6 of 177 runs"),
        pytest.warns(MissingInputsWarning, match="dropped 2 of 30 inputs"),
    ):
        res = evalci.compare(df, "y", "input", missing="drop", n_resamples=B, rng=1)
    # by hand: the scored runs, then the inputs both systems still have
    kept = df[df.y.notna() & ~df.input.isin([5, 7])]
    ref = evalci.compare(kept, "y", "input", n_resamples=B, rng=1)
    pd.testing.assert_frame_equal(res.table, ref.table)


def test_raise_names_counts_and_choices():
    df = _holed()
    with pytest.raises(ValueError, match=r"6 missing values \(of 177 rows\) in 3 inp"):
        evalci.compare(df, "y", "input")
    with pytest.raises(ValueError, match=r"2 inputs are present for some.*'zero'"):
        evalci.compare(df.dropna(subset=["y"]), "y", "input")
    with pytest.raises(ValueError, match=r"`missing` must be one of"):
        evalci.compare(df, "y", "input", missing="ignore")


def test_bounds_are_the_worst_case_gaps_computed_by_hand():
    df = _holed()
    res = evalci.compare(df, "y", "input", missing="bounds", n_resamples=B, rng=1)
    t = res.table.iloc[0]
    low_fill = _input_means(_by_hand(df, 1.0, 0.0))  # b's missing 0, a's 1
    high_fill = _input_means(_by_hand(df, 0.0, 1.0))
    assert t.gap_bound_low == pytest.approx((low_fill.b - low_fill.a).mean(), abs=1e-12)
    assert t.gap_bound_high == pytest.approx(
        (high_fill.b - high_fill.a).mean(), abs=1e-12
    )
    # shares scored: each input weighs 1/30; b has 2/3, 1/3 and 0 of 3 runs
    # scored on inputs 2, 4 and 5; a has nothing of input 7
    assert t.share_scored_b == pytest.approx((27 + 2 / 3 + 1 / 3) / 30)
    assert t.share_scored_a == pytest.approx(29 / 30)
    # the scored parts: each scored run weighted by 1 / its input's runs
    sb = df[(df.system == "b") & df.y.notna()]
    assert t.estimate_b == pytest.approx(sb.y.sum() / len(sb))  # k = 3 everywhere
    assert t.gap == pytest.approx(t.estimate_b - t.estimate_a)
    assert t.low <= t.gap_bound_low <= t.gap_bound_high <= t.high
    assert t.explanation.startswith("worst-case bounds")
    err = res.mc_error()
    assert (err[["mc_error_low", "mc_error_high"]].to_numpy() > 0).all()


def test_each_bound_is_the_paired_bootstrap_of_its_filling():
    # the complete-data comparison of each worst-case filling gives the same
    # end up to Monte-Carlo error (scores in [0, 1], so the replicates are
    # continuous; 4 combined MC standard errors: a false failure about once
    # in 16,000 runs)
    df = _holed(scores=True)
    res = evalci.compare(df, "y", "input", missing="bounds", n_resamples=B, rng=1)
    t = res.table.iloc[0]
    low_fill = _input_means(_by_hand(df, 1.0, 0.0))
    high_fill = _input_means(_by_hand(df, 0.0, 1.0))
    for fill, end in ((low_fill, "low"), (high_fill, "high")):
        filled = fill.stack().rename("y").reset_index()
        ref = evalci.compare(filled, "y", "input", n_resamples=B, rng=2)
        err = ref.mc_error()[f"mc_error_{end}"][0]
        assert abs(ref.table[end][0] - t[end]) < 4 * 2**0.5 * err


def test_bounds_without_anything_missing_is_the_plain_comparison():
    df = _holed().dropna(subset=["y"])
    df = df[~df.input.isin([5, 7])]
    a = evalci.compare(df, "y", "input", missing="bounds", n_resamples=500, rng=0)
    b = evalci.compare(df, "y", "input", n_resamples=500, rng=0)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.counts is None


def test_bounds_refuse_what_has_no_known_range():
    df = _holed().assign(y=lambda d: d.y * 3)
    with pytest.raises(ValueError, match=r"scores in \[0, 1\]"):
        evalci.compare(df, "y", "input", missing="bounds")
    with pytest.raises(ValueError, match=r"metric='mean' of 0/1"):
        evalci.compare(
            _holed(),
            "y",
            "input",
            missing="bounds",
            metric=evalci.metrics.quantile(0.5, "y"),
        )


@pytest.mark.slow
def test_bounds_cover_when_missingness_depends_on_the_outcome():
    # Missing not at random: b's failures go missing 4x as often as its
    # successes (30% vs 7.5%), a loses nothing. The true gap E[p_b - p_a] is
    # 0.0499 (p ~ Beta(2, 2), p_b = min(p + 0.05, 1), by quadrature). "drop"
    # scores b on its successes mostly and covers about 0.7 of the time;
    # "bounds" covers whatever the missing runs hold (measured 0.98 over 200
    # trials). 150 trials: P(bounds < 0.93 | true 0.975) ~ 2e-4; P(drop > 0.85
    # | true 0.7) < 1e-6.
    truth, trials = 0.049878, 150
    hits = {"drop": 0, "bounds": 0}
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        p = rng.beta(2, 2, 60)
        y = np.stack(
            [
                rng.random((60, 2)) < p[:, None],
                rng.random((60, 2)) < np.minimum(p + 0.05, 1)[:, None],
            ]
        )
        lose = rng.random(y.shape) < np.where(y, 0.075, 0.3)
        lose[0] = False
        vals = np.where(lose, np.nan, y.astype(float))
        idx = pd.MultiIndex.from_product([["a", "b"], range(60), range(2)])
        df = (
            pd.Series(vals.ravel(), index=idx, name="y")
            .rename_axis(["system", "input", "run"])
            .reset_index()
        )
        for m in hits:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = evalci.compare(
                    df, "y", "input", missing=m, n_resamples=300, rng=seed
                )
            hits[m] += bool(t.table.low[0] <= truth <= t.table.high[0])
    assert hits["bounds"] / trials >= 0.93
    assert hits["drop"] / trials <= 0.85


def test_report_says_what_was_missing():
    df = _holed()
    rep = evalci.report(df, "y", "input", missing="zero", n_resamples=500, rng=0)
    text = rep.to_text()
    assert "missing samples: a: scored 87 of 87 runs; 1 input with no row" in text
    assert "b: scored 84 of 90 runs; 6 errored; 1 input with no scored run" in text
    assert (
        "Missing samples:" in rep.to_markdown()
        and "Missing samples:" in rep.to_html(plots=False)
    )
    bounded = evalci.report(df, "y", "input", missing="bounds", n_resamples=500, rng=0)
    s = bounded.scores.to_frame().set_index("system")
    assert s.loc["b", "share_scored"] == pytest.approx((27 + 2 / 3 + 1 / 3) / 30)
    # the score bounds and the gap bounds agree on the point (c * scored part)
    g = bounded.comparison.table.iloc[0]
    assert g.estimate_b == pytest.approx(s.loc["b", "estimate"])


def test_leaderboard_takes_zero_and_refuses_bounds():
    df = _holed()
    board = evalci.leaderboard(df, "y", "input", missing="zero", n_resamples=500, rng=0)
    ref = evalci.leaderboard(
        _by_hand(df, 0.0, 0.0), "y", "input", n_resamples=500, rng=0
    )
    pd.testing.assert_frame_equal(board.table, ref.table)
    assert board.scores.counts.n_missing.tolist() == [0, 6]
    with pytest.raises(
        ValueError, match=r"missing='bounds' is not supported by leader"
    ):
        evalci.leaderboard(df, "y", "input", missing="bounds")


def test_the_users_frame_is_untouched():
    df = _holed()
    before = df.copy()
    for m in ("zero", "bounds"):
        evalci.compare(df, "y", "input", missing=m, n_resamples=200, rng=0)
    pd.testing.assert_frame_equal(df, before)


def test_dask_keeps_the_numbers_and_the_causes():
    # the reduction on the workers keeps why a sample is missing (as a flag),
    # so a Dask report, refusal and counts say "6 errored" as pandas does
    dd = pytest.importorskip("dask.dataframe")
    df = _holed()
    ddf = dd.from_pandas(df, npartitions=3)
    for m in ("zero", "bounds"):
        kw = dict(missing=m, n_resamples=300, rng=0)
        want = evalci.report(df, "y", "input", **kw).to_text()
        assert evalci.report(ddf, "y", "input", **kw).to_text() == want
        assert "6 errored" in want
    with pytest.raises(ValueError, match=r"6 missing values .*; 6 errored"):
        evalci.compare(ddf, "y", "input", n_resamples=100)
    with pytest.raises(ValueError, match=r"6 missing values .*; 6 errored"):
        evalci.cluster_ci(ddf, "y", "input", by="system", n_resamples=100)


def test_bounds_with_a_system_wholly_missing_says_why_its_numbers_are_nan():
    # issue 34: the gap's scored part was NaN without a word. The interval is
    # the honest one: b's score anywhere in [0, 1], a's from its own runs
    df = pd.DataFrame({
        "input": list(range(20)) * 2,
        "system": ["a"] * 20 + ["b"] * 20,
        "y": [float(i % 2) for i in range(20)] + [np.nan] * 20,
    })  # fmt: skip
    with pytest.warns(MissingDataWarning, match=r"system 'b' has no scored run"):
        r = evalci.compare(df, "y", "input", missing="bounds", n_resamples=B, rng=0)
    t = r.table.iloc[0]
    assert np.isnan(t.estimate_b) and np.isnan(t.gap)
    assert (t.gap_bound_low, t.gap_bound_high) == (-0.5, 0.5)  # b in [0, 1]
    a = evalci.cluster_ci(df[df.system == "a"], "y", "input", n_resamples=B, rng=0)
    assert t.low == pytest.approx(-a.high) and t.high == pytest.approx(1 - a.low)
    assert t.share_scored_b == 0
