"""The batched exact bootstrap of seed 000's model: replicates and intervals.

For a block of simulated data sets (``labels (T, N)``, ``preds (T, N, k)``)
:func:`_accuracy_block` and :func:`_kappa_block` draw every trial's B
bootstrap replicates under one strategy, with the estimate, the jackknife
BCa needs and the analytic interval (a :class:`_Block`);
:func:`_intervals` turns a block into every method's interval. This is the
fast path of :func:`evalci.simulate.coverage.coverage_study`:

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
  contributes (its true label and its k predicted labels), and a replicate
  to its table's margins (row sums, column sums, trace). The units are drawn
  once per chunk of replicates for the whole block and every trial reads
  them through its own random layout of its groups
  (:mod:`evalci.simulate.shared_draws`): iid, single_draw and
  mode_aggregate group the rows by (label, prediction) cell (single_draw: N
  draws over the N k rows), cluster groups the inputs by label and
  predictions, and hierarchical then draws each drawn input's k runs from
  shared run slots. Each trial's replicates have the bootstrap's law
  exactly (integer counts, no rounding); the trials of a block share the
  draws (common random numbers, whose cost to a coverage estimate's
  precision the module bounds at ~0.6% of its SE).

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

"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalci._base.lazy import special
from evalci._base.text import as_written
from evalci.simulate.shared_draws import (
    SharedCounts,
    SharedRuns,
    chunks,
    in_order,
    layout,
    run_terms,
)

__all__ = ["METHODS", "STRATEGIES"]

STRATEGIES = ("cluster", "iid", "single_draw", "hierarchical", "mode_aggregate")
METHODS = ("percentile", "basic", "bca", "normal", "clt")


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
            raise ValueError(f"unknown method {as_written(m)}; choose from {METHODS}")
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
        raise ValueError(
            f"unknown strategy {as_written(strategy)}; choose from {STRATEGIES}"
        )
    return _Block(reps, est, jack, n_c, _normal_ci(est, se, confidence_level))


# ------------------------------------------------------------------ kappa
def _margin_matrix(c: int) -> np.ndarray:
    """``(C*C, 2C+1)`` 0/1 matrix: row sums, column sums and the trace."""
    cells = np.arange(c * c)
    m = np.zeros((c * c, 2 * c + 1))
    m[cells, cells // c] = 1.0
    m[cells, c + cells % c] = 1.0
    m[cells[cells // c == cells % c], 2 * c] = 1.0
    return m


def _kappa(tab: np.ndarray, c: int) -> np.ndarray:
    """Cohen's kappa of flattened C x C tables ``(..., C*C)``."""
    return _kappa_margins(tab @ _margin_matrix(c), c)


def _kappa_margins(marg: np.ndarray, c: int) -> np.ndarray:
    """Cohen's kappa from ``tab @ _margin_matrix(c)``: row sums, column sums, trace.

    For count tables (integer-valued floats below 2**53) every sum is exact
    in any order, so the result is bitwise the direct formula's, and a
    replicate's margins can be summed from its patterns' margins.
    """
    rows, cols, diag = marg[..., :c], marg[..., c : 2 * c], marg[..., 2 * c]
    tot = rows.sum(axis=-1)
    p_o = diag / tot
    p_e = (rows * cols).sum(axis=-1) / tot**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p_o - p_e) / (1.0 - p_e)


def _kappa_block(strategy, labels, preds, b, gen, confidence_level, n_labels):
    from evalci.methods.analytic.closed_form import _kappa_fce

    if strategy not in STRATEGIES:
        raise ValueError(
            f"unknown strategy {as_written(strategy)}; choose from {STRATEGIES}"
        )
    t, n, k = preds.shape
    cc = n_labels * n_labels
    if strategy == "mode_aggregate":
        _, mode = _mode_correct(labels, preds, gen, n_labels)
        cell = labels * n_labels + mode  # (T, N): one run per input
        units = cell[..., None]
    elif strategy == "iid":
        units = (labels[..., None] * n_labels + preds).reshape(t, n * k)[..., None]
    else:
        units = labels[..., None] * n_labels + preds  # (T, N, k)
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
    reps = _kappa_reps(strategy, labels, preds, table, b, gen, n_labels)
    return _Block(reps, est, jack, jack_w, clt)


def _kappa_reps(strategy, labels, preds, table, b, gen, c):
    """``(T, b)`` kappa replicates of a block, from draws its trials share.

    Units are drawn once per chunk of replicates (:mod:`.shared_draws`) and
    read by every trial through its own random layout of its groups: iid,
    mode_aggregate and single_draw group the drawn rows by table cell
    (single_draw: N draws over the N k rows); cluster and hierarchical group
    the inputs by label and predictions, and hierarchical then draws each
    drawn input's k runs from shared run slots.
    """
    t, n, k = preds.shape
    if strategy == "hierarchical":
        return _hierarchical_reps(labels, preds, b, gen, c)
    if strategy == "cluster":
        sizes, lab, cnt = _input_groups(labels, preds, c)
        units = draws = n
        lay = layout(sizes, n, gen)
        values = _input_margins(in_order(lab, lay), in_order(cnt, lay), k, c)
    else:
        units = n if strategy == "mode_aggregate" else n * k
        draws = n * k if strategy == "iid" else n
        lay = layout(table.astype(np.int64), units, gen)
        mm = _margin_matrix(c)
        values = in_order(np.broadcast_to(mm, (t, *mm.shape)), lay)
    reps = np.empty((t, b))
    for part in chunks(b, SharedCounts.nbytes(units)):
        counts = SharedCounts(units, draws, part.stop - part.start, gen)
        reps[:, part] = _kappa_margins(counts.margins(lay, values), c)
    return reps


def _hierarchical_reps(labels, preds, b, gen, c) -> np.ndarray:
    """Hierarchical replicates: shared input draws, then shared run slots."""
    t, n, k = preds.shape
    sizes, lab, cnt = _input_groups(labels, preds, c)
    lay = layout(sizes, n, gen)
    terms = run_terms(in_order(lab, lay), in_order(cnt, lay), k, c)
    reps = np.empty((t, b))
    for part in chunks(b, SharedCounts.nbytes(n) + SharedRuns.nbytes(n * k, k)):
        size = part.stop - part.start
        counts = SharedCounts(n, n, size, gen)
        slots = SharedRuns(n * k, k, size, gen)
        step = SharedRuns.batch(sizes.shape[1], size)
        for lo in range(0, t, step):
            tr = slice(lo, lo + step)
            marg = slots.margins(counts.counts(lay[tr]), k, terms[tr])
            reps[tr, part] = _kappa_margins(marg, c)
    return reps


def _input_groups(labels: np.ndarray, preds: np.ndarray, c: int):
    """Each trial's inputs grouped by true label and per-class run counts.

    Returns ``sizes (T, G)``, ``labels (T, G)`` and ``counts (T, G, C)``,
    rows padded with groups of size 0 to the largest G of the block.
    """
    t, n, _ = preds.shape
    cnt = (preds[..., None] == np.arange(c)).sum(axis=-2)  # (T, N, C)
    rows = np.concatenate(
        [
            np.repeat(np.arange(t), n)[:, None],
            labels.reshape(-1, 1),
            cnt.reshape(-1, c),
        ],
        axis=1,
    )
    uniq, size = np.unique(rows, axis=0, return_counts=True)
    trial = uniq[:, 0]
    pos = np.arange(len(uniq)) - np.searchsorted(trial, np.arange(t))[trial]
    g = int(pos.max()) + 1
    sizes, lab = np.zeros((t, g), np.int64), np.zeros((t, g), np.int64)
    counts = np.zeros((t, g, c), np.int64)
    sizes[trial, pos], lab[trial, pos], counts[trial, pos] = (
        size,
        uniq[:, 1],
        uniq[:, 2:],
    )
    return sizes, lab, counts


def _input_margins(lab: np.ndarray, cnt: np.ndarray, k: int, c: int) -> np.ndarray:
    """One input's contribution to kappa's margins, per group ``(T, G, 2c + 1)``."""
    v = np.zeros(lab.shape + (2 * c + 1,))
    np.put_along_axis(v, lab[..., None], float(k), axis=-1)
    v[..., c : 2 * c] = cnt
    v[..., 2 * c] = np.take_along_axis(cnt, lab[..., None], axis=-1)[..., 0]
    return v
