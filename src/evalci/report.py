"""Flaky inputs and seed 002's reporting habit.

Seed 002, "A Practical Reporting Habit": for every version comparison report
N and k, each version's score with its interval, the paired gap with its
interval and the minimum meaningful effect; then flag unstable inputs and
state whether the gap's interval excludes 0 and clears the threshold.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import core
from . import resampling as _rs
from ._data import as_columns, check_columns, factorize
from .compare import ComparisonResult
from .compare import compare as _compare
from .results import BootstrapResult

__all__ = ["flaky", "report", "Report"]


def flaky(data: pd.DataFrame, value: str, cluster, *, by=None) -> pd.DataFrame:
    """Per-input pass rate over runs, flagged when runs disagree.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, system]).
    value : str
        0/1 outcome (or a numeric score) per run.
    cluster : str
        Column identifying the input.
    by : str or list of str, optional
        Per-group tables (e.g. ``by="system"``).

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
        first.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> table = df.evalci.flaky("correct", cluster="input_id", by="system")
    >>> int(table.flaky.sum())
    135
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"`data` must be a pandas DataFrame, not {type(data).__name__}."
        )
    cluster = as_columns(cluster, "cluster", allow_none=False)
    by = as_columns(by, "by")
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, by, "by")
    y = data[value]
    if y.isna().any():
        raise ValueError(
            f"`value` column {value!r} has missing values; drop or fill them."
        )
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(f"`value` column {value!r} must be numeric (0/1 or a score).")
    keys = by + cluster
    codes, index = factorize(data, keys, "cluster")
    y = y.to_numpy(dtype=float)
    n = np.bincount(codes)
    s1 = np.bincount(codes, weights=y)
    s2 = np.bincount(codes, weights=y * y)
    mean = s1 / n
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(n > 1, (s2 - n * mean**2) / (n - 1), 0.0)
    var = np.maximum(var, 0.0)  # rounding
    out = index.to_frame(index=False)
    out["n_runs"] = n
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


def _fmt(x: float, percent: bool, signed=False) -> str:
    if not np.isfinite(x):
        return str(x)
    if percent:
        return f"{x * 100:+.1f}" if signed else f"{x * 100:.1f}%"
    return f"{x:+.4g}" if signed else f"{x:.4g}"


@dataclass(frozen=True)
class Report:
    """Seed 002's five things and two judgments, in text, Markdown, HTML or a frame.

    Attributes
    ----------
    scores : BootstrapResult
        Each system's score with its interval (shared draws).
    comparison : ComparisonResult
        Paired gaps with intervals, p-values and decisions.
    flaky : pandas.DataFrame
        Per-input pass rates (see :func:`flaky`), flaky ones first.
    n_inputs, runs : int, pandas.DataFrame
        N, and k per system (min, mean, max).
    mme : float or None
    value, percent : str, bool
    """

    scores: BootstrapResult = field(repr=False)
    comparison: ComparisonResult = field(repr=False)
    flaky: pd.DataFrame = field(repr=False)
    n_inputs: int
    runs: pd.DataFrame = field(repr=False)
    mme: float | None
    value: str
    percent: bool
    max_flaky: int = 5

    def _lines(self) -> dict:
        pct = self.percent
        unit = " points" if pct else ""
        est = self.scores
        ks = self.runs
        k_text = ", ".join(
            f"{s}: k={r['k_mean']:.3g}"
            + (f" ({r['k_min']}-{r['k_max']})" if r["k_min"] != r["k_max"] else "")
            for s, r in ks.iterrows()
        )
        scores = [
            (
                str(s),
                _fmt(est.estimate[s], pct),
                f"[{_fmt(est.low[s], pct)}, {_fmt(est.high[s], pct)}]",
            )
            for s in est.groups
        ]
        gaps, judgments = [], []
        for _, row in self.comparison.table.iterrows():
            gaps.append(
                (
                    f"{row.b} - {row.a}",
                    _fmt(row.gap, pct, signed=True) + unit,
                    f"[{_fmt(row.low, pct, signed=True)}, "
                    f"{_fmt(row.high, pct, signed=True)}]",
                    f"{row.pvalue:.3g}",
                    row.decision,
                )
            )
            clears = (
                ""
                if self.mme is None
                else (
                    "; it clears the minimum meaningful effect"
                    if row.clears_mme
                    else "; it does not clear the minimum meaningful effect"
                )
            )
            judgments.append(
                f"{row.b} vs {row.a}: the interval "
                f"{'excludes' if row.excludes_zero else 'includes'} 0{clears} -> "
                f"{row.decision}: {row.explanation}"
            )
        flaky_counts = (
            self.flaky.groupby(self.flaky.columns[0]).flaky.sum()
            if self.flaky.columns[0] != "input"
            else None
        )
        flaky_text = ", ".join(
            f"{s}: {int(c)} of {self.n_inputs}" for s, c in flaky_counts.items()
        )
        top = self.flaky[self.flaky.flaky].sort_values("share", ascending=False)
        top = top.head(self.max_flaky)
        top_text = ", ".join(
            f"{r.iloc[1]!s} ({r.iloc[0]}, pass rate {r.pass_rate:.2f})"
            for _, r in top.iterrows()
        )
        mme = (
            "not set (set it before running the comparison)"
            if self.mme is None
            else _fmt(self.mme, pct, signed=False).rstrip("%") + unit
        )
        method = (
            f"{self.scores.confidence_level:.0%} {self.scores.method} "
            f"{self.scores.strategy} bootstrap, {self.scores.n_resamples} resamples; "
            f"gaps: {self.comparison.method}"
            + (f", {self.comparison.adjust}-adjusted" if self.comparison.adjust else "")
        )
        return dict(
            k_text=k_text,
            scores=scores,
            gaps=gaps,
            judgments=judgments,
            flaky_text=flaky_text,
            top_text=top_text,
            mme=mme,
            method=method,
        )

    def to_text(self) -> str:
        """Plain text, one fact a line."""
        p = self._lines()
        out = [
            f"Evaluation report for {self.value!r} ({p['method']})",
            f"1. Inputs N = {self.n_inputs}; runs per input {p['k_text']}",
            "2-3. Scores with intervals:",
        ]
        out += [f"   {s}: {e} {ci}" for s, e, ci in p["scores"]]
        out.append("4. Paired gaps (b - a) with intervals:")
        out += [f"   {n}: {g} {ci}, p = {pv} ({d})" for n, g, ci, pv, d in p["gaps"]]
        out.append(f"5. Minimum meaningful effect: {p['mme']}")
        out.append(f"Flaky inputs (runs disagree): {p['flaky_text']}")
        if p["top_text"]:
            out.append(f"   most run-to-run variance: {p['top_text']}")
        out += [f"Decision: {j}" for j in p["judgments"]]
        return "\n".join(out)

    def to_markdown(self) -> str:
        """Markdown with two small tables (no extra dependency)."""
        p = self._lines()
        out = [
            f"**Evaluation report** for `{self.value}` ({p['method']})",
            "",
            f"- Inputs N = {self.n_inputs}; runs per input {p['k_text']}",
            f"- Minimum meaningful effect: {p['mme']}",
            f"- Flaky inputs (runs disagree): {p['flaky_text']}",
            "",
            "| system | score | interval |",
            "|---|---|---|",
        ]
        out += [f"| {s} | {e} | {ci} |" for s, e, ci in p["scores"]]
        out += [
            "",
            "| gap (b - a) | estimate | interval | p | decision |",
            "|---|---|---|---|---|",
        ]
        out += [f"| {n} | {g} | {ci} | {pv} | {d} |" for n, g, ci, pv, d in p["gaps"]]
        out += [""] + [f"- **Decision**: {j}" for j in p["judgments"]]
        return "\n".join(out)

    def to_html(self) -> str:
        """An HTML fragment."""
        p = self._lines()
        esc = html.escape
        rows = "".join(
            f"<tr><td>{esc(s)}</td><td>{e}</td><td>{ci}</td></tr>"
            for s, e, ci in p["scores"]
        )
        gaps = "".join(
            f"<tr><td>{esc(n)}</td><td>{g}</td><td>{ci}</td><td>{pv}</td><td>{esc(d)}</td></tr>"
            for n, g, ci, pv, d in p["gaps"]
        )
        judg = "".join(f"<li>{esc(j)}</li>" for j in p["judgments"])
        return (
            f"<div><p><b>Evaluation report</b> for <code>{esc(self.value)}</code> "
            f"({esc(p['method'])})</p><ul><li>Inputs N = {self.n_inputs}; runs per "
            f"input {esc(p['k_text'])}</li><li>Minimum meaningful effect: "
            f"{esc(p['mme'])}</li><li>Flaky inputs: {esc(p['flaky_text'])}</li></ul>"
            f"<table><tr><th>system</th><th>score</th><th>interval</th></tr>{rows}</table>"
            f"<table><tr><th>gap (b - a)</th><th>estimate</th><th>interval</th><th>p</th>"
            f"<th>decision</th></tr>{gaps}</table><ul>{judg}</ul></div>"
        )

    def to_frame(self) -> pd.DataFrame:
        """Tidy frame: one row per system score and one per paired gap."""
        s = self.scores.to_frame()
        system_col = s.columns[0]
        s = s.rename(columns={system_col: "b"}).assign(kind="score", a=None)
        g = self.comparison.to_frame().rename(columns={"gap": "estimate"})
        g["kind"] = "gap"
        cols = ["kind", "a", "b", "estimate", "low", "high", "standard_error"]
        out = pd.concat(
            [
                s[cols + ["n_inputs"]],
                g[cols + ["pvalue", "pvalue_adjusted", "decision", "n_inputs"]],
            ],
            ignore_index=True,
        )
        out["mme"] = self.mme
        return out

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def report(
    data: pd.DataFrame,
    value: str,
    cluster,
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
    rng=None,
    max_flaky: int = 5,
) -> Report:
    """The comparison report of seed 002's reporting habit.

    Scores and gaps come from the same draws of inputs (one seed), so the
    report is internally consistent. Parameters as in :func:`evalci.compare`.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> rep = df.evalci.report("correct", cluster="input_id", mme=0.02,
    ...                        n_resamples=2000, rng=0)
    >>> print(rep.to_text().splitlines()[1])
    1. Inputs N = 198; runs per input openai/gpt-5-nano-2025-08-07: k=5, openai/gpt-5.4-mini-2026-03-17: k=5
    """
    root = _rs.seed_sequence(rng)
    comparison = _compare(
        data,
        value,
        cluster,
        system,
        baseline=baseline,
        pairs=pairs,
        metric=metric,
        method=method,
        mme=mme,
        adjust=adjust,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        strata=strata,
        weight=weight,
        missing=missing,
        rng=root,
    )
    used = pd.unique(pd.concat([comparison.table.a, comparison.table.b]))
    frame = data[data[system].isin(used)]
    if missing == "drop":
        counts = frame.groupby(cluster)[system].nunique()
        frame = frame[frame[cluster].isin(counts.index[counts == len(used)])]
    scores = core.cluster_ci(
        frame,
        value,
        cluster,
        by=system,
        metric=metric,
        method="percentile" if method == "clt" else method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        strata=strata,
        weight=weight,
        rng=root,
    )
    k = frame.groupby([system, cluster]).size().groupby(level=0)
    runs = pd.DataFrame({"k_min": k.min(), "k_mean": k.mean(), "k_max": k.max()})
    y = frame[value]
    percent = bool(
        (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y))
        and y.isin([0, 1]).all()
        and metric == "mean"
    )
    flaky_table = (
        flaky(frame, value, cluster, by=system)
        if pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)
        else pd.DataFrame(
            {system: [], cluster: [], "flaky": [], "share": [], "pass_rate": []}
        )
    )
    return Report(
        scores=scores,
        comparison=comparison,
        flaky=flaky_table,
        n_inputs=int(frame[cluster].nunique()),
        runs=runs,
        mme=mme,
        value=value,
        percent=percent,
        max_flaky=max_flaky,
    )
