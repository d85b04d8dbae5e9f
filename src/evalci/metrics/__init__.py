"""Metrics as sufficient-statistic blueprints, and their registry.

A :class:`Metric` says which statistics each row contributes (summed per
input), how each input's sums map (``per_input``) and how a vector of sums
becomes the score (``finalize``, vectorised over replicates). The engine reads
these blueprints; a metric knows nothing of resampling.

The modules: :mod:`~evalci.metrics.base` (the blueprint),
:mod:`~evalci.metrics.labels` (label columns' shared helpers), the families
:mod:`~evalci.metrics.scores` (mean, accuracy, ratio, quantile),
:mod:`~evalci.metrics.passk` (pass@k, pass^k),
:mod:`~evalci.metrics.agreement` (kappa, Krippendorff's alpha) and
:mod:`~evalci.metrics.classification` (precision, recall, F1), and
:mod:`~evalci.metrics.registry` (names for ``metric=``), and
:mod:`~evalci.metrics.sums` (:func:`from_sums`: a Metric from a function of
named column sums, the fast form of a callable that reads only totals).
"""

from evalci.metrics.agreement import kappa, krippendorff_alpha
from evalci.metrics.base import Metric, _ratio  # noqa: F401  (_ratio: engine, compare)
from evalci.metrics.classification import f1, precision, recall
from evalci.metrics.passk import pass_at_k, pass_hat_k
from evalci.metrics.registry import available_metrics, get_metric, register_metric
from evalci.metrics.scores import accuracy, mean, quantile, ratio
from evalci.metrics.sums import for_value, from_sums  # noqa: F401  (for_value: engine)

__all__ = [
    "Metric",
    "mean",
    "accuracy",
    "kappa",
    "precision",
    "recall",
    "f1",
    "pass_at_k",
    "pass_hat_k",
    "krippendorff_alpha",
    "ratio",
    "quantile",
    "from_sums",
    "register_metric",
    "get_metric",
    "available_metrics",
]
