"""The power solver: whichever of n, the effect and the power is left as None.

Like statsmodels' ``solve_power``: given a validated
:class:`~evalci.methods.planning.power_design._Design`, :func:`_solve` returns the
power at n inputs, the inputs needed for a power, or the detectable
difference at n: exactly for McNemar's design
(:mod:`evalci.methods.planning.mcnemar_power`), else by the normal approximation.
"""

from __future__ import annotations

import math

from evalci.methods.planning.mcnemar_power import (
    _mcnemar_mde,
    _mcnemar_power,
    _mcnemar_sample_size,
)
from evalci.methods.planning.power_design import _Design, _z_power


def _solve(design: _Design, *, n=None, p2=None, power=None):
    """Solve ``design`` for whichever of ``n``, ``p2`` and ``power`` is None.

    The effect is given as the second accuracy ``p2`` (p2 - p1 is the
    difference) and returned as the detectable ``|p2 - p1|``; ``n`` is the
    number of inputs per system (paired: inputs both systems run).
    """
    unknown = [k for k, v in (("n", n), ("p2", p2), ("power", power)) if v is None]
    if len(unknown) != 1:
        raise TypeError(f"_solve needs exactly one unknown, not {unknown}.")
    if power is None:
        return _power_of(design, n, p2)
    if n is None:
        return _inputs_for(design, p2, power)
    return _effect_for(design, n, power)


def _power_of(d: _Design, n, p2) -> float:
    """Power at ``n`` inputs: exact for McNemar's design, else normal."""
    from scipy import stats  # slow to import: only when used

    delta = p2 - d.p1
    if d.exact:
        return _mcnemar_power(n, d.discordance, delta, d.alpha, d.alternative)
    v0, v1 = d.variances(p2)
    if v1 <= 0:
        return 1.0
    sd0, sd1 = d.za * math.sqrt(v0), math.sqrt(v1)
    up = stats.norm.cdf((math.sqrt(n) * delta - sd0) / sd1)
    down = stats.norm.cdf((-math.sqrt(n) * delta - sd0) / sd1)
    if d.alternative == "greater":
        return float(up)
    if d.alternative == "less":
        return float(down)
    return float(up + down)


def _inputs_for(d: _Design, p2, power) -> int:
    """Inputs needed: (z_a sqrt(v0) + z_b sqrt(v1))^2 / (p2 - p1)^2, or McNemar's exact n."""
    zb = _z_power(power)
    v0, v1 = d.variances(p2)
    n = (d.za * math.sqrt(v0) + zb * math.sqrt(v1)) ** 2 / (p2 - d.p1) ** 2
    if d.exact:  # the normal n is where the search starts
        return _mcnemar_sample_size(
            d.discordance, p2 - d.p1, d.alpha, float(power), d.alternative, n
        )
    return int(math.ceil(n - 1e-9))


def _effect_for(d: _Design, n, power) -> float:
    """The detectable |p2 - p1|: closed form for a constant variance, else a root."""
    from scipy import optimize  # slow to import: only when used

    zb = _z_power(power)
    zz = d.za + zb
    if d.sd_diff is not None:
        return float(zz * d.sd_diff * math.sqrt(d.deff / n))
    if d.sigma2 is not None:
        return float(zz * math.sqrt(2 * d.sigma2 * d.deff / n))
    if d.exact:
        return _mcnemar_mde(n, d.discordance, d.alpha, float(power), d.alternative)
    n_req, hi = _inputs_needed(d, zb)
    if n_req(hi) > n:
        return float("nan")
    lo = hi * 1e-12
    return float(
        optimize.brentq(lambda x: n_req(x) - n, lo, hi, xtol=1e-14, rtol=1e-12)
    )


def _inputs_needed(d: _Design, zb):
    """Inputs needed as a function of the difference x > 0, and the largest x possible.

    The variance depends on x (Connor's v1 = psi - x^2; p2 = p +/- x), so the
    minimum detectable effect is the root of n_req(x) = n.
    """
    za, deff = d.za, d.deff
    if d.paired:
        psi = d.discordance

        def n_req(x):
            return (
                za * math.sqrt(psi * deff)
                + zb * math.sqrt(max(psi - x * x, 0.0) * deff)
            ) ** 2 / (x * x)

        return n_req, psi
    p, zz = d.p1, za + zb
    sign = -1.0 if d.alternative == "less" else 1.0

    def n_req(x):
        p2 = p + sign * x
        return zz**2 * deff * (p * (1 - p) + p2 * (1 - p2)) / (x * x)

    return n_req, (p if sign < 0 else 1 - p)
