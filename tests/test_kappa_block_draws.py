"""The kappa coverage path's draws after the issue 27 speed-ups (task h27c).

``simulate.exact._kappa_block`` now counts cluster draws per distinct input
contribution and computes kappa's margins with one product: neither may
change a single replicate, so both are compared bitwise with the previous
arithmetic on the same seeds (deterministic, no false failures), and kappa
itself with statsmodels. Hierarchical draws each input-and-runs outcome as
one integer looked up in a table instead of by Walker's alias method: other
draws, the same law. Its outcome law is compared exactly with the previous
float mixture, and one trial's replicates with the previous alias draws by
a two-sample KS test (false-failure rate stated there).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats
from statsmodels.stats.inter_rater import cohens_kappa

from evalci import simulate
from evalci.simulate import exact


def _kappa_direct(tab, c):
    """Cohen's kappa of flattened tables, margins summed directly."""
    t = tab.reshape(tab.shape[:-1] + (c, c))
    tot = t.sum(axis=(-2, -1))
    p_o = np.trace(t, axis1=-2, axis2=-1) / tot
    p_e = (t.sum(axis=-1) * t.sum(axis=-2)).sum(axis=-1) / tot**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p_o - p_e) / (1.0 - p_e)


def _alias_direct(p, u):
    """Walker's alias method as a plain loop-built table and one ``where``."""
    m = len(p)
    prob = np.asarray(p, float) * m / p.sum()
    alias = np.arange(m)
    small = [i for i in range(m) if prob[i] < 1.0]
    large = [i for i in range(m) if prob[i] >= 1.0]
    while small and large:
        s, lg = small.pop(), large.pop()
        alias[s] = lg
        prob[lg] -= 1.0 - prob[s]
        (small if prob[lg] < 1.0 else large).append(lg)
    for i in small + large:
        prob[i] = 1.0
    x = u * m
    j = np.minimum(x.astype(np.int64), m - 1)
    return np.where(x - j < prob[j], j, alias[j])


def _contrib(labels, preds, c):
    cells = labels[..., None] * c + preds
    return (cells[..., None] == np.arange(c * c)).sum(axis=-2).astype(float)


def _cluster_direct(labels, preds, b, gen, c):
    """Cluster replicates: input counts from one bincount, a product per input."""
    t, n, _ = preds.shape
    contrib = _contrib(labels, preds, c)
    reps = np.empty((t, b))
    for i in range(t):
        idx = gen.integers(0, n, size=(b, n))
        w = np.bincount((idx + n * np.arange(b)[:, None]).ravel(), minlength=b * n)
        reps[i] = _kappa_direct(w.reshape(b, n).astype(float) @ contrib[i], c)
    return reps


def _hier_mixture(labels, preds, c):
    """The previous float law of one hierarchical draw, and its table vectors."""
    n, k = preds.shape
    comp = exact._compositions(k, c)
    coef = special.gammaln(k + 1) - special.gammaln(comp + 1).sum(axis=-1)
    q = (preds[..., None] == np.arange(c)).sum(axis=-2) / k
    lp = coef[None, :] + np.log(np.maximum(q, 1e-300)) @ comp.T
    mix = np.zeros((c, len(comp)))
    np.add.at(mix, labels, np.exp(lp))
    vec = np.zeros((c, len(comp), c, c))
    for y in range(c):
        vec[y, :, y, :] = comp
    return mix.ravel() / n, vec.reshape(c * len(comp), c * c)


def _hier_direct(labels, preds, b, gen, c):
    """Hierarchical replicates of one trial the previous way (alias draws)."""
    n, _ = preds.shape
    mix, vec = _hier_mixture(labels, preds, c)
    o = len(mix)
    d = _alias_direct(mix, gen.random((b, n)))
    tabs = np.bincount((d + o * np.arange(b)[:, None]).ravel(), minlength=b * o)
    return _kappa_direct(tabs.reshape(b, o).astype(float) @ vec, c)


def test_kappa_matches_statsmodels_and_direct_sums():
    gen = np.random.default_rng(0)
    tabs = gen.multinomial(60, np.full(16, 1 / 16), size=(5, 7)).astype(float)
    ours = exact._kappa(tabs, 4)
    # bitwise the direct sums: every sum of these integer counts is exact
    assert np.array_equal(ours, _kappa_direct(tabs, 4))
    for i, j in np.ndindex(5, 7):
        ref = cohens_kappa(tabs[i, j].reshape(4, 4), return_results=False)
        assert ours[i, j] == pytest.approx(ref, abs=1e-12)
    # three labels too
    t3 = gen.multinomial(40, np.full(9, 1 / 9), size=4).astype(float)
    for row, val in zip(t3, exact._kappa(t3, 3), strict=True):
        assert val == pytest.approx(
            cohens_kappa(row.reshape(3, 3), return_results=False)
        )


@pytest.mark.parametrize("n,k", [(50, 5), (80, 2), (37, 3)])
def test_cluster_replicates_unchanged(n, k):
    # the same index draws, counted per distinct contribution: bit for bit
    labels, preds = simulate.confusion_model_arrays(3, n, k, rng=n * 10 + k)
    gen = np.random.default_rng(7)
    blk = exact._kappa_block("cluster", labels, preds, 400, gen, 0.95, 4)
    ref = _cluster_direct(labels, preds, 400, np.random.default_rng(7), 4)
    assert np.array_equal(blk.reps, ref)


@pytest.mark.parametrize("n,k", [(50, 5), (80, 2), (37, 3), (200, 5)])
def test_hierarchical_outcome_law_is_the_previous_mixture(n, k):
    # deterministic: the integer weights / (N k**k) are the float mixture the
    # alias draws used, and the outcome vectors are the same
    labels, preds = simulate.confusion_model_arrays(1, n, k, rng=n + k)
    w, vec = exact._hierarchical_outcomes(labels[0], preds[0], 4)
    mix, vec_ref = _hier_mixture(labels[0], preds[0], 4)
    assert w.dtype == np.int64 and w.sum() == n * k**k
    np.testing.assert_allclose(w / (n * k**k), mix, rtol=1e-12, atol=1e-15)
    assert np.array_equal(vec, vec_ref)


@pytest.mark.parametrize("n,k", [(60, 5), (80, 2), (40, 3)])
def test_hierarchical_replicates_two_sample(n, k):
    # Two-sample KS test of one fixed trial's 20,000 replicates, new draws
    # against the previous alias draws (fixed seeds). Same law: p >= 1e-3
    # fails with probability <= 1e-3 per case (KS is conservative with the
    # ties of a discrete statistic), < 3e-3 over the three. Power: the same
    # test tells hierarchical from cluster on that trial at p < 1e-6.
    labels, preds = simulate.confusion_model_arrays(1, n, k, rng=100 + n + k)
    b = 20_000
    gen = np.random.default_rng(11)
    ours = exact._kappa_block("hierarchical", labels, preds, b, gen, 0.95, 4).reps[0]
    ref = _hier_direct(labels[0], preds[0], b, np.random.default_rng(12), 4)
    assert stats.ks_2samp(ours, ref).pvalue >= 1e-3
    clu = exact._kappa_block(
        "cluster", labels, preds, b, np.random.default_rng(13), 0.95, 4
    ).reps[0]
    assert stats.ks_2samp(ours, clu).pvalue < 1e-6
