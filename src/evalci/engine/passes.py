"""The engine pass: how a bootstrap is computed, from the cube to replicates.

A pass has three steps, separate so that a scheduler (Dask) can run the
middle one as many tasks:

1. :func:`start_pass` -- the prepared cube split into draw units (groups that
   share their inputs share draws), checked (inputs per unit, memory);
2. :meth:`UnitWork.replicates` -- the finished replicates of one block of
   streams of one unit (the per-block kernel: ``resampling`` or ``patterns``);
3. :func:`finish_pass` -- estimates, replicates and the leave-one-input-out
   jackknife of every unit, as a :class:`Replicates`.

The numpy path runs the three in a row (:func:`replicates`); the Dask paths
(:mod:`evalci.engine.scaleout`) map step 2 over blocks. Callable metrics take the slow general path here too:
the same draws, gathered as rows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.warnings import (
    FEW_CLUSTERS,
    FEW_INPUTS,
    FewClustersWarning,
    SlowMetricWarning,
)
from evalci._base.warnings import warn as _warn
from evalci.engine import blocks, patterns
from evalci.engine import intervals as _intervals
from evalci.engine import resampling as _rs
from evalci.engine.args import BootstrapArgs
from evalci.engine.cube import Cube, unit_cells
from evalci.engine.table import prepare
from evalci.metrics import Metric

__all__ = ["Pass", "Replicates", "UnitWork", "finish_pass", "start_pass"]


def _callable_value(fn, rows: pd.DataFrame) -> float:
    out = fn(rows)
    try:
        return float(out)
    except (TypeError, ValueError):
        raise TypeError(
            f"a callable `metric` must return one number; got {type(out).__name__}."
        ) from None


def _run_unit_callable(cube, unit, groups, clusters, strategy, args, root, need_jack):
    """Estimate, replicates and jackknife of a callable, and its number of calls."""
    fn = args.metric
    g_frames = [cube.frame.iloc[np.flatnonzero(cube.row_group == g)] for g in groups]
    estimate = np.array([_callable_value(fn, f) for f in g_frames])
    reps = np.empty((args.n_resamples, len(groups)))
    n_jack = len(clusters) * len(groups) if need_jack else 0
    calls = len(groups) * (1 + args.n_resamples) + n_jack
    hint = calls >= MEAN_HINT_CALLS and _is_mean(estimate, g_frames, args.value)
    # Each drawn copy of an input is a distinct input of the resample: its
    # `cluster` (and `input`) key becomes (original key, copy number), so a
    # callable that aggregates per input sees it twice, as the bootstrap means.
    relabel = [] if args.strategy == "iid" else [*args.cluster[:1], *args.input[:1]]
    keys = [{c: f[c].to_numpy() for c in relabel} for f in g_frames]
    for b, j, rows, copies in _rs.drawn_rows(unit, root, strategy, args.n_resamples):
        sample = g_frames[j].iloc[rows]
        if relabel:
            sample = sample.assign(
                **{
                    c: list(zip(keys[j][c][rows], copies.tolist(), strict=True))
                    for c in relabel
                }
            )
        reps[b, j] = _callable_value(fn, sample)
        if hint and b == 0:  # a mean on a resample too: say what is faster
            hint = False
            if _is_mean(reps[:1, j], [sample], args.value):
                _warn_mean(fn, args.value, calls)
    jack = np.full((len(clusters), len(groups)), np.nan)
    if need_jack:
        for j, f in enumerate(g_frames):
            local = cube.row_cluster[cube.row_group == groups[j]]
            for i, c in enumerate(clusters):
                jack[i, j] = _callable_value(fn, f.iloc[np.flatnonzero(local != c)])
    return estimate, reps, jack, calls


#: A callable making at least this many calls that returns a mean is told of
#: ``metric="mean"`` and ``from_sums`` (a SlowMetricWarning); fewer is quick.
MEAN_HINT_CALLS = 1_000


def _is_mean(values: np.ndarray, frames, value: str) -> bool:
    """Whether ``values`` are the means of the value column of ``frames``."""
    col = frames[0][value]
    if not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
        return False
    means = np.array([f[value].to_numpy(dtype=float).mean() for f in frames])
    return bool(np.allclose(values, means, rtol=1e-12, atol=0.0))


def _warn_mean(fn, value: str, calls: int) -> None:
    name = getattr(fn, "__name__", "callable")
    _warn(
        f"the callable `metric` {as_written(name)} returns the mean of "
        f"{as_written(value)} (on the data and on a resample), and a callable is "
        f"called on gathered rows once per resample: {calls:,} calls here, "
        "hundreds to thousands of times slower than resampling sums. "
        "metric='mean' resamples the same mean on the fast kernels; for another "
        "function of column totals use evalci.metrics.from_sums(name, columns, "
        "finalize).",
        SlowMetricWarning,
    )


def _fast_unit(p: Pass, u: int, reps=None):
    """Estimate, replicates, jackknife and BCa acceleration of a Metric unit.

    ``reps`` are the unit's finished replicates ``(B, G_u)`` when a scheduler
    computed them (:mod:`evalci.engine.scaleout`); else they are computed here.

    The jackknife comes from sufficient statistics, ``finalize(T.sum(0) -
    T[i])``: O(N) on the index kernel; on the pattern kernel every input of a
    pattern leaves the same value, so it is computed per pattern and the
    acceleration weighted by multiplicity (O(P)); the (N, G) jackknife that
    comparisons read is then a gather.
    """
    unit, metric = p.units[u][0], p.args.metric
    found = p.plans[u][0] if p.plans[u] is not None else None
    if reps is None:
        n = p.args.n_resamples
        reps = p.work(u).replicates(0, _rs.n_streams_for(n))[:n]
    total = _total(unit.T, found)  # (G, m)
    estimate = metric.finalize(total)
    if found is None:
        jack = metric.finalize(total[None] - unit.T)  # (N, G)
        accel = _intervals.acceleration(jack.T, unit.strata_bounds)
    else:
        jack_p = patterns.pattern_jackknife(found, metric.finalize, total)  # (P, G)
        accel = patterns.pattern_acceleration(jack_p.T, found)
        # (N, G), gathered when a comparison reads it (Replicates.jackknife)
        jack = partial(patterns.expand_jackknife, jack_p, found)
    return estimate, reps, jack, accel


def _total(T: np.ndarray, found) -> np.ndarray:
    """``T.sum(axis=0)``, from the P patterns when that gives the same bits.

    Whole numbers (0/1 sums, counts) add exactly in any order while no sum can
    reach 2**53, so ``multiplicity @ stats`` over the patterns is
    ``T.sum(axis=0)`` bit for bit at O(P) instead of O(N) (negative zeros,
    whose sum depends on the order, take the O(N) sum).
    """
    if found is not None:
        x = found.stats
        big = float(np.abs(x).max()) if x.size else 0.0
        exact = big * T.shape[0] < 2.0**53 and np.array_equal(x, np.trunc(x))
        if exact and not np.signbit(x).any():
            return np.tensordot(found.multiplicity.astype(float), x, axes=1)
    return T.sum(axis=0)


#: The ``inverse`` of the patterns a UnitWork carries (read only by the jackknife).
_NO_INPUTS = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class UnitWork:
    """What resampling one draw unit needs, and nothing else (no rows, no cube).

    Small enough to ship to a Dask worker once: the unit's per-input
    statistics (index kernel) or its pattern table and draw plan (pattern
    kernel), the root seed, the strategy, the weights and the metric's
    ``finalize``. :meth:`sums` and :meth:`replicates` are the per-block kernel.
    """

    index: int
    unit: object  # resampling.Unit (index kernel), or None
    patterns: object  # (Patterns, DrawPlan) on the pattern kernel, or None
    root: np.random.SeedSequence
    strategy: str
    weights: str
    finalize: object
    tile_size: int | None = None  # evalci.set_options(tile_size=...); None: default

    def sums(self, first: int, n_streams: int) -> np.ndarray:
        """Replicate sums ``(n_streams * 64, G, m)`` of streams ``first ...``."""
        if self.patterns is not None:
            found, plan = self.patterns
            return patterns.pattern_replicate_sums(
                found,
                self.root,
                self.index,
                self.strategy,
                first,
                n_streams,
                plan=plan,
                weights=self.weights,
            )
        return blocks.stream_replicate_sums(
            self.unit,
            self.root,
            self.strategy,
            first,
            n_streams,
            weights=self.weights,
            tile_size=self.tile_size,
        )

    def replicates(self, first: int, n_streams: int) -> np.ndarray:
        """Finished replicates ``(n_streams * 64, G)``: the metric of each sum."""
        return self.finalize(self.sums(first, n_streams))


@dataclass
class Replicates:
    """Everything one resampling pass produces, before any interval is read."""

    cube: Cube
    estimate: np.ndarray  # (G,)
    reps: np.ndarray  # (G, B)
    accel: np.ndarray  # (G,)
    # per unit: (group positions, (N_u, G_u) leave-one-out or a function
    # returning it, bounds); read through `jackknife`
    jackknife_parts: list
    n_inputs: np.ndarray
    n_runs: np.ndarray
    fast: bool
    n_clusters: np.ndarray  # resampled units per group (= n_inputs unless nested)
    kernel: str = "index"  # "patterns", "index", "patterns+index" or "rows"
    metric_calls: int | None = None  # a callable's calls (kernel "rows")

    @property
    def jackknife(self) -> list:
        """Per unit: (group positions, (N_u, G_u) leave-one-out, bounds).

        The pattern kernel's (N_u, G_u) values are one gather of its (P, G_u)
        values, done on first read: only comparisons read them.
        """
        parts = self.jackknife_parts
        for i, (groups, jack, bounds) in enumerate(parts):
            if callable(jack):
                parts[i] = (groups, jack(), bounds)
        return parts

    @property
    def paired(self) -> bool:
        return len(self.jackknife_parts) == 1


@dataclass
class Pass:
    """A validated table split into draw units, ready to resample.

    The three steps of a pass -- :func:`start_pass`, :meth:`UnitWork.replicates`
    for every block of streams of every unit, :func:`finish_pass` -- are separate
    so that a scheduler (Dask) can run the middle one as many tasks.
    """

    args: BootstrapArgs
    root: np.random.SeedSequence
    cube: Cube
    n_runs: np.ndarray
    strategy: str  # the resampling the units use (iid, mode_aggregate -> cluster)
    units: list  # (Unit, group positions, cluster codes)
    plans: list  # per unit: (Patterns, DrawPlan) on the pattern path, else None

    @property
    def fast(self) -> bool:
        return isinstance(self.args.metric, Metric)

    def with_run_rows(self) -> Pass:
        """This pass with its cube in canonical order and its units holding
        their run rows (as the index kernel reads them); the same plans.

        A cube left unordered (:meth:`Cube.settle`) gives units without run
        rows, which the pattern kernel never reads.
        """
        if self.cube.pending_order is None:
            return self
        self.cube.settle()
        weight = "run" if self.cube.input_weighted else self.args.weight
        units = _units_of(self.cube, self.strategy, weight, self.args)
        return replace(self, units=units)

    def work(self, u: int) -> UnitWork:
        """The resampling work of unit ``u`` (Metric paths only).

        The pattern kernel's work holds no ``inverse`` (which input has which
        pattern: N integers that the draws never read and a Dask worker
        would be sent with every task)."""
        plan = self.plans[u]
        if plan is not None:
            plan = (replace(plan[0], inverse=_NO_INPUTS), plan[1])
        return UnitWork(
            index=self.units[u][0].index,
            unit=self.units[u][0] if plan is None else None,
            patterns=plan,
            root=self.root,
            strategy=self.strategy,
            weights=self.args.weights,
            finalize=self.args.metric.finalize,
            tile_size=self.args.tile_size,
        )

    @property
    def paths(self) -> list[str]:
        """The kernel each unit resamples with: ``"patterns"`` or ``"index"``."""
        return ["index" if q is None else "patterns" for q in self.plans]


def start_pass(data, args: BootstrapArgs, root) -> Pass:
    """Validate, build the cube and its draw units (no resampling yet)."""
    cube, n_runs = prepare(data, args, root)
    return pass_of_cube(cube, n_runs, args, root)


def pass_of_cube(cube: Cube, n_runs, args: BootstrapArgs, root) -> Pass:
    """The draw units of a prepared cube, checked (inputs per unit, memory).

    The second half of :func:`start_pass`, for the paths that build the cube
    from per-input statistics reduced elsewhere (Dask).
    """
    fast = isinstance(args.metric, Metric)
    if not fast:
        _check_callable(cube, args)
    if args.strategy in patterns.RUN_LEVEL and not patterns.counts_suffice(cube):
        cube.settle()  # the run-level patterns read the run rows
    strategy = (
        "cluster" if args.strategy in ("iid", "mode_aggregate") else args.strategy
    )
    weight = "run" if cube.input_weighted else args.weight
    units = _units_of(cube, strategy, weight, args)
    check_units(units, cube, args)
    _check_memory(units, args)
    plans = [
        _pattern_plan(unit, groups, clusters, cube, strategy, weight, args)
        if fast
        else None
        for unit, groups, clusters in units
    ]
    p = Pass(args, root, cube, n_runs, strategy, units, plans)
    # the index kernel draws run rows by offset: canonical order first
    return p.with_run_rows() if None in plans else p


def _units_of(cube: Cube, strategy: str, weight: str, args: BootstrapArgs) -> list:
    """The cube's draw units (:meth:`Cube.units`), with the block length."""
    fast = isinstance(args.metric, Metric)
    units = cube.units(
        strategy,
        weight,
        fast and args.metric.scale_invariant,
        per_input=args.metric.per_input if fast else None,
        paired=args.paired,
    )
    if args.block_length:
        units = [
            (replace(unit, block_length=args.block_length), groups, clusters)
            for unit, groups, clusters in units
        ]
    return units


def _check_callable(cube: Cube, args: BootstrapArgs) -> None:
    """A callable sees pooled rows: it can weight inputs equally only at equal k."""
    if cube.row_input is None:
        k = cube.cell_counts()
    else:
        k = np.bincount(cube.row_input * cube.n_groups + cube.row_group)
    ks = np.unique(k[k > 0])
    if len(ks) > 1 and args.weight == "input":
        raise ValueError(
            "a callable `metric` sees pooled rows, so it cannot weight each input "
            f"equally when inputs have different numbers of runs ({ks.min()} to "
            f"{ks.max()}); pass weight='run' to pool runs, or use a Metric."
        )
    if len(ks) > 1 and args.strategy == "single_draw":
        raise ValueError(
            "a callable `metric` with strategy='single_draw' and weight='run' "
            "cannot weight the one drawn run of each input by its number of runs "
            f"({ks.min()} to {ks.max()}); use a Metric, or weight='input' with "
            "equal runs per input."
        )


def check_units(units, cube: Cube, args: BootstrapArgs) -> None:
    """At least 2 inputs per unit; warn on few inputs or one-input strata."""
    cluster_name = args.cluster or ["row"]
    nested = bool(args.input)
    few = FEW_CLUSTERS if nested else FEW_INPUTS
    for unit, groups, _ in units:
        where = (
            ""
            if cube.groups is None
            else f" in group {as_written(cube.groups[groups[0]])}"
        )
        if unit.n_clusters < 2:
            raise ValueError(
                f"`cluster` {cluster_name}: need at least 2 inputs to resample{where}; "
                f"found {unit.n_clusters}."
            )
        if unit.n_clusters < few:
            what = "clusters" if nested else "inputs"
            _warn(
                f"only {unit.n_clusters} {what} (`cluster` {cluster_name}){where}: "
                f"with fewer than {few} the bootstrap distribution is coarse and "
                "its intervals tend to undercover. Read the interval as rough, and "
                "add inputs if you can.",
                FewClustersWarning,
            )
        if unit.block_length >= unit.n_clusters:
            raise ValueError(
                f"`block_length`={unit.block_length} must be less than the number of "
                f"inputs ({unit.n_clusters}{where}): a block of every input is "
                "the same sample each time."
            )
        sizes = np.diff(unit.strata_bounds)
        if (sizes < 2).any():
            _warn(
                f"{int((sizes < 2).sum())} stratum(s) hold a single input, which is "
                "always drawn: it adds no variance to the interval.",
                FewClustersWarning,
            )


def _physical_memory() -> float:
    """Bytes of RAM on this machine (Linux/macOS), or 8 GiB when unknown."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return 8.0 * 2**30


def _check_memory(units, args: BootstrapArgs) -> None:
    """Refuse up front a number of resamples whose replicates cannot fit."""
    per_rep = sum(u.T.shape[1] * (u.T.shape[2] + 2) for u, _, _ in units)
    need = 8.0 * args.n_resamples * max(per_rep, 1)
    have = _physical_memory() / 2
    if need > have:
        fits = int(have // (8.0 * max(per_rep, 1)))
        raise ValueError(
            f"`n_resamples`={args.n_resamples} needs about {need / 2**30:.1f} GiB for "
            f"the replicates alone, more than half of this machine's memory "
            f"({2 * have / 2**30:.1f} GiB); use at most {fits:,} (10_000, the "
            "default, is plenty for a 95% interval)."
        )


def check_resamples_fit(
    n_resamples: int, per_replicate: float, fixed: float, what: str, default: str
) -> None:
    """Refuse up front ``n_resamples`` whose memory exceeds half the machine's.

    ``per_replicate`` and ``fixed`` are bytes (each replicate's, and the
    rest of the call's); ``what`` says what is resampled (for the message),
    ``default`` the function's default number of resamples.
    """
    need = n_resamples * per_replicate + fixed
    have = _physical_memory() / 2
    if need <= have:
        return
    fits = max(int((have - fixed) // max(per_replicate, 1.0)), 0)
    raise ValueError(
        f"`n_resamples`={n_resamples:,} {what} needs about {need / 2**30:.1f} GiB, "
        f"more than half of this machine's memory ({2 * have / 2**30:.1f} GiB); "
        f"use at most {fits:,} ({default}, the default, is plenty for a 95% "
        "interval)."
    )


#: Tests may force one kernel ("index" or "patterns") to compare their laws.
_FORCE_PATH: str | None = None


def _pattern_plan(unit, groups, clusters, cube, strategy, weight, args):
    """``(Patterns, DrawPlan)`` when the pattern path serves this unit, else None.

    The choice reads the data's shape only (distinct patterns against inputs,
    :func:`evalci.engine.patterns.should_use_patterns`), never the number of
    resamples or how the work is scheduled, so every backend takes the same
    path. Counts tables at the run level have no run rows for the index
    kernel: they always take the (exact) pattern path.
    """
    if strategy == "moving_block":  # blocks of inputs in sequence: block sums
        plan = (
            None
            if _FORCE_PATH == "index"
            else patterns.block_plan(unit.T, unit.block_length)
        )
        if plan is None:
            return None
        use = patterns.should_use_patterns(
            unit.n_clusters, plan.n_draws, unit.T.shape[1] * unit.T.shape[2]
        )
        if not (use or _FORCE_PATH == "patterns"):
            return None
        return patterns.find_patterns(unit.T, unit.strata_bounds), plan
    # counts tables have no run rows for the index kernel's run-level draws
    counts_runs = strategy in patterns.RUN_LEVEL and args.trials is not None
    if _FORCE_PATH == "index" and not counts_runs:
        return None
    if strategy in patterns.RUN_LEVEL:
        kk = unit_cells(cube.cell_runs(), clusters, groups)
        if kk.dtype.kind != "i":  # summed runs of a counts table
            kk = np.rint(kk).astype(np.int64)
        found = patterns.run_patterns(
            unit, groups, clusters, kk, cube, strategy, weight, args.metric
        )
        n_runs = int(kk.sum()) if strategy == "hierarchical" else kk.size
    else:
        found, n_runs = patterns.find_patterns(unit.T, unit.strata_bounds), 0
    plan = patterns.draw_plan(found, strategy)
    use = patterns.should_use_patterns(
        unit.n_clusters, plan.n_draws, unit.T.shape[1] * unit.T.shape[2], n_runs=n_runs
    )
    if use or _FORCE_PATH == "patterns" or counts_runs:
        return found, plan
    return None


def _kernel(p: Pass) -> str:
    """Which kernel resampled this pass, as the result states it."""
    if not p.fast:
        return "rows"
    return "+".join(sorted(set(p.paths), reverse=True))


def finish_pass(p: Pass, finished=None) -> Replicates:
    """Replicates, estimates and jackknife of every unit.

    ``finished[u]`` are unit ``u``'s replicates ``(B, G_u)`` in stream order
    (at least ``n_resamples`` rows), when a scheduler computed them; else
    they are computed here.
    """
    args, cube = p.args, p.cube
    n_groups = cube.n_groups
    estimate = np.full(n_groups, np.nan)
    accel = np.full(n_groups, np.nan)
    reps = np.full((n_groups, args.n_resamples), np.nan)
    n_inputs = np.zeros(n_groups, dtype=np.int64)
    jackknife = []
    calls = None if p.fast else 0
    for u, (unit, groups, clusters) in enumerate(p.units):
        if p.fast:
            unit_reps = None if finished is None else finished[u][: args.n_resamples]
            est_u, reps_u, jack_u, accel_u = _fast_unit(p, u, unit_reps)
        else:
            est_u, reps_u, jack_u, calls_u = _run_unit_callable(
                cube,
                unit,
                groups,
                clusters,
                p.strategy,
                args,
                p.root,
                need_jack=args.method == "bca",
            )
            accel_u = _intervals.acceleration(jack_u.T, unit.strata_bounds)
            calls += calls_u
        estimate[groups] = est_u
        reps[groups] = reps_u.T
        accel[groups] = accel_u
        n_inputs[groups] = unit.n_clusters
        jackknife.append((groups, jack_u, unit.strata_bounds))
    n_clusters = n_inputs.copy()
    if cube.row_input is not None:  # inputs nested in clusters: count inputs
        cells = np.unique(cube.row_input * n_groups + cube.row_group)
        n_inputs = np.bincount(cells % n_groups, minlength=n_groups)
    return Replicates(
        cube,
        estimate,
        reps,
        accel,
        jackknife,
        n_inputs,
        p.n_runs,
        p.fast,
        n_clusters,
        _kernel(p),
        calls,
    )
