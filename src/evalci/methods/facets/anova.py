"""Variance components of a balanced crossed design from expected mean squares.

A G-study in generalisability theory (Brennan 2001, ch. 3; Shavelson and
Webb 1991, ch. 3): every random dimension (inputs, templates, judges, ...) is
crossed with every other, each cell holds ``r`` runs. The mean square of an
effect ``a`` (a set of dimensions) has expectation

    E[MS_a] = sigma2_e + sum over effects b containing a of k_b sigma2_b,
    k_b = r * prod(levels of the dimensions not in b),

so the components are a linear map of the mean squares, solved top down
(Brennan's "algorithm"); negative estimates are kept for the others' solution
and reported as 0. With one run per cell the highest interaction and the run
noise are one component, named ``residual``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

__all__ = ["MeanSquares", "effects_of", "mean_squares", "solve_components"]


def effects_of(n_dims: int, *, top: bool = True) -> list[tuple]:
    """Every non-empty set of dimensions, by size then in order.

    ``top=False`` leaves out the set of all dimensions (confounded with the
    run noise when each cell holds one run).
    """
    out = [c for k in range(1, n_dims + 1) for c in combinations(range(n_dims), k)]
    return out if top else out[:-1]


@dataclass(frozen=True)
class MeanSquares:
    """Mean squares of a balanced design, the residual last.

    ``ms``, ``df`` per effect then the residual; ``coef`` the matrix of
    expected-mean-square coefficients (rows: mean squares, columns:
    components in the same order), so ``E[ms] = coef @ sigma2``.
    """

    effects: list
    ms: np.ndarray
    df: np.ndarray
    coef: np.ndarray


def _effect_ss(m: np.ndarray, effect: tuple, r: int) -> float:
    """Sum of squares of one effect from the cell means ``m`` (inclusion-exclusion)."""
    n_dims = m.ndim
    term = 0.0
    for k in range(len(effect) + 1):
        for sub in combinations(effect, k):
            rest = tuple(d for d in range(n_dims) if d not in sub)
            sign = -1.0 if (len(effect) - k) % 2 else 1.0
            term = term + sign * m.mean(axis=rest, keepdims=True)
    outer = np.prod([m.shape[d] for d in range(n_dims) if d not in effect])
    return float(r * outer * np.sum(term * term))


def mean_squares(n: np.ndarray, s: np.ndarray, q: np.ndarray) -> MeanSquares:
    """Mean squares of one group's balanced cells (every cell ``r`` runs)."""
    r = int(n.flat[0])
    m = s / r
    shape = m.shape
    with_top = r > 1
    effects = effects_of(m.ndim, top=with_top)
    ss = [_effect_ss(m, e, r) for e in effects]
    df = [float(np.prod([shape[d] - 1 for d in e])) for e in effects]
    if with_top:
        ss.append(float(np.sum(q - s * s / r)))
        df.append(float(m.size * (r - 1)))
    else:  # the top interaction, which holds the run noise
        top = tuple(range(m.ndim))
        ss.append(_effect_ss(m, top, 1))
        df.append(float(np.prod([k - 1 for k in shape])))
    coef = np.zeros((len(effects) + 1, len(effects) + 1))
    for i, a in enumerate(effects):
        for j, b in enumerate(effects):
            if set(a) <= set(b):
                coef[i, j] = r * np.prod([shape[d] for d in range(m.ndim) if d not in b])
    coef[:, -1] = 1.0
    ms = np.asarray(ss) / np.asarray(df)
    return MeanSquares(effects, ms, np.asarray(df), coef)


def solve_components(msq: MeanSquares) -> tuple[np.ndarray, np.ndarray]:
    """Unbiased (untruncated) components and their covariance.

    The covariance treats each mean square as ``E[MS] chi2_df / df``,
    independent (normal theory), with ``E[MS]`` estimated by ``MS``:
    ``Var(MS) = 2 MS^2 / df``.
    """
    inv = np.linalg.inv(msq.coef)
    raw = inv @ msq.ms
    cov = inv @ np.diag(2.0 * msq.ms**2 / msq.df) @ inv.T
    return raw, cov
