"""The closed forms on a table: rows to per-input cells, the interval of each kind (mean, kappa, exact bounds at 0 and 1), the warnings they need."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.messages import _where
from evalci._base.text import as_written
from evalci._base.warnings import (
    FEW_INPUTS,
    DegenerateDataWarning,
    FewClustersWarning,
    warn,
)
from evalci.engine.cube import factorize, value_codes
from evalci.engine.cube import group_codes as group_codes_of
from evalci.methods.analytic.args import (
    _CLUSTERED_METHODS,
    _COLLAPSING_METHODS,
    _NORMAL_METHODS,
    _Args,
    _outcome_iv,
)
from evalci.methods.analytic.closed_form import (
    _clopper_pearson,
    _clt,
    _kappa_fce,
    _korn_graubard_wilson,
    _proportion_interval,
    _rule_of_three,
    _z,
)
from evalci.metrics.labels import check_comparable


@dataclass(frozen=True)
class _Closed:
    """One closed-form interval per group, and how it was reached."""

    cells: _Cells
    estimate: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rot: np.ndarray  # the one-sided rule of three
    boundary: np.ndarray  # collapsed at 0/N or N/N: exact interval instead
    all1: np.ndarray  # every outcome 1 (where `boundary`: else 0)


def _closed_form(data: pd.DataFrame, args: _Args, *, say: bool = True) -> _Closed:
    """The interval of each group of ``data`` (``say``: warn when an
    interval collapsed at 0/N or N/N and the exact one replaced it)."""
    y = _outcome_iv(data, args)
    cells = _cells(data, args)
    _cells_iv(cells, args)
    none = np.zeros(cells.n_groups, dtype=bool)
    if args.method == "fleiss-cohen-everitt":
        return _Closed(cells, *_kappa_interval(data, args, cells), none, none, none)
    out = _Closed(cells, *_mean_interval(y, args, cells))
    if say:
        _say_boundary(out, out.boundary, args)
    return out


@dataclass(frozen=True)
class _Cells:
    """Rows in canonical order, in one cell per (group, input)."""

    order: np.ndarray  # canonical position -> row of the table
    group_codes: np.ndarray  # per row, in canonical order
    cluster_codes: np.ndarray
    cluster_keys: pd.Index
    groups: pd.Index | None
    starts: np.ndarray  # first row of each cell
    k: np.ndarray  # rows of each cell
    cell_group: np.ndarray  # group of each cell
    n_inputs: np.ndarray  # per group
    n_runs: np.ndarray

    @property
    def n_groups(self) -> int:
        return len(self.n_inputs)


def _cells(frame: pd.DataFrame, args: _Args) -> _Cells:
    """Group and input codes in the order (group, input, value[, truth])."""
    group_codes, groups, n_groups = group_codes_of(frame, args.by)
    if args.cluster:
        cluster_codes, cluster_keys = factorize(frame, args.cluster, "cluster")
    else:
        cluster_codes = np.arange(len(frame), dtype=np.int64)
        cluster_keys = pd.RangeIndex(len(frame), name="row")
    # canonical order (group, input, value[, truth]): sums do not depend on row order
    keys = [value_codes(frame[args.value])]
    if args.method == "fleiss-cohen-everitt":
        keys.insert(0, value_codes(frame[args.truth]))
    order = np.lexsort((*keys, cluster_codes, group_codes))
    group_codes = group_codes[order]
    cluster_codes = cluster_codes[order]
    # one cell per (group, input); rows of a cell are contiguous
    cell = group_codes * len(cluster_keys) + cluster_codes
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    cell_group = group_codes[starts]
    return _Cells(
        order=order,
        group_codes=group_codes,
        cluster_codes=cluster_codes,
        cluster_keys=cluster_keys,
        groups=groups,
        starts=starts,
        k=np.diff(np.r_[starts, len(cell)]),
        cell_group=cell_group,
        n_inputs=np.bincount(cell_group, minlength=n_groups),
        n_runs=np.bincount(group_codes, minlength=n_groups),
    )


def _cells_iv(c: _Cells, args: _Args) -> None:
    """Refuse k > 1 rows per input for the k=1 methods and < 2 inputs for clt."""
    k, groups = c.k, c.groups
    if args.method not in (*_CLUSTERED_METHODS, "rule-of-three") and (k > 1).any():
        bad = int(np.argmax(k > 1))
        key = c.cluster_keys[c.cluster_codes[c.starts[bad]]]
        alternative = (
            "use the cluster bootstrap with metric=evalci.metrics.kappa(truth=...), "
            "as no FCE standard error is known for k > 1 (seed 000)"
            if args.method == "fleiss-cohen-everitt"
            else "use method='clt' (cluster-robust), method='clustered-wilson' (0/1 "
            "outcomes) or the cluster bootstrap, evalci.cluster_ci(...)"
        )
        raise ValueError(
            f"method={as_written(args.method)} needs one row per input (k=1), but input "
            f"{as_written(key)} (`cluster` {args.cluster or ['row']}){_where(groups, c.cell_group[bad])} "
            f"has {int(k[bad])} rows; for k > 1 runs per input {alternative}."
        )
    if args.method in _CLUSTERED_METHODS and (c.n_inputs < 2).any():
        g = int(np.argmax(c.n_inputs < 2))
        raise ValueError(
            f"method={as_written(args.method)} needs at least 2 inputs for a standard error{_where(groups, g)}; "
            f"found {int(c.n_inputs[g])} (`cluster` {args.cluster or ['row']})."
        )


def _kappa_interval(frame: pd.DataFrame, args: _Args, c: _Cells):
    """Cohen's kappa per group with its Fleiss-Cohen-Everitt normal interval."""
    # 1 == "1" is False: the bootstrap's kappa refuses such a table, so must this
    check_comparable(frame[args.value], frame[args.truth], args.value, args.truth)
    labels, _ = pd.factorize(
        pd.concat([frame[args.truth], frame[args.value]], ignore_index=True)
    )
    n_labels = int(labels.max()) + 1
    t = labels[: len(frame)][c.order]
    p = labels[len(frame) :][c.order]
    tables = np.bincount(
        (c.group_codes * n_labels + t) * n_labels + p,
        minlength=c.n_groups * n_labels**2,
    ).reshape(c.n_groups, n_labels, n_labels)
    estimate, se = _kappa_fce(tables)
    z = _z(args.confidence_level)
    return estimate, se, estimate - z * se, estimate + z * se


def _mean_interval(y, args: _Args, c: _Cells):
    """Estimate, SE, interval, rule-of-three flags, 0/N-N/N flags and
    all-1 flags of a mean score."""
    level, n_groups, n_inputs = args.confidence_level, c.n_groups, c.n_inputs
    rot = np.zeros(n_groups, dtype=bool)
    boundary = np.zeros(n_groups, dtype=bool)
    y = y[c.order]
    gstarts = np.searchsorted(c.group_codes, np.arange(n_groups))
    gmin = np.minimum.reduceat(y, gstarts)
    gmax = np.maximum.reduceat(y, gstarts)
    all0 = (gmin == 0) & (gmax == 0)
    all1 = (gmin == 1) & (gmax == 1)
    if args.method == "rule-of-three":
        estimate, se = np.where(all1, 1.0, 0.0), np.zeros(n_groups)
        low, high = _one_sided_bound(all0, all1, n_inputs, c.groups, level)
        rot[:] = True
        return estimate, se, low, high, rot, boundary, all1
    if args.method in _CLUSTERED_METHODS:
        cell_sum = np.add.reduceat(y, c.starts)
        estimate, se = _clt(cell_sum, c.k, c.cell_group, n_inputs, args.weight)
        if args.method == "clt":
            z = _z(level)
            low, high = estimate - z * se, estimate + z * se
        else:
            low, high, _ = _korn_graubard_wilson(
                estimate, se**2, c.n_runs, n_inputs, level
            )
    else:
        x = np.rint(np.bincount(c.group_codes, weights=y, minlength=n_groups))
        estimate = x / n_inputs
        se = np.sqrt(estimate * (1 - estimate) / n_inputs)
        low, high = _proportion_interval(x, n_inputs, args.method, level)
    if args.method in _COLLAPSING_METHODS:
        boundary = all0 | all1
        low, high = _exact_at_boundary(low, high, all0, all1, n_inputs, level)
    return estimate, se, low, high, rot, boundary, all1


def _one_sided_bound(all0, all1, n_inputs, groups, level):
    """``method="rule-of-three"``: the one-sided bound, or an error if outcomes vary."""
    mixed = ~(all0 | all1)
    if mixed.any():
        g = int(np.argmax(mixed))
        raise ValueError(
            f"method='rule-of-three' is a one-sided bound for a group whose outcomes "
            f"are all 0 (or all 1), but the outcomes vary{_where(groups, g)}; for a "
            "two-sided interval use method='clopper-pearson' (k=1) or method='clt'."
        )
    bound = _rule_of_three(n_inputs, level)
    low = np.where(all1, np.maximum(1.0 - bound, 0.0), 0.0)
    high = np.where(all0, bound, 1.0)
    return low, high


def _exact_at_boundary(low, high, all0, all1, n_inputs, level):
    """Replace a collapsed clt/wald interval by the exact two-sided one at 0/N, N/N.

    Every outcome 0 (or 1): the clt and Wald intervals have zero width. The
    exact two-sided Clopper-Pearson interval for 0 (or N) successes in N
    inputs is returned instead: ``[0, 1 - (alpha/2)^(1/N)]`` or
    ``[(alpha/2)^(1/N), 1]``. With k > 1 runs it stays valid (conservative):
    the first run of each input alone is N independent 0/1 outcomes with the
    same mean, all 0 (or 1).
    """
    hit = all0 | all1
    if not hit.any():
        return low, high
    cp_low, cp_high = _clopper_pearson(np.where(all1, n_inputs, 0), n_inputs, level)
    return np.where(hit, cp_low, low), np.where(hit, cp_high, high)


def _say_boundary(r: _Closed, hit, args: _Args) -> None:
    """The warning of :func:`_exact_at_boundary` for the groups ``hit``."""
    if not hit.any():
        return
    which = np.flatnonzero(hit)
    g, groups, n_inputs = int(which[0]), r.cells.groups, r.cells.n_inputs
    where = (
        ""
        if groups is None
        else f" in {len(which)} group(s), e.g. {as_written(groups[g])}"
    )
    outcome, method, level, low, high = (
        int(r.all1[g]),
        args.method,
        args.confidence_level,
        r.low,
        r.high,
    )
    warn(
        f"every outcome is {outcome}{where}, so the {method} interval would have zero "
        f"width; returning the exact two-sided {level:.0%} Clopper-Pearson interval "
        f"for {outcome * int(n_inputs[g])} of N={int(n_inputs[g])} inputs instead "
        f"([{low[g]:.4g}, {high[g]:.4g}]). For a one-sided bound use "
        "method='rule-of-three'.",
        DegenerateDataWarning,
    )
    return low, high


def _warn_analytic(method, se, estimate, boundary, n_inputs, groups) -> None:
    """Warn about few inputs, NaN results and zero standard errors."""
    few = (n_inputs < FEW_INPUTS) & ~boundary
    if method in _NORMAL_METHODS and few.any():
        g = int(np.argmax(few))
        warn(
            f"only {int(n_inputs[g])} inputs{_where(groups, g)}: the {method} interval "
            f"is a large-sample normal approximation and its coverage is unreliable "
            f"with fewer than {FEW_INPUTS} inputs. Collect more inputs"
            + (
                "."
                if method == "fleiss-cohen-everitt"
                else ", or for 0/1 outcomes with k=1 use method='clopper-pearson' "
                "(exact)."
            ),
            FewClustersWarning,
        )
    undefined = np.isnan(estimate) | np.isnan(se)
    if undefined.any():
        g = int(np.argmax(undefined))
        why = (
            "truth and predictions use a single, identical label, so chance "
            "agreement is 1 and kappa is 0/0"
            if method == "fleiss-cohen-everitt"
            else "the standard error could not be computed"
        )
        what = "Cohen's kappa" if method == "fleiss-cohen-everitt" else "the interval"
        warn(
            f"{what} is undefined{_where(groups, g)}: {why}; the result is NaN.",
            DegenerateDataWarning,
        )
    zero = (se == 0) & ~boundary
    if method in ("clt", "fleiss-cohen-everitt") and zero.any():
        g = int(np.argmax(zero))
        warn(
            f"the standard error is zero{_where(groups, g)} (e.g. every input has the "
            "same mean score, or perfect agreement): the interval has zero width and "
            "says nothing about uncertainty; the cluster bootstrap will not help "
            "either.",
            DegenerateDataWarning,
        )
