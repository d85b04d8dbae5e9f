"""The public entry points that take a pandas or a Dask DataFrame.

``evalci.bootstrap``, ``cluster_ci``, ``compare``, ``leaderboard``,
``report``, ``facet_ci``, ``facet_compare`` and ``g_study`` are the
pandas functions of the layers below, each behind a door: a Dask DataFrame
goes to its Dask counterpart in :mod:`evalci.frames.dask_frame` (the same path
as ``ddf.evalci``), which reduces it exactly on the workers and runs the
ordinary function on the small table. The statistical methods never learn
that Dask exists. A door has its function's signature and docstring.
"""

from __future__ import annotations

import functools
import inspect

from evalci.engine import bootstrap as _bootstrap
from evalci.frames import dask_bootstrap, dask_facets, dask_frame, dask_rows
from evalci.methods import facets as _facets
from evalci.methods.compare import paired as _compare
from evalci.methods.ranks import ranking as _ranks
from evalci.reporting import report as _report

__all__ = [
    "bootstrap",
    "cluster_ci",
    "compare",
    "facet_ci",
    "facet_compare",
    "g_study",
    "leaderboard",
    "report",
]


def _door(pandas_fn, dask_fn):
    """``pandas_fn``, with a Dask DataFrame's ``data`` sent to ``dask_fn``."""
    signature = inspect.signature(pandas_fn)

    @functools.wraps(pandas_fn)
    def door(*args, **kwargs):
        data = signature.bind_partial(*args, **kwargs).arguments.get("data")
        if dask_frame.is_dask_frame(data):
            return dask_fn(*args, **kwargs)
        return pandas_fn(*args, **kwargs)

    return door


bootstrap = _door(_bootstrap.bootstrap, dask_bootstrap.bootstrap)
cluster_ci = _door(_bootstrap.cluster_ci, dask_bootstrap.cluster_ci)
compare = _door(_compare.compare, dask_frame.compare)
leaderboard = _door(_ranks.leaderboard, dask_frame.leaderboard)
report = _door(_report.report, dask_rows.report)
facet_ci = _door(_facets.facet_ci, dask_facets.facet_ci)
facet_compare = _door(_facets.facet_compare, dask_facets.facet_compare)
g_study = _door(_facets.g_study, dask_facets.g_study)
