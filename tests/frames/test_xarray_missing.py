"""``missing=`` on DataArrays (issue 22): every cell of the run dim is an
attempted run once a policy is named; the numbers and counts are those of
the same table in pandas."""

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evalci


def _array(holes=True):
    rng = np.random.default_rng(0)
    v = (rng.random((30, 3, 2)) < 0.6).astype(float)
    if holes:
        v[2, 0, 1] = np.nan  # a run of input 2 (system b)
        v[4, 1:, 1] = np.nan  # two runs of input 4
        v[5, :, 1] = np.nan  # every run of input 5
    coords = {"input": np.arange(30), "system": ["a", "b"]}
    return xr.DataArray(v, dims=("input", "run", "system"), coords=coords, name="y")


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.MissingDataWarning)
        return fn(*args, **kwargs)


@pytest.mark.parametrize("m", ["drop", "zero", "bounds"])
def test_each_policy_is_the_pandas_one(m):
    da = _array()
    ds = _quiet(da.evalci.cluster_ci, n_resamples=500, rng=0, missing=m)
    df = da.to_dataframe().reset_index()
    ref = _quiet(
        evalci.cluster_ci,
        df,
        "y",
        "input",
        by="system",
        missing=m,
        n_resamples=500,
        rng=0,
    ).to_frame()
    for var in ("estimate", "low", "high", "n_attempted", "n_scored", "n_missing"):
        np.testing.assert_array_equal(ds[var].values, ref[var].to_numpy(), err_msg=var)
    assert (
        ds.n_missing.sel(system="b") == 6 and ds.n_inputs_unscored.sel(system="b") == 1
    )
    assert ds.attrs["missing"] == m
    if m == "bounds":
        for var in ("share_scored", "bound_low", "bound_high"):
            np.testing.assert_array_equal(ds[var].values, ref[var], err_msg=var)
        # issue 34: each end is that of a filling, resampled with the same draws
        kw = dict(n_resamples=500, rng=0)
        zero = da.fillna(0.0).evalci.cluster_ci(**kw)
        one = da.fillna(1.0).evalci.cluster_ci(**kw)
        np.testing.assert_array_equal(ds.low.values, zero.low.values)
        np.testing.assert_array_equal(ds.high.values, one.high.values)


def test_drop_warns_and_is_the_default_reading():
    # the default reads NaN as runs an input lacks (ragged k); "drop" leaves
    # the same runs out, but says so and counts them
    da = _array()
    with pytest.raises(ValueError, match="inputs with no value along 'run'"):
        da.evalci.cluster_ci(n_resamples=200, rng=0)  # input 5 of b: no run
    part = da.drop_sel(input=5)
    default = part.evalci.cluster_ci(n_resamples=200, rng=0)
    with pytest.warns(evalci.MissingDataWarning, match="left out 3 of 174 runs"):
        drop = part.evalci.cluster_ci(n_resamples=200, rng=0, missing="drop")
    for var in ("estimate", "low", "high"):
        np.testing.assert_array_equal(drop[var].values, default[var].values)


def test_raise_refuses_with_the_counts_and_a_complete_array_is_unchanged():
    with pytest.raises(ValueError, match=r"6 missing values \(of 180 rows\) in 3 inp"):
        _array().evalci.cluster_ci(missing="raise")
    full = _array(holes=False)
    a = full.evalci.cluster_ci(n_resamples=300, rng=1)
    b = full.evalci.cluster_ci(n_resamples=300, rng=1, missing="raise")
    for var in a.data_vars:
        np.testing.assert_array_equal(a[var].values, b[var].values, err_msg=var)
    with pytest.raises(ValueError, match="`missing` must be None or one of"):
        full.evalci.cluster_ci(missing="nan")


def test_a_dask_backed_array_gives_the_same_counts():
    pytest.importorskip("dask")
    da = _array()
    ds = _quiet(da.chunk({"input": 7}).evalci.cluster_ci, n_resamples=300, rng=2,
                missing="zero")  # fmt: skip
    ref = _quiet(da.evalci.cluster_ci, n_resamples=300, rng=2, missing="zero")
    for var in ref.data_vars:
        np.testing.assert_array_equal(ds[var].values, ref[var].values, err_msg=var)


def test_compare_reads_every_cell_once_a_policy_is_named():
    da = _array()
    res = da.evalci.compare(n_resamples=300, rng=0, missing="zero")
    df = da.to_dataframe().reset_index()
    ref = evalci.compare(df, "y", "input", missing="zero", n_resamples=300, rng=0)
    pd.testing.assert_frame_equal(res.table, ref.table)
    assert res.counts.loc["b", "n_missing"] == 6
