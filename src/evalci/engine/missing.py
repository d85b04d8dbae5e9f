"""Missing samples: the ``missing=`` policies of the bootstrap entry points.

A sample whose value is missing (NaN: it errored, hit a limit, was never
scored) is data. ``missing=`` says what it means, and the result counts it
(attempted, scored, missing, and by cause when the table says: an ``error``
column gives ``n_errored``, ``limit`` ``n_hit_limit``, ``invalidated``
``n_invalidated`` and ``stopped_early`` ``n_stopped_early``):

``"raise"`` (the default)
    Refuse, saying how many values are missing, in how many inputs, naming a
    few, and listing the choices.
``"drop"``
    Leave the missing runs out (numerator and denominator; an input with no
    scored run disappears). This changes the estimand, so a
    :class:`~evalci.MissingDataWarning` says so. Any metric.
``"zero"``
    Count a missing run as a failure: its value becomes 0. For a metric on
    [0, 1] whose 0 is a failure: ``"mean"`` of 0/1 values or of scores in
    [0, 1], and the 0/1 metrics (``binary``, e.g. pass@k). Works on runs: the
    input keeps all its runs.
``"bounds"``
    Worst-case (Manski) bounds, assuming nothing about the missing runs:
    the table is filled twice, every missing run a failure (0) and every
    one a success (1), and both fillings are resampled in one pass with the
    same draws (two groups sharing their inputs). ``low`` is the lower
    limit of the zero filling's interval, ``high`` the upper limit of the
    one filling's: each end at the asked level, so the interval covers the
    score with at least that probability whatever the missing runs hold
    (Horowitz and Manski 2000), as :func:`evalci.compare` bounds a gap.
    For ``metric="mean"`` of values in [0, 1] and ``strategy="cluster"``
    only: any other metric's range (or its dependence on a missing run) is
    unknown here, so it is refused.

With runs nested in inputs and ``weight="input"``, the share scored ``c`` is
the mean over inputs of each input's scored share (a wholly missing input
counts with share 0), and the score of the scored part (the result's
``estimate``) weights each scored run by one over its input's *attempted*
runs, so that ``score = c * scored_part + (1 - c) * missing_part`` holds
exactly: the zero filling scores ``c * scored_part``, the one filling
``c * scored_part + 1 - c``. With ``weight="run"``, ``c`` is the share of
scored runs and the scored part pools them. ``c`` is read from integer
counts (scored and attempted runs per input, one division each), so a
table reduced to distinct rows (Dask) gives the same bits.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_option
from evalci._base.warnings import MissingDataWarning
from evalci._base.warnings import warn as _warn
from evalci.engine.cube import factorize
from evalci.engine.cube import group_codes as group_codes_of
from evalci.metrics import Metric

__all__ = [
    "MISSING",
    "check_policy",
    "fillings",
    "numbers",
    "policy",
    "resolve",
    "share_scored",
    "tally",
]

#: The choices of ``missing=``.
MISSING = ("raise", "drop", "zero", "bounds")

_CHOICES = (
    "'raise' (refuse), 'drop' (leave them out; changes the estimand), 'zero' "
    "(count each as a failure) or 'bounds' (worst-case bounds)"
)
CHOICES = _CHOICES  # the words of the choices, for the other entry points

#: Columns that say why a sample is missing, and the count each gives.
CAUSES = (
    ("error", "n_errored", "errored"),
    ("limit", "n_hit_limit", "hit a limit"),
    ("invalidated", "n_invalidated", "invalidated"),
    ("stopped_early", "n_stopped_early", "stopped early"),
)

#: The group column of the two fillings of ``"bounds"`` (0 or 1).
FILL = "__evalci_fill__"


def policy(missing, dropna=False) -> str:
    """``missing=`` checked, with ``dropna=True`` read as ``"drop"`` (no warning)."""
    check_option(missing, "missing", MISSING, describe=f"one of {_CHOICES}")
    dropna = bool(dropna)
    if dropna and missing not in ("raise", "drop"):
        raise ValueError(
            f"`dropna=True` and `missing={missing!r}` disagree: dropna=True is the "
            "old name of missing='drop'. Pass missing= alone."
        )
    return "drop" if dropna else missing


def resolve(missing, dropna) -> str:
    """:func:`policy` at an entry point: ``dropna=True`` warns that it is deprecated."""
    out = policy(missing, dropna)
    if dropna:
        _warn(
            "`dropna=True` is deprecated: pass missing='drop' (the same rows "
            "dropped), or choose another policy: missing='zero' or 'bounds'.",
            DeprecationWarning,
        )
    return out


def _value_columns(args) -> list[str]:
    metric = args.metric
    return [args.value] + (list(metric.columns) if isinstance(metric, Metric) else [])


def missing_rows(frame: pd.DataFrame, args) -> np.ndarray:
    """Which rows miss their value (or a metric column)."""
    return frame[_value_columns(args)].isna().any(axis=1).to_numpy()


def _runs(frame: pd.DataFrame, args) -> np.ndarray:
    """How many runs each row stands for: 1, or its multiplicity when the
    table was reduced to distinct rows (``args.row_runs``, e.g. on Dask)."""
    if args.row_runs is None:
        return np.ones(len(frame), dtype=np.int64)
    return frame[args.row_runs].to_numpy(dtype=np.int64)


def _stated(col: pd.Series) -> np.ndarray:
    """Rows where a cause column holds something (not missing, not empty)."""
    s = col.astype(object)
    return (s.notna() & (s.astype(str).str.strip() != "")).to_numpy()


def refusal(frame: pd.DataFrame, args, na: np.ndarray, col: str, role: str) -> str:
    """The message of ``missing="raise"``: how many, where, why, the choices."""
    runs = _runs(frame, args)
    n = int(runs[frame[col].isna().to_numpy()].sum())
    where = ""
    units = list(args.input or args.cluster)
    if units:
        keys = frame.loc[na, units].drop_duplicates()
        # itertuples gives namedtuples: as_written shows ('t1', 0), not Pandas(...)
        few = [k[0] if len(k) == 1 else k for k in keys.head(3).itertuples(index=False)]
        more = ", ..." if len(keys) > 3 else ""
        where = f" in {len(keys)} inputs ({', '.join(map(as_written, few))}{more})"
    why = [
        f"{int(runs[_stated(frame[c]) & na].sum())} {text}"
        for c, _, text in CAUSES
        if c in frame.columns and (_stated(frame[c]) & na).any()
    ]
    why = f"; {', '.join(why)}" if why else ""
    return (
        f"`{role}`: column {as_written(col)} has {n} missing values (of "
        f"{int(runs.sum())} rows){where}{why}. Say what a missing sample means with `missing`: "
        f"{_CHOICES}; missing='drop' is the old dropna=True. Or fill them."
    )


def refuse(frame: pd.DataFrame, args) -> None:
    """``missing="raise"`` on a table with missing values: the ValueError."""
    na = missing_rows(frame, args)
    col = next(c for c in _value_columns(args) if frame[c].isna().any())
    raise ValueError(refusal(frame, args, na, col, "value"))


def check_policy(data: pd.DataFrame, args) -> None:
    """``"zero"`` and ``"bounds"`` need a metric on [0, 1]: refuse the others."""
    if args.missing not in ("zero", "bounds"):
        return
    metric, what = args.metric, f"missing={args.missing!r}"
    name = metric.name if isinstance(metric, Metric) else "a callable"
    linear = isinstance(metric, Metric) and not metric.columns and metric.numeric
    linear = linear and metric.name == "mean" and metric.per_input is None
    zero_ok = isinstance(metric, Metric) and metric.binary and not metric.columns
    if args.trials is not None or not (linear or (args.missing == "zero" and zero_ok)):
        raise ValueError(
            f"{what} needs a score on [0, 1] whose missing part can be "
            f"{'set to 0' if args.missing == 'zero' else 'bounded'}: "
            + ("metric='mean' of 0/1 values or scores in [0, 1], or a 0/1 metric "
               "such as pass@k" if args.missing == "zero"
               else "metric='mean' of 0/1 values or scores in [0, 1]")
            + f"; the range of {'a counts table' if args.trials else repr(name)} is "
            "unknown here. Use missing='drop' (and say so) or fill the values "
            "yourself."
        )  # fmt: skip
    y = pd.to_numeric(data[args.value].dropna(), errors="coerce")
    if y.isna().any() or ((y < 0) | (y > 1)).any():
        raise ValueError(
            f"{what} needs scores in [0, 1] (a failure is 0, a success 1); column "
            f"{args.value!r} holds values outside it, so the range of its missing "
            "part is unknown. Rescale it to [0, 1], or use missing='drop'."
        )
    if args.missing == "bounds" and args.strategy != "cluster":
        raise ValueError(
            f"missing='bounds' bounds the score of strategy='cluster' (the share "
            f"scored is read per input); strategy={args.strategy!r} is not "
            "supported with it. Use strategy='cluster', or missing='zero'/'drop'."
        )


def tally(data: pd.DataFrame, args) -> pd.DataFrame | None:
    """Per group: attempted, scored, missing runs (and by cause); None if none miss.

    One row per group in the order of the groups of the full table (a
    :class:`pandas.RangeIndex` of one row without ``by``), indexed by group.
    """
    na = missing_rows(data, args)
    if not na.any():
        return None
    codes, groups, n = group_codes_of(data, args.by)
    runs = _runs(data, args)

    def count(rows):
        return np.bincount(codes, weights=runs * rows, minlength=n).astype(np.int64)

    out = {"n_attempted": count(1), "n_scored": count(~na), "n_missing": count(na)}
    for col, name, _ in CAUSES:
        if col in data.columns:
            out[name] = count(_stated(data[col]) & na)
    units = list(args.input or args.cluster)
    if units:
        unit = factorize(data, units, "input")[0]
        cell = unit * n + codes
        scored = np.bincount(cell, weights=~na, minlength=int(cell.max()) + 1)
        seen = np.unique(cell)
        empty = seen[scored[seen] == 0]
        out["n_inputs_unscored"] = np.bincount(empty % n, minlength=n)
    return pd.DataFrame(out, index=groups if groups is not None else None)


def aligned(counts: pd.DataFrame | None, groups) -> pd.DataFrame | None:
    """``counts`` in the order of a result's groups (0 for a group not in it)."""
    if counts is None:
        return None
    if groups is not None:
        counts = counts.reindex(groups)
    return counts.reset_index(drop=True)


def note(row) -> str:
    """One group's counts as words: "scored 183 of 200 runs; 17 errored".

    ``row`` holds whichever counts were taken: a comparison whose only gap
    is inputs some systems lack has ``n_inputs_missing`` alone (no run
    counts), and a system with nothing missing gets "nothing missing".
    """
    parts = []
    if "n_scored" in row and "n_attempted" in row:
        parts.append(f"scored {int(row['n_scored'])} of {int(row['n_attempted'])} runs")
    for _, name, text in CAUSES:
        if row.get(name, 0):
            parts.append(f"{int(row[name])} {text}")
    for name, text in _INPUT_COUNTS:  # the last: a comparison's one-sided inputs
        if row.get(name, 0):
            parts.append(f"{_count(int(row[name]), 'input')} with {text}")
    return "; ".join(parts) or "nothing missing"


_INPUT_COUNTS = (("n_inputs_unscored", "no scored run"), ("n_inputs_missing", "no row"))


def _count(n: int, noun: str) -> str:
    """``"1 input"``, ``"3 inputs"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def warn_dropped(counts: pd.DataFrame) -> None:
    """The warning of ``missing="drop"``: the estimand changes."""
    n, total = int(counts.n_missing.sum()), int(counts.n_attempted.sum())
    _warn(
        f"missing='drop' left out {n} of {total} runs with a missing value: the "
        "score is now that of the scored samples only (numerator and "
        "denominator), which is not the score of the attempted ones when "
        "failures are what go missing. missing='bounds' gives worst-case bounds; "
        "missing='zero' counts them as failures." + _gone(counts),
        MissingDataWarning,
    )


def _gone(counts: pd.DataFrame) -> str:
    """``missing="drop"``: the groups it leaves out whole, named (or "")."""
    names = [n for n in unscored(counts) if n != "the table"]
    if not names:
        return ""
    return (
        f" {_listed(names)} {'has' if len(names) == 1 else 'have'} no scored run "
        f"and {'is' if len(names) == 1 else 'are'} left out of the result."
    )


def numbers(y: pd.Series) -> pd.Series:
    """A value column as float64, a missing value NaN, whatever its dtype.

    Filling happens on this view, never on the user's dtype: a nullable
    ``boolean`` column refuses 0.0 and an ``Int64`` one 0.5.
    """
    if isinstance(y.dtype, pd.CategoricalDtype):
        y = y.astype(object)
    return pd.to_numeric(y).astype("float64")


def filled(data: pd.DataFrame, args, fill: float = 0.0) -> pd.DataFrame:
    """``missing="zero"``: a missing value becomes 0 (a failure); or ``fill``."""
    y = data[args.value]
    if not y.isna().any():
        return data
    return data.assign(**{args.value: numbers(y).fillna(fill)})


def fillings(data: pd.DataFrame, args):
    """``(rows, args)`` of the bounds: the table filled with 0 and with 1,
    one after the other, told apart by the group column :data:`FILL`, and
    the arguments that resample both in one pass (same draws)."""
    both = pd.concat(
        [filled(data, args, float(f)).assign(**{FILL: f}) for f in (0, 1)],
        ignore_index=True,
    )
    return both, replace(args, by=[*args.by, FILL], missing="raise", dropna=False)


def share_scored(data: pd.DataFrame, args) -> np.ndarray:
    """The share scored ``c`` per group (full-table order), from integer counts.

    ``weight="run"``: scored runs over attempted runs. ``weight="input"``:
    the mean over inputs of each input's scored runs over its attempted
    runs. Each ratio is one division of two whole numbers, and the inputs
    are summed in the order of their sorted keys, so a table reduced to
    distinct rows with multiplicities gives the same bits as its rows.
    """
    na = missing_rows(data, args)
    codes, _, n = group_codes_of(data, args.by)
    runs = _runs(data, args)  # a reduced table's rows stand for `runs` runs
    if args.weight == "run":
        scored = np.bincount(codes, weights=runs * ~na, minlength=n)
        return scored / np.bincount(codes, weights=runs, minlength=n)
    unit = factorize(data, list(args.input or args.cluster), "input")[0]
    cell = unit * n + codes
    size = int(cell.max()) + 1 if len(cell) else 0
    scored = np.bincount(cell, weights=runs * ~na, minlength=size)
    attempted = np.bincount(cell, weights=runs, minlength=size)
    seen = np.flatnonzero(attempted)  # (input, group) cells in key order
    shares = np.bincount(seen % n, weights=scored[seen] / attempted[seen], minlength=n)
    with np.errstate(invalid="ignore"):
        return shares / np.bincount(seen % n, minlength=n)


def scored_score(zero_filled, share) -> np.ndarray:
    """The score of the scored part from the zero filling's: ``e0 / c``
    (NaN where nothing is scored: :func:`warn_unscored` says so)."""
    e0, c = np.asarray(zero_filled, dtype=float), np.asarray(share, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, e0 / np.where(c > 0, c, 1.0), np.nan)


def _shown(key) -> str:
    """A group key as the user wrote it: ``'a'``, ``('a', 1)``, never np.str_."""
    if isinstance(key, tuple):
        return "(" + ", ".join(_shown(k) for k in key) + ")"
    return repr(key.item() if isinstance(key, np.generic) else key)


def unscored(counts: pd.DataFrame | None) -> list[str]:
    """The groups of ``counts`` (:func:`tally`) with no scored run, as shown."""
    if counts is None or "n_scored" not in counts:
        return []
    gone = counts.index[counts["n_scored"].to_numpy() == 0]
    if isinstance(counts.index, pd.RangeIndex):  # no `by`: the whole table
        return ["the table"] if len(gone) else []
    return [_shown(g) for g in gone]


def warn_unscored(counts: pd.DataFrame | None) -> None:
    """``missing="bounds"``: a group with no scored run keeps its row, with
    bounds from the fillings (about [0, 1]) and a NaN estimate: say why."""
    names = unscored(counts)
    if not names:
        return
    _warn(
        f"{_listed(names)} {'has' if len(names) == 1 else 'have'} no scored run: "
        "under missing='bounds' its score may be anything in [0, 1], so its "
        "bounds are [0, 1] and the score of its scored part (`estimate`) is NaN.",
        MissingDataWarning,
    )


def _listed(names: list[str]) -> str:
    if names == ["the table"]:
        return "the table"
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    return f"group{'s' if len(names) > 1 else ''} {shown}"
