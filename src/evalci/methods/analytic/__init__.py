"""Closed-form intervals and tests: no resampling.

``intervals`` (:func:`analytic_ci`: cluster-robust normal, Wilson,
Clopper-Pearson, the rule of three, Fleiss-Cohen-Everitt kappa), ``args``
(its argument checks), ``missing`` (``missing=`` for closed forms: drop,
zero, worst-case bounds), ``closed_form`` (the array formulas),
``paired_binary`` (:func:`mcnemar`) and ``run_level`` (:func:`run_level_ci`).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``.
"""

from evalci.methods.analytic.intervals import AnalyticResult, analytic_ci
from evalci.methods.analytic.paired_binary import (
    MCNEMAR_EXACT_BELOW,
    McNemarResult,
    mcnemar,
)
from evalci.methods.analytic.run_level import (
    RUN_LEVEL_KINDS,
    RunLevelResult,
    run_level_ci,
)

__all__ = [
    "MCNEMAR_EXACT_BELOW",
    "RUN_LEVEL_KINDS",
    "AnalyticResult",
    "McNemarResult",
    "RunLevelResult",
    "analytic_ci",
    "mcnemar",
    "run_level_ci",
]
