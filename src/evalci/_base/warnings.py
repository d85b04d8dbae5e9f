"""Warning classes: warn and return what is honest; raise on misuse."""

from __future__ import annotations

import os
import sys
import warnings


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
    """Too few inputs (or clusters) for their resampling to be informative."""


class FewResamplesWarning(EvalciWarning):
    """Too few resamples for the requested level: the endpoints sit in the extremes."""


class PooledGroupsWarning(EvalciWarning):
    """Rows of one input differ in a system-like column: systems are being pooled."""


# the evalci package folder (this file is evalci/_base/warnings.py)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

#: Fewer inputs than this (resampled one by one) draw a FewClustersWarning.
FEW_INPUTS = 10
#: Fewer clusters than this, when clusters sit above the input (e.g. repos).
FEW_CLUSTERS = 30


def warn(message: str, category: type[Warning]) -> None:
    """Warn at the caller's line: the first frame outside evalci.

    Every public path (functions, both accessors, Dask) reaches the user's
    code at a different depth, so a fixed ``stacklevel`` is wrong on some of
    them; walking the stack is right on all.
    """
    frame = sys._getframe(1)
    level = 2  # stacklevel=2 is the caller of this function
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level - 1 if frame is None else level)
