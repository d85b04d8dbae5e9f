"""Dask DataFrames: an exact Dask reduction, then the same engine as pandas."""

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import evalci

from conftest import clustered, shared_data


def same(a, b):
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(np.asarray(a.low), np.asarray(b.low), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(a.n_runs), np.asarray(b.n_runs))


@pytest.mark.parametrize("weight", ["input", "run"])
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_dask_frame_equals_pandas(weight, method):
    df = clustered(n=60, k=3, unequal=True, seed=3)
    ddf = dd.from_pandas(df.sample(frac=1, random_state=0), npartitions=5)
    kw = dict(
        by="system",
        strata="subject",
        method=method,
        weight=weight,
        n_resamples=500,
        rng=2,
    )
    same(
        evalci.cluster_ci(df, "correct", "input_id", **kw),
        ddf.evalci.cluster_ci("correct", "input_id", **kw),
    )


def test_dask_frame_kappa_and_counts_table():
    sim = evalci.simulate.confusion_model(80, 4, rng=3)
    metric = evalci.metrics.kappa(truth="label")
    kw = dict(metric=metric, method="bca", n_resamples=400, rng=1)
    same(
        evalci.cluster_ci(sim, "pred", "input_id", **kw),
        evalci.cluster_ci(dd.from_pandas(sim, npartitions=3), "pred", "input_id", **kw),
    )
    counts = shared_data("aime2024_cot_highk_counts.csv")
    solved = counts.groupby("system").n_correct.sum()
    counts = counts[counts.system.isin(solved.index[solved > 0][:3])]
    kw = dict(
        by="system", successes="n_correct", trials="n_runs", n_resamples=300, rng=0
    )
    same(
        counts.evalci.cluster_ci(cluster="input_id", **kw),
        dd.from_pandas(counts, npartitions=4).evalci.cluster_ci(
            cluster="input_id", **kw
        ),
    )


def test_dask_frame_compare(gpqa):
    ddf = dd.from_pandas(gpqa, npartitions=3)
    for method in ["percentile", "clt"]:
        a = gpqa.evalci.compare(
            "correct", "input_id", method=method, n_resamples=500, rng=0
        )
        b = ddf.evalci.compare(
            "correct", "input_id", method=method, n_resamples=500, rng=0
        )
        pd.testing.assert_frame_equal(a.table, b.table)


def test_dask_frame_missing_values_and_errors(gpqa):
    holes = gpqa.assign(correct=gpqa.correct.astype(float))
    holes.loc[[0, 5], "correct"] = np.nan
    ddf = dd.from_pandas(holes, npartitions=2)
    with pytest.raises(ValueError, match=r"missing values; pass dropna=True"):
        ddf.evalci.cluster_ci("correct", "input_id", by="system")
    res = ddf.evalci.cluster_ci(
        "correct", "input_id", by="system", dropna=True, n_resamples=100, rng=0
    )
    assert res.n_runs.sum() == len(gpqa) - 2
    with pytest.raises(ValueError, match=r"callable `metric` needs the rows"):
        ddf.evalci.cluster_ci("correct", "input_id", metric=lambda d: d.correct.mean())
    with pytest.raises(ValueError, match=r"supports strategy='cluster'"):
        ddf.evalci.bootstrap("correct", "input_id", strategy="hierarchical")
    with pytest.raises(ValueError, match=r"column 'qid' is not in the Dask DataFrame"):
        ddf.evalci.cluster_ci("correct", "qid")


def test_dask_frame_on_a_distributed_cluster(gpqa):
    distributed = pytest.importorskip("distributed")
    eager = gpqa.evalci.cluster_ci(
        "correct", "input_id", by="system", n_resamples=300, rng=4
    )
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster),
    ):
        res = dd.from_pandas(gpqa, npartitions=4).evalci.cluster_ci(
            "correct", "input_id", by="system", n_resamples=300, rng=4
        )
    same(eager, res)
