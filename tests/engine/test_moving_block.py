"""The moving-block bootstrap (Kunsch 1989) for inputs in sequence (seed 003).

References: Kunsch, H. R. (1989), "The jackknife and the bootstrap for general
stationary observations", Ann. Statist. 17(3); seed 003 ("Non-independent
observations ... block bootstrapping must be deployed").
"""

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine import resampling

from conftest import clustered


def ar1(n, phi, rng):
    """An AR(1) series with unit innovations, started at stationarity."""
    x = np.empty(n)
    x[0] = rng.normal() / np.sqrt(1 - phi**2)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.normal()
    return x


def series(n=120, phi=0.6, seed=0, k=1):
    rng = np.random.default_rng(seed)
    x = ar1(n, phi, rng)
    return pd.DataFrame(
        {
            "turn": np.repeat(np.arange(n), k),
            "run": np.tile(np.arange(k), n),
            "score": np.repeat(x, k) + rng.normal(0, 0.1, n * k),
        }
    )


def test_block_length_one_is_the_cluster_bootstrap_bit_for_bit():
    df = clustered(n=50, k=3, seed=1)
    kw = dict(by="system", n_resamples=900, rng=4)
    cluster = evalci.bootstrap(df, "correct", "input_id", **kw)
    blocks = evalci.bootstrap(
        df, "correct", "input_id", strategy="moving_block", block_length=1, **kw
    )
    assert np.array_equal(cluster.bootstrap_distribution, blocks.bootstrap_distribution)


def test_replicates_are_the_documented_draws():
    # a slow re-draw: per replicate, ceil(N / L) starts uniform on 0..N-L, each
    # block's L inputs in order, truncated to N; the mean of their scores
    df = series(n=37, k=2, seed=2)
    L, B = 5, 200
    res = evalci.bootstrap(
        df,
        "score",
        "turn",
        strategy="moving_block",
        block_length=L,
        n_resamples=B,
        rng=7,
    )
    per_input = df.groupby("turn").score.mean().to_numpy()
    root = resampling.seed_sequence(7)
    want = []
    for s in range(resampling.n_streams_for(B)):
        gen = resampling.stream(root, 0, 0, s)
        starts = gen.integers(0, 37 - L + 1, size=(64, -(-37 // L)))
        for b in range(64):
            idx = np.concatenate([np.arange(a, a + L) for a in starts[b]])[:37]
            want.append(per_input[idx].mean())
    np.testing.assert_allclose(
        np.ravel(res.bootstrap_distribution), want[:B], rtol=1e-12
    )


def test_a_callable_sees_the_same_blocks():
    df = series(n=40, seed=3)
    kw = dict(strategy="moving_block", block_length=4, n_resamples=300, rng=1)
    fast = evalci.bootstrap(df, "score", "turn", **kw)
    slow = evalci.bootstrap(df, "score", "turn", metric=lambda d: d.score.mean(), **kw)
    np.testing.assert_allclose(
        fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-12
    )


@pytest.mark.slow
def test_blocks_cover_the_mean_of_a_dependent_series():
    # AR(1), phi = 0.7: the variance of the mean is (1 + phi) / (1 - phi) = 5.7
    # times the independent one, so resampling inputs one by one undercovers
    # badly (about 60%). Blocks of 20 keep most of the dependence. 300 trials:
    # the block interval covers at least 83% (its known small-sample shortfall;
    # observed about 90%), the cluster one at most 72%: each bound is over 4 SE
    # from the observed rate, a false-failure chance below 1e-4.
    rng = np.random.default_rng(12)
    hits = {"block": 0, "cluster": 0}
    trials = 300
    for _ in range(trials):
        x = ar1(400, 0.7, rng)
        df = pd.DataFrame({"turn": np.arange(400), "score": x})
        kw = dict(n_resamples=400, rng=int(rng.integers(2**31)))
        block = evalci.bootstrap(
            df, "score", "turn", strategy="moving_block", block_length=20, **kw
        )
        cluster = evalci.bootstrap(df, "score", "turn", **kw)
        hits["block"] += block.low <= 0 <= block.high
        hits["cluster"] += cluster.low <= 0 <= cluster.high
    assert hits["block"] / trials >= 0.83, hits
    assert hits["cluster"] / trials <= 0.72, hits


@pytest.mark.parametrize(
    "kw, error, match",
    [
        (dict(strategy="moving_block"), ValueError, "needs `block_length`"),
        (dict(block_length=3), ValueError, "`block_length` is for strategy="),
        (
            dict(strategy="moving_block", block_length=2.5),
            TypeError,
            "`block_length` must be a positive integer",
        ),
        (
            dict(strategy="moving_block", block_length=0),
            ValueError,
            "`block_length` must be at least 1",
        ),
        (
            dict(strategy="moving_block", block_length=3, method="bca"),
            ValueError,
            "method='bca' needs a jackknife",
        ),
        (
            dict(strategy="moving_block", block_length=3, strata="run"),
            ValueError,
            "cannot be stratified",
        ),
        (
            dict(strategy="moving_block", block_length=20),
            ValueError,
            r"`block_length`=20 must be less than the number of inputs \(20",
        ),
        (
            dict(strategy="moving_block", block_length=3, weights="poisson"),
            ValueError,
            "weights='poisson' weights whole inputs",
        ),
    ],
)
def test_bad_block_settings_name_the_fix(kw, error, match):
    df = series(n=20)
    with pytest.raises(error, match=match):
        evalci.bootstrap(df, "score", "turn", n_resamples=100, rng=0, **kw)
