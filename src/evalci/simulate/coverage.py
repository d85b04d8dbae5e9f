"""Coverage studies: how often do evalci's intervals contain the truth? (issue 11)

:func:`coverage_study` simulates many evaluations from a model whose true
score is known, builds an interval on each with every requested strategy and
method, and reports the share of intervals that contain the truth
(endpoints inclusive, ``low <= theta <= high``; PAPER-NOTES.md), with its
Monte-Carlo standard error and the interval widths.

Seed 000's confusion-matrix model (``model="seed000"`` or a confusion
matrix) runs on a batched, exact fast path:

* **Accuracy.** A data set reduces to the per-input counts of correct runs
  ``c_i`` (0..k). One resampled input contributes a random number of correct
  runs ``Z`` whose law is known exactly: ``c`` with probability ``n_c / N``
  (cluster), the mixture ``sum_c n_c / N Binomial(k, c / k)`` (hierarchical),
  0/1 with ``P = C / (N k)`` (single_draw, one run), and a replicate's
  correct count is the sum of N (N k for iid rows) independent copies. Its
  law -- a convolution power -- is computed for a block of trials at once
  (FFT; binomial pmf for the two-valued cases) and B replicates are drawn
  from it by inverse CDF. The replicate *total* is sufficient for accuracy,
  so this is the bootstrap's law exactly (up to float rounding of the pmf,
  about 1e-13 in total variation), at O(B) per trial instead of O(B N).
  mode_aggregate reduces each input to whether its mode (random tie-break) is
  right, then resamples those N 0/1 values.
* **Kappa.** A data set reduces to the pooled confusion counts each input
  contributes (its true label and its k predicted labels). Cluster draws
  input counts ``Multinomial(N, 1/N)`` as one bincount of uniform indices and
  sums contributions with a matrix product; hierarchical draws the k runs of
  every drawn input: one drawn input is a (label, composition of its k
  resampled predictions) outcome whose law is a mixture over the inputs, and a
  replicate is N iid draws from it (Walker's alias method); single_draw, iid
  and mode_aggregate draw ``Multinomial(n, p)`` over the C x C (label,
  prediction) cells.

Intervals are computed from the sorted replicates of a whole block
(percentile / basic / BCa with numpy's linear quantile rule; normal =
estimate +- z SD, ``ddof=1``); BCa's acceleration is the jackknife over the
resampling units (inputs; rows for iid), weighted by multiplicity; ``"clt"``
is the analytic interval: the cluster-robust normal interval over inputs
for accuracy (:func:`evalci.analytic_ci`, ``method="clt"``; Wald on rows
for iid, on the modes for mode_aggregate) and Fleiss-Cohen-Everitt for
kappa, only where every resampled unit is one row (k = 1, iid rows, modes):
no FCE standard error is known for k > 1 runs per input, so those intervals
are NaN (``n_failed``).

Reproducibility: trial ``t`` of cell (N, k) uses data drawn from
``SeedSequence(entropy, spawn_key=(0, N, k, t // 64))`` and resamples from
``spawn_key=(1, N, k, strategy, t // 64)`` -- fixed blocks of 64 trials,
never how many blocks are processed together -- so results do not depend on
batching, and a study with fewer trials is a prefix of a larger one. Every
strategy sees the same data sets (common random numbers).

Any other model -- an object with ``sample(n_inputs, n_runs, rng)`` returning
a tidy DataFrame (``input_id, run, system, correct[, pred, label]``) and
``truth(metric) -> {system: value}`` -- runs trial by trial through
:func:`evalci.bootstrap` (slower, same conventions).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from evalci._base.progress import Progress as _Progress

__all__ = ["coverage_study", "STRATEGIES", "METHODS"]

STRATEGIES = ("cluster", "iid", "single_draw", "hierarchical", "mode_aggregate")
METHODS = ("percentile", "basic", "bca", "normal", "clt")
BLOCK = 64  # trials per random-number block (fixed: part of the seed contract)
ENDPOINT_TOL = 1e-9  # evalci's engine lands a few ulp off the accuracy lattice


# ------------------------------------------------------------------ progress
# ------------------------------------------------------------------ seeding
def _entropy(rng):
    if isinstance(rng, np.random.SeedSequence):
        return rng.entropy
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63))
    return np.random.SeedSequence(rng).entropy


def _gen(entropy, *key) -> np.random.Generator:
    ss = np.random.SeedSequence(entropy, spawn_key=tuple(int(x) for x in key))
    return np.random.Generator(np.random.PCG64(ss))


# ------------------------------------------------------------------ intervals
@dataclass
class _Block:
    """Replicates and helpers of one strategy on one block of trials."""

    reps: np.ndarray  # (T, B) replicate statistics
    estimate: np.ndarray  # (T,)
    jack: np.ndarray  # (T, U) leave-one-unit-out estimates
    jack_w: np.ndarray  # (T, U) multiplicity of each unit (0 = absent)
    clt: tuple[np.ndarray, np.ndarray]  # analytic (low, high)


def _acceleration(jack: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Efron's jackknife acceleration with unit multiplicities ``w``."""
    n = w.sum(axis=-1)
    mean = (w * jack).sum(axis=-1) / n
    u = mean[:, None] - jack
    num = (w * u**3).sum(axis=-1)
    den = (w * u**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = num / (6.0 * den**1.5)
    return np.where(den > 0, a, 0.0)


def _quantile_sorted(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """numpy's linear quantile of sorted rows ``x (T, B)`` at ``p (T, m)``."""
    b = x.shape[-1]
    h = (b - 1) * p
    lo = np.clip(np.floor(h), 0, b - 1).astype(np.int64)
    hi = np.minimum(lo + 1, b - 1)
    frac = h - lo
    xl = np.take_along_axis(x, lo, axis=-1)
    xh = np.take_along_axis(x, hi, axis=-1)
    return xl + frac * (xh - xl)


def _intervals(blk: _Block, methods, confidence_level: float) -> dict:
    """``{method: (low, high)}`` for one block, vectorised over trials."""
    alpha = (1.0 - confidence_level) / 2.0
    probs = np.array([alpha, 1.0 - alpha])
    reps = blk.reps
    est = blk.estimate
    t = reps.shape[0]
    out = {}
    srt = None
    if any(m in ("percentile", "basic", "bca") for m in methods):
        srt = np.sort(reps, axis=-1)
    for m in methods:
        if m in ("percentile", "basic"):
            q = _quantile_sorted(srt, np.broadcast_to(probs, (t, 2)))
            low, high = q[:, 0], q[:, 1]
            if m == "basic":
                low, high = 2 * est - high, 2 * est - low
        elif m == "bca":
            below = (reps < est[:, None]).sum(axis=-1)
            equal = (reps == est[:, None]).sum(axis=-1)
            z0 = special.ndtri((below + 0.5 * equal) / reps.shape[-1])
            a = _acceleration(blk.jack, blk.jack_w)
            zz = z0[:, None] + special.ndtri(probs)[None, :]
            with np.errstate(invalid="ignore", divide="ignore"):
                adj = special.ndtr(z0[:, None] + zz / (1.0 - a[:, None] * zz))
            bad = np.isnan(adj).any(axis=-1)
            q = _quantile_sorted(srt, np.where(np.isnan(adj), 0.5, adj))
            q[bad] = np.nan
            low, high = q[:, 0], q[:, 1]
        elif m == "normal":
            half = special.ndtri(1.0 - alpha) * reps.std(axis=-1, ddof=1)
            low, high = est - half, est + half
        elif m == "clt":
            low, high = blk.clt
        else:
            raise ValueError(f"unknown method {m!r}; choose from {METHODS}")
        out[m] = (np.asarray(low, float), np.asarray(high, float))
    return out


def _normal_ci(est, se, confidence_level):
    z = special.ndtri(0.5 + confidence_level / 2.0)
    return est - z * se, est + z * se


# ------------------------------------------------------------------ accuracy
def _sum_pmf(pz: np.ndarray, n: int) -> np.ndarray:
    """pmf of the sum of ``n`` iid copies of Z with pmf ``pz (T, K)`` on 0..K-1."""
    from scipy import stats  # slow to import: only when used

    t, kk = pz.shape
    if kk == 2:
        return stats.binom.pmf(np.arange(n + 1)[None, :], n, pz[:, 1:2])
    v = n * (kk - 1) + 1
    size = 1 << int(np.ceil(np.log2(v)))
    f = np.fft.rfft(pz, size, axis=-1) ** n
    pmf = np.fft.irfft(f, size, axis=-1)[:, :v]
    pmf = np.maximum(pmf, 0.0)
    return pmf / pmf.sum(axis=-1, keepdims=True)


def _draw_sums(pmf: np.ndarray, b: int, gen: np.random.Generator) -> np.ndarray:
    """``b`` draws per row from pmf ``(T, V)`` by inverse CDF, as floats."""
    cdf = np.cumsum(pmf, axis=-1)
    cdf[:, -1] = 1.0
    u = gen.random((pmf.shape[0], b))
    out = np.empty(u.shape)
    for i in range(pmf.shape[0]):
        out[i] = np.searchsorted(cdf[i], u[i], side="right")
    return out


def _unit_jack(values: np.ndarray, weights: np.ndarray, n: int):
    """Leave-one-unit-out means and the clt SE for units of mean ``values``."""
    est = (weights * values).sum(axis=-1) / n
    jack = (n * est[:, None] - values) / (n - 1)
    ss = (weights * (values - est[:, None]) ** 2).sum(axis=-1)
    se = np.sqrt(ss / (n - 1) / n)
    return est, jack, se


def _mode_correct(labels, preds, gen, n_labels):
    """Whether each input's mode (ties at random) equals its label, (T, N)."""
    onehot = (preds[..., None] == np.arange(n_labels)).sum(axis=-2)  # (T, N, C)
    cand = onehot == onehot.max(axis=-1, keepdims=True)
    u = gen.random(cand.shape)
    mode = np.where(cand, u, -1.0).argmax(axis=-1)
    return mode == labels, mode


def _accuracy_block(strategy, labels, preds, b, gen, confidence_level, n_labels):
    from scipy import stats  # slow to import: only when used

    t, n, k = preds.shape
    if strategy == "mode_aggregate":
        y, _ = _mode_correct(labels, preds, gen, n_labels)
        m = y.sum(axis=-1)
        values = np.array([0.0, 1.0])[None, :].repeat(t, 0)
        weights = np.stack([n - m, m], axis=-1).astype(float)
        est, jack, se = _unit_jack(values, weights, n)
        p = m / n
        pmf = _sum_pmf(np.stack([1 - p, p], axis=-1), n)
        reps = _draw_sums(pmf, b, gen) / n
        return _Block(reps, est, jack, weights, _normal_ci(est, se, confidence_level))
    c = (preds == labels[..., None]).sum(axis=-1)  # (T, N)
    n_c = (c[..., None] == np.arange(k + 1)).sum(axis=-2).astype(float)  # (T, k+1)
    total = (n_c * np.arange(k + 1)).sum(axis=-1)
    if strategy == "iid":
        nk = n * k
        values = np.array([0.0, 1.0])[None, :].repeat(t, 0)
        weights = np.stack([nk - total, total], axis=-1)
        est, jack, se = _unit_jack(values, weights, nk)
        p = total / nk
        reps = _draw_sums(_sum_pmf(np.stack([1 - p, p], -1), nk), b, gen) / nk
        return _Block(reps, est, jack, weights, _normal_ci(est, se, confidence_level))
    values = np.arange(k + 1)[None, :] / k + np.zeros((t, 1))
    est, jack, se = _unit_jack(values, n_c, n)
    if strategy == "cluster":
        reps = _draw_sums(_sum_pmf(n_c / n, n), b, gen) / (n * k)
    elif strategy == "hierarchical":
        # one drawn input: pattern c w.p. n_c / N, then Binomial(k, c / k)
        kern = stats.binom.pmf(
            np.arange(k + 1)[None, :], k, np.arange(k + 1)[:, None] / k
        )  # (c, j)
        reps = _draw_sums(_sum_pmf((n_c / n) @ kern, n), b, gen) / (n * k)
    elif strategy == "single_draw":
        p = total / (n * k)
        reps = _draw_sums(_sum_pmf(np.stack([1 - p, p], -1), n), b, gen) / n
    else:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {STRATEGIES}")
    return _Block(reps, est, jack, n_c, _normal_ci(est, se, confidence_level))


# ------------------------------------------------------------------ kappa
def _alias_draw(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Categories drawn from pmf ``p`` by Walker's alias method, one uniform each.

    Vose's construction: O(len(p)) once, then O(1) per draw (exact in law up
    to the rounding of ``p``): ``x = u len(p)``, column ``j = floor(x)``, keep
    ``j`` if ``x - j < prob[j]`` else take ``alias[j]``.
    """
    m = len(p)
    prob = np.asarray(p, float) * m / p.sum()
    alias = np.arange(m)
    small = [i for i in range(m) if prob[i] < 1.0]
    large = [i for i in range(m) if prob[i] >= 1.0]
    while small and large:
        s, lg = small.pop(), large.pop()
        alias[s] = lg
        prob[lg] -= 1.0 - prob[s]
        (small if prob[lg] < 1.0 else large).append(lg)
    for i in small + large:  # rounding leftovers
        prob[i] = 1.0
    x = u * m
    j = np.minimum(x.astype(np.int64), m - 1)
    return np.where(x - j < prob[j], j, alias[j])


def _compositions(k: int, c: int) -> np.ndarray:
    """All vectors of ``c`` non-negative integers summing to ``k``, (Q, c)."""
    if c == 1:
        return np.array([[k]])
    return np.array(
        [[j, *rest] for j in range(k, -1, -1) for rest in _compositions(k - j, c - 1)]
    )


def _kappa(tab: np.ndarray, c: int) -> np.ndarray:
    """Cohen's kappa of flattened C x C tables ``(..., C*C)``."""
    t = tab.reshape(tab.shape[:-1] + (c, c))
    tot = t.sum(axis=(-2, -1))
    p_o = np.trace(t, axis1=-2, axis2=-1) / tot
    p_e = (t.sum(axis=-1) * t.sum(axis=-2)).sum(axis=-1) / tot**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p_o - p_e) / (1.0 - p_e)


def _kappa_block(strategy, labels, preds, b, gen, confidence_level, n_labels):
    from evalci.methods.analytic import _kappa_fce

    t, n, k = preds.shape
    cc = n_labels * n_labels
    if strategy == "mode_aggregate":
        _, mode = _mode_correct(labels, preds, gen, n_labels)
        cell = labels * n_labels + mode  # (T, N): one run per input
        units, n_units = cell[..., None], n
    elif strategy == "iid":
        cell = (labels[..., None] * n_labels + preds).reshape(t, n * k)
        units, n_units = cell[..., None], n * k
    else:
        units, n_units = labels[..., None] * n_labels + preds, n  # (T, N, k)
    # contribution of each unit to the pooled table, (T, U, C*C)
    contrib = (units[..., None] == np.arange(cc)).sum(axis=-2).astype(float)
    table = contrib.sum(axis=1)  # (T, C*C)
    est = _kappa(table, n_labels)
    jack = _kappa(table[:, None, :] - contrib, n_labels)
    jack_w = np.ones(jack.shape)
    kap, se = _kappa_fce(table.reshape(t, n_labels, n_labels))
    if k > 1 and strategy not in ("iid", "mode_aggregate"):
        se = np.full(t, np.nan)  # no FCE standard error for k > 1 runs per input
    clt = _normal_ci(kap, se, confidence_level)
    reps = np.empty((t, b))
    if strategy in ("mode_aggregate", "iid", "single_draw"):
        # one draw = one (label, pred) cell: Multinomial(n, p) over the cells
        if strategy == "single_draw":
            p = table / (n * k)
            n_draw = n
        else:
            p = table / n_units
            n_draw = n_units
        for i in range(t):
            tabs = gen.multinomial(n_draw, p[i], size=b)
            reps[i] = _kappa(tabs.astype(float), n_labels)
    elif strategy == "cluster":
        for i in range(t):
            idx = gen.integers(0, n, size=(b, n))
            w = np.bincount((idx + n * np.arange(b)[:, None]).ravel(), minlength=b * n)
            reps[i] = _kappa(w.reshape(b, n).astype(float) @ contrib[i], n_labels)
    elif strategy == "hierarchical":
        # one drawn input: its label y and Multinomial(k, cnt / k) predicted
        # labels (k runs with replacement). Its law is the mixture over inputs,
        # on (label, composition of k) outcomes; a replicate is N iid draws.
        comp = _compositions(k, n_labels)  # (Q, C)
        coef = special.gammaln(k + 1) - special.gammaln(comp + 1).sum(axis=-1)
        onehot = (preds[..., None] == np.arange(n_labels)).sum(axis=-2) / k  # (T,N,C)
        # outcome vectors: row y of the table gets the composition
        vec = np.zeros((n_labels, len(comp), n_labels, n_labels))
        for y in range(n_labels):
            vec[y, :, y, :] = comp
        vec = vec.reshape(n_labels * len(comp), cc)
        for i in range(t):
            q = onehot[i]  # (N, C)
            # pmf_i(comp) = exp(coef + sum_j comp_j log q_ij); q = 0 -> ~1e-300
            lp = coef[None, :] + np.log(np.maximum(q, 1e-300)) @ comp.T
            pmf = np.exp(lp)  # (N, Q)
            mix = np.zeros((n_labels, len(comp)))
            np.add.at(mix, labels[i], pmf)
            mix = mix.ravel() / n
            o = len(mix)
            draws = _alias_draw(mix, gen.random((b, n)))
            tabs = np.bincount(
                (draws + o * np.arange(b)[:, None]).ravel(), minlength=b * o
            )
            reps[i] = _kappa(tabs.reshape(b, o).astype(float) @ vec, n_labels)
    else:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {STRATEGIES}")
    return _Block(reps, est, jack, jack_w, clt)


# ------------------------------------------------------------------ study
def _as_list(x):
    if isinstance(x, (list, tuple, np.ndarray)):
        return [int(v) for v in x]
    return [int(x)]


def _summary(ends_low, ends_high, truth):
    low, high = np.asarray(ends_low), np.asarray(ends_high)
    ok = ~(np.isnan(low) | np.isnan(high))
    covered = (low <= truth + ENDPOINT_TOL) & (truth - ENDPOINT_TOL <= high)
    trials = len(low)
    cov = float(covered.mean())
    width = (high - low)[ok]
    return {
        "coverage": cov,
        "coverage_se": float(np.sqrt(cov * (1 - cov) / trials)),
        "mean_width": float(width.mean()) if width.size else np.nan,
        "median_width": float(np.median(width)) if width.size else np.nan,
        "trials": trials,
        "n_failed": int((~ok).sum()),
    }


def _confusion(model):
    from evalci.simulate import confusion as simulate

    if isinstance(model, str):
        if model.lower() != "seed000":
            raise ValueError(f"unknown model {model!r}; use 'seed000' or a matrix")
        return np.asarray(simulate.SEED000_CONFUSION)
    if hasattr(model, "sample") and hasattr(model, "truth"):
        return None
    return np.asarray(model, dtype=float)


def coverage_study(
    model,
    strategies=("cluster",),
    methods=("percentile",),
    metric: str = "accuracy",
    n_inputs=200,
    n_runs=5,
    trials: int = 2000,
    n_resamples: int = 5000,
    confidence_level: float = 0.95,
    rng=None,
    progress=None,
    *,
    n_jobs: int = 1,
    _blocks_per_step: int = 4,
) -> pd.DataFrame:
    """Simulated coverage and width of bootstrap intervals (seed 000's study).

    Parameters
    ----------
    model : "seed000", array_like (C, C) or object
        Seed 000's classifier (``"seed000"``) or any population confusion
        matrix (rows = true label): simulated on the batched exact path.
        Or an object with ``sample(n_inputs, n_runs, rng) -> DataFrame``
        (columns ``input_id, run, system, correct`` [, ``pred, label``]) and
        ``truth(metric) -> {system: value}``, run trial by trial through
        :func:`evalci.bootstrap`.
    strategies : sequence of str
        Any of ``"cluster", "iid", "single_draw", "hierarchical",
        "mode_aggregate"``. mode_aggregate's truth is still the single-run
        score, so it is expected to undercover for k > 2.
    methods : sequence of str
        Any of ``"percentile", "basic", "bca", "normal", "clt"`` (``"clt"``:
        the analytic normal interval -- cluster-robust for accuracy,
        Fleiss-Cohen-Everitt for kappa where each resampled unit is one row,
        NaN otherwise).
    metric : {"accuracy", "kappa"}
        The estimand (default ``"accuracy"``); kappa needs labels (a
        confusion-matrix model, or samples with ``pred, label`` columns).
    n_inputs, n_runs : int or list of int
        N and k; every combination is a cell.
    trials, n_resamples : int
        Simulated data sets per cell and resamples per interval.
    confidence_level : float
        Of every interval, in (0, 1); default 0.95.
    rng : None, int, SeedSequence or Generator
        Root seed; a study is a deterministic function of it.
    progress : None or bool
        Progress bar on stderr; ``None`` shows it only on a terminal.
    n_jobs : int
        Worker processes for seed 000's model (blocks of 64 trials run in
        parallel; results are identical for any ``n_jobs``).

    Returns
    -------
    pandas.DataFrame
        One row per (N, k, strategy, method, system): ``metric, strategy,
        method, n_inputs, n_runs, system, truth, coverage, coverage_se``
        (``sqrt(c (1 - c) / trials)``), ``mean_width, median_width, trials,
        n_failed`` (intervals that came out NaN; counted as not covering),
        ``n_resamples, confidence_level``.

    Examples
    --------
    >>> from evalci.coverage import coverage_study
    >>> res = coverage_study("seed000", strategies=("cluster", "hierarchical"),
    ...                      trials=64, n_resamples=500, rng=0)
    >>> res[["strategy", "n_inputs", "n_runs", "trials"]].to_string(index=False)
    '    strategy  n_inputs  n_runs  trials\\n     cluster       200       5      64\\nhierarchical       200       5      64'
    """
    if metric not in ("accuracy", "kappa"):
        raise ValueError(f"`metric` must be 'accuracy' or 'kappa'; got {metric!r}")
    strategies = [strategies] if isinstance(strategies, str) else list(strategies)
    methods = [methods] if isinstance(methods, str) else list(methods)
    for s in strategies:
        if s not in STRATEGIES:
            raise ValueError(f"unknown strategy {s!r}; choose from {STRATEGIES}")
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; choose from {METHODS}")
    if int(trials) < 2 or int(n_resamples) < 2:
        raise ValueError("`trials` and `n_resamples` must be at least 2")
    ns, ks = _as_list(n_inputs), _as_list(n_runs)
    entropy = _entropy(rng)
    confusion = _confusion(model)
    if confusion is None:
        return _generic_study(
            model, strategies, methods, metric, ns, ks, int(trials),
            int(n_resamples), confidence_level, entropy, progress,
        )  # fmt: skip
    from evalci.simulate import confusion as simulate

    truth = (
        simulate.true_accuracy(confusion)
        if metric == "accuracy"
        else simulate.true_kappa(confusion)
    )
    n_labels = confusion.shape[0]
    block_fn = _accuracy_block if metric == "accuracy" else _kappa_block
    n_blocks = -(-int(trials) // BLOCK)
    bar = _Progress(len(ns) * len(ks) * n_blocks, progress)
    rows = []
    pool = None
    if int(n_jobs) > 1:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=int(n_jobs))
    try:
        for n in ns:
            for k in ks:
                ends = {(s, m): ([], []) for s in strategies for m in methods}
                if pool is not None:
                    tasks = [
                        (metric, s_, tuple(methods), n, k, blk, entropy,
                         int(n_resamples), confidence_level, confusion)
                        for s_ in strategies for blk in range(n_blocks)
                    ]  # fmt: skip
                    for (_, s_, *_rest), res in zip(
                        tasks, pool.map(_block_task, tasks), strict=True
                    ):
                        for m, (lo, hi) in res.items():
                            ends[(s_, m)][0].append(lo)
                            ends[(s_, m)][1].append(hi)
                        bar.update(1 / len(strategies))
                    cut = int(trials)
                    for key, (lo, hi) in ends.items():
                        ends[key] = (
                            [np.concatenate(lo)[:cut]],
                            [np.concatenate(hi)[:cut]],
                        )
                else:
                    for first in range(0, n_blocks, max(1, int(_blocks_per_step))):
                        step = range(first, min(n_blocks, first + _blocks_per_step))
                        data = []
                        for blk in step:
                            lab, pr = simulate.confusion_model_arrays(
                                BLOCK,
                                n,
                                k,
                                confusion=confusion,
                                rng=_gen(entropy, 0, n, k, blk),
                            )
                            data.append((blk, lab, pr))
                        # whole blocks are simulated, then cut: a study with fewer
                        # trials is a prefix of a larger one
                        keep = np.arange(len(step) * BLOCK) + first * BLOCK < int(
                            trials
                        )
                        for s in strategies:
                            blocks = []
                            for blk, lab, pr in data:
                                gen = _gen(entropy, 1, n, k, STRATEGIES.index(s), blk)
                                blocks.append(
                                    block_fn(s, lab, pr, int(n_resamples), gen,
                                             confidence_level, n_labels)
                                )  # fmt: skip
                            merged = _Block(
                                np.concatenate([b.reps for b in blocks]),
                                np.concatenate([b.estimate for b in blocks]),
                                _pad_cat([b.jack for b in blocks]),
                                _pad_cat([b.jack_w for b in blocks]),
                                (
                                    np.concatenate([b.clt[0] for b in blocks]),
                                    np.concatenate([b.clt[1] for b in blocks]),
                                ),
                            )
                            for m, (lo, hi) in _intervals(
                                merged, methods, confidence_level
                            ).items():
                                ends[(s, m)][0].append(lo[keep])
                                ends[(s, m)][1].append(hi[keep])
                        bar.update(len(step))
                for (s, m), (lo, hi) in ends.items():
                    summ = _summary(np.concatenate(lo), np.concatenate(hi), truth)
                    rows.append(
                        {"metric": metric, "strategy": s, "method": m,
                         "n_inputs": n, "n_runs": k, "system": "model",
                         "truth": truth, **summ, "n_resamples": int(n_resamples),
                         "confidence_level": confidence_level}
                    )  # fmt: skip
    finally:
        bar.close()
        if pool is not None:
            pool.shutdown()
    return pd.DataFrame(rows)


def _block_task(args):
    """One block of one strategy, for a worker process: ``{method: ends}``."""
    from evalci.simulate import confusion as simulate

    metric, s, methods, n, k, blk, entropy, b, level, confusion = args
    lab, pr = simulate.confusion_model_arrays(
        BLOCK, n, k, confusion=confusion, rng=_gen(entropy, 0, n, k, blk)
    )
    fn = _accuracy_block if metric == "accuracy" else _kappa_block
    gen = _gen(entropy, 1, n, k, STRATEGIES.index(s), blk)
    return _intervals(fn(s, lab, pr, b, gen, level, confusion.shape[0]), methods, level)


def _pad_cat(arrs):
    """Concatenate (T_i, U_i) arrays along trials, zero-padding the unit axis."""
    u = max(a.shape[1] for a in arrs)
    return np.concatenate([np.pad(a, ((0, 0), (0, u - a.shape[1]))) for a in arrs])


# ------------------------------------------------------------------ generic
class _NaN:
    low = high = np.nan


def _generic_clt(df, strategy, metric, analytic_ci):
    """The analytic interval on the units ``strategy`` resamples, or NaN.

    Input clusters (rows for iid); Fleiss-Cohen-Everitt for kappa needs one
    row per unit. mode_aggregate's modes are not formed here: NaN.
    """
    if strategy == "mode_aggregate":
        return _NaN()
    cluster = ["input_id", "run"] if strategy == "iid" else "input_id"
    try:
        if metric == "kappa":
            return analytic_ci(df, "pred", cluster, by="system", method="fce",
                               truth="label")  # fmt: skip
        return analytic_ci(df, "correct", cluster, by="system", method="clt")
    except ValueError:
        return _NaN()


def _generic_study(
    model, strategies, methods, metric, ns, ks, trials, b, level, entropy, progress
):
    """Trial by trial through the public engine, for user models."""
    from evalci import metrics as metrics
    from evalci._base.warnings import EvalciWarning
    from evalci.engine.bootstrap import bootstrap
    from evalci.methods.analytic import analytic_ci

    truth = model.truth(metric)
    bar = _Progress(len(ns) * len(ks) * trials, progress)
    rows = []
    try:
        for n in ns:
            for k in ks:
                ends: dict = {}
                for t in range(trials):
                    df = model.sample(
                        n, k, _gen(entropy, 0, n, k, t // BLOCK, t % BLOCK)
                    )
                    for s in strategies:
                        seed = np.random.SeedSequence(
                            entropy, spawn_key=(1, n, k, STRATEGIES.index(s), t)
                        )
                        for m in methods:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore", EvalciWarning)
                                if m == "clt":
                                    r = _generic_clt(df, s, metric, analytic_ci)
                                else:
                                    value, met = "correct", "mean"
                                    if metric == "kappa":
                                        value, met = (
                                            "pred",
                                            metrics.kappa(truth="label"),
                                        )
                                    elif s == "mode_aggregate" and "pred" in df:
                                        value, met = (
                                            "pred",
                                            metrics.accuracy(truth="label"),
                                        )
                                    r = bootstrap(
                                        df, value, "input_id", strategy=s, metric=met,
                                        by="system", method=m, n_resamples=b,
                                        confidence_level=level,
                                        rng=np.random.default_rng(seed),
                                    )  # fmt: skip
                            frame = None
                            if not isinstance(r, _NaN):
                                frame = r.to_frame().set_index("system")
                            for sys_name in truth:
                                key = (s, m, sys_name)
                                lo, hi = ends.setdefault(key, ([], []))
                                if frame is None:
                                    lo.append(np.nan)
                                    hi.append(np.nan)
                                else:
                                    lo.append(float(frame.loc[sys_name, "low"]))
                                    hi.append(float(frame.loc[sys_name, "high"]))
                    bar.update()
                for (s, m, sys_name), (lo, hi) in ends.items():
                    summ = _summary(lo, hi, float(truth[sys_name]))
                    rows.append(
                        {"metric": metric, "strategy": s, "method": m,
                         "n_inputs": n, "n_runs": k, "system": sys_name,
                         "truth": float(truth[sys_name]), **summ,
                         "n_resamples": b, "confidence_level": level}
                    )  # fmt: skip
    finally:
        bar.close()
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ the paper
#: Seed 000's tables: (metric, strategy, method, N, k) -> (coverage %, width).
#: "normal" rows of the kappa tables are the Fleiss-Cohen-Everitt interval
#: (``method="clt"`` with k = 1); "Cluster BCa" is ``method="bca"``.
PAPER = {}


def _paper_rows(metric, n, k, rows):
    for (strategy, method), cov, width in rows:
        PAPER[(metric, strategy, method, n, k)] = (cov, width)


_IID, _CLU = ("iid", "percentile"), ("cluster", "percentile")
_BCA, _FCE = ("cluster", "bca"), ("iid", "clt")
_SD, _HI, _MO = (
    ("single_draw", "percentile"),
    ("hierarchical", "percentile"),
    ("mode_aggregate", "percentile"),
)
for _n, _iid, _s5, _c5, _h5, _m5 in (
    (100, (95.2, 0.1776), (100.0, 0.1788), (94.8, 0.0835), (99.0, 0.1096), (0.4, 0.1255)),
    (200, (96.0, 0.1266), (100.0, 0.1267), (95.2, 0.0592), (98.9, 0.0776), (0.0, 0.0893)),
    (400, (95.2, 0.0895), (100.0, 0.0897), (95.8, 0.0420), (99.3, 0.0550), (0.0, 0.0637)),
):  # fmt: skip
    _paper_rows("accuracy", _n, 1, [(_IID, *_iid)])
    _paper_rows(
        "accuracy", _n, 5, [(_SD, *_s5), (_CLU, *_c5), (_HI, *_h5), (_MO, *_m5)]
    )
for _k, _rows in (
    (2, [(_SD, 99.6, 0.1267), (_CLU, 95.0, 0.0904), (_HI, 98.7, 0.1101), (_MO, 95.3, 0.1264)]),
    (3, [(_SD, 100.0, 0.1267), (_CLU, 94.8, 0.0749), (_HI, 98.7, 0.0954), (_MO, 6.7, 0.1085)]),
):  # fmt: skip
    _paper_rows("accuracy", 200, _k, _rows)
for _n, _iid, _fce, _s5, _c5, _b5, _h5, _m5 in (
    (100, (94.9, 0.2400), (94.6, 0.2396), (100.0, 0.2421), (93.9, 0.1133), (94.2, 0.1130), (98.8, 0.1484), (0.5, 0.1715)),
    (200, (94.9, 0.1702), (95.0, 0.1702), (100.0, 0.1707), (94.3, 0.0799), (94.8, 0.0797), (98.7, 0.1045), (0.0, 0.1211)),
    (400, (94.5, 0.1203), (94.4, 0.1204), (100.0, 0.1206), (95.4, 0.0565), (95.6, 0.0565), (99.1, 0.0739), (0.0, 0.0860)),
):  # fmt: skip
    _paper_rows("kappa", _n, 1, [(_IID, *_iid), (_FCE, *_fce)])
    _paper_rows("kappa", _n, 5, [(_SD, *_s5), (_CLU, *_c5), (_BCA, *_b5), (_HI, *_h5), (_MO, *_m5)])  # fmt: skip
for _k, _rows in (
    (2, [(_SD, 99.5, 0.1706), (_CLU, 94.5, 0.1218), (_BCA, 94.7, 0.1217), (_HI, 98.5, 0.1482), (_MO, 94.3, 0.1701)]),
    (3, [(_SD, 100.0, 0.1707), (_CLU, 94.1, 0.1008), (_BCA, 94.4, 0.1007), (_HI, 98.5, 0.1285), (_MO, 6.6, 0.1465)]),
):  # fmt: skip
    _paper_rows("kappa", 200, _k, _rows)

#: Cells PAPER-NOTES.md finds the paper itself off by Monte-Carlo noise.
PAPER_NOISE = {
    ("accuracy", "mode_aggregate", "percentile", 200, 3): "exact 5.25%",
    ("kappa", "mode_aggregate", "percentile", 200, 3): "about 5.6%",
    ("accuracy", "cluster", "percentile", 400, 5): "95.0% at 20,000 trials",
    ("accuracy", "iid", "percentile", 200, 1): "95.3% at 20,000 trials",
}

_LABELS = {
    ("iid", "percentile"): "IID bootstrap",
    ("iid", "clt"): "Normal approx (FCE)",
    ("single_draw", "percentile"): "Single-draw cluster",
    ("cluster", "percentile"): "Cluster",
    ("cluster", "bca"): "Cluster BCa",
    ("hierarchical", "percentile"): "Hierarchical",
    ("mode_aggregate", "percentile"): "Mode-aggregate",
}


def reproduce_paper(
    metrics=("accuracy", "kappa"),
    trials: int = 2000,
    n_resamples: int = 5000,
    rng=0,
    progress=None,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """Every cell of seed 000's coverage tables beside the paper's number.

    Returns one row per paper cell: ``metric, row, strategy, method,
    n_inputs, n_runs, coverage, coverage_se, mean_width, paper_coverage,
    paper_width, diff_se, note``. ``diff_se`` is (ours - paper) in
    Monte-Carlo SEs of the difference, ``sqrt(pbar (1 - pbar) (1 / trials +
    1 / 2000))`` with ``pbar`` the mean of the two, kept at least half a
    trial away from 0 and 1 (so a 100.0% cell is not infinitely precise).
    ``note`` marks the cells PAPER-NOTES.md finds the paper off by noise.

    Parameters
    ----------
    metrics : str or sequence of {"accuracy", "kappa"}
        Which of seed 000's tables to reproduce (default both).
    trials : int
        Simulated data sets per cell (default 2,000, the paper's).
    n_resamples : int
        Resamples per interval (default 5,000, the paper's).
    rng : None, int, SeedSequence or Generator
        Root seed, passed to :func:`coverage_study` for every cell; default 0,
        so the tables are reproducible.
    progress : None or bool
        Progress bar on stderr; ``None`` shows it only on a terminal.
    n_jobs : int
        Worker processes per cell, as in :func:`coverage_study` (results are
        identical for any ``n_jobs``).

    Returns
    -------
    pandas.DataFrame
        One row per paper cell, as above.

    Notes
    -----
    At the paper's size the accuracy table takes about 20 s and the kappa
    table about 11 minutes (the docs build runs kappa at 200 trials x 1,000
    resamples).
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    out = []
    for metric in metrics:
        cells = sorted({(n, k) for (m, _, _, n, k) in PAPER if m == metric})
        for n, k in cells:
            keys = [key for key in PAPER if key[0] == metric and key[3:] == (n, k)]
            strategies = sorted({key[1] for key in keys}, key=STRATEGIES.index)
            methods = sorted({key[2] for key in keys}, key=METHODS.index)
            res = coverage_study(
                "seed000", strategies, methods, metric, n, k, trials, n_resamples,
                rng=rng, progress=progress, n_jobs=n_jobs,
            ).set_index(["strategy", "method"])  # fmt: skip
            for key in keys:
                _, s, m, _, _ = key
                row = res.loc[(s, m)]
                pc, pw = PAPER[key]
                pbar = (row.coverage + pc / 100) / 2
                lo = 0.5 / max(trials, 2000)
                pbar = min(max(pbar, lo), 1 - lo)
                se = np.sqrt(pbar * (1 - pbar) * (1 / trials + 1 / 2000))
                out.append(
                    {"metric": metric, "row": _LABELS[(s, m)], "strategy": s,
                     "method": m, "n_inputs": n, "n_runs": k,
                     "coverage": row.coverage, "coverage_se": row.coverage_se,
                     "mean_width": row.mean_width, "paper_coverage": pc / 100,
                     "paper_width": pw,
                     "diff_se": (row.coverage - pc / 100) / se,
                     "note": ("paper off by noise, see PAPER-NOTES ("
                              + PAPER_NOISE[key] + ")") if key in PAPER_NOISE else ""}
                )  # fmt: skip
    return pd.DataFrame(out)


def format_paper(df: pd.DataFrame) -> str:
    """The comparison of :func:`reproduce_paper` as a plain-text table."""
    lines = []
    for metric, part in df.groupby("metric", sort=False):
        lines.append(f"\n{metric}  (coverage %, width; diff in Monte-Carlo SEs)")
        lines.append(
            f"{'':22s}{'N':>5s}{'k':>3s}  {'ours':>6s} {'paper':>6s} {'diff':>6s}"
            f"  {'width':>7s} {'paper':>7s}"
        )
        for r in part.itertuples():
            lines.append(
                f"{r.row:22s}{r.n_inputs:5d}{r.n_runs:3d}  {100 * r.coverage:6.1f} "
                f"{100 * r.paper_coverage:6.1f} {r.diff_se:+6.1f}  {r.mean_width:7.4f} "
                f"{r.paper_width:7.4f}  {r.note}"
            )
    return "\n".join(lines).lstrip("\n")
