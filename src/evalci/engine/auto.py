"""``n_resamples="auto"``: draw until the endpoints are stable to a tolerance.

Streams are keyed by index (:mod:`evalci.engine.resampling`), so the first ``B``
replicates of a run with more resamples are those of a run with ``B``: a
result at ``n_resamples="auto"`` is exactly the result at the
``n_resamples`` it reports. The sizes double from :data:`START` (each a
whole number of 64-replicate streams) until every endpoint's Monte-Carlo SE
(:func:`evalci.engine.intervals.endpoint_mc_error`) is at most the tolerance, or
:data:`MAX` is reached (then a :class:`~evalci.FewResamplesWarning` says so).
The work is at most twice that of the final size.
"""

from __future__ import annotations

import warnings

import numpy as np

from evalci._base.validate import check_number
from evalci._base.warnings import FewResamplesWarning
from evalci._base.warnings import warn as _warn

__all__ = ["MAX", "START", "TOLERANCE", "is_auto", "until_stable"]

#: The first size tried, and the largest: 2**11 and 2**18 replicates.
START, MAX = 2_048, 262_144
#: Default tolerance: 0.001 on the metric's scale (a tenth of a point of accuracy).
TOLERANCE = 0.001


def is_auto(n_resamples) -> bool:
    """Whether ``n_resamples`` asks for the automatic number."""
    return isinstance(n_resamples, str) and n_resamples == "auto"


def check_tolerance(tolerance) -> float:
    """``mc_tolerance``: a positive finite number (metric scale)."""
    if tolerance is None:
        return TOLERANCE
    return check_number(
        tolerance, "mc_tolerance", low=0, low_open=True, hint=", e.g. 0.001"
    )


def until_stable(run, error_of, tolerance: float):
    """``run(B)`` for doubling ``B`` until ``error_of(result) <= tolerance``.

    ``error_of`` returns the endpoints' Monte-Carlo SEs (NaN for undefined
    intervals, which never stop the doubling alone: they stop at MAX only if
    some endpoint is defined). Warnings of the runs before the last are
    dropped (they repeat); the last run's are raised again here.
    """
    b = START
    while True:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = run(b)
        err = np.asarray(error_of(result), dtype=float)
        defined = err[np.isfinite(err)]
        if not defined.size or defined.max() <= tolerance or b >= MAX:
            break
        b *= 2
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if defined.size and defined.max() > tolerance:
        _warn(
            f"n_resamples='auto' stopped at {MAX:,} resamples with an endpoint's "
            f"Monte-Carlo error at {defined.max():.2g}, above mc_tolerance="
            f"{tolerance:g}; pass a larger tolerance, or an integer n_resamples.",
            FewResamplesWarning,
        )
    return result


def _endpoint_errors(result):
    """The endpoints' Monte-Carlo SEs of a bootstrap or comparison result."""
    return result.mc_error()[["mc_error_low", "mc_error_high"]]


def resolve(call, /, **given):
    """``call(**given)`` for an entry point's arguments, ``mc_tolerance`` read.

    The entry point passes every argument by name, so a reader sees what
    reaches ``call``.

    With ``n_resamples="auto"`` the call runs for doubling sizes until the
    endpoints are stable (:func:`until_stable`); ``mc_tolerance`` is refused
    with an integer ``n_resamples``. One rule for every entry point, on pandas
    and Dask alike.
    """
    rest = {k: v for k, v in given.items() if k != "mc_tolerance"}
    tolerance = given.get("mc_tolerance")
    if is_auto(given["n_resamples"]):
        if rest.get("compute", True) is not True:
            raise ValueError(
                "n_resamples='auto' decides how many resamples to draw from the "
                "ones drawn so far, so it cannot build a lazy graph; pass an "
                "integer n_resamples with compute=False."
            )
        return until_stable(
            lambda b: call(**{**rest, "n_resamples": b}),
            _endpoint_errors,
            check_tolerance(tolerance),
        )
    if tolerance is not None:
        raise ValueError(
            "`mc_tolerance` is for n_resamples='auto'; leave it out with an "
            "integer n_resamples."
        )
    return call(**rest)
