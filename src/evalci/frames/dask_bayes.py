""":func:`evalci.bayes_ci` and :func:`evalci.bayes_compare` on a Dask DataFrame.

The arguments are checked on the frame's metadata with the pandas path's
messages; one Dask reduction compresses the table exactly to its distinct
(input, groups, value) rows with their multiplicities; the rows are rebuilt
(up to :data:`evalci.frames.dask_frame.MAX_EXPANDED_ROWS`) and the pandas
function runs on them, so the numbers are the pandas ones.
"""

from __future__ import annotations

from evalci._base.validate import as_columns
from evalci.frames import dask_frame as _dask
from evalci.methods.bayes import gap as _bayes_compare
from evalci.methods.bayes import interval as _bayes
from evalci.methods.bayes.args import bayes_iv


def bayes_ci(ddf, value, cluster=None, **kwargs):
    """:func:`evalci.bayes_ci` on the rows rebuilt from one reduction."""
    _dask.check_value(value)
    a = _dask._bind(_bayes.bayes_ci, ddf, value, cluster, **kwargs)
    args = bayes_iv(
        _dask.meta(ddf),
        a["value"],
        a["cluster"],
        a["by"],
        a["trials"],
        a["prior"],
        a["confidence_level"],
        a["threshold"],
        a["estimand"],
    )
    keys = [
        *args.cluster,
        *args.by,
        args.value,
        *([args.trials] if args.trials else []),
    ]
    data = _dask.expand(_dask.compress(ddf, keys), "bayes_ci")
    with _dask.caller_warnings():
        return _bayes.bayes_ci(data, value, cluster, **kwargs)


def bayes_compare(ddf, value, cluster, system="system", **kwargs):
    """:func:`evalci.bayes_compare` on the rows rebuilt from one reduction."""
    _dask.check_value(value)
    _dask._bind(_bayes_compare.bayes_compare, ddf, value, cluster, system, **kwargs)
    meta = _dask.meta(ddf)
    bayes_iv(meta, value, cluster, None, None, "uniform-icc", 0.95, None, "inputs")
    keys = [*as_columns(cluster, "cluster"), system, value]
    _dask.check_columns(meta, [system], "system")
    data = _dask.expand(_dask.compress(ddf, keys), "bayes_compare")
    with _dask.caller_warnings():
        return _bayes_compare.bayes_compare(data, value, cluster, system, **kwargs)
