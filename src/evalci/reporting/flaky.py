"""Flaky inputs: the inputs whose runs disagree, per system (seed 002's
"flag unstable inputs"), from rows or from a counts table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_counts,
    check_counts_args,
    check_finite,
    check_frame,
    check_no_missing,
    check_value,
)
from evalci.engine.cube import factorize

__all__ = ["flaky"]


def _counts_columns(data, successes, trials):
    """Validated (successes, trials) arrays of a counts table."""
    check_columns(data, [successes, trials], "successes/trials")
    for col in (successes, trials):
        check_no_missing(data, col, "successes/trials", "drop or fill those rows")
    check_finite(data, [successes, trials], "successes/trials")
    c, n = check_counts(data[successes], data[trials], successes, trials)
    return c, n


def _row_sums(data, value, successes, trials):
    """Per row: runs, the sum of the value and of its square (checked columns)."""
    if successes is not None or trials is not None:
        check_counts_args(value, successes, trials)
        s1, n = _counts_columns(data, successes, trials)
        return n, s1, s1  # 0/1 runs: y * y = y
    check_value(value)
    check_columns(data, [value], "value")
    check_no_missing(data, value, "value", "drop or fill them")
    y = data[value]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(
            f"`value` column {as_written(value)} must be numeric (0/1 or a score)."
        )
    check_finite(data, [value], "value")
    s1 = y.to_numpy(dtype=float)
    return np.ones_like(s1), s1, s1 * s1


def flaky(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    by=None,
    successes: str | None = None,
    trials: str | None = None,
) -> pd.DataFrame:
    """Per-input pass rate over runs, flagged when runs disagree.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, system]); or a counts table with
        ``successes=`` and ``trials=`` (one row per input[, system]).
    value : str
        0/1 outcome (or a numeric score) per run. Leave out for a counts table.
    cluster : str or list of str
        Column(s) identifying the input.
    by : str or list of str, optional
        Per-group tables (e.g. ``by="system"``).
    successes, trials : str, optional
        Counts table: correct runs and runs per input (e.g. ``"n_correct"``,
        ``"n_runs"``). Runs of 0/1 outcomes are exchangeable, so these are all
        the table needs.

    Returns
    -------
    pandas.DataFrame
        One row per (group, input): ``n_runs``, ``n_correct`` (sum of the
        value), ``pass_rate`` (mean over runs), ``variance`` (run-to-run sample
        variance, ddof=1), ``flaky`` (runs disagree: 0 < pass rate < 1 for 0/1
        values), and ``share``: the input's share of the run-to-run (within-
        input) variance of the group's score, ``(variance_i / k_i) /
        sum_j (variance_j / k_j)``, because the score's within part of the
        variance is ``sum_i s_i^2 / k_i / N^2``. Sorted by group, then by
        ``share`` (largest first): the inputs that make the score wobble come
        first. An input with one run has no measurable run-to-run variation
        (variance 0, never flaky).

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> table = df.evalci.flaky("correct", cluster="input_id", by="system")
    >>> int(table.flaky.sum())
    135
    """
    check_frame(data)
    cluster = as_columns(cluster, "cluster", allow_none=False)
    by = as_columns(by, "by")
    check_columns(data, cluster, "cluster")
    check_columns(data, by, "by")
    n, s1, s2 = _row_sums(data, value, successes, trials)
    keys = by + cluster
    codes, index = factorize(data, keys, "cluster")
    n = np.bincount(codes, weights=n)
    s1 = np.bincount(codes, weights=s1)
    s2 = np.bincount(codes, weights=s2)
    mean = s1 / n
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(n > 1, (s2 - n * mean**2) / (n - 1), 0.0)
    var = np.maximum(var, 0.0)  # rounding
    out = index.to_frame(index=False)
    out["n_runs"] = n.astype(np.int64)
    out["n_correct"] = s1
    out["pass_rate"] = mean
    out["variance"] = var
    out["flaky"] = var > 1e-12
    contrib = var / n
    if by:
        total = out.assign(_c=contrib).groupby(by)["_c"].transform("sum").to_numpy()
    else:
        total = np.full(len(out), contrib.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        out["share"] = np.where(total > 0, contrib / total, 0.0)
    out = out.sort_values(
        by + ["share"], ascending=[True] * len(by) + [False], kind="stable"
    )
    return out.reset_index(drop=True)
