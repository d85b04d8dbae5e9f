"""Results of the facets family: :class:`GStudy` (variance components) and
:class:`FacetResult` (an interval that generalises over random facets)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["FacetResult", "GStudy"]


def _one(values: np.ndarray, groups):
    """A float without groups, else a Series indexed by group."""
    if groups is None:
        return float(values[0])
    return pd.Series(values, index=groups)


@dataclass(frozen=True, repr=False)
class GStudy:
    """Variance components per facet: a G-study (Brennan 2001).

    Attributes
    ----------
    components : pandas.DataFrame
        One row per (group,) component: ``variance`` (truncated at 0),
        ``low``/``high`` (Satterthwaite chi-square interval), ``share`` (of
        one score's variance: the components' sum), ``share_of_mean`` (of the
        variance of the reported mean, under this design), and ``raw`` (the
        estimate before truncation; ANOVA's may be negative).
    estimate : float or pandas.Series
        The score: the mean of the present cells' means.
    mean_variance, df : float or pandas.Series
        Variance of the score under the random-effects model, and its
        Satterthwaite degrees of freedom.
    estimator : str or pandas.Series
        ``"anova"`` (balanced cells: expected mean squares) or ``"reml"``.
    dims : tuple of str
        The random dimensions: the input column, then the random facets.
    levels : dict
        Levels per random dimension.
    n_cells, n_empty_cells, n_runs : int
        Cells of the crossed design, those with no run, and runs (rows).
    confidence_level : float
        The level of the components' intervals.
    groups : pandas.Index or None
        The fixed facets' groups (``by``), or None.
    """

    components: pd.DataFrame
    estimate: object
    mean_variance: object
    df: object
    estimator: object
    dims: tuple
    levels: dict
    n_cells: int
    n_empty_cells: int
    n_runs: int
    confidence_level: float
    groups: pd.Index | None = None

    def shares(self) -> pd.DataFrame:
        """``share`` and ``share_of_mean`` per component (and group)."""
        return self.components[["share", "share_of_mean"]]

    def plot(self, ax=None, *, of: str = "share"):
        """Bar chart of the components' shares, one bar a group.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's Axes by default.
        of : {'share', 'share_of_mean'}
            The share of one score's variance, or of the reported mean's.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from evalci._base.figures import _axes

        ax = _axes(ax, [str(i) for i in self.components.index])
        frame = self.components[of]
        if self.groups is not None:
            frame.unstack(0).plot.barh(ax=ax)
        else:
            frame.plot.barh(ax=ax, color="C0")
        label = "of one score" if of == "share" else "of the mean's variance"
        ax.set_xlabel(f"share {label}")
        ax.set_ylabel("")
        ax.invert_yaxis()
        return ax

    def __repr__(self) -> str:
        head = (f"GStudy({' x '.join(f'{d} ({k})' for d, k in self.levels.items())}, "
                f"estimator={self.estimator!r}, {self.n_empty_cells} of "
                f"{self.n_cells} cells empty)")
        return head + "\n" + self.components.round(6).to_string()


@dataclass(frozen=True, repr=False)
class FacetResult:
    """A confidence interval that generalises over random facets.

    Attributes
    ----------
    estimate, low, high, standard_error : float or pandas.Series
        The score (mean of the present cells' means), the interval, and its
        standard error. Series indexed by group with ``by`` or for gaps.
    df : float or pandas.Series
        Degrees of freedom of the t quantile (``"components"``: Satterthwaite;
        ``"multiway"``: fewest levels - 1; ``"pigeonhole"``: inf).
    naive_standard_error : float or pandas.Series
        The input-clustered standard error that treats the facets as fixed
        (what one SE over inputs reports), for comparison.
    method : {'components', 'multiway', 'pigeonhole'}
        How the interval was made.
    confidence_level : float
        The level of the interval.
    facets, fixed : tuple of str
        The random facets generalised over, and the fixed ones (``by``).
    cluster : str
        The input column.
    g_study : GStudy
        The variance components behind the interval.
    bootstrap_distribution : ndarray or None
        ``"pigeonhole"`` only: replicates, shape (B,) or (G, B).
    n_resamples : int
        Replicates drawn (0 for the analytic methods).
    adjusted : bool or pandas.Series
        ``"multiway"`` only: the CGM sum was not positive and the largest
        one-way variance was used.
    groups : pandas.Index or None
        The groups (``by``, or the gaps), or None.
    """

    estimate: object
    low: object
    high: object
    standard_error: object
    df: object
    naive_standard_error: object
    method: str
    confidence_level: float
    facets: tuple
    fixed: tuple
    cluster: str
    g_study: GStudy
    bootstrap_distribution: np.ndarray | None = None
    n_resamples: int = 0
    adjusted: object = False
    groups: pd.Index | None = field(default=None)

    def interval(self) -> tuple:
        """``(low, high)``."""
        return self.low, self.high

    def to_frame(self) -> pd.DataFrame:
        """One row per group: estimate, low, high, SE, df, naive SE."""
        cols = {
            "estimate": self.estimate, "low": self.low, "high": self.high,
            "standard_error": self.standard_error, "df": self.df,
            "naive_standard_error": self.naive_standard_error,
        }
        if self.groups is None:
            return pd.DataFrame({k: [v] for k, v in cols.items()})
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        level = f"{self.confidence_level:.0%}"
        over = ", ".join((self.cluster, *self.facets))
        if self.groups is None:
            return (f"FacetResult({self.estimate:.4f}, {level} CI [{self.low:.4f}, "
                    f"{self.high:.4f}], SE {self.standard_error:.4f} (inputs only: "
                    f"{self.naive_standard_error:.4f}), method={self.method!r}, "
                    f"random: {over})")
        return (f"FacetResult(method={self.method!r}, {level} CI, random: {over})\n"
                + self.to_frame().round(4).to_string())
