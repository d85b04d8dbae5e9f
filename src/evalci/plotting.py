"""Forest plots of intervals (matplotlib, the ``plot`` extra)."""

from __future__ import annotations

import numpy as np


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - only without the extra
        raise ImportError(
            "plotting needs matplotlib: pip install 'evalci[plot]'."
        ) from None
    return plt.subplots(figsize=(6, 0.6 + 0.45 * 4))[1]


def forest(
    labels, estimate, low, high, *, ax=None, xlabel="", title="", zero=None, band=None
):
    """Horizontal intervals, one row per label, first label at the top.

    ``zero`` draws a vertical reference line; ``band`` shades ``(-band, band)``
    (the minimum meaningful effect around 0).
    """
    ax = _axes(ax)
    y = np.arange(len(labels))[::-1]
    est = np.asarray(estimate, dtype=float)
    err = np.vstack(
        [est - np.asarray(low, dtype=float), np.asarray(high, dtype=float) - est]
    )
    if band is not None:
        ax.axvspan(-band, band, color="0.9", zorder=0, label=f"±{band:g}")
    if zero is not None:
        ax.axvline(zero, color="0.5", linewidth=1, zorder=1)
    ax.errorbar(est, y, xerr=err, fmt="o", color="C0", capsize=3, zorder=2)
    ax.set_yticks(y)
    ax.set_yticklabels([str(v) for v in labels])
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    return ax
