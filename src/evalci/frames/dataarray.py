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

from evalci._base.text import as_written
from evalci._base.validate import check_columns, check_finite
from evalci._base.warnings import caller_location, caller_warnings
from evalci.engine import args as _args
from evalci.engine import passes as engine
from evalci.engine import resampling as _rs
from evalci.engine import table as _table
from evalci.engine.cube import dense_cells, factorize
from evalci.frames import reduce as _reduce
from evalci.frames.dataarray_lazy import _lazy_bootstrap
from evalci.frames.dataarray_missing import policy_bootstrap
from evalci.frames.dataarray_table import (
    _check_args,
    _check_coords,
    _check_dims,
    _dataset,
    _load_coords,
    _long,
    _meta,
    _start,
)
from evalci.metrics import get_metric

__all__ = ["to_xarray", "to_frame", "cluster_ci", "bootstrap", "compare"]


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
            f"`value` column {as_written(value)} has missing values; NaN marks a missing run in "
            "the DataArray, so drop those rows first."
        )
    check_finite(data, [value], "value")
    cells = dense_cells(data, value, input, run, system)
    dense, in_codes, in_keys, run_keys, sys_keys = cells
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
    missing: str | None = None,
    paired: bool = True,
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
        tasks on the current scheduler; any chunking and any scheduler give
        the numbers of the numpy-backed array, bit for bit. A dim without
        coordinates is keyed by position; an input label that occurs more
        than once is one input (its positions merged), on both paths.
    missing : {None, 'raise', 'drop', 'zero', 'bounds'}
        None (default): NaN marks a run an input lacks (k may differ per
        input) and is left out, as always. Any other value reads every cell
        of the run dim as an attempted run and NaN as a missing sample,
        with :func:`evalci.bootstrap`'s policies and counts: ``"raise"``
        refuses NaN, ``"drop"`` leaves it out with a warning, ``"zero"``
        counts it as a failure, ``"bounds"`` gives worst-case bounds. The
        Dataset then gains ``n_attempted``, ``n_scored``, ``n_missing`` and
        ``n_inputs_unscored`` (and, under ``"bounds"``, ``share_scored``,
        ``bound_low``, ``bound_high``). A Dask-backed array is computed
        first for an explicit policy.
    paired : bool
        ``True`` (default): the broadcast dims share their draws. ``False``:
        each of their cells drawn on its own streams, as in
        :func:`evalci.bootstrap`.

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
        paired=paired,
    )
    _check_args(da, input_dim, run_dim, strata, by, kwargs)
    if missing is not None:
        ds = policy_bootstrap(da, input_dim, run_dim, strata, by, kwargs, missing)
    else:
        da = _load_coords(da)
        _check_coords(da, input_dim, run_dim, strata, by)
        if da.chunks is None:
            with caller_warnings():
                ds = _numpy_bootstrap(da, input_dim, run_dim, strata, by, kwargs)
        else:
            where = caller_location()
            ds = _lazy_bootstrap(da, input_dim, run_dim, strata, by, kwargs, where)
    if not kwargs["paired"]:  # the broadcast cells drew apart
        ds.attrs["paired"] = 0
    return ds


def cluster_ci(
    da: xr.DataArray, *, input_dim: str = "input", run_dim: str = "run", **kwargs
) -> xr.Dataset:
    """Cluster-bootstrap CI of a DataArray; see :func:`evalci.frames.dataarray.bootstrap`.

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
    >>> ds = evalci.frames.dataarray.cluster_ci(da, n_resamples=1000, rng=0)
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
        Without ``missing=``, NaN marks a run an input lacks and is left
        out; with it, every cell of the run dim is an attempted run and NaN
        a missing sample, under :func:`evalci.compare`'s policies.

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
    from evalci.methods.compare.paired import compare as _compare

    _check_dims(da, input_dim, run_dim, strata, [])
    if system_dim not in da.dims:
        raise ValueError(
            f"`system_dim`={as_written(system_dim)} is not a dimension of the DataArray; its dims "
            f"are {tuple(da.dims)}."
        )
    extra = [d for d in da.dims if d not in (input_dim, run_dim, system_dim)]
    if extra:
        raise ValueError(
            f"compare() takes a DataArray over ({as_written(input_dim)}, {as_written(run_dim)}, "
            f"{as_written(system_dim)}); select one value of {extra} first, e.g. "
            f"da.sel({extra[0]}=...)."
        )
    _check_compare(da, input_dim, run_dim, system_dim, strata, kwargs)
    if da.chunks is not None:
        da = da.compute()
    _check_coords(da, input_dim, run_dim, strata, [])
    with caller_warnings():
        # an explicit missing= reads every cell of the run dim as a run
        metric = get_metric(kwargs.get("metric", "mean"))
        keep = kwargs.get("missing") is not None
        frame, name, _ = _long(
            da, input_dim, run_dim, strata, [], metric, keep_missing=keep
        )
        return _compare(frame, name, input_dim, system_dim, strata=strata, **kwargs)


def _check_compare(da, input_dim, run_dim, system_dim, strata, kwargs):
    """compare()'s arguments that need no data, checked before computing."""
    import inspect

    from evalci.methods.compare.paired import compare as _compare
    from evalci.methods.compare.systems import _pairs

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
