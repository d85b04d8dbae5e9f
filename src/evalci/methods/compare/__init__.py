"""Is the gap real? Paired comparisons of systems on the same inputs.

``paired`` (:func:`compare`: every system from the same draws, so gaps are
paired), ``systems`` (the systems compared, their rows checked, their
scores on shared draws), ``result`` (:class:`ComparisonResult`), ``missing`` (``missing=``
in a comparison: missing runs, one-sided inputs, worst-case bounds on
gaps), ``decisions`` (seed 002's rule, p-values, Holm, exact bounds) and
``fragility`` (the fewest inputs whose removal flips a decision).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``.
"""

from evalci.methods.compare.decisions import (
    ADJUST,
    check_options,
    decide,
    fdr_adjusted,
    holm_adjusted,
)
from evalci.methods.compare.fragility import (
    FLIPS,
    Fragility,
    fragility_table,
    pair_fragility,
)
from evalci.methods.compare.missing import MissingInputsWarning
from evalci.methods.compare.paired import compare
from evalci.methods.compare.result import ComparisonResult
from evalci.methods.compare.systems import system_scores

__all__ = [
    "ADJUST",
    "FLIPS",
    "ComparisonResult",
    "Fragility",
    "MissingInputsWarning",
    "check_options",
    "compare",
    "decide",
    "fragility_table",
    "fdr_adjusted",
    "holm_adjusted",
    "pair_fragility",
    "system_scores",
]
