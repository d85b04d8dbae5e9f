"""A pilot table read for variance components: checked arguments, per-row
outcomes, keys as codes.

:func:`source_iv` validates the table arguments every ``*_from_data``
function shares (a 0/1 or score column, or ``successes``/``trials``
counts); :func:`row_outcomes` gives each row's weight ``n``, sum ``S`` and sum
of squares ``Q``; :func:`table_codes` the input, group and system codes;
:func:`cell_sums` sums weights per cell; :func:`group_frame` rebuilds the
group columns. :mod:`evalci.methods.variance.components` estimates the
components from them; the planning family reads pilots through them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
    check_name,
    check_no_missing,
)
from evalci.engine.cube import factorize

__all__ = [
    "Codes",
    "Source",
    "cell_sums",
    "group_frame",
    "row_outcomes",
    "source_iv",
    "table_codes",
]


# ================================================================ the pilot table
@dataclass(frozen=True)
class Source:
    """Normalised description of where the outcomes are in the table."""

    value: str | None
    cluster: list[str]
    by: list[str]
    system: str | None
    successes: str | None
    trials: str | None

    @property
    def counts(self) -> bool:
        return self.successes is not None


def source_iv(data, value, cluster, by, system, successes, trials) -> Source:
    """Validate the table arguments shared by every ``*_from_data`` function."""
    check_frame(data)
    if (successes is None) != (trials is None):
        raise ValueError(
            "`successes` and `trials` go together: name both count columns, e.g. "
            "successes='n_correct', trials='n_runs'."
        )
    if successes is not None and value is not None:
        raise ValueError(
            "pass either `value` (one row per run) or `successes`/`trials` (one row "
            f"per input with counts), not both; got value={as_written(value)}."
        )
    if successes is None and value is None:
        raise ValueError(
            "`value` is required: name the outcome column (e.g. value='correct'), or "
            "pass successes='n_correct', trials='n_runs' for a counts table."
        )
    if value is not None:
        check_name(value, "value")
    cluster = as_columns(cluster, "cluster", allow_none=True)
    if not cluster:
        raise ValueError(
            "`cluster` is required: name the column that identifies inputs, e.g. "
            "cluster='input_id'."
        )
    by = as_columns(by, "by")
    if system is not None:
        check_name(system, "system")
    for name, cols in (
        ("value", [value] if value else []),
        ("cluster", cluster),
        ("by", by),
        ("system", [system] if system else []),
        ("successes", [successes] if successes else []),
        ("trials", [trials] if trials else []),
    ):
        check_columns(data, cols, name)
    shared = set(cluster) & (set(by) | ({system} if system else set()))
    if shared:
        raise ValueError(
            f"`cluster` column {as_written(sorted(shared)[0])} is also a group (`by`/`system`): "
            "variance components need several inputs per group."
        )
    if system is not None and system in by:
        raise ValueError(
            f"`system` column {as_written(system)} is also in `by`; list it once."
        )
    return Source(value, cluster, by, system, successes, trials)


def _counts(data, src: Source):
    """Successes ``c`` and trials ``n`` as floats: whole, non-negative, c <= n, n >= 1."""
    out = []
    for name, col in (("successes", src.successes), ("trials", src.trials)):
        check_finite(data, [col], name)
        x = data[col]
        if not pd.api.types.is_numeric_dtype(x) or x.isna().any():
            raise ValueError(
                f"`{name}` column {as_written(col)} must hold numbers without missing values."
            )
        x = x.to_numpy(dtype=float)
        if (x < 0).any() or not np.all(x == np.round(x)):
            raise ValueError(
                f"`{name}` column {as_written(col)} must hold non-negative whole counts."
            )
        out.append(x)
    c, n = out
    if (n < 1).any():
        raise ValueError(
            f"`trials` column {as_written(src.trials)} has {int((n < 1).sum())} rows with no "
            "runs; drop them first."
        )
    if (c > n).any():
        raise ValueError(
            f"`successes` column {as_written(src.successes)} exceeds `trials` "
            f"{as_written(src.trials)} in {int((c > n).sum())} rows."
        )
    return c, n


def row_outcomes(data, src: Source):
    """Per-row weights ``n``, sums ``S`` and sums of squares ``Q`` as float arrays.

    For 0/1 outcomes summarised as counts, ``c`` successes out of ``n`` runs
    are sufficient: sum y = sum y^2 = c, so the table is never expanded.
    """
    if src.counts:
        c, n = _counts(data, src)
        return n, c, c
    y = data[src.value]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(
            f"`value` column {as_written(src.value)} is not numeric (dtype {y.dtype}); variance "
            "components need 0/1 correctness or a numeric score."
        )
    check_no_missing(
        data,
        src.value,
        "value",
        f"drop those rows (df.dropna(subset=[{as_written(src.value)}])) or fill them",
    )
    check_finite(data, [src.value], "value")
    y = y.to_numpy(dtype=float)
    return np.ones_like(y), y, y * y


@dataclass(frozen=True)
class Codes:
    """Each row's by-group, system and input as integer codes, with their keys."""

    by: np.ndarray
    by_index: pd.Index | None
    system: np.ndarray
    system_index: pd.Index | None
    cluster: np.ndarray
    cluster_index: pd.Index

    @property
    def nb(self) -> int:
        return 1 if self.by_index is None else len(self.by_index)

    @property
    def ns(self) -> int:
        return 1 if self.system_index is None else len(self.system_index)

    @property
    def nc(self) -> int:
        return len(self.cluster_index)


def _key_codes(data, cols, name):
    """Codes of the key ``cols``, or code 0 for every row (and no keys) without any."""
    if cols:
        return factorize(data, cols, name)
    return np.zeros(len(data), np.int64), None


def table_codes(data, src: Source) -> Codes:
    by, by_index = _key_codes(data, src.by, "by")
    system, system_index = _key_codes(
        data, [src.system] if src.system else [], "system"
    )
    cluster, cluster_index = factorize(data, src.cluster, "cluster")
    return Codes(by, by_index, system, system_index, cluster, cluster_index)


def cell_sums(cell, *weights):
    """The distinct ``cell`` codes (sorted) and each of ``weights`` summed per cell."""
    ucell, inv = np.unique(cell, return_inverse=True)
    return ucell, [np.bincount(inv, weights=w) for w in weights]


# ======================================================================= ANOVA
def group_frame(by_index, by_codes, by_cols):
    """Group columns for rows with by-codes ``by_codes``."""
    if not by_cols:
        return pd.DataFrame(index=range(len(by_codes)))
    keys = (
        by_index.to_frame(index=False)
        if isinstance(by_index, pd.MultiIndex)
        else pd.DataFrame({by_cols[0]: by_index})
    )
    return keys.iloc[by_codes].reset_index(drop=True)
