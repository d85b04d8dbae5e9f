"""Paired comparisons: seed 002's worked examples, p-values, multiplicity, real data."""

import importlib
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats
from statsmodels.stats.multitest import multipletests

import evalci

from conftest import shared_data

# the module of compare (``evalci.compare`` is the function)
decisions_module = importlib.import_module("evalci.methods.compare.decisions")


def win_loss_tie(wins, losses, ties):
    """Two systems at k=1: b beats a on `wins` inputs, loses on `losses`, ties."""
    n = wins + losses + ties
    a = np.r_[
        np.zeros(wins), np.ones(losses), np.zeros(ties // 2), np.ones(ties - ties // 2)
    ]
    b = np.r_[
        np.ones(wins), np.zeros(losses), np.zeros(ties // 2), np.ones(ties - ties // 2)
    ]
    ids = np.arange(n)
    return pd.DataFrame(
        {
            "input_id": np.r_[ids, ids],
            "system": ["A"] * n + ["B"] * n,
            "correct": np.r_[a, b].astype(int),
        }
    )


def test_seed002_12_9_19_split():
    # Seed 002, "Worked Example: The 12-9-19 Split": gap 0.075, SE about 0.115,
    # 95% interval "from about -0.15 to +0.30".
    df = win_loss_tie(12, 9, 19)
    clt = df.evalci.compare("correct", cluster="input_id", method="clt")
    row = clt.table.iloc[0]
    assert row.gap == pytest.approx(0.075)
    assert row.standard_error == pytest.approx(0.1154, abs=5e-4)
    assert row.low == pytest.approx(-0.15, abs=0.005)
    assert row.high == pytest.approx(0.30, abs=0.005)
    assert (row.wins, row.losses, row.ties) == (12, 9, 19)
    assert row.decision == "no detectable difference"
    boot = df.evalci.compare("correct", cluster="input_id", n_resamples=20_000, rng=0)
    # the bootstrap of the same paired differences: same interval up to the
    # bootstrap's smaller (N-1)/N variance and the 1/40 grid
    assert boot.table.low[0] == pytest.approx(-0.15, abs=0.03)
    assert boot.table.high[0] == pytest.approx(0.30, abs=0.03)


def test_seed002_120_90_190_split():
    # Seed 002, "Worked Example: Larger N": about 0.004 to 0.146 -> excludes 0.
    df = win_loss_tie(120, 90, 190)
    clt = df.evalci.compare("correct", cluster="input_id", method="clt")
    assert clt.table.low[0] == pytest.approx(0.004, abs=0.001)
    assert clt.table.high[0] == pytest.approx(0.146, abs=0.001)
    assert clt.table.decision[0] == "better"
    # the CLT p-value is the normal test of the mean paired difference
    d = np.r_[np.ones(120), -np.ones(90), np.zeros(190)]
    z = d.mean() / (d.std(ddof=1) / np.sqrt(400))
    assert clt.table.pvalue[0] == pytest.approx(2 * stats.norm.sf(z))
    boot = df.evalci.compare(
        "correct", cluster="input_id", n_resamples=20_000, rng=1, mme=0.02
    )
    assert boot.table.low[0] > 0
    assert boot.table.decision[0] == "inconclusive"  # excludes 0, not 0.02
    assert boot.table.excludes_zero[0] and not boot.table.clears_mme[0]


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_pvalue_inverts_the_interval(method):
    # At level 1 - p the interval's near endpoint sits at 0 (up to the
    # quantile interpolation between neighbouring replicates).
    df = win_loss_tie(120, 90, 190)
    res = df.evalci.compare(
        "correct", cluster="input_id", method=method, n_resamples=20_000, rng=2
    )
    p = res.table.pvalue[0]
    assert 0.005 < p < 0.2
    gaps = res.gap_distribution[0]
    est = res.table.gap[0]
    full = evalci.cluster_ci(
        df,
        "correct",
        cluster="input_id",
        by="system",
        method=method,
        n_resamples=20_000,
        rng=2,
    )
    assert np.array_equal(
        full.bootstrap_distribution[1] - full.bootstrap_distribution[0], gaps
    )
    low, _, _ = evalci.engine.intervals.interval(
        gaps[None],
        np.array([est]),
        method,
        1 - p,
        accel=np.array([_gap_accel(df)]) if method == "bca" else None,
    )
    assert low[0] == pytest.approx(0.0, abs=0.004)


def _gap_accel(df):
    # leave-one-input-out jackknife of the paired gap, computed directly
    wide = df.pivot(index="input_id", columns="system", values="correct")
    d = (wide.B - wide.A).to_numpy()
    jack = (d.sum() - d) / (len(d) - 1)
    u = jack.mean() - jack
    return (u**3).sum() / (6 * (u**2).sum() ** 1.5)


def test_decision_rule_words():
    assert evalci.decide(0.01, 0.05)[0] == "better"
    assert evalci.decide(-0.05, -0.01)[0] == "worse"
    assert evalci.decide(-0.01, 0.05)[0] == "no detectable difference"
    assert evalci.decide(0.03, 0.05, mme=0.02)[0] == "better"
    assert evalci.decide(-0.05, -0.03, mme=0.02)[0] == "worse"
    assert evalci.decide(-0.01, 0.01, mme=0.02)[0] == "equivalent within ±mme"
    assert evalci.decide(-0.01, 0.05, mme=0.02)[0] == "inconclusive"
    decision, why = evalci.decide(0.01, 0.05, mme=0.02)
    assert decision == "inconclusive" and "may be smaller" in why


def test_bonferroni_widens_and_holm_matches_statsmodels(gpqa):
    df = pd.concat(
        [gpqa, gpqa.assign(system="copy", correct=gpqa.correct[::-1].values)]
    )
    plain = df.evalci.compare("correct", cluster="input_id", n_resamples=4000, rng=0)
    bonf = df.evalci.compare(
        "correct", cluster="input_id", n_resamples=4000, rng=0, adjust="bonferroni"
    )
    holm = df.evalci.compare(
        "correct", cluster="input_id", n_resamples=4000, rng=0, adjust="holm"
    )
    m = len(plain.table)
    assert m == 3
    assert (
        (bonf.table.high - bonf.table.low) > (plain.table.high - plain.table.low)
    ).all()
    np.testing.assert_allclose(
        bonf.table.pvalue_adjusted, np.minimum(plain.table.pvalue * m, 1)
    )
    ref = multipletests(plain.table.pvalue, method="holm")[1]
    np.testing.assert_allclose(holm.table.pvalue_adjusted, ref)
    # the simultaneous interval is the (1 - 0.05/3) interval of the same draws
    lvl = evalci.engine.intervals.interval(
        plain.gap_distribution, plain.table.gap.to_numpy(), "percentile", 1 - 0.05 / 3
    )
    np.testing.assert_allclose(bonf.table.low, lvl[0])


def test_baseline_and_pairs(gpqa):
    df = pd.concat([gpqa, gpqa.assign(system="zz")])
    base = df.evalci.compare(
        "correct", cluster="input_id", baseline="zz", n_resamples=200, rng=0
    )
    assert list(base.table.a) == ["zz", "zz"]
    systems = sorted(gpqa.system.unique())
    two = df.evalci.compare(
        "correct",
        cluster="input_id",
        n_resamples=200,
        rng=0,
        pairs=[(systems[1], systems[0])],
    )
    assert len(two.table) == 1 and two.table.b[0] == systems[0]
    with pytest.raises(ValueError, match=r"`baseline`: 'nope' is not a system"):
        df.evalci.compare("correct", cluster="input_id", baseline="nope")
    with pytest.raises(ValueError, match=r"pass `baseline` or `pairs`, not both"):
        df.evalci.compare(
            "correct", cluster="input_id", baseline="zz", pairs=[("zz", "zz")]
        )


def test_missing_inputs_raise_or_drop(gpqa):
    holes = gpqa[~((gpqa.system == gpqa.system.iloc[0]) & (gpqa.input_id < "recB"))]
    with pytest.raises(
        ValueError,
        match=r"inputs are present for some systems but not "
        r"others.*missing='drop'",
    ):
        holes.evalci.compare("correct", cluster="input_id")
    with pytest.warns(evalci.MissingInputsWarning, match=r"dropped \d+ of 198 inputs"):
        res = holes.evalci.compare(
            "correct", cluster="input_id", missing="drop", n_resamples=200, rng=0
        )
    assert res.table.n_inputs[0] < 198


def test_compare_errors(gpqa):
    with pytest.raises(ValueError, match=r"`method` must be one of"):
        gpqa.evalci.compare("correct", cluster="input_id", method="t")
    with pytest.raises(ValueError, match=r"`adjust` must be"):
        gpqa.evalci.compare("correct", cluster="input_id", adjust="fdr")
    with pytest.raises(ValueError, match=r"`mme` \(minimum meaningful effect\) must"):
        gpqa.evalci.compare("correct", cluster="input_id", mme=-1)
    with pytest.raises(ValueError, match=r"needs at least 2"):
        gpqa[gpqa.system == gpqa.system.iloc[0]].evalci.compare(
            "correct", cluster="input_id"
        )
    with pytest.raises(ValueError, match=r"`system`: column 'model'"):
        gpqa.evalci.compare("correct", cluster="input_id", system="model")


def test_kappa_and_k1_and_callable_comparisons():
    sim = evalci.simulate.confusion_model(150, 3, rng=5)
    other = sim.assign(
        pred=np.where(
            np.random.default_rng(1).random(len(sim)) < 0.2, sim.label, sim.pred
        )
    )
    both = pd.concat([sim.assign(system="a"), other.assign(system="b")])
    res = both.evalci.compare(
        "pred",
        cluster="input_id",
        metric=evalci.metrics.kappa(truth="label"),
        method="bca",
        n_resamples=2000,
        rng=0,
    )
    assert res.table.gap[0] > 0 and res.table.decision[0] == "better"
    assert np.isnan(res.table.wins[0])  # win/loss/tie only for mean-type metrics


def test_gpqa_paired_gap_is_narrower_than_unpaired(gpqa):
    res = gpqa.evalci.compare("correct", cluster="input_id", n_resamples=10_000, rng=0)
    single = gpqa.evalci.cluster_ci(
        "correct", cluster="input_id", by="system", n_resamples=10_000, rng=0
    )
    unpaired_se = np.sqrt((single.standard_error**2).sum())
    assert res.table.standard_error[0] < unpaired_se
    expected = gpqa.groupby("system").correct.mean()
    assert res.table.gap[0] == pytest.approx(expected.iloc[1] - expected.iloc[0])
    xr_res = gpqa.evalci.to_xarray("correct").evalci.compare(n_resamples=10_000, rng=0)
    pd.testing.assert_frame_equal(xr_res.table, res.table)


def test_mmlu_pro_four_systems_holm_stratified():
    df = shared_data("mmlu_pro_4sys_k1.csv")
    res = df.evalci.compare(
        "correct",
        cluster="input_id",
        strata="category",
        adjust="holm",
        n_resamples=2000,
        rng=0,
    )
    assert len(res.table) == 6 and (res.table.n_inputs == 12_032).all()
    acc = df.groupby("system").correct.mean()
    for _, row in res.table.iterrows():
        assert row.gap == pytest.approx(acc[row.b] - acc[row.a])
        assert row.wins + row.losses + row.ties == 12_032
    # McNemar-style discordance agrees with wins/losses at k=1
    wide = df.pivot(index="input_id", columns="system", values="correct")
    row = res.table.iloc[0]
    assert row.wins == ((wide[row.b] == 1) & (wide[row.a] == 0)).sum()
    assert (res.table.pvalue_adjusted >= res.table.pvalue).all()


@pytest.mark.slow
def test_paired_gap_coverage():
    # Simulated paired systems: per-input difficulty shared by both systems,
    # k=3 runs each, true gap 0.05. 300 trials x 1,000 resamples. With true
    # coverage 0.95 the count of covered trials is Binomial(300, 0.95): the
    # bounds [0.90, 0.99] fail with probability < 1e-3
    # (P(X < 270) = 1.5e-4, P(X > 297) = 2.3e-4).
    rng = np.random.default_rng(2024)
    n, k, trials = 150, 3, 300
    covered = 0
    for _ in range(trials):
        base = rng.beta(2, 2, n)
        pa = base
        pb = np.clip(base + 0.05, 0, 1)
        true_gap = 0.05 - _clip_loss()  # population gap: 0.05 less the clipped part
        ya = rng.random((n, k)) < pa[:, None]
        yb = rng.random((n, k)) < pb[:, None]
        ids = np.repeat(np.arange(n), k)
        df = pd.DataFrame(
            {
                "input_id": np.r_[ids, ids],
                "system": ["a"] * (n * k) + ["b"] * (n * k),
                "correct": np.r_[ya.ravel(), yb.ravel()].astype(int),
            }
        )
        res = df.evalci.compare(
            "correct",
            cluster="input_id",
            n_resamples=1000,
            rng=int(rng.integers(2**31)),
        )
        covered += res.table.low[0] <= true_gap <= res.table.high[0]
    assert 0.90 <= covered / trials <= 0.99


def _clip_loss():
    # E[min(p + 0.05, 1) - p] for p ~ Beta(2, 2): 0.05 minus the clipped part
    x = np.linspace(0.95, 1, 20001)
    dens = stats.beta.pdf(x, 2, 2)
    return np.trapezoid((x + 0.05 - 1) * dens, x)


def test_compare_with_a_callable_metric(gpqa):
    fast = gpqa.evalci.compare("correct", cluster="input_id", n_resamples=300, rng=0)
    slow = gpqa.evalci.compare(
        "correct",
        cluster="input_id",
        metric=lambda d: d.correct.mean(),
        n_resamples=300,
        rng=0,
    )
    np.testing.assert_allclose(slow.gap_distribution, fast.gap_distribution)
    assert slow.table.low[0] == pytest.approx(fast.table.low[0])


def test_normal_method_pvalue_inverts_its_interval():
    df = win_loss_tie(120, 90, 190)
    res = df.evalci.compare(
        "correct", cluster="input_id", method="normal", n_resamples=20_000, rng=3
    )
    row = res.table.iloc[0]
    # at level 1 - p the normal interval's lower end is 0
    z = stats.norm.isf(row.pvalue / 2)
    assert row.gap - z * row.standard_error == pytest.approx(0, abs=1e-12)
    # and it is close to the CLT interval of the same paired differences
    clt = df.evalci.compare("correct", cluster="input_id", method="clt")
    assert row.low == pytest.approx(clt.table.low[0], abs=0.004)


# --- issue 8: no silent wrong answers ---------------------------------------


def two_systems(a, b, k=1):
    """Systems A and B on the same inputs; ``a``, ``b``: (N,) or (N, k) outcomes."""
    a, b = np.asarray(a, float).reshape(len(a), -1), np.asarray(b, float)
    b = b.reshape(len(b), -1)
    n, k = a.shape
    ids = np.repeat(np.arange(n), k)
    return pd.DataFrame(
        {
            "input_id": np.r_[ids, ids],
            "run": np.tile(np.arange(k), 2 * n),
            "system": ["A"] * (n * k) + ["B"] * (n * k),
            "correct": np.r_[a.ravel(), b.ravel()],
        }
    )


@pytest.mark.parametrize(
    "metric", ["mean", lambda d: d.correct.mean()], ids=["mean", "callable"]
)
@pytest.mark.filterwarnings("ignore::evalci.SlowMetricWarning")  # a mean, on purpose
def test_dropna_drops_missing_rows_before_pairing(metric):
    # 12-9-19 split at k=1; A's only run of input 0 and B's of input 5 are NaN.
    # missing='drop' must drop those runs *before* checking that every input is
    # present for both systems: inputs 0 and 5 are then unpaired, and dropped.
    df = win_loss_tie(12, 9, 19).astype({"correct": float})
    holes = df.copy()
    holes.loc[(holes.system == "A") & (holes.input_id == 0), "correct"] = np.nan
    holes.loc[(holes.system == "B") & (holes.input_id == 5), "correct"] = np.nan
    before = holes.copy()
    kw = dict(cluster="input_id", metric=metric, n_resamples=2000, rng=0)
    with pytest.raises(
        ValueError, match=r"column 'correct' has 2 missing values \(of 80 rows\)"
    ):
        holes.evalci.compare("correct", **kw)
    with (
        pytest.warns(evalci.MissingInputsWarning, match=r"dropped 2 of 40 inputs"),
        pytest.warns(evalci.MissingDataWarning, match=r"left out 2 of 80 runs"),
    ):
        res = holes.evalci.compare("correct", missing="drop", **kw)
    with (
        pytest.warns(DeprecationWarning, match="dropna=True"),
        pytest.warns(evalci.MissingInputsWarning),
        pytest.warns(evalci.MissingDataWarning),
    ):
        old = holes.evalci.compare("correct", dropna=True, **kw)
    pd.testing.assert_frame_equal(old.table, res.table)
    pd.testing.assert_frame_equal(holes, before)  # the user's frame is untouched
    # the answer is the comparison on the 38 inputs both systems have
    shared = df[~df.input_id.isin([0, 5])]
    ref = shared.evalci.compare("correct", **kw)
    pd.testing.assert_frame_equal(res.table, ref.table)
    np.testing.assert_array_equal(res.gap_distribution, ref.gap_distribution)
    wide = shared.pivot(index="input_id", columns="system", values="correct")
    assert res.table.gap[0] == pytest.approx((wide.B - wide.A).mean())
    assert res.table.n_inputs[0] == 38


@pytest.mark.parametrize("method", ["percentile", "bca", "normal", "clt"])
def test_zero_width_gap_is_not_equivalence(method):
    # Both systems at 100% on 30 inputs: every resample gives gap 0, so the
    # bootstrap interval is [0, 0] -- which says nothing. The gap is bounded by
    # the share of inputs on which the systems differ: 0 of 30, whose exact
    # two-sided 95% upper bound is Clopper-Pearson 1 - 0.025**(1/30) = 0.1157
    # (Clopper & Pearson 1934; about 3.689/30 = 0.123, the two-sided rule of
    # three), above mme = 0.02: inconclusive, not "equivalent".
    df = two_systems(np.ones(30), np.ones(30))
    with pytest.warns(evalci.DegenerateDataWarning, match=r"gap B - A has no spread"):
        res = df.evalci.compare(
            "correct",
            cluster="input_id",
            mme=0.02,
            method=method,
            rng=0,
            n_resamples=2000,
        )
    row = res.table.iloc[0]
    bound = 1 - 0.025 ** (1 / 30)
    assert bound == pytest.approx(0.11570, abs=1e-5)
    assert row.degenerate
    assert (row.low, row.high) == pytest.approx((-bound, bound))
    assert row.decision == "inconclusive"
    assert "zero width" in row.explanation and "0 of 30" in row.explanation
    # equivalence within 0.02 needs 1 - 0.025**(1/n) < 0.02: n >= 183
    assert "needs at least 183 inputs" in row.explanation
    assert not row.excludes_zero and row.pvalue == 1.0  # sign test, 0 differences


def test_zero_width_gap_with_enough_inputs_is_equivalence():
    # n = 200: 1 - 0.025**(1/200) = 0.01828 (3.689/200 = 0.0184) < mme = 0.02
    df = two_systems(np.ones(200), np.ones(200))
    with pytest.warns(evalci.DegenerateDataWarning):
        res = df.evalci.compare(
            "correct", cluster="input_id", mme=0.02, n_resamples=500, rng=0
        )
    row = res.table.iloc[0]
    assert row.high == pytest.approx(1 - 0.025 ** (1 / 200)) and row.high < 0.02
    assert row.decision == "equivalent within ±mme"
    # at a Bonferroni level the bound is wider: 3 pairs, alpha = 0.05 / 3
    three = pd.concat([df, df[df.system == "A"].assign(system="C")])
    with pytest.warns(evalci.DegenerateDataWarning):
        bonf = three.evalci.compare(
            "correct",
            cluster="input_id",
            mme=0.02,
            adjust="bonferroni",
            n_resamples=500,
            rng=0,
        )
    u = 1 - (0.05 / 3 / 2) ** (1 / 200)
    np.testing.assert_allclose(bonf.table.high, u)
    assert (bonf.table.decision == "inconclusive").all()  # 0.0253 > 0.02


def test_zero_width_gap_that_is_not_zero():
    # A wrong and B right on all 30 inputs: the per-input difference is 1 on
    # every input; at most U = 0.1157 of inputs may differ otherwise, so the gap
    # is at least 1 - 2U. The p-value is the exact sign test's, 2 * 0.5**30
    # (= McNemar's exact test with 30 discordant inputs, all one way).
    df = two_systems(np.zeros(30), np.ones(30))
    with pytest.warns(evalci.DegenerateDataWarning):
        res = df.evalci.compare("correct", cluster="input_id", mme=0.02, rng=0)
    row = res.table.iloc[0]
    u = 1 - 0.025 ** (1 / 30)
    assert (row.low, row.high) == pytest.approx((1 - 2 * u, 1.0))
    assert row.pvalue == pytest.approx(stats.binomtest(30, 30, 0.5).pvalue)
    assert not row.pvalue_at_floor and row.decision == "better"


def test_zero_width_gap_without_an_exact_bound_decides_nothing():
    # a callable metric has no per-input scores: no bound, no p-value; Holm then
    # cannot rank the pairs and says so instead of re-ranking around the NaN
    df = two_systems(np.r_[np.ones(20), np.zeros(20)], np.r_[np.ones(20), np.zeros(20)])
    rng = np.random.default_rng(0)
    df = pd.concat(
        [df, df[df.system == "A"].assign(system="C", correct=rng.random(40) < 0.9)]
    )
    df["correct"] = df.correct.astype(float)
    kw = dict(cluster="input_id", metric=lambda d: d.correct.mean(), n_resamples=300)
    with pytest.warns(evalci.DegenerateDataWarning) as rec:
        res = df.evalci.compare("correct", adjust="holm", rng=0, **kw)
    assert any("Holm's step-down adjustment" in str(w.message) for w in rec)
    row = res.table.iloc[0]  # A vs B: identical
    assert row.degenerate and np.isnan(row.pvalue) and np.isnan(row.low)
    assert row.decision == "inconclusive" and "no exact bound" in row.explanation
    assert res.table.pvalue_adjusted.isna().all()
    assert (res.table.decision[1:] != "better").all()  # no claim from NaN
    with pytest.warns(evalci.DegenerateDataWarning):
        bonf = df.evalci.compare("correct", adjust="bonferroni", rng=0, **kw)
    assert bonf.table.pvalue_adjusted.isna().tolist() == [True, False, False]


def test_bca_pvalues_mmlu_pro_biology_floor_and_holm():
    # MMLU-Pro biology (717 inputs, 4 systems, k=1; PROVENANCE.md), all 6
    # pairs with BCa and Holm. Before: 3 of 6 p-values came back NaN (no
    # replicate crosses 0 and the acceleration has the opposite sign:
    # -inf / inf), Holm sorted the NaNs last and multiplied the smallest real
    # p-value by 4 instead of 1 (0.0118 -> 0.047 with rng=0, B=10,000).
    df = shared_data("mmlu_pro_4sys_k1.csv")
    bio = df[df.category == "biology"]
    b = 10_000
    res = bio.evalci.compare(
        "correct",
        cluster="input_id",
        method="bca",
        adjust="holm",
        rng=0,
        n_resamples=b,
    )
    t = res.table
    assert len(t) == 6 and (t.n_inputs == 717).all()
    assert t.pvalue.notna().all() and t.pvalue_adjusted.notna().all()
    gaps = res.gap_distribution
    one_sided = (gaps > 0).all(axis=1) | (gaps < 0).all(axis=1)
    assert one_sided.sum() == 4
    # no replicate crosses 0: the p-value is below the bootstrap's resolution
    np.testing.assert_array_equal(t.pvalue_at_floor, one_sided)
    np.testing.assert_allclose(t.pvalue[one_sided], 1 / b)
    # Holm on the reported p-values equals statsmodels' (Holm 1979)
    ref = multipletests(t.pvalue, method="holm")[1]
    np.testing.assert_allclose(t.pvalue_adjusted, ref)
    # the largest p-value is ranked last: Holm leaves it unchanged
    last = t.pvalue.idxmax()
    assert t.pvalue_adjusted[last] == t.pvalue[last]
    assert 0.005 < t.pvalue[last] < 0.05
    # the adjusted bounds are bounds: (m - rank + 1) / B, flagged
    np.testing.assert_array_equal(t.pvalue_adjusted_at_floor, one_sided)
    np.testing.assert_allclose(t.pvalue_adjusted[one_sided], 6 / b)
    assert "< 0.0001" in repr(res) and "< 0.0006" in repr(res)


def test_bca_pvalue_without_replicates_beyond_zero():
    # No replicate below 0: s = 0 and v = Phi^-1(s) - z0 = -inf. BCa's map
    # v / (1 + a v) tends to 1/a there (Efron 1987, eq. 2.3 solved for the
    # nominal level), so with a < 0 the p-value is 2 Phi(1/a - z0), not NaN.
    rng = np.random.default_rng(0)
    gaps = (1 + 0.01 * rng.standard_normal(4000))[None]
    est = np.array([1.0])
    z0 = evalci.engine.intervals.bias_correction(gaps, est)
    for a, expected in [
        (-0.5, 2 * special.ndtr(-2 - z0[0])),
        (-0.05, None),
        (0.05, None),
    ]:
        p, floor = decisions_module._pvalues(
            gaps, est, "bca", np.array([a]), z0, "two-sided"
        )
        if expected is None:  # 2 Phi(-20 - z0) or 0: below the resolution 1/B
            assert p[0] == 1 / 4000 and floor[0]
        else:
            assert p[0] == pytest.approx(expected) and not floor[0]


def test_holm_refuses_to_rank_around_nan():
    p = np.array([0.01, np.nan, 0.03])
    adj, bound = decisions_module.holm_adjusted(p)
    assert np.isnan(adj).all() and not bound.any()
    p = np.array([0.01, 0.0001, 0.03, 0.0001])
    adj, bound = decisions_module.holm_adjusted(p, np.array([False, True, False, True]))
    np.testing.assert_allclose(adj, multipletests(p, method="holm")[1])
    assert bound.tolist() == [False, True, False, True]


def test_self_pair_and_duplicate_pairs_are_refused(gpqa):
    s = sorted(gpqa.system.unique())
    with pytest.raises(
        ValueError, match=r"`pairs`: \(.*\) compares a system with itself"
    ):
        gpqa.evalci.compare("correct", cluster="input_id", pairs=[(s[0], s[0])])
    with pytest.raises(ValueError, match=r"`pairs`: .* is listed twice"):
        gpqa.evalci.compare(
            "correct", cluster="input_id", pairs=[(s[0], s[1]), (s[1], s[0])]
        )


@pytest.mark.parametrize("bad", ["0.02", np.nan, np.inf, -0.02, 0, True])
def test_mme_must_be_a_positive_number(gpqa, bad):
    with pytest.raises(ValueError, match=r"^`mme` \(minimum meaningful effect\)"):
        gpqa.evalci.compare("correct", cluster="input_id", mme=bad)
    with pytest.raises(ValueError, match=r"^`mme` \(minimum meaningful effect\)"):
        evalci.decide(-0.1, 0.1, mme=bad)


def test_significant_regression_beyond_mme_is_worse(gpqa):
    # GPQA: gap -0.059 [-0.114, -0.004] at mme = 0.02. The loss is significant
    # and its estimate is three times the mme: "worse", not "inconclusive"
    # (seed 002: "a missed regression is often costlier than a false alarm").
    res = gpqa.evalci.compare(
        "correct", cluster="input_id", mme=0.02, n_resamples=2000, rng=0
    )
    row = res.table.iloc[0]
    assert row.high < 0 and row.low > -0.2 and row.gap < -0.02
    assert row.decision == "worse" and not row.clears_mme
    assert "does not rule out a smaller loss" in row.explanation
    # the gain in the mirror image still needs the whole interval past mme
    assert evalci.decide(0.004, 0.114, mme=0.02, estimate=0.059)[0] == "inconclusive"
    assert evalci.decide(-0.114, -0.004, mme=0.02, estimate=-0.059)[0] == "worse"
    assert evalci.decide(-0.03, -0.004, mme=0.02, estimate=-0.012)[0] == "inconclusive"
    # an endpoint on the 1/50 grid read as -0.0199999.. still clears -0.02
    assert evalci.decide(-0.06, -0.1 + 0.08, mme=0.02)[0] == "worse"


def test_holm_decision_does_not_outrun_the_adjusted_pvalue():
    # 120-90-190 split: the unadjusted interval excludes 0 (p ~ 0.04); with 3
    # pairs Holm's adjusted p is above 0.05, so the gap is not "better".
    df = win_loss_tie(120, 90, 190)
    a = df[df.system == "A"]
    flip = np.isin(a.input_id, np.arange(0, 400, 40))  # C differs on 10 inputs
    df = pd.concat(
        [df, a.assign(system="C", correct=np.where(flip, 1 - a.correct, a.correct))]
    )
    res = df.evalci.compare(
        "correct",
        cluster="input_id",
        baseline="A",
        adjust="holm",
        n_resamples=4000,
        rng=0,
    )
    t = res.table.set_index("b")
    assert t.low["B"] > 0 and t.pvalue["B"] < 0.05 <= t.pvalue_adjusted["B"]
    assert t.decision["B"] == "no detectable difference"
    assert "not after Holm's adjustment for 2 comparisons" in t.explanation["B"]


def test_warnings_point_at_the_callers_line(gpqa):
    holes = gpqa[~((gpqa.system == gpqa.system.iloc[0]) & (gpqa.input_id < "recB"))]
    kw = dict(cluster="input_id", missing="drop", n_resamples=100, rng=0)
    same = two_systems(np.ones(30), np.ones(30))
    for call in (
        lambda: holes.evalci.compare("correct", **kw),
        lambda: evalci.compare(holes, "correct", **kw),
        lambda: same.evalci.compare("correct", "input_id", n_resamples=100),
        lambda: evalci.compare(same, "correct", "input_id", n_resamples=100),
    ):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        assert len(w) == 1 and issubclass(w[0].category, evalci.EvalciWarning)
        assert w[0].filename == __file__


@pytest.mark.parametrize("fn", ["compare", "leaderboard"])
def test_iid_strategy_is_refused_with_the_reason(fn):
    """Rows drawn one by one share no draws between systems: no pairing.
    (Before, compare raised an internal RuntimeError.)"""
    df = evalci.load_example()
    with pytest.raises(ValueError, match="strategy='iid'.*cannot be paired"):
        getattr(evalci, fn)(
            df, "correct", cluster="input_id", system="system", strategy="iid"
        )
