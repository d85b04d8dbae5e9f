"""Metrics as sufficient-statistic blueprints, and their registry.

A :class:`Metric` says which statistics each row contributes (summed per
input), how each input's sums map (``per_input``) and how a vector of sums
becomes the score (``finalize``, vectorised over replicates). The engine reads
these blueprints; a metric knows nothing of resampling.
"""

from evalci.metrics.registry import *  # noqa: F403
from evalci.metrics.registry import (
    __all__,  # noqa: F401
    _ratio,  # noqa: F401
)
