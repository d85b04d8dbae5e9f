"""The engine's two kernels: patterns where they compress, indices otherwise.

Both draw from the same law (issue 10): a cluster resample is fully described
by how many copies of each distinct per-input pattern it drew, and the
run-level strategies have exact multinomial forms per pattern. Here the two
kernels run on the same data, forced one way and the other, and their
replicate distributions are compared with two-sample Kolmogorov-Smirnov tests.
KS is conservative for these discrete distributions; each assertion requires
p > 1e-4, so the false-failure rate is below 1e-4 per assertion (about 2e-3
for the file).
"""

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci.engine import passes as engine

from conftest import clustered, shared_data

B = 4000


def _run(monkeypatch, path, *args, rng, **kwargs):
    monkeypatch.setattr(engine, "_FORCE_PATH", path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        res = evalci.bootstrap(*args, n_resamples=B, rng=rng, **kwargs)
    monkeypatch.setattr(engine, "_FORCE_PATH", None)
    return res


def _same_law(a, b):
    da = np.atleast_2d(a.bootstrap_distribution)
    db = np.atleast_2d(b.bootstrap_distribution)
    for x, y in zip(da, db, strict=True):
        assert stats.ks_2samp(x, y).pvalue > 1e-4
    np.testing.assert_allclose(a.estimate, b.estimate, rtol=1e-12)


def _kappa_table(n=150, k=3, seed=0):
    sim = evalci.simulate.confusion_model(n, k, rng=seed)
    return sim.assign(subject=sim.input_id.astype("category").cat.codes % 3)


CASES = {
    "cluster": (lambda: clustered(n=200, k=5).query("system == 'sys0'"), {}),
    "cluster/strata": (
        lambda: clustered(n=200, k=5).query("system == 'sys0'"),
        dict(strata="subject"),
    ),
    "hierarchical/unequal-k/strata": (
        lambda: clustered(n=200, k=4, unequal=True).query("system == 'sys0'"),
        dict(strategy="hierarchical", strata="subject"),
    ),
    "hierarchical/run-weight": (
        lambda: clustered(n=200, k=4, unequal=True).query("system == 'sys0'"),
        dict(strategy="hierarchical", weight="run"),
    ),
    "single_draw/unequal-k": (
        lambda: clustered(n=200, k=4, unequal=True).query("system == 'sys0'"),
        dict(strategy="single_draw"),
    ),
    "single_draw/run-weight": (
        lambda: clustered(n=200, k=4, unequal=True).query("system == 'sys0'"),
        dict(strategy="single_draw", weight="run"),
    ),
    "two-systems/cluster": (lambda: clustered(n=300, k=3), dict(by="system")),
    "two-systems/hierarchical": (
        lambda: clustered(n=300, k=3),
        dict(by="system", strategy="hierarchical"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_patterns_and_indices_draw_the_same_law(monkeypatch, case):
    make, kw = CASES[case]
    df = make()
    idx = _run(monkeypatch, "index", df, "correct", cluster="input_id", rng=1, **kw)
    pat = _run(monkeypatch, "patterns", df, "correct", cluster="input_id", rng=2, **kw)
    assert (idx.kernel, pat.kernel) == ("index", "patterns")
    _same_law(idx, pat)
    if kw.get("by"):
        gi = idx.bootstrap_distribution[1] - idx.bootstrap_distribution[0]
        gp = pat.bootstrap_distribution[1] - pat.bootstrap_distribution[0]
        assert stats.ks_2samp(gi, gp).pvalue > 1e-4  # the paired gap, too


@pytest.mark.parametrize("strategy", ["cluster", "hierarchical", "single_draw"])
def test_kappa_on_both_kernels(monkeypatch, strategy):
    df = _kappa_table()
    kw = dict(cluster="input_id", strategy=strategy, strata="subject")
    kw["metric"] = evalci.metrics.kappa(truth="label")
    idx = _run(monkeypatch, "index", df, "pred", rng=1, **kw)
    pat = _run(monkeypatch, "patterns", df, "pred", rng=2, **kw)
    _same_law(idx, pat)


@pytest.mark.parametrize("strategy", ["cluster", "hierarchical", "single_draw"])
@pytest.mark.parametrize("weight", ["input", "run"])
def test_counts_tables_work_with_every_strategy(monkeypatch, strategy, weight):
    # CRUXEval counts (10 runs per input) against the same data as one row per
    # run on the index kernel: counts tables now have exact run-level draws
    counts = shared_data("cruxeval_output_T0.2_counts.csv")
    one = counts[counts.system == sorted(counts.system.unique())[0]].copy()
    one.loc[one.index[::7], "n_runs"] -= 3  # unequal k, to exercise the weights
    one["n_correct"] = np.minimum(one.n_correct, one.n_runs)
    rows = one.loc[one.index.repeat(one.n_runs)].assign(
        run=lambda d: d.groupby("input_id").cumcount()
    )
    rows["correct"] = (rows.run < rows.n_correct).astype(int)
    kw = dict(cluster="input_id", strategy=strategy, weight=weight)
    from_counts = _run(
        monkeypatch, None, one, successes="n_correct", trials="n_runs", rng=1, **kw
    )
    assert from_counts.kernel == "patterns"
    from_rows = _run(monkeypatch, "index", rows, "correct", rng=2, **kw)
    _same_law(from_counts, from_rows)
    assert from_counts.n_runs == from_rows.n_runs


def test_the_data_shape_picks_the_kernel():
    one = clustered(n=1000, k=5, seed=3).query("system == 'sys0'")
    # one 0/1 system: at most k + 1 = 6 patterns for 1,000 inputs
    r = evalci.cluster_ci(one, "correct", cluster="input_id", n_resamples=100, rng=0)
    assert r.kernel == "patterns"
    # continuous scores: every input its own pattern, indices are cheaper
    scores = one.assign(score=np.random.default_rng(0).random(len(one)))
    r = evalci.cluster_ci(scores, "score", cluster="input_id", n_resamples=100, rng=0)
    assert r.kernel == "index"
    # a callable gathers rows
    r = evalci.cluster_ci(
        one.iloc[:200],
        "correct",
        cluster="input_id",
        metric=lambda d: d.correct.mean(),
        n_resamples=50,
        rng=0,
    )
    assert r.kernel == "rows"


def test_pattern_results_are_reproducible_whatever_the_row_order():
    one = clustered(n=500, k=5, seed=4).query("system == 'sys0'")
    a = evalci.cluster_ci(one, "correct", cluster="input_id", n_resamples=500, rng=9)
    b = evalci.cluster_ci(
        one.sample(frac=1, random_state=1),
        "correct",
        cluster="input_id",
        n_resamples=500,
        rng=9,
    )
    assert a.kernel == "patterns"
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


def test_a_million_inputs_stay_in_bounded_memory():
    # 10**6 inputs x 5 runs as a counts table, B = 10,000: the pattern kernel
    # holds O(N) per-input statistics and O(B G) replicates; one (64 x N)
    # index block alone would be 488 MiB.
    n = 1_000_000
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"input_id": np.arange(n), "c": rng.binomial(5, rng.beta(2, 2, n)), "k": 5}
    )
    tracemalloc.start()
    try:
        res = evalci.cluster_ci(
            df,
            cluster="input_id",
            successes="c",
            trials="k",
            n_resamples=10_000,
            rng=0,
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res.kernel == "patterns"
    assert peak < 300 * 2**20, peak / 2**20  # measured: about 140 MiB
    assert res.low < res.estimate < res.high
