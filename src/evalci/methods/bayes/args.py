"""The hyperprior of :func:`evalci.bayes_ci` and its argument checks and counts.

:class:`BetaBinomialPrior` is the hyperprior on (mu, kappa) (mean and
concentration of the per-input Beta); :func:`counts_by_group` turns a tidy
table (one row per run, 0/1 outcomes) or a counts table (``trials=``) into
each group's distinct (runs, successes) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.lazy import special
from evalci._base.messages import _no_missing, _where
from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_frame,
    check_level,
    check_name,
    check_option,
)
from evalci.engine.cube import factorize
from evalci.engine.cube import group_codes as group_codes_of
from evalci.methods.bayes.grid import Counts

#: Names of the concentration priors (see :class:`BetaBinomialPrior`).
CONCENTRATIONS = ("uniform-icc", "gelman")
#: The estimands of :func:`evalci.bayes_ci`.
ESTIMANDS = ("population", "inputs")

_DASK_HINT = (
    "for a Dask DataFrame reduce it to one row per input first, e.g. "
    "ddf.groupby(cluster)[value].agg(['sum', 'count']).compute(), and pass "
    "value='sum', trials='count'; for xarray objects use da.evalci.to_frame()"
)


@dataclass(frozen=True)
class BetaBinomialPrior:
    """Hyperprior of the hierarchical beta-binomial model of :func:`evalci.bayes_ci`.

    Each input's success probability is ``p_i ~ Beta(a, b)``; the prior is on
    the mean ``mu = a / (a + b)`` and the concentration ``kappa = a + b``
    (the one-run intraclass correlation is ``rho = 1 / (kappa + 1)``),
    independent.

    Parameters
    ----------
    mean : tuple of two floats > 0
        ``mu ~ Beta(*mean)``; default ``(1, 1)``, uniform on [0, 1]. With one
        run per input the posterior of ``mu`` is then exactly
        ``Beta(mean[0] + s, mean[1] + N - s)``.
    concentration : {'uniform-icc', 'gelman'}
        ``"uniform-icc"`` (default): ``p(kappa) = (1 + kappa)^-2``, proper,
        which is the same as a uniform prior on the intraclass correlation
        ``rho`` in (0, 1) -- every share of the variance between inputs
        equally likely, from "all inputs alike" (``rho -> 0``, binomial) to
        "each input all right or all wrong" (``rho -> 1``). Its median
        ``kappa`` is 1 and it has a heavy tail (``P(kappa > K) = 1/(1 +
        K)``). ``"gelman"``: ``p(a, b) ∝ (a + b)^(-5/2)`` (Gelman et al.,
        BDA3 section 5.3), i.e. ``p(kappa) ∝ kappa^(-3/2)``: improper, and
        its posterior is proper only if some input has both a success and a
        failure (refused otherwise); it leans toward small ``kappa`` (strong
        differences between inputs).

    Examples
    --------
    >>> from evalci.methods.bayes.args import BetaBinomialPrior
    >>> BetaBinomialPrior()
    BetaBinomialPrior(mean=(1.0, 1.0), concentration='uniform-icc')
    """

    mean: tuple[float, float] = (1.0, 1.0)
    concentration: str = "uniform-icc"

    def __post_init__(self):
        m = self.mean
        ok = (
            isinstance(m, (tuple, list))
            and len(m) == 2
            and all(_positive_real(v) for v in m)
        )
        if not ok:
            raise ValueError(
                "`prior.mean` must be two positive numbers (alpha, beta) of the Beta "
                f"prior on the mean score, e.g. (1, 1) for uniform; got {as_written(m)}."
            )
        object.__setattr__(self, "mean", (float(m[0]), float(m[1])))
        check_option(
            self.concentration,
            "prior.concentration",
            CONCENTRATIONS,
            describe="'uniform-icc' (uniform on the intraclass correlation; "
            "proper) or 'gelman' ((a + b)^(-5/2))",
        )

    def log_density(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Log prior density in ``x = logit(mu)``, ``t = log(kappa)`` (Jacobians included).

        Parameters
        ----------
        x : numpy.ndarray
            ``logit(mu)``, the prior mean on the logit scale.
        t : numpy.ndarray
            ``log(kappa)``, the log concentration ``a + b``.

        Returns
        -------
        numpy.ndarray
            The log density at each ``(x, t)`` (broadcast).
        """
        a0, b0 = self.mean
        # mu ~ Beta(a0, b0); d mu / d x = mu (1 - mu)
        lx = (
            a0 * special.log_expit(x)
            + b0 * special.log_expit(-x)
            - special.betaln(a0, b0)
        )
        if self.concentration == "uniform-icc":
            # p(kappa) = (1 + kappa)^-2; d kappa / d t = kappa: logistic in t
            lt = special.log_expit(t) + special.log_expit(-t)
        else:
            # p(a, b) ∝ (a+b)^(-5/2): p(mu, kappa) ∝ kappa^(-3/2), times kappa
            lt = -0.5 * t
        return lx[:, None] + lt[None, :]


def _positive_real(v) -> bool:
    return (
        isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, bool)
        and np.isfinite(v)
        and v > 0
    )


def prior_iv(prior) -> BetaBinomialPrior:
    """``prior=``: a :class:`BetaBinomialPrior` or a concentration name."""
    if isinstance(prior, BetaBinomialPrior):
        return prior
    if isinstance(prior, str):
        check_option(
            prior,
            "prior",
            CONCENTRATIONS,
            describe="'uniform-icc', 'gelman', or "
            "evalci.methods.bayes.args.BetaBinomialPrior(mean=..., concentration=...)",
        )
        return BetaBinomialPrior(concentration=prior)
    raise TypeError(
        "`prior` must be 'uniform-icc', 'gelman' or a BetaBinomialPrior("
        f"mean=(alpha, beta), concentration=...), not {type(prior).__name__}."
    )


@dataclass(frozen=True)
class BayesArgs:
    value: str
    cluster: list[str]
    by: list[str]
    trials: str | None
    prior: BetaBinomialPrior
    confidence_level: float
    threshold: float | None
    estimand: str


def bayes_iv(
    data, value, cluster, by, trials, prior, confidence_level, threshold, estimand
) -> BayesArgs:
    """Validate and normalise the arguments of :func:`evalci.bayes_ci`."""
    check_frame(data, _DASK_HINT)
    check_name(value, "value")
    cluster, by = as_columns(cluster, "cluster"), as_columns(by, "by")
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, by, "by")
    if trials is not None:
        check_name(trials, "trials")
        check_columns(data, [trials], "trials")
    overlap = set(cluster) & set(by)
    if overlap:
        raise ValueError(
            f"`by` and `cluster` share column {as_written(sorted(overlap)[0])}: group by a "
            "column that spans several inputs."
        )
    check_option(
        estimand,
        "estimand",
        ESTIMANDS,
        describe="'population' (the mean score a/(a+b) of the inputs' population) "
        "or 'inputs' (the mean success probability of these N inputs)",
    )
    return BayesArgs(
        value=value,
        cluster=cluster,
        by=by,
        trials=trials,
        prior=prior_iv(prior),
        confidence_level=check_level(confidence_level),
        threshold=check_threshold(threshold, 0.0, "a score"),
        estimand=estimand,
    )


def check_threshold(threshold, lo: float, what: str) -> float | None:
    """``threshold=``: None or a number in [lo, 1]."""
    if threshold is None:
        return None
    real = isinstance(threshold, (int, float, np.integer, np.floating))
    if not real or isinstance(threshold, bool) or not lo <= threshold <= 1:
        raise ValueError(
            f"`threshold` must be {what} in [{lo:g}, 1] or None; got {as_written(threshold)}."
        )
    return float(threshold)


def _successes(data: pd.DataFrame, args: BayesArgs) -> tuple[np.ndarray, np.ndarray]:
    """Per-row successes and runs: 0/1 outcomes, or ``value`` of ``trials``."""
    fix = "an input with no scored run has zero runs; drop those rows"
    _no_missing(data, args.value, "value", fix)
    y = data[args.value]
    if args.trials is None:
        bad = ~y.isin([0, 1])
        if bad.any():
            raise ValueError(
                f"`value` column {as_written(args.value)} must hold 0/1 outcomes (one row per "
                f"run) for bayes_ci; found {as_written(y[bad].iloc[0])} in "
                f"{int(bad.sum())} rows. For counts pass trials='<runs column>'; "
                "for scores in [0, 1] use evalci.cluster_ci."
            )
        s = y.to_numpy(dtype=float).astype(np.int64)
        return s, np.ones_like(s)
    _no_missing(data, args.trials, "trials", "fill or drop them")
    n = data[args.trials]
    integral = (
        pd.api.types.is_numeric_dtype(y)
        and pd.api.types.is_numeric_dtype(n)
        and np.all(np.mod(y, 1) == 0)
        and np.all(np.mod(n, 1) == 0)
    )
    if not integral or (y < 0).any() or (y > n).any():
        raise ValueError(
            f"with `trials`, `value` column {as_written(args.value)} must hold success counts: "
            f"whole numbers between 0 and the row's `trials` ({as_written(args.trials)})."
        )
    if (n <= 0).any():
        bad = int(np.argmax((n <= 0).to_numpy()))
        raise ValueError(
            f"`trials` column {as_written(args.trials)} has {int((n <= 0).sum())} rows with "
            f"zero runs (first: row {as_written(data.index[bad])}); an input needs at "
            "least one run: drop those rows."
        )
    return y.to_numpy().astype(np.int64), n.to_numpy().astype(np.int64)


def counts_by_group(data: pd.DataFrame, args: BayesArgs):
    """``(counts per group, groups)``: each group's distinct (k, s) pairs."""
    if len(data) == 0:
        raise ValueError("`data` has no rows.")
    s, k = _successes(data, args)
    group, groups, n_groups = group_codes_of(data, args.by)
    if args.cluster:
        codes, keys = factorize(data, args.cluster, "cluster")
        cell = group * len(keys) + codes
        uniq, inverse = np.unique(cell, return_inverse=True)
        s = np.bincount(inverse, weights=s).astype(np.int64)
        k = np.bincount(inverse, weights=k).astype(np.int64)
        group = uniq // len(keys)
    out = [Counts.of(k[group == g], s[group == g]) for g in range(n_groups)]
    if args.prior.concentration == "gelman":
        for g, c in enumerate(out):
            if not c.mixed:
                raise ValueError(
                    "prior='gelman' ((a + b)^(-5/2), improper) gives an improper "
                    f"posterior here{_where(groups, g)}: no input has both a success "
                    "and a failure (always so with one run per input). Use "
                    "prior='uniform-icc' (proper)."
                )
    return out, groups
