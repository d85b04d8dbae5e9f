"""Seed 002's report as one HTML page: inline CSS and SVG plots, nothing to
download, readable on a phone (:meth:`evalci.Report.to_html`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base import text as _text

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

#: CSS class of each decision of :func:`evalci.decide`
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
    esc = _text.for_html  # names from the data: control characters made visible
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
    esc = _text.for_html  # names from the data: control characters made visible
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
    from evalci._base import figures

    if len(labels) > _MAX_PLOT_ROWS:
        return (
            f'<p class="note">No {kind} plot: {len(labels)} rows are more than '
            f"{_MAX_PLOT_ROWS} a page shows legibly; the table holds every one"
            + (" (pass baseline= for one gap per system)." if kind == "gaps" else ".")
            + "</p>"
        )
    if kind == "gaps":
        kw["styles"] = figures.DECISION_STYLE
    fig = figures._figure(labels)
    figures.forest(labels, est, low, high, ax=fig.axes[0], **kw)
    what = {
        "scores": "each system's score with its interval",
        "gaps": "each paired gap with its interval, coloured by decision",
    }[kind]
    svg = figures._inline_svg(fig, f"evalci-{kind}", f"Forest plot: {what}")
    return f"<figure>{svg}<figcaption>Forest plot: {what}.</figcaption></figure>"


def _html_plots(rep, p: dict) -> tuple[str, str]:
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


def _html_body(rep, p: dict, plots: bool) -> str:
    """The page's content: verdicts first, then facts, scores and gaps."""
    esc = _text.for_html  # names from the data: control characters made visible
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
        + (
            f"<li>Missing samples: {esc(p['missing_text'])}</li>"
            if p["missing_text"]
            else ""
        )
        + f"<li>Minimum meaningful effect: {esc(p['mme'])}</li>{flaky}</ul>"
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
