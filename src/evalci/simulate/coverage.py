"""Coverage studies: how often do evalci's intervals contain the truth? (issue 11)

:func:`coverage_study` simulates many evaluations from a model whose true
score is known, builds an interval on each with every requested strategy and
method, and reports the share of intervals that contain the truth
(endpoints inclusive, ``low <= theta <= high``; docs/paper-notes.md), with its
Monte-Carlo standard error and the interval widths.

Seed 000's confusion-matrix model (``model="seed000"`` or a confusion
matrix) runs on a batched, exact fast path (:mod:`evalci.simulate.exact`:
per-input counts of correct runs for accuracy, each input's pooled confusion
counts for kappa, whose bootstrap laws are drawn from exactly, a block of
trials at once -- for kappa the trials of a block share one draw of the
units, each read through its own layout (:mod:`evalci.simulate.shared_draws`);
intervals from the sorted replicates of a whole block;
``"clt"`` is the analytic interval).
:func:`reproduce_paper` runs it on every cell of seed 000's tables
(:mod:`evalci.simulate.paper`).

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

from evalci._base.progress import Progress as _Progress
from evalci._base.text import as_written
from evalci.simulate import confusion as simulate
from evalci.simulate.exact import (
    METHODS,
    STRATEGIES,
    _accuracy_block,
    _Block,
    _intervals,
    _kappa_block,
)
from evalci.simulate.paper import _LABELS, PAPER, PAPER_NOISE, format_paper

__all__ = [
    "coverage_study",
    "reproduce_paper",
    "format_paper",
    "PAPER",
    "PAPER_NOISE",
    "STRATEGIES",
    "METHODS",
]

BLOCK = 64  # trials per random-number block (fixed: part of the seed contract)
ENDPOINT_TOL = 1e-9  # evalci's engine lands a few ulp off the accuracy lattice


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
    if isinstance(model, str):
        if model.lower() != "seed000":
            raise ValueError(
                f"unknown model {as_written(model)}; use 'seed000' or a matrix"
            )
        return np.asarray(simulate.SEED000_CONFUSION)
    if hasattr(model, "sample") and hasattr(model, "truth"):
        return None
    return np.asarray(model, dtype=float)


def _check_study(metric, strategies, methods, trials, n_resamples):
    """The study's arguments checked; ``strategies`` and ``methods`` as lists."""
    if metric not in ("accuracy", "kappa"):
        raise ValueError(
            f"`metric` must be 'accuracy' or 'kappa'; got {as_written(metric)}"
        )
    strategies = [strategies] if isinstance(strategies, str) else list(strategies)
    methods = [methods] if isinstance(methods, str) else list(methods)
    for s in strategies:
        if s not in STRATEGIES:
            raise ValueError(
                f"unknown strategy {as_written(s)}; choose from {STRATEGIES}"
            )
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {as_written(m)}; choose from {METHODS}")
    if int(trials) < 2 or int(n_resamples) < 2:
        raise ValueError("`trials` and `n_resamples` must be at least 2")
    return strategies, methods


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
    >>> from evalci.simulate.coverage import coverage_study
    >>> res = coverage_study("seed000", strategies=("cluster", "hierarchical"),
    ...                      trials=64, n_resamples=500, rng=0)
    >>> res[["strategy", "n_inputs", "n_runs", "trials"]].to_string(index=False)
    '    strategy  n_inputs  n_runs  trials\\n     cluster       200       5      64\\nhierarchical       200       5      64'
    """
    strategies, methods = _check_study(metric, strategies, methods, trials, n_resamples)
    ns, ks = _as_list(n_inputs), _as_list(n_runs)
    entropy = _entropy(rng)
    confusion = _confusion(model)
    if confusion is None:
        return _generic_study(
            model, strategies, methods, metric, ns, ks, int(trials),
            int(n_resamples), confidence_level, entropy, progress,
        )  # fmt: skip
    study = _SeedStudy(
        metric, tuple(strategies), tuple(methods), int(trials), int(n_resamples),
        confidence_level, entropy, confusion,
    )  # fmt: skip
    bar = _Progress(len(ns) * len(ks) * study.n_blocks, progress)
    rows = []
    pool = None
    if int(n_jobs) > 1:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=int(n_jobs))
    try:
        for n in ns:
            for k in ks:
                if pool is not None:
                    ends = _ends_parallel(study, n, k, pool, bar)
                else:
                    ends = _ends_serial(study, n, k, _blocks_per_step, bar)
                rows.extend(_cell_rows(study, n, k, ends))
    finally:
        bar.close()
        if pool is not None:
            pool.shutdown()
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _SeedStudy:
    """What every cell of a study of a confusion-matrix model shares."""

    metric: str
    strategies: tuple
    methods: tuple
    trials: int
    n_resamples: int
    confidence_level: float
    entropy: int
    confusion: np.ndarray

    @property
    def n_blocks(self) -> int:
        return -(-self.trials // BLOCK)

    def truth(self) -> float:
        if self.metric == "accuracy":
            return simulate.true_accuracy(self.confusion)
        return simulate.true_kappa(self.confusion)

    def data(self, n, k, blk):
        """Block ``blk`` of cell (n, k): labels (BLOCK, n), preds (BLOCK, n, k)."""
        return simulate.confusion_model_arrays(
            BLOCK, n, k, confusion=self.confusion, rng=_gen(self.entropy, 0, n, k, blk)
        )

    def replicates(self, s, n, k, blk, lab, pr) -> _Block:
        """Strategy ``s``'s replicates of block ``blk`` of cell (n, k)."""
        fn = _accuracy_block if self.metric == "accuracy" else _kappa_block
        gen = _gen(self.entropy, 1, n, k, STRATEGIES.index(s), blk)
        return fn(s, lab, pr, self.n_resamples, gen, self.confidence_level,
                  self.confusion.shape[0])  # fmt: skip

    def empty_ends(self) -> dict:
        """``{(strategy, method): ([lows], [highs])}``, in row order."""
        return {(s, m): ([], []) for s in self.strategies for m in self.methods}


def _ends_serial(study, n, k, blocks_per_step, bar) -> dict:
    """Cell (n, k)'s interval ends, ``blocks_per_step`` blocks at a time."""
    ends = study.empty_ends()
    n_blocks = study.n_blocks
    for first in range(0, n_blocks, max(1, int(blocks_per_step))):
        step = range(first, min(n_blocks, first + blocks_per_step))
        data = [(blk, *study.data(n, k, blk)) for blk in step]
        # whole blocks are simulated, then cut: a study with fewer trials is a
        # prefix of a larger one
        keep = np.arange(len(step) * BLOCK) + first * BLOCK < study.trials
        for s in study.strategies:
            merged = _merge_blocks(
                [study.replicates(s, n, k, blk, lab, pr) for blk, lab, pr in data]
            )
            for m, (lo, hi) in _intervals(
                merged, study.methods, study.confidence_level
            ).items():
                ends[(s, m)][0].append(lo[keep])
                ends[(s, m)][1].append(hi[keep])
        bar.update(len(step))
    return ends


def _ends_parallel(study, n, k, pool, bar) -> dict:
    """Cell (n, k)'s interval ends, one block of one strategy per task."""
    ends = study.empty_ends()
    tasks = [(study, s, n, k, blk) for s in study.strategies
             for blk in range(study.n_blocks)]  # fmt: skip
    for (_, s, *_rest), res in zip(tasks, pool.map(_block_task, tasks), strict=True):
        for m, (lo, hi) in res.items():
            ends[(s, m)][0].append(lo)
            ends[(s, m)][1].append(hi)
        bar.update(1 / len(study.strategies))
    cut = study.trials
    return {
        key: ([np.concatenate(lo)[:cut]], [np.concatenate(hi)[:cut]])
        for key, (lo, hi) in ends.items()
    }


def _block_task(args):
    """One block of one strategy, for a worker process: ``{method: ends}``."""
    study, s, n, k, blk = args
    lab, pr = study.data(n, k, blk)
    blk_reps = study.replicates(s, n, k, blk, lab, pr)
    return _intervals(blk_reps, study.methods, study.confidence_level)


def _merge_blocks(blocks) -> _Block:
    """One :class:`_Block` of the trials of ``blocks``, in order."""
    return _Block(
        np.concatenate([b.reps for b in blocks]),
        np.concatenate([b.estimate for b in blocks]),
        _pad_cat([b.jack for b in blocks]),
        _pad_cat([b.jack_w for b in blocks]),
        (
            np.concatenate([b.clt[0] for b in blocks]),
            np.concatenate([b.clt[1] for b in blocks]),
        ),
    )


def _cell_rows(study, n, k, ends) -> list:
    """The result rows of cell (n, k): one per (strategy, method)."""
    truth = study.truth()
    rows = []
    for (s, m), (lo, hi) in ends.items():
        summ = _summary(np.concatenate(lo), np.concatenate(hi), truth)
        rows.append(
            {"metric": study.metric, "strategy": s, "method": m,
             "n_inputs": n, "n_runs": k, "system": "model",
             "truth": truth, **summ, "n_resamples": study.n_resamples,
             "confidence_level": study.confidence_level}
        )  # fmt: skip
    return rows


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
                            r = _generic_interval(df, s, m, metric, b, level, seed)
                            _add_ends(ends, r, s, m, truth)
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


def _generic_interval(df, s, m, metric, b, level, seed):
    """One trial's interval by strategy ``s`` and method ``m`` (or NaN), its
    warnings silenced: a coverage study counts what the intervals do."""
    from evalci import metrics as metrics
    from evalci._base.warnings import EvalciWarning
    from evalci.engine.bootstrap import bootstrap
    from evalci.methods.analytic import analytic_ci

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalciWarning)
        if m == "clt":
            return _generic_clt(df, s, metric, analytic_ci)
        value, met = "correct", "mean"
        if metric == "kappa":
            value, met = "pred", metrics.kappa(truth="label")
        elif s == "mode_aggregate" and "pred" in df:
            value, met = "pred", metrics.accuracy(truth="label")
        return bootstrap(
            df, value, "input_id", strategy=s, metric=met,
            by="system", method=m, n_resamples=b,
            confidence_level=level,
            rng=np.random.default_rng(seed),
        )  # fmt: skip


def _add_ends(ends: dict, r, s, m, truth) -> None:
    """Append ``r``'s low and high per system to ``ends[(s, m, system)]``."""
    frame = None
    if not isinstance(r, _NaN):
        frame = r.to_frame().set_index("system")
    for sys_name in truth:
        lo, hi = ends.setdefault((s, m, sys_name), ([], []))
        if frame is None:
            lo.append(np.nan)
            hi.append(np.nan)
        else:
            lo.append(float(frame.loc[sys_name, "low"]))
            hi.append(float(frame.loc[sys_name, "high"]))


# ------------------------------------------------------------------ the paper
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
    ``note`` marks the cells docs/paper-notes.md finds the paper off by noise.

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
    table about 2 minutes in one process (the docs build runs both).
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
                     "note": ("paper off by noise, see docs/paper-notes.md ("
                              + PAPER_NOISE[key] + ")") if key in PAPER_NOISE else ""}
                )  # fmt: skip
    return pd.DataFrame(out)
