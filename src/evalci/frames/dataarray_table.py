"""A DataArray over (input, run[, system]) as the engine's table: its dims
and coords checked, the long table the engine reads, and a pass's result
back as an ``xr.Dataset`` (the shared steps of the eager and lazy paths)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from evalci._base.text import as_written
from evalci._base.validate import infinite
from evalci.engine import args as _args
from evalci.engine import bootstrap as core
from evalci.engine import passes as engine
from evalci.metrics import Metric

_RESULT_VARS = (
    "estimate",
    "low",
    "high",
    "standard_error",
    "n_inputs",
    "n_runs",
    "z0",
    "acceleration",
)


def _check_dims(da, input_dim, run_dim, strata, by):
    if not isinstance(da, xr.DataArray):
        raise TypeError(f"`da` must be an xarray.DataArray, not {type(da).__name__}.")
    if input_dim not in da.dims:
        raise ValueError(
            f"`input_dim`={as_written(input_dim)} is not a dimension of the DataArray; its dims "
            f"are {tuple(da.dims)}. Pass input_dim=<the dim that indexes inputs>."
        )
    if da.sizes[input_dim] < 2:
        raise ValueError(
            f"dim {as_written(input_dim)} has length {da.sizes[input_dim]}; the bootstrap needs "
            "at least 2 inputs."
        )
    for name, coord in (("strata", strata), *(("by", b) for b in by)):
        if coord is None:
            continue
        if coord not in da.coords:
            raise ValueError(
                f"`{name}`={as_written(coord)} is not a coordinate of the DataArray; add it "
                f"along {as_written(input_dim)}, e.g. da.assign_coords({coord}=({as_written(input_dim)}, values))."
            )
        c = da.coords[coord]
        if input_dim not in c.dims:
            raise ValueError(
                f"`{name}` coordinate {as_written(coord)} must lie along {as_written(input_dim)}."
            )


def _load_coords(da):
    """``da`` with its Dask-backed coordinates loaded (one compute; they are small).

    The graph of the lazy path embeds the coordinates, and their values are
    checked at call time (:func:`_check_coords`), so they are needed now.
    """
    lazy = [k for k, c in da.coords.items() if c.chunks is not None]
    if not lazy:
        return da
    import dask

    values = dask.compute(*[da.coords[k].data for k in lazy])
    return da.assign_coords(
        {k: (da.coords[k].dims, v) for k, v in zip(lazy, values, strict=True)}
    )


def _check_coords(da, input_dim, run_dim, strata, by):
    """The values of the strata/by coordinates: none missing, constant per input."""
    for name, coord in (("strata", strata), *(("by", b) for b in by)):
        if coord is None:
            continue
        c = da.coords[coord]
        n_bad = int(pd.isna(np.asarray(c.values).reshape(-1)).sum())
        if n_bad:
            raise ValueError(
                f"`{name}` coordinate {as_written(coord)} has {n_bad} missing values; every "
                f"input needs one. Fill them, or drop those inputs: "
                f"da.sel({input_dim}=da[{as_written(coord)}].notnull())."
            )
        extra = [d for d in c.dims if d != input_dim]
        if extra:
            varies = (c != c.isel({d: 0 for d in extra})).any()
            dim = run_dim if run_dim in extra else extra[0]
            if bool(varies):
                raise ValueError(
                    f"`{name}` coordinate {as_written(coord)} varies along {as_written(dim)}; it must be "
                    f"constant within an input (a property of the {as_written(input_dim)})."
                )


def _refuse_inf(frame, name, coords) -> None:
    """inf is not a missing run (NaN is): refuse it, saying how to mark it missing."""
    for col in [name, *coords]:
        found = infinite(frame, col)
        if found is not None:
            what = "values" if col == name else f"coordinate {as_written(col)}"
            fix = (
                "da.where(np.isfinite(da)) to count them as missing runs"
                if col == name
                else f"da.assign_coords({col}=...) with finite values"
            )
            raise ValueError(
                f"`da` {what} hold {found[0]} infinite values (first: "
                f"{as_written(found[1])}); scores must be finite (NaN marks a missing "
                f"run). Replace them, e.g. {fix}, or clip them to a finite range."
            )


def _meta(da, input_dim, run_dim, strata, by, metric) -> pd.DataFrame:
    """The columns of :func:`_long`'s table, without its rows (nothing computed)."""
    name = da.name if da.name is not None else "value"
    keep = {input_dim, run_dim, *([strata] if strata else []), *by}
    if isinstance(metric, Metric):
        keep |= set(metric.columns)
    coords = [c for c in da.coords if c in keep and c not in da.dims]
    return pd.DataFrame(columns=list(dict.fromkeys([*da.dims, *coords, name])))


def _check_args(da, input_dim, run_dim, strata, by, kwargs):
    """Every engine argument that needs no data, with the numpy path's messages.

    Runs at call time, before anything is computed, for numpy- and
    Dask-backed arrays alike (arguments first, then data, on both).
    """
    group_dims = [d for d in da.dims if d not in (input_dim, run_dim)]
    group_cols = list(by) + group_dims
    return _args.bootstrap_iv_of(
        _meta(da, input_dim, run_dim, strata, by, kwargs["metric"]),
        kwargs,
        value=da.name if da.name is not None else "value",
        cluster=input_dim,
        by=group_cols or None,
        strata=strata,
    )


def _long(da, input_dim, run_dim, strata, by, metric, keep_missing=False):
    """The long table of a (numpy-backed) DataArray, ready for the pandas engine.

    NaN marks a run an input lacks: its row is left out, unless
    ``keep_missing`` (an explicit ``missing=`` policy reads every cell of the
    run dim as an attempted run, NaN a missing sample).
    """
    name = da.name if da.name is not None else "value"
    keep = {input_dim, run_dim, *([strata] if strata else []), *by}
    if isinstance(metric, Metric):
        keep |= set(metric.columns)
    drop = [c for c in da.coords if c not in keep and c not in da.dims]
    frame = da.drop_vars(drop).to_dataframe(name=name).reset_index()
    _refuse_inf(frame, name, list(metric.columns) if isinstance(metric, Metric) else [])
    missing = frame[name].isna().to_numpy()
    group_dims = [d for d in da.dims if d not in (input_dim, run_dim)]
    if missing.any() and not keep_missing:
        # an input must keep at least one run in every group
        kept = frame.loc[~missing]
        have = (
            kept.groupby(group_dims + [input_dim]).size()
            if group_dims
            else kept.groupby(input_dim).size()
        )
        expected = len(pd.unique(frame[input_dim])) * (
            int(np.prod([da.sizes[d] for d in group_dims])) if group_dims else 1
        )
        if len(have) < expected:
            all_inputs = pd.Index(pd.unique(frame[input_dim]))
            cells = have.reset_index()[input_dim]
            counts = cells.value_counts()
            n_cells = expected // len(all_inputs)
            bad = [i for i in all_inputs if counts.get(i, 0) < n_cells][:5]
            raise ValueError(
                f"inputs with no value along {as_written(run_dim)} (all NaN) in some cell of "
                f"{group_dims or 'the array'}: {bad}; drop them (e.g. "
                f"da.dropna({as_written(input_dim)}, how='all')) or fill them."
            )
        frame = kept
    return frame, name, group_dims


def _to_dataset(res, group_cols, attrs) -> xr.Dataset:
    frame = res.to_frame()
    out = {}
    if group_cols:
        index = (
            res.groups
            if isinstance(res.groups, pd.MultiIndex)
            else pd.MultiIndex.from_arrays([res.groups], names=group_cols)
        )
        for var in _RESULT_VARS:
            out[var] = xr.DataArray.from_series(
                pd.Series(frame[var].to_numpy(), index=index)
            )
        dist = res.bootstrap_distribution  # (G, B)
        b = dist.shape[1]
        idx = pd.MultiIndex.from_arrays(
            [np.tile(np.arange(b), len(index))]
            + [np.repeat(index.get_level_values(i), b) for i in range(index.nlevels)],
            names=["resample", *group_cols],
        )
        out["bootstrap_distribution"] = xr.DataArray.from_series(
            pd.Series(dist.reshape(-1), index=idx)
        )
    else:
        for var in _RESULT_VARS:
            out[var] = xr.DataArray(frame[var].iloc[0])
        out["bootstrap_distribution"] = xr.DataArray(
            res.bootstrap_distribution, dims=["resample"]
        )
    ds = xr.Dataset(out)
    if "resample" in ds.coords:
        ds = ds.drop_vars("resample")
    ds.attrs.update(attrs)
    return ds


def _start(da, input_dim, run_dim, strata, by, kwargs):
    """The engine's first step on a (numpy-backed) DataArray."""
    frame, name, group_dims = _long(
        da, input_dim, run_dim, strata, by, kwargs["metric"]
    )
    group_cols = list(by) + group_dims
    args = _args.bootstrap_iv_of(
        frame,
        kwargs,
        value=name,
        cluster=input_dim,
        by=group_cols or None,
        strata=strata,
    )
    return engine.start_pass(frame, args, kwargs["rng"])


def attrs_of(res, by, input_dim, run_dim) -> dict:
    """The attributes of a bootstrap result's Dataset: its settings and dims."""
    return {
        "method": res.method,
        "strategy": res.strategy,
        "confidence_level": res.confidence_level,
        "n_resamples": res.n_resamples,
        "weight": res.weight,
        "metric": res.metric,
        "input_dim": input_dim,
        "run_dim": run_dim,
        "paired": int(not by),
    }


def _dataset(rep, args, by, group_dims, labels, input_dim, run_dim) -> xr.Dataset:
    """The engine's result as a Dataset in the DataArray's own order of labels."""
    res = core._result(rep, args)
    ds = _to_dataset(res, list(by) + group_dims, attrs_of(res, by, input_dim, run_dim))
    order = [d for d in ["resample", *by, *group_dims] if d in ds.dims]
    ds = ds.transpose(*order)
    return ds.reindex(labels) if labels else ds
