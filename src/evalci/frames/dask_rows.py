"""Methods that read every row on a Dask DataFrame: :func:`analytic_ci`, :func:`mcnemar`, :func:`flaky`, :func:`report` and :func:`to_xarray`, on the rows rebuilt exactly from one reduction (or on counts per input where the method takes them)."""

from __future__ import annotations

import inspect

from evalci._base.validate import as_columns, check_columns, check_finite
from evalci._base.warnings import caller_warnings
from evalci.frames.dask_frame import (
    SUCCESSES,
    TRIALS,
    _bind,
    _check_compare,
    check_value,
    compress,
    counts_or_rows,
    expand,
    flag_causes,
    meta,
)


def _accepts_counts(fn) -> bool:
    params = inspect.signature(fn).parameters
    return "successes" in params and "trials" in params


def analytic_ci(ddf, value, cluster=None, **kwargs):
    """:func:`evalci.analytic_ci` on the rows rebuilt from one reduction."""
    from evalci.methods import analytic
    from evalci.methods.analytic.args import _analytic_iv

    check_value(value)
    a = _bind(analytic.analytic_ci, ddf, value, cluster, **kwargs)
    args = _analytic_iv(
        meta(ddf),
        a["value"],
        a["cluster"],
        a["method"],
        a["by"],
        a["confidence_level"],
        a["truth"],
        a["weight"],
    )
    keys = [*args.cluster, *args.by, args.value, *([args.truth] if args.truth else [])]
    table = compress(ddf, keys)
    check_finite(table, [args.value], "value")
    data = expand(table, "analytic_ci")
    with caller_warnings():
        return analytic.analytic_ci(data, value, cluster, **kwargs)


def mcnemar(ddf, value, cluster, system, a, b, **kwargs):
    """:func:`evalci.mcnemar` on the (k=1, so small) rows of one reduction."""
    from evalci.methods import analytic

    check_value(value)
    _bind(analytic.mcnemar, ddf, value, cluster, system, a, b, **kwargs)
    if not isinstance(value, str):
        raise TypeError(
            f"`value` must be a column name (str), not {type(value).__name__}."
        )
    if not isinstance(system, str):
        raise TypeError(
            f"`system` must be a column name (str), not {type(system).__name__}."
        )
    cols = as_columns(cluster, "cluster", allow_none=False)
    m = meta(ddf)
    check_columns(m, [value], "value")
    check_columns(m, cols, "cluster")
    check_columns(m, [system], "system")
    table = compress(ddf, [*cols, system, value])
    check_finite(table, [value], "value")
    data = expand(table, "mcnemar")
    with caller_warnings():
        return analytic.mcnemar(data, value, cluster, system, a, b, **kwargs)


def _rows_or_counts(fn, what, ddf, keys, value, call, counts_ok=True):
    """Counts when ``fn`` takes them (0/1 outcomes), else the rebuilt rows."""
    if counts_ok and _accepts_counts(fn):
        kind, data = counts_or_rows(ddf, keys, value, what)
        if kind == "counts":
            with caller_warnings():
                return call(data, None, {"successes": SUCCESSES, "trials": TRIALS})
    else:
        table = compress(ddf, [*keys, value])
        check_finite(table, [value], "value")
        data = expand(table, what)
    with caller_warnings():
        return call(data, value, {})


def flaky(ddf, value, cluster, **kwargs):
    """:func:`evalci.flaky` from one reduction (rows rebuilt, or counts if taken)."""
    from evalci.reporting.flaky import flaky as _flaky

    check_value(value)
    a = _bind(_flaky, ddf, value, cluster, **kwargs)
    m = meta(ddf)
    cols = as_columns(a["cluster"], "cluster", allow_none=False)
    by = as_columns(a["by"], "by")
    check_columns(m, [value], "value")
    check_columns(m, cols, "cluster")
    check_columns(m, by, "by")
    return _rows_or_counts(
        _flaky,
        "flaky",
        ddf,
        [*by, *cols],
        value,
        lambda data, v, extra: _flaky(data, v, cluster, **kwargs, **extra),
    )


def report(ddf, value, cluster, system="system", **kwargs):
    """:func:`evalci.report` from one reduction (rows rebuilt, or counts if taken)."""
    from evalci.metrics import Metric, for_value, get_metric
    from evalci.reporting.report import report as _report

    check_value(value)
    a = _bind(_report, ddf, value, cluster, system, **kwargs)
    _check_compare(
        ddf,
        {
            **a,
            "strategy": "cluster",
            "dropna": False,
            "successes": None,
            "trials": None,
        },
    )
    metric = for_value(get_metric(a["metric"]), value)
    cols = as_columns(cluster, "cluster", allow_none=False)
    keys = [*cols, system, *as_columns(a["strata"], "strata")]
    if isinstance(metric, Metric):
        keys += list(metric.columns)
    ddf, causes = flag_causes(ddf, [*keys, value])
    keys += causes
    return _rows_or_counts(
        _report,
        "report",
        ddf,
        keys,
        value,
        lambda data, v, extra: _report(data, v, cluster, system, **kwargs, **extra),
        # rows, not counts: a counts report would name evalci's internal columns
        counts_ok=False,
    )


def to_xarray(ddf, value, **kwargs):
    """:func:`evalci.frames.dataarray.to_xarray`: loads the columns it needs (one compute).

    The DataArray holds every value, so nothing smaller than those columns
    exists; rows keep the Dask DataFrame's order (runs numbered in table order
    with ``run=None`` are those of ``ddf.compute()``).
    """
    from evalci.frames import dataarray as _xr

    check_value(value)
    a = _bind(_xr.to_xarray, ddf, value, **kwargs)
    cols = [value, a["input"]] + [
        c for c in (a["run"], a["system"], a["strata"]) if c is not None
    ]
    check_columns(meta(ddf), cols, "to_xarray")
    data = ddf[list(dict.fromkeys(cols))].compute()
    with caller_warnings():
        return _xr.to_xarray(data, value, **kwargs)
