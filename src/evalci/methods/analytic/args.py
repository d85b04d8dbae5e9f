"""Checks and normalises the arguments and the outcome column of :func:`evalci.analytic_ci`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.messages import _FRAME_HINT, _no_missing
from evalci._base.text import as_written
from evalci._base.typing import WEIGHTS
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
    check_level,
    check_name,
    check_option,
)
from evalci.engine.table import check_magnitude

#: Canonical method names of :func:`analytic_ci`.
ANALYTIC_METHODS: tuple[str, ...] = (
    "clt",
    "wilson",
    "clopper-pearson",
    "jeffreys",
    "wald",
    "fleiss-cohen-everitt",
    "rule-of-three",
    "clustered-wilson",
)
_ALIASES = {
    "exact": "clopper-pearson",
    "fce": "fleiss-cohen-everitt",
    "wilson-clustered": "clustered-wilson",
}
# methods that use the cluster-robust variance over inputs (any k, N >= 2)
_CLUSTERED_METHODS = ("clt", "clustered-wilson")
_PROPORTION_METHODS = ("wilson", "clopper-pearson", "jeffreys", "wald")
# large-sample (normal) intervals: unreliable with fewer than FEW_INPUTS inputs
_NORMAL_METHODS = ("clt", "wald", "fleiss-cohen-everitt")
# intervals that collapse to a point when every outcome is 0 (or 1)
_COLLAPSING_METHODS = ("clt", "wald")


@dataclass(frozen=True)
class _Args:
    value: str
    cluster: list[str]
    by: list[str]
    method: str
    confidence_level: float
    truth: str | None
    weight: str


def _analytic_iv(
    data, value, cluster, method, by, confidence_level, truth, weight
) -> _Args:
    """Validate and normalise the arguments of :func:`analytic_ci`."""
    check_frame(data, _FRAME_HINT)
    canonical = _ALIASES.get(method, method) if isinstance(method, str) else method
    check_option(
        canonical,
        "method",
        ANALYTIC_METHODS,
        describe=f"one of {ANALYTIC_METHODS} (aliases: 'exact' for "
        "'clopper-pearson', 'fce' for 'fleiss-cohen-everitt')",
    )
    check_option(
        weight,
        "weight",
        WEIGHTS,
        describe="'input' (each input counts equally) or 'run' (pool runs)",
    )
    level = check_level(confidence_level)
    check_name(value, "value")
    cluster = as_columns(cluster, "cluster")
    by = as_columns(by, "by")
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, by, "by")
    if canonical == "fleiss-cohen-everitt":
        if truth is None:
            raise ValueError(
                "`truth` is required for method='fleiss-cohen-everitt' (Cohen's "
                "kappa): name the column of true labels; `value` holds the predicted "
                "labels."
            )
        check_name(truth, "truth")
        check_columns(data, [truth], "truth")
    elif truth is not None:
        raise ValueError(
            f"`truth` is only used by method='fleiss-cohen-everitt' (Cohen's kappa), "
            f"not method={as_written(canonical)}; for accuracy score the labels first, e.g. "
            f"correct = (df[{as_written(value)}] == df[{as_written(truth)}]).astype(int)."
        )
    overlap = set(cluster) & set(by)
    if overlap:
        raise ValueError(
            f"`by` and `cluster` share column {as_written(sorted(overlap)[0])}: one interval per "
            "input is not an interval over inputs; group by a column that spans "
            "several inputs."
        )
    return _Args(
        value=value,
        cluster=cluster,
        by=by,
        method=canonical,
        confidence_level=level,
        truth=truth,
        weight=weight,
    )


def _numeric_values(frame: pd.DataFrame, args: _Args) -> np.ndarray:
    y = frame[args.value]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(
            f"`value` column {as_written(args.value)} is not numeric (dtype {y.dtype}); "
            f"method={as_written(args.method)} needs numbers. For predicted labels use "
            "method='fleiss-cohen-everitt' with truth=..., or score them first, e.g. "
            "(df.pred == df.label).astype(int)."
        )
    if args.method in (*_PROPORTION_METHODS, "rule-of-three", "clustered-wilson"):
        bad = ~y.isin([0, 1])
        if bad.any():
            raise ValueError(
                f"`value` column {as_written(args.value)} must hold only 0/1 for "
                f"method={as_written(args.method)} (a binomial proportion); found "
                f"{as_written(y[bad].iloc[0])} in {int(bad.sum())} rows. For scores use "
                "method='clt'."
            )
    values = y.to_numpy(dtype=float)
    check_magnitude(values[:, None], args.value, f"method={as_written(args.method)}")
    return values


def _outcome_iv(frame: pd.DataFrame, args: _Args):
    """Refuse empty tables and missing or infinite outcomes; the values (None for kappa)."""
    if len(frame) == 0:
        raise ValueError("`data` has no rows.")
    _no_missing(
        frame, args.value, "value", "fill them (e.g. count a missing answer as 0)"
    )
    check_finite(frame, [args.value], "value")
    if args.method == "fleiss-cohen-everitt":
        _no_missing(frame, args.truth, "truth", "fill them")
        check_finite(frame, [args.truth], "truth")
        return None
    return _numeric_values(frame, args)
