"""``evalci.bootstrap`` and ``cluster_ci`` on a Dask DataFrame, and what a
missing value means there (``missing=``).

``"raise"`` and ``"drop"`` run on the workers (each partition's cells, the
missing runs left out there); ``"drop"`` then counts what it left out in one
more reduction of the keys and a missing flag. ``"zero"`` and ``"bounds"``
need each input's attempted runs, so the rows are reduced exactly first
(missing values kept as rows) and the pandas entry point runs on that table.
A refusal raised by one partition (with that partition's counts) is raised
again with the whole table's.
"""

from __future__ import annotations

import numpy as np

from evalci._base.warnings import caller_warnings
from evalci.engine import args as _args
from evalci.engine import scaleout as _scaleout
from evalci.frames.dask_frame import (
    RUNS,
    _bind,
    _bootstrap_resamples,
    compress,
    meta,
    pass_columns,
    reduce_for_bootstrap,
)

__all__ = ["bootstrap", "cluster_ci"]


def bootstrap(ddf, value=None, cluster=None, **kwargs):
    """:func:`evalci.bootstrap` on a Dask DataFrame (its one way in).

    Every argument is checked on the metadata first; per-input statistics are
    reduced on the workers and resampled there (:func:`bootstrap_frame`).
    """
    from evalci.engine import auto as _auto
    from evalci.engine import missing as _missing
    from evalci.engine.bootstrap import bootstrap as pandas_bootstrap

    given = _bind(pandas_bootstrap, ddf, value, cluster, **kwargs)
    given["missing"] = _missing.resolve(given["missing"], given["dropna"])
    given["dropna"] = False
    # workers too small for the reduction are refused before it starts
    _scaleout.check_reduce_memory(
        _scaleout.active_client(),
        lambda: _reduced_table(ddf, given),
        share=lambda workers, room: _in_place_share(ddf, given, workers, room),
    )
    with caller_warnings():
        if given["missing"] in ("zero", "bounds"):
            return _bootstrap_reduced(pandas_bootstrap, ddf, given)
        try:
            result = _auto.resolve(_bootstrap_resamples, **given)
        except ValueError as e:
            _refuse_missing(ddf, given, e)
            raise
        if given["missing"] == "drop" and given.get("compute") is True:
            result = _counted(ddf, given, result)
        return result


def _reduced_table(ddf, given) -> tuple[int | None, int]:
    """``(rows, bytes per row)`` of what the reduction reads: the rows when
    known without a task (:func:`evalci.engine.scaleout.known_rows`)."""
    # only the columns are read: B may still be "auto" here
    args = _args.bootstrap_iv_of(meta(ddf), given, by=given["by"], n_resamples=2)
    used = meta(ddf).dtypes[pass_columns(args)]
    return _scaleout.known_rows(ddf), _scaleout.row_bytes(used)


def _in_place_share(ddf, given, n_workers: int, room: float):
    """What the workers hold when the statistics are summed where the rows
    lie (:mod:`evalci.frames.dask_memory`), as ``share`` for
    :func:`~evalci.engine.scaleout.check_reduce_memory`: None when the
    reduction shuffles instead, nothing beyond the least room when the rows
    are not known. Integer and boolean statistics never shuffle; others are
    tried in place first when the call computes at once, so they need the
    larger of the two."""
    from evalci.frames import dask_memory
    from evalci.frames.dask_cells import whole_by_type
    from evalci.frames.reduce import _cells_apply

    args = _args.bootstrap_iv_of(meta(ddf), given, by=given["by"], n_resamples=2)
    if given["missing"] != "raise" or not _cells_apply(args):
        return None
    whole = whole_by_type(meta(ddf), args)
    if not (whole or given.get("compute") is not False):
        return None
    rows, nbytes = _reduced_table(ddf, given)
    if rows is None:
        return 0.0, "", ""
    cell = dask_memory.cell_bytes(meta(ddf), args)
    out = dask_memory.in_place_share(rows, ddf.npartitions, nbytes, cell, room)
    if whole:
        return out
    shuffle, what = _scaleout.shuffle_share(rows, nbytes, n_workers)
    return (
        max(out[0], shuffle),
        f"{out[1]} if every statistic is whole, else {what}",
        ", or more workers" if shuffle > out[0] else out[2],
    )


def _counted(ddf, given, result):
    """``missing="drop"``: the runs the workers left out, counted (one more
    reduction of the keys, a missing flag and the causes), on the result and
    in the warning that the estimand changed."""
    from dataclasses import replace

    from evalci.engine import missing as _missing
    from evalci.metrics import get_metric

    args = _args.bootstrap_iv_of(meta(ddf), given, by=given["by"])
    if args.trials is not None:  # a counts table: its rows are kept whole
        return result
    cols = _missing._value_columns(args)
    flag = "__evalci_na__"
    keys = [*args.cluster, *args.input, *args.by]
    causes = [c for c, _, _ in _missing.CAUSES if c in ddf.columns]
    marked = ddf.assign(**{flag: ddf[cols].isna().any(axis=1)})
    marked = marked.assign(**{c: marked[c].notna() & marked[flag] for c in causes})
    table = compress(marked, [*keys, flag, *causes])
    table[args.value] = np.where(table[flag], np.nan, 0.0)
    table = table.assign(**{c: table[c].where(table[c]) for c in causes})
    counts = _missing.tally(
        table, replace(args, row_runs=RUNS, metric=get_metric("mean"))
    )
    if counts is None:
        return result
    _missing.warn_dropped(counts)
    return replace(
        result, missing="drop", counts=_missing.aligned(counts, result.groups)
    )


def _bootstrap_reduced(pandas_bootstrap, ddf, given):
    """``missing="zero"`` or ``"bounds"``: each input's attempted runs are
    needed, so the rows are reduced exactly first (missing values kept as
    rows) and :func:`evalci.bootstrap` runs on that table, its resampling on
    Dask unless ``backend="numpy"``."""
    from evalci.engine.table import ReducedRows

    if given.get("compute") is not True:
        raise ValueError(
            f"missing={given['missing']!r} on a Dask DataFrame reduces the table "
            "first, so it computes at once: leave `compute` out (or use "
            "missing='raise' or 'drop' for a lazy result)."
        )
    table, row_runs = _reduced(ddf, given)
    kwargs = {k: v for k, v in given.items() if k not in ("data", "compute")}
    kwargs["backend"] = kwargs.get("backend") or "dask"
    return pandas_bootstrap(ReducedRows(table, row_runs), **kwargs)


def _refuse_missing(ddf, given, error) -> None:
    """A partition refused its missing values with its own counts: refuse
    with the whole table's (one more reduction, only on this failure)."""
    from evalci.engine import missing as _missing

    if given["missing"] != "raise" or "missing values" not in str(error):
        return
    table, row_runs = _reduced(ddf, given)
    if row_runs is None:
        return
    args = _args.bootstrap_iv_of(table, given, row_runs=row_runs)
    na = _missing.missing_rows(table, args)
    if na.any():
        col = next(c for c in _missing._value_columns(args) if table[c].isna().any())
        raise ValueError(_missing.refusal(table, args, na, col, "value")) from None


def cluster_ci(ddf, value=None, cluster=None, **kwargs):
    """:func:`evalci.cluster_ci` on a Dask DataFrame: :func:`bootstrap` with
    ``strategy="cluster"``, its arguments checked against ``cluster_ci``'s."""
    from evalci.engine.bootstrap import cluster_ci as pandas_cluster_ci

    _bind(pandas_cluster_ci, ddf, value, cluster, **kwargs)
    return bootstrap(ddf, value, cluster, strategy="cluster", **kwargs)


def _reduced(ddf, given):
    """``(table, row_runs)``: the exact reduction of the columns a pass reads."""
    return reduce_for_bootstrap(
        ddf,
        given["value"],
        given["cluster"],
        given["strategy"],
        given["metric"],
        given["by"],
        given["strata"],
        given["successes"],
        given["trials"],
        given["input"],
    )
