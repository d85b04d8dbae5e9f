"""The bootstrap entry points: ``bootstrap`` and ``cluster_ci``.

One validation function normalises every argument (scipy's ``_bootstrap_iv``
pattern), the tidy table becomes a :class:`~evalci._data.Cube`, and the cube
is resampled by draw units (groups that share their inputs share draws).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import _dask
from . import intervals as _intervals
from . import metrics as metrics_mod
from . import resampling as _rs
from ._data import (
    Cube,
    as_columns,
    check_columns,
    check_level,
    check_n_resamples,
    factorize,
    value_codes,
)
from ._typing import METHODS, STRATEGIES, WEIGHTS
from ._warnings import (
    ClusteringIgnoredWarning,
    DegenerateDataWarning,
    EstimandWarning,
    FewClustersWarning,
)
from .metrics import Metric, get_metric
from .results import BootstrapResult

__all__ = ["bootstrap", "cluster_ci"]


@dataclass(frozen=True)
class _Args:
    value: str
    cluster: list[str]
    by: list[str]
    strata: list[str]
    metric: object
    strategy: str
    method: str
    confidence_level: float
    n_resamples: int
    weight: str
    dropna: bool
    trials: str | None = None  # counts table: `value` holds successes
    row_runs: str | None = None  # each row stands for this many identical runs


def _counts_metric(trials: str) -> Metric:
    """Accuracy from a counts table: per row ``[n_correct, n_runs]``."""

    def statistics(data, value):
        return np.column_stack([data[value], data[trials]]).astype(float)

    return Metric(
        "mean",
        statistics=statistics,
        finalize=metrics_mod._ratio,
        columns=(trials,),
        scale_invariant=True,
    )


def _bootstrap_iv(
    data,
    value,
    cluster,
    strategy,
    metric,
    by,
    strata,
    method,
    confidence_level,
    n_resamples,
    weight,
    dropna,
    successes=None,
    trials=None,
    row_runs=None,
) -> _Args:
    """Validate and normalise the arguments of :func:`bootstrap`."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"`data` must be a pandas DataFrame, not {type(data).__name__}; for "
            "xarray objects use the DataArray accessor (da.evalci)."
        )
    if strategy not in STRATEGIES:
        raise ValueError(f"`strategy` must be one of {STRATEGIES}, not {strategy!r}.")
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}, not {method!r}.")
    if weight not in WEIGHTS:
        raise ValueError(
            f"`weight` must be 'input' (each input counts equally) or 'run' "
            f"(pool runs), not {weight!r}."
        )
    confidence_level = check_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    if successes is not None or trials is not None:
        if successes is None or trials is None or value is not None:
            raise ValueError(
                "a counts table needs both `successes` (e.g. 'n_correct') and `trials` "
                "(e.g. 'n_runs'), and no `value`."
            )
        if strategy != "cluster" or metric != "mean":
            raise ValueError(
                "a counts table (successes=, trials=) supports strategy='cluster' with "
                "metric='mean'; expand it to one row per run for other strategies."
            )
        check_columns(data, [successes, trials], "successes/trials")
        value, metric = successes, _counts_metric(trials)
    if row_runs is not None and strategy != "cluster":
        raise ValueError(
            "compressed rows (Dask input) support strategy='cluster' only."
        )
    if value is None:
        raise ValueError(
            "`value` is required: the column with the outcome (or pass successes= "
            "and trials= for a counts table)."
        )
    if not isinstance(value, str):
        raise TypeError(
            f"`value` must be a column name (str), not {type(value).__name__}."
        )
    metric = get_metric(metric)
    cluster = as_columns(cluster, "cluster")
    if not cluster and strategy != "iid":
        raise ValueError(
            f"`cluster` is required for strategy={strategy!r}: name the column that "
            "identifies inputs (e.g. cluster='input_id'), or use strategy='iid' to "
            "treat rows as independent."
        )
    by = as_columns(by, "by")
    strata = as_columns(strata, "strata")
    if len(strata) > 1:
        raise ValueError("`strata` must name one column.")
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, by, "by")
    check_columns(data, strata, "strata")
    if isinstance(metric, Metric):
        check_columns(data, list(metric.columns), "metric")
    overlap = set(cluster) & set(by)
    if overlap:
        raise ValueError(
            f"`by` and `cluster` share column {sorted(overlap)[0]!r}: one CI per input "
            "is not a bootstrap; group by a column that spans several inputs."
        )
    return _Args(
        value=value,
        cluster=cluster,
        by=by,
        strata=strata,
        metric=metric,
        strategy=strategy,
        method=method,
        confidence_level=float(confidence_level),
        n_resamples=int(n_resamples),
        weight=weight,
        dropna=bool(dropna),
        trials=trials,
        row_runs=row_runs,
    )


def _clean_values(frame: pd.DataFrame, args: _Args) -> pd.DataFrame:
    """Drop or reject missing values; check 0/1 and numeric requirements."""
    metric = args.metric
    value_cols = [args.value] + (
        list(metric.columns) if isinstance(metric, Metric) else []
    )
    na = frame[value_cols].isna().any(axis=1)
    if na.any():
        if not args.dropna:
            col = next(c for c in value_cols if frame[c].isna().any())
            raise ValueError(
                f"`value`: column {col!r} has {int(frame[col].isna().sum())} missing "
                "values; pass dropna=True to drop those rows, or fill them (e.g. "
                "count a missing answer as 0)."
            )
        frame = frame.loc[~na.to_numpy()]
    if args.trials is not None:
        c, n = frame[args.value].to_numpy(), frame[args.trials].to_numpy()
        ok = (
            pd.api.types.is_numeric_dtype(c)
            and pd.api.types.is_numeric_dtype(n)
            and bool(np.all(c == np.round(c)))
            and bool(np.all(n == np.round(n)))
        )
        if not ok or (c < 0).any() or (n < 1).any() or (c > n).any():
            raise ValueError(
                f"counts table: `successes` ({args.value!r}) and `trials` "
                f"({args.trials!r}) must be integers with 0 <= successes <= trials "
                "and trials >= 1 in every row."
            )
        return frame
    if isinstance(metric, Metric):
        y = frame[args.value]
        needs_binary = metric.binary or (
            args.strategy == "mode_aggregate" and metric.numeric
        )
        if metric.numeric and not (
            pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)
        ):
            raise ValueError(
                f"`value` column {args.value!r} is not numeric (dtype {y.dtype}); the "
                f"{metric.name!r} metric needs numbers. For predicted labels use "
                "metric=evalci.metrics.accuracy(truth=...) or kappa(truth=...)."
            )
        if needs_binary:
            bad = ~y.isin([0, 1])
            if bad.any():
                why = (
                    "mode_aggregate takes the majority of a 0/1 column"
                    if args.strategy == "mode_aggregate"
                    else f"metric {metric.name!r} needs 0/1 values"
                )
                raise ValueError(
                    f"`value` column {args.value!r} must hold only 0/1 ({why}); found "
                    f"{_plain(y[bad].iloc[0])!r} in {int(bad.sum())} rows."
                )
    return frame


def _plain(x):
    """A numpy scalar as the Python value it prints as (for error messages)."""
    return x.item() if isinstance(x, np.generic) else x


def _check_strata(frame, cluster_codes, n_clusters, strata_col, cluster_cols):
    codes, index = factorize(frame, [strata_col], "strata")
    pairs = np.unique(cluster_codes * len(index) + codes)
    per_cluster = np.bincount(pairs // len(index), minlength=n_clusters)
    if (per_cluster > 1).any():
        bad = np.flatnonzero(per_cluster > 1)[:5]
        raise ValueError(
            f"`strata` column {strata_col!r} varies within an input (`cluster` "
            f"{cluster_cols}); a stratum must be a property of the input. "
            f"Inputs with more than one stratum (first codes): {bad.tolist()}."
        )
    out = np.empty(n_clusters, dtype=np.int64)
    out[pairs // len(index)] = pairs % len(index)
    return out


def _mode_aggregate(frame, args, group_codes, cluster_codes, n_groups, root):
    """Collapse each (input, group) to the mode of its value, ties at random.

    Random tie-breaks matter: breaking ties towards the lowest or highest
    label gives about 14-15% coverage at k=3 (PAPER-NOTES.md).
    """
    labels, uniques = pd.factorize(frame[args.value], sort=True)
    n_labels = len(uniques)
    cell = cluster_codes * n_groups + group_codes
    cells, first_row, inverse = np.unique(cell, return_index=True, return_inverse=True)
    counts = np.bincount(inverse * n_labels + labels, minlength=len(cells) * n_labels)
    counts = counts.reshape(len(cells), n_labels)
    tie = counts == counts.max(axis=1, keepdims=True)
    u = _rs.mode_stream(root).random(counts.shape)
    mode = np.where(tie, u, -1.0).argmax(axis=1)
    if isinstance(args.metric, Metric):
        for col in args.metric.columns:
            c = pd.factorize(frame[col])[0]
            lo = np.full(len(cells), np.iinfo(np.int64).max)
            hi = np.full(len(cells), -1)
            np.minimum.at(lo, inverse, c)
            np.maximum.at(hi, inverse, c)
            if (lo != hi).any():
                raise ValueError(
                    f"mode_aggregate: column {col!r} varies within an input; the "
                    "mode of the predictions is scored against one value per input."
                )
    out = frame.iloc[first_row].copy()
    out[args.value] = np.asarray(uniques)[mode]
    return out, group_codes[first_row], cluster_codes[first_row]


def _prepare(data: pd.DataFrame, args: _Args, root) -> tuple[Cube, np.ndarray]:
    """Validated, canonically ordered cube and the number of rows per group."""
    cols = list(
        dict.fromkeys(
            [args.value, *args.cluster, *args.by, *args.strata]
            + (list(args.metric.columns) if isinstance(args.metric, Metric) else [])
            + ([args.row_runs] if args.row_runs else [])
        )
    )
    frame = data if not isinstance(args.metric, Metric) else data[cols]
    frame = _clean_values(frame, args)
    if len(frame) == 0:
        raise ValueError("no rows left to resample (after dropping missing values).")
    if args.by:
        group_codes, groups = factorize(frame, args.by, "by")
    else:
        group_codes, groups = np.zeros(len(frame), dtype=np.int64), None
    n_groups = 1 if groups is None else len(groups)

    if args.cluster:
        cluster_codes, cluster_keys = factorize(frame, args.cluster, "cluster")
    else:
        cluster_codes = cluster_keys = None

    strata_codes = None
    if args.strata:
        if cluster_codes is None:  # iid without clusters: each row is an input
            codes, _ = factorize(frame, args.strata, "strata")
        else:
            codes = _check_strata(
                frame, cluster_codes, len(cluster_keys), args.strata[0], args.cluster
            )
        strata_codes = codes

    n_runs = np.bincount(group_codes, minlength=n_groups)
    runs_col = args.trials or args.row_runs
    if runs_col is not None:
        n_runs = np.bincount(
            group_codes, weights=frame[runs_col].to_numpy(), minlength=n_groups
        ).astype(np.int64)
    k_max = 1
    if cluster_codes is not None:
        cell = cluster_codes * n_groups + group_codes
        k_max = int(np.bincount(cell).max())

    if args.strategy == "mode_aggregate":
        warnings.warn(
            "mode_aggregate estimates the accuracy of the majority vote of k runs, "
            "not the expected accuracy of one call; its interval does not cover "
            "single-run accuracy when k > 2 (seed 000: 0% coverage at k=5).",
            EstimandWarning,
            stacklevel=4,
        )
        frame, group_codes, cluster_codes = _mode_aggregate(
            frame, args, group_codes, cluster_codes, n_groups, root
        )
    elif args.strategy == "iid" and (cluster_codes is None or k_max > 1):
        if cluster_codes is not None:
            warnings.warn(
                f"strategy='iid' treats the {len(frame)} rows as independent, but "
                f"inputs (`cluster` {args.cluster}) have up to {k_max} runs each: the "
                "clustering is ignored and the interval is too narrow. Use "
                "strategy='cluster'.",
                ClusteringIgnoredWarning,
                stacklevel=4,
            )
            if strata_codes is not None:
                strata_codes = strata_codes[cluster_codes]
        # every row is its own input, and groups never share rows: independent
        order = np.lexsort((value_codes(frame[args.value]), group_codes))
        frame = frame.iloc[order]
        group_codes = group_codes[order]
        if strata_codes is not None:
            strata_codes = strata_codes[order]
        cluster_codes = np.arange(len(frame), dtype=np.int64)
        cluster_keys = pd.RangeIndex(len(frame), name="row")

    # canonical order: (group, input, value); ties keep no memory of row order
    keys = [value_codes(frame[args.value])]
    if isinstance(args.metric, Metric):
        keys = [value_codes(frame[c]) for c in reversed(args.metric.columns)] + keys
    order = np.lexsort((*keys, cluster_codes, group_codes))
    frame = frame.iloc[order]
    cube = Cube(
        row_group=group_codes[order],
        row_cluster=cluster_codes[order],
        cluster_keys=cluster_keys,
        groups=groups,
        strata=strata_codes,
    )
    if isinstance(args.metric, Metric):
        data_map = {c: frame[c].to_numpy() for c in frame.columns}
        stats = np.asarray(args.metric.statistics(data_map, args.value), dtype=float)
        if stats.ndim != 2 or stats.shape[0] != len(frame):
            raise ValueError(
                f"metric {args.metric.name!r}: `statistics` must return an array of "
                f"shape (n_rows, m); got {stats.shape}."
            )
        cube.stats = stats
        if args.trials is not None:
            cube.runs = frame[args.trials].to_numpy().astype(float)
        elif args.row_runs is not None:
            # a compressed row stands for `runs` identical runs
            cube.runs = frame[args.row_runs].to_numpy().astype(float)
            cube.stats = stats * cube.runs[:, None]
    else:
        cube.frame = frame.reset_index(drop=True)
    return cube, n_runs


def _callable_value(fn, rows: pd.DataFrame) -> float:
    out = fn(rows)
    try:
        return float(out)
    except (TypeError, ValueError):
        raise TypeError(
            f"a callable `metric` must return one number; got {type(out).__name__}."
        ) from None


def _run_unit_callable(cube, unit, groups, clusters, strategy, args, root, need_jack):
    fn = args.metric
    g_frames = [cube.frame.iloc[np.flatnonzero(cube.row_group == g)] for g in groups]
    estimate = np.array([_callable_value(fn, f) for f in g_frames])
    reps = np.empty((args.n_resamples, len(groups)))
    for b, j, rows in _rs.drawn_rows(unit, root, strategy, args.n_resamples):
        reps[b, j] = _callable_value(fn, g_frames[j].iloc[rows])
    jack = np.full((len(clusters), len(groups)), np.nan)
    if need_jack:
        for j, f in enumerate(g_frames):
            local = cube.row_cluster[cube.row_group == groups[j]]
            for i, c in enumerate(clusters):
                jack[i, j] = _callable_value(fn, f.iloc[np.flatnonzero(local != c)])
    return estimate, reps, jack


def _fast_unit(unit, metric, sums):
    """Estimate, replicates and jackknife of a unit from its replicate sums."""
    total = unit.T.sum(axis=0)  # (G, m)
    estimate = metric.finalize(total)
    # leave-one-input-out jackknife from sufficient statistics: O(N)
    jack = metric.finalize(total[None] - unit.T)  # (N, G)
    return estimate, metric.finalize(sums), jack


@dataclass
class _Replicates:
    """Everything one resampling pass produces, before any interval is read."""

    cube: Cube
    estimate: np.ndarray  # (G,)
    reps: np.ndarray  # (G, B)
    accel: np.ndarray  # (G,)
    jackknife: list  # per unit: (group positions, (N_u, G_u) leave-one-out, bounds)
    n_inputs: np.ndarray
    n_runs: np.ndarray
    fast: bool

    @property
    def paired(self) -> bool:
        return len(self.jackknife) == 1


@dataclass
class _Pass:
    """A validated table split into draw units, ready to resample.

    The three steps of a pass -- :func:`_start_pass`, :func:`_unit_sums` for
    every block of streams of every unit, :func:`_finish_pass` -- are separate
    so that a scheduler (Dask) can run the middle one as many tasks.
    """

    args: _Args
    root: np.random.SeedSequence
    cube: Cube
    n_runs: np.ndarray
    strategy: str  # the resampling the units use (iid, mode_aggregate -> cluster)
    units: list  # (Unit, group positions, cluster codes)

    @property
    def fast(self) -> bool:
        return isinstance(self.args.metric, Metric)


def _start_pass(data, args: _Args, root) -> _Pass:
    """Validate, build the cube and its draw units (no resampling yet)."""
    cube, n_runs = _prepare(data, args, root)
    fast = isinstance(args.metric, Metric)
    if not fast:
        k = cube.cell_counts()
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
    strategy = (
        "cluster" if args.strategy in ("iid", "mode_aggregate") else args.strategy
    )
    units = cube.units(strategy, args.weight, fast and args.metric.scale_invariant)
    cluster_name = args.cluster or ["row"]
    for unit, groups, _ in units:
        if unit.n_clusters < 2:
            where = (
                "" if cube.groups is None else f" in group {cube.groups[groups[0]]!r}"
            )
            raise ValueError(
                f"`cluster` {cluster_name}: need at least 2 inputs to resample{where}; "
                f"found {unit.n_clusters}."
            )
        sizes = np.diff(unit.strata_bounds)
        if (sizes < 2).any():
            warnings.warn(
                f"{int((sizes < 2).sum())} stratum(s) hold a single input, which is "
                "always drawn: it adds no variance to the interval.",
                FewClustersWarning,
                stacklevel=3,
            )
    return _Pass(args, root, cube, n_runs, strategy, units)


def _unit_sums(p: _Pass, u: int, first: int, n_streams: int):
    """Replicate sums of streams ``first .. first + n_streams`` of unit ``u``.

    None for the callable path (it resamples rows in :func:`_finish_pass`) or
    for a unit that does not exist.
    """
    if not p.fast or u >= len(p.units):
        return None
    return _rs.stream_replicate_sums(
        p.units[u][0], p.root, p.strategy, first, n_streams
    )


def _finish_pass(p: _Pass, sums=None) -> _Replicates:
    """Replicates, estimates and jackknife of every unit.

    ``sums[u]`` are the unit's replicate sums in stream order (at least
    ``n_resamples`` rows); computed here, block by block, when not given.
    """
    args, cube = p.args, p.cube
    n_groups = cube.n_groups
    estimate = np.full(n_groups, np.nan)
    accel = np.full(n_groups, np.nan)
    reps = np.full((n_groups, args.n_resamples), np.nan)
    n_inputs = np.zeros(n_groups, dtype=np.int64)
    jackknife = []
    for u, (unit, groups, clusters) in enumerate(p.units):
        if p.fast:
            if sums is None:
                unit_sums = _rs.replicate_sums(
                    unit, p.root, p.strategy, args.n_resamples
                )
            else:
                unit_sums = sums[u][: args.n_resamples]
            est_u, reps_u, jack_u = _fast_unit(unit, args.metric, unit_sums)
        else:
            est_u, reps_u, jack_u = _run_unit_callable(
                cube,
                unit,
                groups,
                clusters,
                p.strategy,
                args,
                p.root,
                need_jack=args.method == "bca",
            )
        estimate[groups] = est_u
        reps[groups] = reps_u.T
        accel[groups] = _intervals.acceleration(jack_u.T, unit.strata_bounds)
        n_inputs[groups] = unit.n_clusters
        jackknife.append((groups, jack_u, unit.strata_bounds))
    return _Replicates(
        cube, estimate, reps, accel, jackknife, n_inputs, p.n_runs, p.fast
    )


def _replicates(data, args: _Args, root) -> _Replicates:
    """Resample every draw unit of the validated table: the shared engine pass."""
    return _finish_pass(_start_pass(data, args, root))


def _result(rep: _Replicates, args: _Args) -> BootstrapResult:
    """Intervals from a pass, as a :class:`BootstrapResult`."""
    cube, estimate, reps, accel = rep.cube, rep.estimate, rep.reps, rep.accel
    n_groups, fast = cube.n_groups, rep.fast
    if not fast and args.method != "bca":
        accel[:] = np.nan
    degenerate = np.all(reps == reps[:, :1], axis=1)
    if degenerate.any():
        warnings.warn(
            "the bootstrap distribution has no spread (every resample gives the "
            "same score, e.g. every outcome is 1 or 0): the interval has zero width "
            "and says nothing about uncertainty. For 0/N or N/N outcomes use "
            "evalci.analytic_ci(..., method='wilson'), which gives the rule-of-three bound.",
            DegenerateDataWarning,
            stacklevel=3,
        )
    low, high, z0 = _intervals.interval(
        reps,
        estimate,
        args.method,
        args.confidence_level,
        accel=np.nan_to_num(accel) if args.method == "bca" else None,
    )
    with np.errstate(invalid="ignore"):
        se = (
            reps.std(axis=1, ddof=1)
            if args.n_resamples > 1
            else np.full(n_groups, np.nan)
        )
    name = args.metric.name if fast else getattr(args.metric, "__name__", "callable")
    return BootstrapResult._from_arrays(
        groups=cube.groups,
        estimate=estimate,
        low=low,
        high=high,
        standard_error=se,
        bootstrap_distribution=reps,
        n_inputs=rep.n_inputs,
        n_runs=rep.n_runs,
        z0=z0,
        acceleration=accel,
        method=args.method,
        strategy=args.strategy,
        confidence_level=args.confidence_level,
        n_resamples=args.n_resamples,
        weight=args.weight,
        metric=name,
        paired=rep.paired,
    )


def bootstrap(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    strategy: str = "cluster",
    metric="mean",
    by=None,
    strata=None,
    method: str = "percentile",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    weight: str = "input",
    dropna: bool = False,
    rng=None,
    successes: str | None = None,
    trials: str | None = None,
) -> BootstrapResult:
    """Bootstrap confidence interval of an evaluation score over inputs x runs.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, system]). Never modified.
    value : str
        Column with the outcome: 0/1 correctness, a score, or a predicted label
        (with ``metric=accuracy(truth=...)`` or ``kappa(truth=...)``).
    cluster : str or list of str, optional
        Column(s) identifying the input; rows sharing a key (and group) are
        that input's runs. Required unless ``strategy="iid"``.
    strategy : {'cluster', 'iid', 'single_draw', 'hierarchical', 'mode_aggregate'}
        Seed 000's five strategies. ``cluster`` (the default) resamples inputs
        with all their runs; ``single_draw`` takes one run per drawn input;
        ``hierarchical`` resamples runs within each drawn input;
        ``mode_aggregate`` collapses each input's runs to their mode (random
        tie-breaks) and warns that it estimates majority-vote accuracy;
        ``iid`` treats rows as independent (one run per input).
    metric : str, Metric or callable
        ``"mean"`` (accuracy of a 0/1 column), a :class:`~evalci.metrics.Metric`
        such as ``evalci.metrics.kappa(truth="label")``, a registered name, or a
        callable ``f(DataFrame) -> float`` (slower general path: it is called
        on the gathered rows of every resample).
    by : str or list of str, optional
        One interval per group. Groups with the same set of inputs (e.g.
        ``by="system"``) share the same draws, so gaps between them are paired.
    strata : str, optional
        Column constant within each input; inputs are drawn within strata.
    method : {'percentile', 'basic', 'bca', 'normal'}
        Interval type. BCa uses the leave-one-input-out jackknife (O(N) from
        sufficient statistics; within strata when stratified). ``"normal"``:
        estimate +- z * bootstrap standard error.
    confidence_level : float
        In (0, 1).
    n_resamples : int
        Bootstrap replicates. Work is done in blocks, so memory does not grow
        with it beyond the ``(n_resamples, n_groups)`` replicates.
    weight : {'input', 'run'}
        ``"input"`` (default): each input counts equally, seed 000's estimand
        (expected score of one call on a random input). ``"run"``: runs are
        pooled, so inputs with more runs weigh more. Equal when k is constant.
    dropna : bool
        Drop rows whose value (or metric columns) is missing instead of raising.
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Seed (SPEC 7). Fixes the result, whatever the row order of ``data``.
    successes, trials : str, optional
        A counts table instead of one row per run: one row per (input[, group])
        with the number of correct runs and of runs (e.g. ``"n_correct"``,
        ``"n_runs"``). They are the sufficient statistics of accuracy, so the
        cluster bootstrap runs on them directly, with no expansion to rows;
        ``value`` is then left out. Only ``strategy="cluster"``.

    Returns
    -------
    BootstrapResult

    References
    ----------
    Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397).
    Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data. JRSS-B 69(3).

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> res = evalci.bootstrap(df, "correct", cluster="input_id", by="system",
    ...                        n_resamples=2000, rng=0)
    >>> res.to_frame()[["system", "n_inputs", "n_runs"]]
                               system  n_inputs  n_runs
    0    openai/gpt-5-nano-2025-08-07       198     990
    1  openai/gpt-5.4-mini-2026-03-17       198     990
    """
    row_runs = None
    if _dask.is_dask_frame(data):
        data, row_runs = _from_dask(
            data, value, cluster, strategy, metric, by, strata, successes, trials
        )
    args = _bootstrap_iv(
        data,
        value,
        cluster,
        strategy,
        metric,
        by,
        strata,
        method,
        confidence_level,
        n_resamples,
        weight,
        dropna,
        successes,
        trials,
        row_runs,
    )
    return _result(_replicates(data, args, _rs.seed_sequence(rng)), args)


def _from_dask(ddf, value, cluster, strategy, metric, by, strata, successes, trials):
    """A Dask DataFrame reduced (exactly) to a small pandas table; see ``_dask``."""
    return _dask.reduce_for_bootstrap(
        ddf, value, cluster, strategy, metric, by, strata, successes, trials
    )


def cluster_ci(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    metric="mean",
    by=None,
    strata=None,
    method: str = "percentile",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    weight: str = "input",
    dropna: bool = False,
    rng=None,
    successes: str | None = None,
    trials: str | None = None,
) -> BootstrapResult:
    """Cluster-bootstrap confidence interval: resample inputs with all their runs.

    Seed 000's recommended recipe. Same parameters as :func:`bootstrap` with
    ``strategy="cluster"``.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> one = df[df.system == "openai/gpt-5-nano-2025-08-07"]
    >>> r = evalci.cluster_ci(one, "correct", cluster="input_id", rng=0,
    ...                       n_resamples=2000)
    >>> round(r.estimate, 4), r.n_inputs, r.n_runs
    (0.6758, 198, 990)
    """
    return bootstrap(
        data,
        value,
        cluster,
        strategy="cluster",
        metric=metric,
        by=by,
        strata=strata,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        weight=weight,
        dropna=dropna,
        rng=rng,
        successes=successes,
        trials=trials,
    )
