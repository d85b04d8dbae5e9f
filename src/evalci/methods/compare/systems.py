"""The systems of a comparison: which are compared, their rows checked,
their scores per input, and (:func:`system_scores`) every system's score on
shared draws, which the ranks family reads.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import numpy as np
import pandas as pd

from evalci import metrics as _metrics
from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
)
from evalci.engine import args as _args
from evalci.engine import backends
from evalci.engine import bootstrap as core
from evalci.engine import missing as _missing
from evalci.engine import resampling as _rs
from evalci.engine.keys import factorize, keeping_codes
from evalci.engine.table import rows_of
from evalci.methods.compare.missing import (
    paired_rows,
)
from evalci.metrics import Metric


def _pairs(systems: pd.Index, baseline, pairs) -> list[tuple[int, int]]:
    known = {s: i for i, s in enumerate(systems)}

    def pos(name, arg):
        if name not in known:
            raise ValueError(
                f"`{arg}`: {as_written(name)} is not a system; systems are {list(systems)[:10]}."
            )
        return known[name]

    if baseline is not None and pairs is not None:
        raise ValueError("pass `baseline` or `pairs`, not both.")
    if baseline is not None:
        a = pos(baseline, "baseline")
        return [(a, j) for j in range(len(systems)) if j != a]
    if pairs is not None:
        out = []
        for pair in pairs:
            if isinstance(pair, str) or len(pair) != 2:
                raise ValueError("`pairs` must be a list of (a, b) system pairs.")
            a, b = pos(pair[0], "pairs"), pos(pair[1], "pairs")
            if a == b:
                raise ValueError(
                    f"`pairs`: ({as_written(pair[0])}, {as_written(pair[1])}) compares a system with "
                    "itself (its gap is 0 by construction); pair two different "
                    "systems."
                )
            if (a, b) in out or (b, a) in out:
                raise ValueError(
                    f"`pairs`: ({as_written(pair[0])}, {as_written(pair[1])}) is listed twice (or in both "
                    "orders); each comparison counts once in a multiplicity "
                    "adjustment, so list it once."
                )
            out.append((a, b))
        if not out:
            raise ValueError("`pairs` is empty.")
        return out
    return list(combinations(range(len(systems)), 2))


def _value_columns(args) -> list[str]:
    """The columns whose missing values make a row unusable (value, metric, trials)."""
    cols = [args.value]
    if isinstance(args.metric, Metric):
        cols += list(args.metric.columns)
    if args.trials is not None:
        cols.append(args.trials)
    return list(dict.fromkeys(cols))


def _n_inputs(cube) -> int:
    """Inputs behind a paired comparison (inside the clusters when nested)."""
    if cube.row_input is None:
        return cube.n_clusters
    return len(np.unique(cube.row_input))


def _input_scores(cube, weight, metric):
    """Per-input score of every system ``(N, G)`` for mean-type metrics, else None."""
    if not (isinstance(metric, Metric) and metric.finalize is _metrics._ratio):
        return None
    if metric.name not in ("mean", "accuracy"):
        return None
    if cube.row_input is not None:  # inputs nested in clusters: score each input
        _, inp = np.unique(cube.row_input, return_inverse=True)
        cell = inp * cube.n_groups + cube.row_group
        size = (int(inp.max()) + 1) * cube.n_groups
        num, den = (
            np.bincount(cell, weights=cube.stats[:, j], minlength=size) for j in (0, 1)
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            return (num / den).reshape(-1, cube.n_groups)
    ((unit, _, _),) = cube.units("cluster", weight)
    with np.errstate(invalid="ignore", divide="ignore"):
        return unit.T[..., 0] / unit.T[..., 1]


def _win_loss_tie(score, pairs):
    """Per-input wins, losses and ties of b against a (seed 002's 12-9-19 split)."""
    n = len(pairs)
    if score is None:
        return [np.full(n, np.nan)] * 3
    ia, ib = _sides(pairs)
    diff = score[:, ib] - score[:, ia]  # (N, n_pairs)
    wins, losses = (diff > 0).sum(axis=0), (diff < 0).sum(axis=0)
    return wins, losses, (diff == 0).sum(axis=0)  # NaN: an input not scored


def _bounded(frame, args) -> bool:
    """Whether per-input scores lie in [0, 1] (accuracy, counts, a 0-1 score)."""
    if args.trials is not None or getattr(args.metric, "name", None) == "accuracy":
        return True
    y = frame[args.value]
    if pd.api.types.is_bool_dtype(y):
        return True
    if not pd.api.types.is_numeric_dtype(y):
        return False
    y = y.to_numpy(dtype=float, na_value=np.nan)
    return bool(np.nanmin(y) >= 0 and np.nanmax(y) <= 1) if len(y) else False


def _sides(pairs):
    """Positions of the ``a`` and of the ``b`` system of every pair, as arrays."""
    return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])


def _boot_method(method: str) -> str:
    """The bootstrap method behind ``method`` (rows for ``"clt"`` as for percentile)."""
    return "percentile" if method == "clt" else method


def _metric_name(metric) -> str:
    """The name a result shows for a metric (a Metric's name, a callable's)."""
    if isinstance(metric, Metric):
        return metric.name
    return getattr(metric, "__name__", "callable")


def _systems(data, cluster, system):
    """The input columns and the (sorted) systems of a comparison, checked."""
    check_columns(data, [system], "system")
    cluster_cols = as_columns(cluster, "cluster")
    if not cluster_cols:
        raise ValueError("`cluster` is required: the column that identifies inputs.")
    check_columns(data, cluster_cols, "cluster")
    if system in cluster_cols:
        raise ValueError("`system` and `cluster` must be different columns.")
    _, systems = factorize(data, [system], "system")
    if len(systems) < 2:
        raise ValueError(
            f"`system` column {as_written(system)} has {len(systems)} system(s); a comparison "
            "needs at least 2."
        )
    return cluster_cols, systems


def _used_systems(systems, pairs):
    """The systems the pairs name, and the pairs as positions among those.

    Sorted, as the engine sorts the groups it is given.
    """
    used = sorted({i for p in pairs for i in p})
    remap = {old: new for new, old in enumerate(used)}
    return systems[used], [(remap[a], remap[b]) for a, b in pairs]


def _paired_rows(
    data,
    value,
    cluster,
    system,
    systems_used,
    *,
    strategy,
    method,
    missing,
    dropna,
    metric,
    strata,
    confidence_level,
    n_resamples,
    weight,
    successes,
    trials,
    input,
    row_runs=None,
    warn=True,
    weights="multinomial",
    backend=None,
):
    """The validated arguments and the rows of a paired comparison: ``(args, rows)``.

    ``rows`` is a :class:`~evalci.methods.compare.missing.PairedRows` (the
    rows, the counts of what was missing, whether they hold the fillings of
    ``missing="bounds"``). One place, so that :func:`compare`,
    :func:`evalci.report` and :func:`evalci.leaderboard` use the same rows:
    1. keep the systems compared; 2. the missing runs and the inputs some
    systems lack, per ``missing`` (a dropped run can take an input away).
    """
    args = _args.bootstrap_iv(
        data,
        value,
        cluster,
        strategy,
        metric,
        [system],
        strata,
        _boot_method(method),
        confidence_level,
        n_resamples,
        weight,
        False,
        successes,
        trials,
        row_runs,
        input,
        weights=weights,
        backend=backend,
        missing=_missing.policy(missing, dropna),
    )
    keys = [*cluster, *args.input]
    _, every = factorize(data, [system], "system")  # (kept from _systems)
    if len(every) == len(systems_used):  # every system: no copy of the rows
        frame = data
    else:
        frame = data[data[system].isin(systems_used)]
    cols = _value_columns(args)
    check_finite(frame, cols, "successes/trials" if args.trials else "value")
    rows = paired_rows(frame, args, keys, system, systems_used, cols, warn=warn)
    # the pass reads the rows as they are now: nothing missing is left in them
    return replace(args, missing="raise", dropna=False), rows


def _score_frame(score, cube, names):
    """Per-input scores as a frame (inputs x systems) for fragility, or None."""
    if score is None or cube.row_input is not None:
        return None
    return pd.DataFrame(score, index=cube.cluster_keys, columns=list(names))


@keeping_codes  # the input and system columns are coded once
def system_scores(
    data, value, cluster, system, *, rng, missing, dropna, check_size=None, **options
):
    """Every system's score from the same draws of inputs, and its score per input.

    What :func:`evalci.leaderboard` ranks: the percentile bootstrap of each
    system on shared draws (so every gap is paired), with the missing-value
    counts on the result. ``check_size(n_systems, n_resamples)`` runs before
    resampling; ``options`` are :func:`_paired_rows`'s (``strategy``,
    ``metric``, ``strata``, ``confidence_level``, ``n_resamples``,
    ``weight``, ``successes``, ``trials``, ``input``, ``weights``,
    ``backend``).

    Returns
    -------
    result : BootstrapResult
    input_scores : pandas.DataFrame or None
        Inputs x systems, for mean-type metrics with one input per cluster.
    """
    data, row_runs = rows_of(data)
    check_frame(data, rows=True)
    cluster_cols, systems = _systems(data, cluster, system)
    args, rows = _paired_rows(
        data,
        value,
        cluster_cols,
        system,
        systems,
        method="percentile",
        missing=missing,
        dropna=dropna,
        row_runs=row_runs,
        **options,
    )
    if check_size is not None:
        check_size(len(systems), args.n_resamples)
    rep = backends.replicates(rows.frame, args, _rs.seed_sequence(rng))
    result = core._result(rep, args)
    if rows.counts is not None:  # what was missing, on the scores
        counts = _missing.aligned(rows.counts, result.groups)
        result = replace(
            result, missing=_missing.policy(missing, dropna), counts=counts
        )
    score = _input_scores(rep.cube, args.weight, args.metric)
    return result, _score_frame(score, rep.cube, result.groups)
