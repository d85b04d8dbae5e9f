"""The bootstrap entry points: ``bootstrap`` and ``cluster_ci``.

One validation function normalises every argument (scipy's ``_bootstrap_iv``
pattern), the tidy table becomes a :class:`~evalci._data.Cube`, and the cube
is resampled by draw units (groups that share their inputs share draws).
"""

from __future__ import annotations

import os
import re
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
    check_finite,
    check_level,
    check_n_resamples,
    factorize,
    value_codes,
)
from ._typing import METHODS, STRATEGIES, WEIGHTS
from ._warnings import (
    FEW_CLUSTERS,
    FEW_INPUTS,
    ClusteringIgnoredWarning,
    DegenerateDataWarning,
    EstimandWarning,
    FewClustersWarning,
    PooledGroupsWarning,
)
from ._warnings import warn as _warn
from .metrics import Metric, get_metric
from .results import BootstrapResult

__all__ = ["bootstrap", "cluster_ci"]

#: The fewest resamples an interval can be read from.
MIN_RESAMPLES = 2


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
    input: tuple = ()  # the estimand's unit when it differs from `cluster`


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
    input=None,
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
    if n_resamples < MIN_RESAMPLES:
        raise ValueError(
            f"`n_resamples` must be at least {MIN_RESAMPLES} for an interval (one "
            f"resample has no spread); got {n_resamples}. Use 10_000 (the default)."
        )
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
            f"`value` must be one column name (str), not {type(value).__name__}; "
            "for several value columns, call once per column."
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
    input_cols = _check_input(data, input, cluster, by, strategy)
    _check_roles(data, value, cluster, input_cols, by, strata, metric)
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
        input=tuple(input_cols),
    )


# strata == cluster is legal (each input its own stratum): warned as degenerate
_SAME_UNIT = {"cluster", "strata"}


def _check_roles(data, value, cluster, input_cols, by, strata, metric) -> None:
    """Each column plays one role, and names one column of ``data``."""
    dup = data.columns[data.columns.duplicated()].unique().tolist()
    if dup:
        raise ValueError(
            f"`data` has several columns named {dup[:3]}; give every column its own "
            "name (e.g. df.loc[:, ~df.columns.duplicated()])."
        )
    roles = {"value": [value], "cluster": cluster, "input": input_cols}
    roles |= {"strata": strata}
    if isinstance(metric, Metric):
        roles["metric"] = list(metric.columns)
    seen = {}
    for role, cols in roles.items():
        for col in cols:
            if col in seen and seen[col] != role and {seen[col], role} != _SAME_UNIT:
                raise ValueError(
                    f"`{seen[col]}` and `{role}` both name column {col!r}; each "
                    "column can play one role (an outcome is not an input key)."
                )
            seen[col] = role
    for col in by:
        if col in seen and seen[col] != "cluster":  # by == cluster has its own message
            raise ValueError(
                f"`by` and `{seen[col]}` both name column {col!r}; group by a column "
                "that is not the outcome or a key of the resampling."
            )


def _check_input(data, input, cluster, by, strategy) -> list[str]:
    """``input=``: the estimand's unit, nested in the resampled ``cluster``.

    Empty when it is the cluster itself (the default).
    """
    input_cols = as_columns(input, "input")
    if not input_cols or input_cols == cluster:
        return []
    check_columns(data, input_cols, "input")
    if strategy != "cluster":
        raise ValueError(
            f"`input` {input_cols} differs from `cluster` {cluster}: inputs nested in "
            "clusters are resampled with whole clusters, which is strategy='cluster'; "
            "leave `input` out for other strategies."
        )
    if set(input_cols) & set(by):
        raise ValueError("`input` and `by` must name different columns.")
    return input_cols


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
        check_finite(frame, [args.value], "successes")
        check_finite(frame, [args.trials], "trials")
    check_finite(frame, [args.value], "value")
    if isinstance(metric, Metric):
        check_finite(frame, list(metric.columns), "metric")
    if args.trials is not None:
        _check_counts(frame[args.value].to_numpy(), frame[args.trials].to_numpy(), args)
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


#: Counts stay exact in float64 up to 2**53 (statistics are summed as floats).
_MAX_COUNT = 2**53


def _check_counts(c, n, args: _Args) -> None:
    """Successes and trials: integers, 0 <= c <= n, n >= 1, totals exact."""
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
    if len(n) == 0 or float(np.max(n)) * len(n) < _MAX_COUNT:
        return
    # Python integers: an int64 sum of trials near 2**62 would wrap silently
    total = sum(int(x) for x in np.asarray(n, dtype=object))
    if total >= _MAX_COUNT:
        raise ValueError(
            f"counts table: `trials` ({args.trials!r}) add up to {total}, beyond "
            f"2**53 = {_MAX_COUNT}, where floating-point counts stop being exact; "
            "check the column (a run count that large is usually a unit error)."
        )


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
    """Validated, canonically ordered cube and the number of runs per group."""
    cols = list(
        dict.fromkeys(
            [args.value, *args.cluster, *args.input, *args.by, *args.strata]
            + (list(args.metric.columns) if isinstance(args.metric, Metric) else [])
            + ([args.row_runs] if args.row_runs else [])
        )
    )
    suspects = _identifier_columns(data.columns, cols) if args.cluster else {}
    frame = data if not isinstance(args.metric, Metric) else data[cols + [*suspects]]
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
        _warn_hidden_groups(frame, suspects, cluster_codes, group_codes, args)
    else:
        cluster_codes = cluster_keys = None
    input_codes = _nested_inputs(frame, args, cluster_codes)

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

    if args.strategy == "mode_aggregate":
        _warn(_MODE_WARNING, EstimandWarning)
        frame, group_codes, cluster_codes = _mode_aggregate(
            frame, args, group_codes, cluster_codes, n_groups, root
        )
    elif args.strategy == "iid":
        iid = _as_iid(frame, args, group_codes, cluster_codes, strata_codes)
        if iid is not None:
            frame, group_codes, cluster_codes, cluster_keys, strata_codes = iid

    # canonical order: (group, cluster, input, value); no memory of row order
    keys = [value_codes(frame[args.value])]
    if isinstance(args.metric, Metric):
        keys = [value_codes(frame[c]) for c in reversed(args.metric.columns)] + keys
    if input_codes is not None:
        keys.append(input_codes)
    order = np.lexsort((*keys, cluster_codes, group_codes))
    frame = frame.iloc[order]
    cube = Cube(
        row_group=group_codes[order],
        row_cluster=cluster_codes[order],
        cluster_keys=cluster_keys,
        groups=groups,
        strata=strata_codes,
    )
    if input_codes is not None:
        cube.row_input = input_codes[order]
    if isinstance(args.metric, Metric):
        _add_statistics(cube, frame, args)
    else:
        cube.frame = frame.reset_index(drop=True)
    return cube, n_runs


_MODE_WARNING = (
    "mode_aggregate does not estimate the expected accuracy of one call: for "
    "predicted labels it scores the mode of each input's labels against the truth "
    "(majority-vote accuracy); for a 0/1 column it estimates the share of inputs "
    "where most runs are correct (ties broken at random). Its interval does not "
    "cover single-run accuracy when k > 2 (seed 000: 0% coverage at k=5)."
)


def _as_iid(frame, args, group_codes, cluster_codes, strata_codes):
    """Every row its own input (strategy='iid'); None when that is already so."""
    if cluster_codes is not None:
        cell = cluster_codes * (int(group_codes.max()) + 1) + group_codes
        k_max = int(np.bincount(cell).max())
        if k_max == 1:
            return None
        _warn(
            f"strategy='iid' treats the {len(frame)} rows as independent, but "
            f"inputs (`cluster` {args.cluster}) have up to {k_max} runs each: the "
            "clustering is ignored and the interval is too narrow. Use "
            "strategy='cluster'.",
            ClusteringIgnoredWarning,
        )
        if strata_codes is not None:
            strata_codes = strata_codes[cluster_codes]
    # every row is its own input, and groups never share rows: independent
    order = np.lexsort((value_codes(frame[args.value]), group_codes))
    if strata_codes is not None:
        strata_codes = strata_codes[order]
    cluster_keys = pd.RangeIndex(len(frame), name="row")
    cluster_codes = np.arange(len(frame), dtype=np.int64)
    return (
        frame.iloc[order],
        group_codes[order],
        cluster_codes,
        cluster_keys,
        strata_codes,
    )


def _add_statistics(cube: Cube, frame: pd.DataFrame, args: _Args) -> None:
    """Per-row statistics of a Metric, times multiplicities, input-weighted."""
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
    if cube.row_input is not None and args.weight == "input":
        # inputs nested in clusters count equally: divide each row by its
        # input's runs, then pool within the cluster (DESIGN.md, the estimand)
        cell = cube.row_input * cube.n_groups + cube.row_group
        runs = np.ones(len(cell)) if cube.runs is None else cube.runs
        k = np.bincount(cell, weights=runs)[cell]
        same = np.array(
            [np.ptp(k[cube.row_group == g]) == 0 for g in range(cube.n_groups)]
        )
        if not (args.metric.scale_invariant and same.all()):
            cube.stats = cube.stats / k[:, None]
        cube.input_weighted = True


# Column names that look like a system, or an input, by their first or last word
_SYSTEM_WORDS = {"system", "model", "llm", "agent", "policy", "checkpoint", "variant"}
_INPUT_WORDS = {"input", "item", "question", "problem", "task", "instance", "doc"}
_INPUT_WORDS |= {"example", "sample", "query", "id"}
_NOT_AN_ID = {"answer", "output", "response", "pred", "prediction", "score", "text"}
_NOT_AN_ID |= {"completion", "run", "trial", "epoch", "seed", "repeat", "attempt"}


def _identifier_columns(columns, used) -> dict:
    """Unused columns whose names look like a system or an input identifier."""
    out = {}
    for col in columns:
        if col in used or not isinstance(col, str):
            continue
        tokens = [t for t in re.split(r"[^0-9a-z]+", col.lower()) if t]
        if not tokens or set(tokens) & _NOT_AN_ID:
            continue
        ends = {tokens[0], tokens[-1]}
        if ends & _SYSTEM_WORDS:
            out[col] = "system"
        elif ends & _INPUT_WORDS:
            out[col] = "input"
    return out


def _warn_hidden_groups(frame, suspects, cluster_codes, group_codes, args) -> None:
    """Warn when an input's rows differ in a system-like (or input-like) column.

    Rows that share a ``cluster`` key are taken as runs of one input. If they
    differ in a column named like a system (``system``, ``model_name``...),
    several systems are being pooled as if they were runs; if they differ in
    one named like an input (``input_id``, ``task``...) while ``input`` is not
    given, every cluster counts as one input. Both are silent estimand changes.
    """
    if not suspects:
        return
    cell = cluster_codes * (int(group_codes.max()) + 1) + group_codes
    n_cells = len(np.unique(cell))
    for col, kind in suspects.items():
        if kind == "input" and (args.input or args.strategy != "cluster"):
            continue
        codes = pd.factorize(frame[col])[0].astype(np.int64) + 1
        if len(np.unique(cell * (int(codes.max()) + 1) + codes)) == n_cells:
            continue  # constant within every input
        if kind == "system":
            _warn(
                f"rows of one input (`cluster` {args.cluster}) differ in {col!r}, "
                "which looks like a system identifier: they are pooled as extra "
                f"runs of the same input. Pass by={col!r} for one interval per "
                "system, or select one system first.",
                PooledGroupsWarning,
            )
        else:
            _warn(
                f"rows of one cluster (`cluster` {args.cluster}) differ in {col!r}, "
                "which looks like an input identifier: with `input` left out, each "
                "cluster counts as one input (the score is a mean of cluster "
                f"means). If a cluster holds several inputs, pass input={col!r}: "
                "whole clusters are then resampled and inputs count equally.",
                EstimandWarning,
            )


def _nested_inputs(frame, args: _Args, cluster_codes):
    """Codes of ``input=`` when inputs sit inside larger clusters, else None."""
    if not args.input:
        return None
    codes, keys = factorize(frame, list(args.input), "input")
    pairs = np.unique(codes * (int(cluster_codes.max()) + 1) + cluster_codes)
    if len(pairs) > len(keys):
        per = np.bincount(pairs // (int(cluster_codes.max()) + 1), minlength=len(keys))
        bad = keys[np.flatnonzero(per > 1)[:3]].tolist()
        raise ValueError(
            f"`input` {list(args.input)}: inputs {bad} appear in more than one "
            f"`cluster` ({args.cluster}); each input must sit inside one cluster."
        )
    return codes


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
    n_clusters: np.ndarray  # resampled units per group (= n_inputs unless nested)

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
        _check_callable(cube, args)
    strategy = (
        "cluster" if args.strategy in ("iid", "mode_aggregate") else args.strategy
    )
    weight = "run" if cube.input_weighted else args.weight
    units = cube.units(strategy, weight, fast and args.metric.scale_invariant)
    _check_units(units, cube, args)
    _check_memory(units, args)
    return _Pass(args, root, cube, n_runs, strategy, units)


def _check_callable(cube: Cube, args: _Args) -> None:
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


def _check_units(units, cube: Cube, args: _Args) -> None:
    """At least 2 inputs per unit; warn on few inputs or one-input strata."""
    cluster_name = args.cluster or ["row"]
    nested = bool(args.input)
    few = FEW_CLUSTERS if nested else FEW_INPUTS
    for unit, groups, _ in units:
        where = "" if cube.groups is None else f" in group {cube.groups[groups[0]]!r}"
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


def _check_memory(units, args: _Args) -> None:
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
    n_clusters = n_inputs.copy()
    if cube.row_input is not None:  # inputs nested in clusters: count inputs
        cells = np.unique(cube.row_input * n_groups + cube.row_group)
        n_inputs = np.bincount(cells % n_groups, minlength=n_groups)
    return _Replicates(
        cube,
        estimate,
        reps,
        accel,
        jackknife,
        n_inputs,
        p.n_runs,
        p.fast,
        n_clusters,
    )


def _replicates(data, args: _Args, root) -> _Replicates:
    """Resample every draw unit of the validated table: the shared engine pass."""
    return _finish_pass(_start_pass(data, args, root))


def _warn_degenerate(reps: np.ndarray, estimate: np.ndarray) -> None:
    """Say so when the replicates cannot support an interval (no spread, NaN)."""
    with np.errstate(invalid="ignore"):
        flat = np.all(reps == reps[:, :1], axis=1)
    if flat.any():
        _warn(
            "the bootstrap distribution has no spread (every resample gives the "
            "same score, e.g. every outcome is 1 or 0): the interval has zero width "
            "and says nothing about uncertainty. For 0/N or N/N outcomes use "
            "evalci.analytic_ci(..., method='clopper-pearson'), which gives an "
            "exact bound.",
            DegenerateDataWarning,
        )
    undefined = np.isnan(reps).any(axis=1) & ~np.isnan(estimate)
    if undefined.any():
        share = np.isnan(reps[undefined]).mean(axis=1).max()
        _warn(
            f"up to {share:.1%} of resamples give an undefined score (e.g. kappa "
            "when a resample holds a single label, or a ratio with a zero "
            "denominator), so the interval is NaN. Use more inputs, or a metric "
            "defined on every resample.",
            DegenerateDataWarning,
        )


def _result(rep: _Replicates, args: _Args) -> BootstrapResult:
    """Intervals from a pass, as a :class:`BootstrapResult`."""
    cube, estimate, reps, accel = rep.cube, rep.estimate, rep.reps, rep.accel
    n_groups, fast = cube.n_groups, rep.fast
    if not fast and args.method != "bca":
        accel[:] = np.nan
    _warn_degenerate(reps, estimate)
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
        n_clusters=rep.n_clusters,
        cluster=tuple(args.cluster),
        input=tuple(args.input or args.cluster),
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
    input=None,
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
        Column(s) identifying the resampling unit: rows sharing a key (and
        group) are drawn together. Usually the input, whose rows are its runs;
        it may be a larger unit that inputs nest in (a repository, a source
        document), with ``input=`` naming the input. Required unless
        ``strategy="iid"``.
    strategy : {'cluster', 'iid', 'single_draw', 'hierarchical', 'mode_aggregate'}
        Seed 000's five strategies. ``cluster`` (the default) resamples inputs
        with all their runs; ``single_draw`` takes one run per drawn input;
        ``hierarchical`` resamples runs within each drawn input;
        ``mode_aggregate`` collapses each input's runs to their mode (random
        tie-breaks) and warns that it changes the estimand: for predicted
        labels (``metric=accuracy(truth=...)``) it is the accuracy of the
        majority-vote label; for a 0/1 column it is the share of inputs where
        most runs are correct (a tie at even k broken at random), which is not
        the majority-vote accuracy; ``iid`` treats rows as independent (one
        run per input).
    metric : str, Metric or callable
        ``"mean"`` (accuracy of a 0/1 column), a :class:`~evalci.metrics.Metric`
        such as ``evalci.metrics.kappa(truth="label")``, a registered name, or a
        callable ``f(DataFrame) -> float`` (slower general path: it is called
        on the gathered rows of every resample). The callable receives the
        rows of one group: the original rows for the estimate and the
        jackknife; for a resample, the rows of every drawn input, with an
        input drawn twice appearing as two distinct inputs -- its ``cluster``
        column (and ``input`` column) holds ``(original key, copy number)``
        tuples, so per-input aggregation (``groupby(cluster)``) sees each copy.
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
    input : str or list of str, optional
        The estimand's unit when it is not the resampled ``cluster``: inputs
        nested in larger clusters (problems in repositories). Whole clusters
        are resampled, while each input counts equally (``weight="input"``).
        Defaults to ``cluster``. With few clusters (under 30) a
        ``FewClustersWarning`` says the interval is rough.

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
    iv = (value, cluster, strategy, metric, by, strata, method, confidence_level)
    iv += (n_resamples, weight, dropna, successes, trials)
    row_runs = None
    if _dask.is_dask_frame(data):
        # every check that needs no data runs before the reduction computes
        _bootstrap_iv(_dask.meta(data), *iv, input=input)
        data, row_runs = _from_dask(
            data, value, cluster, strategy, metric, by, strata, successes, trials, input
        )
    args = _bootstrap_iv(data, *iv, row_runs, input)
    return _result(_replicates(data, args, _rs.seed_sequence(rng)), args)


def _from_dask(
    ddf, value, cluster, strategy, metric, by, strata, successes, trials, input=None
):
    """A Dask DataFrame reduced (exactly) to a small pandas table; see ``_dask``."""
    return _dask.reduce_for_bootstrap(
        ddf, value, cluster, strategy, metric, by, strata, successes, trials, input
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
    input=None,
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
        input=input,
    )
