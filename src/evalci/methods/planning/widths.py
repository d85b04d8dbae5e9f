"""Closed forms of seed 000's N-vs-k planning: the width factor
sqrt(rho + (1 - rho) / k) and the normal-approximation width of an interval
over N inputs x k runs. Pure formulas with their argument checks; the data
driven planning (``width_table``, ``plan``) is :mod:`evalci.methods.planning.plans`.
"""

from __future__ import annotations

import numpy as np

from evalci._base.validate import check_number, check_numbers

__all__ = ["predict_width", "width_factor"]


def _z_two_sided(confidence_level):
    """Normal quantile for a two-sided interval, z = Phi^-1(1/2 + level/2)."""
    from scipy import stats  # slow to import: only when used

    level = check_number(
        confidence_level,
        "confidence_level",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
        hint=", e.g. 0.95",
    )
    return float(stats.norm.ppf(0.5 + level / 2))


def _scalar_or_array(arr):
    return float(arr) if np.ndim(arr) == 0 else arr


def _factor(rho, k):
    """sqrt(rho + (1 - rho) / k): the width with k runs over the width with one."""
    return np.sqrt(rho + (1 - rho) / k)


def _width(z, sigma2_between, sigma2_within, n_inputs, k):
    """2 z sqrt((sigma2_B + sigma2_W / k) / N): the normal interval's width."""
    return 2 * z * np.sqrt((sigma2_between + sigma2_within / k) / n_inputs)


def width_factor(rho, k):
    """Interval width with k runs per input relative to one run: sqrt(rho + (1 - rho)/k).

    Seed 000 ("Choosing N and k"): the standard error of a mean over N inputs
    x k runs is sigma sqrt((rho + (1 - rho) / k) / N), so going from 1 run to
    k runs multiplies the width by this factor. It falls quickly at first and
    never below sqrt(rho): runs remove run noise, not data noise.

    Parameters
    ----------
    rho : float or array_like
        Intraclass correlation, in [0, 1] (e.g. ``icc(...).rho``).
    k : float or array_like
        Runs per input, >= 1. Broadcasts against ``rho``.

    Returns
    -------
    float or ndarray

    Examples
    --------
    Seed 000's simulation model (rho = 0.025065, docs/paper-notes.md):

    >>> import evalci
    >>> evalci.width_factor(0.025065, [2, 3, 5]).round(3).tolist()
    [0.716, 0.592, 0.469]
    >>> round(evalci.width_factor(0.025065, 1e9), 3)   # the sqrt(rho) floor
    0.158
    """
    r = check_numbers(
        rho, "rho", low=0, low_open=False, high=1, hint=" (an intraclass correlation)"
    )
    kk = check_numbers(k, "k", low=1, low_open=False, hint=" (runs per input)")
    return _scalar_or_array(_factor(r, kk))


def predict_width(sigma2_between, sigma2_within, n_inputs, k, confidence_level=0.95):
    """Normal-approximation width of the interval for a mean over N inputs x k runs.

    ``2 z sqrt((sigma2_B + sigma2_W / k) / N)`` with ``z`` the two-sided normal
    quantile (1.96 for 95%). For accuracy the cluster bootstrap's percentile
    interval has about this width (seed 000: 0.0592 against 0.0594 at N=200,
    k=5).

    Parameters
    ----------
    sigma2_between, sigma2_within : float or array_like
        Variance components, >= 0 (``icc(...)`` columns of the same names).
    n_inputs : float or array_like
        Number of inputs N, > 0.
    k : float or array_like
        Runs per input, >= 1.
    confidence_level : float
        In (0, 1).

    Returns
    -------
    float or ndarray
        Broadcast over the array arguments.

    Examples
    --------
    Seed 000's model at N = 200 (paper: cluster bootstrap widths 0.1266 at
    k=1, 0.0592 at k=5):

    >>> import evalci
    >>> evalci.predict_width(0.0052637, 0.2047363, 200, [1, 5]).round(4).tolist()
    [0.127, 0.0596]
    """
    z = _z_two_sided(confidence_level)
    sb = check_numbers(sigma2_between, "sigma2_between", low=0, low_open=False)
    sw = check_numbers(sigma2_within, "sigma2_within", low=0, low_open=False)
    n = check_numbers(n_inputs, "n_inputs", low=0, low_open=True)
    kk = check_numbers(k, "k", low=1, low_open=False, hint=" (runs per input)")
    return _scalar_or_array(_width(z, sb, sw, n, kk))
