"""Confidence intervals from bootstrap replicates: percentile, basic, BCa, normal.

All functions work on the last axis (the resample axis), like
``scipy.stats.bootstrap``, and read endpoints with numpy's default (linear)
quantile rule, which is what scipy uses.
"""

from __future__ import annotations

import warnings

import numpy as np

from evalci._base.lazy import special
from evalci._base.text import as_written
from evalci._base.warnings import FewResamplesWarning, warn

__all__ = ["bias_correction", "acceleration", "endpoint_mc_error", "interval"]


def _ndtri(p):
    return special.ndtri(p)


def bias_correction(replicates: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """BCa's ``z0 = Phi^-1(share of replicates below the estimate)``.

    Ties with the estimate count one half (mid-rank), as scipy's
    ``_percentile_of_score`` does: accuracy sits on a grid, so ties are common
    (Efron & Tibshirani 1993, eq. 14.14).

    Parameters
    ----------
    replicates : ndarray, shape (..., B)
        Bootstrap replicates, resamples on the last axis.
    estimate : float or ndarray, shape (...)
        The estimate on the full data, one per leading cell.

    Returns
    -------
    ndarray, shape (...)
        ``z0``; infinite when every replicate lies on one side.

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine import intervals
    >>> float(intervals.bias_correction(np.array([0.0, 1.0, 1.0, 2.0]), 1.0))
    0.0
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

    Parameters
    ----------
    jackknife : ndarray, shape (..., N)
        Leave-one-cluster-out estimates, clusters on the last axis (sorted by
        stratum when ``strata_bounds`` is given).
    strata_bounds : ndarray of int, optional
        Where each stratum's clusters start on the last axis, with ``N`` at
        the end (``[0, n_1, n_1 + n_2, ..., N]``). None, or ``[0, N]``: one
        stratum. Strata of fewer than 2 clusters add nothing.

    Returns
    -------
    ndarray, shape (...)
        The acceleration ``a``; 0 where the jackknife has no spread.

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine import intervals
    >>> round(float(intervals.acceleration(np.array([0.5, 0.6, 0.7, 0.9]))), 5)
    -0.03622
    """
    jack = np.asarray(jackknife, dtype=float)
    n = jack.shape[-1]
    # a is scale-free: jackknife values spread by more than 1e50 are put on
    # the scale of their largest deviation, so that their cubes cannot
    # overflow (smaller ones are left alone, bit for bit)
    with np.errstate(invalid="ignore"):
        dev = np.abs(jack - jack.mean(axis=-1, keepdims=True)).max(axis=-1)
    if (dev > 1e50).any():
        jack = jack / np.where(dev > 1e50, dev, 1.0)[..., None]
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
        sq = lval * lval  # what lval**2 computes; cubes as products, not pow()
        num += (sq * lval).sum(axis=-1) / nh**3
        den += sq.sum(axis=-1) / nh**2
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


def _tail(confidence_level: float, alternative: str) -> float:
    """The tail probability beyond each bounded endpoint."""
    alpha = (1.0 - confidence_level) / 2.0
    return alpha if alternative == "two-sided" else 2.0 * alpha


def _bca_adjust(z0, probs, accel):
    """BCa's adjusted probabilities ``Phi(w)``, ``w = z0 + zz / (1 - a zz)``,
    ``zz = z0 + Phi^-1(p)`` (Efron & Tibshirani 1993, eq. 14.10), and their
    derivative in ``z0``: ``phi(w) (1 + 1 / (1 - a zz)^2)``."""
    zz = z0[..., None] + _ndtri(probs)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        den = 1.0 - accel[..., None] * zz
        w = z0[..., None] + zz / den
        slope = np.exp(-0.5 * w * w) / np.sqrt(2 * np.pi)
        slope = slope * (1.0 + 1.0 / den**2)
    return special.ndtr(w), slope


def _quantile_probs(reps, est, method, confidence_level, accel, alternative):
    """The replicate quantiles ``(..., 2)`` each endpoint reads (BCa: adjusted), and
    BCa's ``z0`` (NaN for the other methods): one place for both readers,
    :func:`interval` and :func:`endpoint_mc_error`."""
    alpha = _tail(confidence_level, alternative)
    probs = np.broadcast_to(np.array([alpha, 1.0 - alpha]), est.shape + (2,))
    if method != "bca":
        return probs, np.full(est.shape, np.nan)
    z0 = bias_correction(reps, est)
    a = np.zeros(est.shape) if accel is None else np.asarray(accel, dtype=float)
    return _bca_adjust(z0, probs, np.broadcast_to(a, est.shape))[0], z0


def _sorted_quantile(ordered: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """numpy's default (linear) quantile of sorted rows ``(..., B)`` at
    per-row probabilities ``(..., k)``; NaN where a probability is NaN."""
    b = ordered.shape[-1]
    pos = np.nan_to_num(np.clip(probs, 0.0, 1.0)) * (b - 1)
    low = np.floor(pos).astype(np.int64)
    frac = pos - low
    high = np.minimum(low + 1, b - 1)
    x_lo = np.take_along_axis(ordered, low, axis=-1)
    x_hi = np.take_along_axis(ordered, high, axis=-1)
    with np.errstate(invalid="ignore"):
        out = x_lo + frac * (x_hi - x_lo)
    return np.where(np.isnan(probs), np.nan, out)


def _quantile_slope(ordered: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``dQ/dp`` of the replicates at ``probs``: 1 / their density there.

    A central difference of the linear quantile over ``p +- h``, with ``h``
    Hall & Sheather's (1988) bandwidth for the sparsity of a quantile,
    ``h = B^(-1/3) z^(2/3) (1.5 phi(z)^2 / (2 z^2 + 1))^(1/3)`` at
    ``z = Phi^-1(p)``, times :data:`SLOPE_BANDWIDTH`, kept inside [0, 1];
    its curvature bias is removed as if the replicates were normal.
    """
    b = ordered.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        z = _ndtri(np.clip(probs, 0.5 / b, 1.0 - 0.5 / b))
        phi2 = np.exp(-z * z) / (2 * np.pi)
        h = (
            SLOPE_BANDWIDTH
            * b ** (-1.0 / 3.0)
            * np.abs(z) ** (2.0 / 3.0)
            * (1.5 * phi2 / (2 * z * z + 1.0)) ** (1.0 / 3.0)
        )
        # symmetric, inside [0, 1], and at least one replicate wide
        h = np.maximum(np.minimum(h, np.minimum(probs, 1.0 - probs)), 1.0 / b)
        lo = np.clip(probs - h, 0.0, 1.0)
        hi = np.clip(probs + h, 0.0, 1.0)
        diff = (_sorted_quantile(ordered, hi) - _sorted_quantile(ordered, lo)) / (
            hi - lo
        )
        # the central difference overstates the slope by h^2 Q'''(p) / 6; for
        # normal replicates Q'''/Q' = (1 + 2 z^2) / phi(z)^2
        return diff / (1.0 + h * h * (1.0 + 2.0 * z * z) / (6.0 * phi2))


#: Hall-Sheather's bandwidth is MSE-optimal for the sparsity itself; this
#: fraction of it trades a little noise for less bias in the tails.
SLOPE_BANDWIDTH = 0.7


def _share_term(reps, est, ordered, probs, dprob_dz0, z0):
    """``Var(g c_i - d_i)`` per endpoint ``(..., 2)``: the replicate-level
    variance of a BCa endpoint's linearisation, with ``c_i`` replicate i's
    share of ``z0`` (1 below the estimate, 1/2 tied) and ``d_i = 1[r_i <=
    endpoint]``; ``g = d alpha' / d share`` (0 for the other methods)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        dens_z0 = np.exp(-0.5 * z0 * z0) / np.sqrt(2 * np.pi)
        g = dprob_dz0 / dens_z0[..., None]
    g = np.where(np.isfinite(g), g, 0.0)
    e = np.asarray(est)[..., None]
    c = (reps < e) + 0.5 * (reps == e)
    q = _sorted_quantile(ordered, probs)
    out = np.empty(probs.shape)
    for j in range(probs.shape[-1]):
        d = reps <= q[..., j : j + 1]
        u = g[..., j : j + 1] * c - d
        out[..., j] = u.var(axis=-1)
    return out


def endpoint_mc_error(
    replicates: np.ndarray,
    estimate: np.ndarray,
    method: str,
    confidence_level: float,
    *,
    accel: np.ndarray | None = None,
    alternative: str = "two-sided",
) -> tuple[np.ndarray, np.ndarray]:
    """Monte-Carlo standard errors ``(se_low, se_high)`` of an interval's endpoints.

    How much the endpoints would move if the bootstrap were drawn again with
    another seed (the data fixed). A quantile endpoint at probability ``p``
    of ``B`` replicates has variance ``Q'(p)^2 p (1 - p) / B`` (the delta
    method for a sample quantile; David & Nagaraja 2003, sec. 10.2), with the
    slope ``Q'(p)`` (one over the replicates' density) read from the
    replicates (:func:`_quantile_slope`). A basic endpoint is ``2 * estimate``
    minus a quantile: the same SE. A BCa endpoint reads the quantile at
    ``alpha'(z0)``, and ``z0`` is itself a share of the same replicates, so
    by Bahadur's representation the endpoint moves by
    ``Q'(alpha') (g (s - E s) - (F_B(q) - alpha'))`` with ``s`` the share
    behind ``z0``, ``F_B(q)`` the share of replicates at or below the endpoint
    and ``g = d alpha' / d s``; its variance is ``Q'(alpha')^2 Var(g c_i - d_i)
    / B``, read from the replicates' indicators (this holds the share's
    variance, the quantile's and their covariance). The acceleration comes
    from the jackknife, not from resamples, so it adds nothing. A normal
    endpoint moves with the bootstrap SE: ``z * sd * sqrt((kurt - 1) / (4 (B
    - 1)))``, ``kurt`` the replicates' kurtosis (3, and ``z * sd / sqrt(2 (B -
    1))``, for normal replicates). Endpoints at infinity (one-sided) have SE 0.

    Parameters
    ----------
    replicates : ndarray, shape (..., B)
        Bootstrap replicates, resamples on the last axis.
    estimate : float or ndarray, shape (...)
        The estimate on the full data, one per leading cell.
    method : {'percentile', 'basic', 'bca', 'normal'}
        The interval type.
    confidence_level : float
        In (0, 1); for a one-sided ``alternative`` the level of the one bound.
    accel : ndarray, shape (...), optional
        BCa's acceleration (:func:`acceleration`); ``method="bca"`` only,
        default 0 (the bias-corrected percentile interval).
    alternative : {'two-sided', 'less', 'greater'}
        ``"less"``: ``low`` is ``-inf``; ``"greater"``: ``high`` is ``inf``.

    Returns
    -------
    se_low, se_high : ndarray, shape (...)
        Monte-Carlo SEs of ``low`` and ``high``, on the estimate's scale.

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine import intervals
    >>> reps = np.random.default_rng(0).normal(0.7, 0.03, 2000)
    >>> se_low, se_high = intervals.endpoint_mc_error(reps, 0.7, "percentile", 0.95)
    >>> round(float(se_low), 4), round(float(se_high), 4)
    (0.0016, 0.0016)
    """
    reps = np.asarray(replicates, dtype=float)
    est = np.asarray(estimate, dtype=float)
    b = reps.shape[-1]
    alpha = _tail(confidence_level, alternative)
    if method == "normal":
        sd = reps.std(axis=-1, ddof=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            dev = reps - reps.mean(axis=-1, keepdims=True)
            kurt = (dev**4).mean(axis=-1) / (dev**2).mean(axis=-1) ** 2
        kurt = np.where(np.isfinite(kurt), kurt, 3.0)
        se = _ndtri(1.0 - alpha) * sd * np.sqrt((kurt - 1.0) / (4.0 * (b - 1)))
        pair = [se, se.copy()]
    else:
        alpha_probs = np.broadcast_to(np.array([alpha, 1.0 - alpha]), est.shape + (2,))
        if method == "bca":
            z0 = bias_correction(reps, est)
            a = np.zeros(est.shape) if accel is None else np.asarray(accel, float)
            probs, dprob = _bca_adjust(z0, alpha_probs, np.broadcast_to(a, est.shape))
        else:
            z0 = np.zeros(est.shape)
            probs, dprob = alpha_probs, np.zeros(alpha_probs.shape)
        ordered = np.sort(reps, axis=-1)
        slope = _quantile_slope(ordered, probs)
        var = _share_term(reps, est, ordered, probs, dprob, z0)
        with np.errstate(invalid="ignore"):
            se = np.abs(slope) * np.sqrt(var / b)
        se = np.where(np.isnan(probs), np.nan, se)
        pair = [se[..., 0], se[..., 1]]
        if method == "basic":
            pair = pair[::-1]
    if alternative == "less":
        pair[0] = np.zeros_like(pair[0])
    elif alternative == "greater":
        pair[1] = np.zeros_like(pair[1])
    return pair[0], pair[1]


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

    Parameters
    ----------
    replicates : ndarray, shape (..., B)
        Bootstrap replicates, resamples on the last axis.
    estimate : float or ndarray, shape (...)
        The estimate on the full data, one per leading cell.
    method : {'percentile', 'basic', 'bca', 'normal'}
        The interval type.
    confidence_level : float
        In (0, 1); for a one-sided ``alternative`` the level of the one bound.
    accel : ndarray, shape (...), optional
        BCa's acceleration (:func:`acceleration`); ``method="bca"`` only,
        default 0 (the bias-corrected percentile interval).
    alternative : {'two-sided', 'less', 'greater'}
        ``"less"``: ``low`` is ``-inf``; ``"greater"``: ``high`` is ``inf``.

    Returns
    -------
    low, high, z0 : ndarray, shape (...)
        The endpoints and BCa's bias correction (:func:`bias_correction`).

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine import intervals
    >>> reps = np.random.default_rng(0).normal(0.7, 0.03, 2000)
    >>> low, high, z0 = intervals.interval(reps, 0.7, "percentile", 0.95)
    >>> bool(low == np.quantile(reps, 0.025)), bool(high == np.quantile(reps, 0.975))
    (True, True)
    >>> low, high, z0 = intervals.interval(reps, 0.7, "bca", 0.95, accel=0.0)
    >>> round(float(z0), 3)
    0.043
    """
    reps = np.asarray(replicates, dtype=float)
    est = np.asarray(estimate, dtype=float)
    alpha = _tail(confidence_level, alternative)
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
        adj, z0 = _quantile_probs(
            reps, est, method, confidence_level, accel, alternative
        )
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
        raise ValueError(f"unknown method {as_written(method)}")
    if alternative == "less":
        low = np.full_like(low, -np.inf)
    elif alternative == "greater":
        high = np.full_like(high, np.inf)
    return low, high, z0
