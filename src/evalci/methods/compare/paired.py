"""Is the gap real? Paired comparisons of systems on the same inputs.

Every system is computed from the same draws of inputs (one draw unit), so the
replicate gap ``value_b - value_a`` is a paired bootstrap by construction
(seed 000's paired cluster bootstrap of CoT vs Direct Answer; seed 002's
"uncertainty on the differences, not on the two scores separately").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.validate import (
    check_frame,
)
from evalci._base.warnings import DegenerateDataWarning
from evalci._base.warnings import warn as _warn
from evalci.engine import auto as _auto
from evalci.engine import backends
from evalci.engine import intervals as _intervals
from evalci.engine import missing as _missing
from evalci.engine import passes as engine
from evalci.engine import resampling as _rs
from evalci.engine import table as _table
from evalci.engine.keys import keeping_codes
from evalci.engine.table import rows_of
from evalci.methods.compare.decisions import (
    _TOL,
    _degenerate_bound,
    _judge,
    _normal_pvalue,
    _pair_level,
    _pvalues,
    _sign_test,
    check_options,
    fdr_adjusted,
    holm_adjusted,
)
from evalci.methods.compare.missing import (
    bound_pairs,
    bounded_gaps,
    bounded_scores,
    warn_unscored,
)
from evalci.methods.compare.result import ComparisonResult
from evalci.methods.compare.systems import (
    _bounded,
    _input_scores,
    _metric_name,
    _n_inputs,
    _paired_rows,
    _pairs,
    _score_frame,
    _sides,
    _systems,
    _used_systems,
    _win_loss_tie,
)
from evalci.metrics import Metric

__all__ = ["compare"]


def _clt_gaps(cube, weight, pairs, alternative, level):
    """Paired normal-approximation gaps for ratio metrics (mean, accuracy).

    Per-input influence of system g: ``u_i = (num_i - est_g den_i) / mean(den)``
    (with ``weight="input"`` this is the per-input mean minus the estimate;
    the ratio-estimator form for pooled runs, Miller 2024). The gap's SE is
    that of the mean of ``u_b - u_a`` (stratified when strata are given).
    """
    from scipy import stats  # slow to import: only when used

    ((unit, _groups, _clusters),) = cube.units("cluster", weight)
    t = unit.T  # (N, G, 2)
    est = t[..., 0].sum(0) / t[..., 1].sum(0)
    u = (t[..., 0] - est * t[..., 1]) / t[..., 1].mean(axis=0)
    bounds = unit.strata_bounds
    rows = []
    for a, b in pairs:
        d = u[:, b] - u[:, a]
        var = 0.0
        n = len(d)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            part = d[lo:hi]
            if len(part) > 1:
                var += (len(part) / n) ** 2 * part.var(ddof=1) / len(part)
        rows.append((est[b] - est[a], np.sqrt(var)))
    gap, se = (np.array(v) for v in zip(*rows, strict=True))
    alpha = 1 - level
    if alternative == "two-sided":
        z = stats.norm.ppf(1 - alpha / 2)
        low, high = gap - z * se, gap + z * se
    else:
        z = stats.norm.ppf(1 - alpha)
        low = gap - z * se if alternative == "greater" else np.full_like(gap, -np.inf)
        high = gap + z * se if alternative == "less" else np.full_like(gap, np.inf)
    return est, gap, low, high, se, _normal_pvalue(gap, se, alternative)


@dataclass
class _Gaps:
    """The numbers of a comparison, one per pair (``estimate``: one per system).

    Filled by :func:`_clt_step` or :func:`_bootstrap_step`; :func:`_exact_bounds`
    overwrites the entries of degenerate pairs.
    """

    cube: object
    estimate: np.ndarray
    gap: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray
    p: np.ndarray
    at_floor: np.ndarray
    degenerate: np.ndarray
    n_units: np.ndarray
    n_inputs: np.ndarray
    distribution: np.ndarray | None = None


def _clt_step(frame, args, root, pairs, alternative, level) -> _Gaps:
    """The gaps of ``method="clt"``: the paired normal approximation."""
    if not isinstance(args.metric, Metric) or args.metric.name not in (
        "mean",
        "accuracy",
    ):
        raise ValueError(
            "method='clt' covers the mean and accuracy metrics; use a bootstrap "
            "method ('percentile', 'bca') for other metrics."
        )
    if args.strategy != "cluster":
        raise ValueError(
            "method='clt' is the paired cluster-robust normal interval; "
            "use strategy='cluster'."
        )
    cube, _ = _table.prepare(frame, args, root)
    weight = "run" if cube.input_weighted else args.weight
    engine.check_units(cube.units("cluster", weight), cube, args)  # few clusters
    est, gap, low, high, se, p = _clt_gaps(cube, weight, pairs, alternative, level)
    m = len(pairs)
    return _Gaps(
        cube,
        est,
        gap,
        low,
        high,
        se,
        p,
        at_floor=np.zeros(m, bool),
        degenerate=~(se > 0),
        n_units=np.full(m, cube.n_clusters),
        n_inputs=np.full(m, _n_inputs(cube)),
    )


def _bootstrap_step(frame, args, root, pairs, method, alternative, level) -> _Gaps:
    """The gaps of a bootstrap ``method``: every system from the same draws."""
    ia, ib = _sides(pairs)
    rep = backends.replicates(frame, args, root)
    if not rep.paired:  # cannot happen after _paired_frame; never unpair silently
        raise RuntimeError(
            "internal error: the compared systems do not share their inputs."
        )
    est, reps = rep.estimate, rep.reps
    _, jack, bounds = rep.jackknife[0]
    gaps = reps[ib] - reps[ia]
    gap = est[ib] - est[ia]
    accel = np.zeros(len(pairs))
    if rep.fast or method == "bca":
        accel = _intervals.acceleration((jack[:, ib] - jack[:, ia]).T, bounds)
    low, high, z0 = _intervals.interval(
        gaps, gap, method, level, accel=accel, alternative=alternative
    )
    se = gaps.std(axis=1, ddof=1)
    p, at_floor = _pvalues(gaps, gap, method, accel, z0, alternative)
    with np.errstate(invalid="ignore"):
        spread = np.ptp(gaps, axis=1)
    return _Gaps(
        rep.cube,
        est,
        gap,
        low,
        high,
        se,
        p,
        at_floor,
        degenerate=spread <= _TOL * np.maximum(1.0, np.abs(gap)),
        n_units=np.full(len(pairs), rep.n_clusters[0]),
        n_inputs=np.full(len(pairs), rep.n_inputs[0]),
        distribution=gaps,
    )


def _exact_bounds(g: _Gaps, score, frame, args, pairs, names, level, alternative):
    """Degenerate gaps (no spread): an exact bound and the sign test, with a warning.

    Overwrites ``low``, ``high``, ``p`` and ``at_floor`` of those pairs in ``g``
    (NaN where no exact bound exists).
    """
    ia, ib = _sides(pairs)
    bounded = score is not None and _bounded(frame, args)
    for j in np.flatnonzero(g.degenerate):
        d = score[:, ib[j]] - score[:, ia[j]] if bounded else None
        if d is not None and np.ptp(d) <= _TOL:
            c = float(np.round(d[0], 12))
            # independent units: the resampled clusters (inputs unless nested)
            g.low[j], g.high[j], _ = _degenerate_bound(
                c, g.n_units[j], 1 - level, alternative
            )
            g.p[j] = _sign_test(c, int(g.n_units[j]), alternative)
        else:
            g.low[j] = g.high[j] = g.p[j] = np.nan
        g.at_floor[j] = False
    shown = ", ".join(
        f"{names[b]} - {names[a]}" for a, b in np.array(pairs)[g.degenerate][:3]
    )
    _warn(
        f"the bootstrap distribution of the gap {shown} has no spread (every "
        "resample gives the same gap, e.g. both systems score the same on every "
        "input): its interval would have zero width and say nothing about "
        "uncertainty. The decision uses an exact bound instead (see the "
        "`explanation` column).",
        DegenerateDataWarning,
    )


def _adjusted(p, at_floor, adjust):
    """Adjusted p-values (``p`` itself without ``adjust``) and which are bounds."""
    m = len(p)
    if adjust == "bonferroni":
        p_adj = np.minimum(p * m, 1.0)
        return p_adj, at_floor & (p_adj < 1.0)
    if adjust in ("holm", "bh", "by"):
        if adjust == "holm":
            p_adj, adj_floor = holm_adjusted(p, at_floor)
        else:
            p_adj, adj_floor = fdr_adjusted(p, at_floor, dependent=adjust == "by")
        if np.isnan(p).any():
            name = {"holm": "Holm's step-down", "bh": "Benjamini-Hochberg's",
                    "by": "Benjamini-Yekutieli's"}[adjust]
            _warn(
                f"{int(np.isnan(p).sum())} of the {m} pairs have no p-value, so "
                f"{name} adjustment (which ranks all of them) cannot be "
                "computed: every adjusted p-value is NaN. Compare those pairs apart.",
                DegenerateDataWarning,
            )
        return p_adj, adj_floor
    return p, at_floor


def _gap_table(g: _Gaps, names, pairs, adjusted, mme, score) -> pd.DataFrame:
    """The per-pair table of a comparison, without its decisions.

    ``adjusted``: the adjusted p-values and which are bounds (:func:`_adjusted`).
    """
    ia, ib = _sides(pairs)
    p_adj, adj_floor = adjusted
    wins, losses, ties = _win_loss_tie(score, pairs)
    low, high = g.low, g.high
    return pd.DataFrame(
        {
            "a": [names[a] for a, _ in pairs],
            "b": [names[b] for _, b in pairs],
            "estimate_a": g.estimate[ia],
            "estimate_b": g.estimate[ib],
            "gap": g.gap,
            "low": low,
            "high": high,
            "standard_error": g.se,
            "pvalue": g.p,
            "pvalue_adjusted": p_adj,
            "pvalue_at_floor": g.at_floor,
            "pvalue_adjusted_at_floor": adj_floor,
            "excludes_zero": (low > 0) | (high < 0),
            "clears_mme": ((low >= mme - _TOL) | (high <= -mme + _TOL))
            if mme is not None
            else np.nan,
            "degenerate": g.degenerate,
            "wins": wins,
            "losses": losses,
            "ties": ties,
            "n_inputs": g.n_inputs,
            "n_clusters": g.n_units,
        }
    )


def _add_decisions(table, mme, adjust, confidence_level, alternative, metric):
    """Insert ``decision`` and ``explanation`` before ``degenerate`` (in place)."""
    decisions = _judge(table, mme, adjust, confidence_level, alternative, metric)
    where = table.columns.get_loc("degenerate")
    table.insert(where, "decision", [d for d, _ in decisions])
    table.insert(where + 1, "explanation", [e for _, e in decisions])


def _gaps_of(rows, args, root, pairs, method, alternative, level):
    """``(gaps, per-input scores, bounds)`` of the pairs; ``bounds`` (the
    worst-case gaps and shares scored) is None unless ``missing="bounds"``."""
    step = bound_pairs(pairs) if rows.bounds else pairs
    if method == "clt":
        g = _clt_step(rows.frame, args, root, step, alternative, level)
    else:
        g = _bootstrap_step(rows.frame, args, root, step, method, alternative, level)
    score = _input_scores(g.cube, args.weight, args.metric)
    if not rows.bounds:
        return g, score, None
    g, bounds = bounded_gaps(g, len(pairs), alternative)
    ia, ib = _sides(pairs)
    g.gap = g.estimate[ib] - g.estimate[ia]
    return g, bounded_scores(score), bounds


def _add_bounds(table, bounds, pairs) -> None:
    """The columns of ``missing="bounds"`` after ``high`` (in place), and the
    explanation saying the interval is a worst-case one."""
    ia, ib = _sides(pairs)
    where = table.columns.get_loc("high") + 1
    share = bounds["share"]
    for j, (col, val) in enumerate(
        (
            ("gap_bound_low", bounds["gap_bound_low"]),
            ("gap_bound_high", bounds["gap_bound_high"]),
            ("share_scored_a", share[ia]),
            ("share_scored_b", share[ib]),
        )
    ):
        table.insert(where + j, col, val)
    table["explanation"] = (
        "worst-case bounds over the missing samples (missing='bounds'): "
        + table["explanation"]
    )


def compare(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    system: str = "system",
    *,
    baseline=None,
    pairs=None,
    metric="mean",
    strategy: str = "cluster",
    method: str = "percentile",
    mme: float | None = None,
    adjust: str | None = None,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    strata=None,
    weight: str = "input",
    missing: str = "raise",
    dropna: bool = False,
    rng=None,
    successes: str | None = None,
    trials: str | None = None,
    input=None,
    weights: str = "multinomial",
    backend: str | None = None,
    mc_tolerance: float | None = None,
) -> ComparisonResult:
    """Paired gaps between systems evaluated on the same inputs.

    Each row of the result is one pair ``(a, b)`` with the gap ``b - a``, its
    interval, a p-value, the adjusted p-value and a decision in plain words.
    All systems share the same bootstrap draws of inputs, so the interval of
    the gap is a paired interval.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table: one row per (input, run, system); or a counts table with
        ``successes=`` and ``trials=``.
    value, cluster : str
        Outcome column and input column, as in :func:`evalci.bootstrap`.
    system : str
        Column naming the system (model, prompt, version).
    baseline : optional
        Compare every other system against this one (gap = other - baseline).
    pairs : list of (a, b), optional
        The pairs to compare (gap = b - a). Default: all pairs, in sorted order.
    metric, strategy, strata, weight, rng, successes, trials, input, weights
        As in :func:`evalci.bootstrap` (any metric of the core; k=1 or k>1).
        With ``input=`` naming inputs nested in the ``cluster`` (problems in
        repositories), whole clusters are resampled for every system at once,
        inputs count equally, and wins / losses / ties are counted per input.
    method : {'percentile', 'basic', 'bca', 'normal', 'clt'}
        Bootstrap interval of the gap, or ``"clt"``: the paired normal
        approximation (seed 002's formula; mean and accuracy metrics only).
    mme : float, optional
        Minimum meaningful effect, on the metric's scale (0.02 = 2 points): a
        positive finite number.
    adjust : {None, 'bonferroni', 'holm', 'bh', 'by'}
        Multiplicity adjustment for confirmatory work (seeds 000, 004).
        Bonferroni adjusts p-values and widens every interval to a
        simultaneous one (level ``1 - (1 - confidence_level) / n_pairs``);
        Holm adjusts p-values only (it has no matching intervals), and the
        decision then uses the unadjusted interval. ``"bh"``
        (Benjamini-Hochberg) and ``"by"`` (Benjamini-Yekutieli, valid under
        any dependence) control the false discovery rate instead:
        ``pvalue_adjusted`` holds the q-values, and a pair whose interval
        excludes 0 is called only when its q-value is below
        ``1 - confidence_level`` (many comparisons, e.g. lm-eval's tasks).
    alternative : {'two-sided', 'less', 'greater'}
        ``"greater"``: H1 is gap > 0 (interval ``[low, inf)``).
    confidence_level : float
        In (0, 1); default 0.95.
    n_resamples : int or 'auto'
        Bootstrap replicates (default 10,000); ``"auto"`` doubles them until
        every endpoint's Monte-Carlo error is at most ``mc_tolerance``, as in
        :func:`evalci.bootstrap`.
    backend : {'numpy', 'dask'}, optional
        Where the resampling runs, as in :func:`evalci.bootstrap` (``"dask"``
        by default for a Dask DataFrame, whose rows are reduced exactly on the
        workers first).
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing sample (a NaN value) and a missing input (one a
        system has no row of) mean; see the page "When samples are missing".
        ``"raise"`` (default): refuse, with the counts. ``"drop"``: leave the
        missing runs out (a ``MissingDataWarning``: the estimand changes),
        then the inputs some systems lack (a ``MissingInputsWarning``).
        ``"zero"``: every missing run is a failure (value 0); a missing
        input enters with the runs another system has of it, all failures.
        ``"bounds"``: worst-case (Manski) bounds on each gap, for
        ``metric="mean"`` on [0, 1]: ``low`` is the lower end of the gap
        with b's missing runs at 0 and a's at 1, ``high`` the upper end of
        the reverse filling, both from the same paired draws; the decision
        and p-value read that interval, ``estimate_a``/``estimate_b`` and
        ``gap`` are those of the scored parts, and the table gains
        ``gap_bound_low``, ``gap_bound_high``, ``share_scored_a`` and
        ``share_scored_b``. Whenever something is missing, ``result.counts``
        counts it per system (``n_inputs_missing``: the inputs it has no row
        of).
    dropna : bool
        Deprecated: ``dropna=True`` is ``missing="drop"``.
    mc_tolerance : float, optional
        With ``n_resamples="auto"``: the largest Monte-Carlo SE an endpoint
        may keep, on the metric's scale (default 0.001).

    Returns
    -------
    ComparisonResult

    Notes
    -----
    The p-value inverts the interval: it is the smallest ``1 - level`` whose
    interval (same method) excludes 0; see ``evalci.methods.compare.decisions._pvalues``. It
    cannot resolve values below ``1 / n_resamples``: those are reported as
    that bound with ``pvalue_at_floor`` True. Holm's adjustment ranks every
    p-value, so a NaN p-value makes all adjusted ones NaN (with a warning);
    Bonferroni's leaves the others alone. Under Holm, a pair whose interval
    excludes 0 but whose adjusted p-value is not below ``1 -
    confidence_level`` is not called better or worse.

    When every resample gives the same gap (e.g. both systems at 100%), the
    bootstrap interval has zero width and says nothing: a
    :class:`~evalci.DegenerateDataWarning` is raised and, for mean-type
    metrics with per-input scores in [0, 1], the per-input difference is the
    same constant ``c`` on all ``n`` inputs; the share of inputs where it is
    not is at most the exact (Clopper-Pearson) bound ``1 - (alpha/2)^(1/n)``
    (3.689 / n at 95%, the two-sided rule of three), which bounds the gap
    (``|gap| <= bound`` when ``c = 0``). ``low``/``high`` hold that bound, the
    decision is read from it (equivalence only if the bound is below
    ``mme``) and the p-value is the exact sign test's.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> res = evalci.compare(df, "correct", cluster="input_id", system="system",
    ...                      mme=0.02, n_resamples=2000, rng=0)
    >>> round(float(res.table.gap[0]), 3), res.table.decision[0]
    (-0.059, 'worse')
    >>> res.table[["wins", "losses", "ties"]].iloc[0].tolist()
    [46, 62, 90]
    """
    _missing.resolve(missing, dropna)  # the deprecation, once
    return _auto.resolve(
        _compare,
        data=data,
        value=value,
        cluster=cluster,
        system=system,
        baseline=baseline,
        pairs=pairs,
        metric=metric,
        strategy=strategy,
        method=method,
        mme=mme,
        adjust=adjust,
        alternative=alternative,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        strata=strata,
        weight=weight,
        missing=missing,
        dropna=dropna,
        rng=rng,
        successes=successes,
        trials=trials,
        input=input,
        weights=weights,
        backend=backend,
        mc_tolerance=mc_tolerance,
    )


@keeping_codes  # the input and system columns are coded once
def _compare(
    data,
    value,
    cluster,
    system,
    *,
    baseline,
    pairs,
    metric,
    strategy,
    method,
    mme,
    adjust,
    alternative,
    confidence_level,
    n_resamples,
    strata,
    weight,
    missing,
    dropna,
    rng,
    successes,
    trials,
    input,
    weights,
    backend,
) -> ComparisonResult:
    """:func:`compare` with an integer ``n_resamples``."""
    mme = check_options(method, adjust, alternative, missing, mme, strategy)
    data, row_runs = rows_of(data)
    check_frame(data)
    cluster_cols, systems = _systems(data, cluster, system)
    names, pair_pos = _used_systems(systems, _pairs(systems, baseline, pairs))
    args, rows = _paired_rows(
        data,
        value,
        cluster_cols,
        system,
        names,
        strategy=strategy,
        method=method,
        missing=missing,
        dropna=dropna,
        metric=metric,
        strata=strata,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        weight=weight,
        successes=successes,
        trials=trials,
        input=input,
        row_runs=row_runs,
        weights=weights,
        backend=backend,
    )
    level = _pair_level(confidence_level, adjust, len(pair_pos))
    root = _rs.seed_sequence(rng)
    g, score, bounds = _gaps_of(rows, args, root, pair_pos, method, alternative, level)
    if g.degenerate.any():  # no spread: the bootstrap says nothing
        _exact_bounds(g, score, rows.frame, args, pair_pos, names, level, alternative)
    adjusted = _adjusted(g.p, g.at_floor, adjust)
    table = _gap_table(g, names, pair_pos, adjusted, mme, score)
    name = _metric_name(args.metric)
    _add_decisions(table, mme, adjust, confidence_level, alternative, name)
    if bounds is not None:
        _add_bounds(table, bounds, pair_pos)
        warn_unscored(bounds["share"], names)
    return ComparisonResult(
        table=table,
        gap_distribution=None if rows.bounds else g.distribution,
        method=method,
        strategy=strategy,
        confidence_level=confidence_level,
        adjust=adjust,
        alternative=alternative,
        mme=mme,
        n_resamples=None if method == "clt" else args.n_resamples,
        weight=args.weight,
        metric=name,
        missing=_missing.policy(missing, dropna),
        counts=rows.counts,
        bound_distributions=g.distribution if rows.bounds else None,
        input_scores=None if rows.bounds else _score_frame(score, g.cube, names),
    )
