"""The DataArray accessor: one engine with the pandas path, named dims, Dask."""

import dask
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evalci

from conftest import clustered, local_cluster, shared_data

METHODS = ["percentile", "basic", "bca"]
STRATEGIES = ["cluster", "hierarchical", "single_draw"]


@pytest.fixture(scope="module")
def unequal():
    return clustered(n=40, k=3, unequal=True, seed=7)


def test_to_xarray_pads_missing_runs_and_round_trips(unequal):
    da = unequal.evalci.to_xarray("correct", strata="subject")
    assert da.dims == ("input", "run", "system")
    k = unequal.groupby(["input_id", "system"]).size()
    assert da.sizes["run"] == k.max()
    assert int(da.notnull().sum()) == len(unequal)
    assert da.coords["subject"].dims == ("input",)
    back = da.evalci.to_frame()
    left = unequal.sort_values(["input_id", "run", "system"]).reset_index(drop=True)
    right = back.sort_values(["input", "run", "system"]).reset_index(drop=True)
    np.testing.assert_array_equal(left.correct.to_numpy(), right.correct.to_numpy())
    np.testing.assert_array_equal(left.subject.to_numpy(), right.subject.to_numpy())


def test_to_xarray_without_run_or_system():
    df = pd.DataFrame({"q": [1, 1, 2, 2, 2], "y": [1, 0, 1, 1, 0]})
    da = evalci.frames.dataarray.to_xarray(df, "y", input="q", run=None, system=None)
    assert da.dims == ("input", "run") and da.shape == (2, 3)
    assert np.isnan(da.values[0, 2])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_pandas_and_xarray_give_identical_numbers(unequal, method, strategy):
    kw = dict(strategy=strategy, method=method, n_resamples=300, rng=11)
    res = unequal.evalci.bootstrap("correct", cluster="input_id", by="system", **kw)
    ds = unequal.evalci.to_xarray("correct").evalci.bootstrap(**kw)
    for var in ["estimate", "low", "high", "standard_error", "z0", "acceleration"]:
        np.testing.assert_array_equal(ds[var].values, getattr(res, var).to_numpy())
    np.testing.assert_array_equal(
        ds.bootstrap_distribution.values, res.bootstrap_distribution.T
    )
    assert ds.attrs["method"] == method and ds.attrs["strategy"] == strategy


def test_mode_aggregate_and_iid_identical_both_ways(unequal):
    for strategy, warning in [
        ("mode_aggregate", evalci.EstimandWarning),
        ("iid", evalci.ClusteringIgnoredWarning),
    ]:
        with pytest.warns(warning):
            res = unequal.evalci.bootstrap(
                "correct",
                cluster="input_id",
                by="system",
                strategy=strategy,
                n_resamples=200,
                rng=3,
            )
        with pytest.warns(warning):
            ds = unequal.evalci.to_xarray("correct").evalci.bootstrap(
                strategy=strategy, n_resamples=200, rng=3
            )
        np.testing.assert_array_equal(ds.low.values, res.low.to_numpy())
        np.testing.assert_array_equal(ds.high.values, res.high.to_numpy())


def test_accessor_equals_module_function(gpqa):
    da = gpqa.evalci.to_xarray("correct")
    xr.testing.assert_identical(da, evalci.frames.dataarray.to_xarray(gpqa, "correct"))
    kw = dict(n_resamples=200, rng=0)
    xr.testing.assert_identical(
        da.evalci.cluster_ci(**kw), evalci.frames.dataarray.cluster_ci(da, **kw)
    )
    xr.testing.assert_identical(
        da.evalci.bootstrap(strategy="hierarchical", **kw),
        evalci.frames.dataarray.bootstrap(da, strategy="hierarchical", **kw),
    )
    pd.testing.assert_frame_equal(
        da.evalci.to_frame(), evalci.frames.dataarray.to_frame(da)
    )


def test_extra_dims_broadcast_with_shared_draws(gpqa):
    da = gpqa.evalci.to_xarray("correct")
    # a second "prompt" dim: variant b is variant a, so every replicate is equal
    two = xr.concat([da, da], dim=pd.Index(["a", "b"], name="prompt"))
    ds = two.evalci.cluster_ci(n_resamples=500, rng=1)
    assert set(ds.estimate.dims) == {"prompt", "system"}
    np.testing.assert_array_equal(
        ds.bootstrap_distribution.sel(prompt="a").values,
        ds.bootstrap_distribution.sel(prompt="b").values,
    )
    assert ds.attrs["paired"] == 1


def test_by_coordinate_gives_independent_groups_and_strata(unequal):
    da = unequal.evalci.to_xarray("correct", strata="subject")
    per = da.evalci.cluster_ci(by="subject", n_resamples=200, rng=0)
    assert per.estimate.dims == ("subject", "system")
    res = unequal.evalci.cluster_ci(
        "correct", cluster="input_id", by=["subject", "system"], n_resamples=200, rng=0
    )
    np.testing.assert_array_equal(per.low.values.ravel(), res.low.to_numpy())
    strat = da.evalci.cluster_ci(strata="subject", method="bca", n_resamples=200, rng=0)
    ref = unequal.evalci.cluster_ci(
        "correct",
        cluster="input_id",
        by="system",
        strata="subject",
        method="bca",
        n_resamples=200,
        rng=0,
    )
    np.testing.assert_array_equal(strat.high.values, ref.high.to_numpy())


def test_kappa_with_true_labels_as_coordinate():
    rng = np.random.default_rng(4)
    label = rng.integers(0, 4, 80)
    pred = np.where(
        rng.random((80, 3)) < 0.6, label[:, None], rng.integers(0, 4, (80, 3))
    )
    da = xr.DataArray(
        pred.astype(float),
        dims=("input", "run"),
        coords={"input": np.arange(80), "label": ("input", label)},
    )
    metric = evalci.metrics.kappa(truth="label")
    ds = da.evalci.cluster_ci(metric=metric, method="bca", n_resamples=300, rng=0)
    long = pd.DataFrame(
        {
            "input": np.repeat(np.arange(80), 3),
            "pred": pred.ravel(),
            "label": np.repeat(label, 3).astype(float),
        }
    )
    res = evalci.cluster_ci(
        long,
        "pred",
        cluster="input",
        metric=metric,
        method="bca",
        n_resamples=300,
        rng=0,
    )
    assert float(ds.estimate) == pytest.approx(res.estimate, rel=1e-12)
    assert float(ds.low) == pytest.approx(res.low, rel=1e-12)


# ------------------------------------------------------------------ errors
def test_dim_errors(gpqa):
    da = gpqa.evalci.to_xarray("correct")
    with pytest.raises(ValueError, match=r"`input_dim`='item' is not a dimension"):
        da.evalci.cluster_ci(input_dim="item")
    with pytest.raises(ValueError, match=r"dim 'input' has length 1"):
        da.isel(input=[0]).evalci.cluster_ci()
    with pytest.raises(ValueError, match=r"`strata`='topic' is not a coordinate"):
        da.evalci.cluster_ci(strata="topic")
    varying = da.assign_coords(
        topic=(("input", "run"), np.arange(198 * 5).reshape(198, 5))
    )
    with pytest.raises(ValueError, match=r"coordinate 'topic' varies along 'run'"):
        varying.evalci.cluster_ci(strata="topic")
    holes = da.copy()
    holes[3] = np.nan
    with pytest.raises(ValueError, match=r"no value along 'run' \(all NaN\)"):
        holes.evalci.cluster_ci()
    with pytest.raises(TypeError, match=r"takes no `strategy`"):
        da.evalci.cluster_ci(strategy="iid")
    with pytest.raises(ValueError, match=r"two rows share the same"):
        evalci.frames.dataarray.to_xarray(pd.concat([gpqa, gpqa.head(1)]), "correct")


# -------------------------------------------------------------------- Dask
class CountingScheduler:
    def __init__(self):
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        return dask.get(dsk, keys, **kwargs)


def test_dask_backed_is_lazy_and_identical(gpqa):
    da = gpqa.evalci.to_xarray("correct")
    eager = da.evalci.cluster_ci(method="bca", n_resamples=500, rng=3)
    counter = CountingScheduler()
    with dask.config.set(scheduler=counter):
        lazy = da.chunk({"input": 40}).evalci.cluster_ci(
            method="bca", n_resamples=500, rng=3
        )
        assert counter.calls == 0
        assert lazy.low.chunks is not None
        computed = lazy.compute()
        assert counter.calls == 1
    xr.testing.assert_identical(computed, eager)


def test_dask_generator_is_drawn_at_call_time(gpqa):
    da = gpqa.evalci.to_xarray("correct")
    gen = np.random.default_rng(8)
    lazy = da.chunk({"input": 50}).evalci.cluster_ci(n_resamples=200, rng=gen)
    eager = da.evalci.cluster_ci(n_resamples=200, rng=np.random.default_rng(8))
    np.testing.assert_array_equal(lazy.low.values, eager.low.values)


def test_dask_on_a_real_distributed_cluster(gpqa):
    pytest.importorskip("distributed")
    da = gpqa.evalci.to_xarray("correct")
    eager = da.evalci.cluster_ci(n_resamples=400, rng=2)
    with local_cluster(n_workers=2, processes=False) as (cluster, _):
        lazy = da.chunk({"input": 66}).evalci.cluster_ci(n_resamples=400, rng=2)
        computed = lazy.compute()
    xr.testing.assert_identical(computed, eager)


# --------------------------------------------------------------- real data
def _expand_counts(counts: pd.DataFrame) -> xr.DataArray:
    """Counts (n_correct of n_runs per input, system) as input x run x system 0/1."""
    inputs = np.sort(counts.input_id.unique())
    systems = np.sort(counts.system.unique())
    k = int(counts.n_runs.max())
    n_correct = counts.pivot(index="input_id", columns="system", values="n_correct")
    n_correct = n_correct.loc[inputs, systems].to_numpy()
    # runs are exchangeable: put the correct ones first
    runs = (np.arange(k)[None, :, None] < n_correct[:, None, :]).astype(float)
    return xr.DataArray(
        runs,
        dims=("input", "run", "system"),
        coords={"input": inputs, "system": systems},
    )


def test_cruxeval_31_systems_in_one_call():
    counts = shared_data("cruxeval_output_T0.2_counts.csv")
    da = _expand_counts(counts)
    assert da.shape == (800, 10, 31)
    ds = da.evalci.cluster_ci(n_resamples=2000, rng=0)
    expected = (counts.n_correct / counts.n_runs).groupby(counts.system).mean()
    np.testing.assert_allclose(
        ds.estimate.to_series().loc[expected.index], expected, rtol=1e-12
    )
    assert (ds.low <= ds.estimate).all() and (ds.estimate <= ds.high).all()
    # one system alone takes the pattern kernel (P <= 11 patterns for 800
    # inputs); the joint call, 31 systems with P ~ N, the index kernel: the
    # same law, so the intervals agree within Monte-Carlo error (the SE of a
    # 2.5% quantile at B=2,000 is about 0.1 SE of the estimate; 0.35 SE is > 3)
    one = da.isel(system=[5]).evalci.cluster_ci(n_resamples=2000, rng=0)
    se = float(ds.standard_error[5])
    assert abs(float(one.low[0]) - float(ds.low[5])) < 0.35 * se
    assert abs(float(one.high[0]) - float(ds.high[5])) < 0.35 * se


def test_gpqa_as_input_run_system(gpqa):
    ds = gpqa.evalci.to_xarray("correct").evalci.cluster_ci(n_resamples=2000, rng=0)
    expected = gpqa.groupby("system").correct.mean()
    np.testing.assert_allclose(
        ds.estimate.values, expected.loc[ds.system.values].values
    )
    # paired gap from the shared draws: the replicate difference
    gap = ds.bootstrap_distribution.diff("system")
    assert float(gap.std()) < float(ds.standard_error.sum())


def test_dask_on_a_process_cluster_pickles(gpqa):
    # processes=True catches pickling problems (kappa's closures, the task)
    pytest.importorskip("distributed")
    rng = np.random.default_rng(4)
    label = rng.integers(0, 4, 60)
    pred = np.where(
        rng.random((60, 3)) < 0.6, label[:, None], rng.integers(0, 4, (60, 3))
    )
    da = xr.DataArray(
        pred.astype(float),
        dims=("input", "run"),
        coords={"input": np.arange(60), "label": ("input", label)},
    )
    metric = evalci.metrics.kappa(truth="label")
    eager = da.evalci.cluster_ci(metric=metric, method="bca", n_resamples=200, rng=1)
    with local_cluster(n_workers=1, processes=True) as (cluster, _):
        lazy = da.chunk({"input": 20}).evalci.cluster_ci(
            metric=metric, method="bca", n_resamples=200, rng=1
        )
        computed = lazy.compute()
    xr.testing.assert_identical(computed, eager)


@pytest.mark.parametrize(
    "kw",
    [
        dict(by="subject", method="bca"),
        dict(strategy="hierarchical", strata="subject"),
        dict(strategy="iid"),
        dict(
            metric=evalci.metrics.Metric(
                "mean_again",
                statistics=lambda d, v: np.column_stack([d[v], np.ones(len(d[v]))]),
                finalize=lambda s: s[..., 0] / s[..., 1],
            )
        ),
    ],
)
def test_dask_graph_splits_the_bootstrap_and_matches_numpy(unequal, kw):
    da = unequal.evalci.to_xarray("correct", strata="subject")
    ctx = (
        pytest.warns(evalci.ClusteringIgnoredWarning)
        if kw.get("strategy") == "iid"
        else __import__("contextlib").nullcontext()
    )
    with ctx:
        eager = da.evalci.bootstrap(n_resamples=3000, rng=5, **kw)
    lazy = da.chunk({"input": 10}).evalci.bootstrap(n_resamples=3000, rng=5, **kw)
    graph = dict(lazy.low.data.__dask_graph__())
    blocks = [k for k in graph if "evalci-resample" in str(k)]
    assert len(blocks) >= 3  # 3,000 replicates: 47 streams in blocks of 16
    reduce = [k for k in graph if "evalci-reduce" in str(k)]
    # cluster strategy: reduced chunk by chunk (4 chunks of 10 inputs)
    assert len(reduce) == (0 if kw.get("strategy") else 4)
    with ctx:
        computed = lazy.compute(scheduler="threads")
    xr.testing.assert_identical(computed, eager)


# ------------------------------------------- arguments checked at call time
def _with_label(da):
    return da.assign_coords(label=("input", np.arange(da.sizes["input"]) % 3))


BAD_ARGUMENTS = [
    ("cluster_ci", dict(method="nope"), ValueError, r"`method` must be one of"),
    ("bootstrap", dict(strategy="nope"), ValueError, r"`strategy` must be one of"),
    (
        "cluster_ci",
        dict(confidence_level=1.5),
        ValueError,
        r"`confidence_level` must be a number in \(0, 1\)",
    ),
    (
        "bootstrap",
        dict(n_resamples=0),
        ValueError,
        r"`n_resamples` must be a positive integer",
    ),
    ("cluster_ci", dict(n_resamples=2.5), ValueError, r"`n_resamples` must be"),
    ("cluster_ci", dict(weight="rows"), ValueError, r"`weight` must be 'input'"),
    (
        "cluster_ci",
        dict(metric=evalci.metrics.kappa(truth="truth")),
        ValueError,
        r"`metric`: column 'truth' is not in the DataFrame",
    ),
    ("cluster_ci", dict(strata="nope"), ValueError, r"`strata`='nope' is not a coord"),
    ("compare", dict(method="nope"), ValueError, r"`method` must be one of \("),
    ("compare", dict(adjust="sidak"), ValueError, r"`adjust` must be None"),
    ("compare", dict(alternative="up"), ValueError, r"`alternative` must be one of"),
    ("compare", dict(missing="keep"), ValueError, r"`missing` must be one of 'raise'"),
    (
        "compare",
        dict(mme=-0.1),
        ValueError,
        r"`mme` \(minimum meaningful effect\) must be",
    ),
    ("compare", dict(n_resamples=0), ValueError, r"`n_resamples` must be a positive"),
    ("compare", dict(confidence_level=0), ValueError, r"`confidence_level` must be"),
    ("compare", dict(strategy="nope"), ValueError, r"`strategy` must be one of"),
    ("compare", dict(weight="rows"), ValueError, r"`weight` must be 'input'"),
    ("compare", dict(baseline="nobody"), ValueError, r"nobody"),
    ("compare", dict(n_resample=10), TypeError, r"unexpected keyword argument"),
]


@pytest.mark.parametrize("name, kwargs, error, match", BAD_ARGUMENTS)
def test_bad_arguments_raise_at_call_time_on_a_dask_backed_array(
    gpqa, name, kwargs, error, match
):
    da = _with_label(gpqa.evalci.to_xarray("correct"))
    with pytest.raises(error, match=match) as eager:
        getattr(da.evalci, name)(**kwargs)
    counter = CountingScheduler()
    with dask.config.set(scheduler=counter):
        with pytest.raises(error, match=match) as lazy:
            getattr(da.chunk({"input": 50}).evalci, name)(**kwargs)
        assert counter.calls == 0  # nothing was computed to find out
    assert str(lazy.value) == str(eager.value)  # the numpy path's message


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(method="nope"),
        dict(adjust="sidak"),
        dict(alternative="up"),
        dict(mme=-0.1),
        dict(n_resamples=0),
        dict(baseline="nobody"),
    ],
)
def test_dataarray_compare_errors_are_those_of_pandas(gpqa, kwargs):
    with pytest.raises((ValueError, TypeError)) as ref:
        evalci.compare(gpqa, "correct", "input_id", **kwargs)
    da = gpqa.evalci.to_xarray("correct").chunk({"input": 50})
    with pytest.raises(type(ref.value)) as got:
        da.evalci.compare(**kwargs)
    assert str(got.value) == str(ref.value)


def test_missing_strata_or_by_coordinate_values_raise_at_call_time(unequal):
    da = unequal.evalci.to_xarray("correct", strata="subject")
    holes = da.assign_coords(
        subject=("input", np.where(np.arange(40) == 3, np.nan, da.subject.values))
    )
    # a chunked array has chunked coordinates: they are loaded (small), not the data
    for arr in (holes, holes.chunk({"input": 10})):
        for kw in (dict(strata="subject"), dict(by="subject")):
            with pytest.raises(
                ValueError,
                match=r"`(strata|by)` coordinate 'subject' has 1 missing values; "
                r"every input needs one.*da.sel\(input=da\['subject'\].notnull\(\)\)",
            ):
                arr.evalci.cluster_ci(**kw)


# ----------------------------------------------------------------------- inf
def test_inf_is_refused_like_nan_in_to_xarray(gpqa):
    scores = gpqa.assign(correct=gpqa.correct.astype(float))
    scores.loc[4, "correct"] = -np.inf
    with pytest.raises(
        ValueError,
        match=r"`value` column 'correct' has 1 infinite values \(first: .*-inf.*\); "
        r"scores must be finite",
    ):
        scores.evalci.to_xarray("correct")


def test_inf_in_a_dataarray_is_refused_not_a_missing_run(gpqa):
    da = gpqa.evalci.to_xarray("correct")
    bad = da.copy()
    bad[0, 0, 0] = np.inf
    bad[5, 1, 1] = np.nan  # a missing run is fine
    match = (
        r"`da` values hold 1 infinite values \(first: inf\); scores must be finite "
        r"\(NaN marks a missing run\).*da.where\(np.isfinite\(da\)\)"
    )
    for call in (
        lambda a: a.evalci.cluster_ci(n_resamples=50),
        lambda a: a.evalci.bootstrap(strategy="hierarchical", n_resamples=50),
        lambda a: a.evalci.compare(n_resamples=50),
    ):
        with pytest.raises(ValueError, match=match):
            call(bad)
    lazy = bad.chunk({"input": 50}).evalci.cluster_ci(n_resamples=50)
    with pytest.raises(ValueError, match=match):
        lazy.compute()
    with pytest.raises(ValueError, match=match):
        bad.chunk({"input": 50}).evalci.compare(n_resamples=50)
    fine = da.copy()
    fine[5, 1, 1] = np.nan
    fine.evalci.cluster_ci(n_resamples=50)


# ------------------------------------------------------------------ warnings
def _one_input_stratum(unequal):
    da = unequal.evalci.to_xarray("correct", strata="subject")
    alone = np.where(np.arange(40) == 7, 9, da.subject.values)
    return da.assign_coords(subject=("input", alone))


def _ours(record):
    """evalci's warnings only: old xarray with numpy 1.25 adds DeprecationWarnings."""
    return [x for x in record if issubclass(x.category, evalci.EvalciWarning)]


def test_warnings_point_at_the_callers_line(unequal):
    da = _one_input_stratum(unequal)
    with pytest.warns(evalci.FewClustersWarning) as w:
        da.evalci.cluster_ci(strata="subject", n_resamples=50)
    assert _ours(w)[0].filename == __file__
    with pytest.warns(evalci.FewClustersWarning) as w:
        evalci.frames.dataarray.cluster_ci(da, strata="subject", n_resamples=50)
    assert _ours(w)[0].filename == __file__
    with pytest.warns(evalci.ClusteringIgnoredWarning) as w:
        da.evalci.bootstrap(strategy="iid", n_resamples=50)
    assert _ours(w)[0].filename == __file__
    with pytest.warns(evalci.DegenerateDataWarning) as w:
        (da * 0 + 1).evalci.cluster_ci(n_resamples=50)
    assert _ours(w)[0].filename == __file__


def test_dask_warnings_raised_at_compute_point_at_the_line_that_built_them(unequal):
    da = _one_input_stratum(unequal).chunk({"input": 10})
    line = __import__("sys")._getframe().f_lineno + 1
    lazy = da.evalci.cluster_ci(strata="subject", n_resamples=50)
    for scheduler in ("sync", "threads"):
        with pytest.warns(evalci.FewClustersWarning) as w:
            lazy.compute(scheduler=scheduler)
        assert [(x.filename, x.lineno) for x in _ours(w)] == [(__file__, line)]
