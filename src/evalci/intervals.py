"""Confidence intervals from bootstrap replicates: percentile, basic, BCa, normal.

All functions work on the last axis (the resample axis), like
``scipy.stats.bootstrap``, and read endpoints with numpy's default (linear)
quantile rule, which is what scipy uses.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import special

from ._warnings import FewResamplesWarning, warn

__all__ = ["bias_correction", "acceleration", "interval"]


def _ndtri(p):
    return special.ndtri(p)


def bias_correction(replicates: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """BCa's ``z0 = Phi^-1(share of replicates below the estimate)``.

    Ties with the estimate count one half (mid-rank), as scipy's
    ``_percentile_of_score`` does: accuracy sits on a grid, so ties are common
    (Efron & Tibshirani 1993, eq. 14.14).
    """
    est = np.asarray(estimate)[..., None]
    below = (replicates < est).sum(axis=-1)
    equal = (replicates == est).sum(axis=-1)
    share = (below + 0.5 * equal) / replicates.shape[-1]
    return _ndtri(share)


def acceleration(
    jackknife: np.ndarray, strata_bounds: np.ndarray | None = None
) -> np.ndarray:
    """BCa acceleration from leave-one-cluster-out estimates ``(..., N)``.

    Without strata this is Efron & Tibshirani (1993) eq. 14.15,
    ``a = sum(U^3) / (6 * sum(U^2)^1.5)`` with ``U_i = mean(theta_(.)) - theta_(i)``.
    With strata the influence values are computed within each stratum h of
    n_h clusters and weighted as in Davison & Hinkley (1997), section 3.2.1 /
    eq. 5.25: ``a = sum_h n_h^-3 sum l^3 / (6 (sum_h n_h^-2 sum l^2)^1.5)``
    with ``l_hi = (n_h - 1) (mean_h - theta_(hi))``.
    """
    jack = np.asarray(jackknife, dtype=float)
    n = jack.shape[-1]
    if strata_bounds is None or len(strata_bounds) == 2:
        strata_bounds = np.array([0, n])
    num = np.zeros(jack.shape[:-1])
    den = np.zeros(jack.shape[:-1])
    for lo, hi in zip(strata_bounds[:-1], strata_bounds[1:], strict=True):
        nh = hi - lo
        if nh < 2:
            continue
        part = jack[..., lo:hi]
        lval = (nh - 1) * (part.mean(axis=-1, keepdims=True) - part)
        num += (lval**3).sum(axis=-1) / nh**3
        den += (lval**2).sum(axis=-1) / nh**2
    with np.errstate(invalid="ignore", divide="ignore"):
        a = num / (6.0 * den**1.5)
    # No spread in the jackknife: no skewness to correct.
    return np.where(den > 0, a, 0.0)


def check_tails(n_resamples: int, tail: float) -> None:
    """Warn when fewer than one replicate is expected beyond an endpoint.

    An endpoint at tail probability ``tail`` is read between the
    ``tail * B``-th smallest replicates: below one replicate it is the sample
    extreme (or an interpolation towards it), not an estimate of the quantile.
    The fewest resamples that avoid it are ``ceil(1 / tail)``; a few thousand
    are needed for the endpoint to be stable (Efron & Tibshirani 1993, 19.3).
    """
    if n_resamples * tail < 1:
        need = int(np.ceil(1.0 / tail - 1e-9))
        warn(
            f"{n_resamples} resamples leave fewer than one replicate beyond each "
            f"endpoint of this interval (tail probability {tail:g}), so its endpoints "
            f"are the extremes of the resamples; use at least {need}, and a few "
            "thousand (the default is 10_000) for stable endpoints.",
            FewResamplesWarning,
        )


def interval(
    replicates: np.ndarray,
    estimate: np.ndarray,
    method: str,
    confidence_level: float,
    *,
    accel: np.ndarray | None = None,
    alternative: str = "two-sided",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, z0)`` for replicates ``(..., B)`` and estimates ``(...)``.

    ``z0`` is NaN unless ``method="bca"``. ``"normal"`` is the estimate plus or
    minus the normal quantile times the bootstrap standard error (``ddof=1``;
    Efron & Tibshirani 1993, eq. 13.5).
    """
    reps = np.asarray(replicates, dtype=float)
    est = np.asarray(estimate, dtype=float)
    alpha = (1.0 - confidence_level) / 2.0
    if alternative != "two-sided":
        alpha *= 2.0
    if method != "normal":
        check_tails(reps.shape[-1], alpha)
    probs = np.array([alpha, 1.0 - alpha])
    z0 = np.full(est.shape, np.nan)
    if method == "normal":
        z = _ndtri(1.0 - alpha)
        half = z * reps.std(axis=-1, ddof=1)
        low, high = est - half, est + half
        if alternative == "less":
            low = np.full_like(low, -np.inf)
        elif alternative == "greater":
            high = np.full_like(high, np.inf)
        return low, high, z0
    if method == "bca":
        z0 = bias_correction(reps, est)
        a = np.zeros(est.shape) if accel is None else np.asarray(accel, dtype=float)
        z = _ndtri(probs)  # (2,)
        zz = z0[..., None] + z
        with np.errstate(invalid="ignore", divide="ignore"):
            adj = special.ndtr(z0[..., None] + zz / (1.0 - a[..., None] * zz))
        # one quantile pair per estimate: loop over the few leading cells
        flat_reps = reps.reshape(-1, reps.shape[-1])
        flat_adj = adj.reshape(-1, 2)
        out = np.empty((flat_reps.shape[0], 2))
        for i, (row, p) in enumerate(zip(flat_reps, flat_adj, strict=True)):
            if np.isnan(p).any() or np.isnan(row).any():
                out[i] = np.nan
            else:
                out[i] = np.quantile(row, p)
        q = out.reshape(est.shape + (2,))
    else:
        if np.isnan(reps).any():
            with warnings.catch_warnings():  # all-NaN rows: NaN, said elsewhere
                warnings.simplefilter("ignore", RuntimeWarning)
                q = np.stack([np.nanquantile(reps, p, axis=-1) for p in probs], axis=-1)
            q[np.isnan(reps).any(axis=-1)] = np.nan
        else:
            q = np.moveaxis(np.quantile(reps, probs, axis=-1), 0, -1)
    low, high = q[..., 0], q[..., 1]
    if method == "basic":
        low, high = 2 * est - high, 2 * est - low
    elif method not in ("percentile", "bca"):
        raise ValueError(f"unknown method {method!r}")
    if alternative == "less":
        low = np.full_like(low, -np.inf)
    elif alternative == "greater":
        high = np.full_like(high, np.inf)
    return low, high, z0
