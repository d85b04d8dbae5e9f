"""The xarray side: DataArrays over ``(input, run, system, ...)``.

A DataArray holds one value per (input, run, ...) cell; missing runs are NaN,
so k may differ per input. Resampling runs along the input dim, the run dim is
reduced, and every other dim (system, prompt variant, temperature, ...)
broadcasts: all of its cells share the same draws of inputs, so comparisons
between them are paired by construction.

The DataArray is turned into the same long table the pandas path uses and
handed to the same engine (:func:`evalci.bootstrap`), so the two accessors
return identical numbers for the same seed. A Dask-backed DataArray stays lazy:
the result is a Dataset of Dask arrays computed in one task when asked for.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from evalci._base.validate import check_columns, check_finite, infinite
from evalci._base.warnings import caller_location, caller_warnings
from evalci.engine import args as _args
from evalci.engine import bootstrap as core
from evalci.engine import passes as engine
from evalci.engine import resampling as _rs
from evalci.engine import table as _table
from evalci.engine.cube import factorize
from evalci.frames import reduce as _reduce
from evalci.metrics import Metric, get_metric

__all__ = ["to_xarray", "to_frame", "cluster_ci", "bootstrap", "compare"]

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


def to_xarray(
    data: pd.DataFrame,
    value: str,
    *,
    input: str = "input_id",  # noqa: A002 - the public name of the dim's column
    run: str | None = "run",
    system: str | None = "system",
    strata: str | None = None,
    dims: tuple[str, str, str] = ("input", "run", "system"),
) -> xr.DataArray:
    """A tidy table as a DataArray with dims ``("input", "run", "system")``.

    Inputs are sorted by key; an input with fewer runs than others is padded
    with NaN. ``run`` and ``system`` are optional: without ``run`` the runs of
    an input are numbered in table order (``run`` becomes 0..k-1); without
    ``system`` that dim is left out. ``strata`` becomes a coordinate along the
    input dim (it must be constant within an input).

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, system]).
    value : str
        Column holding the values (0/1, scores, or labels).
    input, run, system : str or None
        Columns naming the input, the run and the system.
    strata : str, optional
        Column constant within an input, kept as a coordinate along ``input``.
    dims : tuple of 3 str
        Names of the resulting input, run and system dims.

    Examples
    --------
    >>> import evalci
    >>> da = evalci.load_example().evalci.to_xarray("correct")
    >>> dict(da.sizes)
    {'input': 198, 'run': 5, 'system': 2}
    """
    cols = [value, input] + [c for c in (run, system, strata) if c is not None]
    check_columns(data, cols, "to_xarray")
    if data[value].isna().any():
        raise ValueError(
            f"`value` column {value!r} has missing values; NaN marks a missing run in "
            "the DataArray, so drop those rows first."
        )
    check_finite(data, [value], "value")
    in_codes, in_keys = factorize(data, [input], "input")
    if system is not None:
        sys_codes, sys_keys = factorize(data, [system], "system")
    else:
        sys_codes, sys_keys = np.zeros(len(data), dtype=np.int64), None
    if run is not None:
        run_codes, run_keys = factorize(data, [run], "run")
    else:
        # number the runs of each (input, system) cell in table order
        cell = pd.Series(
            in_codes * (1 if sys_keys is None else len(sys_keys)) + sys_codes
        )
        run_codes = cell.groupby(cell).cumcount().to_numpy()
        run_keys = pd.RangeIndex(int(run_codes.max()) + 1)
    n_sys = 1 if sys_keys is None else len(sys_keys)
    dup = pd.Series(
        (in_codes * len(run_keys) + run_codes) * n_sys + sys_codes
    ).duplicated()
    if dup.any():
        raise ValueError(
            f"two rows share the same ({input}, {run}"
            f"{', ' + system if system else ''}); each cell holds one value. "
            f"Pass run=None to number runs in table order."
        )
    values = data[value].to_numpy()
    numeric = pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(
        values
    )
    dense = np.full(
        (len(in_keys), len(run_keys), n_sys), np.nan, dtype=float if numeric else object
    )
    dense[in_codes, run_codes, sys_codes] = values
    coords = {dims[0]: np.asarray(in_keys), dims[1]: np.asarray(run_keys)}
    if sys_keys is None:
        dense = dense[:, :, 0]
        out_dims = dims[:2]
    else:
        coords[dims[2]] = np.asarray(sys_keys)
        out_dims = dims
    if strata is not None:
        per_input = _table._check_strata(data, in_codes, len(in_keys), strata, [input])
        _, strata_keys = factorize(data, [strata], "strata")
        coords[strata] = (dims[0], np.asarray(strata_keys)[per_input])
    return xr.DataArray(dense, dims=out_dims, coords=coords, name=value)


def to_frame(da: xr.DataArray, *, run_dim: str = "run") -> pd.DataFrame:
    """A DataArray back to a tidy table: one row per non-missing value.

    Dims and coordinates become columns; the value column is named after the
    DataArray (``"value"`` if it has no name).

    Parameters
    ----------
    da : xarray.DataArray
        Any DataArray, e.g. one built by :func:`to_xarray`; a missing value
        (NaN, such as a run an input lacks) gives no row.
    run_dim : str
        The name of the run dim (default ``"run"``). Every dim becomes a
        column whatever it is named, so this changes nothing; it is accepted
        for symmetry with the other functions of this module.

    Returns
    -------
    pandas.DataFrame
        One column per dim and non-index coordinate, then the values.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> back = df.evalci.to_xarray("correct").evalci.to_frame()
    >>> len(back) == len(df)
    True
    """
    name = da.name if da.name is not None else "value"
    frame = da.to_dataframe(name=name).reset_index()
    return frame.loc[frame[name].notna().to_numpy()].reset_index(drop=True)


def _check_dims(da, input_dim, run_dim, strata, by):
    if not isinstance(da, xr.DataArray):
        raise TypeError(f"`da` must be an xarray.DataArray, not {type(da).__name__}.")
    if input_dim not in da.dims:
        raise ValueError(
            f"`input_dim`={input_dim!r} is not a dimension of the DataArray; its dims "
            f"are {tuple(da.dims)}. Pass input_dim=<the dim that indexes inputs>."
        )
    if da.sizes[input_dim] < 2:
        raise ValueError(
            f"dim {input_dim!r} has length {da.sizes[input_dim]}; the bootstrap needs "
            "at least 2 inputs."
        )
    for name, coord in (("strata", strata), *(("by", b) for b in by)):
        if coord is None:
            continue
        if coord not in da.coords:
            raise ValueError(
                f"`{name}`={coord!r} is not a coordinate of the DataArray; add it "
                f"along {input_dim!r}, e.g. da.assign_coords({coord}=({input_dim!r}, values))."
            )
        c = da.coords[coord]
        if input_dim not in c.dims:
            raise ValueError(
                f"`{name}` coordinate {coord!r} must lie along {input_dim!r}."
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
                f"`{name}` coordinate {coord!r} has {n_bad} missing values; every "
                f"input needs one. Fill them, or drop those inputs: "
                f"da.sel({input_dim}=da[{coord!r}].notnull())."
            )
        extra = [d for d in c.dims if d != input_dim]
        if extra:
            varies = (c != c.isel({d: 0 for d in extra})).any()
            dim = run_dim if run_dim in extra else extra[0]
            if bool(varies):
                raise ValueError(
                    f"`{name}` coordinate {coord!r} varies along {dim!r}; it must be "
                    f"constant within an input (a property of the {input_dim!r})."
                )


def _refuse_inf(frame, name, coords) -> None:
    """inf is not a missing run (NaN is): refuse it, saying how to mark it missing."""
    for col in [name, *coords]:
        found = infinite(frame, col)
        if found is not None:
            what = "values" if col == name else f"coordinate {col!r}"
            fix = (
                "da.where(np.isfinite(da)) to count them as missing runs"
                if col == name
                else f"da.assign_coords({col}=...) with finite values"
            )
            raise ValueError(
                f"`da` {what} hold {found[0]} infinite values (first: "
                f"{found[1]!r}); scores must be finite (NaN marks a missing "
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


def _long(da, input_dim, run_dim, strata, by, metric):
    """The long table of a (numpy-backed) DataArray, ready for the pandas engine."""
    name = da.name if da.name is not None else "value"
    keep = {input_dim, run_dim, *([strata] if strata else []), *by}
    if isinstance(metric, Metric):
        keep |= set(metric.columns)
    drop = [c for c in da.coords if c not in keep and c not in da.dims]
    frame = da.drop_vars(drop).to_dataframe(name=name).reset_index()
    _refuse_inf(frame, name, list(metric.columns) if isinstance(metric, Metric) else [])
    missing = frame[name].isna().to_numpy()
    group_dims = [d for d in da.dims if d not in (input_dim, run_dim)]
    if missing.any():
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
                f"inputs with no value along {run_dim!r} (all NaN) in some cell of "
                f"{group_dims or 'the array'}: {bad}; drop them (e.g. "
                f"da.dropna({input_dim!r}, how='all')) or fill them."
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


def _dataset(rep, args, by, group_dims, labels, input_dim, run_dim) -> xr.Dataset:
    """The engine's result as a Dataset in the DataArray's own order of labels."""
    res = core._result(rep, args)
    attrs = {
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
    ds = _to_dataset(res, list(by) + group_dims, attrs)
    order = [d for d in ["resample", *by, *group_dims] if d in ds.dims]
    ds = ds.transpose(*order)
    return ds.reindex(labels) if labels else ds


def _numpy_bootstrap(da, input_dim, run_dim, strata, by, kwargs):
    p = _start(da, input_dim, run_dim, strata, by, kwargs)
    group_dims = [d for d in da.dims if d not in (input_dim, run_dim)]
    labels = {d: da[d].values for d in group_dims if d in da.coords}
    return _dataset(
        engine.finish_pass(p), p.args, by, group_dims, labels, input_dim, run_dim
    )


def bootstrap(
    da: xr.DataArray,
    *,
    input_dim: str = "input",
    run_dim: str = "run",
    strategy: str = "cluster",
    metric="mean",
    by=None,
    strata: str | None = None,
    method: str = "percentile",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    weight: str = "input",
    rng=None,
    weights: str = "multinomial",
) -> xr.Dataset:
    """Bootstrap CI of a DataArray over ``(input, run, ...)``; any strategy.

    Resampling runs along ``input_dim``, ``run_dim`` is reduced (a missing run
    is NaN; without a run dim k=1), and every other dim broadcasts with shared
    draws. Same engine and parameters as :func:`evalci.bootstrap`.

    Parameters
    ----------
    da : xarray.DataArray
        Values (0/1, scores, or predicted labels). For Cohen's kappa, hold the
        true labels as a coordinate along ``input_dim`` and pass
        ``metric=evalci.metrics.kappa(truth="<coordinate name>")``.
    input_dim, run_dim : str
        Names of the input and run dims.
    by : str or list of str, optional
        Coordinates along ``input_dim`` (e.g. subject): one interval per group,
        each group drawn independently.
    strata : str, optional
        A coordinate along ``input_dim``: a stratified bootstrap of the whole.
    strategy, metric, method, confidence_level, n_resamples, weight, rng, weights
        As in :func:`evalci.bootstrap`. A Dask-backed array is reduced chunk
        by chunk (each chunk's per-input statistics) and resampled as Dask
        tasks on the current scheduler.

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``low``, ``high``, ``standard_error``, ``n_inputs``,
        ``n_runs``, ``z0``, ``acceleration`` over the broadcast dims, and
        ``bootstrap_distribution`` with a ``resample`` dim; the settings in
        ``attrs``. Lazy (Dask arrays) when ``da`` is Dask-backed.

    Examples
    --------
    >>> import evalci
    >>> da = evalci.load_example().evalci.to_xarray("correct")
    >>> ds = da.evalci.cluster_ci(n_resamples=1000, rng=0)
    >>> ds.estimate.dims
    ('system',)
    """
    by = [] if by is None else ([by] if isinstance(by, str) else list(by))
    _check_dims(da, input_dim, run_dim, strata, by)
    kwargs = dict(
        strategy=strategy,
        metric=get_metric(metric),
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        weight=weight,
        rng=_rs.seed_sequence(rng),
        weights=weights,
    )
    _check_args(da, input_dim, run_dim, strata, by, kwargs)
    da = _load_coords(da)
    _check_coords(da, input_dim, run_dim, strata, by)
    if da.chunks is None:
        with caller_warnings():
            return _numpy_bootstrap(da, input_dim, run_dim, strata, by, kwargs)
    where = caller_location()
    return _lazy_bootstrap(da, input_dim, run_dim, strata, by, kwargs, where)


def cluster_ci(
    da: xr.DataArray, *, input_dim: str = "input", run_dim: str = "run", **kwargs
) -> xr.Dataset:
    """Cluster-bootstrap CI of a DataArray; see :func:`evalci.xr.bootstrap`.

    :func:`bootstrap` with ``strategy="cluster"``: inputs are resampled with
    all their runs (seed 000's recommended recipe).

    Parameters
    ----------
    da : xarray.DataArray
        Values over ``(input_dim[, run_dim], ...)``, as in :func:`bootstrap`.
    input_dim, run_dim : str
        Names of the input and run dims (default ``"input"`` and ``"run"``).
    **kwargs
        ``metric``, ``by``, ``strata``, ``method``, ``confidence_level``,
        ``n_resamples``, ``weight``, ``rng``, ``weights``, as in
        :func:`bootstrap`; not ``strategy``.

    Returns
    -------
    xarray.Dataset
        As :func:`bootstrap` returns.

    Examples
    --------
    >>> import evalci
    >>> da = evalci.load_example().evalci.to_xarray("correct")
    >>> ds = evalci.xr.cluster_ci(da, n_resamples=1000, rng=0)
    >>> sorted(ds.data_vars)[:4]
    ['acceleration', 'bootstrap_distribution', 'estimate', 'high']
    """
    if "strategy" in kwargs:
        raise TypeError(
            "cluster_ci() takes no `strategy`; use bootstrap(strategy=...)."
        )
    return bootstrap(
        da, input_dim=input_dim, run_dim=run_dim, strategy="cluster", **kwargs
    )


def _block_coords(coords, dims, chunks, index):
    """The coordinates of one block: each coordinate sliced along its dims."""
    bounds = {
        d: (int(np.sum(c[:i])), int(np.sum(c[: i + 1])))
        for d, c, i in zip(dims, chunks, index, strict=True)
    }
    out = {}
    for k, (cdims, values) in coords.items():
        sl = tuple(slice(*bounds[d]) for d in cdims)
        out[k] = (cdims, values[sl] if sl else values)
    return out


def _chunk_cells(block, coords, dims, name, spec, args, where):
    """``evalci-reduce``: one chunk's cells (its runs are whole: run is one chunk).

    Numeric metrics: the chunk's summed statistics per (input, group) cell,
    in the canonical order (:func:`evalci._table.cell_statistics`), bit for
    bit those of the numpy path. Label metrics: its distinct rows and their
    multiplicities (exact; label data compresses). ``args`` are the
    arguments checked once on the array's metadata (:func:`_check_args`).
    """
    input_dim, run_dim, strata, by = spec
    arr = xr.DataArray(block, dims=dims, coords=coords, name=name)
    with caller_warnings(where):
        frame, _, _ = _long(arr, input_dim, run_dim, strata, by, args.metric)
        if _reduce._cells_apply(args):
            return _table.cell_statistics(frame, args)
        cols = [c for c in frame.columns if c != run_dim]
        return _reduce._distinct(frame[cols], cols)


def _start_lazy(parts, meta_args, kwargs, where):
    """``evalci-start``: the pass from the chunks' cells (or distinct rows)."""
    with caller_warnings(where):
        full = [p for p in parts if len(p)]
        table = pd.concat(full, ignore_index=True) if full else parts[0]
        if _reduce._cells_apply(meta_args):
            cube, n_runs = _table.prepare_cells(table, meta_args)
            return engine.pass_of_cube(cube, n_runs, meta_args, kwargs["rng"])
        args = _args.bootstrap_iv_of(
            table, kwargs, **_given(meta_args), row_runs=_reduce.RUNS
        )
        return engine.start_pass(table, args, kwargs["rng"])


def _given(args) -> dict:
    """The table arguments of ``args`` as keyword arguments of ``bootstrap_iv_of``."""
    return dict(
        value=args.value,
        cluster=args.cluster,
        by=args.by or None,
        strata=args.strata[0] if args.strata else None,
    )


def _reduce_graph(da, input_dim, run_dim, strata, by, meta_args, where, token):
    """Per chunk (runs whole), a Delayed of its cells: the reduction by chunk."""
    import dask

    data = da.data
    if run_dim in da.dims:
        data = data.rechunk({da.dims.index(run_dim): -1})
    coords = {k: (c.dims, np.asarray(c.values)) for k, c in da.coords.items()}
    spec = (input_dim, run_dim, strata, tuple(by))
    blocks = data.to_delayed()
    out = []
    for index in np.ndindex(*blocks.shape):
        block_coords = _block_coords(coords, da.dims, data.chunks, index)
        out.append(
            dask.delayed(_chunk_cells, pure=True)(
                blocks[index],
                block_coords,
                da.dims,
                da.name,
                spec,
                meta_args,
                where,
                dask_key_name=f"evalci-reduce-{token}-{'-'.join(map(str, index))}",
            )
        )
    return out


def _n_units(template, by, kwargs) -> int:
    """The draw units foreseen before the data is seen: one, or one per ``by`` group.

    Groups that share inputs share a unit (all-NaN inputs are refused); iid
    with k > 1 makes every group its own unit. Tasks for units that turn out
    not to exist are no-ops; units not foreseen are resampled at the end.
    """
    if kwargs["strategy"] == "iid":
        return int(np.prod([template.sizes[d] for d in template.estimate.dims]))
    return int(np.prod([template.sizes[b] for b in by])) if by else 1


def _lazy_bootstrap(da, input_dim, run_dim, strata, by, kwargs, where=None):
    """Dask-backed input: a graph of the engine's steps, the heavy ones by chunk.

    ``evalci-reduce`` tasks turn each chunk (with its runs whole) into
    per-input statistics; ``evalci-start`` builds the pass from them;
    ``evalci-resample`` tasks (:mod:`evalci.scaleout`) compute the replicates
    block by block; ``evalci-finish`` reads the intervals. The streams are
    keyed by index, so any Dask scheduler and any chunking give the numbers
    of the numpy path. Strategies that resample runs, and callable metrics,
    need the rows: their reduction gathers them in the start task.

    Warnings that need the data (a stratum with one input, no spread, ...)
    are raised when the tasks run, and point at ``where``: the user's line
    that built the graph. (A worker in another process keeps them in its
    own log.)
    """
    import uuid

    import dask
    import dask.array as dsa

    from evalci.engine import scaleout

    template = _template(da, input_dim, run_dim, by, kwargs["n_resamples"])
    names = list(template.data_vars)
    coords = {k: (c.dims, np.asarray(c.values)) for k, c in da.coords.items()}
    dims, name = da.dims, da.name
    group_dims = [d for d in dims if d not in (input_dim, run_dim)]
    labels = {d: coords[d][1] for d in group_dims if d in coords}
    dims_out = {v: template[v].dims for v in names}
    meta_args = _check_args(da, input_dim, run_dim, strata, by, kwargs)
    token = uuid.uuid4().hex

    def start_rows(data):
        arr = xr.DataArray(data, dims=dims, coords=coords, name=name)
        with caller_warnings(where):
            return _start(arr, input_dim, run_dim, strata, by, kwargs)

    def finish(rep, p):
        with caller_warnings(where):
            ds = _dataset(rep, p.args, by, group_dims, labels, input_dim, run_dim)
        return tuple(ds[v].transpose(*dims_out[v]).values for v in names)

    if kwargs["strategy"] == "cluster" and isinstance(kwargs["metric"], Metric):
        parts = _reduce_graph(
            da, input_dim, run_dim, strata, by, meta_args, where, token
        )
        p = dask.delayed(_start_lazy, pure=True)(
            parts, meta_args, kwargs, where, dask_key_name=f"evalci-start-{token}"
        )
    else:
        p = dask.delayed(start_rows, pure=True)(
            da.data, dask_key_name=f"evalci-start-{token}"
        )
    n_units = _n_units(template, by, kwargs)
    done = scaleout.lazy_finish(p, n_units, kwargs["n_resamples"], finish)
    out = {}
    for i, v in enumerate(names):
        t = template[v]
        out[v] = (t.dims, dsa.from_delayed(done[i], shape=t.shape, dtype=t.dtype))
    ds = xr.Dataset(out, coords=template.coords)
    ds.attrs.update(
        {
            "method": kwargs["method"],
            "strategy": kwargs["strategy"],
            "confidence_level": kwargs["confidence_level"],
            "n_resamples": kwargs["n_resamples"],
            "weight": kwargs["weight"],
            "metric": getattr(
                kwargs["metric"],
                "name",
                getattr(kwargs["metric"], "__name__", "callable"),
            ),
            "input_dim": input_dim,
            "run_dim": run_dim,
            "paired": int(not by),
        }
    )
    return ds


def _template(da, input_dim, run_dim, by, n_resamples) -> xr.Dataset:
    """Shapes and coordinates of the result, known without computing ``da``."""
    group_dims = [d for d in da.dims if d not in (input_dim, run_dim)]
    coords, sizes = {}, {}
    for b in by:
        keys = np.unique(np.asarray(da.coords[b].values).reshape(-1))
        coords[b], sizes[b] = keys, len(keys)
    for d in group_dims:
        if d in da.coords:
            coords[d] = np.asarray(da.coords[d].values)
        sizes[d] = da.sizes[d]
    dims = [*by, *group_dims]
    shape = tuple(sizes[d] for d in dims)
    out = {}
    for v in _RESULT_VARS:
        dtype = np.int64 if v in ("n_inputs", "n_runs") else float
        out[v] = (dims, np.zeros(shape, dtype=dtype))
    out["bootstrap_distribution"] = (
        ["resample", *dims],
        np.zeros((n_resamples, *shape)),
    )
    return xr.Dataset(out, coords=coords)


def compare(
    da: xr.DataArray,
    *,
    input_dim: str = "input",
    run_dim: str = "run",
    system_dim: str = "system",
    strata: str | None = None,
    **kwargs,
):
    """Paired gaps between the systems along ``system_dim``; see :func:`evalci.compare`.

    The DataArray must have dims ``(input_dim[, run_dim], system_dim)`` and no
    other dim (select one value of any other dim first). A Dask-backed array
    is computed first.

    Parameters
    ----------
    da : xarray.DataArray
        Values over ``(input_dim[, run_dim], system_dim)``.
    input_dim, run_dim, system_dim : str
        Names of the input, run and system dims (defaults ``"input"``,
        ``"run"``, ``"system"``).
    strata : str, optional
        A coordinate along ``input_dim``: inputs are drawn within strata.
    **kwargs
        Any other argument of :func:`evalci.compare` (``baseline``, ``pairs``,
        ``mme``, ``metric``, ``method``, ``adjust``, ``confidence_level``,
        ``n_resamples``, ``rng``, ...); checked before anything is computed.

    Returns
    -------
    ComparisonResult

    Examples
    --------
    >>> import evalci
    >>> da = evalci.load_example().evalci.to_xarray("correct")
    >>> res = da.evalci.compare(n_resamples=1000, rng=0)
    >>> round(float(res.table.gap.iloc[0]), 3)
    -0.059
    """
    from evalci.methods.compare import compare as _compare

    _check_dims(da, input_dim, run_dim, strata, [])
    if system_dim not in da.dims:
        raise ValueError(
            f"`system_dim`={system_dim!r} is not a dimension of the DataArray; its dims "
            f"are {tuple(da.dims)}."
        )
    extra = [d for d in da.dims if d not in (input_dim, run_dim, system_dim)]
    if extra:
        raise ValueError(
            f"compare() takes a DataArray over ({input_dim!r}, {run_dim!r}, "
            f"{system_dim!r}); select one value of {extra} first, e.g. "
            f"da.sel({extra[0]}=...)."
        )
    _check_compare(da, input_dim, run_dim, system_dim, strata, kwargs)
    if da.chunks is not None:
        da = da.compute()
    _check_coords(da, input_dim, run_dim, strata, [])
    with caller_warnings():
        frame, name, _ = _long(
            da, input_dim, run_dim, strata, [], get_metric(kwargs.get("metric", "mean"))
        )
        return _compare(frame, name, input_dim, system_dim, strata=strata, **kwargs)


def _check_compare(da, input_dim, run_dim, system_dim, strata, kwargs):
    """compare()'s arguments that need no data, checked before computing."""
    import inspect

    from evalci.methods.compare import _pairs
    from evalci.methods.compare import compare as _compare

    name = da.name if da.name is not None else "value"
    # a misspelt keyword fails here, not after a compute
    bound = inspect.signature(_compare).bind(
        None, name, input_dim, system_dim, strata=strata, **kwargs
    )
    bound.apply_defaults()
    a = bound.arguments
    _reduce.check_compare_args(a)
    metric = get_metric(a["metric"])
    _args.bootstrap_iv_of(
        _meta(da, input_dim, run_dim, strata, [], metric),
        a,
        value=name,
        cluster=input_dim,
        metric=metric,
        by=[system_dim],
        strata=strata,
    )
    if system_dim in da.coords and da.coords[system_dim].chunks is None:
        systems = pd.Index(np.unique(np.asarray(da.coords[system_dim].values)))
    else:
        systems = pd.RangeIndex(da.sizes[system_dim])
    if len(systems) >= 2:
        _pairs(systems, a["baseline"], a["pairs"])
