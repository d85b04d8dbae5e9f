"""Argument checks shared by the entry points: numbers, levels, options, frames, columns.

Each check returns the normalised value (a float, an int, a list of column
names) or raises with a message that names the argument and says what to
pass instead. Entry points validate every argument first, then run a short
algorithmic body (the shape of scipy's ``_bootstrap_iv``).
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from evalci._base.text import as_written

__all__ = [
    "as_columns",
    "check_columns",
    "check_finite",
    "check_flag",
    "check_frame",
    "check_integer",
    "check_level",
    "check_n_resamples",
    "check_name",
    "check_no_missing",
    "check_number",
    "check_numbers",
    "check_option",
    "check_scores",
]

#: the fix ``check_frame`` suggests unless told otherwise
FRAME_HINT = (
    "for a DataArray use da.evalci (or evalci.frames.dataarray.to_frame(da) first); for a Dask "
    "DataFrame use ddf.evalci or the functions evalci.bootstrap, cluster_ci, "
    "compare and report"
)


# ===================================================================== numbers
def _is_real(x) -> bool:
    return not isinstance(x, bool) and isinstance(x, numbers.Real)


def check_number(
    x, name, *, low=None, high=None, low_open=False, high_open=False, hint=""
) -> float:
    """``x`` as a finite float, checked against ``[low, high]`` (or open ends).

    ``hint`` follows the requirement in the message, e.g. ``", e.g. 0.05"``.
    """
    try:  # float(): numpy's isfinite refuses ints beyond int64
        finite = _is_real(x) and bool(np.isfinite(float(x)))
    except OverflowError:  # an int beyond float64
        finite = False
    if not finite:
        raise ValueError(
            f"`{name}` must be a finite number{hint}; got {as_written(x)}."
        )
    x = float(x)
    bad = (low is not None and (x < low or (low_open and x == low))) or (
        high is not None and (x > high or (high_open and x == high))
    )
    if bad:
        lo = "" if low is None else ("(" if low_open else "[") + f"{low:g}"
        hi = "" if high is None else f"{high:g}" + (")" if high_open else "]")
        where = f"in {lo or '(-inf'}, {hi or 'inf)'}"
        raise ValueError(f"`{name}` must be {where}{hint}; got {as_written(x)}.")
    return x


def check_integer(x, name, *, low=1, hint="") -> int:
    """``x`` as an int >= ``low`` (a whole float such as 3.0 is accepted)."""
    if not _is_real(x) or not float(x).is_integer() or x < low:
        raise ValueError(
            f"`{name}` must be an integer >= {low}{hint}; got {as_written(x)}."
        )
    return int(x)


def check_numbers(x, name, *, low, low_open=False, high=None, hint="") -> np.ndarray:
    """A number or array of numbers as a float array, every value finite and in range.

    Strings (``"0.5"`` would convert), booleans and objects are refused.
    """
    try:
        raw = np.asarray(x)
        ok = raw.dtype.kind in "iuf"
        arr = raw.astype(float) if ok else None
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(
            f"`{name}` must be a number or an array of numbers{hint}; got {as_written(x)}."
        )
    bad = ~np.isfinite(arr) | (arr < low) | (low_open & (arr == low))
    if high is not None:
        bad |= arr > high
    if bad.any():
        first = arr[bad].reshape(-1)[0]
        rng = f"{'(' if low_open else '['}{low:g}, {'inf)' if high is None else f'{high:g}]'}"
        raise ValueError(f"`{name}` must be in {rng}{hint}; got {as_written(first)}.")
    return arr


def check_scores(x, name, *, fix="") -> np.ndarray:
    """A 1-D array of finite numbers (booleans as 0/1) as a float array.

    Strings, objects (a pandas nullable column with NA included), nested
    lists, NaN and inf are refused, naming ``name`` and the first bad
    position; ``fix`` ends the message about non-finite values (e.g. how to
    drop missing inputs).
    """
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError):  # ragged nested sequences
        raw = np.asarray([None])
    if raw.dtype.kind not in "biuf" or raw.ndim != 1:
        what = f"dtype {raw.dtype}" if raw.ndim == 1 else f"{raw.ndim}-D"
        raise ValueError(
            f"`{name}` must be a 1-D array of numbers (one score per input); got "
            f"{type(x).__name__} ({what})."
        )
    arr = raw.astype(float)
    bad = ~np.isfinite(arr)
    if bad.any():
        at = int(np.argmax(bad))
        raise ValueError(
            f"`{name}` holds {int(bad.sum())} non-finite values (first: "
            f"{float(arr[at])!r} at position {at}); scores must be finite{fix}."
        )
    return arr


def check_level(confidence_level) -> float:
    """``confidence_level`` as a float in (0, 1), or a ValueError that says so."""
    if not _is_real(confidence_level) or not 0 < confidence_level < 1:
        raise ValueError(
            f"`confidence_level` must be a number in (0, 1), e.g. 0.95; got "
            f"{as_written(confidence_level)}."
        )
    return float(confidence_level)


def check_n_resamples(n_resamples, *, minimum: int = 1, hint: str = "") -> int:
    """``n_resamples`` as a positive int, at least ``minimum``, or a ValueError.

    ``minimum=2`` for an interval read from the replicates (one resample has
    no spread: its standard error would be NaN); ``hint`` ends that message,
    e.g. ``" Use 10_000 (the default)."``.
    """
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, numbers.Integral)
        or n_resamples <= 0
    ):
        raise ValueError(
            f"`n_resamples` must be a positive integer, e.g. 10_000; got {as_written(n_resamples)}."
        )
    if n_resamples < minimum:
        raise ValueError(
            f"`n_resamples` must be at least {minimum} for an interval (one "
            f"resample has no spread); got {int(n_resamples)}.{hint}"
        )
    return int(n_resamples)


# ===================================================================== options
def check_option(value, name, choices, *, describe=None):
    """``value`` if it is one of ``choices``; else a ValueError listing them.

    ``describe`` replaces the default ``"one of (...)"`` in the message, to
    say what each choice means.
    """
    if value not in choices:
        what = f"one of {tuple(choices)}" if describe is None else describe
        raise ValueError(f"`{name}` must be {what}, not {as_written(value)}.")
    return value


def check_flag(value, name: str) -> bool:
    """``value`` as a bool if it is True or False (numpy's too); else a TypeError.

    >>> check_flag(np.True_, "paired")
    True
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be True or False, not {as_written(value)}.")
    return bool(value)


# ============================================================ frames, columns
def check_frame(
    data, hint: str = FRAME_HINT, *, name: str = "data", rows: bool = False
) -> None:
    """Refuse anything but a pandas DataFrame with one level of column names.

    ``hint`` says how to get a DataFrame; ``name`` is the argument's name in
    the messages; ``rows=True`` also refuses a frame with no rows (for entry
    points that would otherwise fail inside numpy on an empty array).
    MultiIndex columns are refused: ``"v" in df.columns`` is then true for a
    first-level label, and ``df["v"]`` a frame, not the column asked for.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"`{name}` must be a pandas DataFrame, not {type(data).__name__}; {hint}."
        )
    if isinstance(data.columns, pd.MultiIndex):
        first = data.columns[0] if len(data.columns) else ()
        raise ValueError(
            f"`{name}` has MultiIndex columns ({data.columns.nlevels} levels, "
            f"first {first!r}); evalci reads one level of column names. Flatten "
            "them first, e.g. df.columns = ['_'.join(map(str, c)) for c in "
            "df.columns]."
        )
    if rows and len(data) == 0:
        raise ValueError(f"`{name}` has no rows.")


def check_name(x, name) -> None:
    """Refuse a column argument that is not a single column name (str)."""
    if not isinstance(x, str):
        raise TypeError(
            f"`{name}` must be a column name (str), not {type(x).__name__}."
        )


def as_columns(arg, name: str, *, allow_none=True) -> list[str]:
    """Normalise a column argument (str, sequence of str or None) to a list."""
    if arg is None:
        if allow_none:
            return []
        raise ValueError(f"`{name}` is required.")
    if isinstance(arg, (list, tuple)):
        return list(arg)
    return [arg]


def check_columns(frame: pd.DataFrame, cols: list, name: str) -> None:
    """Refuse a column that is not in ``frame`` (saying so if it is an index level)."""
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        if missing[0] in frame.index.names:
            raise ValueError(
                f"`{name}`: {as_written(missing[0])} is an index level, not a column; use "
                f"df.reset_index({as_written(missing[0])}) first."
            )
        shown = ", ".join(map(repr, list(frame.columns)[:20]))
        raise ValueError(
            f"`{name}`: column {as_written(missing[0])} is not in the DataFrame; "
            f"available columns: {shown}."
        )


def check_no_missing(frame: pd.DataFrame, col, name: str, fix: str) -> None:
    """Refuse missing values in column ``col``; ``fix`` ends the message."""
    na = frame[col].isna()
    if na.any():
        raise ValueError(
            f"`{name}` column {as_written(col)} has {int(na.sum())} missing values; {fix}."
        )


def infinite(frame: pd.DataFrame, col) -> tuple[int, float] | None:
    """``(count, first value)`` of the infinite values of a numeric column, or None."""
    series = frame[col]
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return None
    values = series.to_numpy(dtype=float, na_value=np.nan)
    bad = np.isinf(values)
    return (int(bad.sum()), float(values[bad][0])) if bad.any() else None


def check_finite(frame: pd.DataFrame, cols, name: str) -> None:
    """Refuse ``inf`` / ``-inf`` in numeric columns ``cols`` (NaN is handled apart).

    ``dropna`` drops missing values, never infinite ones: an infinite score has
    no mean, so it is an error on every entry point, with the fix in the message.
    """
    for col in cols:
        found = infinite(frame, col)
        if found is not None:
            raise ValueError(
                f"`{name}` column {as_written(col)} has {found[0]} infinite values "
                f"(first: {as_written(found[1])}); scores must be finite. Replace them "
                f"(e.g. df[{as_written(col)}].replace([np.inf, -np.inf], np.nan) and "
                "dropna=True) or clip them to a finite range."
            )


# ============================================================ counts tables
#: Counts stay exact in float64 up to 2**53 (statistics are summed as floats).
MAX_COUNT = 2**53


def check_counts_args(value, successes, trials) -> None:
    """A counts table is ``successes=`` and ``trials=`` together, with no ``value``."""
    if successes is None or trials is None or value is not None:
        raise ValueError(
            "a counts table needs both `successes` (e.g. 'n_correct') and `trials` "
            "(e.g. 'n_runs'), and no `value`."
        )


def check_value(value) -> str:
    """``value``: one column name, required unless a counts table is given."""
    if value is None:
        raise ValueError(
            "`value` is required: the column with the outcome (or pass successes= "
            "and trials= for a counts table)."
        )
    if not isinstance(value, str):
        raise TypeError(
            f"`value` must be one column name (str), not {type(value).__name__}; "
            "for several value columns, call once per column."
        )
    return value


def check_counts(c, n, successes, trials) -> tuple[np.ndarray, np.ndarray]:
    """Successes and trials as float arrays: integers, 0 <= c <= n, n >= 1, and
    totals below 2**53 (where float counts stop being exact)."""
    ok = pd.api.types.is_numeric_dtype(c) and pd.api.types.is_numeric_dtype(n)
    if ok:
        c, n = np.asarray(c, dtype=float), np.asarray(n, dtype=float)
        ok = bool(np.all(c == np.round(c)) and np.all(n == np.round(n)))
    if not ok or (c < 0).any() or (n < 1).any() or (c > n).any():
        raise ValueError(
            f"counts table: `successes` ({as_written(successes)}) and `trials` ({as_written(trials)}) "
            "must be integers with 0 <= successes <= trials and trials >= 1 in "
            "every row."
        )
    if len(n) and float(np.max(n)) * len(n) >= MAX_COUNT:
        # Python integers: an int64 sum of trials near 2**62 would wrap silently
        total = sum(int(x) for x in n.astype(object))
        if total >= MAX_COUNT:
            raise ValueError(
                f"counts table: `trials` ({as_written(trials)}) add up to {total}, beyond "
                f"2**53 = {MAX_COUNT}, where floating-point counts stop being "
                "exact; check the column (a run count that large is usually a "
                "unit error)."
            )
    return c, n
