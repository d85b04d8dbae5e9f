"""Pictures of intervals (matplotlib, the ``plot`` extra); also ``evalci.plotting``.

* :func:`intervals` -- a forest plot of a :class:`~evalci.BootstrapResult`,
  one row per group, sorted by estimate;
* :func:`gaps` -- a :class:`~evalci.ComparisonResult`'s paired gaps, one row
  per pair, with the zero line, the ``±mme`` band and a colour per decision;
* :func:`widths` -- interval width against runs per input k: the predicted
  curve (seed 000's width factor sqrt(rho + (1 - rho) / k)) and the observed
  points of :func:`evalci.width_table`;
* :func:`distribution` -- the bootstrap distribution of one group with its
  estimate and interval.

:func:`forest` is the primitive under the first two. The drawing of results
lives in :mod:`evalci._base.figures` (so results draw themselves without
importing this layer); this module adds the width plot.
"""

from __future__ import annotations

import numpy as np

from evalci._base.figures import (  # noqa: F401 - this module's API
    _axes,
    distribution,
    forest,
    gaps,
    intervals,
)
from evalci._base.text import as_written, plot_label
from evalci.methods.planning.widths import width_factor

__all__ = ["distribution", "forest", "gaps", "intervals", "widths"]

_WIDTH_COLUMNS = ("k", "rho", "predicted_factor", "predicted_width")


def _width_table_iv(table, y):
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            "`table` must be the DataFrame of evalci.width_table(...); "
            f"got {type(table).__name__}."
        )
    missing = [c for c in _WIDTH_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(
            f"`table` lacks the columns {missing}; pass the output of "
            "evalci.width_table(..., observed=True)."
        )
    if y not in ("width", "factor"):
        raise ValueError(
            f"`y` must be 'width' (the interval's width) or 'factor' (relative "
            f"to k = 1); got {as_written(y)}."
        )
    return list(table.columns[: table.columns.get_loc("k")])


def widths(table, *, ax=None, y: str = "width"):
    """Interval width against runs per input: predicted curve, observed points.

    Seed 000's figure "confidence interval width for k = 1, 2, ..., 5". The
    curve is the normal-approximation width at k (:func:`evalci.planning.
    predict_width`), drawn for every real k from 1 to the largest k of the
    table as the width at k = 1 times :func:`evalci.width_factor`
    ``(rho, k)``; the points are the cluster bootstrap's observed widths on
    the data's nested run subsamples (``width_table(..., observed=True)``).

    Parameters
    ----------
    table : pandas.DataFrame
        The output of :func:`evalci.width_table` (one curve per group;
        the points only when it was made with ``observed=True``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.
    y : {'width', 'factor'}
        Absolute width, or width relative to k = 1.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import evalci
    >>> df = evalci.load_example()
    >>> tab = evalci.width_table(df, "correct", "input_id", by="system",
    ...                                   observed=True, n_resamples=500, rng=0)
    >>> from evalci import plotting
    >>> ax = plotting.widths(tab)
    >>> ax.get_xlabel()
    'runs per input k'
    """
    by = _width_table_iv(table, y)
    ax = _axes(ax, height=4.2)
    groups = table.groupby(by, sort=False) if by else [((), table)]
    k_top = float(table["k"].max())
    grid = np.linspace(1.0, max(k_top, 1.0), 200)
    for i, (key, part) in enumerate(groups):
        name = " / ".join(map(str, key if isinstance(key, tuple) else (key,)))
        colour = f"C{i % 10}"
        part = part.sort_values("k")
        rho = float(part["rho"].iloc[0])
        scale = 1.0 if y == "factor" else float(part["predicted_width"].iloc[0])
        if np.isfinite(rho) and np.isfinite(scale):
            ax.plot(
                grid,
                scale * width_factor(rho, grid),
                color=colour,
                label=plot_label(name),
            )
        col = "observed_" + y
        if col in part:
            ax.plot(part["k"], part[col], "o", color=colour, markersize=5)
    if "observed_" + y in table:
        ax.plot([], [], "o", color="0.3", label="observed (bootstrap)")
    ax.plot([], [], "-", color="0.3", label="predicted")
    ax.set_xticks(np.unique(table["k"]))
    ax.set_xlabel("runs per input k")
    ax.set_ylabel("interval width" if y == "width" else "width relative to k = 1")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize="small", frameon=False)
    return ax
