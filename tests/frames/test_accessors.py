"""Every accessor method equals the function it forwards to (STYLE.md 14).

The test walks the accessor classes, so a method added without a case here
fails: each public method must be listed with the function it forwards to.
"""

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.frames import accessors
from evalci.frames import dataarray as xr

KW = dict(n_resamples=300, rng=3)


def _frames():
    gpqa = evalci.load_example()
    one = gpqa[gpqa.run == 1]
    return gpqa, one


# method -> (function, positional args after the data, keyword args, data)
def _pandas_cases():
    gpqa, one = _frames()
    return {
        "cluster_ci": (
            evalci.cluster_ci,
            ("correct", "input_id"),
            dict(by="system", **KW),
            gpqa,
        ),
        "bootstrap": (
            evalci.bootstrap,
            ("correct", "input_id"),
            dict(strategy="hierarchical", by="system", **KW),
            gpqa,
        ),
        "compare": (
            evalci.compare,
            ("correct", "input_id", "system"),
            dict(mme=0.02, **KW),
            gpqa,
        ),
        "analytic_ci": (
            evalci.analytic_ci,
            ("correct", "input_id"),
            dict(by="system"),
            gpqa,
        ),
        "bayes_ci": (evalci.bayes_ci, ("correct", "input_id"), dict(by="system"), gpqa),
        "bayes_compare": (
            evalci.bayes_compare,
            ("correct", "input_id", "system"),
            {},
            gpqa,
        ),
        "leaderboard": (
            evalci.leaderboard,
            ("correct", "input_id", "system"),
            dict(**KW),
            gpqa,
        ),
        "mcnemar": (
            evalci.mcnemar,
            ("correct", "input_id", "system", *sorted(gpqa.system.unique())),
            {},
            one,
        ),
        "flaky": (evalci.flaky, ("correct", "input_id"), dict(by="system"), gpqa),
        "report": (
            evalci.report,
            ("correct", "input_id", "system"),
            dict(mme=0.02, **KW),
            gpqa,
        ),
        "icc": (evalci.icc, ("correct", "input_id"), dict(system="system"), gpqa),
        "width_table": (
            evalci.width_table,
            ("correct", "input_id"),
            dict(by="system"),
            gpqa,
        ),
        "plan": (
            evalci.plan_from_data,
            ("correct", "input_id"),
            dict(by="system", cost_input=10, cost_run=1, budget=5000),
            gpqa,
        ),
        "sample_size": (
            evalci.sample_size_from_data,
            ("correct", "input_id"),
            dict(system="system", effect=0.05),
            gpqa,
        ),
        "mde": (
            evalci.mde_from_data,
            ("correct", "input_id"),
            dict(system="system", n_inputs=500),
            gpqa,
        ),
        "to_xarray": (xr.to_xarray, ("correct",), {}, gpqa),
        # the runs read as a crossed facet: a table every method takes
        "facet_ci": (
            evalci.facet_ci,
            ("correct", "input_id", "run"),
            dict(by="system", method="pigeonhole", **KW),
            gpqa,
        ),
        "facet_compare": (
            evalci.facet_compare,
            ("correct", "input_id", "run"),
            dict(method="pigeonhole", **KW),
            gpqa,
        ),
        "g_study": (evalci.g_study, ("correct", "input_id", "run"), dict(by="system"), gpqa),
    }


def _same(a, b):
    if isinstance(a, (pd.DataFrame, pd.Series)):
        pd.testing.assert_frame_equal(pd.DataFrame(a), pd.DataFrame(b))
    elif hasattr(a, "to_frame") and not hasattr(a, "dims"):
        pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
        if hasattr(a, "bootstrap_distribution"):
            np.testing.assert_array_equal(
                a.bootstrap_distribution, b.bootstrap_distribution
            )
    elif hasattr(a, "identical"):
        assert a.identical(b)
    else:
        assert repr(a) == repr(b)


def _public(cls):
    return sorted(
        n
        for n, _ in inspect.getmembers(cls, inspect.isfunction)
        if not n.startswith("_")
    )


def test_every_dataframe_accessor_method_is_listed():
    assert _public(accessors.EvalciDataFrameAccessor) == sorted(_pandas_cases())


@pytest.mark.parametrize("name", sorted(_pandas_cases()))
def test_dataframe_accessor_method_equals_its_function(name):
    fn, args, kwargs, data = _pandas_cases()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        via_accessor = getattr(data.evalci, name)(*args, **kwargs)
        via_function = fn(data, *args, **kwargs)
    _same(via_accessor, via_function)


def _dataarray_cases():
    gpqa, _ = _frames()
    da = gpqa.evalci.to_xarray("correct")
    long = xr.to_frame(da)
    value = da.name or "value"
    return da, {
        "cluster_ci": (lambda d, **k: xr.cluster_ci(d, **k), dict(**KW)),
        "bootstrap": (
            lambda d, **k: xr.bootstrap(d, **k),
            dict(strategy="single_draw", **KW),
        ),
        "compare": (lambda d, **k: xr.compare(d, **k), dict(**KW)),
        "icc": (
            lambda d, **k: evalci.icc(long, value, "input", **k),
            dict(system="system"),
        ),
        "width_table": (
            lambda d, **k: evalci.width_table(long, value, "input", **k),
            dict(by="system"),
        ),
        "plan": (
            lambda d, **k: evalci.plan_from_data(long, value, "input", **k),
            dict(by="system", cost_input=10, cost_run=1, budget=5000),
        ),
        "sample_size": (
            lambda d, **k: evalci.sample_size_from_data(long, value, "input", **k),
            dict(system="system", effect=0.05),
        ),
        "mde": (
            lambda d, **k: evalci.mde_from_data(long, value, "input", **k),
            dict(system="system", n_inputs=500),
        ),
        "to_frame": (lambda d, **k: xr.to_frame(d, **k), {}),
        "facet_ci": (
            lambda d, **k: evalci.facet_ci(long, value, "input", **k),
            dict(facets="run", by="system", method="pigeonhole", **KW),
        ),
        "facet_compare": (
            lambda d, **k: evalci.facet_compare(long, value, "input", **k),
            dict(facets="run", method="pigeonhole", **KW),
        ),
        "g_study": (
            lambda d, **k: evalci.g_study(long, value, "input", **k),
            dict(facets="run", by="system"),
        ),
    }


def test_every_dataarray_accessor_method_is_listed():
    _, cases = _dataarray_cases()
    assert _public(accessors.EvalciDataArrayAccessor) == sorted(cases)


@pytest.mark.parametrize("name", sorted(_dataarray_cases()[1]))
def test_dataarray_accessor_method_equals_its_function(name):
    da, cases = _dataarray_cases()
    fn, kwargs = cases[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        via_accessor = getattr(da.evalci, name)(**kwargs)
        via_function = fn(da, **kwargs)
    _same(via_accessor, via_function)
