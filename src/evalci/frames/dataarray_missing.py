"""``missing=`` on a DataArray: every cell of the run dim an attempted run.

By default a NaN in a DataArray marks a run an input lacks (k may differ
per input) and is left out. An explicit ``missing=`` reads the run dim as
the runs attempted and NaN as a missing sample, with the policies and the
counts of :func:`evalci.bootstrap` (:mod:`evalci.engine.missing`).
"""

from __future__ import annotations

import pandas as pd
import xarray as xr

from evalci._base.validate import check_option
from evalci._base.warnings import caller_warnings
from evalci.engine.missing import CHOICES, MISSING
from evalci.frames.dataarray_table import (
    _check_coords,
    _load_coords,
    _long,
    _to_dataset,
    attrs_of,
)

__all__ = ["policy_bootstrap"]


def policy_bootstrap(da, input_dim, run_dim, strata, by, kwargs, missing):
    """:func:`evalci.bootstrap` on the long table, NaN rows kept, as a Dataset."""
    from evalci.engine.bootstrap import bootstrap as pandas_bootstrap

    check_option(missing, "missing", MISSING, describe=f"None or one of {CHOICES}")
    if da.chunks is not None:
        da = da.compute()
    da = _load_coords(da)
    _check_coords(da, input_dim, run_dim, strata, by)
    with caller_warnings():
        frame, name, group_dims = _long(
            da, input_dim, run_dim, strata, by, kwargs["metric"], keep_missing=True
        )
        group_cols = list(by) + group_dims
        res = pandas_bootstrap(
            frame,
            name,
            input_dim,
            by=group_cols or None,
            strata=strata,
            missing=missing,
            **kwargs,
        )
    labels = {d: da[d].values for d in group_dims if d in da.coords}
    return _dataset(res, by, group_dims, labels, input_dim, run_dim)


def _dataset(res, by, group_dims, labels, input_dim, run_dim) -> xr.Dataset:
    """The result as the Dataset ``bootstrap`` returns, plus the counts (and
    the bounds' parts) as variables over the same dims."""
    attrs = {**attrs_of(res, by, input_dim, run_dim), "missing": res.missing}
    group_cols = list(by) + group_dims
    ds = _to_dataset(res, group_cols, attrs)
    frame = res.to_frame()
    extra = [
        c
        for c in frame.columns
        if c.startswith(("n_", "bound_")) or c.endswith("_scored")
    ]
    for c in (c for c in extra if c not in ds.data_vars):
        if group_cols:
            index = ds.estimate.to_series().index
            values = pd.Series(frame[c].to_numpy(), index=res.groups).reindex(index)
            ds[c] = xr.DataArray.from_series(values)
        else:
            ds[c] = xr.DataArray(frame[c].iloc[0])
    order = [d for d in ["resample", *by, *group_dims] if d in ds.dims]
    ds = ds.transpose(*order)
    return ds.reindex(labels) if labels else ds
