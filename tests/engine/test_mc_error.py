"""The Monte-Carlo error of the bootstrap itself, and ``n_resamples="auto"``.

References: Efron & Tibshirani (1993), An Introduction to the Bootstrap,
sec. 19.3 (how many resamples); the distribution-free order-statistic
interval of a quantile (Hyndman & Fan 1996; David & Nagaraja, Order
Statistics, sec. 7.1).
"""

import functools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci.engine import auto as _auto
from evalci.engine.intervals import acceleration, endpoint_mc_error, interval


def scores(n=120, k=3, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(0, 1, n)
    return pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(n), k),
            "system": "s",
            "score": np.repeat(mu, k) + rng.normal(0, 0.5, n * k),
        }
    )


def test_the_order_statistic_error_matches_the_asymptotic_formula():
    # replicates ~ N(0, 1): the p-quantile of B of them has SE
    # sqrt(p (1 - p) / B) / phi(z_p) (the delta method for sample quantiles)
    rng = np.random.default_rng(1)
    b = 20_000
    reps = rng.normal(size=(200, b))
    se_low, se_high = endpoint_mc_error(reps, np.zeros(200), "percentile", 0.95)
    p = 0.025
    want = np.sqrt(p * (1 - p) / b) / stats.norm.pdf(stats.norm.ppf(p))
    assert abs(se_low.mean() / want - 1) < 0.05
    assert abs(se_high.mean() / want - 1) < 0.05
    se_n, _ = endpoint_mc_error(reps, np.zeros(200), "normal", 0.95)
    assert abs(se_n.mean() / (1.959964 / np.sqrt(2 * (b - 1))) - 1) < 0.01


def cluster_bootstrap(means, n_resamples, n_seeds, seed):
    """Replicates ``(n_seeds, n_resamples)`` of the mean of ``means``, resampled
    with replacement: the cluster bootstrap of equal clusters, written out
    (an independent reference for evalci's resampling)."""
    rng = np.random.default_rng(seed)
    n = len(means)
    chunks = [
        means[rng.integers(0, n, size=(50, n_resamples, n))].mean(axis=-1)
        for _ in range(n_seeds // 50)
    ]
    return np.concatenate(chunks)


DATA = {
    # near-normal replicates, z0 and the acceleration near 0
    "symmetric": np.random.default_rng(1).normal(0, 1, 80),
    # right-skewed: acceleration 0.067, the BCa endpoints far from the
    # percentile ones
    "skewed": np.random.default_rng(2).lognormal(0, 1.0, 40),
}


@functools.lru_cache
def endpoints_over_seeds(data, method):
    """1,000 seeds of B = 1,000 on fixed data: each seed's endpoints and the
    Monte-Carlo errors it reports."""
    means = DATA[data]
    reps = cluster_bootstrap(means, 1000, 1000, seed=0)
    est = np.full(len(reps), means.mean())
    jack = (means.sum() - means) / (len(means) - 1)
    accel = np.full(len(reps), acceleration(jack)) if method == "bca" else None
    low, high, _ = interval(reps, est, method, 0.95, accel=accel)
    se_low, se_high = endpoint_mc_error(reps, est, method, 0.95, accel=accel)
    return np.c_[low, high], np.c_[se_low, se_high]


@pytest.mark.slow
@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("method", ["percentile", "basic", "bca", "normal"])
def test_reported_error_is_the_spread_of_endpoints_over_seeds(method, data):
    # The data fixed, 1,000 seeds of B = 1,000: the SD of each endpoint over
    # the seeds is what endpoint_mc_error() estimates from one seed. Their
    # mean agrees within 15% for every method (observed 0.98-1.02; before BCa
    # counted z0's noise its ratio was 0.82-0.90, and 1.19 for the skewed
    # upper endpoint). The SD of 1,000 endpoints has a relative error of about
    # 2.3%, the mean reported error about 0.8%: a false failure needs a
    # 13% deviation beyond the largest bias seen, over 5 SE (under 1e-5
    # for the 16 cases together).
    ends, reported = endpoints_over_seeds(data, method)
    spread = ends.std(axis=0, ddof=1)
    np.testing.assert_allclose(reported.mean(axis=0), spread, rtol=0.15)


@pytest.mark.slow
def test_reported_error_is_the_spread_over_seeds_through_cluster_ci():
    # The user's path: cluster_ci's replicates, each method read from the same
    # replicates by .interval(); 300 seeds of B = 500 (observed within 6%;
    # 300 endpoints' SD has about 4% relative error, so a false failure at
    # 25% needs over 4.5 SE: under 1e-4 for the 8 endpoints together).
    df = scores()
    methods = ["percentile", "basic", "bca", "normal"]
    ends = {m: [] for m in methods}
    reported = {m: [] for m in methods}
    for seed in range(300):
        r = evalci.cluster_ci(
            df, "score", "input_id", n_resamples=500, rng=seed, method="bca"
        )
        for m in methods:
            q = r.interval(method=m)
            ends[m].append((q.low, q.high))
            err = q.mc_error()[["mc_error_low", "mc_error_high"]].to_numpy()[0]
            reported[m].append(err)
    for m in methods:
        spread = np.asarray(ends[m]).std(axis=0, ddof=1)
        mean_reported = np.asarray(reported[m]).mean(axis=0)
        np.testing.assert_allclose(mean_reported, spread, rtol=0.25, err_msg=m)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_auto_stops_where_the_true_error_meets_the_tolerance(method):
    # The true Monte-Carlo SD of each endpoint at B = 2,048, from 400 seeds
    # of a written-out cluster bootstrap, and a tolerance 1.15 times below
    # its larger endpoint's: 2,048 resamples are too few, 4,096 enough. A
    # calibrated error stops at 2,048 only when its estimate comes out low:
    # observed in 12.5% (BCa) and 6% (percentile) of 200 seeds; BCa stopped
    # there in 37.5% before its error counted z0's noise. Over 150 seeds the
    # share's binomial SE is 2.7%, so a false failure at 25% needs over
    # 4.5 SE (under 1e-5).
    df = scores(seed=5)
    means = df.groupby("input_id").score.mean().to_numpy()
    reps = cluster_bootstrap(means, 2048, 400, seed=1)
    est = np.full(len(reps), means.mean())
    jack = (means.sum() - means) / (len(means) - 1)
    accel = np.full(len(reps), acceleration(jack)) if method == "bca" else None
    low, high, _ = interval(reps, est, method, 0.95, accel=accel)
    tol = max(low.std(ddof=1), high.std(ddof=1)) / 1.15
    sizes = np.array(
        [
            evalci.cluster_ci(
                df,
                "score",
                "input_id",
                n_resamples="auto",
                rng=seed,
                method=method,
                mc_tolerance=tol,
            ).n_resamples
            for seed in range(150)
        ]
    )
    assert (sizes == 2048).mean() < 0.25
    assert (sizes >= 4096).mean() > 0.75


def test_few_resamples_have_visible_error_against_the_width():
    df = evalci.load_example()
    few = df.evalci.cluster_ci(
        "correct", cluster="input_id", by="system", n_resamples=100, rng=0
    )
    many = df.evalci.cluster_ci("correct", cluster="input_id", by="system", rng=0)
    # For a near-normal bootstrap distribution the 2.5% endpoint's MC SE is
    # sqrt(p (1 - p) / B) / phi(1.96) SDs = 0.027 SD at B = 10,000 and 0.27 SD
    # at B = 100, against a width of 3.92 SD: shares of 0.7% and 7%.
    # Asserted with room for the order-statistic estimate's own noise.
    assert (few.mc_error().mc_error_share > 0.03).all()
    assert (many.mc_error().mc_error_share < 0.02).all()


def test_comparison_pvalue_error_is_binomial():
    # the p-value is a share of replicates: over seeds its SD is about
    # sqrt(p (2 - p) / B); checked within 25% over 150 seeds
    df = scores(n=80, seed=3)
    df2 = df.assign(
        system="t",
        score=df.score + 0.05 + np.random.default_rng(2).normal(0, 0.4, len(df)),
    )
    both = pd.concat([df, df2])
    ps, reported = [], []
    for seed in range(150):
        g = evalci.compare(both, "score", cluster="input_id", n_resamples=400, rng=seed)
        ps.append(float(g.table.pvalue.iloc[0]))
        reported.append(float(g.mc_error().mc_error_pvalue.iloc[0]))
    assert 0.02 < np.mean(ps) < 0.5  # a p-value with room to move
    np.testing.assert_allclose(np.mean(reported), np.std(ps, ddof=1), rtol=0.25)


def test_auto_draws_until_stable_and_equals_the_fixed_size():
    df = scores(seed=5)
    r = evalci.cluster_ci(
        df, "score", "input_id", n_resamples="auto", rng=2, mc_tolerance=0.004
    )
    assert r.n_resamples in {2048 * 2**i for i in range(8)}
    err = r.mc_error()[["mc_error_low", "mc_error_high"]].to_numpy()
    assert err.max() <= 0.004
    fixed = evalci.cluster_ci(df, "score", "input_id", n_resamples=r.n_resamples, rng=2)
    assert np.array_equal(r.bootstrap_distribution, fixed.bootstrap_distribution)
    if r.n_resamples > 2048:  # the size before did not reach the tolerance
        half = evalci.cluster_ci(
            df, "score", "input_id", n_resamples=r.n_resamples // 2, rng=2
        )
        assert (
            half.mc_error()[["mc_error_low", "mc_error_high"]].to_numpy().max() > 0.004
        )
    stricter = evalci.cluster_ci(
        df, "score", "input_id", n_resamples="auto", rng=2, mc_tolerance=0.001
    )
    assert stricter.n_resamples > r.n_resamples
    g = evalci.compare(
        pd.concat(
            [
                df,
                df.assign(
                    system="t",
                    score=df.score + np.random.default_rng(1).normal(0.1, 0.3, len(df)),
                ),
            ]
        ),
        "score",
        cluster="input_id",
        n_resamples="auto",
        rng=0,
        mc_tolerance=0.004,
    )
    assert g.mc_error()[["mc_error_low", "mc_error_high"]].to_numpy().max() <= 0.004


def test_auto_says_when_it_stopped_short(monkeypatch):
    monkeypatch.setattr(_auto, "MAX", 4096)
    with pytest.warns(evalci.FewResamplesWarning, match="stopped at 4,096"):
        evalci.cluster_ci(
            scores(), "score", "input_id", n_resamples="auto", rng=0, mc_tolerance=1e-6
        )


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(mc_tolerance=0.01), "`mc_tolerance` is for n_resamples='auto'"),
        (dict(n_resamples="auto", mc_tolerance=0), "`mc_tolerance` must be in"),
        (dict(n_resamples="auto", mc_tolerance="a"), "`mc_tolerance` must be a finite"),
        (dict(n_resamples="many"), "`n_resamples` must be"),
    ],
)
def test_bad_auto_settings_name_the_fix(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        evalci.cluster_ci(scores(n=20), "score", "input_id", rng=0, **kw)


def test_the_report_flags_intervals_the_bootstrap_error_moves():
    df = evalci.load_example()
    few = evalci.report(df, "correct", "input_id", mme=0.02, n_resamples=100, rng=0)
    text = few.to_text()
    assert text.count("Monte-Carlo error") >= 3  # two scores and the gap
    assert "Monte-Carlo error" in few.to_markdown()
    assert "Monte-Carlo error" in few.to_html()
    many = evalci.report(df, "correct", "input_id", mme=0.02, rng=0)
    assert "Monte-Carlo error" not in many.to_text()
