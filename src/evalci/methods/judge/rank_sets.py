"""The result of :func:`~evalci.judge.ppi_preference` and its rank sets.

:class:`PPIRankResult` (ratings, intervals, rank sets, effective sample
size) and the simultaneous intervals on all rating differences behind the
rank sets: the ``max |t|`` critical value of the estimated joint normal (by
simulation) or Bonferroni's (Chatzi et al. 2024). A model's rank set runs
from ``1 + #(models surely better)`` to ``G - #(models surely worse)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci.methods.judge.intervals import _z

__all__ = ["RANK_METHODS", "PPIRankResult", "critical_value", "rank_sets", "result"]

RANK_METHODS = ("max-t", "bonferroni")
#: draws of the joint normal behind the ``max |t|`` critical value
N_DRAWS = 100_000


# ==================================================================== result
@dataclass(frozen=True, repr=False)
class PPIRankResult:
    """Prediction-powered Bradley-Terry ratings with intervals and rank sets.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model, best first: ``system``, ``rating`` (Elo-like
        scale), ``standard_error``, ``low``, ``high`` (marginal interval),
        ``rank_low``, ``rank_high`` (simultaneous rank set), ``theta``
        (natural log-strength), ``effective_n``, ``n_battles``, ``n_labelled``.
    covariance : pandas.DataFrame
        Of the ratings (rating scale; the anchor's row is 0).
    effective_sample_size : float
        ``n_labelled * trace(V_human) / trace(V)``: the human labels a
        human-only fit would need for the same total variance of the ratings.
    n_labelled, n_battles : int
        Battles with a human verdict; all battles.
    lambda_ : float
        The weight on the judge (0: human only, 1: PPI).
    confidence_level : float
        Of the marginal intervals and of the rank sets (simultaneous).
    rank_method : {'max-t', 'bonferroni'}
        How the simultaneous intervals on the differences were made.
    critical_value : float
        Of the simultaneous intervals on the differences behind the rank sets.
    """

    table: pd.DataFrame = field(repr=False)
    covariance: pd.DataFrame = field(repr=False)
    effective_sample_size: float
    n_labelled: int
    n_battles: int
    lambda_: float
    confidence_level: float
    rank_method: str
    critical_value: float

    def _col(self, name: str) -> pd.Series:
        return self.table.set_index("system")[name]

    @property
    def ratings(self) -> pd.Series:
        """Ratings by model (best first)."""
        return self._col("rating")

    @property
    def standard_errors(self) -> pd.Series:
        return self._col("standard_error")

    @property
    def low(self) -> pd.Series:
        return self._col("low")

    @property
    def high(self) -> pd.Series:
        return self._col("high")

    @property
    def rank_low(self) -> pd.Series:
        return self._col("rank_low")

    @property
    def rank_high(self) -> pd.Series:
        return self._col("rank_high")

    def to_frame(self) -> pd.DataFrame:
        """The per-model table (a copy) with the level and ``lambda_``."""
        out = self.table.copy()
        out["confidence_level"] = self.confidence_level
        out["lambda_"] = self.lambda_
        return out

    def __repr__(self) -> str:
        return (
            f"PPIRankResult({len(self.table)} models, n_labelled={self.n_labelled}, "
            f"n_battles={self.n_battles}, lambda_={self.lambda_:.3g}, "
            f"effective_sample_size={self.effective_sample_size:.4g})\n"
            + self.table[["system", "rating", "low", "high", "rank_low", "rank_high"]]
            .round(1)
            .to_string(index=False)
        )


# ================================================================ rank sets
def critical_value(cov, level, method, rng) -> float:
    """Critical value of simultaneous intervals on all differences of ``theta``."""
    g = len(cov)
    i, j = np.triu_indices(g, 1)
    if method == "bonferroni":
        return _z(1 - (1 - level) / len(i))
    sd = np.sqrt(np.maximum(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0.0))
    vals, vecs = np.linalg.eigh(cov)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    gen = np.random.default_rng(rng)
    top = []
    for _ in range(10):
        z = gen.standard_normal((N_DRAWS // 10, g)) @ root.T
        top.append(
            (np.abs(z[:, i] - z[:, j]) / np.where(sd > 0, sd, np.inf)).max(axis=1)
        )
    return float(np.quantile(np.concatenate(top), level))


def rank_sets(theta, cov, crit):
    """``1 + #(surely better)`` and ``G - #(surely worse)`` per model."""
    diff = theta[:, None] - theta[None, :]  # row minus column
    sd = np.sqrt(
        np.maximum(np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov, 0.0)
    )
    better = diff - crit * sd > 0  # row surely better than column
    return 1 + better.sum(axis=0), len(theta) - better.sum(axis=1)


def result(d, theta, lmat, anchor_score, cov, level, ranks, per_n, n_eff, lam,
            rank_method, crit) -> PPIRankResult:  # fmt: skip
    rating = anchor_score + lmat @ theta
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    z = _z(level)
    counts = np.bincount(np.r_[d.a, d.b], minlength=d.g)
    labelled = np.bincount(np.r_[d.a[d.lab], d.b[d.lab]], minlength=d.g)
    table = pd.DataFrame(
        {
            "system": list(d.models),
            "rating": rating,
            "standard_error": se,
            "low": rating - z * se,
            "high": rating + z * se,
            "rank_low": ranks[0],
            "rank_high": ranks[1],
            "theta": theta,
            "effective_n": per_n,
            "n_battles": counts,
            "n_labelled": labelled,
        }
    )
    order = np.argsort(-rating, kind="stable")
    return PPIRankResult(
        table=table.iloc[order].reset_index(drop=True),
        covariance=pd.DataFrame(cov, index=d.models, columns=d.models),
        effective_sample_size=n_eff,
        n_labelled=int(d.lab.sum()),
        n_battles=len(d.a),
        lambda_=float(lam),
        confidence_level=level,
        rank_method=rank_method,
        critical_value=crit,
    )
