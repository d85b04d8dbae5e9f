"""The :class:`Report` of seed 002's reporting habit, and how it reads.

What :func:`evalci.report` builds (:mod:`evalci.reporting.report`): the five
things and two judgments of seed 002, in one unit, as plain text, Markdown,
HTML (:mod:`evalci.reporting.html`) or a tidy frame. Every name from the
data is made safe for where it goes (:mod:`evalci._base.text`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base import text as _text
from evalci._base.text import as_written
from evalci.engine.missing import note as _missing_words
from evalci.engine.results import BootstrapResult
from evalci.methods.compare.decisions import _fmt_p, _judge
from evalci.methods.compare.result import ComparisonResult
from evalci.reporting.html import _CSS, _html_body

__all__ = ["Report"]


# --- formatting -----------------------------------------------------------


def _md(text) -> str:
    """Markdown-safe text (:func:`evalci._base.text.markdown`): control
    characters visible, specials backslash-escaped, ``<>&`` as entities.

    Markdown renderers (Jupyter's among them) pass raw HTML through, so ``<``
    must not reach them as is; ``|`` would split a table cell.
    """
    return _text.markdown(text)


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
        flips = _flip_words(comp)
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
            judgments.append(self._judgment(row, decision, why) + flips[i])
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
            missing_text=self._missing_text(),
        )

    def _missing_text(self) -> str:
        """What was missing, per system: "a: scored 183 of 200 runs; 17 errored"."""
        comp = self.comparison
        if comp.counts is None:
            return ""
        parts = []
        for name, row in comp.counts.iterrows():
            words = _missing_words(row)
            parts.append(f"{name}: {words}")
        return f"{', '.join(parts)} (missing={as_written(comp.missing)})"

    def to_text(self) -> str:
        """Plain text, one fact a line; control characters in names made visible."""
        p = self._lines()
        out = [
            f"Evaluation report for {as_written(self.value)}, metric {self.metric} "
            f"({p['method']})",
            f"Units: {p['units']}.",
            f"1. Inputs N = {self.n_inputs}; runs per input {p['k_text']}",
        ]
        if p["missing_text"]:
            out.append(f"   missing samples: {p['missing_text']}")
        out += [
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
        # names come from the data: no control character reaches a terminal
        return "\n".join(_text.terminal(line) for line in out)

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
            *(
                [f"- Missing samples: {md(p['missing_text'])}"]
                if p["missing_text"]
                else []
            ),
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
            f"<title>Evaluation report: {_text.for_html(self.value)}</title>"
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


def _flip_words(comp) -> list[str]:
    """Per pair: " (flips if 3 inputs are removed: sign test)", or "" without
    per-input scores (see :meth:`ComparisonResult.fragility`)."""
    if comp.input_scores is None:
        return [""] * len(comp.table)
    out = []
    for r in comp.fragility().itertuples(index=False):
        if pd.isna(r.fragility):
            out.append(f" (no removal of inputs flips it: {r.fragility_test})")
            continue
        n = f"{'' if r.fragility_exact else 'at most '}{r.fragility}"
        verb = "input is" if r.fragility == 1 else "inputs are"
        out.append(f" (flips if {n} {verb} removed: {r.fragility_test})")
    return out
