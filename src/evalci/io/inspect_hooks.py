"""evalci inside an Inspect AI run: an early-stopping manager and a metric.

:class:`SequentialStopping` is an Inspect early-stopping manager (the
``EarlyStopping`` protocol of ``inspect_ai.util._early_stopping``, given as
``Task(early_stopping=...)``): it stops a task's remaining samples once the
anytime-valid confidence sequence of its mean score
(:func:`evalci.testing.confidence_sequence`) is narrower than a target width
or lies wholly above or below a threshold. :func:`evalci_interval` is an
Inspect ``@metric`` that puts evalci's cluster-robust interval over epochs
(:func:`evalci.analytic_ci`, ``cluster="input"``) into the log's header.

This module imports ``inspect_ai`` only inside the functions that need it,
so it (and its public namespace :mod:`evalci.inspect`) imports without it;
``import evalci`` imports neither.
"""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from evalci._base.validate import check_level, check_number
from evalci.engine.bootstrap import cluster_ci
from evalci.io.inspect_rows import _inspect_float
from evalci.methods.analytic import analytic_ci
from evalci.methods.testing import confidence_sequence

__all__ = ["SequentialStopping", "evalci_interval"]


class SequentialStopping:
    """Stop an Inspect task's samples once its score's confidence sequence decides.

    An Inspect early-stopping manager: pass it as
    ``Task(early_stopping=SequentialStopping(...))`` (or ``task_with``). The
    unit is the sample: its score is the mean of its epochs' scores (values
    mapped as Inspect's ``value_to_float`` maps them), counted once all its
    epochs are in. After each unit the two-sided confidence sequence of the
    mean (Howard et al. 2021, eq. (14), through
    :func:`evalci.testing.confidence_sequence`, ``sigma`` half the length of
    ``bounds``) is updated; the task stops, every (sample, epoch) not yet
    scheduled being skipped with an ``EarlyStop``, as soon as the interval,
    cut to ``bounds``, is narrower than ``width`` (``"narrow"``) or lies
    wholly above ``threshold`` (``"above"``) or below it (``"below"``).
    Because the sequence covers the mean at every look at once, the chance
    that a decision is wrong (``"above"`` when the mean is at or below the
    threshold, or the reverse), however often it is looked at, is at most
    ``alpha``.

    Parameters
    ----------
    width : float, optional
        Stop when the interval's width (``high - low``) is at most this.
    threshold : float, optional
        Stop when the interval lies wholly above or below it. At least one
        of ``width`` and ``threshold`` is given.
    alpha : float, default 0.05
        The chance that the sequence ever misses the mean.
    scorer : str, optional
        The scorer whose values are used (default: the first the sample
        reports). A dict-valued score needs ``key``.
    key : str, optional
        The key of a dict-valued score.
    bounds : tuple of float, default (0, 1)
        The range the scores lie in; a value outside it raises.
    planned : int, optional
        The number of samples where the sequence is tightest (default: the
        task's number of samples). Any value keeps the guarantee.

    Attributes
    ----------
    decision : str or None
        ``"above"``, ``"below"``, ``"narrow"``, or None while undecided.
    reason : str or None
        The text each ``EarlyStop`` carries (``read_inspect`` puts it in
        ``stopped_early``).

    Notes
    -----
    The guarantee is for the mean of the population the samples are drawn
    from, independently: shuffle the dataset (``shuffle=True``) so that its
    order says nothing about the scores, and keep the units' completion
    order blind to their scores (``max_samples=1`` makes it the schedule's).
    A sample some epoch of which errors is never a unit. Inspect runs all
    samples of epoch 1 before those of epoch 2, so with several epochs the
    first unit completes in the last epoch and only that epoch's samples
    can be saved. One manager serves one task at a time (``start_task``
    starts afresh).

    Examples
    --------
    >>> import asyncio
    >>> from evalci.inspect import SequentialStopping
    >>> stop = SequentialStopping(threshold=0.5, alpha=0.05)
    >>> _ = asyncio.run(stop.start_task(None, list(range(200)), 1))
    >>> stop.update(1.0, 30)
    >>> stop.decision, stop.units
    ('above', 17)
    >>> print(stop.reason)
    evalci: the 95% confidence sequence [0.5126, 1] lies above 0.5 after 17 samples
    """

    def __init__(
        self,
        *,
        width: float | None = None,
        threshold: float | None = None,
        alpha: float = 0.05,
        scorer: str | None = None,
        key: str | None = None,
        bounds: tuple[float, float] = (0.0, 1.0),
        planned: int | None = None,
    ) -> None:
        if width is None and threshold is None:
            raise ValueError(
                "give `width=` (stop when the interval is this narrow), "
                "`threshold=` (stop when it is wholly above or below it), or both."
            )
        self.width = None if width is None else check_number(width, "width", low=0)
        self.threshold = (
            None if threshold is None else check_number(threshold, "threshold")
        )
        self.alpha = check_number(
            alpha, "alpha", low=0, high=1, low_open=True, high_open=True
        )
        lo, hi = (check_number(b, "bounds") for b in bounds)
        if not lo < hi:
            raise ValueError(
                f"`bounds` must be (low, high) with low < high; got {bounds}."
            )
        self.bounds = (lo, hi)
        self.planned = (
            None if planned is None else check_number(planned, "planned", low=1)
        )
        self.scorer, self.key = scorer, key
        self._reset(1)

    def _reset(self, epochs: int) -> None:
        self.epochs, self.units, self.total = epochs, 0, 0.0
        self.decision: str | None = None
        self.reason: str | None = None
        self.interval = (math.nan, math.nan, math.nan)
        self._open: dict[str, list[float]] = {}
        self._stopped: list[tuple[str, int]] = []
        self._after = 0
        self._n = 0

    # -- the EarlyStopping protocol ------------------------------------------
    async def start_task(self, task: Any, samples: list, epochs: int) -> str:
        """Start afresh for a task (Inspect calls it before the first sample).

        Parameters
        ----------
        task : inspect_ai.log.EvalSpec
            The task's spec (not read).
        samples : list
            The task's samples; their number is the default ``planned``.
        epochs : int
            How many times each sample runs: a unit is complete with them all.

        Returns
        -------
        str
            The manager's name, ``"evalci.SequentialStopping"``.
        """
        self._reset(int(epochs))
        self._n = len(samples)
        return "evalci.SequentialStopping"

    async def schedule_sample(self, id: str | int, epoch: int):
        """Whether to run a (sample, epoch): None to run it, else its stop.

        Parameters
        ----------
        id : str or int
            The sample's id.
        epoch : int
            The epoch (from 1).

        Returns
        -------
        inspect_ai.util.EarlyStop or None
            Once decided, a stop carrying :attr:`reason`.
        """
        if self.decision is None:
            return None
        self._stopped.append((str(id), int(epoch)))
        try:
            from inspect_ai.util._early_stopping import EarlyStop
        except ImportError:  # driven by hand, without Inspect: the same fields
            return SimpleNamespace(
                id=id, epoch=epoch, reason=self.reason, metadata=None
            )
        return EarlyStop(id=id, epoch=epoch, reason=self.reason)

    async def complete_sample(self, id: str | int, epoch: int, scores: dict) -> None:
        """Record one epoch's score; a sample with all its epochs is a unit.

        Parameters
        ----------
        id : str or int
            The sample's id.
        epoch : int
            The epoch (from 1).
        scores : dict
            Scorer name -> Inspect ``SampleScore``; the value of ``scorer``
            (and ``key``) is used.
        """
        if self.decision is not None:
            self._after += 1
            return
        runs = self._open.setdefault(str(id), [])
        runs.append(self._value(scores, id, epoch))
        if len(runs) == self.epochs:
            del self._open[str(id)]
            self.update(float(np.mean(runs)))

    async def complete_task(self) -> dict[str, Any]:
        """What the log records under ``results.early_stopping.metadata``.

        Returns
        -------
        dict
            ``decision``, ``reason``, ``units``, the interval (``estimate``,
            ``low``, ``high``: at the stop, else after the last unit), the
            settings, ``stopped`` (the (sample, epoch) pairs skipped) and
            ``completed_after_stop`` (those already running).
        """
        estimate, low, high = self.interval
        return {
            "decision": self.decision,
            "reason": self.reason,
            "units": self.units,
            "estimate": None if math.isnan(estimate) else estimate,
            "low": None if math.isnan(low) else low,
            "high": None if math.isnan(high) else high,
            "alpha": self.alpha,
            "width": self.width,
            "threshold": self.threshold,
            "bounds": list(self.bounds),
            "planned": self._planned(),
            "stopped": len(self._stopped),
            "completed_after_stop": self._after,
        }

    # -- the sequence ---------------------------------------------------------
    def _planned(self) -> float:
        return float(self.planned or max(self._n, 1))

    def update(self, value: float, count: int = 1) -> None:
        """Add ``count`` units of score ``value`` and decide if the sequence has.

        What :meth:`complete_sample` calls for each complete unit; a unit
        after the decision is not counted.

        Parameters
        ----------
        value : float
            A unit's score (the mean of its epochs), within ``bounds``.
        count : int, default 1
            How many units of that score.
        """
        lo, hi = self.bounds
        if not lo <= value <= hi:
            raise ValueError(
                f"a sample's score {value!r} lies outside `bounds`={self.bounds}; "
                "give the range the scores lie in."
            )
        for _ in range(count):
            if self.decision is not None:
                return
            self.units += 1
            self.total += value
            self._decide()

    def _decide(self) -> None:
        lo, hi = self.bounds
        mean, half = confidence_sequence(
            self.total, self.units, (hi - lo) / 2, self.alpha, self._planned()
        )
        mean, half = float(mean), float(half)
        low, high = max(mean - half, lo), min(mean + half, hi)
        self.interval = (mean, low, high)
        t = self.threshold
        if t is not None and low > t:
            self.decision, how = "above", f"lies above {t:g}"
        elif t is not None and high < t:
            self.decision, how = "below", f"lies below {t:g}"
        elif self.width is not None and high - low <= self.width:
            self.decision, how = "narrow", f"is narrower than {self.width:g}"
        else:
            return
        self.reason = (
            f"evalci: the {1 - self.alpha:.0%} confidence sequence "
            f"[{low:.4g}, {high:.4g}] {how} after {self.units} samples"
        )

    def _value(self, scores: dict, id, epoch) -> float:
        where = f"sample {id!r} epoch {epoch}"
        if not scores:
            raise ValueError(f"{where}: no score to stop on.")
        name = self.scorer if self.scorer is not None else next(iter(scores))
        if name not in scores:
            raise ValueError(
                f"`scorer`={name!r}: {where} has scores from {sorted(scores)}."
            )
        value = scores[name].score.value
        if isinstance(value, dict):
            if self.key is None or self.key not in value:
                raise ValueError(
                    f"{where}: {name!r} gives a dict score {sorted(value)}; "
                    "pass `key=` naming the one to stop on."
                )
            value = value[self.key]
        return _inspect_float(value, where)


def _interval(sample_ids: list, values: list[float], confidence_level: float,
              method: str = "clt", n_resamples: int = 2000, rng: int = 0) -> dict:
    """evalci's interval of the mean of per-sample values (already epoch means)."""
    frame = pd.DataFrame({"input": list(sample_ids), "run": 1})
    frame["value"] = np.asarray(values, dtype=float)
    if len(frame) < 2:
        return {
            "estimate": float(frame["value"].mean()),
            "low": math.nan,
            "high": math.nan,
        }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "bootstrap":
            r = cluster_ci(frame, "value", "input", confidence_level=confidence_level,
                           n_resamples=n_resamples, rng=rng)
        else:
            r = analytic_ci(
                frame, "value", cluster="input", confidence_level=confidence_level
            )
    return {"estimate": float(r.estimate), "low": float(r.low), "high": float(r.high)}


def evalci_interval(confidence_level: float = 0.95, *, method: str = "clt",
                    n_resamples: int = 2000, rng: int = 0):
    """An Inspect metric: evalci's interval of the mean score, clustered over epochs.

    Use it in a scorer's or task's metrics (``metrics=[evalci_interval()]``):
    the log's header gets three metric values, ``estimate``, ``low`` and
    ``high``. The metric sees the reduced scores (one per sample: Inspect's
    epoch reducer, the mean by default), so the interval is
    :func:`evalci.analytic_ci` (``method="clt"``, ``cluster="input"``,
    ``weight="input"``): the mean of the per-sample means, +- the normal
    quantile times ``s / sqrt(N)``, ``s`` their SD (``ddof=1``) over the
    ``N`` samples. On the same log, ``read_inspect`` and ``analytic_ci(df,
    scorer, cluster="input", missing="drop")`` give the same numbers.
    ``method="bootstrap"``: :func:`evalci.cluster_ci` on the per-sample
    means (percentile, ``n_resamples``, seed ``rng``), equal to
    ``cluster_ci(read_inspect(log), scorer, "input", rng=rng, ...)`` on the
    log's rows (the mean of a sample's epochs is what the cluster bootstrap
    resamples).

    Parameters
    ----------
    confidence_level : float, default 0.95
        The interval's confidence level.
    method : {'clt', 'bootstrap'}
        The analytic interval (default) or the cluster bootstrap.
    n_resamples, rng : int
        ``"bootstrap"`` only: replicates and seed (fixed, so the log's
        numbers are reproducible).

    Returns
    -------
    inspect_ai.scorer.Metric
        Registered as ``evalci_interval``. Needs ``inspect_ai``.

    Notes
    -----
    With one sample the bounds are NaN. Scores Inspect could not reduce
    (NaN) are left out by Inspect before the metric sees them.
    """
    from inspect_ai.scorer import SampleScore, metric

    level = check_level(confidence_level)

    if method not in ("clt", "bootstrap"):
        raise ValueError(f"`method` must be 'clt' or 'bootstrap', not {method!r}.")

    @metric(name="evalci_interval", scores="reduced")
    def _evalci_interval(confidence_level: float = level):
        def compute(scores) -> dict:
            ids = [s.sample_id for s in scores]
            values = [s.score.as_float() for s in scores]
            return _interval(ids, values, confidence_level, method, n_resamples, rng)

        # Inspect passes SampleScores to a metric whose argument says so
        compute.__annotations__["scores"] = list[SampleScore]
        return compute

    return _evalci_interval(confidence_level=level)
