"""Benchmark suites: one score per system over many tasks.

``scores`` (:func:`suite_ci`: micro or macro weighting; tasks fixed, as
strata, or sampled, a two-stage bootstrap; mean win rate).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``.
"""

from evalci.methods.suites.scores import MissingTasksWarning, SuiteResult, suite_ci

__all__ = ["MissingTasksWarning", "SuiteResult", "suite_ci"]
