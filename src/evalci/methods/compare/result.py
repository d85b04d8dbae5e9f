"""The result of a paired comparison: :class:`ComparisonResult` (its table,
gap distributions, re-reading, Monte-Carlo error, printing and plot)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base import text as _text
from evalci._base.text import as_written
from evalci.engine import intervals as _intervals
from evalci.engine.missing import note as _missing_words
from evalci.methods.compare.decisions import _fmt_p, _pair_level

__all__ = ["ComparisonResult"]


@dataclass(frozen=True)
class ComparisonResult:
    """Paired gaps ``b - a``, one row per pair.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per pair: ``a, b, estimate_a, estimate_b, gap, low, high,
        standard_error, pvalue, pvalue_adjusted, pvalue_at_floor,
        pvalue_adjusted_at_floor, excludes_zero, clears_mme, decision,
        explanation, degenerate, wins, losses, ties, n_inputs, n_clusters``
        (``n_clusters``: the resampled clusters, ``n_inputs`` unless inputs
        nest in clusters).
        ``pvalue_at_floor``: the bootstrap p-value is below ``1 / n_resamples``,
        the resolution of the bootstrap; ``pvalue`` then holds that bound
        (print it as ``"< 0.0001"``, not as a value). ``pvalue_adjusted_at_floor``:
        likewise for the adjusted p-value. ``degenerate``: the bootstrap
        distribution of the gap has no spread; ``low``/``high`` then hold an
        exact bound (see :func:`compare`), or NaN when none exists.
    gap_distribution : ndarray or None
        Bootstrap replicates of each gap, ``(n_pairs, n_resamples)`` (None for
        ``method="clt"``).
    method, strategy, adjust, alternative, weight, metric : str
        How the gaps were made, as passed to :func:`compare`: the interval
        method, the resampling strategy, the multiplicity adjustment (None
        without one), the alternative hypothesis, the estimand's weight and
        the metric's name.
    confidence_level : float
        The level asked for; with ``adjust="bonferroni"`` each interval is
        made at ``1 - (1 - confidence_level) / n_pairs`` (simultaneous).
    mme : float or None
        Minimum meaningful effect.
    n_resamples : int or None
        Bootstrap resamples behind the intervals and p-values (None for
        ``method="clt"``).
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing sample or input was taken to mean (see :func:`compare`).
    counts : pandas.DataFrame or None
        When something was missing: one row per compared system with
        ``n_attempted``, ``n_scored``, ``n_missing`` runs, by cause when the
        table says (``n_errored``, ``n_hit_limit``), ``n_inputs_unscored``
        and ``n_inputs_missing`` (inputs the system has no row of).
    bound_distributions : tuple of two ndarrays or None
        ``missing="bounds"`` only: the replicates of the lower and of the
        upper worst-case gap, each ``(n_pairs, n_resamples)``
        (``gap_distribution`` is then None).
    input_scores : pandas.DataFrame or None
        Per-input score of every system (one column each, indexed by input)
        for mean-type metrics, which :meth:`fragility` reads; None otherwise.
        The array the wins and losses are counted from, kept: ``n_inputs x
        n_systems`` floats.
    """

    table: pd.DataFrame = field(repr=False)
    gap_distribution: np.ndarray | None = field(repr=False)
    method: str
    strategy: str
    confidence_level: float
    adjust: str | None
    alternative: str
    mme: float | None
    n_resamples: int | None
    weight: str
    metric: str
    missing: str = "raise"
    counts: pd.DataFrame | None = field(default=None, repr=False)
    bound_distributions: tuple | None = field(default=None, repr=False)
    input_scores: pd.DataFrame | None = field(default=None, repr=False)

    def to_frame(self) -> pd.DataFrame:
        """The per-pair table (a copy)."""
        return self.table.copy()

    def fragility(self, *, flip: str = "decision") -> pd.DataFrame:
        """The table with the fewest inputs whose removal flips each decision.

        Adds ``fragility`` (how many inputs; missing when no removal flips
        it, as for two systems with the same score on every input), ``fragility_inputs`` (their ids), ``fragility_test``,
        ``fragility_exact`` and ``fragility_significant`` (the test's
        decision on all the inputs). 0/1 per-input scores: the exact sign
        test on the wins and losses (an exact count); other scores: the
        paired normal test with a greedy search (an upper bound on the
        fewest). The level is each pair's (Bonferroni-widened with
        ``adjust="bonferroni"``; unadjusted under Holm). See
        :mod:`evalci.methods.compare.fragility`.

        Parameters
        ----------
        flip : {'decision', 'order'}
            Flip the test's significance (default), or make the system
            ahead strictly behind (exact for any scores).

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> import evalci
        >>> gaps = evalci.load_example().evalci.compare("correct", cluster="input_id",
        ...                                             n_resamples=500, rng=0)
        >>> row = gaps.fragility().iloc[0]
        >>> row.decision, int(row.fragility), row.fragility_test
        ('worse', 1, 'paired CLT')
        """
        from evalci.methods.compare.fragility import fragility_table

        if self.input_scores is None:
            raise ValueError(
                "fragility() needs per-input scores, which this comparison does "
                "not keep: it covers metric='mean' or 'accuracy' on inputs that "
                "are the resampled clusters (no `input=`), without "
                "missing='bounds'."
            )
        level = _pair_level(self.confidence_level, self.adjust, len(self.table))
        pairs = list(zip(self.table["a"], self.table["b"], strict=True))
        extra = fragility_table(
            self.input_scores,
            pairs,
            confidence_level=level,
            alternative=self.alternative,
            flip=flip,
        )
        return pd.concat([self.table.reset_index(drop=True), extra], axis=1)

    def mc_error(self) -> pd.DataFrame:
        """Monte-Carlo SEs of each gap's endpoints and p-value (another seed, same data).

        Columns ``a, b, mc_error_low, mc_error_high, mc_error_pvalue,
        mc_error_share`` (the larger endpoint SE over the width). Endpoints as
        in :meth:`evalci.BootstrapResult.mc_error` (for BCa as if the
        acceleration were zero, a second-order difference); the p-value is a
        share of replicates, so its SE is binomial: ``sqrt(p (2 - p) / B)``
        two-sided, ``sqrt(p (1 - p) / B)`` one-sided. Degenerate pairs (exact
        bounds, no spread) have none: 0.

        Examples
        --------
        >>> import evalci
        >>> gaps = evalci.load_example().evalci.compare("correct", cluster="input_id",
        ...                                             rng=0)
        >>> float(gaps.mc_error().mc_error_pvalue.iloc[0]) < 0.005
        True
        """
        if self.gap_distribution is None and self.bound_distributions is None:
            raise ValueError(
                "method='clt' draws no resamples, so it has no Monte-Carlo error."
            )
        t = self.table
        se_low, se_high, b = self._endpoint_errors()
        p = t["pvalue"].to_numpy(dtype=float)
        spread = p * (2.0 - p) if self.alternative == "two-sided" else p * (1.0 - p)
        se_p = np.sqrt(np.clip(spread, 0.0, None) / b)
        flat = t["degenerate"].to_numpy(dtype=bool)
        se_low, se_high, se_p = (
            np.where(flat, 0.0, x) for x in (se_low, se_high, se_p)
        )
        width = (t["high"] - t["low"]).to_numpy(dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(flat, 0.0, np.maximum(se_low, se_high) / width)
        return pd.DataFrame(
            {
                "a": t["a"],
                "b": t["b"],
                "mc_error_low": se_low,
                "mc_error_high": se_high,
                "mc_error_pvalue": se_p,
                "mc_error_share": share,
            }
        )

    def _endpoint_errors(self):
        """``(se_low, se_high, n_resamples)``; under ``missing="bounds"`` the
        low end's from the lower worst-case gap, the high end's from the upper."""
        t = self.table
        if self.bound_distributions is None:
            dists = (self.gap_distribution,) * 2
            centres = (t["gap"].to_numpy(dtype=float),) * 2
        else:
            dists = self.bound_distributions
            centres = tuple(
                t[c].to_numpy(float) for c in ("gap_bound_low", "gap_bound_high")
            )
        n_pairs, b = dists[0].shape
        level = _pair_level(self.confidence_level, self.adjust, n_pairs)
        se = [
            _intervals.endpoint_mc_error(
                d, c, self.method, level, alternative=self.alternative
            )
            for d, c in zip(dists, centres, strict=True)
        ]
        return se[0][0], se[1][1], b

    def _missing_note(self) -> str:
        """One line per system of what was missing (or "")."""
        if self.counts is None:
            return ""
        lines = [  # system names are user text: no control character printed
            f"  {_text.terminal(name)}: {_missing_words(row)}"
            for name, row in self.counts.iterrows()
        ]
        what = "worst-case bounds" if self.missing == "bounds" else "missing"
        return f"\n{what} (missing={as_written(self.missing)}):\n" + "\n".join(lines)

    def _shown(self) -> pd.DataFrame:
        cols = [
            "a",
            "b",
            "estimate_a",
            "estimate_b",
            "gap",
            "low",
            "high",
            "pvalue",
            "pvalue_adjusted",
            "decision",
        ]
        if self.adjust is None:
            cols.remove("pvalue_adjusted")
        if self.table["wins"].notna().any():
            cols += ["wins", "losses", "ties"]
        shown = self.table[cols].copy()
        # a p-value at the bootstrap's floor is a bound: print "< 0.0001"
        for col in ("pvalue", "pvalue_adjusted"):
            if col in shown:
                shown[col] = [
                    _fmt_p(v, f)
                    for v, f in zip(
                        self.table[col], self.table[f"{col}_at_floor"], strict=True
                    )
                ]
        return shown

    def _header(self) -> str:
        adj = f", {self.adjust}-adjusted p-values" if self.adjust else ""
        mme = "" if self.mme is None else f", minimum meaningful effect {self.mme:g}"
        how = (
            "normal (CLT)"
            if self.method == "clt"
            else f"{self.method} {self.strategy} bootstrap ({self.n_resamples} resamples)"
        )
        return (
            f"paired gaps b - a, {self.confidence_level:.0%} {how}{adj}{mme}, "
            f"metric={self.metric}"
        )

    def __repr__(self) -> str:
        body = _text.table_text(self._shown())
        header = _text.terminal(self._header())
        return f"ComparisonResult: {header}\n{body}{self._missing_note()}"

    def plot(self, ax=None, *, sort=True):
        """Paired gaps with 0, the ±mme band and decisions: :func:`evalci.plotting.gaps`.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; default a new figure.
        sort : bool
            Pairs by gap (True, the default) or in table order.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from evalci._base.figures import gaps

        return gaps(self, ax=ax, sort=sort)

    def _repr_html_(self) -> str:
        note = "; ".join(self._missing_note().strip().split("\n  "))
        return _text.result_html(
            "ComparisonResult", self._header(), self._shown(), note
        )
