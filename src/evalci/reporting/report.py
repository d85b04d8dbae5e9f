"""Seed 002's reporting habit: :func:`report` builds the :class:`Report`.

Seed 002, "A Practical Reporting Habit": for every version comparison report
N and k, each version's score with its interval, the paired gap with its
interval and the minimum meaningful effect; then flag unstable inputs and
state whether the gap's interval excludes 0 and clears the threshold. The
:class:`Report` and its text, Markdown, HTML and frame are in
:mod:`evalci.reporting.report_result`; flaky inputs in
:mod:`evalci.reporting.flaky`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.validate import (
    as_columns,
    check_frame,
    check_option,
)
from evalci.engine import bootstrap as core
from evalci.engine import resampling as _rs
from evalci.engine.keys import keeping_codes
from evalci.methods.compare.decisions import _check_mme
from evalci.methods.compare.paired import compare as _compare
from evalci.methods.compare.systems import _boot_method, _bounded, _paired_rows
from evalci.metrics import Metric
from evalci.reporting.flaky import flaky
from evalci.reporting.report_result import Report

__all__ = ["report"]

_UNITS = ("points", "fraction")


def _check_report_args(data, mme, units):
    """The arguments only :func:`report` takes, and its data; ``mme`` normalised."""
    check_frame(data)
    mme = _check_mme(mme)
    if units is not None:
        check_option(
            units,
            "units",
            _UNITS,
            describe="'points' (percentage points) or 'fraction' (the metric's "
            "own scale)",
        )
    return mme


def _used_rows(
    comparison, data, value, cluster, system, method, missing, dropna, shared
):
    """The validated arguments and the rows ``comparison`` used: ``(args, rows)``.

    ``shared``: the arguments ``report`` passed to :func:`compare` as well.
    Validated by ``compare`` already, so no second warning.
    """
    used = pd.unique(pd.concat([comparison.table.a, comparison.table.b]))
    return _paired_rows(
        data,
        value,
        cluster,
        system,
        used,
        strategy="cluster",
        method=method,
        missing=missing,
        dropna=dropna,
        warn=False,
        **shared,
    )


def _units(units, frame, args, counts: bool) -> tuple[str, bool]:
    """The report's unit (the default for ``None``) and whether scores are 0-1."""
    mean_type = counts or (
        isinstance(args.metric, Metric) and args.metric.name in ("mean", "accuracy")
    )
    proportion = bool(mean_type and _bounded(frame, args))
    if units is None:
        units = "points" if proportion else "fraction"
    elif units == "points" and not proportion:
        raise ValueError(
            "`units`='points' (percentage points) needs a score on a 0-1 scale "
            "(accuracy, a pass rate, a counts table); this metric is not one, so "
            "pass units='fraction'."
        )
    return units, proportion


def _runs(frame, system, input_cols, trials) -> pd.DataFrame:
    """Runs per input of every system: ``k_min``, ``k_mean``, ``k_max``.

    ``trials``: the runs column of a counts table (else one row is one run).
    """
    cell = frame.groupby([system, *input_cols])
    k = (cell[trials].sum() if trials is not None else cell.size()).groupby(level=0)
    runs = pd.DataFrame({"k_min": k.min(), "k_mean": k.mean(), "k_max": k.max()})
    return runs.astype({"k_min": np.int64, "k_max": np.int64})


def _flaky_table(frame, args, system, input_cols, successes, trials):
    """:func:`flaky` per system; empty when the value is not a numeric score."""
    if successes is not None:
        return flaky(
            frame, None, input_cols, by=system, successes=successes, trials=trials
        )
    y = frame[args.value]
    if pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return flaky(frame, args.value, input_cols, by=system)
    return pd.DataFrame(
        {
            system: [],
            **{c: [] for c in input_cols},
            "n_runs": [],
            "flaky": [],
            "share": [],
            "pass_rate": [],
        }
    )


@keeping_codes  # compare and the rows it used code the key columns once
def report(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    system: str = "system",
    *,
    baseline=None,
    pairs=None,
    mme: float | None = None,
    metric="mean",
    method: str = "percentile",
    adjust: str | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    strata=None,
    weight: str = "input",
    missing: str = "raise",
    dropna: bool = False,
    rng=None,
    max_flaky: int = 5,
    units: str | None = None,
    successes: str | None = None,
    trials: str | None = None,
    input=None,
) -> Report:
    """The comparison report of seed 002's reporting habit.

    Scores and gaps come from the same draws of inputs (one seed) and the
    same rows (after ``dropna`` and ``missing``), so the report is internally
    consistent. Parameters as in :func:`evalci.compare`, plus ``units`` and
    ``max_flaky``.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table: one row per (input, run, system); or a counts table with
        ``successes=`` and ``trials=``.
    value, cluster : str
        Outcome column and input column, as in :func:`evalci.compare`.
    system : str
        Column naming the system (default ``"system"``).
    baseline : optional
        Compare every other system against this one (gap = other - baseline).
    pairs : list of (a, b), optional
        The pairs to compare (gap = b - a). Default: all pairs, in sorted order.
    mme : float, optional
        Minimum meaningful effect, on the metric's scale (0.02 = 2 points): a
        positive finite number. Without it the report can only say whether a
        gap is distinguishable from noise.
    metric : str, Metric or callable
        As in :func:`evalci.bootstrap` (default ``"mean"``).
    method : {'percentile', 'basic', 'bca', 'normal', 'clt'}
        Interval of the gaps, as in :func:`evalci.compare`; the scores use the
        same bootstrap method (percentile for ``"clt"``).
    adjust : {None, 'bonferroni', 'holm'}
        Multiplicity adjustment of the gaps, as in :func:`evalci.compare`.
    confidence_level : float
        In (0, 1); default 0.95.
    n_resamples : int
        Bootstrap replicates for the scores and the gaps (default 10,000).
    strata : str, optional
        Column constant within each input; inputs are drawn within strata.
    weight : {'input', 'run'}
        ``"input"`` (default): each input counts equally; ``"run"`` pools runs.
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing sample or a missing input means, as in
        :func:`evalci.compare`; under ``"bounds"`` each score is bounded as
        by :func:`evalci.cluster_ci` and each gap as by ``compare``.
        Whenever something is missing the report says what, per system
        ("scored 183 of 200 runs; 17 errored").
    dropna : bool
        Deprecated: ``dropna=True`` is ``missing="drop"``.
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Seed (SPEC 7); the scores and the gaps share its draws.
    units : {'points', 'fraction'}, optional
        The one unit every effect is printed in (stated once, at the top):
        percentage points (``0.02`` -> ``2.0``) or the metric's own scale.
        Default: points for a score on a 0-1 scale (accuracy, pass rates,
        counts tables), else fraction. ``mme`` is always passed on the
        metric's scale (0.02 = 2 points).
    max_flaky : int
        How many of the flakiest inputs to name.
    successes, trials : str, optional
        A counts table (one row per input and system), as in :func:`compare`.
    input : str or list of str, optional
        Inputs nested in the resampled ``cluster``, as in :func:`compare`.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> rep = df.evalci.report("correct", cluster="input_id", mme=0.02,
    ...                        n_resamples=2000, rng=0)
    >>> print(rep.to_text().splitlines()[2])
    1. Inputs N = 198; runs per input openai/gpt-5-nano-2025-08-07: k=5, openai/gpt-5.4-mini-2026-03-17: k=5
    """
    mme = _check_report_args(data, mme, units)
    cluster_cols = as_columns(cluster, "cluster")
    root = _rs.seed_sequence(rng)
    # what the comparison, its rows and the scores share
    shared = dict(
        metric=metric,
        strata=strata,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        weight=weight,
        successes=successes,
        trials=trials,
        input=input,
    )
    comparison = _compare(
        data,
        value,
        cluster_cols,
        system,
        baseline=baseline,
        pairs=pairs,
        method=method,
        mme=mme,
        adjust=adjust,
        missing=missing,
        dropna=dropna,
        rng=root,
        **shared,
    )
    args, rows = _used_rows(
        comparison, data, value, cluster_cols, system, method, missing, dropna, shared
    )
    input_cols = list(args.input) or cluster_cols  # the unit runs are counted in
    counts = successes is not None
    # "bounds": each score bounded too; the tables read the scored runs
    frame = rows.systems
    scored = frame[frame[value].notna()] if rows.bounds else frame
    units, proportion = _units(units, scored, args, counts)
    return Report(
        scores=_scores(frame, value, cluster_cols, system, method, root, rows, shared),
        comparison=comparison,
        runs=_runs(scored, system, input_cols, trials if counts else None),
        flaky=_flaky_table(scored, args, system, input_cols, successes, trials),
        n_inputs=int(scored.groupby(input_cols).ngroups),
        mme=mme,
        value=f"{successes}/{trials}" if counts else str(value),
        units=units,
        max_flaky=max_flaky,
        metric=comparison.metric,
        proportion=proportion,
    )


def _scores(frame, value, cluster_cols, system, method, root, rows, shared):
    """Each system's score with its interval, on the draws the gaps share
    (``root``); under ``missing="bounds"`` bounded as by :func:`cluster_ci`."""
    return core.cluster_ci(
        frame,
        value,
        cluster_cols,
        by=system,
        method=_boot_method(method),
        rng=root,
        missing="bounds" if rows.bounds else "raise",
        **shared,
    )
