"""Planning on a Dask DataFrame: :func:`icc`, :func:`width_table`, :func:`plan`, :func:`sample_size` and :func:`mde` from one exact reduction (counts per input, or the rows rebuilt), then the pandas function."""

from __future__ import annotations

from evalci._base.validate import check_finite
from evalci._base.warnings import caller_warnings
from evalci.frames.dask_frame import (
    SUCCESSES,
    TRIALS,
    _bind,
    check_value,
    compress,
    counts_or_rows,
    expand,
    meta,
)


def _planning_keys(src) -> list[str]:
    return [*src.cluster, *src.by, *([src.system] if src.system else [])]


def _planning_source(ddf, a: dict):
    """The table arguments of a planning function, checked on the metadata."""
    from evalci.methods.variance import source_iv

    check_value(a.get("value"))
    return source_iv(
        meta(ddf),
        a.get("value"),
        a.get("cluster"),
        a.get("by"),
        a.get("system"),
        a.get("successes"),
        a.get("trials"),
    )


def _call_planning(fn, what, ddf, a, src, rows_with=()):
    """Run planning function ``fn`` (bound arguments ``a``) after one reduction.

    0/1 outcomes become a counts table; ``rows_with`` are extra columns that
    force the rows path (``run``, to match the runs of two systems).
    """
    keys = _planning_keys(src)
    if src.counts:
        table = compress(ddf, [*keys, src.successes, src.trials])
        check_finite(table, [src.successes, src.trials], "successes/trials")
        data = expand(table, what, limit=False)
    elif rows_with:
        table = compress(ddf, [*keys, *rows_with, src.value])
        check_finite(table, [src.value], "value")
        data = expand(table, what)
    else:
        kind, data = counts_or_rows(ddf, keys, src.value, what)
        if kind == "counts":
            a = {**a, "value": None, "successes": SUCCESSES, "trials": TRIALS}
    a = {k: v for k, v in a.items() if k != "data"}
    with caller_warnings():
        return fn(data, **a)


def icc(ddf, value=None, cluster=None, **kwargs):
    """:func:`evalci.icc` from one reduction (counts for 0/1 outcomes)."""
    from evalci.methods import variance

    a = _bind(variance.icc, ddf, value, cluster, **kwargs)
    src = _planning_source(ddf, a)
    if a["pairs"] is not None and a["system"] is None:
        raise ValueError(
            "`pairs` needs `system=`: name the column whose values the pairs refer "
            "to, e.g. system='system', pairs=[('direct', 'cot')]."
        )
    run = a["run"]
    matched = (
        a["pairs"] is not None
        and not src.counts
        and run is not None
        and run in ddf.columns
    )
    # pairs with a run column match runs by number: that needs the rows
    return _call_planning(
        variance.icc, "icc", ddf, a, src, rows_with=(run,) if matched else ()
    )


def width_table(ddf, value=None, cluster=None, **kwargs):
    """:func:`evalci.width_table` (predicted widths) from one reduction."""
    from evalci._base.validate import check_n_resamples
    from evalci.methods import planning
    from evalci.methods.planning import widths

    a = _bind(planning.width_table, ddf, value, cluster, **kwargs)
    src = _planning_source(ddf, a)
    check_n_resamples(a["n_resamples"])
    widths._z_two_sided(a["confidence_level"])
    if a["observed"]:
        raise ValueError(
            "width_table(observed=True) subsamples each input's runs in table "
            "order, which a Dask reduction does not keep, so its numbers would "
            "differ from pandas' for the same seed; compute the frame first: "
            "ddf.compute().evalci.width_table(..., observed=True), or use "
            "observed=False (the predicted widths)."
        )
    return _call_planning(planning.width_table, "width_table", ddf, a, src)


def plan(ddf, value=None, cluster=None, **kwargs):
    """:func:`evalci.plan_from_data` from one reduction."""
    from evalci.methods import planning
    from evalci.methods.planning import widths

    a = _bind(planning.plan_from_data, ddf, value, cluster, **kwargs)
    src = _planning_source(ddf, a)
    widths._z_two_sided(a["confidence_level"])
    return _call_planning(planning.plan_from_data, "plan", ddf, a, src)


def _pilot(fn, what, ddf, value, cluster, kwargs):
    a = _bind(fn, ddf, value, cluster, **kwargs)
    src = _planning_source(ddf, a)
    if a["pair"] is not None and a["system"] is None:
        raise ValueError(
            "`pair` needs `system=`: name the column holding the systems, e.g. "
            "system='system', pair=('direct', 'cot')."
        )
    # with a pair, icc matches the runs of the two systems by the "run" column
    matched = a["pair"] is not None and not src.counts and "run" in ddf.columns
    return _call_planning(fn, what, ddf, a, src, rows_with=("run",) if matched else ())


def sample_size(ddf, value=None, cluster=None, **kwargs):
    """:func:`evalci.sample_size_from_data` from one reduction."""
    from evalci.methods import planning

    return _pilot(
        planning.sample_size_from_data, "sample_size", ddf, value, cluster, kwargs
    )


def mde(ddf, value=None, cluster=None, **kwargs):
    """:func:`evalci.mde_from_data` from one reduction."""
    from evalci.methods import planning

    return _pilot(planning.mde_from_data, "mde", ddf, value, cluster, kwargs)
