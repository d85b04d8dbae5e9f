"""From a validated tidy table to the cube: clean values, keys, canonical order.

:func:`prepare` is the one step between the user's rows and the engine. It
drops or refuses missing and infinite values, checks 0/1 and counts columns,
factorises the keys (groups, clusters, nested inputs, strata), warns when the
keys look wrong for the table (systems pooled as runs, clusters that hold
several inputs), applies the row-level strategies (mode_aggregate, iid), puts
rows in a canonical order -- (group, cluster, input, value) -- so that a
shuffled table gives bit-identical results, and forms the metric's per-row
statistics.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_counts, check_finite
from evalci._base.warnings import (
    ClusteringIgnoredWarning,
    EstimandWarning,
)
from evalci._base.warnings import warn as _warn
from evalci.engine import resampling as _rs
from evalci.engine.args import BootstrapArgs
from evalci.engine.cube import Cube, factorize, iid_order, value_codes
from evalci.engine.cube import group_codes as group_codes_of
from evalci.engine.hidden_groups import (
    _identifier_columns,
    _warn_hidden_groups,
)
from evalci.engine.missing import refusal
from evalci.metrics import Metric

__all__ = ["check_magnitude", "prepare"]

#: Columns of a table of per-cell summed statistics (:func:`cell_statistics`).
CELL_RUNS = "__evalci_runs__"


@dataclass(frozen=True)
class ReducedRows:
    """A table already reduced exactly, e.g. on Dask workers (:mod:`evalci.frames`).

    ``frame`` holds each distinct row once and ``row_runs`` names its
    multiplicity column (how many of the original rows it stands for). Entry
    points that take a table take this too: they read the rows with
    :func:`rows_of` and never learn where the reduction ran.
    """

    frame: pd.DataFrame
    row_runs: str | None


def rows_of(data) -> tuple[object, str | None]:
    """``(table, row_runs)`` of an entry point's ``data``: a :class:`ReducedRows`
    unwrapped, anything else as it is with no multiplicity column."""
    if isinstance(data, ReducedRows):
        return data.frame, data.row_runs
    return data, None


def stat_columns(m: int) -> list[str]:
    """Names of the ``m`` summed-statistic columns of a cell table."""
    return [f"__evalci_s{j}__" for j in range(m)]


def _clean_values(frame: pd.DataFrame, args: BootstrapArgs, keep=None) -> pd.DataFrame:
    """Drop or reject missing values; check 0/1 and numeric requirements.

    ``keep`` names the columns to keep when rows are dropped (all by default).
    """
    metric = args.metric
    value_cols = [args.value] + (
        list(metric.columns) if isinstance(metric, Metric) else []
    )
    # integer and boolean numpy columns hold neither NaN nor inf: not scanned
    nullable = [c for c in dict.fromkeys(value_cols) if _may_be_missing(frame[c])]
    if len(nullable) == 1:
        na = frame[nullable[0]].isna()
    elif nullable:
        na = frame[nullable].isna().any(axis=1)
    if nullable and na.any():
        if not args.dropna:
            col = next(c for c in value_cols if frame[c].isna().any())
            role = "value" if args.trials is None else "successes/trials"
            raise ValueError(refusal(frame, args, na.to_numpy(), col, role))
        frame = frame.loc[~na.to_numpy(), keep if keep is not None else slice(None)]
    if args.trials is not None:
        check_finite(frame, _floats(frame, [args.value]), "successes")
        check_finite(frame, _floats(frame, [args.trials]), "trials")
    check_finite(frame, _floats(frame, [args.value]), "value")
    if isinstance(metric, Metric):
        check_finite(frame, _floats(frame, list(metric.columns)), "metric")
    if args.trials is not None:
        c, n = frame[args.value], frame[args.trials]
        if not _plain_counts(c.to_numpy(), n.to_numpy()):
            check_counts(c, n, args.value, args.trials)
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
                f"`value` column {as_written(args.value)} is not numeric (dtype {y.dtype}); the "
                f"{as_written(metric.name)} metric needs numbers. For predicted labels use "
                "metric=evalci.metrics.accuracy(truth=...) or kappa(truth=...)."
            )
        if needs_binary:
            bad = ~y.isin([0, 1])
            if bad.any():
                why = (
                    "mode_aggregate takes the majority of a 0/1 column"
                    if args.strategy == "mode_aggregate"
                    else f"metric {as_written(metric.name)} needs 0/1 values"
                )
                raise ValueError(
                    f"`value` column {as_written(args.value)} must hold only 0/1 ({why}); found "
                    f"{as_written(y[bad].iloc[0])} in {int(bad.sum())} rows."
                )
    return frame


def _plain_counts(c: np.ndarray, n: np.ndarray) -> bool:
    """Integer columns with ``0 <= c <= n``, ``n >= 1`` and totals far below
    2**53: what :func:`check_counts` accepts, checked without float copies."""
    if not (c.dtype.kind in "iu" and n.dtype.kind in "iu") or len(n) == 0:
        return False
    if c.min() < 0 or n.min() < 1 or not (c <= n).all():
        return False
    return float(n.max()) * len(n) < 2.0**53


def _may_be_missing(series: pd.Series) -> bool:
    """False for numpy integer and boolean columns, which cannot hold NaN."""
    return not (isinstance(series.dtype, np.dtype) and series.dtype.kind in "iub")


def _floats(frame: pd.DataFrame, cols: list) -> list:
    """The columns of ``cols`` that can hold an infinite value."""
    return [c for c in cols if _may_be_missing(frame[c])]


def check_magnitude(stats: np.ndarray, value: str, what: str) -> None:
    """Refuse statistics so large that their sums or squares overflow float64.

    An estimate sums up to every row's statistic, and a standard error squares
    deviations of up to twice the largest, summed over up to 2**18 resamples
    (``n_resamples="auto"``'s largest) or the rows: beyond
    ``sqrt(max_float / (8 max(n_rows, 2**18)))`` (about 1e150) one of them
    can be ``inf`` and the result ``inf`` or NaN without a word. One pass of
    ``max |x|`` over the statistics, once per table.
    """
    stats = np.asarray(stats, dtype=float)
    if stats.size == 0:
        return
    with np.errstate(invalid="ignore"):  # max |x| without a copy of |x|
        big = max(float(np.nanmax(stats)), -float(np.nanmin(stats)))
    limit = np.sqrt(np.finfo(float).max / (8.0 * max(stats.shape[0], 2**18)))
    if big <= limit:
        return
    shown = "inf (its sums overflowed)" if np.isinf(big) else f"{big:.3g}"
    raise ValueError(
        f"`value` column {as_written(value)} ({what}) reaches {shown}: sums and "
        f"squares of values beyond {limit:.2g} overflow float64, which would make "
        f"the estimate or its interval inf or NaN. Rescale the column, e.g. "
        f"df[{as_written(value)}] / 1e{max(int(np.log10(min(big, 1e308))) - 3, 1)}, and "
        "scale the interval back."
    )


def _check_strata(frame, cluster_codes, n_clusters, strata_col, cluster_cols):
    codes, index = factorize(frame, [strata_col], "strata")
    pairs = np.unique(cluster_codes * len(index) + codes)
    per_cluster = np.bincount(pairs // len(index), minlength=n_clusters)
    if (per_cluster > 1).any():
        bad = np.flatnonzero(per_cluster > 1)[:5]
        raise ValueError(
            f"`strata` column {as_written(strata_col)} varies within an input (`cluster` "
            f"{cluster_cols}); a stratum must be a property of the input. "
            f"Inputs with more than one stratum (first codes): {bad.tolist()}."
        )
    out = np.empty(n_clusters, dtype=np.int64)
    out[pairs // len(index)] = pairs % len(index)
    return out


def _mode_aggregate(frame, args, group_codes, cluster_codes, n_groups, root):
    """Collapse each (input, group) to the mode of its value, ties at random.

    Random tie-breaks matter: breaking ties towards the lowest or highest
    label gives about 14-15% coverage at k=3 (docs/paper-notes.md).
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
                    f"mode_aggregate: column {as_written(col)} varies within an input; the "
                    "mode of the predictions is scored against one value per input."
                )
    out = frame.iloc[first_row].copy()
    out[args.value] = np.asarray(uniques)[mode]
    return out, group_codes[first_row], cluster_codes[first_row]


def prepare(data: pd.DataFrame, args: BootstrapArgs, root) -> tuple[Cube, np.ndarray]:
    """Validated, canonically ordered cube and the number of runs per group."""
    frame, suspects = _frame_of(data, args)
    group_codes, groups, n_groups = group_codes_of(frame, args.by)

    if args.cluster:
        cluster_codes, cluster_keys = factorize(frame, args.cluster, "cluster")
        _warn_hidden_groups(frame, suspects, cluster_codes, group_codes, args)
    else:
        cluster_codes = cluster_keys = None
    input_codes = _nested_inputs(frame, args, cluster_codes)

    strata_codes = _strata_codes(frame, args, cluster_codes, cluster_keys)

    n_runs = _runs_per_group(frame, args, group_codes, n_groups)
    iid = None

    if args.strategy == "mode_aggregate":
        _warn(_MODE_WARNING, EstimandWarning)
        frame, group_codes, cluster_codes = _mode_aggregate(
            frame, args, group_codes, cluster_codes, n_groups, root
        )
    elif args.strategy == "iid" and _rows_as_inputs(
        frame, args, group_codes, cluster_codes
    ):
        if strata_codes is not None and cluster_codes is not None:
            strata_codes = strata_codes[cluster_codes]  # each row's
        cluster_codes = np.arange(len(frame), dtype=np.int64)
        cluster_keys = pd.RangeIndex(len(frame), name="row")
        iid = partial(iid_order, frame[args.value], group_codes)
        if not (isinstance(args.metric, Metric) and input_codes is None):
            order, iid = iid(), None  # the rows themselves, in canonical order
            frame, group_codes = frame.iloc[order], group_codes[order]
            strata_codes = None if strata_codes is None else strata_codes[order]

    cube = Cube(
        row_group=group_codes,
        row_cluster=cluster_codes,
        cluster_keys=cluster_keys,
        groups=groups,
        strata=strata_codes,
        row_input=input_codes,
    )
    if iid is not None:
        _iid_rows(cube, frame, args, iid)
        return cube, n_runs
    _order_rows(cube, frame, args, input_codes, cluster_codes, group_codes)
    return cube, n_runs


def _frame_of(data: pd.DataFrame, args: BootstrapArgs):
    """The rows and columns the pass reads, values cleaned, and the columns
    that look like identifiers (checked for groups hidden in a cluster)."""
    cols = list(
        dict.fromkeys(
            [args.value, *args.cluster, *args.input, *args.by, *args.strata]
            + (list(args.metric.columns) if isinstance(args.metric, Metric) else [])
            + ([args.row_runs] if args.row_runs else [])
        )
    )
    suspects = _identifier_columns(data.columns, cols) if args.cluster else {}
    keep = cols + [*suspects]
    if not isinstance(args.metric, Metric):
        frame, keep = data, None
    else:  # order-free: no copy of the rows (dropped rows leave with the rest)
        frame = data if _order_free(args, args.input or None) else data[keep]
    frame = _clean_values(frame, args, keep)
    if len(frame) == 0:
        raise ValueError("no rows left to resample (after dropping missing values).")
    return frame, suspects


def _strata_codes(frame, args: BootstrapArgs, cluster_codes, cluster_keys):
    """Each row's stratum code, checked constant within an input; None without."""
    if not args.strata:
        return None
    if cluster_codes is None:  # iid without clusters: each row is an input
        codes, _ = factorize(frame, args.strata, "strata")
        return codes
    return _check_strata(
        frame, cluster_codes, len(cluster_keys), args.strata[0], args.cluster
    )


def _order_rows(
    cube: Cube, frame, args: BootstrapArgs, input_codes, cluster_codes, group_codes
):
    """The cube's rows in canonical order (group, cluster, input, value), with
    their statistics: no memory of the table's row order."""
    if _order_free(args, input_codes):
        _add_statistics(cube, frame, args)

        order = partial(_canonical_order, frame, args, cluster_codes, group_codes)
        if not _sums_exact(cube):  # float sums: add each cell's rows in order
            cube.reorder(order())
        elif args.strategy in _RUN_LEVEL:  # sorted if the run rows are read
            cube.pending_order = lambda: cube.reorder(order())
        return
    # canonical order: (group, cluster, input, value); no memory of row order
    order = _canonical_order(frame, args, input_codes, cluster_codes, group_codes)
    frame = frame.iloc[order]
    cube.row_group, cube.row_cluster = group_codes[order], cluster_codes[order]
    if input_codes is not None:
        cube.row_input = input_codes[order]
    if isinstance(args.metric, Metric):
        _add_statistics(cube, frame, args)
    else:
        cube.frame = frame.reset_index(drop=True)


def _runs_per_group(frame, args: BootstrapArgs, group_codes, n_groups) -> np.ndarray:
    """Runs per group: rows, or the summed trials / multiplicities (int64)."""
    runs_col = args.trials or args.row_runs
    if runs_col is None:
        if n_groups == 1:
            return np.array([len(frame)], dtype=np.int64)
        return np.bincount(group_codes, minlength=n_groups)
    runs = frame[runs_col].to_numpy()
    if n_groups == 1 and runs.dtype.kind in "iu" and len(runs):
        if float(runs.max()) * len(runs) < 2.0**53:  # exact either way
            return np.array([runs.sum(dtype=np.int64)], dtype=np.int64)
    return np.bincount(group_codes, weights=runs, minlength=n_groups).astype(np.int64)


_RUN_LEVEL = ("hierarchical", "single_draw")


def _order_free(args: BootstrapArgs, input_codes) -> bool:
    """Whether the engine may read only per-cell sums of the rows, not their order.

    True for a Metric without nested inputs resampled by whole inputs
    (``cluster``, ``moving_block``): the cube's rows then only feed bincount
    sums per (cluster, group) cell, so they need no canonical order when those
    sums are exact in any order (:func:`_sums_exact`). True too at the run
    level (``hierarchical``, ``single_draw``), whose pattern kernel reads the
    cell sums and each group's distinct rows (:meth:`Cube.two_valued`), but
    whose index kernel draws run rows by offset: the canonical order is then
    left pending and applied only if the rows are read (:meth:`Cube.settle`).
    The statistics are per row, so computing them before or after ordering
    the rows gives the same bits.
    """
    return (
        isinstance(args.metric, Metric)
        and args.strategy in ("cluster", "moving_block", *_RUN_LEVEL)
        and input_codes is None
    )


def _sums_exact(cube: Cube) -> bool:
    """Whether every cell's sums are the same bits in any order of its rows.

    So when no cell has two rows (a counts table, one row per input and
    system), or when every statistic is a whole number and no partial sum can
    reach 2**53 (0/1 values, counts): float64 adds such numbers exactly. O(R).
    """
    rows = cube.cell_counts()
    most = int(rows.max()) if rows.size else 0
    if most <= 1:
        return True
    return _exact_sums(cube.stats, most, cube.whole_stats is cube.stats)


def _exact_sums(stats: np.ndarray, most: int, whole: bool) -> bool:
    """Whether sums of up to ``most`` of the rows ``stats`` are exact in any
    order: finite whole numbers (``whole``: made from integers) far from 2**53."""
    if stats.size == 0:
        return True
    big = largest(stats)
    if not np.isfinite(big) or big * most >= 2.0**53:
        return False
    return whole or whole_numbers(stats)  # whole: made from integers, no -0.0


def largest(stats: np.ndarray) -> float:
    """``max |x|`` of the statistics (0 for none), without a copy of ``|x|``."""
    if stats.size == 0:
        return 0.0
    return max(float(stats.max()), -float(stats.min()))


def whole_numbers(stats: np.ndarray) -> bool:
    """Whether every statistic is a whole number (finite); O(R), cache-sized chunks."""
    step = 1 << 15  # in chunks that stay in cache
    for lo in range(0, stats.shape[0], step):
        x = stats[lo : lo + step]
        if not np.array_equal(x, np.trunc(x)):
            return False
    return True


def _canonical_order(frame, args, *codes) -> np.ndarray:
    """Row order by ``codes`` (last is primary), then value, then metric columns.

    Within a cell the rows are summed in this order, so a table's sums do not
    depend on its row order -- nor on which rows of it a Dask partition holds.
    """
    keys = [value_codes(frame[args.value])]
    if isinstance(args.metric, Metric):
        keys = [value_codes(frame[c]) for c in reversed(args.metric.columns)] + keys
    return np.lexsort((*keys, *(c for c in codes if c is not None)))


def _metric_data(frame: pd.DataFrame, args: BootstrapArgs) -> dict:
    """The columns a Metric's ``statistics`` reads: the value and its ``columns``.

    Only those are turned into arrays (a string key column would cost more to
    convert than the whole bootstrap).
    """
    cols = dict.fromkeys([args.value, *args.metric.columns])
    return {c: frame[c].to_numpy() for c in cols}


_MODE_WARNING = (
    "mode_aggregate does not estimate the expected accuracy of one call: for "
    "predicted labels it scores the mode of each input's labels against the truth "
    "(majority-vote accuracy); for a 0/1 column it estimates the share of inputs "
    "where most runs are correct (ties broken at random). Its interval does not "
    "cover single-run accuracy when k > 2 (seed 000: 0% coverage at k=5)."
)


def _rows_as_inputs(frame, args, group_codes, cluster_codes) -> bool:
    """Whether strategy='iid' makes every row its own input (False when each
    is already), with a warning when inputs have several runs."""
    if cluster_codes is not None:
        n_groups = int(group_codes.max()) + 1
        cell = (
            cluster_codes if n_groups == 1 else cluster_codes * n_groups + group_codes
        )
        k_max = int(np.bincount(cell).max())
        if k_max == 1:
            return False
        _warn(
            f"strategy='iid' treats the {len(frame)} rows as independent, but "
            f"inputs (`cluster` {args.cluster}) have up to {k_max} runs each: the "
            "clustering is ignored and the interval is too narrow. Use "
            "strategy='cluster'.",
            ClusteringIgnoredWarning,
        )
    return True


def _iid_rows(cube: Cube, frame: pd.DataFrame, args: BootstrapArgs, order_of) -> None:
    """Statistics of strategy='iid', every row its own input, and their order.

    The canonical order is (group, value), each row's input code its position
    in it (``order_of()``, :func:`iid_order`); the statistics are formed in
    the table's order and moved (they are per row: the same bits). The
    pattern kernel reads only the distinct rows and their counts, which no
    order changes when the statistics are whole numbers (no sum depends on
    its order): the order is then left pending (:meth:`Cube.settle`).
    """
    _add_statistics(cube, frame, args)

    def settle():
        order, strata = order_of(), cube.strata
        cube.reorder(order)
        cube.row_cluster = np.arange(len(order), dtype=np.int64)
        cube.strata = None if strata is None else strata[order]

    if _exact_sums(cube.stats, len(cube.stats), cube.whole_stats is cube.stats):
        cube.pending_order = settle
    else:
        settle()


def _add_statistics(cube: Cube, frame: pd.DataFrame, args: BootstrapArgs) -> None:
    """Per-row statistics of a Metric, times multiplicities, input-weighted."""
    data_map = _metric_data(frame, args)
    raw = np.asarray(args.metric.statistics(data_map, args.value))
    stats = np.asarray(raw, dtype=float)
    if stats.ndim != 2 or stats.shape[0] != len(frame):
        raise ValueError(
            f"metric {as_written(args.metric.name)}: `statistics` must return an array of "
            f"shape (n_rows, m); got {stats.shape}."
        )
    if raw.dtype.kind in "biu":  # whole numbers (below 2**64), known without a scan
        cube.whole_stats = stats
    else:
        check_magnitude(stats, args.value, f"metric {as_written(args.metric.name)}")
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


def _nested_inputs(frame, args: BootstrapArgs, cluster_codes):
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
