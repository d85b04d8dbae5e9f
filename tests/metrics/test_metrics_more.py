"""Metrics beyond accuracy (issue 13): pass@k, pass^k, P/R/F1, weighted kappa,
Krippendorff's alpha, ratio, quantile; and the per-input hook behind two of
them. Each value is checked against an independent reference (a published
worked example, statsmodels, or a slow implementation written here from the
definition); the per-input hook against the callable path on the same draws.
"""

import math
from fractions import Fraction

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

import evalci
from evalci import metrics as M

from conftest import clustered, shared_data


def value_of(metric, df, value, cluster=None):
    """The metric's point value on a table, straight from its blueprint."""
    data = {c: df[c].to_numpy() for c in df}
    stats = metric.statistics(data, value)
    if metric.per_input is not None:
        sums = pd.DataFrame(stats).groupby(df[cluster].to_numpy()).sum().to_numpy()
        stats = metric.per_input(sums)
    return float(metric.finalize(stats.sum(axis=0)))


# ======================================================== pass@k and pass^k
def slow_pass_at_k(n, c, k):
    """Chen et al. (2021), eq. 1, exactly with integers: 1 - C(n-c,k)/C(n,k)."""
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def slow_pass_hat_k(n, c, k):
    """tau-bench's pass^k estimator, exactly: C(c,k)/C(n,k)."""
    return Fraction(math.comb(c, k), math.comb(n, k))


def test_pass_at_k_seed004_worked_example():
    # seed 004 (section "pass@k and Non-Determinism"):
    # n = 10 samples, c = 3 correct: pass@1 = 0.30, pass@5 = 1 - 21/252 ~ 0.92
    t = np.array([[3.0, 10.0]])
    p1, p5 = (M.pass_at_k(k).per_input(t)[0, 0] for k in (1, 5))
    assert p1 == pytest.approx(0.30, abs=1e-15)
    assert p5 == pytest.approx(1 - 21 / 252, abs=1e-15)
    assert round(p5, 2) == 0.92


def test_pass_at_k_and_hat_k_against_math_comb():
    # random (n, c, k) including n up to 2,000 (log-gamma must neither
    # overflow nor lose small values); reference: exact rationals
    rng = np.random.default_rng(13)
    n = rng.integers(1, 2000, 400)
    n[:50] = rng.integers(1, 12, 50)
    c = rng.integers(0, n + 1)
    for k in (1, 2, 3, 7, 50):
        ok = n >= k
        t = np.column_stack([c[ok], n[ok]]).astype(float)
        at = M.pass_at_k(k).per_input(t)
        hat = M.pass_hat_k(k).per_input(t)
        ref_at = [
            float(slow_pass_at_k(a, b, k)) for a, b in zip(n[ok], c[ok], strict=True)
        ]
        ref_hat = [
            float(slow_pass_hat_k(a, b, k)) for a, b in zip(n[ok], c[ok], strict=True)
        ]
        np.testing.assert_allclose(at[:, 0], ref_at, rtol=1e-10, atol=1e-300)
        np.testing.assert_allclose(hat[:, 0], ref_hat, rtol=1e-10, atol=1e-300)
        assert (at[:, 1] == 1).all() and (hat[:, 1] == 1).all()
    # the edges: all wrong, all right, n - c < k
    t = np.array([[0.0, 5.0], [5.0, 5.0], [4.0, 5.0]])
    np.testing.assert_array_equal(M.pass_at_k(2).per_input(t)[:, 0], [0, 1, 1])
    np.testing.assert_allclose(M.pass_hat_k(5).per_input(t)[:, 0], [0, 1, 0])


def test_pass_hat_1_and_pass_at_1_equal_accuracy_on_taubench():
    # tau-bench airline, gpt-4o, 50 tasks x 4 trials (tests/data/PROVENANCE.md)
    tb = shared_data("taubench_airline_gpt4o_4runs.csv")
    kw = dict(cluster="input_id", n_resamples=2000, rng=4)
    acc = evalci.cluster_ci(tb, "correct", **kw)
    for m in (M.pass_hat_k(1), M.pass_at_k(1)):
        r = evalci.cluster_ci(tb, "correct", metric=m, **kw)
        assert r.estimate == pytest.approx(acc.estimate, abs=1e-12)
        # the same draws of inputs: per-input c/4 against (c, 4), equal k
        np.testing.assert_allclose(
            r.bootstrap_distribution, acc.bootstrap_distribution, atol=1e-12
        )


def test_pass_hat_k_taubench_values():
    # reference: the definition applied to each task's c of 4, by hand
    tb = shared_data("taubench_airline_gpt4o_4runs.csv")
    c = tb.groupby("input_id").correct.sum().to_numpy()
    for k in range(1, 5):
        ref = np.mean([float(slow_pass_hat_k(4, int(ci), k)) for ci in c])
        r = evalci.cluster_ci(
            tb,
            "correct",
            cluster="input_id",
            metric=M.pass_hat_k(k),
            n_resamples=500,
            rng=0,
        )
        assert r.estimate == pytest.approx(ref, abs=1e-12)
        assert r.metric == f"pass^{k}" and r.low < r.estimate < r.high
    # pass^k falls with k on data where tasks succeed only sometimes
    ests = [value_of(M.pass_hat_k(k), tb, "correct", "input_id") for k in (1, 4)]
    assert ests[1] < ests[0]


def callable_pass_at_k(k, cluster="input_id", value="correct"):
    """A slow pass@k over a table's rows: per input with math.comb, averaged."""

    def f(d):
        g = d.groupby(cluster)[value].agg(["sum", "count"])
        return float(
            np.mean([slow_pass_at_k(n, c, k) for c, n in g.itertuples(index=False)])
        )

    return f


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_pass_at_k_bootstrap_equals_callable_on_same_draws(monkeypatch, method):
    # the per-input hook: T holds each drawn input's pass@k, so every replicate
    # (and, for BCa, the leave-one-input-out jackknife) must equal the callable
    # that recomputes pass@k per drawn input (copies relabelled) on the same
    # draws of the index kernel
    monkeypatch.setattr(evalci.engine.passes, "_FORCE_PATH", "index")
    df = clustered(n=30, k=5, seed=2)
    one = df[df.system == "sys0"]
    kw = dict(cluster="input_id", method=method, n_resamples=200, rng=7)
    fast = evalci.cluster_ci(one, "correct", metric=M.pass_at_k(3), **kw)
    slow = evalci.cluster_ci(one, "correct", metric=callable_pass_at_k(3), **kw)
    np.testing.assert_allclose(
        fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-12
    )
    np.testing.assert_allclose(fast.estimate, slow.estimate, rtol=1e-12)
    if method == "bca":
        # the acceleration is read from the jackknife, finalize(total - T)
        np.testing.assert_allclose(fast.acceleration, slow.acceleration, rtol=1e-9)
        # (z0 counts exact ties with the estimate, and the two paths sum in
        # different orders: 0.89 against 0.8899999999999999 flips the ties, so
        # the BCa endpoints are not compared here)
    else:
        np.testing.assert_allclose(
            [fast.low, fast.high], [slow.low, slow.high], rtol=1e-12
        )


def test_pass_at_k_pattern_kernel_agrees_in_law(monkeypatch):
    # the pattern kernel (inputs grouped by their distinct per-input T) against
    # the index kernel: same estimate and jackknife, SEs within Monte Carlo
    # noise. With B = 4000 each, the SE of a bootstrap SE is about
    # SE / sqrt(2B) ~ 1.1%, so 6% apart is > 3.8 sigma on the difference of
    # two independent SEs (false-failure rate < 2e-4)
    df = clustered(n=80, k=4, seed=5)
    one = df[df.system == "sys1"]
    kw = dict(cluster="input_id", metric=M.pass_at_k(2), n_resamples=4000, rng=1)
    out = {}
    for path in ("patterns", "index"):
        monkeypatch.setattr(evalci.engine.passes, "_FORCE_PATH", path)
        out[path] = evalci.cluster_ci(one, "correct", method="bca", **kw)
    a, b = out["patterns"], out["index"]
    assert (a.kernel, b.kernel) == ("patterns", "index")
    assert a.estimate == pytest.approx(b.estimate, abs=1e-12)
    assert a.acceleration == pytest.approx(b.acceleration, rel=1e-9)
    assert a.standard_error == pytest.approx(b.standard_error, rel=0.06)


def test_pass_at_k_compare_paired_gap(monkeypatch):
    # compare() reads the same T: gap = difference of per-system pass@k, and
    # its interval equals the callable's on the same shared draws
    monkeypatch.setattr(evalci.engine.passes, "_FORCE_PATH", "index")
    df = clustered(n=40, k=4, seed=8)
    kw = dict(cluster="input_id", system="system", n_resamples=300, rng=3)
    fast = evalci.compare(df, "correct", metric=M.pass_at_k(2), **kw).table
    slow = evalci.compare(df, "correct", metric=callable_pass_at_k(2), **kw).table
    ref = [
        value_of(M.pass_at_k(2), df[df.system == s], "correct", "input_id")
        for s in ("sys0", "sys1")
    ]
    assert fast.gap.iloc[0] == pytest.approx(ref[1] - ref[0], abs=1e-12)
    np.testing.assert_allclose(
        fast[["gap", "low", "high"]].to_numpy(float),
        slow[["gap", "low", "high"]].to_numpy(float),
        rtol=1e-12,
    )


def test_pass_at_k_dask_frame_equals_pandas():
    # the Dask path compresses identical rows (multiplicities): the per-input
    # sums, hence every replicate, are unchanged
    df = clustered(n=40, k=4, seed=9)
    ddf = dd.from_pandas(df.sample(frac=1, random_state=0), npartitions=3)
    kw = dict(cluster="input_id", by="system", metric=M.pass_at_k(2))
    kw |= dict(n_resamples=300, rng=5, method="bca")
    a = evalci.cluster_ci(df, "correct", **kw)
    b = evalci.cluster_ci(ddf, "correct", **kw)
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-12
    )
    np.testing.assert_allclose(np.asarray(a.low), np.asarray(b.low), rtol=1e-12)


def test_pass_at_k_counts_table_equals_rows():
    # trials=: a counts table (c of n per row) gives the same per-input sums
    df = clustered(n=40, k=5, seed=1)
    one = df[df.system == "sys0"]
    counts = one.groupby("input_id").correct.agg(c="sum", n="count").reset_index()
    kw = dict(cluster="input_id", n_resamples=300, rng=2)
    a = evalci.cluster_ci(one, "correct", metric=M.pass_at_k(3), **kw)
    b = evalci.cluster_ci(counts, "c", metric=M.pass_at_k(3, trials="n"), **kw)
    assert a.estimate == pytest.approx(b.estimate, abs=1e-12)
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-12
    )
    with pytest.raises(ValueError, match=r"`value` column 'c' must count"):
        evalci.cluster_ci(
            counts.assign(c=counts.n + 1),
            "c",
            metric=M.pass_at_k(1, trials="n"),
            **kw,
        )


def test_pass_at_k_bad_arguments():
    df = clustered(n=20, k=3, unequal=True, seed=0)
    one = df[df.system == "sys0"]
    with pytest.raises(ValueError, match=r"`k` must be a positive integer.*got 0"):
        M.pass_at_k(0)
    with pytest.raises(TypeError, match=r"`k` must be an integer.*2.5"):
        M.pass_hat_k(2.5)
    with pytest.raises(TypeError, match=r"`k` must be an integer"):
        M.pass_at_k("3")
    fewest = int(one.groupby("input_id").size().min())
    with pytest.raises(
        ValueError, match=rf"`k`=50 exceeds the runs of 20 input.*n={fewest} runs"
    ):
        evalci.cluster_ci(one, "correct", cluster="input_id", metric=M.pass_at_k(50))
    for strategy in ("hierarchical", "single_draw", "iid", "mode_aggregate"):
        with pytest.raises(ValueError, match=r"`strategy`=.*use strategy='cluster'"):
            evalci.bootstrap(
                one,
                "correct",
                cluster="input_id",
                strategy=strategy,
                metric=M.pass_at_k(1),
            )
    nested = one.assign(repo=one.input_id.str[:3])
    with pytest.raises(ValueError, match=r"`input` \['input_id'\] cannot be used"):
        evalci.cluster_ci(
            nested,
            "correct",
            cluster="repo",
            input="input_id",
            metric=M.pass_at_k(1),
        )
    with pytest.raises(ValueError, match=r"must hold only 0/1"):
        evalci.cluster_ci(
            one.assign(correct=one.correct * 2),
            "correct",
            cluster="input_id",
            metric=M.pass_at_k(1),
        )


def test_per_input_pass_k_refuses_run_weights():
    # each input contributes one value: weight="run" used to be ignored
    # silently, now it is refused (issue 24; tests/house/test_silent_answers_2.py)
    df = clustered(n=30, k=3, unequal=True, seed=4)
    one = df[df.system == "sys0"]
    k = int(one.groupby("input_id").size().min())
    kw = dict(cluster="input_id", metric=M.pass_at_k(k), n_resamples=200, rng=0)
    evalci.cluster_ci(one, "correct", weight="input", **kw)
    with pytest.raises(ValueError, match="`weight`='run' cannot be used"):
        evalci.cluster_ci(one, "correct", weight="run", **kw)


def test_metric_per_input_must_be_callable():
    with pytest.raises(TypeError, match="`per_input` must be a callable"):
        M.Metric("x", statistics=len, finalize=len, per_input=3)


# ============================================================ P / R / F1
def slow_prf(true, pred, labels):
    """Per-label TP/FP/FN by loops; scikit-learn's definitions, 0 for 0/0.

    macro = unweighted mean of per-label scores; micro = from pooled counts
    (sklearn.metrics.precision_recall_fscore_support, zero_division=0).
    """
    per = {}
    for c in labels:
        tp = sum(1 for t, p in zip(true, pred, strict=True) if t == c and p == c)
        fp = sum(1 for t, p in zip(true, pred, strict=True) if t != c and p == c)
        fn = sum(1 for t, p in zip(true, pred, strict=True) if t == c and p != c)
        per[c] = (tp, fp, fn)

    def score(tp, fp, fn):
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
        return p, r, f

    macro = np.mean([score(*v) for v in per.values()], axis=0)
    micro = score(*np.sum(list(per.values()), axis=0))
    return per, score, macro, micro


def labels_frame(n=120, labels=("a", "b", "c", "d"), seed=0):
    rng = np.random.default_rng(seed)
    true = rng.choice(labels, n)
    pred = np.where(rng.random(n) < 0.6, true, rng.choice(labels, n))
    return pd.DataFrame({"input_id": np.arange(n), "pred": pred, "label": true})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_precision_recall_f1_against_slow_reference(seed):
    df = labels_frame(seed=seed)
    labels = sorted(set(df.label) | set(df.pred))
    per, score, macro, micro = slow_prf(list(df.label), list(df.pred), labels)
    for i, fn in enumerate((M.precision, M.recall, M.f1)):
        got_macro = value_of(fn("label", average="macro"), df, "pred")
        got_micro = value_of(fn("label", average="micro"), df, "pred")
        assert got_macro == pytest.approx(macro[i], abs=1e-12)
        assert got_micro == pytest.approx(micro[i], abs=1e-12)
    # binary: two labels, `positive` chosen
    b = df.assign(pred=df.pred == "a", label=df.label == "a")
    per, score, _, _ = slow_prf(list(b.label), list(b.pred), [True, False])
    for i, fn in enumerate((M.precision, M.recall, M.f1)):
        got = value_of(fn("label", positive=True), b, "pred")
        assert got == pytest.approx(score(*per[True])[i], abs=1e-12)
    # micro averaging over all labels is accuracy
    assert value_of(M.f1("label", average="micro"), df, "pred") == pytest.approx(
        (df.pred == df.label).mean()
    )


def test_prf_zero_division_and_absent_label():
    # "z" is in labels= but never seen: its per-label scores are 0 (sklearn)
    df = pd.DataFrame({"pred": ["a", "a", "b", "b"], "label": ["a", "b", "b", "b"]})
    labels = ["a", "b", "z"]
    _, _, macro, _ = slow_prf(list(df.label), list(df.pred), labels)
    got = value_of(M.recall("label", average="macro", labels=labels), df, "pred")
    assert got == pytest.approx(macro[1])
    none_pos = pd.DataFrame({"pred": [0, 0, 0], "label": [1, 0, 0]})
    assert value_of(M.precision("label"), none_pos, "pred") == 0.0
    m = M.precision("label", zero_division=np.nan)
    assert np.isnan(value_of(m, none_pos, "pred"))


def test_f1_cluster_ci_runs():
    # binary F1 over k=3 runs per input, intervals over inputs
    df = clustered(n=60, k=3, seed=6)
    df = df[df.system == "sys0"].assign(label=lambda d: d.subject == 0)
    df["pred"] = (df.correct == 1) == df.label
    r = evalci.cluster_ci(
        df,
        "pred",
        cluster="input_id",
        metric=M.f1("label", positive=True),
        n_resamples=500,
        rng=0,
        method="bca",
    )
    ref = value_of(M.f1("label", positive=True), df, "pred")
    assert r.metric == "f1" and r.estimate == pytest.approx(ref)
    assert r.low < r.estimate < r.high


def test_prf_bad_arguments():
    df = labels_frame(n=40)
    with pytest.raises(ValueError, match=r"`average` must be 'binary'.*not 'weighted'"):
        M.f1("label", average="weighted")
    with pytest.raises(ValueError, match=r"average='binary' needs at most two labels"):
        evalci.cluster_ci(df, "pred", cluster="input_id", metric=M.f1("label"))
    two = df.assign(pred=df.pred == "a", label=df.label == "a")
    with pytest.raises(ValueError, match=r"`positive`='yes' is not a label"):
        evalci.cluster_ci(
            two, "pred", cluster="input_id", metric=M.recall("label", positive="yes")
        )
    with pytest.raises(ValueError, match=r"`zero_division` must be 0, 1"):
        M.precision(zero_division=0.5)
    with pytest.raises(TypeError, match=r"`truth` must be a column name"):
        M.recall(truth=3)


# ======================================================== weighted kappa
@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_against_statsmodels(weights):
    rng = np.random.default_rng(3)
    true = rng.integers(1, 6, 300)
    pred = np.clip(true + rng.integers(-2, 3, 300), 1, 5)
    df = pd.DataFrame({"input_id": np.arange(300), "pred": pred, "label": true})
    table = pd.crosstab(df.label, df.pred).reindex(
        index=range(1, 6), columns=range(1, 6), fill_value=0
    )
    ref = cohens_kappa(table.to_numpy(), wt=weights).kappa
    m = M.kappa("label", weights=weights)
    assert m.name == f"kappa_{weights}"
    assert value_of(m, df, "pred") == pytest.approx(ref, abs=1e-12)
    # explicit ordered text labels give the same value
    words = np.array(["one", "two", "three", "four", "five"])
    w = df.assign(pred=words[df.pred - 1], label=words[df.label - 1])
    mw = M.kappa("label", labels=list(words), weights=weights)
    assert value_of(mw, w, "pred") == pytest.approx(ref, abs=1e-12)
    r = evalci.cluster_ci(df, "pred", cluster="input_id", metric=m, n_resamples=300)
    assert r.low < r.estimate < r.high


def test_unweighted_kappa_unchanged():
    df = labels_frame(n=200, seed=4)
    table = pd.crosstab(df.label, df.pred).to_numpy()
    assert value_of(M.kappa("label"), df, "pred") == pytest.approx(
        cohens_kappa(table).kappa, abs=1e-12
    )


def test_weighted_kappa_bad_arguments():
    df = labels_frame(n=40)
    with pytest.raises(ValueError, match=r"`weights` must be one of"):
        M.kappa("label", weights="cubic")
    with pytest.raises(ValueError, match=r"needs ordered labels.*pass labels="):
        evalci.cluster_ci(
            df, "pred", cluster="input_id", metric=M.kappa("label", weights="linear")
        )
    with pytest.raises(ValueError, match=r"label 'd' is not in `labels`"):
        evalci.cluster_ci(
            df,
            "pred",
            cluster="input_id",
            metric=M.kappa("label", labels=["a", "b", "c"], weights="linear"),
        )
    with pytest.raises(ValueError, match=r"`labels` must list at least 2"):
        M.kappa("label", labels=["a"])


# ==================================================== Krippendorff's alpha
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
# 4 observers x 12 units, values 1-5, "." missing (unit 12 has one value)
KRIPP_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
KRIPP_2011_ALPHA = {
    "nominal": 0.743,
    "ordinal": 0.815,
    "interval": 0.849,
    "ratio": 0.797,
}


def kripp_frame():
    rows = [
        (u, o, v)
        for o, obs in enumerate(KRIPP_2011)
        for u, v in enumerate(obs)
        if v is not None
    ]
    return pd.DataFrame(rows, columns=["unit", "observer", "rating"])


def slow_alpha(df, level):
    """alpha = 1 - D_o / D_e from pairs of values (Krippendorff 2011, eq. A)."""
    units = [g.rating.tolist() for _, g in df.groupby("unit")]
    units = [u for u in units if len(u) >= 2]  # pairable values only
    values = [v for u in units for v in u]
    n = len(values)
    counts = {c: values.count(c) for c in set(values)}

    def delta(c, k):
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (c - k) ** 2
        if level == "ratio":
            return ((c - k) / (c + k)) ** 2
        lo, hi = min(c, k), max(c, k)
        between = sum(v for g, v in counts.items() if lo <= g <= hi)
        return (between - (counts[c] + counts[k]) / 2) ** 2

    d_o = (
        sum(
            delta(u[i], u[j]) / (len(u) - 1)
            for u in units
            for i in range(len(u))
            for j in range(len(u))
            if i != j
        )
        / n
    )
    d_e = sum(
        delta(values[i], values[j]) for i in range(n) for j in range(n) if i != j
    ) / (n * (n - 1))
    return 1 - d_o / d_e


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_2011_worked_example(level):
    df = kripp_frame()
    got = value_of(M.krippendorff_alpha(level), df, "rating", "unit")
    assert got == pytest.approx(slow_alpha(df, level), abs=1e-12)
    assert round(got, 3) == KRIPP_2011_ALPHA[level]  # the published values


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_random_against_slow(level):
    # 25 units, 3-5 raters with missing ratings, values 1..4 plus a gap (6)
    rng = np.random.default_rng(11)
    rows = []
    for u in range(25):
        truth = rng.integers(1, 5)
        for r in range(int(rng.integers(1, 6))):
            v = truth if rng.random() < 0.6 else rng.choice([1, 2, 3, 4, 6])
            rows.append((u, r, int(v)))
    df = pd.DataFrame(rows, columns=["unit", "observer", "rating"])
    got = value_of(M.krippendorff_alpha(level), df, "rating", "unit")
    assert got == pytest.approx(slow_alpha(df, level), abs=1e-12)
    # the unseen label 5 in labels= changes nothing
    m = M.krippendorff_alpha(level, labels=[1, 2, 3, 4, 5, 6])
    assert value_of(m, df, "rating", "unit") == pytest.approx(got, abs=1e-12)


def test_krippendorff_alpha_cluster_ci_and_jackknife(monkeypatch):
    # BCa reads finalize(total - T): the fast jackknife must equal the
    # callable's leave-one-unit-out alpha from the slow reference
    monkeypatch.setattr(evalci.engine.passes, "_FORCE_PATH", "index")
    df = kripp_frame()
    # weight="run": a callable refuses input weighting at unequal k (ignored
    # by the per-input metric)
    kw = dict(cluster="unit", method="bca", weight="run", n_resamples=300, rng=0)
    fast = evalci.cluster_ci(
        df, "rating", metric=M.krippendorff_alpha("interval"), **kw
    )
    slow = evalci.cluster_ci(
        df, "rating", metric=lambda d: slow_alpha(d, "interval"), **kw
    )
    np.testing.assert_allclose(
        fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-9
    )
    np.testing.assert_allclose(fast.acceleration, slow.acceleration, rtol=1e-9)
    assert fast.estimate == pytest.approx(0.849, abs=5e-4)


def test_krippendorff_alpha_bad_arguments():
    df = kripp_frame()
    with pytest.raises(ValueError, match=r"`level` must be one of"):
        M.krippendorff_alpha("cardinal")
    with pytest.raises(ValueError, match=r"needs numeric ratings"):
        M.krippendorff_alpha("interval", labels=["lo", "mid", "hi"])
    text = df.assign(rating=df.rating.map({1: "a", 2: "b", 3: "c", 4: "d", 5: "e"}))
    with pytest.raises(ValueError, match=r"level='ordinal' needs ordered labels"):
        evalci.cluster_ci(
            text, "rating", cluster="unit", metric=M.krippendorff_alpha("ordinal")
        )
    # ordered text labels are fine for ordinal, and equal the numeric result
    m = M.krippendorff_alpha("ordinal", labels=list("abcde"))
    assert value_of(m, text, "rating", "unit") == pytest.approx(
        KRIPP_2011_ALPHA["ordinal"], abs=5e-4
    )
    with pytest.raises(ValueError, match=r"`strategy`='hierarchical' cannot"):
        evalci.bootstrap(
            df,
            "rating",
            cluster="unit",
            strategy="hierarchical",
            metric=M.krippendorff_alpha(),
        )


# =================================================== ratio, mean, quantile
def test_ratio_against_pandas(gpqa):
    # cost per correct answer on GPQA with a made-up per-run cost column
    rng = np.random.default_rng(0)
    df = gpqa.assign(cost=rng.gamma(2.0, 0.01, len(gpqa)))
    one = df[df.system == df.system.iloc[0]]
    m = M.ratio("correct", name="cost_per_correct")
    r = evalci.cluster_ci(one, "cost", cluster="input_id", metric=m, n_resamples=500)
    # equal k = 5: input weighting changes nothing in a ratio of sums
    assert r.estimate == pytest.approx(one.cost.sum() / one.correct.sum(), rel=1e-12)
    assert r.metric == "cost_per_correct" and r.low < r.estimate < r.high
    with pytest.raises(ValueError, match=r"`denominator` column 'system' must be"):
        evalci.cluster_ci(one, "cost", cluster="input_id", metric=M.ratio("system"))
    with pytest.raises(TypeError, match=r"`denominator` must be a column name"):
        M.ratio(["correct"])


def test_quantile_callable(gpqa):
    rng = np.random.default_rng(1)
    df = gpqa.assign(latency=rng.lognormal(0.0, 0.6, len(gpqa)))
    one = df[df.system == df.system.iloc[0]]
    p95 = M.quantile(0.95, "latency")
    assert p95.__name__ == "quantile_0.95"
    assert M.quantile(0.5, "latency").__name__ == "quantile_0.5"
    r = evalci.cluster_ci(
        one, "latency", cluster="input_id", metric=p95, n_resamples=200, rng=0
    )
    assert r.metric == "quantile_0.95"
    assert r.estimate == pytest.approx(np.quantile(one.latency, 0.95))
    assert r.low < r.estimate < r.high
    for q in (0, 1, 1.5, "x"):
        with pytest.raises(ValueError, match=r"`q` must be"):
            M.quantile(q, "latency")


def test_mean_covers_bounded_scores():
    # a judge's 1-10 score: metric="mean", interval within [1, 10]
    rng = np.random.default_rng(2)
    df = pd.DataFrame(
        {"input_id": np.repeat(np.arange(50), 3), "score": rng.integers(1, 11, 150)}
    )
    r = evalci.cluster_ci(df, "score", cluster="input_id", n_resamples=500, rng=0)
    assert r.estimate == pytest.approx(df.score.mean())
    assert 1 <= r.low < r.estimate < r.high <= 10


# ============================================== row order, other containers
@pytest.mark.parametrize(
    "metric", [M.pass_at_k(2), M.krippendorff_alpha("ordinal"), M.f1(average="macro")]
)
def test_row_order_does_not_matter(metric):
    # canonical order: a shuffled table gives bit-identical replicates
    rng = np.random.default_rng(0)
    df = clustered(n=40, k=3, seed=3)
    df = df[df.system == "sys0"].assign(label=lambda d: d.subject % 2)
    kw = dict(cluster="input_id", metric=metric, n_resamples=200, rng=1)
    a = evalci.cluster_ci(df, "correct", **kw)
    b = evalci.cluster_ci(df.iloc[rng.permutation(len(df))], "correct", **kw)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


def test_pass_at_k_dataarray_equals_pandas():
    # a DataArray with padded (NaN) runs becomes the same long table
    df = clustered(n=40, k=4, unequal=True, seed=2)
    kw = dict(metric=M.pass_at_k(1), n_resamples=300, rng=2)
    res = evalci.cluster_ci(df, "correct", cluster="input_id", by="system", **kw)
    ds = df.evalci.to_xarray("correct").evalci.cluster_ci(**kw)
    np.testing.assert_array_equal(ds.estimate.values, res.estimate.to_numpy())
    np.testing.assert_array_equal(
        ds.bootstrap_distribution.values, res.bootstrap_distribution.T
    )


@pytest.mark.slow
def test_pass_at_k_interval_coverage_beta_bernoulli():
    # calibration: inputs p_i ~ Beta(a, b), n = 5 runs, k = 3. The population
    # pass@3 is 1 - E[(1 - p)^3] = 1 - B(a, b + 3) / B(a, b). Over 300 seeded
    # trials (N = 120 inputs, B = 1000) the 95% percentile interval should
    # cover it about 95% of the time; the SD of the observed rate is 1.3
    # points, so [0.89, 0.99] fails by chance with probability < 1e-4 at a
    # true 95% (binomial tails 9e-6 and 3e-5); observed: 285 / 300 = 0.95
    from scipy.special import beta as beta_fn

    model = evalci.simulate.BetaBernoulli(0.4, 0.3)
    a, b = model.a[0], model.b[0]
    truth = 1 - beta_fn(a, b + 3) / beta_fn(a, b)
    hits = 0
    for seed in range(300):
        df = model.sample(120, 5, rng=seed)
        r = evalci.cluster_ci(
            df,
            "correct",
            cluster="input_id",
            metric=M.pass_at_k(3),
            n_resamples=1000,
            rng=seed,
        )
        hits += r.low <= truth <= r.high
    assert 0.89 <= hits / 300 <= 0.99, hits / 300


def test_unregistered_factory_name_says_how_to_build_it():
    df = clustered(n=20, k=2)
    hints = [("f1", r"f1\(truth=...\)"), ("pass@5", r"pass_at_k\(5\)")]
    for name, call in hints + [("pass^2", r"pass_hat_k\(2\)")]:
        with pytest.raises(ValueError, match=rf"is not registered: .*metrics\.{call}"):
            evalci.cluster_ci(df, "correct", cluster="input_id", metric=name)
