"""Rows to inputs for the judge estimators: argument checks and per-input means.

What :func:`evalci.judge.ppi_mean` and :func:`evalci.judge.rogan_gladen`
share before they differ: the checks of their common arguments and values,
the per-input judge and gold means (rows sharing the ``cluster`` key are one
input; see :mod:`evalci.methods.judge`), the labeled and unlabeled counts per
group and the per-group sums of per-input statistics.
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
    check_level,
    check_n_resamples,
    check_name,
    check_option,
)
from evalci._base.warnings import FEW_INPUTS, FewClustersWarning, warn
from evalci.engine.cube import factorize, value_codes
from evalci.engine.cube import group_codes as group_codes_of

_FRAME_HINT = "for xarray objects convert first with da.evalci.to_frame()"


@dataclass(frozen=True)
class _Args:
    judge: str
    gold: str | None
    cluster: list[str]
    by: list[str]
    confidence_level: float
    method: str
    n_resamples: int
    binary: bool


def _judge_iv(
    data, judge, gold, cluster, by, level, method, methods, n_resamples, binary
):
    """Validate and normalise the arguments both entry points share."""
    check_frame(data, _FRAME_HINT)
    if len(data) == 0:
        raise ValueError("`data` has no rows; pass the table of judge scores.")
    check_name(judge, "judge")
    cluster, by = as_columns(cluster, "cluster"), as_columns(by, "by")
    for name, cols in (("cluster", cluster), ("by", by)):
        for col in cols:
            check_name(col, name)
        if len(set(cols)) < len(cols):
            raise ValueError(f"`{name}` names a column twice: {cols}; name each once.")
    check_columns(data, [judge], "judge")
    if gold is not None:
        check_name(gold, "gold")
        check_columns(data, [gold], "gold")
        if gold == judge:
            raise ValueError(
                f"`gold` and `judge` are the same column {as_written(gold)}; `gold` holds the "
                "human labels (missing where unlabeled), `judge` the judge's scores."
            )
    check_columns(data, cluster, "cluster")
    check_columns(data, by, "by")
    if set(cluster) & set(by):
        raise ValueError(
            f"`by` and `cluster` share column {as_written(sorted(set(cluster) & set(by))[0])}: "
            "one interval per input is not an interval over inputs; group by a "
            "column that spans several inputs."
        )
    _unique_columns_iv(data, [judge, gold, *cluster, *by])
    check_option(method, "method", methods)
    n_resamples = check_n_resamples(n_resamples)
    if method == "bootstrap" and n_resamples < 2:
        raise ValueError(
            f"`n_resamples` must be at least 2 for method='bootstrap' (an interval "
            f"needs a spread of replicates), e.g. 9999; got {n_resamples}."
        )
    args = _Args(
        judge=judge,
        gold=gold,
        cluster=cluster,
        by=by,
        confidence_level=check_level(level),
        method=method,
        n_resamples=n_resamples,
        binary=binary,
    )
    _values_iv(data, args)
    return args


def _unique_columns_iv(data: pd.DataFrame, cols) -> None:
    """Refuse a column name the DataFrame holds twice (``data[c]`` is then a frame)."""
    for col in cols:
        if col is not None and (data.columns == col).sum() > 1:
            raise ValueError(
                f"column {as_written(col)} appears more than once in the DataFrame; rename or "
                "drop the copies first."
            )


def _scale_iv(data: pd.DataFrame, cols, name: str) -> None:
    """Refuse scores whose squares, summed over the rows, would overflow float64.

    The estimators sum squares and products of per-input scores (and PPI++
    scales them by ``lam``, at most 1000): scores up to
    ``sqrt(max float / rows) / 1e4`` in magnitude (about 1e147 at a million
    rows) keep every such sum finite.
    """
    limit = np.sqrt(np.finfo(float).max / max(len(data), 1)) / 1e4
    for col in cols:
        values = data[col].to_numpy(dtype=float, na_value=np.nan)
        big = np.nanmax(np.abs(values), initial=0.0)
        if big > limit:
            raise ValueError(
                f"`{name}` column {as_written(col)} holds scores up to {big:.3g} in magnitude: "
                f"their squares, summed over {len(data)} rows, overflow float64 "
                f"(limit {limit:.3g}); rescale the scores (e.g. divide by {big:.0e})."
            )


def _values_iv(data: pd.DataFrame, args: _Args) -> None:
    """Judge scores numeric and present on every row; gold numeric (0/1 if binary)."""
    y = data[args.judge]
    numeric = pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)
    if not numeric or pd.api.types.is_complex_dtype(y):
        raise ValueError(
            f"`judge` column {as_written(args.judge)} is not numeric (dtype {y.dtype}); score "
            "the judge's verdicts first, e.g. (df.verdict == 'correct').astype(int)."
        )
    if y.isna().any():
        raise ValueError(
            f"`judge` column {as_written(args.judge)} has {int(y.isna().sum())} missing values; "
            "the judge must score every row: drop those rows "
            f"(data.dropna(subset=[{as_written(args.judge)}])) or score them."
        )
    cols = [args.judge]
    if args.gold is not None:
        g = data[args.gold]
        numeric = pd.api.types.is_numeric_dtype(g) or pd.api.types.is_bool_dtype(g)
        if not numeric or pd.api.types.is_complex_dtype(g):
            raise ValueError(
                f"`gold` column {as_written(args.gold)} is not numeric (dtype {g.dtype}); use "
                "numbers with NaN where an input has no gold label."
            )
        cols.append(args.gold)
    check_finite(data, cols, "judge" if args.gold is None else "judge/gold")
    _scale_iv(data, [args.judge], "judge")
    if args.gold is not None:
        _scale_iv(data, [args.gold], "gold")
    if args.binary:
        for name, col in (("judge", args.judge), ("gold", args.gold)):
            if col is None:
                continue
            v = data[col].dropna()
            bad = ~v.isin([0, 1])
            if bad.any():
                raise ValueError(
                    f"`{name}` column {as_written(col)} must hold only 0/1 for rogan_gladen "
                    f"(a misclassified binary outcome); found {as_written(v[bad].iloc[0])} in "
                    f"{int(bad.sum())} rows. For scores use ppi_mean."
                )


@dataclass(frozen=True)
class _Inputs:
    """Per-input arrays, inputs sorted by (group, key)."""

    group: np.ndarray  # (I,) group code of each input
    labeled: np.ndarray  # (I,) bool: any gold row
    f_all: np.ndarray  # (I,) judge mean over all rows
    y: np.ndarray  # (I,) gold mean over gold rows (NaN if unlabeled)
    f_gold: np.ndarray  # (I,) judge mean over gold rows (NaN if unlabeled)
    sums: np.ndarray  # (I, 4) over gold rows: judge*gold, gold, (1-j)(1-g), 1-gold
    groups: pd.Index | None
    n_groups: int


def _inputs(data: pd.DataFrame, args: _Args) -> _Inputs:
    """Per-input means from the rows, summed in a canonical order (row order is moot)."""
    gcode, groups, n_groups = group_codes_of(data, args.by)
    if args.cluster:
        ccode, ckeys = factorize(data, args.cluster, "cluster")
        n_keys = len(ckeys)
    else:
        ccode, n_keys = np.arange(len(data), dtype=np.int64), len(data)
    f = data[args.judge].to_numpy(dtype=float)
    g = (
        np.full(len(data), np.nan)
        if args.gold is None
        else data[args.gold].to_numpy(dtype=float, na_value=np.nan)
    )
    gkey = np.where(np.isnan(g), -1, value_codes(pd.Series(g)))
    order = np.lexsort((gkey, value_codes(data[args.judge]), ccode, gcode))
    cell = (gcode * n_keys + ccode)[order]
    f, g = f[order], g[order]
    _, inv = np.unique(cell, return_inverse=True)
    inv = inv.reshape(-1)
    n_in = int(inv.max()) + 1

    def total(w):
        return np.bincount(inv, weights=w, minlength=n_in)

    has = ~np.isnan(g)
    g0, fg = np.where(has, g, 0.0), np.where(has, f, 0.0)
    n_gold = total(has.astype(float))
    labeled = n_gold > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.where(labeled, total(g0) / n_gold, np.nan)
        f_gold = np.where(labeled, total(fg) / n_gold, np.nan)
    sums = np.column_stack(
        [
            total(fg * g0),
            total(g0),
            total(has * (1 - f) * (1 - g0)),
            total(has * (1 - g0)),
        ]
    )
    return _Inputs(
        group=gcode[order][np.r_[0, np.flatnonzero(np.diff(inv)) + 1]],
        labeled=labeled,
        f_all=total(f) / total(np.ones_like(f)),
        y=y,
        f_gold=f_gold,
        sums=sums,
        groups=groups,
        n_groups=n_groups,
    )


def _counts(ins: _Inputs, need_labeled: int, need_unlabeled: int, gold: bool):
    """Labeled and unlabeled inputs per group, refusing too few of either."""
    n_lab = np.bincount(ins.group, weights=ins.labeled, minlength=ins.n_groups)
    n_unl = np.bincount(ins.group, weights=~ins.labeled, minlength=ins.n_groups)
    n_lab, n_unl = n_lab.astype(np.int64), n_unl.astype(np.int64)
    for n, need, what, fix in (
        (n_lab, need_labeled, "labeled (with gold)", "label more inputs"),
        (n_unl, need_unlabeled, "unlabeled (judge only)", _ALL_GOLD_FIX),
    ):
        short = n < need
        if gold and short.any():
            gi = int(np.argmax(short))
            raise ValueError(
                f"{int(n[gi])} {what} inputs{_where(ins.groups, gi)}; at least {need} "
                f"are needed; {fix}."
            )
    few = n_lab < FEW_INPUTS
    if gold and few.any():
        gi = int(np.argmax(few))
        warn(
            f"only {int(n_lab[gi])} labeled inputs{_where(ins.groups, gi)}: the "
            f"interval's coverage is unreliable with fewer than {FEW_INPUTS}; label "
            "more inputs.",
            FewClustersWarning,
        )
    return n_lab, n_unl


_ALL_GOLD_FIX = (
    "every input has gold, so the judge adds nothing: use "
    "evalci.analytic_ci(data, gold, cluster) on the gold labels"
)


def _where(groups, g) -> str:
    return "" if groups is None else f" in group {as_written(groups[g])}"


def _group_sums(t: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    return np.stack(
        [np.bincount(group, weights=c, minlength=n_groups) for c in t.T], axis=-1
    )
