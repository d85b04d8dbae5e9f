"""Core engine: agreement with scipy, exposed BCa internals, determinism, results."""

import dataclasses
import inspect

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

import evalci
from evalci.engine import intervals, resampling

from conftest import clustered, shared_data

# scipy 1.15 renamed bootstrap's `random_state` to `rng` (SPEC 7); the oldest
# supported scipy (1.11) has only `random_state`. Either seeds the reference.
_SCIPY_SEED = (
    "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"
)


def scipy_bootstrap(*args, seed, **kwargs):
    """``scipy.stats.bootstrap`` seeded with ``seed``, on any supported scipy."""
    return stats.bootstrap(*args, **{_SCIPY_SEED: seed}, **kwargs)


def _kappa_sm(pred, label, labels):
    """Cohen's kappa by statsmodels from a contingency table (independent code)."""
    table = pd.crosstab(
        pd.Categorical(label, categories=labels),
        pd.Categorical(pred, categories=labels),
        dropna=False,
    ).to_numpy()
    return cohens_kappa(table, return_results=False)


# ---------------------------------------------------------------- scipy, k=1
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_k1_agrees_with_scipy_bootstrap(method):
    # With k=1 the cluster bootstrap is the ordinary bootstrap, so scipy's
    # `bootstrap` on the same data is an independent reference. Different
    # random streams: endpoints differ by Monte Carlo error only. With
    # B=20,000 the SD of a 2.5% quantile of this distribution is about
    # 0.0012 (sqrt(p(1-p)/B)/density); we allow 0.006 (5 SD, plus the 1/N grid).
    rng = np.random.default_rng(11)
    y = rng.binomial(1, 0.7, 250)
    df = pd.DataFrame({"input_id": np.arange(250), "correct": y})
    ours = evalci.cluster_ci(
        df, "correct", cluster="input_id", method=method, n_resamples=20_000, rng=1
    )
    ref = scipy_bootstrap((y,), np.mean, method=method, n_resamples=20_000, seed=2)
    assert ours.estimate == pytest.approx(y.mean())
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.006)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.006)
    assert ours.standard_error == pytest.approx(ref.standard_error, rel=0.03)


def test_k1_bca_skewed_score_agrees_with_scipy():
    # A skewed continuous score (latency-like), where BCa moves the interval.
    rng = np.random.default_rng(5)
    y = rng.lognormal(0.0, 1.0, 120)
    df = pd.DataFrame({"input_id": np.arange(120), "latency": y})
    ours = evalci.cluster_ci(
        df, "latency", cluster="input_id", method="bca", n_resamples=20_000, rng=3
    )
    ref = scipy_bootstrap((y,), np.mean, method="BCa", n_resamples=20_000, seed=4)
    width = ref.confidence_interval.high - ref.confidence_interval.low
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.04 * width)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.04 * width)
    # the BCa shift is real here: the interval is not the percentile one
    perc = ours.interval(method="percentile")
    assert ours.high - perc.high > 0.01 * width


# ------------------------------------------------------- exposed internals
def test_z0_counts_ties_half_like_scipy():
    reps = np.array([0.1, 0.2, 0.2, 0.3, 0.5])
    # (1 below + 0.5 * 2 ties) / 5 = 0.4 -> ndtri(0.4)
    assert intervals.bias_correction(reps, 0.2) == pytest.approx(stats.norm.ppf(0.4))


def _slow_jackknife_mean(df, value, cluster):
    keys = sorted(df[cluster].unique())
    out = []
    for key in keys:
        rest = df[df[cluster] != key]
        out.append(rest.groupby(cluster)[value].mean().mean())
    return np.array(out)


def test_acceleration_matches_slow_jackknife_unequal_k():
    df = clustered(n=40, k=3, unequal=True, seed=3)
    one = df[df.system == "sys0"]
    res = evalci.cluster_ci(
        one, "correct", cluster="input_id", method="bca", n_resamples=500, rng=0
    )
    jack = _slow_jackknife_mean(one, "correct", "input_id")
    u = jack.mean() - jack
    # Efron & Tibshirani (1993) eq. 14.15
    a_ref = (u**3).sum() / (6 * (u**2).sum() ** 1.5)
    assert res.acceleration == pytest.approx(a_ref, rel=1e-10)
    z0_ref = stats.norm.ppf(
        (
            (res.bootstrap_distribution < res.estimate).sum()
            + 0.5 * (res.bootstrap_distribution == res.estimate).sum()
        )
        / 500
    )
    assert res.z0 == pytest.approx(z0_ref)


def test_stratified_acceleration_within_strata():
    df = clustered(n=45, k=2, seed=4)
    one = df[df.system == "sys1"]
    res = evalci.cluster_ci(
        one,
        "correct",
        cluster="input_id",
        strata="subject",
        method="bca",
        n_resamples=200,
        rng=0,
    )
    # Davison & Hinkley (1997) eq. 5.25: influence values within strata
    keys = sorted(one.input_id.unique())
    subj = one.groupby("input_id").subject.first()
    jack = pd.Series(_slow_jackknife_mean(one, "correct", "input_id"), index=keys)
    num = den = 0.0
    for _, part in jack.groupby(subj):
        nh = len(part)
        lval = (nh - 1) * (part.mean() - part)
        num += (lval**3).sum() / nh**3
        den += (lval**2).sum() / nh**2
    assert res.acceleration == pytest.approx(num / (6 * den**1.5), rel=1e-10)


# -------------------------------------------------------------- kappa
def test_kappa_estimate_matches_statsmodels():
    rng = np.random.default_rng(8)
    label = rng.integers(0, 4, 300)
    pred = np.where(rng.random(300) < 0.6, label, rng.integers(0, 4, 300))
    df = pd.DataFrame({"input_id": np.arange(300), "pred": pred, "label": label})
    res = evalci.cluster_ci(
        df,
        "pred",
        cluster="input_id",
        metric=evalci.metrics.kappa(truth="label"),
        n_resamples=200,
        rng=0,
    )
    assert res.estimate == pytest.approx(
        _kappa_sm(pred, label, [0, 1, 2, 3]), rel=1e-12
    )


def test_kappa_bca_k5_equals_general_path_with_statsmodels_kappa():
    # Reference computed another way: the general path gathers the resampled
    # rows and calls statsmodels' kappa on each resample and on every
    # leave-one-input-out jackknife sample. Same draws, so the two BCa
    # intervals must agree to rounding.
    rng = np.random.default_rng(2)
    truth = np.repeat(rng.integers(0, 4, 30), 5)
    pred = np.where(rng.random(150) < 0.6, truth, rng.integers(0, 4, 150))
    sim = pd.DataFrame(
        {"input_id": np.repeat(np.arange(30), 5), "pred": pred, "label": truth}
    )
    labels = [0, 1, 2, 3]
    fast = evalci.cluster_ci(
        sim,
        "pred",
        cluster="input_id",
        metric=evalci.metrics.kappa(truth="label", labels=labels),
        method="bca",
        n_resamples=300,
        rng=9,
        weight="run",
    )
    slow = evalci.cluster_ci(
        sim,
        "pred",
        cluster="input_id",
        metric=lambda d: _kappa_sm(d.pred, d.label, labels),
        method="bca",
        n_resamples=300,
        rng=9,
        weight="run",
    )
    np.testing.assert_allclose(
        fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-10
    )
    assert fast.acceleration == pytest.approx(slow.acceleration, rel=1e-8)
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), rel=1e-10)


def test_kappa_k1_bca_agrees_with_scipy():
    rng = np.random.default_rng(21)
    label = rng.integers(0, 4, 200)
    pred = np.where(rng.random(200) < 0.65, label, rng.integers(0, 4, 200))
    df = pd.DataFrame({"input_id": np.arange(200), "pred": pred, "label": label})
    ours = evalci.cluster_ci(
        df,
        "pred",
        cluster="input_id",
        metric=evalci.metrics.kappa(truth="label"),
        method="bca",
        n_resamples=10_000,
        rng=1,
    )

    def kappa_stat(p, t, axis=-1):
        # vectorised Cohen's kappa from its definition: observed agreement and
        # chance agreement from the two marginals
        p, t = np.moveaxis(p, axis, -1), np.moveaxis(t, axis, -1)
        p_o = (p == t).mean(axis=-1)
        p_e = sum((p == c).mean(axis=-1) * (t == c).mean(axis=-1) for c in range(4))
        return (p_o - p_e) / (1 - p_e)

    assert kappa_stat(pred, label) == pytest.approx(
        _kappa_sm(pred, label, [0, 1, 2, 3])
    )
    ref = scipy_bootstrap(
        (pred, label),
        kappa_stat,
        paired=True,
        vectorized=True,
        method="BCa",
        n_resamples=10_000,
        seed=2,
    )
    # kappa SE is about 0.04 here; quantile MC error with B=10,000 is about
    # 0.002 per interval; 0.01 is > 3.5 SD of the difference of two intervals
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.01)


# ------------------------------------------------------------ estimands
def test_weight_input_vs_run_with_unequal_k():
    df = clustered(n=30, k=3, unequal=True, seed=1)
    one = df[df.system == "sys0"]
    by_input = evalci.cluster_ci(
        one, "correct", cluster="input_id", n_resamples=100, rng=0
    )
    pooled = evalci.cluster_ci(
        one, "correct", cluster="input_id", n_resamples=100, rng=0, weight="run"
    )
    assert by_input.estimate == pytest.approx(
        one.groupby("input_id").correct.mean().mean()
    )
    assert pooled.estimate == pytest.approx(one.correct.mean())
    assert by_input.estimate != pytest.approx(pooled.estimate)
    assert by_input.weight == "input" and pooled.weight == "run"


def test_gpqa_matches_independent_computation(gpqa):
    # Independent computation: collapse to per-input means with pandas, then
    # scipy's bootstrap of the mean (with k constant the cluster bootstrap of
    # accuracy is the bootstrap of per-input means). MC tolerance as above.
    res = evalci.cluster_ci(
        gpqa, "correct", cluster="input_id", by="system", n_resamples=20_000, rng=0
    )
    for system, part in gpqa.groupby("system"):
        means = part.groupby("input_id").correct.mean().to_numpy()
        ref = scipy_bootstrap((means,), np.mean, n_resamples=20_000, seed=1)
        assert res.estimate[system] == pytest.approx(part.correct.mean())
        assert res.low[system] == pytest.approx(ref.confidence_interval.low, abs=0.006)
        assert res.high[system] == pytest.approx(
            ref.confidence_interval.high, abs=0.006
        )
        assert res.n_inputs[system] == 198 and res.n_runs[system] == 990


# ---------------------------------------------------------- determinism
def test_row_order_and_relabelled_clusters_do_not_change_results():
    df = clustered(n=50, k=3, unequal=True, seed=2)
    kw = dict(cluster="input_id", by="system", n_resamples=300, rng=42)
    for strategy in ["cluster", "hierarchical", "single_draw"]:
        base = evalci.bootstrap(df, "correct", strategy=strategy, **kw)
        shuffled = df.sample(frac=1, random_state=1)
        again = evalci.bootstrap(shuffled, "correct", strategy=strategy, **kw)
        np.testing.assert_array_equal(
            base.bootstrap_distribution, again.bootstrap_distribution
        )
    # relabelling inputs by an order-preserving map keeps every draw
    renamed = df.assign(input_id=df.input_id.str.replace("q", "item-"))
    a = evalci.cluster_ci(df, "correct", **kw)
    b = evalci.cluster_ci(renamed, "correct", **kw)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    # an order-changing relabelling is a different draw of the same law
    reversed_ids = df.assign(input_id=df.input_id.map(lambda s: s[::-1]))
    c = evalci.cluster_ci(reversed_ids, "correct", **kw)
    np.testing.assert_allclose(c.estimate, a.estimate, rtol=1e-12)


def test_determinism_and_rng_types():
    df = clustered(n=40, k=2).query("system == 'sys0'")
    r1 = evalci.cluster_ci(df, "correct", cluster="input_id", rng=7, n_resamples=200)
    r2 = evalci.cluster_ci(df, "correct", cluster="input_id", rng=7, n_resamples=200)
    r3 = evalci.cluster_ci(
        df,
        "correct",
        cluster="input_id",
        rng=np.random.SeedSequence(7),
        n_resamples=200,
    )
    np.testing.assert_array_equal(r1.bootstrap_distribution, r2.bootstrap_distribution)
    np.testing.assert_array_equal(r1.bootstrap_distribution, r3.bootstrap_distribution)
    gen = np.random.default_rng(3)
    g1 = evalci.cluster_ci(df, "correct", cluster="input_id", rng=gen, n_resamples=200)
    g2 = evalci.cluster_ci(df, "correct", cluster="input_id", rng=gen, n_resamples=200)
    assert not np.array_equal(g1.bootstrap_distribution, g2.bootstrap_distribution)
    g3 = evalci.cluster_ci(
        df, "correct", cluster="input_id", rng=np.random.default_rng(3), n_resamples=200
    )
    np.testing.assert_array_equal(g1.bootstrap_distribution, g3.bootstrap_distribution)


def test_prefix_property_and_block_size_invariance(monkeypatch):
    # Streams are keyed by replicate index: the first 500 replicates of a
    # 1,000-replicate run are the 500 of a shorter run, and the block size
    # (memory only) never changes a number.
    df = clustered(n=70, k=3)
    kw = dict(cluster="input_id", by="system", rng=5)
    for strategy in ["cluster", "hierarchical", "single_draw"]:
        long = evalci.bootstrap(
            df, "correct", strategy=strategy, n_resamples=1000, **kw
        )
        short = evalci.bootstrap(
            df, "correct", strategy=strategy, n_resamples=500, **kw
        )
        np.testing.assert_array_equal(
            long.bootstrap_distribution[:, :500], short.bootstrap_distribution
        )
        monkeypatch.setattr(resampling, "BLOCK_WEIGHTS", 1)
        tiny = evalci.bootstrap(
            df, "correct", strategy=strategy, n_resamples=1000, **kw
        )
        monkeypatch.undo()
        np.testing.assert_array_equal(
            long.bootstrap_distribution, tiny.bootstrap_distribution
        )


def test_by_system_is_paired_and_equals_single_system_call(gpqa, monkeypatch):
    # On the index kernel a system alone draws what it draws inside by="system"
    # (same unit, same streams). The pattern kernel draws joint patterns of
    # the systems, so the two calls agree in law, not draw for draw.
    monkeypatch.setattr(evalci.engine.passes, "_FORCE_PATH", "index")
    both = evalci.cluster_ci(
        gpqa, "correct", cluster="input_id", by="system", n_resamples=500, rng=1
    )
    assert both.paired
    name = both.groups[0]
    alone = evalci.cluster_ci(
        gpqa[gpqa.system == name], "correct", cluster="input_id", n_resamples=500, rng=1
    )
    np.testing.assert_array_equal(
        both.bootstrap_distribution[0], alone.bootstrap_distribution
    )


def test_groups_with_disjoint_inputs_draw_independently():
    df = clustered(n=60, k=2)
    one = df[df.system == "sys0"]
    res = evalci.cluster_ci(
        one, "correct", cluster="input_id", by="subject", n_resamples=2000, rng=0
    )
    assert not res.paired
    assert list(res.n_inputs) == [20, 20, 20]
    corr = np.corrcoef(res.bootstrap_distribution)
    # independent draws: correlations are Monte Carlo noise, |r| < 0.1
    # (SD of r at B=2,000 is 0.022, so 0.1 is > 4 SD)
    assert np.abs(corr[np.triu_indices(3, 1)]).max() < 0.1


def test_strata_keep_stratum_sizes():
    df = clustered(n=30, k=2)
    one = df[df.system == "sys0"]
    # with one input per stratum the bootstrap has no freedom at all
    with (
        pytest.warns(evalci.FewClustersWarning),
        pytest.warns(evalci.DegenerateDataWarning),
    ):
        res = evalci.cluster_ci(
            one, "correct", cluster="input_id", strata="input_id", n_resamples=50, rng=0
        )
    assert res.standard_error == 0


def test_callable_metric_general_path_matches_fast_path(monkeypatch):
    # a callable gathers rows of the index kernel's draws: identical to the
    # Metric on that kernel (the pattern kernel agrees in law; test_engine.py)
    monkeypatch.setattr(evalci.engine.passes, "_FORCE_PATH", "index")
    df = clustered(n=40, k=3)
    one = df[df.system == "sys0"]
    for strategy in ["cluster", "hierarchical", "single_draw"]:
        fast = evalci.bootstrap(
            one,
            "correct",
            cluster="input_id",
            strategy=strategy,
            n_resamples=200,
            rng=3,
        )
        slow = evalci.bootstrap(
            one,
            "correct",
            cluster="input_id",
            strategy=strategy,
            metric=lambda d: d.correct.mean(),
            n_resamples=200,
            rng=3,
        )
        np.testing.assert_allclose(
            fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-12
        )


@pytest.mark.filterwarnings("ignore::evalci.FewClustersWarning")
def test_mode_aggregate_majority_and_warning():
    df = pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(6), 3),
            "correct": [1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0],
        }
    )
    with pytest.warns(evalci.EstimandWarning, match="most runs are correct"):
        res = evalci.bootstrap(
            df,
            "correct",
            cluster="input_id",
            strategy="mode_aggregate",
            n_resamples=100,
            rng=0,
        )
    # majorities: 1, 0, 1, 0, 1, 0
    assert res.estimate == pytest.approx(0.5)
    assert res.n_runs == 18 and res.n_inputs == 6


def test_mode_aggregate_breaks_ties_at_random():
    # every input has a 1-1 tie: with random tie-breaks about half go each way
    df = pd.DataFrame(
        {"input_id": np.repeat(np.arange(400), 2), "correct": np.tile([0, 1], 400)}
    )
    with pytest.warns(evalci.EstimandWarning):
        res = evalci.bootstrap(
            df,
            "correct",
            cluster="input_id",
            strategy="mode_aggregate",
            n_resamples=50,
            rng=0,
        )
    # Binomial(400, 0.5)/400 has SD 0.025: 0.5 +- 0.125 is 5 SD
    assert abs(res.estimate - 0.5) < 0.125


def test_iid_with_runs_warns_and_is_narrower():
    df = clustered(n=50, k=4)
    one = df[df.system == "sys0"]
    with pytest.warns(evalci.ClusteringIgnoredWarning, match="independent"):
        iid = evalci.bootstrap(
            one, "correct", cluster="input_id", strategy="iid", n_resamples=2000, rng=0
        )
    clus = evalci.cluster_ci(
        one, "correct", cluster="input_id", n_resamples=2000, rng=0
    )
    assert iid.n_inputs == 200
    assert iid.standard_error < clus.standard_error
    none = evalci.bootstrap(one, "correct", strategy="iid", n_resamples=2000, rng=0)
    assert none.n_inputs == 200


def test_degenerate_all_correct_warns():
    df = pd.DataFrame({"input_id": range(20), "correct": 1})
    with pytest.warns(evalci.DegenerateDataWarning, match="no spread"):
        res = evalci.cluster_ci(
            df, "correct", cluster="input_id", n_resamples=100, rng=0
        )
    assert res.low == res.high == 1.0


# -------------------------------------------------------------- results
def test_result_fields_frame_and_reprs(gpqa):
    res = gpqa.evalci.cluster_ci(
        "correct",
        cluster="input_id",
        by="system",
        method="bca",
        n_resamples=1000,
        rng=0,
    )
    assert isinstance(res.estimate, pd.Series) and res.estimate.index.name == "system"
    assert res.bootstrap_distribution.shape == (2, 1000)
    frame = res.to_frame()
    for col in [
        "system",
        "estimate",
        "low",
        "high",
        "standard_error",
        "n_inputs",
        "n_runs",
        "method",
        "strategy",
        "weight",
        "confidence_level",
    ]:
        assert col in frame.columns
    assert len(frame) == 2
    assert "bca" in repr(res) and "gpt-5-nano" in repr(res)
    assert "<table" in res._repr_html_()
    assert (frame.low < frame.estimate).all() and (frame.estimate < frame.high).all()
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.estimate = 1
    one = gpqa[gpqa.system == res.groups[0]].evalci.cluster_ci(
        "correct", cluster="input_id", n_resamples=1000, rng=0
    )
    assert isinstance(one.estimate, float) and isinstance(one.n_inputs, int)
    assert "BootstrapResult(estimate=" in repr(one)
    assert one.to_frame().shape[0] == 1


def test_interval_recomputes_without_resampling(gpqa):
    res = evalci.cluster_ci(
        gpqa, "correct", cluster="input_id", by="system", n_resamples=2000, rng=0
    )
    bca = res.interval(method="bca")
    direct = evalci.cluster_ci(
        gpqa,
        "correct",
        cluster="input_id",
        by="system",
        method="bca",
        n_resamples=2000,
        rng=0,
    )
    pd.testing.assert_series_equal(bca.low, direct.low, check_names=False)
    pd.testing.assert_series_equal(bca.high, direct.high, check_names=False)


def test_accessor_equals_function(gpqa):
    kw = dict(cluster="input_id", by="system", n_resamples=300, rng=0)
    a = gpqa.evalci.cluster_ci("correct", **kw)
    b = evalci.cluster_ci(gpqa, "correct", **kw)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    c = gpqa.evalci.bootstrap("correct", strategy="hierarchical", **kw)
    d = evalci.bootstrap(gpqa, "correct", strategy="hierarchical", **kw)
    np.testing.assert_array_equal(c.bootstrap_distribution, d.bootstrap_distribution)


def test_user_dataframe_is_never_modified(gpqa):
    before = gpqa.copy()
    strat = gpqa.assign(half=gpqa.input_id.str[-1] < "m")
    snapshot = strat.copy()
    evalci.bootstrap(
        strat,
        "correct",
        cluster="input_id",
        by="system",
        strata="half",
        strategy="hierarchical",
        n_resamples=50,
        rng=0,
    )
    pd.testing.assert_frame_equal(strat, snapshot)
    with pytest.warns(evalci.EstimandWarning):
        evalci.bootstrap(
            gpqa,
            "correct",
            cluster="input_id",
            by="system",
            strategy="mode_aggregate",
            n_resamples=50,
            rng=0,
        )
    evalci.cluster_ci(
        gpqa,
        "correct",
        cluster="input_id",
        by="system",
        method="bca",
        n_resamples=50,
        rng=0,
    )
    pd.testing.assert_frame_equal(gpqa, before)


@pytest.mark.parametrize("strategy", ["cluster", "hierarchical"])
def test_memory_does_not_grow_with_n_resamples(strategy):
    # Peak traced allocation (numpy reports to tracemalloc) for B=20,000 vs
    # B=2,000 at N=2,000, k=3: only the (B,) outputs may grow -- a few arrays
    # of 8 bytes per replicate, ~1.5 MB. One (B x N) float weight matrix would
    # add 288 MB; one (B x N x k) index array for hierarchical, 864 MB.
    import tracemalloc

    df = clustered(n=2000, k=3, p_sys=(0.6,), seed=9)

    def peak(b):
        tracemalloc.start()
        evalci.bootstrap(
            df,
            "correct",
            cluster="input_id",
            strategy=strategy,
            method="bca",
            n_resamples=b,
            rng=0,
        )
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top

    growth = peak(20_000) - peak(2_000)
    assert growth < 20 * 18_000 * 8  # 2.9 MB: twenty (B,) float arrays


# ---------------------------------------------------------- counts tables
def _expand(counts):
    rows = counts.loc[counts.index.repeat(counts.n_runs)].copy()
    rows["run"] = rows.groupby(["input_id", "system"]).cumcount()
    rows["correct"] = (rows.run < rows.n_correct).astype(int)
    return rows


@pytest.mark.parametrize("weight", ["input", "run"])
def test_counts_table_equals_expanded_rows(weight):
    # MATH500 at temperature 0.7: up to 1,100 runs per input, k differs per input
    counts = shared_data("math500_cot_highk_counts.csv")
    counts = counts[counts.system.isin(counts.system.unique()[:2])]
    kw = dict(
        cluster="input_id",
        by="system",
        method="bca",
        n_resamples=500,
        rng=4,
        weight=weight,
    )
    fast = counts.evalci.cluster_ci(successes="n_correct", trials="n_runs", **kw)
    rows = evalci.cluster_ci(_expand(counts), "correct", **kw)
    np.testing.assert_allclose(
        fast.bootstrap_distribution, rows.bootstrap_distribution, rtol=1e-9
    )
    np.testing.assert_allclose(fast.low, rows.low, rtol=1e-9)
    pd.testing.assert_series_equal(fast.n_runs, rows.n_runs, check_dtype=False)


def test_counts_table_errors():
    counts = pd.DataFrame({"input_id": [1, 2, 3], "c": [1, 5, 2], "n": [3, 4, 4]})
    with pytest.raises(ValueError, match=r"0 <= successes <= trials"):
        evalci.cluster_ci(counts, cluster="input_id", successes="c", trials="n")
    with pytest.raises(ValueError, match=r"needs both `successes`"):
        evalci.cluster_ci(counts, cluster="input_id", successes="c")
    # run-level strategies take counts tables (issue 10); row-level ones do not
    with pytest.raises(ValueError, match=r"strategy='cluster', 'hierarchical' or"):
        evalci.bootstrap(
            counts,
            cluster="input_id",
            successes="c",
            trials="n",
            strategy="mode_aggregate",
        )
    with pytest.raises(ValueError, match=r"`value` is required"):
        evalci.cluster_ci(counts, cluster="input_id")


def test_equal_k_keeps_grid_values_exact():
    # 35 correct of 50 runs (10 inputs x 5): the estimate is the grid value 0.7
    # exactly, and so is every replicate that should be (docs/paper-notes.md: endpoints
    # equal to 0.70 must count as covered, so rounding must not move them).
    c = np.array([1, 1, 1, 1, 0] * 5 + [1, 1, 1, 0, 0] * 5)
    df = pd.DataFrame({"input_id": np.repeat(np.arange(10), 5), "correct": c})
    res = evalci.cluster_ci(df, "correct", "input_id", n_resamples=1000, rng=0)
    assert res.estimate == 0.7
    # a replicate is 0.7 exactly when 5 of the 10 draws are 0.8-inputs
    w = res.bootstrap_distribution
    assert np.all(np.isclose(w, 0.7) == (w == 0.7))
    hier = evalci.bootstrap(
        df, "correct", "input_id", strategy="hierarchical", n_resamples=1000, rng=0
    )
    h = hier.bootstrap_distribution
    assert np.all(np.isclose(h, 0.7) == (h == 0.7))


def test_normal_interval_is_estimate_plus_minus_z_se(gpqa):
    # Efron & Tibshirani (1993) eq. 13.5, with the bootstrap SE (ddof=1)
    res = evalci.cluster_ci(
        gpqa,
        "correct",
        "input_id",
        by="system",
        method="normal",
        n_resamples=2000,
        rng=0,
    )
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(res.low, res.estimate - z * res.standard_error)
    np.testing.assert_allclose(res.high, res.estimate + z * res.standard_error)
    again = res.interval(method="percentile").interval(method="normal")
    np.testing.assert_allclose(again.low, res.low)
