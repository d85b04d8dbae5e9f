"""Warning classes: warn and return what is honest; raise on misuse."""

from __future__ import annotations


class EvalciWarning(UserWarning):
    """Base class of every warning evalci emits."""


class DegenerateDataWarning(EvalciWarning):
    """The bootstrap distribution (or the data) has no spread.

    Typical cause: every outcome is 1 (or 0), so every resample gives the same
    score and the interval collapses to a point.
    """


class EstimandWarning(EvalciWarning):
    """The chosen strategy estimates a different quantity than single-run accuracy."""


class ClusteringIgnoredWarning(EvalciWarning):
    """Rows that share an input are being treated as independent."""


class FewClustersWarning(EvalciWarning):
    """A stratum or group has too few inputs for its resampling to be informative."""
