"""The leaderboard result: :class:`Leaderboard` (its table, pairs, rank
probabilities, Markdown, plot, fragility); the intervals it holds are
computed in :mod:`evalci.methods.ranks.ranking`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base import text as _text
from evalci.engine.results import BootstrapResult

# ====================================================================== result
__all__ = ["Leaderboard"]


@dataclass(frozen=True, repr=False)
class Leaderboard:
    """Systems ranked with score intervals, rank intervals and tie groups.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per system, best first: ``system, estimate, low, high`` (the
        score and its marginal percentile interval), ``rank`` (1 = best;
        tied estimates share the best rank), ``rank_low, rank_high`` (the
        simultaneous rank interval), ``marginal_rank_low, marginal_rank_high``
        (the percentile interval of that system's bootstrap rank, one system
        at a time), ``tie_group`` (1 = the top group).
    pairs : pandas.DataFrame
        One row per pair ``(a, b)`` with ``a`` ranked above ``b``: ``gap``
        (``a - b`` on the metric's scale), ``standard_error`` (bootstrap),
        ``low, high`` (the simultaneous interval of the gap, ``max-t``
        only), ``pvalue_adjusted`` (Holm's, or the q-values of ``bh``/``by``),
        ``separated``.
    better : pandas.DataFrame
        Boolean ``(G, G)``, systems in table order: ``better.loc[a, b]`` is
        True when ``a`` is significantly better than ``b``.
    rank_distribution : ndarray
        Bootstrap ranks ``(G, n_resamples)``, systems in table order.
    scores : BootstrapResult
        The bootstrap behind it (every system, the same draws).
    method : str
        The pairwise tests behind the rank intervals: ``"max-t"``,
        ``"stepdown"``, ``"holm"``, or the false discovery rate ``"bh"``,
        ``"by"`` (see :func:`leaderboard`).
    critical_value : float or None
        The ``max-t`` critical value (first step of ``stepdown``); None for
        ``holm``, ``bh``, ``by``, and when no pair's gap has bootstrap spread
        (each pair is then decided by the exact sign test).
    confidence_level : float
        Family-wise level of the rank intervals and the tests, and the level
        of each score interval in ``table``.
    higher_is_better : bool
        Whether rank 1 is the highest score (False: the lowest, e.g. an error
        rate).
    input_scores : pandas.DataFrame or None
        Per-input score of every system (mean-type metrics, from
        :func:`leaderboard`), which :meth:`fragility` reads; None otherwise.
    """

    table: pd.DataFrame = field(repr=False)
    pairs: pd.DataFrame = field(repr=False)
    better: pd.DataFrame = field(repr=False)
    rank_distribution: np.ndarray = field(repr=False)
    scores: BootstrapResult = field(repr=False)
    method: str = "max-t"
    critical_value: float | None = None
    confidence_level: float = 0.95
    higher_is_better: bool = True
    input_scores: pd.DataFrame | None = field(default=None, repr=False)

    def fragility(self, *, flip: str = "decision") -> pd.DataFrame:
        """Adjacent pairs (``a`` ranked just above ``b``) and the fewest
        inputs whose removal flips each: :mod:`evalci.methods.compare.fragility`.

        ``flip="decision"``: whether the pair is separated, by the paired
        test at the board's critical value (max-t and step-down: its first
        step; Holm: Bonferroni over all pairs, a little stricter) -- the
        exact sign test for 0/1 scores, else the normal test with a greedy
        search (an upper bound). ``flip="order"``: ``b`` ends strictly
        ahead of ``a`` (exact).

        Parameters
        ----------
        flip : {'decision', 'order'}
            What a removal must flip: the pair's separation (default) or the
            order of the two scores.

        Returns
        -------
        pandas.DataFrame
            ``a, b, gap, separated`` and ``fragility``, ``fragility_inputs``,
            ``fragility_test``, ``fragility_exact``, ``fragility_significant``.
        """
        from scipy import stats

        from evalci.methods.compare import fragility_table

        if self.input_scores is None:
            raise ValueError(
                "fragility() needs per-input scores: build the board with "
                "evalci.leaderboard(...) and metric='mean' or 'accuracy' on "
                "inputs that are the resampled clusters (no `input=`)."
            )
        names = list(self.table.system)
        adjacent = list(zip(names[:-1], names[1:], strict=True))
        key = self.pairs.set_index(["a", "b"])
        shown = key.loc[adjacent, ["gap", "separated"]].reset_index()
        n_pairs = len(names) * (len(names) - 1) // 2
        crit = self.critical_value
        alpha = (
            2 * stats.norm.sf(crit)
            if crit is not None
            else (1 - self.confidence_level) / n_pairs
        )
        # the per-input gap in a's favour: a - b (b - a when lower is better)
        up = self.higher_is_better
        extra = fragility_table(
            self.input_scores,
            [(b, a) if up else (a, b) for a, b in adjacent],
            confidence_level=1 - alpha,
            flip=flip,
        )
        return pd.concat([shown, extra], axis=1)

    def to_frame(self) -> pd.DataFrame:
        """The per-system table (a copy)."""
        return self.table.copy()

    def rank_probabilities(self) -> pd.DataFrame:
        """Share of resamples in which each system (row) takes each rank (column)."""
        g = len(self.table)
        counts = np.stack(
            [np.bincount(r - 1, minlength=g) for r in self.rank_distribution]
        )
        return pd.DataFrame(
            counts / self.rank_distribution.shape[1],
            index=pd.Index(self.table.system, name="system"),
            columns=pd.RangeIndex(1, g + 1, name="rank"),
        )

    def _header(self) -> str:
        how = {
            "max-t": "max-t over all pairs",
            "stepdown": "step-down max-t over all pairs",
            "holm": "Holm over all pairs",
            "bh": "Benjamini-Hochberg false discovery rate over all pairs",
            "by": "Benjamini-Yekutieli false discovery rate over all pairs",
        }[self.method]
        crit = (
            f", critical value {self.critical_value:.3g}"
            if self.critical_value is not None
            else ""
            if self.method in ("holm", "bh", "by")
            else ", no pair with bootstrap spread: exact sign tests"
        )
        s = self.scores
        order = "higher" if self.higher_is_better else "lower"
        kind = "FDR" if self.method in ("bh", "by") else "simultaneous"
        return (
            f"{len(self.table)} systems, {order} is better, "
            f"{self.confidence_level:.0%} {kind} rank intervals ({how}{crit}), "
            f"{s.strategy} bootstrap ({s.n_resamples} resamples), metric={s.metric}"
            f"{s._missing_note()}"  # "; missing ('drop'): scored 112 of 120 runs"
        )

    def _shown(self) -> pd.DataFrame:
        t = self.table
        return pd.DataFrame(
            {
                "rank": t["rank"],
                "system": t.system,
                "estimate": t.estimate,
                "low": t.low,
                "high": t.high,
                "rank_interval": [
                    f"[{a}, {b}]" for a, b in zip(t.rank_low, t.rank_high, strict=True)
                ],
                "marginal": [
                    f"[{a}, {b}]"
                    for a, b in zip(
                        t.marginal_rank_low, t.marginal_rank_high, strict=True
                    )
                ],
                "tie_group": t.tie_group,
            }
        )

    def __repr__(self) -> str:
        body = _text.table_text(self._shown())
        return f"Leaderboard: {_text.terminal(self._header())}\n{body}"

    def _repr_html_(self) -> str:
        return _text.result_html("Leaderboard", self._header(), self._shown())

    def to_markdown(self, digits: int = 3) -> str:
        """The leaderboard as a Markdown table (no extra dependency).

        Parameters
        ----------
        digits : int
            Decimals of the scores and their intervals (default 3).

        Returns
        -------
        str
        """
        level = f"{self.confidence_level:.0%}"
        head = (
            f"| rank | system | score | {level} CI | {level} rank interval "
            f"(simultaneous) | marginal rank interval | tie group |"
        )
        rows = [head, "|" + "---|" * 7]
        for r in self.table.itertuples(index=False):
            rows.append(
                f"| {r.rank} | {_text.markdown(r.system)} | {r.estimate:.{digits}f} | "
                f"[{r.low:.{digits}f}, {r.high:.{digits}f}] | "
                f"[{r.rank_low}, {r.rank_high}] | "
                f"[{r.marginal_rank_low}, {r.marginal_rank_high}] | {r.tie_group} |"
            )
        return "\n".join(rows)

    def plot(self, ax=None):
        """Systems best first: score intervals, rank intervals written at the
        right, tie groups shaded in alternating bands and coloured (needs
        matplotlib). Returns the matplotlib Axes.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; default a new figure.

        Returns
        -------
        matplotlib.axes.Axes
        """
        return _plot(self, ax)


def _plot(board: Leaderboard, ax):
    t = board.table
    g = len(t)
    if ax is None:
        try:
            import matplotlib.pyplot as plt
        except ImportError:  # pragma: no cover - only without the extra
            raise ImportError(
                "plotting needs matplotlib: pip install 'evalci-stats[plot]'."
            ) from None
        ax = plt.subplots(figsize=(7, 0.8 + 0.3 * g))[1]
    y = np.arange(g)[::-1]
    est = t.estimate.to_numpy(float)
    err = np.vstack([est - t.low.to_numpy(float), t.high.to_numpy(float) - est])
    groups = t.tie_group.to_numpy()
    for k in np.unique(groups):
        rows = y[groups == k]
        if k % 2 == 0:  # alternate bands, so neighbouring groups stay apart
            ax.axhspan(rows.min() - 0.5, rows.max() + 0.5, color="0.92", zorder=0)
        colour = f"C{(k - 1) % 10}"
        sel = groups == k
        ax.errorbar(
            est[sel], y[sel], xerr=err[:, sel], fmt="o", color=colour, capsize=3
        )
    for yi, lo, hi in zip(y, t.rank_low, t.rank_high, strict=True):
        ax.annotate(
            f"rank [{lo}, {hi}]",
            xy=(1.01, yi),
            xycoords=("axes fraction", "data"),
            va="center",
            fontsize=8,
        )
    ax.set_yticks(y)
    ax.set_yticklabels([_text.plot_label(s) for s in t.system])  # never mathtext
    ax.set_ylim(-0.6, g - 0.4)
    ax.set_xlabel(_text.plot_label(board.scores.metric))
    ax.set_title(
        f"{board.confidence_level:.0%} score intervals; simultaneous rank "
        f"intervals ({board.method}); shading: tie groups",
        fontsize=9,
    )
    return ax
