"""Pictures of intervals (matplotlib, the ``plot`` extra): the drawing under
the result objects' ``plot()`` methods and :mod:`evalci.plotting`.

They read a result's attributes and import nothing of evalci but
:func:`evalci._base.text.plot_label` (the same layer), so every layer's
results can draw themselves without importing upward; the public
module is :mod:`evalci.reporting.plots` (also ``evalci.plotting``), which adds
the width plot of the planning methods.

Four plots, each a function that draws on an Axes and returns it:

* :func:`intervals` -- a forest plot of a :class:`~evalci.BootstrapResult`,
  one row per group, sorted by estimate;
* :func:`gaps` -- a :class:`~evalci.ComparisonResult`'s paired gaps, one row
  per pair, with the zero line, the ``±mme`` band and a colour per decision;
* :func:`widths` -- interval width against runs per input k: the predicted
  curve (seed 000's width factor sqrt(rho + (1 - rho) / k)) and the observed
  points of :func:`evalci.width_table`;
* :func:`distribution` -- the bootstrap distribution of one group with its
  estimate and interval.

:func:`forest` is the primitive under the first two. matplotlib is imported
inside the functions, so ``import evalci`` never needs it. Without ``ax`` a
new figure is made whose height grows with the number of rows, so 16 or 31
systems do not overlap. Every string that reaches matplotlib from the user's
data (names, metrics, titles) goes through ``plot_label``: a ``$`` in a name
is drawn as a ``$``, never read as mathtext.
"""

from __future__ import annotations

import re

import numpy as np

from evalci._base.text import as_written, plot_label

__all__ = ["distribution", "forest", "gaps", "intervals"]

#: colour and marker of each decision of :func:`evalci.decide`
#: (markers too, so the plot survives grey-scale printing and colour blindness)
DECISION_STYLE = {
    "better": ("#1a7f37", "^"),
    "worse": ("#cf222e", "v"),
    "equivalent within ±mme": ("#0969da", "s"),
    "no detectable difference": ("0.45", "o"),
    "inconclusive": ("#9a6700", "D"),
}
_OTHER_STYLE = ("0.3", "o")

#: figure size (inches): least width, height per row, fixed height, width of
#: the plotting area and of one label character
_WIDTH, _ROW, _MARGIN, _PLOT_AREA, _CHAR = 6.4, 0.32, 1.1, 3.6, 0.085


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - only without the extra
        raise ImportError(
            "plotting needs matplotlib: pip install 'evalci-stats[plot]'."
        ) from None
    return plt


def _figsize(labels) -> tuple[float, float]:
    """Width and height (inches) of a forest plot with one row per label.

    Taller by ``_ROW`` per row and line of its labels; wider than ``_WIDTH`` when the longest label
    needs it (about 0.085 inches a character at 10 points), so that a 3.6-inch
    plotting area always remains.
    """
    lines = [str(v).split("\n") for v in labels]
    longest = max((len(line) for label in lines for line in label), default=0)
    per_row = max((len(label) for label in lines), default=1)  # lines a label
    width = max(_WIDTH, _PLOT_AREA + _CHAR * longest)
    return (width, _MARGIN + _ROW * per_row * max(len(labels), 1))


def _axes(ax, labels=(), *, height: float | None = None):
    """``ax``, or the Axes of a new pyplot figure sized to the rows' labels
    (or ``height`` inches tall, ``_WIDTH`` wide)."""
    if ax is not None:
        return ax
    size = _figsize(labels) if height is None else (_WIDTH, height)
    return _pyplot().subplots(figsize=size, layout="constrained")[1]


def _figure(labels):
    """A standalone figure (no pyplot, no GUI) sized to the rows, with one Axes.

    For pages (:meth:`evalci.Report.to_html`): nothing is registered with
    pyplot, so nothing needs closing.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=_figsize(labels), layout="constrained")
    fig.subplots()
    return fig


def _order(estimate: np.ndarray, sort: bool) -> np.ndarray:
    """Row order, top first: by estimate, largest first (NaN last), or as given."""
    if not sort:
        return np.arange(len(estimate))
    key = np.where(np.isnan(estimate), -np.inf, estimate)
    return np.argsort(-key, kind="stable")


def _check_sort(sort):
    if not isinstance(sort, (bool, np.bool_)):
        raise TypeError(
            f"`sort` must be True (by estimate, largest at the top) or False "
            f"(keep the given order); got {as_written(sort)}."
        )


def forest(
    labels,
    estimate,
    low,
    high,
    *,
    ax=None,
    sort: bool = True,
    xlabel: str = "",
    title: str = "",
    zero: float | None = None,
    band: float | None = None,
    categories=None,
    styles=None,
):
    """Horizontal intervals, one row per label.

    Parameters
    ----------
    labels : sequence
        One label per row (shown as y tick labels, as written: a ``$`` is
        drawn, never read as mathtext; so are ``xlabel`` and ``title``).
    estimate, low, high : array_like
        Point estimates and interval ends, one per label.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure whose height grows with the rows.
    sort : bool
        True: rows by estimate, the largest at the top. False: the first label
        at the top, in the given order.
    xlabel, title : str
        The x-axis label and the title; default none.
    zero : float, optional
        Draw a vertical reference line there.
    band : float, optional
        Shade ``(-band, band)`` (the minimum meaningful effect around 0).
    categories : sequence of str, optional
        One category per row; each category is drawn in its own colour and
        marker (``styles``) and named in a legend.
    styles : dict, optional
        ``{category: (colour, marker)}``.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from evalci import plotting
    >>> ax = plotting.forest(["a", "b", "c"], [0.5, 0.7, 0.6],
    ...                      [0.4, 0.6, 0.5], [0.6, 0.8, 0.7])
    >>> [t.get_text() for t in ax.get_yticklabels()]  # bottom to top
    ['a', 'c', 'b']
    """
    _check_sort(sort)
    est = np.asarray(estimate, dtype=float).reshape(-1)
    lo = np.asarray(low, dtype=float).reshape(-1)
    hi = np.asarray(high, dtype=float).reshape(-1)
    labels = [str(v) for v in labels]
    cats = None if categories is None else list(categories)
    sizes = [len(labels), len(est), len(lo), len(hi)] + (
        [] if cats is None else [len(cats)]
    )
    if len(set(sizes)) > 1:
        raise ValueError(
            "`labels`, `estimate`, `low`, `high` (and `categories`) must have one "
            f"entry per row; got lengths {', '.join(map(str, sizes))}."
        )
    n = len(est)
    ax = _axes(ax, labels)
    order = _order(est, sort)
    y = np.empty(n)
    y[order] = np.arange(n)[::-1]  # the first row in `order` at the top
    if band is not None:
        ax.axvspan(-band, band, color="0.9", zorder=0, label=f"±{band:g} (mme)")
    if zero is not None:
        ax.axvline(zero, color="0.5", linewidth=1, zorder=1)
    cats = np.asarray(["_"] * n if cats is None else cats, dtype=object)
    styles = {} if styles is None else styles
    for cat in _first_seen(cats[order]):
        rows = np.flatnonzero(cats == cat)
        colour, marker = styles.get(
            cat, ("C0", "o") if categories is None else _OTHER_STYLE
        )
        # a segment and a marker, not errorbar: an estimate may lie outside
        # its interval (BCa, an exact bound), which errorbar cannot draw
        ax.hlines(y[rows], lo[rows], hi[rows], color=colour, linewidth=1.6, zorder=2)
        ax.plot(
            est[rows],
            y[rows],
            linestyle="none",
            marker=marker,
            color=colour,
            zorder=3,
            label="_nolegend_" if categories is None else plot_label(cat),
        )
    ax.set_yticks(np.arange(n))
    ax.set_yticklabels([plot_label(labels[i]) for i in order[::-1]])
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlabel(plot_label(xlabel))
    if title:
        ax.set_title(plot_label(title))
    if categories is not None or band is not None:
        _legend_below(ax)
    return ax


def _legend_below(ax):
    """The legend in one row under the x label, where it never hides a row.

    Anchored 0.5 inch below the Axes (a fixed offset, whatever the Axes'
    height); constrained layout makes room for it.
    """
    from matplotlib.transforms import ScaledTranslation

    handles, names = ax.get_legend_handles_labels()
    shift = ScaledTranslation(0, -0.5, ax.figure.dpi_scale_trans)
    ax.legend(
        handles,
        names,
        loc="upper center",
        bbox_to_anchor=(0.5, 0),
        bbox_transform=ax.transAxes + shift,
        ncols=min(len(names), 3),
        fontsize="small",
        frameon=False,
    )


def _first_seen(values) -> list:
    """Distinct values in order of first appearance (no pandas needed)."""
    seen: dict = {}
    for v in values:
        seen.setdefault(v, None)
    return list(seen)


def _group_labels(result) -> list[str]:
    if result.groups is None:
        return [str(result.metric)]
    return [
        " / ".join(map(str, k)) if isinstance(k, tuple) else str(k)
        for k in result.groups
    ]


def intervals(result, *, ax=None, sort: bool = True):
    """Forest plot of a :class:`~evalci.BootstrapResult`: each group's interval.

    Parameters
    ----------
    result : BootstrapResult
        Scores with their intervals, one row per group (or one without
        ``by``).
    ax : matplotlib.axes.Axes, optional
        Default: a new figure, 0.32 inches taller per group.
    sort : bool
        By estimate, the best at the top (default), or in the result's order.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import evalci
    >>> df = evalci.load_example()
    >>> res = df.evalci.cluster_ci("correct", "input_id", by="system",
    ...                            n_resamples=500, rng=0)
    >>> from evalci import plotting
    >>> ax = plotting.intervals(res)
    >>> len(ax.get_yticklabels())
    2
    """
    frame = result.to_frame()
    return forest(
        _group_labels(result),
        frame.estimate,
        frame.low,
        frame.high,
        ax=ax,
        sort=sort,
        xlabel=str(result.metric),
        title=f"{result.confidence_level:.0%} {result.method} "
        f"{result.strategy} bootstrap",
    )


def gaps(comparison, *, ax=None, sort: bool = True):
    """Paired gaps ``b - a`` of a :class:`~evalci.ComparisonResult`, one row per pair.

    A vertical line at 0, the band ``(-mme, mme)`` shaded when the comparison
    has a minimum meaningful effect, and each interval coloured (and marked)
    by its decision (:data:`DECISION_STYLE`), with a legend.

    Parameters
    ----------
    comparison : ComparisonResult
        Paired gaps from :func:`evalci.compare`, one row per pair.
    ax : matplotlib.axes.Axes, optional
        Default: a new figure, 0.32 inches taller per pair.
    sort : bool
        By gap, the largest at the top (default), or in the table's order.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import evalci
    >>> df = evalci.load_example()
    >>> comp = df.evalci.compare("correct", "input_id", mme=0.02,
    ...                          n_resamples=500, rng=0)
    >>> from evalci import plotting
    >>> ax = plotting.gaps(comp)
    >>> band = ax.patches[0]  # the ±mme band
    >>> round(band.get_x(), 3), round(band.get_x() + band.get_width(), 3)
    (-0.02, 0.02)
    """
    t = comparison.table
    return forest(
        [f"{b} - {a}" for a, b in zip(t.a, t.b, strict=True)],
        t.gap,
        t.low,
        t.high,
        ax=ax,
        sort=sort,
        xlabel=f"gap b - a ({comparison.metric})",
        title=f"paired gaps, {comparison.confidence_level:.0%} intervals",
        zero=0.0,
        band=comparison.mme,
        categories=list(t.decision),
        styles=DECISION_STYLE,
    )


def _group_index(result, group) -> int:
    """The row of ``group`` in the result's distribution (0 without groups)."""
    if result.groups is None:
        if group is not None:
            raise ValueError(
                f"`group` must be None for a result without groups; got {as_written(group)}."
            )
        return 0
    if group is None:
        if len(result.groups) == 1:
            return 0
        raise ValueError(
            "`group` must name one of the result's groups "
            f"{list(result.groups)[:5]}; got None."
        )
    try:
        return int(result.groups.get_loc(group))
    except KeyError:
        raise ValueError(
            f"`group` must be one of the result's groups {list(result.groups)[:5]}; "
            f"got {as_written(group)}."
        ) from None


def distribution(result, group=None, *, ax=None, bins="auto"):
    """Histogram of one group's bootstrap replicates, estimate and interval marked.

    Parameters
    ----------
    result : BootstrapResult
        A bootstrap result (it keeps its replicates).
    group : optional
        Which group (a value of ``result.groups``); needed when there are
        several.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.
    bins : int or str
        As :func:`numpy.histogram`.

    Returns
    -------
    matplotlib.axes.Axes
        A solid line at the estimate, dashed lines at the interval's ends.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import evalci
    >>> df = evalci.load_example()
    >>> res = df.evalci.cluster_ci("correct", "input_id", by="system",
    ...                            n_resamples=500, rng=0)
    >>> from evalci import plotting
    >>> ax = plotting.distribution(res, res.groups[0])
    >>> len(ax.lines)  # estimate, low, high
    3
    """
    i = _group_index(result, group)
    reps = np.atleast_2d(result.bootstrap_distribution)[i]
    frame = result.to_frame().iloc[i]
    ax = _axes(ax, height=3.6)
    ax.hist(reps[np.isfinite(reps)], bins=bins, color="0.75", edgecolor="white")
    ax.axvline(frame.estimate, color="C0", linewidth=2, label="estimate")
    how = plot_label(f"{result.confidence_level:.0%} {result.method} interval")
    ax.axvline(frame.low, color="C3", linestyle="--", label=how)
    ax.axvline(frame.high, color="C3", linestyle="--")
    ax.set_title(plot_label(_group_labels(result)[i]), fontsize="medium")
    ax.set_xlabel(plot_label(result.metric))
    ax.set_ylabel(f"replicates (of {len(reps)})")
    ax.legend(loc="best", fontsize="small", frameon=False)
    return ax


# --- inline SVG for pages --------------------------------------------------

_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r"(url\(#|href=\"#)([^)\"]+)")


def _inline_svg(fig, prefix: str, label: str) -> str:
    """``fig`` as an ``<svg>`` element to paste into an HTML page.

    No XML declaration, doctype, metadata or comments (matplotlib writes
    text as comments); no namespace URLs (the HTML parser supplies the SVG
    and xlink namespaces); ids prefixed with ``prefix`` so that several
    figures in one page do not share clip paths; text drawn as paths, so no
    font is needed; the width follows the page (``viewBox`` kept).
    ``label`` becomes the image's accessible name (escaped by the caller).
    """
    import io

    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": prefix}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
    width_px = round(fig.get_figwidth() * 96)
    svg = re.sub(
        r'^<svg([^>]*?) width="[^"]*" height="[^"]*"',
        rf'<svg\1 width="100%" style="max-width:{width_px}px;height:auto"'
        rf' role="img" aria-label="{label}"',
        svg,
        count=1,
    )
    return svg.strip()
