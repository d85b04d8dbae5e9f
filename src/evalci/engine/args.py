"""What the user may pass to a bootstrap: one validation function, scipy-style.

:func:`bootstrap_iv` normalises every argument of :func:`evalci.bootstrap`
(and of the functions built on it: ``compare``, ``report``, the xarray and
Dask paths) into a frozen :class:`BootstrapArgs`, raising errors that name the
argument and the fix (scipy's ``_bootstrap_iv`` pattern). Nothing here reads
the data's values: that is :mod:`evalci.engine.table`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalci import metrics as metrics_mod
from evalci._base.options import get_option
from evalci._base.text import as_written
from evalci._base.typing import BACKENDS, METHODS, RESAMPLE_WEIGHTS, STRATEGIES, WEIGHTS
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_counts_args,
    check_flag,
    check_frame,
    check_level,
    check_n_resamples,
    check_option,
    check_value,
)
from evalci.engine.missing import policy as _missing_policy
from evalci.metrics import Metric, for_value, get_metric

__all__ = ["BootstrapArgs", "MIN_RESAMPLES", "bootstrap_iv", "bootstrap_iv_of"]

#: The fewest resamples an interval can be read from.
MIN_RESAMPLES = 2


@dataclass(frozen=True)
class BootstrapArgs:
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
    weights: str = "multinomial"  # resampling weights: multinomial or poisson(1)
    backend: str = "numpy"  # where the resampling runs: in process or on Dask
    block_length: int = 0  # moving_block: inputs drawn in runs of this many
    missing: str = "raise"  # what a missing value means (evalci.engine.missing)
    # inputs per tile, read from evalci.set_options in the caller's process
    # (None: resampling.TILE_SIZE); it travels with the call to Dask tasks
    tile_size: int | None = None
    # groups with the same inputs share their draws (False: one unit a group)
    paired: bool = True


def _counts_metric(trials: str) -> Metric:
    """Accuracy from a counts table: per row ``[n_correct, n_runs]``."""

    def statistics(data, value):
        out = np.empty((len(data[value]), 2))  # one float copy of each column
        out[:, 0], out[:, 1] = data[value], data[trials]
        return out

    return Metric(
        "mean",
        statistics=statistics,
        finalize=metrics_mod._ratio,
        columns=(trials,),
        scale_invariant=True,
    )


def bootstrap_iv(
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
    weights="multinomial",
    backend=None,
    block_length=None,
    missing=None,
    paired=True,
) -> BootstrapArgs:
    """Validate and normalise the arguments of :func:`bootstrap`, in one pass:
    the table, the settings (:func:`_settings`), the columns
    (:func:`_columns`); the checked arguments come back frozen.

    ``missing=None`` reads ``dropna`` (``"drop"`` or ``"raise"``), for the
    callers that still pass ``dropna`` alone.
    """
    check_frame(data, "for xarray objects use the DataArray accessor (da.evalci)")
    confidence_level, missing, n_resamples, weights, backend, block_length = _settings(
        strategy,
        method,
        weight,
        confidence_level,
        missing,
        dropna,
        n_resamples,
        weights,
        backend,
        block_length,
        strata,
    )
    value, metric, cluster, by, strata, input_cols = _columns(
        data,
        value,
        cluster,
        by,
        strata,
        input,
        metric,
        strategy,
        weight,
        successes,
        trials,
        row_runs,
    )
    return BootstrapArgs(
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
        dropna=missing == "drop",
        trials=trials,
        row_runs=row_runs,
        input=tuple(input_cols),
        weights=weights,
        backend=backend,
        block_length=block_length,
        missing=missing,
        tile_size=get_option("tile_size"),
        paired=_check_paired(paired, missing),
    )


def _check_paired(paired, missing) -> bool:
    """``paired`` as a bool; worst-case bounds need it (each system's two
    fillings are resampled with the same draws)."""
    paired = check_flag(paired, "paired")
    if not paired and missing == "bounds":
        raise ValueError(
            "`paired=False` draws every group apart, but missing='bounds' "
            "resamples each system's two fillings with the same draws; leave "
            "`paired` at True for bounds, or choose missing='drop' or 'zero'."
        )
    return paired


def _settings(
    strategy,
    method,
    weight,
    confidence_level,
    missing,
    dropna,
    n_resamples,
    weights,
    backend,
    block_length,
    strata,
):
    """The options that do not read the table, checked in the order a user
    reads them; ``missing=None`` reads ``dropna``."""
    check_option(strategy, "strategy", STRATEGIES)
    check_option(method, "method", METHODS)
    check_option(
        weight,
        "weight",
        WEIGHTS,
        describe="'input' (each input counts equally) or 'run' (pool runs)",
    )
    confidence_level = check_level(confidence_level)
    missing = _missing_policy("raise" if missing is None else missing, dropna)
    n_resamples = _check_resamples(n_resamples)
    weights, backend = _check_scale_out(weights, backend, strategy)
    block_length = _check_block_length(block_length, strategy, method, strata)
    return confidence_level, missing, n_resamples, weights, backend, block_length


def _columns(
    data,
    value,
    cluster,
    by,
    strata,
    input,
    metric,
    strategy,
    weight,
    successes,
    trials,
    row_runs,
):
    """Every argument that names the table's columns, checked against it in
    one place: the value (or counts), the metric's columns, the keys, the
    input, and that no column plays two roles."""
    if successes is not None or trials is not None:
        value, metric = _counts_table(data, value, strategy, metric, successes, trials)
    if row_runs is not None and strategy != "cluster":
        raise ValueError(
            "compressed rows (Dask input) support strategy='cluster' only."
        )
    value = check_value(value)
    metric = for_value(get_metric(metric), value)  # from_sums may sum the value
    cluster, by, strata = _key_columns(data, value, cluster, by, strata, strategy)
    if isinstance(metric, Metric):
        check_columns(data, list(metric.columns), "metric")
    input_cols = _check_input(data, input, cluster, by, strategy)
    if isinstance(metric, Metric) and metric.per_input is not None:
        _check_per_input(metric.name, strategy, input_cols, weight)
    _check_roles(data, value, cluster, input_cols, by, strata, metric)
    return value, metric, cluster, by, strata, input_cols


def bootstrap_iv_of(data, bound, **given) -> BootstrapArgs:
    """:func:`bootstrap_iv` from a mapping of arguments (a bound signature or
    an entry point's keyword arguments), ``given`` overriding its keys.

    For the paths that check arguments on metadata before computing (Dask,
    DataArrays) and for ``compare``'s ``method="clt"`` (bootstrap methods
    only are checked here).
    """
    a = {**bound, **given}
    method = a.get("method", "percentile")
    return bootstrap_iv(
        data,
        a.get("value"),
        a.get("cluster"),
        a.get("strategy", "cluster"),
        a.get("metric", "mean"),
        a.get("by"),
        a.get("strata"),
        "percentile" if method == "clt" else method,
        a.get("confidence_level", 0.95),
        a.get("n_resamples", 10_000),
        a.get("weight", "input"),
        a.get("dropna", False),
        successes=a.get("successes"),
        trials=a.get("trials"),
        row_runs=a.get("row_runs"),
        input=a.get("input"),
        weights=a.get("weights", "multinomial"),
        backend=a.get("backend"),
        block_length=a.get("block_length"),
        paired=a.get("paired", True),
    )


def _check_resamples(n_resamples) -> int:
    """A positive integer, and at least the :data:`MIN_RESAMPLES` an interval needs."""
    return check_n_resamples(
        n_resamples, minimum=MIN_RESAMPLES, hint=" Use 10_000 (the default)."
    )


def _check_block_length(block_length, strategy, method, strata) -> int:
    """``block_length=``: required by ``moving_block``, refused by the others."""
    if strategy != "moving_block":
        if block_length is not None:
            raise ValueError(
                f"`block_length` is for strategy='moving_block' (observations in "
                f"sequence), not strategy={as_written(strategy)}; leave it out, or pass "
                "strategy='moving_block'."
            )
        return 0
    if block_length is None:
        raise ValueError(
            "strategy='moving_block' needs `block_length`: how many consecutive "
            "inputs stay together, e.g. block_length=round(n_inputs ** (1 / 3)) "
            "(Kunsch 1989's order), or the length of the dependence."
        )
    if isinstance(block_length, bool) or not isinstance(
        block_length, (int, np.integer)
    ):
        raise TypeError(
            f"`block_length` must be a positive integer, not {as_written(block_length)}."
        )
    if block_length < 1:
        raise ValueError(f"`block_length` must be at least 1; got {block_length}.")
    if method == "bca":
        raise ValueError(
            "method='bca' needs a jackknife over independent inputs, which a "
            "moving-block bootstrap does not have; use method='percentile', "
            "'basic' or 'normal'."
        )
    if strata:
        raise ValueError(
            "strategy='moving_block' keeps the sequence whole, so it cannot be "
            "stratified; leave `strata` out (or bootstrap each stratum on its own "
            "with by=)."
        )
    return int(block_length)


def _check_scale_out(weights, backend, strategy) -> tuple[str, str]:
    """``weights=`` (multinomial or Poisson(1)) and ``backend=`` (numpy or dask)."""
    check_option(
        weights,
        "weights",
        RESAMPLE_WEIGHTS,
        describe="'multinomial' (the bootstrap) or 'poisson' (Poisson(1) weights "
        "per input, for streaming data)",
    )
    if weights == "poisson" and strategy not in ("cluster", "iid", "mode_aggregate"):
        raise ValueError(
            f"weights='poisson' weights whole inputs, which strategy={as_written(strategy)} "
            "does not do (it draws runs inside inputs); use strategy='cluster', or "
            "weights='multinomial'."
        )
    if backend is None:
        backend = "numpy"
    check_option(
        backend,
        "backend",
        BACKENDS,
        describe="'numpy' (resample in this process) or 'dask' (resample on the "
        "current Dask scheduler or distributed client)",
    )
    return weights, backend


def _counts_table(data, value, strategy, metric, successes, trials):
    """``successes=``/``trials=``: the value column and the counts metric."""
    check_counts_args(value, successes, trials)
    if strategy not in ("cluster", "hierarchical", "single_draw") or metric != "mean":
        raise ValueError(
            "a counts table (successes=, trials=) supports metric='mean' with "
            "strategy='cluster', 'hierarchical' or 'single_draw' (exact binomial "
            "draws per input); expand it to one row per run for other strategies."
        )
    check_columns(data, [successes, trials], "successes/trials")
    return successes, _counts_metric(trials)


def _key_columns(data, value, cluster, by, strata, strategy):
    """``cluster``, ``by`` and ``strata`` as lists of existing columns."""
    cluster = as_columns(cluster, "cluster")
    if not cluster and strategy != "iid":
        raise ValueError(
            f"`cluster` is required for strategy={as_written(strategy)}: name the column that "
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
    overlap = set(cluster) & set(by)
    if overlap:
        raise ValueError(
            f"`by` and `cluster` share column {as_written(sorted(overlap)[0])}: one CI per input "
            "is not a bootstrap; group by a column that spans several inputs."
        )
    return cluster, by, strata


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
                    f"`{seen[col]}` and `{role}` both name column {as_written(col)}; each "
                    "column can play one role (an outcome is not an input key)."
                )
            seen[col] = role
    for col in by:
        if col in seen and seen[col] != "cluster":  # by == cluster has its own message
            raise ValueError(
                f"`by` and `{seen[col]}` both name column {as_written(col)}; group by a column "
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


def _check_per_input(name: str, strategy: str, input_cols, weight: str) -> None:
    """A per-input metric (pass@k, Krippendorff's alpha) resamples whole inputs.

    Its value is a function of each input's runs taken together (c correct of
    n), so the runs of an input are its sample: redrawing them (single_draw,
    hierarchical) or collapsing them (mode_aggregate, iid) changes or biases
    the estimand. pass@k and pass^k count each input once, so ``weight="run"``
    (pool the runs) has nothing to pool and is refused rather than ignored;
    Krippendorff's alpha pools every pairable rating already, whatever
    ``weight`` says.
    """
    if weight == "run" and name.startswith(("pass@", "pass^")):
        raise ValueError(
            f"`weight`='run' cannot be used with metric {as_written(name)}: it is computed "
            "per input from all of that input's runs taken together, each input "
            "counting once, so there are no per-run values to pool; use "
            "weight='input' (the default). For the pooled rate of all runs use "
            "metric='mean' with weight='run'."
        )
    if strategy != "cluster":
        raise ValueError(
            f"`strategy`={as_written(strategy)} cannot be used with metric {as_written(name)}: it is "
            "computed per input from all of that input's runs (its sample), and "
            "resampling or pooling those runs biases it; use strategy='cluster'."
        )
    if input_cols:
        raise ValueError(
            f"`input` {list(input_cols)} cannot be used with metric {as_written(name)}: it is "
            "computed per resampled cluster from that cluster's rows; leave "
            "`input` out and pass the input column as `cluster`."
        )
