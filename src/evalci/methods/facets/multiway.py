"""The cluster-robust multiway standard error of a facet score (Cameron,
Gelbach and Miller 2011, "Robust inference with multiway clustering").

The score is the mean of the present cells' means, a linear statistic whose
influence of cell ``c`` is ``u_c = (m_c - mean) / C``. For a set ``S`` of
random dimensions, ``V_S = G_S / (G_S - 1) * sum over the levels of S of
(sum of u in the level)^2`` (``G_S`` non-empty levels: the one-way
cluster-robust variance clustered on the intersection of ``S``), and

    V = sum over non-empty S of (-1)^(|S| + 1) V_S,

inclusion-exclusion over the dimensions. It needs no model of the
components; with few levels of a facet it is noisy, and the interval uses
Student's t with ``min(G) - 1`` degrees of freedom (CGM section IV). When
the sum is not positive (possible in small samples), the largest one-way
variance is used instead (CGM's advice for a non-positive matrix), and
``adjusted`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

__all__ = ["MultiwaySE", "multiway_se"]


@dataclass(frozen=True)
class MultiwaySE:
    """``variance`` (CGM), ``df`` (``min(G) - 1``), ``one_way`` (the
    input-only cluster variance, for comparison), ``adjusted``."""

    variance: float
    df: float
    one_way: float
    adjusted: bool


def _clustered(u: np.ndarray, present: np.ndarray, dims: tuple) -> float:
    rest = tuple(d for d in range(u.ndim) if d not in dims)
    sums = u.sum(axis=rest)
    groups = int((present.sum(axis=rest) > 0).sum())
    if groups < 2:
        return 0.0
    return groups / (groups - 1) * float(np.sum(sums * sums))


def multiway_se(n: np.ndarray, s: np.ndarray) -> MultiwaySE:
    """CGM variance of one group's score from its cells' runs and sums."""
    present = n > 0
    m = np.where(present, s / np.maximum(n, 1), 0.0)
    total = present.sum()
    u = np.where(present, (m - m[present].mean()) / total, 0.0)
    k = u.ndim
    variance, one_way = 0.0, []
    for size in range(1, k + 1):
        for dims in combinations(range(k), size):
            v = _clustered(u, present, dims)
            variance += v if size % 2 else -v
            if size == 1:
                one_way.append(v)
    groups = [int((present.sum(axis=tuple(j for j in range(k) if j != d)) > 0).sum())
              for d in range(k)]
    adjusted = not variance > 0
    if adjusted:
        variance = max(one_way)
    return MultiwaySE(float(variance), float(min(groups) - 1), one_way[0], adjusted)
