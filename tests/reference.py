"""Slow, obviously correct bootstrap loops: the reference for evalci's fast engine.

Written from seed 000's description of the five strategies, independently of
``evalci``'s code (no count weights, no sufficient statistics, no shared
random streams). Every replicate is built explicitly, one drawn input at a
time, as a list of rows ``(value, truth, weight)``, and the metric is then
computed on that list:

* ``cluster``: all k_i runs of each drawn input;
* ``single_draw``: one random run of each drawn input;
* ``hierarchical``: k_i runs drawn with replacement from each drawn input;
* ``mode_aggregate``: each input's runs are first replaced by their mode
  (ties broken uniformly at random), then the one-row inputs are resampled;
* ``iid``: every row is an input of its own (clustering ignored).

Weights: with ``weight="input"`` every drawn input carries total weight 1,
spread equally over the rows it contributes to the replicate, so a weighted
mean is the mean of per-input means. With ``weight="run"`` a drawn input
carries total weight k_i (its number of runs in the data), so the cluster
and hierarchical replicates are plain pooled means and a single-draw row
stands for the k_i runs of its input.

Strata: inputs are drawn with replacement within each stratum, n_h draws in
stratum h. Groups (``by``): all groups share the drawn inputs of a replicate
(paired); run-level draws are made separately for each group. For ``iid``
the rows of different groups are different inputs, so each group is
resampled on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = [
    "ReferenceResult",
    "reference_bootstrap",
    "weighted_metric",
    "mode_with_ties",
]


@dataclass
class _Input:
    stratum: object
    rows: dict = field(default_factory=dict)  # group -> list of (value, truth)


@dataclass
class ReferenceResult:
    groups: list
    estimate: np.ndarray  # (G,)
    replicates: np.ndarray  # (G, B)


def weighted_metric(rows, metric: str, labels=None) -> float:
    """The metric of weighted rows ``[(value, truth, weight), ...]``.

    ``mean``: weighted mean of the values; ``accuracy``: weighted share of
    ``value == truth``; ``kappa``: Cohen's kappa of the weighted confusion
    matrix over ``labels`` (rows = truth, columns = value).
    """
    w = np.array([r[2] for r in rows], dtype=float)
    if metric == "mean":
        v = np.array([r[0] for r in rows], dtype=float)
        return float((w * v).sum() / w.sum())
    if metric == "accuracy":
        hit = np.array([r[0] == r[1] for r in rows], dtype=float)
        return float((w * hit).sum() / w.sum())
    if metric == "kappa":
        pos = {lab: i for i, lab in enumerate(labels)}
        conf = np.zeros((len(labels), len(labels)))
        for value, truth, weight in rows:
            conf[pos[truth], pos[value]] += weight
        p = conf / conf.sum()
        p_o = np.trace(p)
        p_e = float(p.sum(axis=1) @ p.sum(axis=0))
        return float((p_o - p_e) / (1.0 - p_e))
    raise ValueError(metric)


def mode_with_ties(values, rng: np.random.Generator):
    """The most frequent value; among tied values one chosen uniformly at random."""
    counts: dict = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    top = max(counts.values())
    tied = sorted(v for v, c in counts.items() if c == top)
    return tied[int(rng.integers(len(tied)))]


def _build_inputs(df, value, cluster, truth, by, strata):
    """Inputs in a fixed order, each with its stratum and rows per group."""
    groups = [None] if by is None else sorted(df[by].unique())
    inputs: dict = {}
    for rec in df.to_dict("records"):
        key = rec[cluster]
        inp = inputs.setdefault(
            key, _Input(stratum=None if strata is None else rec[strata])
        )
        if strata is not None:
            assert inp.stratum == rec[strata], "stratum varies within an input"
        g = None if by is None else rec[by]
        t = None if truth is None else rec[truth]
        inp.rows.setdefault(g, []).append((rec[value], t))
    return groups, [inputs[key] for key in sorted(inputs)]


def _draw_inputs(rng, strata_of_inputs) -> list[int]:
    """Indices of the drawn inputs: n_h with replacement within each stratum h."""
    by_stratum: dict = {}
    for i, h in enumerate(strata_of_inputs):
        by_stratum.setdefault(h, []).append(i)
    drawn = []
    for h in sorted(by_stratum, key=repr):
        members = by_stratum[h]
        for pos in rng.integers(0, len(members), size=len(members)):
            drawn.append(members[pos])
    return drawn


def _contribution(rows, strategy, weight, rng):
    """Rows ``(value, truth, weight)`` that one drawn input adds to a replicate."""
    k_i = len(rows)
    if strategy == "cluster":
        chosen = list(rows)
    elif strategy == "single_draw":
        chosen = [rows[int(rng.integers(k_i))]]
    elif strategy == "hierarchical":
        chosen = [rows[pos] for pos in rng.integers(0, k_i, size=k_i)]
    else:
        raise ValueError(strategy)
    total = 1.0 if weight == "input" else float(k_i)
    return [(v, t, total / len(chosen)) for v, t in chosen]


def _bootstrap_inputs(
    inputs, groups, strategy, metric, weight, labels, n_resamples, rng
):
    """Estimates (G,) and replicates (G, B) of inputs that share their draws."""
    strata_of_inputs = [inp.stratum for inp in inputs]
    estimate = np.empty(len(groups))
    for j, g in enumerate(groups):
        rows = []
        for inp in inputs:
            rows += _contribution(inp.rows[g], "cluster", weight, rng)
        estimate[j] = weighted_metric(rows, metric, labels)
    reps = np.empty((len(groups), n_resamples))
    for b in range(n_resamples):
        drawn = _draw_inputs(rng, strata_of_inputs)
        for j, g in enumerate(groups):
            rows = []
            for i in drawn:
                rows += _contribution(inputs[i].rows[g], strategy, weight, rng)
            reps[j, b] = weighted_metric(rows, metric, labels)
    return estimate, reps


def reference_bootstrap(
    df: pd.DataFrame,
    value: str,
    cluster: str | None = None,
    *,
    strategy: str = "cluster",
    metric: str = "mean",
    truth: str | None = None,
    by: str | None = None,
    strata: str | None = None,
    weight: str = "input",
    n_resamples: int = 1000,
    rng=None,
) -> ReferenceResult:
    """Point estimates and bootstrap replicates, computed the slow way.

    ``metric`` is ``"mean"`` (of the value column), ``"accuracy"`` or
    ``"kappa"`` (of the value column against ``truth``). The point estimate
    uses all rows of every input (for ``mode_aggregate``: the aggregated
    rows), weighted as described in the module docstring.
    """
    rng = np.random.default_rng(rng)
    if cluster is None:
        df = df.assign(_row=np.arange(len(df)))
        cluster = "_row"
    labels = None
    if metric == "kappa":
        labels = sorted(set(df[value]) | set(df[truth]))
    groups, inputs = _build_inputs(df, value, cluster, truth, by, strata)

    if strategy == "mode_aggregate":
        for inp in inputs:
            for g, rows in inp.rows.items():
                truths = {t for _, t in rows}
                assert len(truths) == 1, "truth varies within an input"
                inp.rows[g] = [
                    (mode_with_ties([v for v, _ in rows], rng), truths.pop())
                ]
        strategy = "cluster"  # one row per input: the iid bootstrap of modes

    if strategy == "iid":
        # every row is an input of its own (keeping its input's stratum); the
        # rows of different groups are different inputs: resample groups apart
        estimate = np.empty(len(groups))
        reps = np.empty((len(groups), n_resamples))
        for j, g in enumerate(groups):
            rows_as_inputs = [
                _Input(stratum=inp.stratum, rows={g: [row]})
                for inp in inputs
                for row in inp.rows.get(g, [])
            ]
            est, rep = _bootstrap_inputs(
                rows_as_inputs, [g], "cluster", metric, weight, labels, n_resamples, rng
            )
            estimate[j], reps[j] = est[0], rep[0]
        return ReferenceResult(groups, estimate, reps)

    for inp in inputs:
        assert set(inp.rows) == set(groups), "every input must have every group"
    estimate, reps = _bootstrap_inputs(
        inputs, groups, strategy, metric, weight, labels, n_resamples, rng
    )
    return ReferenceResult(groups, estimate, reps)
