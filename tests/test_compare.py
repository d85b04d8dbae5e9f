"""Paired comparisons: seed 002's worked examples, p-values, multiplicity, real data."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import evalci

from conftest import shared_data


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
    low, _, _ = evalci.intervals.interval(
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
    lvl = evalci.intervals.interval(
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
    with pytest.raises(ValueError, match=r"`mme` must be a positive number"):
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
