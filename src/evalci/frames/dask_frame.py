"""Dask DataFrames: reduce to a small table with a Dask reduction, then resample.

Rows that agree on every column a bootstrap reads (input, groups, strata, the
value and the metric's columns) are interchangeable runs, so a Dask
``groupby(...).size()`` compresses the table exactly: each row of the result
stands for ``n`` identical runs. The engine then works on that small pandas
table (sufficient statistics times multiplicities), so the answer is the one
the pandas path gives on the full table, for the same seed.

Every public function here validates the arguments that do not need the data
on the Dask DataFrame's metadata (``ddf._meta``, an empty pandas frame with
the same columns and dtypes) *before* the reduction is computed, with the
messages of the pandas path. The other methods of the accessor use the same
single reduction:

* 0/1 outcomes become a counts table (successes, trials per input and group)
  for the functions that take one (``icc`` and the planning functions);
* functions that need rows get them back exactly -- each distinct row
  repeated by its multiplicity -- when there are at most
  :data:`MAX_EXPANDED_ROWS` of them (always true of k=1 tables such as
  McNemar's), else a ValueError says to compute the frame first.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd

from evalci._base.validate import as_columns, check_columns, check_finite
from evalci._base.warnings import caller_location, caller_warnings  # noqa: F401
from evalci.engine import args as _args
from evalci.frames.reduce import (  # noqa: F401 - used as _dask.<name> too
    RUNS,
    _cells_apply,
    _distinct,
    check_compare_args,
)

SUCCESSES = "__evalci_successes__"
TRIALS = "__evalci_trials__"

#: Largest number of rows the Dask accessor rebuilds in memory for a
#: function that needs one row per run (flaky, report, analytic_ci,
#: mcnemar, and icc of scores). Counts-table paths have no such limit.
MAX_EXPANDED_ROWS = 2_000_000


# ----------------------------------------------------------------- reduction
def is_dask_frame(obj) -> bool:
    """Whether ``obj`` is a Dask DataFrame (without importing Dask)."""
    return type(obj).__module__.startswith("dask") and hasattr(obj, "npartitions")


def meta(ddf) -> pd.DataFrame:
    """The empty pandas frame with ``ddf``'s columns and dtypes (no compute)."""
    return ddf._meta


def check_value(value) -> None:
    """A list of columns is not a `value`: say so before anything is computed."""
    if isinstance(value, (list, tuple, pd.Index)):
        raise TypeError(
            f"`value` must be one column name (str), not a {type(value).__name__} "
            f"({list(value)!r}); call once per outcome column, e.g. "
            f"value={list(value)[0]!r}."
            if len(value)
            else "`value` must be one column name (str), not an empty list."
        )


def _sort(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    try:
        table = table.sort_values(keys, kind="stable", na_position="last")
    except TypeError:  # keys that cannot be ordered: keep the reduction's order
        pass
    return table.reset_index(drop=True)


def compress(ddf, keys: list[str], sums: tuple[str, ...] = (), *, compute=True):
    """The distinct rows of ``ddf[keys]`` with their multiplicity (or summed ``sums``).

    One Dask tree reduction (``groupby``); the result is a pandas DataFrame
    sorted by ``keys`` (when they can be ordered), so it does not depend on
    the partitioning or the scheduler. ``compute=False``: a Delayed of it.
    """
    import dask

    missing = [c for c in [*keys, *sums] if c not in ddf.columns]
    if missing:
        shown = ", ".join(map(repr, list(ddf.columns)[:20]))
        raise ValueError(
            f"column {missing[0]!r} is not in the Dask DataFrame; available columns: "
            f"{shown}."
        )
    keys = list(dict.fromkeys(keys))
    grouped = ddf[keys + list(sums)].groupby(keys, dropna=False, observed=True)
    if sums:
        out = grouped[list(sums)].sum()
    else:
        out = grouped.size().rename(RUNS)
    if compute:
        return _sort(out.reset_index().compute(), keys)
    return dask.delayed(_sort, pure=True)(out.reset_index(), keys)


def expand(table: pd.DataFrame, what: str, *, limit=True) -> pd.DataFrame:
    """The rows behind a compressed table: each distinct row ``RUNS`` times.

    Exact (the same rows as the Dask DataFrame's columns, in sorted order).
    """
    runs = table[RUNS].to_numpy()
    n = int(runs.sum())
    if limit and n > MAX_EXPANDED_ROWS:
        raise ValueError(
            f"{what} on a Dask DataFrame needs one row per run, and this table has "
            f"{n:,} of them (more than evalci.frames.dask_frame.MAX_EXPANDED_ROWS = "
            f"{MAX_EXPANDED_ROWS:,}); compute it first, e.g. "
            f"ddf.compute().evalci.{what}(...), or raise that limit if the rows fit "
            "in memory."
        )
    rows = np.repeat(np.arange(len(table)), runs)
    return table.drop(columns=RUNS).iloc[rows].reset_index(drop=True)


def _binary(y: pd.Series) -> bool:
    numeric = pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)
    return bool(numeric and not y.isna().any() and y.isin([0, 1]).all())


def counts_or_rows(ddf, keys: list[str], value: str, what: str):
    """One reduction: a counts table for 0/1 ``value``, else the rows.

    Returns ``("counts", table)`` with columns ``keys``, :data:`SUCCESSES`
    and :data:`TRIALS` (one row per distinct key), or ``("rows", table)``:
    the rows of ``keys + [value]`` (see :func:`expand`).
    """
    table = compress(ddf, [*keys, value])
    check_finite(table, [value], "value")
    if not _binary(table[value]):
        return "rows", expand(table, what)
    keys = list(dict.fromkeys(keys))
    y = table[value].to_numpy().astype(np.int64)
    runs = table[RUNS].to_numpy().astype(np.int64)
    work = table[keys].assign(**{SUCCESSES: y * runs, TRIALS: runs})
    out = work.groupby(keys, dropna=False, observed=True, sort=False).sum()
    return "counts", _sort(out.reset_index(), keys)


def _bind(fn, *args, **kwargs) -> dict:
    """``fn``'s arguments with defaults: a misspelt keyword fails before computing."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _check_dask_bootstrap(metric, strategy) -> None:
    from evalci.metrics import Metric, get_metric

    if not isinstance(get_metric(metric), Metric):
        raise ValueError(
            "a callable `metric` needs the rows themselves; compute the Dask "
            "DataFrame first (ddf.compute()) or use a Metric."
        )
    if strategy != "cluster":
        raise ValueError(
            "a Dask DataFrame is reduced to per-input statistics, which supports "
            "strategy='cluster'; compute it first for other strategies."
        )


def reduce_for_bootstrap(
    ddf, value, cluster, strategy, metric, by, strata, successes, trials, input=None
):
    """A Dask DataFrame reduced (exactly) to a small pandas table for the engine.

    Returns ``(table, row_runs)``: ``row_runs`` names the multiplicity column,
    or is None for a counts table (whose rows are returned as they are). The
    arguments it receives are validated first, on the metadata.
    """

    check_value(value)
    args = _args.bootstrap_iv(
        meta(ddf),
        value,
        cluster,
        strategy,
        metric,
        by,
        strata,
        "percentile",
        0.95,
        10_000,
        "input",
        False,
        successes=successes,
        trials=trials,
        input=input,
    )
    _check_dask_bootstrap(metric, strategy)
    return rows_for_engine(distinct_rows(ddf, args), args)


#: the columns that say why a sample is missing (engine.missing.CAUSES)
_CAUSE_COLUMNS = ("error", "limit", "invalidated", "stopped_early")


def distinct_rows(ddf, args, *, compute=True):
    """The exact tree reduction of the columns a pass reads: distinct rows and
    their multiplicities (:func:`compress`). A counts table is already small:
    its rows come back as they are (summing them in Dask would turn a missing
    count into 0)."""
    taken = pass_columns(args)
    ddf, causes = flag_causes(ddf, taken)
    return compress(ddf, [*taken, *causes], compute=compute)


def pass_columns(args) -> list[str]:
    """The columns a pass reads: its keys, then the value and what the metric
    reads (or a counts table's trials)."""
    keys = [*args.cluster, *args.input, *args.by, *args.strata]
    if args.trials is not None:
        return [*keys, args.value, args.trials]
    return [*keys, args.value, *getattr(args.metric, "columns", ())]


def flag_causes(ddf, taken):
    """``(ddf, causes)``: the columns that say why a sample is missing
    (``error``, ``limit``, ...; not among ``taken``) as flags, True where
    they say something, so that the distinct rows stay few and the counts
    by cause survive the reduction."""
    causes = [c for c in _CAUSE_COLUMNS if c in ddf.columns and c not in taken]
    if causes:
        template = _cause_flags(meta(ddf), causes)
        ddf = ddf.map_partitions(_cause_flags, causes, meta=template)
    return ddf, causes


def _cause_flags(part: pd.DataFrame, causes) -> pd.DataFrame:
    """Each cause column as True where it says something, else missing."""
    from evalci.engine.missing import _stated

    flags = {c: pd.Series(_stated(part[c]), index=part.index) for c in causes}
    return part.assign(**{c: f.where(f).astype("boolean") for c, f in flags.items()})


def rows_for_engine(table, args):
    """``(table, row_runs)`` from :func:`distinct_rows`: values checked, and a
    counts table's rows rebuilt (``row_runs`` None) or the multiplicity column
    named (``row_runs`` = :data:`RUNS`)."""
    if args.trials is not None:
        check_finite(table, [args.value, args.trials], "successes/trials")
        return expand(table, "cluster_ci", limit=False), None
    check_finite(table, [args.value], "value")
    check_finite(table, list(args.metric.columns), "metric")
    return table, RUNS


# ------------------------------------------------ bootstrap on the workers
def cell_parts(ddf, args, token: str, lazy: bool = False) -> list:
    """Per partition, the summed statistics of the cells it holds (Delayed).

    Map (each partition's distinct rows with multiplicities), shuffle by
    ``cluster`` (so every input's runs meet in one partition, however the
    table was split), then ``evalci-reduce`` tasks: each partition's cells
    summed in the canonical order (:func:`evalci.engine.cells.cell_statistics`),
    bit for bit the sums of the pandas path. A ``lazy`` graph (computed
    later, perhaps elsewhere) shuffles with tasks, which every scheduler runs;
    an eager one lets Dask choose (peer-to-peer on a ``distributed`` client).
    The path of statistics that are not whole numbers (0/1 and counts take
    :mod:`evalci.frames.dask_cells`, no shuffle).
    """
    import dask

    from evalci.engine import cells as _cells

    cols = [*args.cluster, *args.by, *args.strata, args.value, *args.metric.columns]
    cols = list(dict.fromkeys(cols))
    template = meta(ddf)[cols].assign(**{RUNS: pd.Series(dtype="int64")})
    local = ddf[cols].map_partitions(_distinct, cols, meta=template)
    method = "tasks" if lazy else None
    shuffled = local.shuffle(on=list(args.cluster), shuffle_method=method)
    return [
        dask.delayed(_cells.cell_statistics, pure=True)(
            part, args, RUNS, dask_key_name=f"evalci-reduce-{token}-{i}"
        )
        for i, part in enumerate(shuffled.to_delayed())
    ]


#: Reduced partitions gathered by the client at a time (:func:`gathered`).
GATHER_BATCH = 8


def gathered(parts):
    """``parts`` (a list of Delayed, or one) computed and brought here.

    On a ``distributed`` client they are gathered :data:`GATHER_BATCH` at a
    time, each batch released once here: a worker then never has to load
    every reduced partition it holds (spilled to disk, beyond its memory)
    at once to send them (measured: one 500 MB worker holding the 400 MB
    reduction of 10**6 inputs x 10 systems was restarted, twice, by one
    gather of all 200). Elsewhere, one ``dask.compute``.
    """
    import dask

    from evalci.engine.scaleout import active_client

    client = active_client()
    if client is None or not isinstance(parts, list) or len(parts) <= GATHER_BATCH:
        (out,) = dask.compute(parts)
        return out
    futures = client.compute(parts)
    out = []
    for i in range(0, len(futures), GATHER_BATCH):
        batch = futures[i : i + GATHER_BATCH]
        out.extend(client.gather(batch))
        for f in batch:
            f.release()
    return out


def _cells_of(ddf, args, token: str, compute: bool):
    """The cells of the reduction: summed where the rows lie when every
    statistic is whole (:mod:`evalci.frames.dask_cells`, no shuffle; eagerly
    the blocks' :class:`~evalci.frames.dask_cells.Summaries`), else after the
    shuffle (:func:`cell_parts`)."""
    import dask

    from evalci.frames import dask_cells

    if compute:  # the blocks' summaries (the blocks stay on the workers)
        summaries = dask_cells.summarised(ddf, args, token, gathered)
        if summaries is not None:
            return summaries
        # a statistic not whole (each partition said so at once), or too large
        return cell_parts(ddf, args, token)
    if not dask_cells.whole_by_type(meta(ddf), args):
        return cell_parts(ddf, args, token, lazy=True)
    blocks, bigs = dask_cells.block_cells(ddf, args, token)
    return dask.delayed(dask_cells.checked, pure=True)(
        list(args.cluster), blocks, *bigs, dask_key_name=f"evalci-exact-{token}"
    )


def _start_cells(parts, args, root, where):
    """``evalci-start`` of the cells path: the pass from the partitions' cells."""
    from evalci.engine import cells as _cells
    from evalci.engine import passes as engine
    from evalci.frames import dask_cells

    with caller_warnings(where):
        if isinstance(parts, dask_cells.Summaries):
            summaries, p = parts, _pass_of_summaries(parts, args, root)
            if p is not None:
                summaries.release()
                return p
            parts = dask_cells.merged(gathered(parts.blocks), list(args.cluster))
            summaries.release()
        full = [p for p in parts if len(p)]
        cells = pd.concat(full, ignore_index=True) if full else parts[0]
        cube, n_runs = _cells.prepare_cells(cells, args)
        return engine.pass_of_cube(cube, n_runs, args, root)


def _pass_of_summaries(parts, args, root):
    """The pass from the blocks' representatives when the pattern kernel
    serves every unit (:func:`evalci.engine.cell_patterns.pass_of_signatures`),
    else None (then the blocks' cells are gathered, as without summaries)."""
    from evalci.engine import cell_patterns

    table = parts.table()
    return (
        None if table is None else cell_patterns.pass_of_signatures(table, args, root)
    )


def _start_rows(table, meta_args, iv, input, scale, root, where):
    """``evalci-start`` of the rows path: the pass from the distinct rows."""
    from evalci.engine import passes as engine

    with caller_warnings(where):
        table, row_runs = rows_for_engine(table, meta_args)
        args = _args.bootstrap_iv(table, *iv, row_runs, input, **scale)
        return engine.start_pass(table, args, root)


def _finish_result(rep, p, where=None):
    """``evalci-finish``: the result of a pass's replicates."""
    from evalci.engine import bootstrap as core

    with caller_warnings(where):
        return core._result(rep, p.args)


def bootstrap_frame(ddf, iv, input, scale, rng, compute=True):
    """:func:`evalci.bootstrap` on a Dask DataFrame: reduce, resample, finish.

    ``iv`` are the positional arguments of :func:`evalci.engine.args.bootstrap_iv`
    after ``data``. Every check that needs no data runs first, on the
    metadata. Per-input statistics are reduced on the workers; the
    resampling runs as Dask tasks unless ``backend="numpy"``.
    ``compute=False`` returns a Delayed of the result.
    """
    import uuid
    from functools import partial

    import dask

    from evalci.engine import passes as engine
    from evalci.engine import resampling as _rs
    from evalci.engine import scaleout
    from evalci.frames import dask_cells

    check_value(iv[0])
    scale = {**scale, "backend": scale.get("backend") or "dask"}
    args = _args.bootstrap_iv(meta(ddf), *iv, input=input, **scale)
    _check_dask_bootstrap(args.metric, args.strategy)
    if not isinstance(compute, bool):
        raise TypeError(f"`compute` must be True or False, not {compute!r}.")
    root, token = _rs.seed_sequence(rng), uuid.uuid4().hex
    where = None if compute else caller_location()
    if _cells_apply(args):
        parts = _cells_of(ddf, args, token, compute)
        start = partial(_start_cells, args=args, root=root, where=where)
    else:
        parts = distinct_rows(ddf, args, compute=False)
        start = partial(
            _start_rows,
            meta_args=args,
            iv=iv,
            input=input,
            scale=scale,
            root=root,
            where=where,
        )
    if compute:
        with caller_warnings():
            kept = isinstance(parts, (tuple, dask_cells.Summaries))
            p = start(parts if kept else gathered(parts))
            rep = (
                scaleout.finish(p)
                if p.args.backend == "dask"
                else engine.finish_pass(p)
            )
            return _finish_result(rep, p)
    p = dask.delayed(start, pure=True)(parts, dask_key_name=f"evalci-start-{token}")
    done = partial(_finish_result, where=where)
    return scaleout.lazy_finish(p, 1, args.n_resamples, done)


# ------------------------------------------------ the accessor's methods
def _resamples_known(kwargs: dict) -> dict:
    """``n_resamples="auto"`` checked as an integer would be (the entry point
    itself checks ``mc_tolerance`` and draws the sizes)."""
    from evalci.engine import auto as _auto

    if _auto.is_auto(kwargs.get("n_resamples")):
        return {
            k: v for k, v in kwargs.items() if k not in ("n_resamples", "mc_tolerance")
        }
    return kwargs


def _bootstrap_resamples(data, value, cluster, *, input, rng, compute, **options):
    """:func:`bootstrap` with an integer ``n_resamples``."""
    iv = tuple(options.pop(k) for k in _IV_NAMES)
    return bootstrap_frame(data, (value, cluster, *iv), input, options, rng, compute)


#: the arguments of :func:`evalci.engine.args.bootstrap_iv` after ``data``,
#: ``value`` and ``cluster``, in its order (the rest are keywords)
_IV_NAMES = (
    "strategy",
    "metric",
    "by",
    "strata",
    "method",
    "confidence_level",
    "n_resamples",
    "weight",
    "dropna",
    "successes",
    "trials",
)


def _check_compare(ddf, a: dict) -> None:
    """The arguments of a paired comparison, checked on the metadata."""
    check_value(a["value"])
    check_compare_args(a)
    check_columns(meta(ddf), [a["system"]], "system")
    cluster = as_columns(a["cluster"], "cluster")
    _args.bootstrap_iv_of(meta(ddf), a, cluster=cluster, by=[a["system"]])
    _check_dask_bootstrap(a["metric"], a["strategy"])


def compare(ddf, value=None, cluster=None, system="system", **kwargs):
    """:func:`evalci.compare` on a Dask DataFrame (its one way in).

    The arguments are checked on the metadata; the rows are reduced exactly
    on the workers to distinct rows with their multiplicities, and the
    ordinary :func:`~evalci.methods.compare.paired.compare` runs on that small table
    (its resampling on Dask unless ``backend="numpy"``).
    """
    from evalci.methods.compare.paired import compare as _compare

    a = _bind(_compare, ddf, value, cluster, system, **_resamples_known(kwargs))
    _check_compare(ddf, a)
    with caller_warnings():
        reduced = _reduce_pairs(ddf, a)
        kwargs["backend"] = kwargs.get("backend") or "dask"
        return _compare(reduced, value, cluster, system, **kwargs)


def leaderboard(ddf, value=None, cluster=None, system="system", **kwargs):
    """:func:`evalci.leaderboard` on a Dask DataFrame, as :func:`compare`."""
    from evalci.methods.ranks.ranking import leaderboard as _leaderboard

    a = _bind(_leaderboard, ddf, value, cluster, system, **kwargs)
    _check_compare(ddf, {**a, "method": "percentile", "adjust": None, "mme": None})
    with caller_warnings():
        reduced = _reduce_pairs(ddf, a)
        return _leaderboard(reduced, value, cluster, system, **kwargs)


def _reduce_pairs(ddf, a: dict):
    """The exact reduction that paired gaps read: distinct rows with their
    multiplicities, keyed by input and system."""
    from evalci.engine.table import ReducedRows

    keys = [*as_columns(a["cluster"], "cluster"), a["system"]]
    table, row_runs = reduce_for_bootstrap(
        ddf,
        a["value"],
        keys,
        a["strategy"],
        a["metric"],
        None,
        a["strata"],
        a["successes"],
        a["trials"],
    )
    return ReducedRows(table, row_runs)
