"""Benjamini-Hochberg and Benjamini-Yekutieli q-values against statsmodels'
``multipletests`` (methods ``fdr_bh`` and ``fdr_by``) to 1e-12, in
``compare(adjust=)`` and in the leaderboard."""

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.methods.compare import fdr_adjusted

multitest = pytest.importorskip("statsmodels.stats.multitest")


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("dependent", "name"), [(False, "fdr_bh"), (True, "fdr_by")])
def test_q_values_equal_statsmodels(seed, dependent, name):
    gen = np.random.default_rng(seed)
    p = gen.uniform(size=gen.integers(1, 60)) ** 3
    p[: len(p) // 4] = p[0]  # ties
    got, _ = fdr_adjusted(p, dependent=dependent)
    want = multitest.multipletests(p, method=name)[1]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_q_values_at_the_floor_are_bounds_and_nan_spreads():
    q, bound = fdr_adjusted(np.array([1e-4, 1e-4, 0.2]), np.array([True, True, False]))
    assert bound.tolist() == [True, True, False]
    q, bound = fdr_adjusted(np.array([0.01, np.nan]))
    assert np.isnan(q).all() and not bound.any()


def _systems(n_systems=6, n_inputs=150, seed=0):
    gen = np.random.default_rng(seed)
    skill = np.linspace(0.5, 0.62, n_systems)
    rows = [(i, f"s{k}", int(gen.random() < skill[k]))
            for k in range(n_systems) for i in range(n_inputs)]
    return pd.DataFrame(rows, columns=["input", "system", "correct"])


@pytest.mark.parametrize(("adjust", "name"), [("bh", "fdr_bh"), ("by", "fdr_by")])
def test_compare_adjust_gives_q_values(adjust, name):
    df = _systems()
    res = evalci.compare(df, "correct", "input", "system", adjust=adjust,
                         method="normal", n_resamples=2000, rng=1)
    t = res.to_frame()
    want = multitest.multipletests(t.pvalue.to_numpy(), method=name)[1]
    np.testing.assert_allclose(t.pvalue_adjusted, want, rtol=0, atol=1e-12)
    alpha = 0.05
    for row in t.itertuples():
        if row.decision in ("better", "worse"):
            assert row.pvalue_adjusted < alpha


@pytest.mark.parametrize(("method", "name"), [("bh", "fdr_bh"), ("by", "fdr_by")])
def test_leaderboard_fdr_separates_by_q_values(method, name):
    from scipy.stats import norm

    df = _systems(seed=2)
    board = evalci.leaderboard(df, "correct", "input", "system", method=method,
                               n_resamples=2000, rng=0)
    pairs = board.pairs
    t = np.where(pairs.standard_error > 0, pairs.gap / pairs.standard_error, 0)
    p = np.concatenate([norm.sf(t), norm.cdf(t)])  # the 2P one-sided tests
    q = multitest.multipletests(p, method=name)[1].reshape(2, -1)
    want = np.where(pairs.gap >= 0, q[0], q[1])
    np.testing.assert_allclose(pairs.pvalue_adjusted, want, rtol=0, atol=1e-12)
    assert (pairs.separated == (q.min(axis=0) < 0.05)).all()
    assert "FDR rank intervals" in repr(board)
    holm = evalci.leaderboard(df, "correct", "input", "system", method="holm",
                              n_resamples=2000, rng=0)
    assert pairs.separated.sum() >= holm.pairs.separated.sum()


def test_adjust_refuses_unknown_names():
    with pytest.raises(ValueError, match="'bh' .Benjamini-Hochberg"):
        evalci.compare(_systems(), "correct", "input", "system", adjust="fdr")
