"""Rate models: per-input success rates, then Bernoulli runs.

:class:`BetaBernoulli` draws each system's per-input rates from a Beta with a
given mean and one-run intraclass correlation (systems independent);
:class:`PairedSystems` draws two systems' rates with Beta marginals joined by
a Gaussian copula, so their per-input rates have a given Pearson
correlation and their gap is exact. Both follow the protocol of
:mod:`evalci.simulate.protocol` through :class:`_FromRates`.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field

import numpy as np

from evalci._base.text import as_written
from evalci.simulate.protocol import (
    _positive_int,
    _Sampler,
    _system_names,
    _truth,
    _unit_open,
)

__all__ = ["BetaBernoulli", "PairedSystems"]


def _beta_params(accuracy: float, icc: float) -> tuple[float, float]:
    """Beta(a, b) with mean ``accuracy`` and one-run ICC ``1 / (a + b + 1) = icc``."""
    total = 1.0 / icc - 1.0
    return accuracy * total, (1.0 - accuracy) * total


def _per_system(name: str, v, n: int) -> tuple[float, ...]:
    vals = np.atleast_1d(np.asarray(v, dtype=object))
    if vals.ndim != 1 or len(vals) not in (1, n):
        raise ValueError(
            f"`{name}` must be one number or one per system ({n}); got {as_written(v)}."
        )
    vals = np.broadcast_to(vals, (n,))
    return tuple(_unit_open(name, x) for x in vals)


class _FromRates(_Sampler):
    """What the rate models share: each draws per-input success rates
    (``_rates``), then each run as a Bernoulli of its input's rate; the true
    values are the systems' mean rates (``_accuracies``) and, where exact,
    their gaps (``_gaps``)."""

    def rates(self, n_inputs, rng=None) -> np.ndarray:
        """Latent per-input success rates, shape (n_systems, n_inputs).

        One row per system, in ``systems`` order.

        Parameters
        ----------
        n_inputs : int
            Inputs to draw, positive.
        rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
            Seed (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray
        """
        n = _positive_int("n_inputs", n_inputs)
        return self._rates(n, np.random.default_rng(rng))

    def _draw(self, n, k, gen) -> dict:
        p = self.rates(n, gen)
        correct = (gen.random(p.shape + (k,)) < p[:, :, None]).astype(np.int64)
        return {"correct": correct}

    def _gaps(self):
        """Exact gaps ``{(a, b): v}``, or None to take them from the accuracies."""
        return None

    def truth(self, metric: str = "accuracy") -> dict:
        """True mean accuracy per system ("accuracy"), or "gap" between systems.

        Parameters
        ----------
        metric : {'accuracy', 'gap'}
            The estimand; ``"gap"`` gives ``{(a, b): accuracy_b - accuracy_a}``
            for each pair of systems ``a`` before ``b`` (exact where the model
            knows it, as :class:`PairedSystems` does). Default ``"accuracy"``.

        Returns
        -------
        dict
        """
        values = {"accuracy": self._accuracies()}
        return _truth(self, values, metric, ("accuracy",), gaps=self._gaps())


@dataclass(frozen=True)
class BetaBernoulli(_FromRates):
    """Inputs of varying difficulty: p_i ~ Beta(a, b), runs ~ Bernoulli(p_i).

    ``a`` and ``b`` are set from the mean and the intraclass correlation of a
    single run's 0/1 outcome: a Beta(a, b) mixture of Bernoullis has mean
    ``a / (a + b)`` and ICC ``1 / (a + b + 1)`` (between-input variance
    ``mu (1 - mu) / (a + b + 1)`` over the total ``mu (1 - mu)``), so
    ``a + b = 1 / icc - 1``, ``a = accuracy (a + b)``, ``b = (1 - accuracy)
    (a + b)``. Several systems get independent per-input rates (no pairing
    beyond sharing input ids); see :class:`PairedSystems` for correlated ones.

    Parameters
    ----------
    accuracy : float or sequence of float
        Mean single-run accuracy, in (0, 1); one for all systems or one each.
    icc : float or sequence of float
        Intraclass correlation of one run's correctness, in (0, 1).
    n_systems : int or sequence of str
        Number of systems ("A", "B", ...) or their names.

    Examples
    --------
    >>> from evalci import simulate
    >>> m = simulate.BetaBernoulli(0.7, 0.3)
    >>> round(m.a[0], 4), round(m.b[0], 4)      # a + b = 1 / 0.3 - 1
    (1.6333, 0.7)
    >>> df = m.sample(100, 4, rng=0)
    >>> df.shape, m.truth()
    ((400, 4), {'A': 0.7})
    """

    accuracy: object
    icc: object
    n_systems: InitVar[object] = 1
    systems: tuple = field(init=False)
    a: tuple = field(init=False, repr=False)
    b: tuple = field(init=False, repr=False)

    def __post_init__(self, n_systems):
        systems = _system_names(n_systems)
        acc = _per_system("accuracy", self.accuracy, len(systems))
        icc = _per_system("icc", self.icc, len(systems))
        ab = [_beta_params(m, r) for m, r in zip(acc, icc, strict=True)]
        object.__setattr__(self, "accuracy", acc if len(acc) > 1 else acc[0])
        object.__setattr__(self, "icc", icc if len(icc) > 1 else icc[0])
        object.__setattr__(self, "systems", systems)
        object.__setattr__(self, "a", tuple(x for x, _ in ab))
        object.__setattr__(self, "b", tuple(y for _, y in ab))

    def _rates(self, n, gen) -> np.ndarray:
        return np.stack(
            [gen.beta(a, b, n) for a, b in zip(self.a, self.b, strict=True)]
        )

    def _accuracies(self) -> dict:
        acc = np.broadcast_to(
            np.asarray(self.accuracy, dtype=float), (len(self.systems),)
        )
        return {s: float(v) for s, v in zip(self.systems, acc, strict=True)}


_GH_NODES = 96  # Gauss-Hermite nodes per dimension for the copula moments


def _copula_moment(a1, b1, a2, b2, r: float) -> float:
    """E[p1 p2] for Beta marginals joined by a Gaussian copula of correlation r.

    p_j = I^{-1}(Phi(z_j); a_j, b_j) with (z1, z2) standard bivariate normal,
    z2 = r z1 + sqrt(1 - r^2) w; 2-D Gauss-Hermite quadrature over (z1, w).
    """
    from scipy import special

    x, w = np.polynomial.hermite_e.hermegauss(_GH_NODES)
    w = w / w.sum()
    p1 = special.betaincinv(a1, b1, special.ndtr(x))
    z2 = r * x[:, None] + np.sqrt(max(1.0 - r * r, 0.0)) * x[None, :]
    p2 = special.betaincinv(a2, b2, special.ndtr(z2))
    return float(w @ (p1[:, None] * p2) @ w)


@dataclass(frozen=True)
class PairedSystems(_FromRates):
    """Two systems, "A" and "B", whose per-input success rates are correlated.

    Each input has latent rates ``(p_A, p_B)`` with Beta marginals (mean
    ``accuracy_a`` and ``accuracy_a + gap``, each with one-run intraclass
    correlation ``icc``, as in :class:`BetaBernoulli`) joined by a Gaussian
    copula: ``p_j = F_j^{-1}(Phi(z_j))`` with ``(z_A, z_B)`` bivariate normal.
    The copula's correlation is solved for (2-D Gauss-Hermite quadrature,
    96 x 96 nodes, and Brent's method) so that the *Pearson correlation of
    the latent rates* ``(p_A, p_B)`` is ``correlation`` (checked against
    4 x 10^6 Monte Carlo pairs, U-shaped marginals included: agreement within
    their error, 5e-4). Runs are independent Bernoulli(p_j) draws given the
    input, so the two systems' runs are independent given the input.

    The population gap is exact by construction: the marginals are Beta with
    known means, so ``truth("gap")`` is ``gap`` (no simulation, no
    quadrature).

    Parameters
    ----------
    accuracy_a : float
        Mean single-run accuracy of system A, in (0, 1).
    gap : float
        Accuracy of B minus that of A; ``accuracy_a + gap`` must lie in (0, 1).
    icc : float
        Intraclass correlation of one run's correctness (both systems), (0, 1).
    correlation : float
        Pearson correlation of the two systems' per-input rates, in (-1, 1)
        and inside the range the two marginals allow (else ``ValueError``
        states that range).

    Attributes
    ----------
    copula_correlation : float
        The correlation of the latent normals that gives ``correlation``.

    Examples
    --------
    >>> from evalci import simulate
    >>> m = simulate.PairedSystems(0.6, 0.05, icc=0.4, correlation=0.7)
    >>> m.truth("gap")
    {('A', 'B'): 0.05}
    >>> round(m.copula_correlation, 2)
    0.73
    >>> m.sample(80, 3, rng=0).groupby("system").correct.size().tolist()
    [240, 240]
    """

    accuracy_a: float
    gap: float
    icc: float
    correlation: float
    systems: tuple = field(default=("A", "B"), init=False)
    copula_correlation: float = field(init=False, repr=False)

    def __post_init__(self):
        from scipy import optimize

        acc_a = _unit_open("accuracy_a", self.accuracy_a)
        try:
            gap = float(self.gap)
        except (TypeError, ValueError):
            raise ValueError(
                f"`gap` must be a number; got {as_written(self.gap)}."
            ) from None
        if not 0.0 < acc_a + gap < 1.0:
            raise ValueError(
                f"`gap` must keep B's accuracy accuracy_a + gap in (0, 1); got "
                f"{acc_a} + {gap}."
            )
        icc = _unit_open("icc", self.icc)
        try:
            rho = float(self.correlation)
        except (TypeError, ValueError):
            rho = np.nan
        if not -1.0 < rho < 1.0:
            raise ValueError(
                f"`correlation` must lie strictly between -1 and 1; got "
                f"{as_written(self.correlation)}."
            )
        (a1, b1), (a2, b2) = _beta_params(acc_a, icc), _beta_params(acc_a + gap, icc)
        sd1 = np.sqrt(acc_a * (1 - acc_a) * icc)
        sd2 = np.sqrt((acc_a + gap) * (1 - acc_a - gap) * icc)

        def pearson(r):
            m = _copula_moment(a1, b1, a2, b2, r)
            return (m - acc_a * (acc_a + gap)) / (sd1 * sd2)

        lo, hi = pearson(-1.0), pearson(1.0)
        if not lo < rho < hi:
            raise ValueError(
                f"`correlation` {rho} is outside the range these marginals allow, "
                f"({lo:.4f}, {hi:.4f})."
            )
        r = optimize.brentq(lambda r: pearson(r) - rho, -1.0, 1.0, xtol=1e-12)
        for name, v in (("accuracy_a", acc_a), ("gap", gap), ("icc", icc)):
            object.__setattr__(self, name, v)
        object.__setattr__(self, "correlation", rho)
        object.__setattr__(self, "copula_correlation", float(r))
        object.__setattr__(self, "_ab", ((a1, b1), (a2, b2)))

    def _rates(self, n, gen) -> np.ndarray:
        from scipy import special

        z = gen.standard_normal((2, n))
        r = self.copula_correlation
        z[1] = r * z[0] + np.sqrt(1.0 - r * r) * z[1]
        u = special.ndtr(z)
        (a1, b1), (a2, b2) = self._ab
        return np.stack(
            [special.betaincinv(a1, b1, u[0]), special.betaincinv(a2, b2, u[1])]
        )

    def _accuracies(self) -> dict:
        return {"A": self.accuracy_a, "B": self.accuracy_a + self.gap}

    def _gaps(self):
        """The gap B - A is exact by construction (not a float difference)."""
        return {("A", "B"): self.gap}
