"""Frequentist coverage of :func:`evalci.bayes_ci` beside the closed-form intervals.

:func:`bayes_coverage` draws ``trials`` data sets of N inputs x k runs from
a truth -- a beta-binomial (``("beta", mu, rho)``: ``p_i ~ Beta`` with mean
``mu`` and one-run intraclass correlation ``rho``) or seed 000's
confusion-matrix model (``"confusion"``: accuracy 0.70, rho 0.025) -- and
counts how often each 95% interval holds the population mean score:

* ``bayes``: the credible interval of :func:`evalci.bayes_ci` (default
  prior, ``estimand="population"``);
* ``wilson``, ``clopper-pearson``: the binomial intervals on the N k runs
  pooled as if independent (what one gets ignoring the clustering; at k = 1
  they are the textbook intervals);
* ``clustered-wilson``: Wilson at the Korn-Graubard effective size
  (:func:`evalci.analytic_ci`'s ``method="clustered-wilson"``);
* ``cluster-bootstrap``: the percentile cluster bootstrap over inputs
  (``n_resamples`` multinomial resamples of the per-input means; the same
  distribution as ``evalci.cluster_ci(..., method="percentile")``).

Run ``python -m evalci.simulate.bayes_coverage`` for the table of
docs/small-n.md (about ten minutes on one core).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci.methods.analytic.closed_form import (
    _clt,
    _korn_graubard_wilson,
    _proportion_interval,
)
from evalci.methods.bayes.grid import Counts
from evalci.methods.bayes.interval import posterior
from evalci.simulate.confusion import (
    SEED000_CONFUSION,
    confusion_model_arrays,
    true_accuracy,
)

__all__ = ["BAYES_METHODS", "bayes_coverage"]

BAYES_METHODS = (
    "bayes",
    "wilson",
    "clopper-pearson",
    "clustered-wilson",
    "cluster-bootstrap",
)


def _successes(truth, trials, n, k, gen) -> tuple[np.ndarray, float]:
    """(trials, n) successes out of k, and the true mean."""
    if truth == "confusion":
        labels, preds = confusion_model_arrays(trials, n, k, rng=gen)
        return (preds == labels[..., None]).sum(axis=-1), true_accuracy(
            SEED000_CONFUSION
        )
    _, mu, rho = truth
    total = 1.0 / rho - 1.0
    p = gen.beta(mu * total, (1 - mu) * total, size=(trials, n))
    return gen.binomial(k, p), float(mu)


def _bootstrap(s, k, n_resamples, gen, level):
    """Percentile cluster bootstrap of the mean of per-input means, per trial."""
    trials, n = s.shape
    w = gen.multinomial(n, np.full(n, 1.0 / n), size=(trials, n_resamples))
    reps = np.einsum("tbn,tn->tb", w, s / k) / n
    q = [(1 - level) / 2, (1 + level) / 2]
    return np.quantile(reps, q, axis=1)


def bayes_coverage(
    n_inputs: int,
    k: int,
    truth=("beta", 0.7, 0.2),
    *,
    trials: int = 400,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    rng=None,
) -> pd.DataFrame:
    """Coverage and mean width of each method over seeded trials (one row per method).

    Parameters
    ----------
    n_inputs, k : int
        Inputs and runs per input.
    truth : ("beta", mu, rho) or "confusion"
        The generating model (see the module docstring).
    trials : int
        Simulated data sets; the coverage's Monte-Carlo SE is
        ``sqrt(c (1 - c) / trials)``, about 1.1 points at 400 trials.
    confidence_level : float
    n_resamples : int
        Bootstrap resamples.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    pandas.DataFrame
        Columns ``n_inputs, k, truth, method, coverage, width, trials``.

    Examples
    --------
    >>> from evalci.simulate.bayes_coverage import bayes_coverage
    >>> t = bayes_coverage(10, 3, trials=20, rng=0)
    >>> list(t.method)
    ['bayes', 'wilson', 'clopper-pearson', 'clustered-wilson', 'cluster-bootstrap']
    """
    gen = np.random.default_rng(rng)
    s, true = _successes(truth, trials, n_inputs, k, gen)
    level = confidence_level
    ends = {}
    cache = {}
    lo, hi = np.empty(trials), np.empty(trials)
    for t in range(trials):
        key = np.sort(s[t]).tobytes()
        if key not in cache:
            p = posterior(Counts.of(np.full(n_inputs, k), s[t]))
            cache[key] = p.quantile([(1 - level) / 2, (1 + level) / 2])
        lo[t], hi[t] = cache[key]
    ends["bayes"] = (lo, hi)
    x, n_rows = s.sum(axis=1), np.full(trials, n_inputs * k)
    for method in ("wilson", "clopper-pearson"):
        ends[method] = _proportion_interval(x, n_rows, method, level)
    cell_group = np.repeat(np.arange(trials), n_inputs)
    est, se = _clt(
        s.ravel().astype(float),
        np.full(s.size, k),
        cell_group,
        np.full(trials, n_inputs),
        "input",
    )
    low, high, _ = _korn_graubard_wilson(
        est, se**2, n_rows, np.full(trials, n_inputs), level
    )
    ends["clustered-wilson"] = (low, high)
    ends["cluster-bootstrap"] = tuple(_bootstrap(s, k, n_resamples, gen, level))
    label = truth if isinstance(truth, str) else f"beta(mu={truth[1]}, rho={truth[2]})"
    rows = [
        dict(
            n_inputs=n_inputs,
            k=k,
            truth=label,
            method=m,
            coverage=float(np.mean((lo <= true) & (true <= hi))),
            width=float(np.mean(hi - lo)),
            trials=trials,
        )
        for m, (lo, hi) in ends.items()
    ]
    return pd.DataFrame(rows)


def _main() -> None:  # pragma: no cover - the docs' table, run by hand
    import sys

    truths = [("beta", 0.7, 0.2), ("beta", 0.9, 0.1), "confusion"]
    parts = []
    for i, truth in enumerate(truths):
        for n in (10, 20, 30, 50, 100):
            for k in (1, 3, 10):
                parts.append(bayes_coverage(n, k, truth, trials=250, rng=[i, n, k]))
                print(parts[-1].to_string(index=False, header=False), flush=True)
    table = pd.concat(parts, ignore_index=True)
    out = sys.argv[1] if len(sys.argv) > 1 else "bayes_coverage.csv"
    table.to_csv(out, index=False)


if __name__ == "__main__":  # pragma: no cover
    _main()
