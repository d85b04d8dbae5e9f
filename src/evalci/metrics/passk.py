"""k-attempt metrics: pass@k and pass^k from the c correct of n runs of an input.

Both are per-input metrics (``Metric.per_input``): an input's runs are its
sample, so intervals resample inputs (``strategy="cluster"``).
"""

from __future__ import annotations

import numpy as np

from evalci._base.text import as_written
from evalci._base.validate import check_name
from evalci.metrics.base import Metric, Statistics, _mean_statistics, _ratio

__all__ = ["pass_at_k", "pass_hat_k"]


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(
            f"`k` must be an integer (the number of attempts, e.g. k=1); got "
            f"{as_written(k)} ({type(k).__name__})."
        )
    if k < 1:
        raise ValueError(
            f"`k` must be a positive integer (the number of attempts); got {k}; "
            "use k=1 for the expected single-attempt success rate."
        )
    return int(k)


def _pass_counts(sums: np.ndarray, k: int, name: str):
    """``(c, n)``: correct runs and runs of each input, checked against ``k``."""
    c, n = sums[..., 0], sums[..., 1]
    short = n < k
    if short.any():
        raise ValueError(
            f"{name}: `k`={k} exceeds the runs of {int(short.sum())} input(s) "
            f"(the fewest has n={int(n[short].min())} runs); the unbiased estimator "
            f"needs n >= k runs per input. Use k <= {int(n.min())}, or drop the "
            "inputs with fewer runs."
        )
    return c, n


def _factors(x: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """``(x - i) / (n - i)`` for i = 0 .. k-1, on a new last axis.

    Their product is ``C(x, k) / C(n, k)``: k factors in [0, 1] (x <= n),
    so it neither overflows nor cancels, unlike differences of log-gammas.
    """
    i = np.arange(k, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x[..., None] - i) / (n[..., None] - i)


def _pass_statistics(c_trials: str | None) -> Statistics:
    """Per row [correct, runs]: a 0/1 column, or a counts table's two columns."""
    if c_trials is None:
        return _mean_statistics

    def statistics(data, value):
        c = np.asarray(data[value], dtype=float)
        n = np.asarray(data[c_trials], dtype=float)
        bad = (c < 0) | (c > n) | (c != np.round(c)) | (n != np.round(n))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`value` column {as_written(value)} must count correct runs, whole numbers "
                f"from 0 to `trials` ({as_written(c_trials)}); found {c[i]:g} of {n[i]:g}."
            )
        return np.column_stack([c, n])

    return statistics


def _pass_metric(name, k, trials, per_input) -> Metric:
    if trials is not None:
        check_name(trials, "trials")

    def hook(sums):
        c, n = _pass_counts(sums, k, name)
        v = per_input(c, n)
        return np.stack([v, np.ones_like(v)], axis=-1)

    return Metric(
        name,
        statistics=_pass_statistics(trials),
        finalize=_ratio,
        columns=() if trials is None else (trials,),
        binary=trials is None,
        per_input=hook,
    )


def pass_at_k(k: int, *, trials: str | None = None) -> Metric:
    """pass@k: the chance that at least one of k attempts succeeds, per input.

    Chen et al.'s (2021) unbiased estimator from the n >= k runs of an input,
    c of them correct, ``1 - C(n - c, k) / C(n, k)``, averaged over inputs
    (each input counts once: ``weight="run"`` is refused); intervals resample
    inputs (``strategy="cluster"``: an input's runs are its sample). The ratio
    is the product ``prod_{i<k} (1 - c / (n - i))``, computed as
    ``-expm1(sum_i log1p(-c / (n - i)))`` (Chen et al.'s figure 3 takes the
    same product), so large n neither overflows nor loses the small values;
    it is exactly 1 when ``n - c < k``.

    Parameters
    ----------
    k : int
        Attempts; at most the runs of every input (else a ValueError names
        the fewest). ``k=1`` is the mean accuracy of each input, averaged.
    trials : str, optional
        For a counts table: the column with each row's runs, the value column
        then holding its correct runs. By default the value column is 0/1, one
        row per run.

    References
    ----------
    Chen, M. et al. (2021). Evaluating large language models trained on code.
    arXiv:2107.03374, section 2.1 and figure 3.

    Examples
    --------
    Seed 004's example: n = 10 runs, c = 3 correct.

    >>> import numpy as np, evalci
    >>> m = evalci.metrics.pass_at_k(5)
    >>> t = m.per_input(np.array([[3.0, 10.0]]))  # (c, n) -> (pass@5, 1)
    >>> round(float(m.finalize(t.sum(axis=0))), 4)  # 1 - C(7, 5) / C(10, 5)
    0.9167
    """
    k = _check_k(k)

    def value(c, n):
        # C(n-c, k) / C(n, k) = prod_i (1 - c / (n - i)); zero when n - c < k
        i = np.arange(k, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            log_miss = np.log1p(-c[..., None] / (n[..., None] - i)).sum(axis=-1)
        return np.where(n - c < k, 1.0, 0.0 - np.expm1(log_miss))

    return _pass_metric(f"pass@{k}", k, trials, value)


def pass_hat_k(k: int, *, trials: str | None = None) -> Metric:
    """pass^k: the chance that all of k attempts succeed, per input.

    The unbiased estimator ``C(c, k) / C(n, k)`` of tau-bench (Yao et al.,
    2024) from the n >= k runs of an input, c of them correct, averaged over
    inputs (each input counts once: ``weight="run"`` is refused): a
    reliability score that falls as k grows when a system succeeds on an input
    only sometimes. The ratio is the product ``prod_{i<k} (c - i) / (n - i)``
    of k factors in [0, 1], 0 when ``c < k``. ``pass_hat_k(1)`` is the mean
    accuracy of each input, averaged over inputs.

    Parameters
    ----------
    k : int
        Attempts; at most the runs of every input.
    trials : str, optional
        For a counts table, the column of runs (see :func:`pass_at_k`).

    References
    ----------
    Yao, S., Shinn, N., Razavi, P. & Narasimhan, K. (2024). tau-bench: a
    benchmark for tool-agent-user interaction in real-world domains.
    arXiv:2406.12045, section 5 (pass^k).

    Examples
    --------
    >>> import numpy as np, evalci
    >>> m = evalci.metrics.pass_hat_k(2)
    >>> t = m.per_input(np.array([[3.0, 4.0], [4.0, 4.0]]))  # 3/6 and 1
    >>> float(m.finalize(t.sum(axis=0)))
    0.75
    """
    k = _check_k(k)

    def value(c, n):
        return np.where(c < k, 0.0, _factors(c, n, k).prod(axis=-1))

    return _pass_metric(f"pass^{k}", k, trials, value)
