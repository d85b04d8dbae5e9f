"""Release gates for users' own tests, fixed-sample and sequential.

``gates`` (:func:`assert_score_above`, :func:`assert_no_regression`,
:func:`assert_results_equal`; the anytime-valid
:func:`confidence_sequence`, :func:`sequential_gap` and
:func:`assert_no_regression_sequential`).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``; the
family ``compare``.
"""

from evalci.methods.testing.gates import (
    SequentialGap,
    assert_no_regression,
    assert_no_regression_sequential,
    assert_results_equal,
    assert_score_above,
    confidence_sequence,
    sequential_gap,
)

__all__ = [
    "SequentialGap",
    "assert_no_regression",
    "assert_no_regression_sequential",
    "assert_results_equal",
    "assert_score_above",
    "confidence_sequence",
    "sequential_gap",
]
