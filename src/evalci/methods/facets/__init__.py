"""Facets: the sources of a score's variance beyond inputs and runs (prompt
template, judge, inference engine, seed), crossed with the inputs and each
other, runs nested in their cells; the intervals that generalise over them
and the design that measures them most cheaply.

``cells`` (a tidy table reduced to runs, sums and squares per cell, dense
over the crossed dimensions: what every other module reads), ``anova``
(balanced designs: expected mean squares), ``reml`` (unbalanced designs:
restricted maximum likelihood), ``components`` (the G-study of one group and
the variance of its mean), ``multiway`` (Cameron-Gelbach-Miller),
``pigeonhole`` (the pigeonhole bootstrap), ``intervals`` (:func:`g_study`,
:func:`facet_ci`, :func:`facet_compare`), ``result`` (:class:`GStudy`,
:class:`FacetResult`), ``dstudy`` (:func:`plan_facets`: the cheapest design).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``.
"""

from evalci.methods.facets.cells import (
    Cells,
    cells_of,
    check_rows,
    facet_columns,
    from_reduced,
    reduce_rows,
)
from evalci.methods.facets.dstudy import FacetPlan, plan_facets
from evalci.methods.facets.intervals import (
    facet_ci,
    facet_ci_of_cells,
    facet_compare,
    facet_compare_of_cells,
    g_study,
    g_study_of_cells,
)
from evalci.methods.facets.result import FacetResult, GStudy

__all__ = [
    "Cells",
    "FacetPlan",
    "FacetResult",
    "GStudy",
    "cells_of",
    "check_rows",
    "facet_ci",
    "facet_ci_of_cells",
    "facet_compare",
    "facet_columns",
    "facet_compare_of_cells",
    "from_reduced",
    "g_study",
    "g_study_of_cells",
    "plan_facets",
    "reduce_rows",
]
