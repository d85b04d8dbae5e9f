"""A Dask-backed DataArray bootstrapped lazily: each chunk (its run dim
whole) reduced to per-input statistics, the pass started from those, and the
resampling as Dask tasks (:mod:`evalci.engine.scaleout`); the numbers equal
the eager path's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from evalci._base.warnings import caller_warnings
from evalci.engine import args as _args
from evalci.engine import cells as _cells
from evalci.engine import passes as engine
from evalci.frames import reduce as _reduce
from evalci.frames.dataarray_table import (
    _RESULT_VARS,
    _check_args,
    _dataset,
    _long,
    _start,
)
from evalci.metrics import Metric


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


def _keyed_coords(da) -> dict:
    """``da``'s coordinates, with a dim that has none keyed by its positions.

    A chunk on its own numbers the positions of such a dim from 0, so the
    first input of every chunk would be the same input (and ten chunks of
    100 inputs 100 inputs of 10 times the runs). The numpy path keys these
    dims by position in the whole array (``to_dataframe``'s default index):
    every chunk must carry those global positions.
    """
    coords = {k: (c.dims, np.asarray(c.values)) for k, c in da.coords.items()}
    for d in da.dims:
        if d not in coords:
            coords[d] = ((d,), np.arange(da.sizes[d]))
    return coords


def _split_keys(keys, chunks) -> np.ndarray:
    """The input labels found in more than one chunk along the input dim.

    A label may repeat along the dim (the numpy path merges its positions
    into one input). Summed per chunk, such an input's runs would be added
    in chunk order, not the canonical order, and the last bits would depend
    on the chunking; its rows go to the start task instead.
    """
    chunk_of = np.repeat(np.arange(len(chunks)), chunks)
    seen = pd.DataFrame({"key": keys, "chunk": chunk_of})
    counts = seen.groupby("key", sort=False, dropna=False)["chunk"].nunique()
    return counts.index[counts.to_numpy() > 1].to_numpy()


def _chunk_cells(block, coords, dims, name, spec, args, where, split=()):
    """``evalci-reduce``: one chunk's cells (its runs are whole: run is one chunk).

    Numeric metrics: the chunk's summed statistics per (input, group) cell,
    in the canonical order (:func:`evalci.engine.cells.cell_statistics`), bit for
    bit those of the numpy path, and the rows of the inputs in ``split``
    (labels other chunks hold too), summed once all are together. Label
    metrics: its distinct rows and their multiplicities (exact; label data
    compresses). ``args`` are the arguments checked once on the array's
    metadata (:func:`_check_args`).
    """
    input_dim, run_dim, strata, by = spec
    arr = xr.DataArray(block, dims=dims, coords=coords, name=name)
    with caller_warnings(where):
        frame, _, _ = _long(arr, input_dim, run_dim, strata, by, args.metric)
        if _reduce._cells_apply(args):
            shared = frame[input_dim].isin(split).to_numpy()
            whole = _cells.cell_statistics(frame.loc[~shared], args)
            return whole, frame.loc[shared]
        cols = [c for c in frame.columns if c != run_dim]
        return _reduce._distinct(frame[cols], cols)


def _concat(parts):
    full = [p for p in parts if len(p)]
    return pd.concat(full, ignore_index=True) if full else parts[0]


def _start_lazy(parts, meta_args, kwargs, where):
    """``evalci-start``: the pass from the chunks' cells (or distinct rows)."""
    with caller_warnings(where):
        if _reduce._cells_apply(meta_args):
            cells = [c for c, _ in parts]
            shared = _concat([rows for _, rows in parts])
            if len(shared):  # inputs split between chunks: their cells now
                cells.append(_cells.cell_statistics(shared, meta_args))
            cube, n_runs = _cells.prepare_cells(_concat(cells), meta_args)
            return engine.pass_of_cube(cube, n_runs, meta_args, kwargs["rng"])
        table = _concat(parts)
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
    coords = _keyed_coords(da)
    spec = (input_dim, run_dim, strata, tuple(by))
    axis = da.dims.index(input_dim)
    split = _split_keys(coords[input_dim][1], data.chunks[axis])
    blocks = data.to_delayed()
    out = []
    for index in np.ndindex(*blocks.shape):
        block_coords = _block_coords(coords, da.dims, data.chunks, index)
        here = split[np.isin(split, block_coords[input_dim][1])] if len(split) else ()
        out.append(
            dask.delayed(_chunk_cells, pure=True)(
                blocks[index],
                block_coords,
                da.dims,
                da.name,
                spec,
                meta_args,
                where,
                here,
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
    ``evalci-resample`` tasks (:mod:`evalci.engine.scaleout`) compute the replicates
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
    ds.attrs.update(_attrs(kwargs, by, input_dim, run_dim))
    return ds


def _attrs(kwargs: dict, by, input_dim, run_dim) -> dict:
    """The attributes of the lazy result's Dataset (as
    :func:`~evalci.frames.dataarray_table.attrs_of` gives a computed one)."""
    return {
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


def _template(da, input_dim, run_dim, by, n_resamples) -> xr.Dataset:
    """Shapes and coordinates of the result, known without computing ``da``."""
    group_dims = [d for d in da.dims if d not in (input_dim, run_dim)]
    coords, sizes = {}, {}
    for b in by:
        keys = np.unique(np.asarray(da.coords[b].values).reshape(-1))
        coords[b], sizes[b] = keys, len(keys)
    for d in group_dims:
        # a dim without coordinates is labelled by position, as the numpy
        # path labels it (its result has the coordinate 0..n-1)
        coords[d] = (
            np.asarray(da.coords[d].values)
            if d in da.coords
            else np.arange(da.sizes[d])
        )
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
