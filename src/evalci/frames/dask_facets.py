"""The facets family on a Dask DataFrame: each partition is reduced on its
worker to runs, sums and squares per (group, input, facet levels) cell
(:func:`~evalci.methods.facets.reduce_rows`), the partial tables are added,
and the small table of cells is analysed as the pandas path analyses it: the
same numbers, for the same seed.
"""

from __future__ import annotations

import pandas as pd

from evalci.frames import dask_frame
from evalci.methods import facets as _facets

__all__ = ["cells", "facet_ci", "facet_compare", "g_study"]

_SUMS = ["n", "s", "q"]


def _partition(frame: pd.DataFrame, value: str, cluster: str, facets: list,
               by: list) -> pd.DataFrame:
    """One partition's cells, after the row checks of the pandas path."""
    _facets.check_rows(frame, value, cluster, facets, by, rows=False)
    return _facets.reduce_rows(frame, value, [*by, cluster, *facets])


def cells(ddf, value, cluster, facets, by=None):
    """The :class:`~evalci.methods.facets.Cells` of a Dask DataFrame."""
    meta = dask_frame.meta(ddf)
    value, cluster, facets, by, _ = _facets.facet_columns(
        meta, value, cluster, facets, by)
    if not pd.api.types.is_numeric_dtype(meta[value]):
        raise TypeError(f"`value` column {value!r} must hold numbers, not "
                        f"{meta[value].dtype}.")
    keys = [*by, cluster, *facets]
    empty = _facets.reduce_rows(meta[[*keys, value]], value, keys)
    parts = ddf[[*keys, value]].map_partitions(_partition, value, cluster, facets, by,
                                               meta=empty)
    reduced = parts.compute()
    reduced = reduced.groupby(keys, sort=True, observed=True)[_SUMS].sum().reset_index()
    return _facets.from_reduced(reduced, value, cluster, facets, by)


def g_study(data, value, cluster, facets, *, by=None, run=None, confidence_level=0.95):
    """:func:`evalci.g_study` on a Dask DataFrame (``run`` is not checked)."""
    return _facets.g_study_of_cells(cells(data, value, cluster, facets, by),
                                   confidence_level=confidence_level)


def facet_ci(data, value, cluster, facets, *, by=None, run=None, **options):
    """:func:`evalci.facet_ci` on a Dask DataFrame (``run`` is not checked)."""
    return _facets.facet_ci_of_cells(cells(data, value, cluster, facets, by), **options)


def facet_compare(data, value, cluster, facets, system="system", *, baseline=None,
                  run=None, **options):
    """:func:`evalci.facet_compare` on a Dask DataFrame (``run`` is not checked)."""
    return _facets.facet_compare_of_cells(cells(data, value, cluster, facets, system),
                                         baseline=baseline, **options)
