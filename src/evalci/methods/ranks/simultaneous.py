"""The pairwise tests behind a leaderboard's simultaneous rank intervals.

Every pairwise gap and its replicates (:func:`pair_gaps`), and three
families of tests over them that control the family-wise error rate:
max-t (simultaneous gap intervals), Romano and Wolf's step-down max-t, and
Holm over the one-sided normal tests (see :func:`evalci.leaderboard`); and
Benjamini-Hochberg or Benjamini-Yekutieli over the same tests, which control
the false discovery rate instead.
"""

from __future__ import annotations

import numpy as np

from evalci._base.lazy import special
from evalci.methods.compare import fdr_adjusted, holm_adjusted

__all__ = ["pair_gaps", "max_t", "stepdown", "holm", "fdr"]

_TOL = 1e-12  # a gap's bootstrap spread below this (relative) is no spread


def _pair_index(g: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(a, b)`` of every pair ``a < b`` (``np.triu_indices``)."""
    return np.triu_indices(g, k=1)


def pair_gaps(score: np.ndarray, replicates: np.ndarray):
    """Every pairwise gap ``score[a] - score[b]`` (``a < b``) and its replicates.

    Returns ``(a, b, gap, gaps, se, flat)``: positions, gaps ``(P,)``,
    replicate gaps ``(P, B)``, bootstrap standard errors (``ddof=1``) and
    which gaps have no bootstrap spread.
    """
    a, b = _pair_index(len(score))
    gaps = replicates[a] - replicates[b]
    gap = score[a] - score[b]
    se = gaps.std(axis=1, ddof=1)
    flat = np.ptp(gaps, axis=1) <= _TOL * np.maximum(1.0, np.abs(gap))
    return a, b, gap, gaps, se, flat


def _standardised(gap, gaps, se, flat):
    """``t = gap / se`` and the centred bootstrap statistics ``(gaps - gap) / se``.

    Scaled by each gap's bootstrap standard error, not re-studentised within
    each resample (that would take a nested bootstrap); the max-t critical
    value stays asymptotically valid because the scale is consistent
    (Romano & Wolf 2005, section 3). Flat pairs get 0 (they leave the max).
    """
    s = gaps - gap[:, None]  # in place from here: one (P, B) array
    s /= np.where(flat, 1.0, se)[:, None]
    s[flat] = 0.0
    return _t(gap, se, flat), s


def _t(gap, se, flat):
    """``gap / se``, 0 where the gap has no spread."""
    return np.where(flat, 0.0, gap / np.where(flat, 1.0, se))


def _critical(max_stat: np.ndarray, level: float) -> float:
    """The ``level`` quantile of the max statistic, read conservatively (upper)."""
    return float(np.quantile(max_stat, level, method="higher"))


def max_t(gap, gaps, se, flat, level):
    """Single-step max-t: which pairs are separated, and the critical value.

    The ``level`` quantile ``c`` of ``max_p |gaps*_p - gap_p| / se_p`` over
    all pairs gives simultaneous intervals ``gap_p +- c se_p`` (Mogstad et
    al. 2024, section 3, with a nonparametric rather than their parametric
    bootstrap of the critical value);
    a pair is separated when its interval excludes 0.
    """
    t, s = _standardised(gap, gaps, se, flat)
    c = _critical(np.maximum(s.max(axis=0), -s.min(axis=0)), level)  # max |s|
    return np.abs(t) > c, c


def stepdown(gap, gaps, se, flat, level):
    """Romano & Wolf (2005) step-down max-t over the ordered hypotheses.

    The hypotheses are ``theta_a <= theta_b`` and ``theta_b <= theta_a`` for
    every pair (statistics ``t`` and ``-t``). Each step recomputes the
    critical value over the hypotheses not yet rejected and rejects those
    above it, until none is; the first step is :func:`max_t`. Returns
    ``(separated, first critical value)``.
    """
    t, s = _standardised(gap, gaps, se, flat)
    active = np.ones((2, len(t)), bool)  # rows: "a better", "b better"
    signed_t, first = np.stack([t, -t]), None
    while True:
        fwd = s[active[0]].max(axis=0, initial=-np.inf)
        bwd = -s[active[1]].min(axis=0, initial=np.inf)
        c = _critical(np.maximum(fwd, bwd), level)
        first = c if first is None else first
        new = active & (signed_t > c)
        if not new.any():
            break
        active &= ~new
    return ~active.all(axis=0), first


def _one_sided(gap, se, flat) -> np.ndarray:
    """The ``2 P`` one-sided normal p-values: ``theta_a <= theta_b``, then the mirror."""
    t = _t(gap, se, flat)
    return np.concatenate([special.ndtr(-t), special.ndtr(t)])


def holm(gap, se, flat, level):
    """Holm (1979) over the ``2 P`` one-sided normal tests; separated pairs.

    ``H: theta_a <= theta_b`` has the p-value ``1 - Phi(gap / se)`` (``se``
    the gap's bootstrap standard error: ``evalci.compare`` with
    ``method="normal", alternative="greater"``) and its mirror ``Phi(gap /
    se)``. Holm's step-down holds the family-wise error rate under any
    dependence. Normal rather than percentile p-values: a percentile
    p-value cannot go below ``1 / B``, so Holm could separate nothing unless
    ``B > 2 P / (1 - level)`` (18,600 resamples for 31 systems). Returns
    ``(separated, adjusted p-values (2, P))``.
    """
    adj, _ = holm_adjusted(_one_sided(gap, se, flat))
    adj = adj.reshape(2, -1)
    return (adj < 1 - level).any(axis=0), adj


def fdr(gap, se, flat, level, *, dependent=False):
    """Benjamini-Hochberg (or, ``dependent``, Benjamini-Yekutieli) q-values
    over the ``2 P`` one-sided normal tests of :func:`holm`; separated pairs.

    A pair is separated when one of its q-values is below ``1 - level``: the
    expected share of false separations among all separations is at most
    that (BY under any dependence; BH when the tests are independent or
    positively dependent). Returns ``(separated, q-values (2, P))``.
    """
    adj, _ = fdr_adjusted(_one_sided(gap, se, flat), dependent=dependent)
    adj = adj.reshape(2, -1)
    return (adj < 1 - level).any(axis=0), adj
