"""The kappa coverage path's draws (issue 27: tasks h27c and h27d).

``simulate.exact._kappa_block`` draws the units once per chunk of
replicates and lets every trial of a block read them through its own random
layout of its groups (``simulate.shared_draws``). Each trial's replicates
must keep the bootstrap's law exactly. Checked here against independent
references:

* deterministic: the shared tables give exactly the counts and margins an
  obvious loop computes from the same raw draws, kappa matches statsmodels;
* in law: one layout's group counts against the exact multinomial pmf
  (chi-square), and one trial's replicates of every strategy against the
  previous per-trial draws (index draws, Walker's alias method, numpy's
  multinomial) by two-sample KS tests. False-failure rates are stated at
  each test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats
from statsmodels.stats.inter_rater import cohens_kappa

from evalci import simulate
from evalci.simulate import exact, shared_draws


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


def _compositions(k, c):
    """All vectors of ``c`` non-negative integers summing to ``k``, (Q, c)."""
    if c == 1:
        return np.array([[k]])
    return np.array(
        [[j, *rest] for j in range(k, -1, -1) for rest in _compositions(k - j, c - 1)]
    )


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
    comp = _compositions(k, c)
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
def test_cluster_replicates_two_sample(n, k):
    # Two-sample KS test of one fixed trial's 20,000 replicates, shared draws
    # against per-trial index draws (fixed seeds): p >= 1e-3 fails with
    # probability <= 1e-3 per case (KS is conservative with a discrete
    # statistic's ties), < 3e-3 over the three. The trial sits in a block of
    # four so that it reads the draws through a layout other trials share.
    labels, preds = simulate.confusion_model_arrays(4, n, k, rng=n * 10 + k)
    b = 20_000
    ours = exact._kappa_block("cluster", labels, preds, b, np.random.default_rng(7),
                              0.95, 4).reps[2]  # fmt: skip
    ref = _cluster_direct(labels[2:3], preds[2:3], b, np.random.default_rng(8), 4)[0]
    assert stats.ks_2samp(ours, ref).pvalue >= 1e-3


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
    assert np.isfinite(ours).all()
    ref = _hier_direct(labels[0], preds[0], b, np.random.default_rng(12), 4)
    assert stats.ks_2samp(ours, ref).pvalue >= 1e-3
    clu = exact._kappa_block(
        "cluster", labels, preds, b, np.random.default_rng(13), 0.95, 4
    ).reps[0]
    assert stats.ks_2samp(ours, clu).pvalue < 1e-6


def _cells_direct(strategy, labels, preds, b, gen, c):
    """single_draw / iid / mode_aggregate replicates with numpy's multinomial."""
    t, n, k = preds.shape
    if strategy == "mode_aggregate":
        _, mode = exact._mode_correct(labels, preds, gen, c)
        tab = np.bincount(labels[0] * c + mode[0], minlength=c * c)
        size, p = n, tab / n
    else:
        tab = np.bincount((labels[0][:, None] * c + preds[0]).ravel(), minlength=c * c)
        size, p = (n * k if strategy == "iid" else n), tab / (n * k)
    return _kappa_direct(gen.multinomial(size, p, size=b).astype(float), c)


@pytest.mark.parametrize("strategy", ["single_draw", "iid", "mode_aggregate"])
@pytest.mark.parametrize("n,k", [(60, 5), (45, 2)])
def test_cell_strategies_two_sample(strategy, n, k):
    # Shared draws against numpy's multinomial over the C x C cells, one fixed
    # trial, 20,000 replicates each (the same tie-breaks for the modes: the
    # block draws them first from the same seed). p >= 1e-3: false failures
    # <= 1e-3 per case, < 6e-3 over the six.
    labels, preds = simulate.confusion_model_arrays(1, n, k, rng=300 + n + k)
    b = 20_000
    ours = exact._kappa_block(strategy, labels, preds, b, np.random.default_rng(5),
                              0.95, 4).reps[0]  # fmt: skip
    ref = _cells_direct(strategy, labels, preds, b, np.random.default_rng(5), 4)
    assert stats.ks_2samp(ours, ref).pvalue >= 1e-3
    # power: the same test tells these draws from twice as many
    labels2, preds2 = np.repeat(labels, 2, axis=1), np.repeat(preds, 2, axis=1)
    wide = _cells_direct(strategy, labels2, preds2, b, np.random.default_rng(6), 4)
    assert stats.ks_2samp(ours, wide).pvalue < 1e-6


# ------------------------------------------------------------ shared tables
def _direct_counts(draws, lay, sizes, m):
    """Group counts from raw unit draws and a layout, by plain loops."""
    t, g = sizes.shape
    out = np.zeros((t, g, draws.shape[0]))
    for i in range(t):
        start = lay.at[i, 0]
        unit_group = np.empty(m, np.int64)
        pos = start
        for grp in lay.order[i]:
            for _ in range(sizes[i, grp]):
                unit_group[pos % m] = grp
                pos += 1
        for r in range(draws.shape[0]):
            for u in draws[r]:
                out[i, unit_group[u], r] += 1
    return out


def test_shared_counts_are_the_draws_counted_per_group():
    # deterministic: the cumulated table read at a layout's boundaries gives
    # exactly the counts a loop over the same raw draws does, wraps included
    m, n, b = 23, 17, 40
    gen = np.random.default_rng(3)
    sizes = np.array([[5, 0, 7, 11], [1, 1, 1, 20], [23, 0, 0, 0]])
    lay = shared_draws.layout(sizes, m, gen)
    state = np.random.default_rng(4)
    counts = shared_draws.SharedCounts(m, n, b, np.random.default_rng(4))
    draws = state.integers(0, m, size=(b, n))  # the same stream as the table's
    direct = _direct_counts(draws, lay, sizes, m)
    ours = np.empty_like(direct)
    np.put_along_axis(ours, lay.order[..., None], counts.counts(lay), axis=1)
    assert np.array_equal(ours, direct)
    values = state.integers(-3, 4, size=(3, 4, 5)).astype(float)
    want = np.einsum("tgb,tgq->tbq", direct, values)
    got = counts.margins(lay, shared_draws.in_order(values, lay))
    assert np.array_equal(got, want)


def test_one_layout_counts_follow_the_multinomial():
    # Chi-square goodness of fit of 20,000 replicates' group counts (one
    # layout per trial, 6 trials pooled) against the exact Multinomial(n,
    # s / m) pmf over all count vectors: p >= 1e-3 fails with probability
    # ~1e-3 (the chi-square approximation is good here: every expected cell
    # count is at least 5, after pooling any below it).
    m, n, b = 9, 4, 20_000
    sizes = np.tile([2, 3, 4], (6, 1))
    gen = np.random.default_rng(21)
    lay = shared_draws.layout(sizes, m, gen)
    cnt = shared_draws.SharedCounts(m, n, b, gen).counts(lay)
    orig = np.empty_like(cnt)
    np.put_along_axis(orig, lay.order[..., None], cnt, axis=1)
    vecs = orig.transpose(0, 2, 1).reshape(-1, 3).astype(int)
    comps = _compositions(n, 3)
    pmf = stats.multinomial.pmf(comps, n, np.array([2, 3, 4]) / m)
    index = {tuple(x): i for i, x in enumerate(comps)}
    obs = np.bincount([index[tuple(v)] for v in vecs], minlength=len(comps))
    exp = pmf * len(vecs)
    big = exp >= 5
    if not big.all():
        obs = np.append(obs[big], obs[~big].sum())
        exp = np.append(exp[big], exp[~big].sum())
    assert stats.chisquare(obs, exp).pvalue >= 1e-3


def test_shared_runs_are_the_slots_read_per_group():
    # deterministic: margins of the runs laid end to end over the slots,
    # against a loop that assigns each slot to its group and class
    c, k, runs = 3, 4, 4
    labels = np.array([[0, 2, 1], [1, 1, 0]])
    counts = np.array(
        [[[4, 0, 0], [1, 2, 1], [0, 3, 1]], [[2, 2, 0], [0, 0, 4], [1, 1, 2]]]
    )
    gen = np.random.default_rng(9)
    m = gen.integers(0, 3, size=(2, 3, 7)).astype(float)
    n_slots = int(runs * m.sum(axis=1).max())
    sr = shared_draws.SharedRuns(n_slots, k, 7, gen)
    terms = shared_draws.run_terms(labels, counts, k, c)
    got = sr.margins(m, runs, terms)
    for t in range(2):
        for r in range(7):
            tab = np.zeros((c, c))
            pos = 0
            for grp in range(3):
                classes = np.repeat(np.arange(c), counts[t, grp])  # slot -> class
                for _ in range(int(runs * m[t, grp, r])):
                    tab[labels[t, grp], classes[sr.slots[r, pos]]] += 1
                    pos += 1
            want = tab.ravel() @ exact._margin_matrix(c)
            assert np.array_equal(got[t, r], want)


def test_trials_of_a_block_read_the_draws_differently():
    # two identical data sets in one block share the draws but not the
    # layout: their replicates differ (deterministic for these seeds) and
    # are far from perfectly correlated
    labels, preds = simulate.confusion_model_arrays(1, 120, 5, rng=5)
    labels, preds = np.repeat(labels, 2, axis=0), np.repeat(preds, 2, axis=0)
    for strategy in ("cluster", "hierarchical", "single_draw", "iid"):
        reps = exact._kappa_block(strategy, labels, preds, 4000,
                                  np.random.default_rng(1), 0.95, 4).reps  # fmt: skip
        assert not np.array_equal(reps[0], reps[1])
        assert np.corrcoef(reps)[0, 1] < 0.9, strategy
