"""Benchmark suites: one score per system over many tasks, with honest intervals.

A suite (MMLU's 57 subjects, HELM's scenarios, an lm-eval group) scores each
system on items nested in tasks. Two choices decide the number and its
uncertainty, and they must match:

* **weighting**: ``"micro"`` pools the items (each item counts once:
  ``sum_t n_t m_t / N``); ``"macro"`` averages the task means (each task
  counts once: ``sum_t m_t / T``). lm-eval reported the macro mean with
  the micro (pooled) estimator's standard error until its PR 3882; with
  tasks of unequal size that error bar belongs to another estimator.
* **tasks**: ``"fixed"`` (default): these tasks are the whole suite, so only
  the items are a sample: a stratified bootstrap, tasks as strata (items
  resampled within each task, its size kept). ``"random"``: the tasks are a
  sample from a larger universe of tasks (the claim is about "reasoning
  tasks", not these 14): a two-stage bootstrap, tasks drawn with
  replacement, then items within each drawn task (Davison & Hinkley 1997,
  section 3.8). Its interval is wider, and is the one that covers the
  universe's mean (see ``tests/methods/suites/test_suites.py`` for the coverage).

The matching closed-form standard errors (``standard_error_analytic``; ``s_t``
the items' standard deviation in task ``t``, ``ddof=1``):

============  ==========================================  =====================================
tasks         macro (``sum_t m_t / T``)                   micro (``sum_t n_t m_t / N``)
============  ==========================================  =====================================
fixed         ``sqrt(sum_t s_t^2 / n_t) / T``             ``sqrt(sum_t n_t s_t^2) / N``
random        ``sd_t(m_t) / sqrt(T)``                     ``sqrt(sum_t n_t^2 (m_t - est)^2 /
                                                          (T (T - 1))) / mean_t(n_t)``
============  ==========================================  =====================================

Every system is resampled with the same draws of tasks and items, so the
gaps between systems (:meth:`SuiteResult.gaps`) are paired.

``metric="win_rate"``: HELM's mean win rate. Per task, the share of the
other systems (that ran the task) a system beats, ties counting one half,
averaged over tasks; resampled with the same draws (a task drawn twice
under ``tasks="random"`` gets one resample of twice its items, which is
exact for the means and an approximation for win rates).

A sparse system x task matrix (not every system ran every task) is
warned about with the missing cells named; see ``missing`` in
:func:`suite_ci` for what is then computed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from evalci._base import text as _text
from evalci._base.text import as_written
from evalci._base.validate import (
    check_columns,
    check_finite,
    check_frame,
    check_level,
    check_n_resamples,
    check_name,
    check_option,
)
from evalci._base.warnings import (
    DegenerateDataWarning,
    FewClustersWarning,
    MissingDataWarning,
)
from evalci._base.warnings import warn as _warn
from evalci.engine import resampling as _rs
from evalci.engine.passes import check_resamples_fit
from evalci.engine.table import check_magnitude

__all__ = ["SuiteResult", "suite_ci", "MissingTasksWarning"]

WEIGHTINGS = ("macro", "micro")
TASKS = ("fixed", "random")
METRICS = ("mean", "win_rate")
MISSING = (None, "common", "available")
_ROLES = ("value", "task", "cluster", "system")


class MissingTasksWarning(MissingDataWarning):
    """Some systems did not run some tasks of the suite (a sparse matrix)."""


# ===================================================================== result
@dataclass(frozen=True, repr=False)
class SuiteResult:
    """One suite score per system, with intervals from shared draws.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per system: ``system, estimate, low, high, standard_error``
        (bootstrap), ``standard_error_analytic`` (the closed form matching
        the weighting and ``tasks``; NaN for ``win_rate``), ``n_tasks``,
        ``n_items``.
    bootstrap_distribution : ndarray
        ``(n_systems, n_resamples)``, systems in table order, from the same
        draws of tasks and items for every system.
    task_scores : pandas.DataFrame
        Mean score of each system (columns) on each task (rows); NaN where a
        system did not run a task.
    missing_cells : pandas.DataFrame
        The (system, task) cells with no rows (empty when the matrix is full).
    weighting, tasks, metric : str
        As passed to :func:`suite_ci`.
    missing : str or None
        As passed.
    confidence_level : float
        The level of the intervals, in (0, 1).
    n_resamples : int
        Bootstrap replicates behind the intervals.
    """

    table: pd.DataFrame = field(repr=False)
    bootstrap_distribution: np.ndarray = field(repr=False)
    task_scores: pd.DataFrame = field(repr=False)
    missing_cells: pd.DataFrame = field(repr=False)
    weighting: str
    tasks: str
    metric: str
    missing: str | None
    confidence_level: float
    n_resamples: int

    def to_frame(self) -> pd.DataFrame:
        """The per-system table (a copy)."""
        return self.table.copy()

    def gaps(self, pairs=None) -> pd.DataFrame:
        """Paired gaps ``b - a`` between systems, from the shared draws.

        Parameters
        ----------
        pairs : list of (a, b), optional
            Default: every pair, in table order.

        Returns
        -------
        pandas.DataFrame
            ``a, b, gap, low, high, standard_error, pvalue`` (the percentile
            interval at the result's level; the p-value the smallest
            ``1 - level`` whose percentile interval excludes 0, ties half;
            at least ``1 / n_resamples``, the resolution of the bootstrap).

        Raises
        ------
        ValueError
            When ``a`` and ``b`` ran different tasks and ``missing`` was not
            ``"available"``: their scores average different tasks.
        """
        names = list(self.table.system)
        pos = {s: i for i, s in enumerate(names)}
        if pairs is None:
            pairs = list(combinations(names, 2))
        ran = self.task_scores.notna()
        rows = []
        alpha = 1 - self.confidence_level
        for a, b in pairs:
            for s in (a, b):
                if s not in pos:
                    raise ValueError(
                        f"`pairs`: {as_written(s)} is not a system of the suite."
                    )
            differ = ran[a] != ran[b]
            if differ.any() and self.missing != "available":
                raise ValueError(
                    f"`pairs`: {as_written(a)} and {as_written(b)} ran different tasks (e.g. "
                    f"{list(ran.index[differ][:3])}), so their scores average "
                    "different tasks and the gap mixes task difficulty with "
                    "skill. Use suite_ci(..., missing='common') to score every "
                    "system on the tasks all of them ran, or missing='available' "
                    "to compare anyway."
                )
            d = (
                self.bootstrap_distribution[pos[b]]
                - self.bootstrap_distribution[pos[a]]
            )
            est = float(self.table.estimate[pos[b]] - self.table.estimate[pos[a]])
            low, high = np.quantile(d, [alpha / 2, 1 - alpha / 2])
            share = ((d < 0).sum() + 0.5 * (d == 0).sum()) / len(d)
            p = min(1.0, max(2 * min(share, 1 - share), 1 / len(d)))
            rows.append((a, b, est, low, high, d.std(ddof=1), p))
        cols = ["a", "b", "gap", "low", "high", "standard_error", "pvalue"]
        return pd.DataFrame(rows, columns=cols)

    def _header(self) -> str:
        return (
            f"{self.weighting} {self.metric} over {len(self.task_scores)} tasks "
            f"({self.tasks}), {self.confidence_level:.0%} "
            f"{'two-stage' if self.tasks == 'random' else 'stratified'} bootstrap "
            f"({self.n_resamples} resamples)"
        )

    def _note(self) -> str:
        n = len(self.missing_cells)
        if not n:
            return ""
        how = {None: "", "common": ", scored on the tasks all ran"}.get(
            self.missing, ", each system scored on the tasks it ran"
        )
        return f"{n} (system, task) cell{'' if n == 1 else 's'} missing{how}"

    def __repr__(self) -> str:
        body = _text.table_text(self.table)
        note = f"\n{self._note()}" if self._note() else ""
        return f"SuiteResult: {_text.terminal(self._header())}\n{body}{note}"

    def _repr_html_(self) -> str:
        return _text.result_html(
            "SuiteResult", self._header(), self.table, self._note()
        )


# ===================================================================== inputs
@dataclass(frozen=True)
class _Suite:
    """The suite as arrays: per task, items x systems, NaN where not run."""

    systems: list
    tasks: list
    blocks: list  # per task: (n_t, S) per-item scores
    ran: np.ndarray  # (T, S) bool
    missing_cells: pd.DataFrame


def _suite_iv(data, value, task, cluster, system, weighting, tasks, metric, missing):
    """Validate and normalise :func:`suite_ci`'s arguments; the frame to read."""
    check_frame(data, rows=True)
    if value is None or task is None or cluster is None:
        raise ValueError(
            "`value`, `task` and `cluster` are required: the score column, the "
            "column naming each item's task and the column identifying items."
        )
    for arg, name in zip((value, task, cluster, system), _ROLES, strict=True):
        check_name(arg, name)
    check_columns(data, [value], "value")
    check_columns(data, [task], "task")
    check_columns(data, [cluster], "cluster")
    check_columns(data, [system], "system")
    if len({value, task, cluster, system}) < 4:
        raise ValueError("`value`, `task`, `cluster` and `system` must be 4 columns.")
    check_option(weighting, "weighting", WEIGHTINGS)
    check_option(tasks, "tasks", TASKS)
    check_option(metric, "metric", METRICS)
    check_option(missing, "missing", MISSING)
    if metric == "win_rate" and weighting == "micro":
        raise ValueError(
            "`weighting`: a win rate is a per-task quantity averaged over tasks "
            "(macro); use weighting='macro' with metric='win_rate'."
        )
    if not pd.api.types.is_numeric_dtype(
        data[value]
    ) and not pd.api.types.is_bool_dtype(data[value]):
        raise TypeError(
            f"`value` column {as_written(value)} must be numeric (or boolean)."
        )
    if data[[value, task, cluster, system]].isna().any().any():
        raise ValueError(
            f"columns {as_written(value)}, {as_written(task)}, {as_written(cluster)}, {as_written(system)} have missing "
            "values; drop or fill those rows first."
        )
    frame = data[[system, task, cluster, value]].copy()  # never the user's frame
    frame[value] = frame[value].astype(float)
    check_finite(frame, [value], "value")
    check_magnitude(frame[value].to_numpy()[:, None], value, f"metric {metric!r}")
    if metric == "win_rate" and frame[system].nunique() < 2:
        raise ValueError(
            f"`metric`='win_rate' needs at least two systems (a win rate is the "
            f"share of the other systems a system beats); column {system!r} holds "
            f"one, {frame[system].iloc[0]!r}. Use metric='mean'."
        )
    return frame


def _build(frame, value, task, cluster, system, missing) -> _Suite:
    """Per-item means (over runs) of every system, task by task."""
    item = frame.groupby([task, cluster, system], sort=True)[value].mean()
    wide = item.unstack(system)  # rows: (task, item) sorted, columns: systems
    systems = list(wide.columns)
    codes = wide.index.codes[0]
    task_names = list(wide.index.levels[0][np.unique(codes)])
    cuts = np.flatnonzero(np.diff(codes)) + 1
    values = wide.to_numpy(float)
    blocks, ran = [], []
    for t, y in zip(task_names, np.split(values, cuts), strict=True):
        has = ~np.isnan(y)
        ran_t = has.any(axis=0)
        partial = ran_t & ~has.all(axis=0)
        if partial.any():
            s = systems[int(np.flatnonzero(partial)[0])]
            n_miss = int((~has[:, np.flatnonzero(partial)[0]]).sum())
            raise ValueError(
                f"system {as_written(s)} ran task {as_written(t)} but lacks {n_miss} of its "
                f"{len(y)} items: a suite needs every item of a task a system "
                "ran. Drop the task for that system, or fill the missing items "
                "(e.g. as failures, 0)."
            )
        blocks.append(y)
        ran.append(ran_t)
    ran = np.array(ran)
    cells = [
        (s, t)
        for j, s in enumerate(systems)
        for i, t in enumerate(task_names)
        if not ran[i, j]
    ]
    missing_cells = pd.DataFrame(cells, columns=["system", "task"])
    if cells:
        shown = ", ".join(f"({as_written(s)}, {as_written(t)})" for s, t in cells[:6])
        more = f" and {len(cells) - 6} more" if len(cells) > 6 else ""
        what = {
            None: "each system is scored over the tasks it ran, and gaps "
            "between systems that ran different tasks are refused (pass "
            "missing='common' or 'available')",
            "common": "only the tasks every system ran are used",
            "available": "each system is scored over the tasks it ran, and "
            "gaps compare averages over different tasks",
        }[missing]
        _warn(
            f"{len(cells)} (system, task) cells have no rows: {shown}{more}; {what}.",
            MissingTasksWarning,
        )
    if cells and missing == "common":
        keep = ran.all(axis=1)
        if not keep.any():
            raise ValueError(
                "missing='common': no task was run by every system; compare "
                "fewer systems, or use missing='available'."
            )
        blocks = [b for b, k in zip(blocks, keep, strict=True) if k]
        task_names = [t for t, k in zip(task_names, keep, strict=True) if k]
        ran = ran[keep]
    return _Suite(systems, task_names, blocks, ran, missing_cells)


# ================================================================= numbers
def _task_win_rates(means):
    """Per task (the last axis: systems), the share of others each beats."""
    ok = ~np.isnan(means)
    x = np.where(ok, means, 0.0)
    gt = (x[..., :, None] > x[..., None, :]) & ok[..., None, :]
    eq = (x[..., :, None] == x[..., None, :]) & ok[..., None, :]
    beats = gt.sum(-1) + 0.5 * (eq.sum(-1) - 1)  # minus itself
    others = ok.sum(-1, keepdims=True) - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok & (others > 0), beats / np.maximum(others, 1), np.nan)


def _accumulate(num, den, sums, copies, size, ran, weighting, metric):
    """Add one task's terms of the suite scores to the running sums.

    ``sums`` ``(b, S)`` are the task's resampled item sums (``copies * n_t``
    items), ``copies`` ``(b,)`` its draws; ``num`` and ``den`` ``(b, S)``
    the numerator and denominator summed over the tasks so far, in task
    order: the score is ``num / den``. Micro: item sums over items; macro:
    task means over task copies; win rate: per task, the share of other
    systems beaten (ties half), averaged over the task copies where defined.
    Only ``(B, S)`` arrays are ever held.
    """
    drawn = copies[:, None] * ran[None, :]
    items = drawn * size
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(items > 0, sums / np.where(items > 0, items, 1), np.nan)
    if metric == "win_rate":
        wr = _task_win_rates(means)
        x, d = wr * (w := np.where(np.isnan(wr), 0, drawn)), w
    elif weighting == "micro":
        x, d = np.where(ran, sums, 0), items
    else:
        x, d = means * drawn, drawn
    num += np.where(np.isnan(x), 0.0, x)
    den += d


def _replicates(suite: _Suite, tasks, n_resamples, root, how, block=250):
    """Suite scores ``(B, S)`` of ``n_resamples`` draws (``how``: weighting, metric).

    One generator per task from ``root`` (tasks sorted), so the draws do not
    depend on row order; the task draws come from their own stream. Each
    task's resampled sums go into running sums at once (:func:`_accumulate`).
    """
    t_count, n_sys = len(suite.tasks), len(suite.systems)
    sizes = np.array([len(b) for b in suite.blocks])
    streams = root.spawn(t_count + 1)
    if tasks == "random":
        top = np.random.default_rng(streams[-1])
        copies = top.multinomial(t_count, np.full(t_count, 1 / t_count), n_resamples)
    else:
        copies = np.broadcast_to(np.int64(1), (n_resamples, t_count))  # no memory
    num = np.zeros((n_resamples, n_sys))
    den = np.zeros((n_resamples, n_sys), dtype=np.int64)
    for t, y in enumerate(suite.blocks):
        gen = np.random.default_rng(streams[t])
        y0 = np.nan_to_num(y)  # systems that did not run t: masked by `ran`
        n_t = int(sizes[t])
        for lo in range(0, n_resamples, block):  # (block, n_t) counts at a time
            draws = copies[lo : lo + block, t] * n_t  # items drawn per replicate
            rows = np.repeat(np.arange(len(draws)), draws)
            picks = gen.integers(0, n_t, size=len(rows))  # uniform, with replacement
            w = np.bincount(rows * n_t + picks, minlength=len(draws) * n_t)
            part = slice(lo, lo + block)
            sums = w.reshape(len(draws), n_t) @ y0
            _accumulate(
                num[part], den[part], sums, copies[part, t], n_t, suite.ran[t], *how
            )
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def _analytic_se(suite: _Suite, weighting, tasks, metric, estimate):
    """The closed-form standard error per system (module docstring's table)."""
    out = np.full(len(suite.systems), np.nan)
    if metric != "mean":
        return out
    for j in range(len(suite.systems)):
        ys = [b[:, j] for b, r in zip(suite.blocks, suite.ran[:, j], strict=True) if r]
        n = np.array([len(y) for y in ys], dtype=float)
        m = np.array([y.mean() for y in ys])
        var = np.array([y.var(ddof=1) if len(y) > 1 else 0.0 for y in ys])
        t = len(ys)
        if tasks == "fixed" and weighting == "macro":
            out[j] = np.sqrt((var / n).sum()) / t
        elif tasks == "fixed":
            out[j] = np.sqrt((n * var).sum()) / n.sum()
        elif t > 1 and weighting == "macro":
            out[j] = m.std(ddof=1) / np.sqrt(t)
        elif t > 1:
            u = n * (m - estimate[j])
            out[j] = np.sqrt((u**2).sum() / (t * (t - 1))) / n.mean()
    return out


def _point_estimate(suite, weighting, metric) -> np.ndarray:
    """Each system's suite score on the data itself (NaN, said, where a
    system has no one to beat)."""
    num = np.zeros((1, len(suite.systems)))
    den = np.zeros((1, len(suite.systems)), dtype=np.int64)
    ones = np.ones(1, dtype=np.int64)
    for b, ran in zip(suite.blocks, suite.ran, strict=True):
        sums = np.nan_to_num(b).sum(0)[None]
        _accumulate(num, den, sums, ones, len(b), ran, weighting, metric)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = (num / den)[0]
    if np.isnan(estimate).any():
        alone = [s for s, e in zip(suite.systems, estimate, strict=True) if e != e]
        _warn(
            f"no win rate for {', '.join(map(repr, alone[:5]))}: no other system "
            "ran any task they ran, so there is no one to beat; their rows are "
            "NaN. Compare systems that share tasks (or use metric='mean').",
            DegenerateDataWarning,
        )
    return estimate


def suite_ci(
    data: pd.DataFrame,
    value: str | None = None,
    task: str | None = None,
    cluster: str | None = None,
    system: str = "system",
    *,
    weighting: str = "macro",
    tasks: str = "fixed",
    metric: str = "mean",
    missing: str | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    rng=None,
) -> SuiteResult:
    """Suite scores of every system over tasks, with matching intervals.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table: one row per (system, task, item, run); several runs of
        an item are averaged first (the item is the unit).
    value : str
        The score column (0/1 or any number).
    task : str
        The column naming each item's task.
    cluster : str
        The column identifying items (within a task: an item id may repeat
        across tasks).
    system : str
        The column naming the system.
    weighting : {'macro', 'micro'}
        ``"macro"`` (default): the mean of the task means, each task counts
        once. ``"micro"``: the mean over all items (tasks by their size).
    tasks : {'fixed', 'random'}
        ``"fixed"`` (default): these tasks are the suite; items are resampled
        within each task (stratified bootstrap). ``"random"``: the tasks are a
        sample of a larger universe; tasks are resampled, then items within
        each drawn task (two-stage bootstrap).
    metric : {'mean', 'win_rate'}
        The mean score, or the mean win rate (per task, the share of the
        other systems a system beats, ties half, averaged over tasks; macro
        only).
    missing : {None, 'common', 'available'}
        When some systems did not run some tasks (always warned, with the
        cells named): None (default) scores each system over the tasks it
        ran and refuses the gaps (:meth:`SuiteResult.gaps`) between systems
        that ran different tasks; ``"common"`` keeps only the tasks every
        system ran; ``"available"`` scores each system over its tasks and
        compares them anyway. Within a task it ran, a system must have
        every item.
    confidence_level : float
        Of the percentile intervals; default 0.95.
    n_resamples : int
        Bootstrap replicates (default 2,000).
    rng : int, Generator or SeedSequence, optional
        Seed (SPEC 7); the same draws of tasks and items for every system.

    Returns
    -------
    SuiteResult

    Examples
    --------
    >>> import pandas as pd, evalci
    >>> df = pd.DataFrame({
    ...     "system": ["a"] * 6 + ["b"] * 6,
    ...     "task": ["t1", "t1", "t1", "t1", "t2", "t2"] * 2,
    ...     "item": [1, 2, 3, 4, 1, 2] * 2,
    ...     "correct": [1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1]})
    >>> macro = evalci.suite_ci(df, "correct", task="task", cluster="item", rng=0)
    >>> macro.table[["system", "estimate"]]  # (3/4 + 0) / 2, (1/4 + 1) / 2
      system  estimate
    0      a     0.375
    1      b     0.625
    >>> micro = evalci.suite_ci(df, "correct", task="task", cluster="item",
    ...                         weighting="micro", rng=0)
    >>> micro.table.estimate.round(3).tolist()  # 3/6, 3/6
    [0.5, 0.5]
    """
    frame = _suite_iv(
        data, value, task, cluster, system, weighting, tasks, metric, missing
    )
    level = check_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples, minimum=2, hint=" Use 2000.")
    suite = _build(frame, value, task, cluster, system, missing)
    if tasks == "random" and len(suite.tasks) < 10:
        _warn(
            f"tasks='random' with {len(suite.tasks)} tasks: resampling so few "
            "tasks gives an unstable, usually too narrow interval for the "
            "universe of tasks.",
            FewClustersWarning,
        )
    n_sys, n_tasks = len(suite.systems), len(suite.tasks)
    what = f"over {n_tasks:,} tasks and {n_sys:,} systems"  # (B, S) x 6, (B, T)
    check_resamples_fit(n_resamples, 8.0 * (6 * n_sys + n_tasks), 0.0, what, "2,000")
    estimate = _point_estimate(suite, weighting, metric)
    root = _rs.seed_sequence(rng)
    reps = _replicates(suite, tasks, n_resamples, root, (weighting, metric)).T
    sizes = np.array([len(b) for b in suite.blocks])[:, None]
    alpha = 1 - level
    with warnings.catch_warnings():  # rows of NaN: systems warned about above
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(reps, [alpha / 2, 1 - alpha / 2], axis=1)
        se = np.nanstd(reps, axis=1, ddof=1)
    table = pd.DataFrame(
        {
            "system": suite.systems,
            "estimate": estimate,
            "low": low,
            "high": high,
            "standard_error": se,
            "standard_error_analytic": _analytic_se(
                suite, weighting, tasks, metric, estimate
            ),
            "n_tasks": suite.ran.sum(0),
            "n_items": (suite.ran * sizes).sum(0),
        }
    )
    task_scores = pd.DataFrame(
        [
            np.where(r, b.mean(0), np.nan)
            for b, r in zip(suite.blocks, suite.ran, strict=True)
        ],
        index=pd.Index(suite.tasks, name=task),
        columns=pd.Index(suite.systems, name=system),
    )
    return SuiteResult(
        table=table,
        bootstrap_distribution=reps,
        task_scores=task_scores,
        missing_cells=suite.missing_cells,
        weighting=weighting,
        tasks=tasks,
        metric=metric,
        missing=missing,
        confidence_level=level,
        n_resamples=n_resamples,
    )
