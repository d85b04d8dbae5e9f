"""Variance components per facet (a G-study) and the variance of a score's mean.

Balanced cells (every cell present, the same runs in each) use the expected
mean squares of :mod:`~evalci.methods.facets.anova`, closed form at any
size. Anything else (empty cells, uneven runs) uses restricted maximum
likelihood (:func:`~evalci.methods.facets.reml.reml`), fitted on rows that
keep each cell's mean and within-cell sum of squares, which is all the
likelihood reads. Which one was used is the result's ``estimator``.

The score is the mean of the present cells' means. Under the random-effects
model its variance is ``sum_a sigma2_a * w_a``, with ``w_a`` the sum over the
levels of effect ``a`` of (present cells in the level / present cells)^2,
and ``sigma2_e * sum_c 1 / (n_c C^2)`` for the runs: ``1 / prod(levels)``
when balanced. Its degrees of freedom are Satterthwaite's,
``2 V^2 / (w' Cov w)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalci._base.lazy import stats
from evalci.methods.facets.anova import effects_of, mean_squares, solve_components
from evalci.methods.facets.cells import Cells
from evalci.methods.facets.reml import reml

__all__ = ["MAX_REML_LEVELS", "Fit", "component_names", "fit_group", "mean_weights"]

#: Random-effect levels REML handles (a dense matrix of this side).
MAX_REML_LEVELS = 8_000


@dataclass(frozen=True)
class Fit:
    """Variance components of one group and the variance of its mean.

    ``names`` are the effects (``"input"``, ``"input:template"``, ...) then
    ``"residual"``; ``variance`` truncated at 0, ``raw`` as estimated (ANOVA
    may be negative), ``cov`` their covariance, ``weight`` each component's
    weight in the variance of the mean.
    """

    names: list
    variance: np.ndarray
    raw: np.ndarray
    cov: np.ndarray
    weight: np.ndarray
    estimate: float
    estimator: str

    @property
    def mean_variance(self) -> float:
        """Variance of the score under the random-effects model."""
        return float(self.weight @ self.variance)

    @property
    def df(self) -> float:
        """Satterthwaite's degrees of freedom of :attr:`mean_variance`."""
        spread = float(self.weight @ self.cov @ self.weight)
        if not spread > 0:
            return np.inf
        return 2.0 * self.mean_variance**2 / spread

    def intervals(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """Satterthwaite chi-square intervals per component.

        ``nu = 2 sigma2^2 / Var(sigma2)``, ``[nu s2 / chi2_hi, nu s2 / chi2_lo]``
        when ``nu >= 2``; a component estimated at 0, or with fewer degrees
        of freedom (a chi-square interval then reaches past any useful
        bound), gets ``[0, s2 + z * se]``.
        """
        se = np.sqrt(np.clip(np.diag(self.cov), 0, None))
        tail = (1 - level) / 2
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            nu = 2 * self.variance**2 / se**2
            low = nu * self.variance / stats.chi2.ppf(1 - tail, nu)
            high = nu * self.variance / stats.chi2.ppf(tail, nu)
        flat = ~(self.variance > 0) | ~(nu >= 2)
        low = np.where(flat, 0.0, low)
        high = np.where(flat, self.variance + stats.norm.ppf(1 - tail) * se, high)
        return low, high


def component_names(dims, effects) -> list:
    """``"input"``, ``"input:template"``, ..., ``"residual"``."""
    names = [":".join(dims[d] for d in e) for e in effects]
    return [*names, "residual"]


def mean_weights(present: np.ndarray, n: np.ndarray, effects) -> np.ndarray:
    """Each component's weight in the variance of the mean of cell means."""
    total = present.sum()
    out = []
    for e in effects:
        rest = tuple(d for d in range(present.ndim) if d not in e)
        per_level = present.sum(axis=rest)
        out.append(float(np.sum((per_level / total) ** 2)))
    runs = np.where(present, n, np.inf)
    out.append(float(np.sum(1.0 / runs) / total**2))
    return np.asarray(out)


def fit_group(cells: Cells, g: int) -> Fit:
    """The G-study of group ``g``: ANOVA when balanced, else REML."""
    n, s, q = _used(cells.n[g], cells.s[g], cells.q[g])
    present = n > 0
    m = np.where(present, s / np.maximum(n, 1), 0.0)
    estimate = float(m[present].mean())
    replicated = bool((n > 1).any())
    effects = effects_of(n.ndim, top=replicated)
    if present.all() and (n == n.flat[0]).all():
        raw, cov = solve_components(mean_squares(n, s, q))
        estimator = "anova"
    else:
        raw, cov = _reml_components(cells, n, s, q, effects)
        estimator = "reml"
    weight = mean_weights(present, n, effects)
    return Fit(component_names(cells.dims, effects),
               np.clip(raw, 0.0, None), raw, cov, weight, estimate, estimator)


def _used(n, s, q):
    """The group's cells on the levels it uses (a group may hold some inputs only)."""
    present = n > 0
    keep = [present.any(axis=tuple(j for j in range(n.ndim) if j != d))
            for d in range(n.ndim)]
    if all(k.all() for k in keep):
        return n, s, q
    pick = np.ix_(*keep)
    return n[pick], s[pick], q[pick]


def _pseudo_rows(n, s, q):
    """Rows with each cell's mean and within-cell sum of squares, cell index."""
    cell = np.flatnonzero(n.ravel() > 0)
    runs = n.ravel()[cell].astype(np.int64)
    mean = s.ravel()[cell] / runs
    within = np.clip(q.ravel()[cell] - s.ravel()[cell] * mean, 0, None)
    idx = np.repeat(np.arange(len(cell)), runs)
    y = mean[idx]
    first = np.cumsum(runs) - runs
    shift = np.sqrt(within / 2)
    two = runs >= 2
    y[first[two]] += shift[two]
    y[first[two] + 1] -= shift[two]
    return y, cell[idx]


def _reml_components(cells: Cells, n, s, q, effects):
    levels = sum(int(np.prod([n.shape[d] for d in e])) for e in effects)
    if levels > MAX_REML_LEVELS:
        raise ValueError(
            f"these unbalanced cells need restricted maximum likelihood over "
            f"{levels:,} random-effect levels (inputs, facet levels and their "
            f"interactions), more than {MAX_REML_LEVELS:,}; fill the design "
            "(every cell, the same runs) for the closed-form ANOVA, or fit the "
            "components on a subsample of inputs (a pilot)."
        )
    y, cell = _pseudo_rows(n, s, q)
    coords = np.unravel_index(cell, n.shape)
    codes = {}
    for e in effects:
        sub = [coords[d] for d in e]
        codes[":".join(map(str, e))] = np.ravel_multi_index(sub, [n.shape[d] for d in e])
    fit = reml(y, codes)
    cov = np.nan_to_num(fit.variance_cov, nan=0.0)
    return np.asarray(fit.variances, dtype=float), cov
