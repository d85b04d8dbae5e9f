"""Confidence intervals from bootstrap replicates: percentile, basic, BCa, normal.

All functions work on the last axis (the resample axis), like
``scipy.stats.bootstrap``, and read endpoints with numpy's default (linear)
quantile rule, which is what scipy uses.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import special

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
    >>> from evalci import intervals
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
    >>> from evalci import intervals
    >>> round(float(intervals.acceleration(np.array([0.5, 0.6, 0.7, 0.9]))), 5)
    -0.03622
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


def _tail(confidence_level: float, alternative: str) -> float:
    """The tail probability beyond each bounded endpoint."""
    alpha = (1.0 - confidence_level) / 2.0
    return alpha if alternative == "two-sided" else 2.0 * alpha


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
    zz = z0[..., None] + _ndtri(probs)
    with np.errstate(invalid="ignore", divide="ignore"):
        return special.ndtr(z0[..., None] + zz / (1.0 - a[..., None] * zz)), z0


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
    of ``B`` replicates is the order statistic near ``B p``, whose rank is
    Binomial(B, p): the replicates one binomial SD below and above it,
    ``x_(Bp - sqrt(Bp(1-p)))`` and ``x_(Bp + sqrt(Bp(1-p)))``, are about two
    Monte-Carlo SEs apart (the distribution-free order-statistic interval of a
    quantile; Hyndman & Fan 1996, Efron & Tibshirani 1993 sec. 19.3). A basic
    endpoint is ``2 * estimate`` minus a quantile: the same SE. A normal
    endpoint moves with the bootstrap SE: ``z * se / sqrt(2 (B - 1))``.
    Endpoints at infinity (one-sided) have SE 0.

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
    >>> from evalci import intervals
    >>> reps = np.random.default_rng(0).normal(0.7, 0.03, 2000)
    >>> se_low, se_high = intervals.endpoint_mc_error(reps, 0.7, "percentile", 0.95)
    >>> round(float(se_low), 4), round(float(se_high), 4)
    (0.0017, 0.0019)
    """
    reps = np.asarray(replicates, dtype=float)
    est = np.asarray(estimate, dtype=float)
    b = reps.shape[-1]
    alpha = _tail(confidence_level, alternative)
    if method == "normal":
        se = _ndtri(1.0 - alpha) * reps.std(axis=-1, ddof=1) / np.sqrt(2.0 * (b - 1))
        pair = [se, se.copy()]
    else:
        probs, _ = _quantile_probs(
            reps, est, method, confidence_level, accel, alternative
        )
        ordered = np.sort(reps, axis=-1)
        with np.errstate(invalid="ignore"):
            spread = np.sqrt(b * probs * (1.0 - probs))
            lo = np.clip(np.floor(b * probs - spread), 0, b - 1)
            hi = np.clip(np.ceil(b * probs + spread), 0, b - 1)
        lo, hi = (np.nan_to_num(x).astype(np.int64) for x in (lo, hi))
        pick = lambda idx: np.take_along_axis(ordered, idx, axis=-1)  # noqa: E731
        se = (pick(hi) - pick(lo)) / 2.0
        se[np.isnan(probs)] = np.nan
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
    >>> from evalci import intervals
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
        raise ValueError(f"unknown method {method!r}")
    if alternative == "less":
        low = np.full_like(low, -np.inf)
    elif alternative == "greater":
        high = np.full_like(high, np.inf)
    return low, high, z0
