"""Flaky inputs and seed 002's reporting habit.

Seed 002, "A Practical Reporting Habit": for every version comparison report
N and k, each version's score with its interval, the paired gap with its
interval and the minimum meaningful effect; then flag unstable inputs and
state whether the gap's interval excludes 0 and clears the threshold.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.validate import (
    as_columns,
    check_columns,
    check_counts,
    check_counts_args,
    check_finite,
    check_frame,
    check_no_missing,
    check_option,
    check_value,
)
from evalci.engine import bootstrap as core
from evalci.engine import resampling as _rs
from evalci.engine.cube import factorize
from evalci.engine.results import BootstrapResult
from evalci.methods.compare import (
    ComparisonResult,
    _boot_method,
    _bounded,
    _check_mme,
    _fmt_p,
    _judge,
    _paired_rows,
)
from evalci.methods.compare import compare as _compare
from evalci.metrics import Metric

__all__ = ["flaky", "report", "Report"]

_UNITS = ("points", "fraction")


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
        raise ValueError(f"`value` column {value!r} must be numeric (0/1 or a score).")
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


# --- formatting -----------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def _md(text) -> str:
    """Markdown-safe text: specials backslash-escaped, ``<>&`` as entities.

    Markdown renderers (Jupyter's among them) pass raw HTML through, so ``<``
    must not reach them as is; ``|`` would split a table cell.
    """
    text = " ".join(str(text).splitlines())
    return html.escape(_MD_SPECIAL.sub(r"\\\1", text), quote=False)


def _name(key) -> str:
    """An input key (a tuple for several cluster columns) as text."""
    return "/".join(map(str, key)) if isinstance(key, tuple) else str(key)


class _Units:
    """One unit for every effect in a report: percentage points or fractions."""

    def __init__(self, units: str, proportion: bool):
        self.units = units
        self.scale = 100.0 if units == "points" else 1.0
        self.spec = ".1f" if units == "points" else (".4f" if proportion else ".4g")

    def __call__(self, x: float, signed: bool = False) -> str:
        if not np.isfinite(x):
            return str(x)
        return format(x * self.scale, ("+" if signed else "") + self.spec)

    @property
    def statement(self) -> str:
        if self.units == "points":
            return (
                "scores, gaps, intervals and the minimum meaningful effect in "
                "percentage points (0.02 = 2.0 points)"
            )
        return "scores, gaps, intervals and the minimum meaningful effect as fractions"


#: An interval whose endpoints' Monte-Carlo error exceeds this share of its
#: width is flagged: another seed would visibly move it (about 100-500
#: resamples; at the default 10,000 the share is under 1%).
MC_FLAG_SHARE = 0.025


def _mc_flag(share: float) -> str:
    """A note for an interval the bootstrap's own error visibly moves, else ''."""
    if not np.isfinite(share) or share <= MC_FLAG_SHARE:
        return ""
    return (
        f" (Monte-Carlo error {share:.0%} of the width: draw more resamples, "
        "e.g. n_resamples='auto')"
    )


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
        On the metric's scale (as passed).
    value : str
        The outcome column (``"successes/trials"`` for a counts table).
    units : {'points', 'fraction'}
        The unit every effect is printed in (and :meth:`to_frame` gives).
    max_flaky : int
        How many of the flakiest inputs the report names.
    metric : str
        The metric's name.
    proportion : bool
        Whether scores are on a 0-1 scale (a mean of 0/1 outcomes or a counts
        table), which decides how numbers are formatted.
    """

    scores: BootstrapResult = field(repr=False)
    comparison: ComparisonResult = field(repr=False)
    flaky: pd.DataFrame = field(repr=False)
    n_inputs: int
    runs: pd.DataFrame = field(repr=False)
    mme: float | None
    value: str
    units: str
    max_flaky: int = 5
    metric: str = "mean"
    proportion: bool = True

    @property
    def percent(self) -> bool:
        """Whether effects are in percentage points."""
        return self.units == "points"

    def _u(self) -> _Units:
        return _Units(self.units, self.proportion)

    def _p_column(self):
        """The p-values the report prints: adjusted ones under an adjustment."""
        t = self.comparison.table
        if self.comparison.adjust is None:
            return t.pvalue, t.pvalue_at_floor
        return t.pvalue_adjusted, t.pvalue_adjusted_at_floor

    def _p_header(self) -> str:
        adj = self.comparison.adjust
        return "p" if adj is None else f"p ({adj}-adjusted)"

    def _flaky_text(self) -> tuple[str, str]:
        ks = self.runs
        if (ks["k_max"] <= 1).all():
            return (
                "k=1: run-to-run variation cannot be measured (one run per input)",
                "",
            )
        f = self.flaky
        if not len(f):
            return "not computed (the value column is not a numeric score)", ""
        system = f.columns[0]
        parts = []
        for s, r in ks.iterrows():
            if r["k_max"] <= 1:
                parts.append(f"{s}: k=1: run-to-run variation cannot be measured")
                continue
            mine = f[f[system] == s]
            multi = int((mine.n_runs > 1).sum())
            n_flaky = int(mine.flaky.sum())
            of = (
                f"{n_flaky} of {self.n_inputs}"
                if multi == self.n_inputs
                else f"{n_flaky} of the {multi} inputs with 2+ runs"
            )
            parts.append(f"{s}: {of}")
        top = f[f.flaky].sort_values("share", ascending=False, kind="stable")
        top = top.head(self.max_flaky)
        keys = list(f.columns[1 : f.columns.get_loc("n_runs")])
        top_text = ", ".join(
            f"{_name(tuple(r[keys]) if len(keys) > 1 else r[keys[0]])} "
            f"({r[system]}, pass rate {r.pass_rate:.2f})"
            for _, r in top.iterrows()
        )
        return ", ".join(parts), top_text

    def _k_text(self) -> str:
        """Runs per input of every system: ``"a: k=5, b: k=4.5 (3-5)"``."""
        return ", ".join(
            f"{s}: k={r['k_mean']:.3g}"
            + (f" ({r['k_min']}-{r['k_max']})" if r["k_min"] != r["k_max"] else "")
            for s, r in self.runs.iterrows()
        )

    def _score_rows(self, u: _Units) -> list[tuple[str, str, str]]:
        """``(system, score, interval)`` of every system, in ``u``."""
        est = self.scores
        share = est.mc_error()["mc_error_share"].to_numpy()
        return [
            (
                str(s),
                u(est.estimate[s]),
                f"[{u(est.low[s])}, {u(est.high[s])}]"
                + (
                    " (zero width: no spread in the bootstrap, not certainty)"
                    if est.low[s] == est.high[s]
                    else _mc_flag(share[i])
                ),
            )
            for i, s in enumerate(est.groups)
        ]

    def _judgment(self, row, decision: str, why: str) -> str:
        """One pair's judgment: does the gap exclude 0, clear the mme, and so?"""
        if row.degenerate:
            zero = "the exact bound (no spread in the bootstrap)"
        else:
            zero = "the interval"
        zero += f" {'excludes' if row.excludes_zero else 'includes'} 0"
        clears = (
            ""
            if self.mme is None
            else (
                "; it clears the minimum meaningful effect"
                if row.clears_mme
                else "; it does not clear the minimum meaningful effect"
            )
        )
        return f"{row.b} vs {row.a}: {zero}{clears} -> {decision}: {why}"

    def _gap_rows(self, u: _Units) -> tuple[list[tuple], list[str]]:
        """``(pair, gap, interval, p, decision)`` of every pair, and its judgment."""
        comp = self.comparison
        decisions = _judge(
            comp.table,
            comp.mme,
            comp.adjust,
            comp.confidence_level,
            comp.alternative,
            comp.metric,
            fmt=u,
        )
        pv, floor = self._p_column()
        share = (
            np.zeros(len(comp.table))
            if comp.gap_distribution is None
            else comp.mc_error()["mc_error_share"].to_numpy()
        )
        gaps, judgments = [], []
        for i, row in enumerate(comp.table.itertuples(index=False)):
            decision, why = decisions[i]
            gaps.append(
                (
                    f"{row.b} - {row.a}",
                    u(row.gap, signed=True),
                    f"[{u(row.low, signed=True)}, {u(row.high, signed=True)}]"
                    + _mc_flag(share[i]),
                    _fmt_p(pv.iloc[i], bool(floor.iloc[i])),
                    decision,
                )
            )
            judgments.append(self._judgment(row, decision, why))
        return gaps, judgments

    def _method_text(self) -> str:
        """How the scores and the gaps were computed, in one phrase."""
        comp = self.comparison
        return (
            f"{self.scores.confidence_level:.0%} {self.scores.method} "
            f"{self.scores.strategy} bootstrap, {self.scores.n_resamples} resamples; "
            f"gaps: {comp.method}"
            + (f", p-values {comp.adjust}-adjusted" if comp.adjust else "")
        )

    def _lines(self) -> dict:
        u = self._u()
        k_text = self._k_text()
        scores = self._score_rows(u)
        gaps, judgments = self._gap_rows(u)
        flaky_text, top_text = self._flaky_text()
        mme = (
            "not set (set it before running the comparison)"
            if self.mme is None
            else u(self.mme)
        )
        return dict(
            k_text=k_text,
            scores=scores,
            gaps=gaps,
            judgments=judgments,
            flaky_text=flaky_text,
            top_text=top_text,
            mme=mme,
            method=self._method_text(),
            units=u.statement,
        )

    def to_text(self) -> str:
        """Plain text, one fact a line."""
        p = self._lines()
        out = [
            f"Evaluation report for {self.value!r}, metric {self.metric} "
            f"({p['method']})",
            f"Units: {p['units']}.",
            f"1. Inputs N = {self.n_inputs}; runs per input {p['k_text']}",
            "2-3. Scores with intervals:",
        ]
        out += [f"   {s}: {e} {ci}" for s, e, ci in p["scores"]]
        out.append(f"4. Paired gaps (b - a) with intervals, {self._p_header()}:")
        out += [f"   {n}: {g} {ci}, p = {pv} ({d})" for n, g, ci, pv, d in p["gaps"]]
        out.append(f"5. Minimum meaningful effect: {p['mme']}")
        out.append(f"Flaky inputs (runs disagree): {p['flaky_text']}")
        if p["top_text"]:
            out.append(f"   most run-to-run variance: {p['top_text']}")
        out += [f"Decision: {j}" for j in p["judgments"]]
        return "\n".join(out)

    def to_markdown(self) -> str:
        """Markdown with two small tables (no extra dependency); every value escaped."""
        p = self._lines()
        md = _md
        out = [
            f"**Evaluation report** for {md(self.value)}, metric {md(self.metric)} "
            f"({md(p['method'])})",
            "",
            f"- Units: {md(p['units'])}",
            f"- Inputs N = {self.n_inputs}; runs per input {md(p['k_text'])}",
            f"- Minimum meaningful effect: {md(p['mme'])}",
            f"- Flaky inputs (runs disagree): {md(p['flaky_text'])}",
            "",
            "| system | score | interval |",
            "|---|---|---|",
        ]
        out += [f"| {md(s)} | {md(e)} | {md(ci)} |" for s, e, ci in p["scores"]]
        out += [
            "",
            f"| gap (b - a) | estimate | interval | {md(self._p_header())} | decision |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {md(n)} | {md(g)} | {md(ci)} | {md(pv)} | {md(d)} |"
            for n, g, ci, pv, d in p["gaps"]
        ]
        out += [""] + [f"- **Decision**: {md(j)}" for j in p["judgments"]]
        return "\n".join(out)

    def to_html(self, *, full: bool = True, plots: bool = True) -> str:
        """A self-contained HTML page (or a fragment); every value escaped.

        Parameters
        ----------
        full : bool
            True: a complete page (``<!DOCTYPE html>``, a viewport for phones,
            inline CSS) to save and send. False: the ``<div>`` alone, with its
            scoped styles, for a notebook (``_repr_html_``) or another page.
        plots : bool
            Embed the scores and the gaps as inline SVG (needs matplotlib;
            without it a note says so). The page loads nothing from elsewhere:
            no URLs, fonts or scripts.

        Examples
        --------
        >>> import evalci
        >>> df = evalci.load_example()
        >>> rep = df.evalci.report("correct", cluster="input_id", mme=0.02,
        ...                        n_resamples=500, rng=0)
        >>> page = rep.to_html()
        >>> page.startswith("<!DOCTYPE html>"), "http" in page
        (True, False)
        >>> rep.to_html(full=False, plots=False).startswith('<div class="evalci-report">')
        True
        """
        p = self._lines()
        body = _html_body(self, p, plots)
        if not full:
            return f'<div class="evalci-report"><style>{_CSS}</style>{body}</div>'
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>Evaluation report: {html.escape(self.value)}</title>"
            f'<style>{_CSS}</style></head><body><div class="evalci-report">'
            f"{body}</div></body></html>\n"
        )

    def to_frame(self) -> pd.DataFrame:
        """Tidy frame: one row per system score and one per paired gap.

        Estimates, intervals, standard errors and ``mme`` are in the report's
        ``units``. ``p`` is the p-value the report prints (adjusted under an
        adjustment; ``"< 0.0001"`` when it is only a bound), next to the
        numeric ``pvalue`` / ``pvalue_adjusted`` and their ``*_at_floor`` flags.
        """
        scale = self._u().scale
        s = self.scores.to_frame()
        system_col = s.columns[0]
        s = s.rename(columns={system_col: "b"}).assign(kind="score", a=None)
        g = self.comparison.to_frame().rename(columns={"gap": "estimate"})
        g["kind"] = "gap"
        pv, floor = self._p_column()
        g["p"] = [_fmt_p(v, bool(f)) for v, f in zip(pv, floor, strict=True)]
        cols = ["kind", "a", "b", "estimate", "low", "high", "standard_error"]
        pcols = [
            "pvalue",
            "pvalue_adjusted",
            "pvalue_at_floor",
            "pvalue_adjusted_at_floor",
            "p",
            "decision",
        ]
        out = pd.concat(
            [s[cols + ["n_inputs"]], g[cols + pcols + ["n_inputs"]]],
            ignore_index=True,
        )
        for c in ("estimate", "low", "high", "standard_error"):
            out[c] = out[c] * scale
        out["mme"] = None if self.mme is None else self.mme * scale
        out["units"] = self.units
        return out

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        return self.to_html(full=False)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


# --- the HTML page ------------------------------------------------------------

#: scoped to .evalci-report, so the fragment can sit in a notebook; system
#: fonts only (nothing to download); tables scroll sideways on a phone
_CSS = (
    ".evalci-report{font-family:system-ui,-apple-system,'Segoe UI',Roboto,"
    "'Helvetica Neue',Arial,sans-serif;line-height:1.45;color:#1f2328;"
    "max-width:60rem;margin:0 auto;padding:1rem;font-size:16px}"
    ".evalci-report h1{font-size:1.4rem;margin:0 0 .25rem}"
    ".evalci-report h2{font-size:1.1rem;margin:1.5rem 0 .5rem;"
    "border-bottom:1px solid #d0d7de;padding-bottom:.2rem}"
    ".evalci-report .lede{color:#59636e;margin:0 0 1rem}"
    ".evalci-report ul{padding-left:1.2rem;margin:.3rem 0}"
    ".evalci-report .scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}"
    ".evalci-report table{border-collapse:collapse;margin:.5rem 0;"
    "font-variant-numeric:tabular-nums}"
    ".evalci-report caption{text-align:left;color:#59636e;font-size:.9rem}"
    ".evalci-report th,.evalci-report td{padding:.3rem .6rem;text-align:left;"
    "border-bottom:1px solid #d0d7de;vertical-align:top}"
    ".evalci-report th{background:#f6f8fa}"
    ".evalci-report tr:nth-child(even) td{background:#fbfcfd}"
    ".evalci-report td:first-child{word-break:break-word;min-width:8rem}"
    ".evalci-report .summary{font-weight:600;margin:.3rem 0}"
    ".evalci-report .verdicts{list-style:none;padding:0}"
    ".evalci-report .verdict{border-left:.35rem solid #8c959f;"
    "background:#f6f8fa;padding:.5rem .75rem;margin:.5rem 0;border-radius:.25rem;"
    "word-break:break-word}"
    ".evalci-report .badge{display:inline-block;font-weight:600;"
    "padding:0 .4rem;border-radius:.75rem;color:#fff;background:#6e7781;"
    "margin-right:.4rem}"
    ".evalci-report .better{border-color:#1a7f37}"
    ".evalci-report .better .badge{background:#1a7f37}"
    ".evalci-report .worse{border-color:#cf222e}"
    ".evalci-report .worse .badge{background:#cf222e}"
    ".evalci-report .equivalent{border-color:#0969da}"
    ".evalci-report .equivalent .badge{background:#0969da}"
    ".evalci-report .inconclusive{border-color:#9a6700}"
    ".evalci-report .inconclusive .badge{background:#9a6700}"
    ".evalci-report figure{margin:.75rem 0}"
    ".evalci-report figcaption,.evalci-report .note{color:#59636e;font-size:.9rem}"
    ".evalci-report svg{display:block}"
    "@media (max-width:30rem){.evalci-report{font-size:15px;padding:.5rem}"
    ".evalci-report th,.evalci-report td{padding:.25rem .4rem}}"
)

#: CSS class of each decision of :func:`evalci.compare.decide`
_DECISION_CLASS = {
    "better": "better",
    "worse": "worse",
    "equivalent within ±mme": "equivalent",
    "inconclusive": "inconclusive",
    "no detectable difference": "no-difference",
}


#: the most rows a forest plot on the page gets (465 pairs of 31 systems do not)
_MAX_PLOT_ROWS = 100


def _html_table(caption: str, header, rows) -> str:
    """A ``<table>`` in its scrolling box; every cell escaped."""
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>"
        for row in rows
    )
    return (
        f'<div class="scroll"><table><caption>{esc(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _html_verdicts(gaps, judgments) -> str:
    """One coloured box per pair: its decision, then the judgment in words."""
    esc = html.escape
    items = "".join(
        f'<li class="verdict {_DECISION_CLASS.get(g[4], "other")}">'
        f'<span class="badge">{esc(g[4])}</span>{esc(j)}</li>'
        for g, j in zip(gaps, judgments, strict=True)
    )
    counts = pd.Series([g[4] for g in gaps]).value_counts()
    order = [d for d in _DECISION_CLASS if d in counts.index]  # better first
    order += [d for d in counts.index if d not in _DECISION_CLASS]
    summary = ", ".join(f"{counts[d]} {esc(d)}" for d in order)
    pairs = "1 pair" if len(gaps) == 1 else f"{len(gaps)} pairs"
    return f'<p class="summary">{pairs}: {summary}</p><ul class="verdicts">{items}</ul>'


def _html_plot(kind: str, labels, est, low, high, **kw) -> str:
    """One forest plot as an inline ``<svg>`` in a ``<figure>``.

    ``kind`` names the figure in its ids, its accessible name and caption
    (fixed text: user strings reach the SVG only as drawn paths, never as
    markup). Over ``_MAX_PLOT_ROWS`` rows, a note instead. Raises ImportError
    without matplotlib.
    """
    from evalci.reporting import plots as plotting

    if len(labels) > _MAX_PLOT_ROWS:
        return (
            f'<p class="note">No {kind} plot: {len(labels)} rows are more than '
            f"{_MAX_PLOT_ROWS} a page shows legibly; the table holds every one"
            + (" (pass baseline= for one gap per system)." if kind == "gaps" else ".")
            + "</p>"
        )
    if kind == "gaps":
        kw["styles"] = plotting.DECISION_STYLE
    fig = plotting._figure(labels)
    plotting.forest(labels, est, low, high, ax=fig.axes[0], **kw)
    what = {
        "scores": "each system's score with its interval",
        "gaps": "each paired gap with its interval, coloured by decision",
    }[kind]
    svg = plotting._inline_svg(fig, f"evalci-{kind}", f"Forest plot: {what}")
    return f"<figure>{svg}<figcaption>Forest plot: {what}.</figcaption></figure>"


def _html_plots(rep: Report, p: dict) -> tuple[str, str]:
    """The scores' and the gaps' figures in the report's units, or a note."""
    u = rep._u()
    scores, comp = rep.scores, rep.comparison
    t = comp.table
    decisions = [g[4] for g in p["gaps"]]
    unit = "percentage points" if u.units == "points" else "fraction"
    try:
        fig_scores = _html_plot(
            "scores",
            [str(s) for s in scores.groups],
            u.scale * np.asarray(scores.estimate, dtype=float),
            u.scale * np.asarray(scores.low, dtype=float),
            u.scale * np.asarray(scores.high, dtype=float),
            xlabel=f"{rep.metric} ({unit})",
        )
        fig_gaps = _html_plot(
            "gaps",
            # two lines a pair: a narrower figure, legible on a phone
            [f"{b}\nminus {a}" for a, b in zip(t.a, t.b, strict=True)],
            u.scale * t.gap.to_numpy(dtype=float),
            u.scale * t.low.to_numpy(dtype=float),
            u.scale * t.high.to_numpy(dtype=float),
            xlabel=f"gap b - a ({unit})",
            zero=0.0,
            band=None if rep.mme is None else u.scale * rep.mme,
            categories=decisions,
        )
    except ImportError:
        note = (
            '<p class="note">Plots need matplotlib (pip install '
            "'evalci-stats[plot]'); the tables hold every number.</p>"
        )
        return note, ""
    return fig_scores, fig_gaps


def _html_body(rep: Report, p: dict, plots: bool) -> str:
    """The page's content: verdicts first, then facts, scores and gaps."""
    esc = html.escape
    fig_scores, fig_gaps = _html_plots(rep, p) if plots else ("", "")
    flaky = f"<li>Flaky inputs (runs disagree): {esc(p['flaky_text'])}</li>"
    if p["top_text"]:
        flaky += f"<li>Most run-to-run variance: {esc(p['top_text'])}</li>"
    return (
        "<h1>Evaluation report</h1>"
        f'<p class="lede">{esc(rep.value)}, metric {esc(rep.metric)} '
        f"({esc(p['method'])})</p>"
        f"<h2>Verdicts</h2>{_html_verdicts(p['gaps'], p['judgments'])}"
        "<h2>The numbers behind them</h2><ul>"
        f"<li>Units: {esc(p['units'])}</li>"
        f"<li>Inputs N = {rep.n_inputs}; runs per input {esc(p['k_text'])}</li>"
        f"<li>Minimum meaningful effect: {esc(p['mme'])}</li>{flaky}</ul>"
        "<h2>Scores</h2>"
        + _html_table(
            "Each system's score", ("system", "score", "interval"), p["scores"]
        )
        + fig_scores
        + "<h2>Paired gaps</h2>"
        + _html_table(
            "Each pair's gap, b - a",
            ("gap (b - a)", "estimate", "interval", rep._p_header(), "decision"),
            p["gaps"],
        )
        + fig_gaps
    )


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
    """The validated arguments and the rows ``comparison`` used: ``(args, frame)``.

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
    missing : {'raise', 'drop'}
        Inputs present for one system but not another: raise, or drop them
        with a warning (as in :func:`evalci.compare`).
    dropna : bool
        Drop rows whose value is missing instead of raising.
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
    args, frame = _used_rows(
        comparison, data, value, cluster_cols, system, method, missing, dropna, shared
    )
    input_cols = list(args.input) or cluster_cols  # the unit runs are counted in
    counts = successes is not None
    units, proportion = _units(units, frame, args, counts)
    scores = core.cluster_ci(
        frame,
        value,
        cluster_cols,
        by=system,
        method=_boot_method(method),
        rng=root,
        **shared,
    )
    return Report(
        scores=scores,
        comparison=comparison,
        runs=_runs(frame, system, input_cols, trials if counts else None),
        flaky=_flaky_table(frame, args, system, input_cols, successes, trials),
        n_inputs=int(frame.groupby(input_cols).ngroups),
        mme=mme,
        value=f"{successes}/{trials}" if counts else str(value),
        units=units,
        max_flaky=max_flaky,
        metric=comparison.metric,
        proportion=proportion,
    )
