"""mixture_posterior (the ``estimand="inputs"`` posterior) against its plain form.

Issue 39 sums the mixture's smooth components in blocks on their supports
and evaluates each narrow component's normal CDF near its mean only. Here
the function as it was before, one ``(components x points)`` matrix with
every term, is kept as the reference: the two agree to 1e-6 (in fact to
rounding) on the mean, SD, CDF and quantiles, on seeded tables with N =
1,000 and k = 10, uneven k, small N (narrow components) and scores
near 0 and 1 (rough components at N = 3).
"""

from __future__ import annotations

import numpy as np
import pytest

from evalci._base.lazy import special
from evalci.methods.bayes.args import BetaBinomialPrior
from evalci.methods.bayes.grid import (
    Counts,
    Posterior1D,
    _monotone_cdf,
    conditional_moments,
    mixture_posterior,
    posterior_grid,
)
from evalci.methods.bayes.interval import GRID_INPUTS


def _reference_mixture(weights, mean, var, n_u=2001):
    """The pre-issue-39 mixture_posterior, verbatim: one (components x points) matrix."""
    weights, mean, var = (np.ravel(v) for v in (weights, mean, var))
    keep = weights > weights.max() * 1e-14
    w, m, v = weights[keep] / weights[keep].sum(), mean[keep], var[keep]
    total_mean = float(w @ m)
    total_var = float(w @ (v + m**2) - total_mean**2)
    sd = np.sqrt(v)
    u0 = max(float((m - 10 * sd).min()), 0.0)
    u1 = min(float((m + 10 * sd).max()), 1.0)
    u = np.linspace(u0, u1, n_u)
    h = u[1] - u[0]
    # components narrower than the step: their CDF is a step of width ~SD, a
    # normal CDF places it to within a fraction of a step (a point mass, SD 0
    # when every p_i is 1 to machine precision, as a step at its mean)
    narrow = sd < 2 * h
    sd = np.where(sd > 0, sd, h * 1e-9)
    with np.errstate(divide="ignore", invalid="ignore"):  # narrow ones unused
        nu = m * (1 - m) / v - 1
    alpha, beta = m * nu, (1 - m) * nu
    rough = ~narrow & (np.minimum(alpha, beta) < 2)
    smooth = ~narrow & ~rough
    cdf = np.zeros_like(u)
    if narrow.any():
        cdf += w[narrow] @ special.ndtr(
            (u[None, :] - m[narrow, None]) / sd[narrow, None]
        )
    if rough.any():
        cdf += w[rough] @ special.betainc(
            alpha[rough, None], beta[rough, None], u[None, :]
        )
    if smooth.any():
        a_, b_ = alpha[smooth, None], beta[smooth, None]
        inner = u[None, 1:-1]
        logpdf = (
            (a_ - 1) * np.log(inner)
            + (b_ - 1) * np.log1p(-inner)
            - special.betaln(a_, b_)
        )
        dens = np.zeros_like(u)
        dens[1:-1] = w[smooth] @ np.exp(logpdf)  # 0 at u = 0 and 1 (alpha, beta >= 2)
        if u0 > 0 or u1 < 1:  # ends inside (0, 1): the density there is ~0 anyway
            dens[[0, -1]] = 0.0
        cdf += np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) * h / 2)])
    return Posterior1D(
        mean=total_mean,
        sd=float(np.sqrt(max(total_var, 0.0))),
        cdf_x=u,
        cdf=_monotone_cdf(cdf - cdf[0]),
    )


def _table(n, k, seed, shape=(2.0, 1.0)):
    gen = np.random.default_rng(seed)
    k = np.full(n, k) if np.isscalar(k) else np.asarray(k)
    return Counts.of(k, gen.binomial(k, gen.beta(*shape, n)))


def _uneven(n, seed):
    return np.random.default_rng(seed + 1).integers(1, 16, n)


CASES = {
    "N=1000 k=10": (1000, 10, 0, (2.0, 1.0)),
    "N=1000 uneven k": (1000, _uneven(1000, 1), 1, (2.0, 1.0)),
    "N=10000 k=10": (10_000, 10, 2, (2.0, 1.0)),
    "N=30 k=1": (30, 1, 3, (2.0, 1.0)),
    "N=100 k=3 near 0 and 1": (100, 3, 4, (0.3, 0.2)),
    "N=40 uneven k": (40, _uneven(40, 5), 5, (1.0, 1.0)),
    "N=3 k=2 all right": (3, 2, 7, (5.0, 0.2)),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_mixture_equals_the_plain_sum_over_components(case):
    counts = _table(*case)
    g = posterior_grid(counts, BetaBinomialPrior(), *GRID_INPUTS)
    mean, var = conditional_moments(g, counts)
    new = mixture_posterior(g.w, mean, var)
    ref = _reference_mixture(g.w, mean, var)
    q = np.linspace(0.001, 0.999, 41)
    assert new.mean == pytest.approx(ref.mean, abs=1e-12)
    assert new.sd == pytest.approx(ref.sd, abs=1e-12)
    np.testing.assert_array_equal(new.cdf_x, ref.cdf_x)
    np.testing.assert_allclose(new.cdf, ref.cdf, rtol=0, atol=1e-9)
    np.testing.assert_allclose(new.quantile(q), ref.quantile(q), rtol=0, atol=1e-9)


def test_every_kind_of_component_is_exercised():
    # the cases above reach the smooth, narrow and rough branches
    kinds = set()
    for case in CASES.values():
        counts = _table(*case)
        g = posterior_grid(counts, BetaBinomialPrior(), *GRID_INPUTS)
        mean, var = conditional_moments(g, counts)
        kinds |= _kinds(g.w.ravel(), mean.ravel(), var.ravel())
    assert kinds == {"smooth", "narrow", "rough"}


def _kinds(weights, m, v, n_u=2001):
    keep = weights > weights.max() * 1e-14
    m, v = m[keep], v[keep]
    sd = np.sqrt(v)
    h = (min((m + 10 * sd).max(), 1.0) - max((m - 10 * sd).min(), 0.0)) / (n_u - 1)
    narrow = sd < 2 * h
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = m * (1 - m) / v - 1
    rough = ~narrow & (np.minimum(m * nu, (1 - m) * nu) < 2)
    found = {"narrow": narrow.any(), "rough": rough.any()}
    found["smooth"] = (~narrow & ~rough).any()
    return {name for name, hit in found.items() if hit}
