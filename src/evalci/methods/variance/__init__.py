"""Variance components: how much of a score's variance is data noise, how
much run noise.

``components`` (:func:`icc`: one-way random-effects ANOVA from 0/1 rows or
counts, per group and for a paired difference: sigma2_B, sigma2_W, rho) and
``source`` (a pilot table read and checked: per-row outcomes, keys as codes,
sums per cell; the planning family reads its pilots through it).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``.
"""

from evalci.methods.variance.components import icc, source_icc
from evalci.methods.variance.source import (
    Codes,
    Source,
    cell_sums,
    group_frame,
    row_outcomes,
    source_iv,
    table_codes,
)

__all__ = [
    "Codes",
    "Source",
    "cell_sums",
    "group_frame",
    "icc",
    "row_outcomes",
    "source_icc",
    "source_iv",
    "table_codes",
]
