"""Warning classes: warn and return what is honest; raise on misuse."""

from __future__ import annotations

import os
import sys
import threading
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


class SlowMetricWarning(EvalciWarning):
    """A callable metric computes what a Metric would resample far faster.

    A callable is called on gathered rows once per resample; one that
    returns the mean of the value column is ``metric="mean"``, and any
    function of column totals is :func:`evalci.metrics.from_sums`.
    """


class MissingDataWarning(EvalciWarning):
    """Samples with a missing value were left out (``missing="drop"``).

    The score is then that of the scored samples only, which is not the score
    of the attempted ones when what goes missing is not random (e.g. the hard
    inputs error or hit a limit). ``missing="bounds"`` assumes nothing.
    """


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


def caller_location():
    """``(filename, lineno, module)`` of the first frame outside evalci."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:  # pragma: no cover - called from evalci itself only
        return None
    return frame.f_code.co_filename, frame.f_lineno, frame.f_globals.get("__name__")


class caller_warnings:  # noqa: N801 - used like a function: `with caller_warnings():`
    """Re-emit the evalci warnings raised inside the block at the user's line.

    Code inside may warn with any ``stacklevel``; on leaving the block each
    :class:`~evalci.EvalciWarning` is emitted again, through the user's
    filters, at the first frame outside evalci (or at ``where``, a
    :func:`caller_location` taken earlier: a Dask task runs when the user
    computes, far from the line that built it). Other warnings are passed on
    unchanged. A class, not ``contextlib.contextmanager``: the frame that
    re-emits must sit in evalci for the stack walk to skip it.
    """

    #: ``catch_warnings`` swaps process-wide state: two of our Dask tasks
    #: recording at once on two threads would restore each other's state.
    _task_lock = threading.Lock()

    def __init__(self, where=None):
        self.where = where

    def __enter__(self):
        if self.where is not None:
            self._task_lock.acquire()
        try:
            self._cm = warnings.catch_warnings(record=True)
            self.caught = self._cm.__enter__()
            warnings.simplefilter("always", EvalciWarning)
        except BaseException:  # pragma: no cover - defensive
            if self.where is not None:
                self._task_lock.release()
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self._cm.__exit__(exc_type, exc, tb)
        finally:
            if self.where is not None:
                self._task_lock.release()
        if exc_type is None:
            for w in self.caught:
                self._emit(w)
        return False

    def _emit(self, w):
        if not issubclass(w.category, EvalciWarning):
            warnings.warn_explicit(
                w.message, w.category, w.filename, w.lineno, source=w.source
            )
        elif self.where is None:
            warn(str(w.message), w.category)
        else:
            filename, lineno, module = self.where
            warnings.warn_explicit(
                str(w.message), w.category, filename, lineno, module=module
            )
