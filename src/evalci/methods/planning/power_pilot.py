"""Pilot estimates for power planning: accuracy, rho and k per group of a table.

The ``*_from_data`` forms of :mod:`evalci.methods.planning.power_analysis` read their designs
from a pilot through :func:`evalci.methods.variance.components.icc`: per group for
independent designs, or for the paired difference of two systems.
"""

from __future__ import annotations

import numpy as np

from evalci._base.text import as_written
from evalci._base.validate import as_columns, check_number
from evalci.methods.planning.power_design import _z_alpha, _z_power
from evalci.methods.variance import icc


def _pilot(data, value, cluster, by, system, pair, successes, trials):
    """Components per group (independent) or per by-group of the pair (paired)."""
    if pair is not None:
        if system is None:
            raise ValueError(
                "`pair` needs `system=`: name the column holding the systems, e.g. "
                "system='system', pair=('direct', 'cot')."
            )
        try:
            a, b = pair
        except (TypeError, ValueError):
            raise ValueError(
                f"`pair` must be a tuple (a, b); got {as_written(pair)}."
            ) from None
        comp = icc(
            data,
            value,
            cluster,
            by=by,
            system=system,
            pairs=[(a, b)],
            successes=successes,
            trials=trials,
        )
        by_cols = as_columns(by, "by")
        base = comp[(comp["kind"] == "system") & (comp[system] == a)]
        diff = comp[comp["kind"] == "difference"].reset_index(drop=True)
        if by_cols:
            base = diff[by_cols].merge(base, on=by_cols, how="left")
        p1 = base["mean"].to_numpy()
        return diff, by_cols + [system], p1
    comp = icc(
        data, value, cluster, by=by, system=system, successes=successes, trials=trials
    )
    cols = as_columns(by, "by") + ([system] if system else [])
    return comp, cols, comp["mean"].to_numpy()


def _k_column(ks):
    return ks.astype(np.int64) if np.all(ks == np.round(ks)) else ks


def _planned_k(k, comp):
    if k is not None:
        return np.full(len(comp), check_number(k, "k", low=1, hint=" (runs per input)"))
    return np.maximum(1.0, np.round(comp["mean_k"].to_numpy()))


def _test_iv(alpha, alternative, power, k) -> None:
    """Check the test and design arguments of a ``*_from_data`` function."""
    _z_alpha(alpha, alternative)
    _z_power(power)
    if k is not None:
        check_number(k, "k", low=1, hint=" (runs per input)")


def _pilot_frame(data, value, cluster, by, system, pair, successes, trials, k):
    """The pilot's components and a frame of its groups: group columns, rho, k[, sd_diff].

    Also returns the number of group columns and the baseline accuracies.
    """
    comp, cols, p1 = _pilot(data, value, cluster, by, system, pair, successes, trials)
    ks = _planned_k(k, comp)
    out = comp[cols].reset_index(drop=True).copy()
    out["rho"] = comp["rho"].to_numpy()
    out["k"] = _k_column(ks)
    if pair is not None:
        out["sd_diff"] = np.sqrt(
            comp["sigma2_between"] + comp["sigma2_within"]
        ).to_numpy()
    return comp, out, len(cols), p1


def _per_group(out, solve):
    """``solve(i, row)`` for each group whose rho was estimated; NaN for the others."""
    res = np.full(len(out), np.nan)
    for i in range(len(out)):  # one call per group, not per input
        row = out.iloc[i]
        if np.isfinite(row["rho"]):
            res[i] = solve(i, row)
    return res
