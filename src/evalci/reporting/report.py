"""Flaky inputs and seed 002's reporting habit.

Seed 002, "A Practical Reporting Habit": for every version comparison report
N and k, each version's score with its interval, the paired gap with its
interval and the minimum meaningful effect; then flag unstable inputs and
state whether the gap's interval excludes 0 and clears the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base import text as _text
from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_frame,
    check_option,
)
from evalci.engine import bootstrap as core
from evalci.engine import resampling as _rs
from evalci.engine.missing import note as _missing_words
from evalci.engine.results import BootstrapResult
from evalci.methods.compare.decisions import _check_mme, _fmt_p, _judge
from evalci.methods.compare.paired import _boot_method, _bounded, _paired_rows
from evalci.methods.compare.paired import compare as _compare
from evalci.methods.compare.result import ComparisonResult
from evalci.metrics import Metric
from evalci.reporting.flaky import flaky
from evalci.reporting.html import _CSS, _html_body

__all__ = ["flaky", "report", "Report"]

_UNITS = ("points", "fraction")


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
    """The validated arguments and the rows ``comparison`` used: ``(args, rows)``.

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
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing sample or a missing input means, as in
        :func:`evalci.compare`; under ``"bounds"`` each score is bounded as
        by :func:`evalci.cluster_ci` and each gap as by ``compare``.
        Whenever something is missing the report says what, per system
        ("scored 183 of 200 runs; 17 errored").
    dropna : bool
        Deprecated: ``dropna=True`` is ``missing="drop"``.
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
    args, rows = _used_rows(
        comparison, data, value, cluster_cols, system, method, missing, dropna, shared
    )
    input_cols = list(args.input) or cluster_cols  # the unit runs are counted in
    counts = successes is not None
    # "bounds": each score bounded too; the tables read the scored runs
    frame = rows.systems
    scored = frame[frame[value].notna()] if rows.bounds else frame
    units, proportion = _units(units, scored, args, counts)
    scores = core.cluster_ci(
        frame,
        value,
        cluster_cols,
        by=system,
        method=_boot_method(method),
        rng=root,
        missing="bounds" if rows.bounds else "raise",
        **shared,
    )
    frame = scored
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
