"""Is the gap real? Paired comparisons of systems on the same inputs.

Every system is computed from the same draws of inputs (one draw unit), so the
replicate gap ``value_b - value_a`` is a paired bootstrap by construction
(seed 000's paired cluster bootstrap of CoT vs Direct Answer; seed 002's
"uncertainty on the differences, not on the two scores separately").
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import special, stats

from . import _dask, core
from . import intervals as _intervals
from . import resampling as _rs
from ._data import as_columns, check_columns, factorize
from ._warnings import EvalciWarning
from .metrics import Metric

__all__ = ["compare", "ComparisonResult", "decide", "MissingInputsWarning"]

_METHODS = ("percentile", "basic", "bca", "normal", "clt")
_ALTERNATIVES = ("two-sided", "less", "greater")


class MissingInputsWarning(EvalciWarning):
    """Inputs present for some systems only were dropped from a paired comparison."""


@dataclass(frozen=True)
class ComparisonResult:
    """Paired gaps ``b - a``, one row per pair.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per pair: ``a, b, estimate_a, estimate_b, gap, low, high,
        standard_error, pvalue, pvalue_adjusted, excludes_zero, clears_mme,
        decision, wins, losses, ties, n_inputs``.
    gap_distribution : ndarray or None
        Bootstrap replicates of each gap, ``(n_pairs, n_resamples)`` (None for
        ``method="clt"``).
    method, strategy, adjust, alternative, weight, metric : str
    confidence_level : float
        The level asked for; with ``adjust="bonferroni"`` each interval is
        made at ``1 - (1 - confidence_level) / n_pairs`` (simultaneous).
    mme : float or None
        Minimum meaningful effect.
    """

    table: pd.DataFrame = field(repr=False)
    gap_distribution: np.ndarray | None = field(repr=False)
    method: str
    strategy: str
    confidence_level: float
    adjust: str | None
    alternative: str
    mme: float | None
    n_resamples: int | None
    weight: str
    metric: str

    def to_frame(self) -> pd.DataFrame:
        """The per-pair table (a copy)."""
        return self.table.copy()

    def _shown(self) -> pd.DataFrame:
        cols = [
            "a",
            "b",
            "estimate_a",
            "estimate_b",
            "gap",
            "low",
            "high",
            "pvalue",
            "pvalue_adjusted",
            "decision",
        ]
        if self.adjust is None:
            cols.remove("pvalue_adjusted")
        if self.table["wins"].notna().any():
            cols += ["wins", "losses", "ties"]
        return self.table[cols]

    def _header(self) -> str:
        adj = f", {self.adjust}-adjusted" if self.adjust else ""
        mme = "" if self.mme is None else f", minimum meaningful effect {self.mme:g}"
        how = (
            "normal (CLT)"
            if self.method == "clt"
            else f"{self.method} {self.strategy} bootstrap ({self.n_resamples} resamples)"
        )
        return (
            f"paired gaps b - a, {self.confidence_level:.0%} {how}{adj}{mme}, "
            f"metric={self.metric}"
        )

    def __repr__(self) -> str:
        body = self._shown().to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return f"ComparisonResult: {self._header()}\n{body}"

    def plot(self, ax=None):
        """Forest plot of the gaps b - a with 0 and the ±mme band (needs matplotlib).

        Returns the matplotlib Axes.
        """
        from .plotting import forest

        t = self.table
        return forest(
            [f"{b} - {a}" for a, b in zip(t.a, t.b, strict=True)],
            t.gap,
            t.low,
            t.high,
            ax=ax,
            xlabel=f"gap ({self.metric})",
            title=self._header().split(",")[0],
            zero=0.0,
            band=self.mme,
        )

    def _repr_html_(self) -> str:
        table = self._shown().to_html(index=False, float_format=lambda v: f"{v:.4g}")
        return f"<p><b>ComparisonResult</b>: {self._header()}</p>{table}"


def decide(low: float, high: float, mme: float | None = None) -> tuple[str, str]:
    """Seed 002's decision rule: does the gap's interval exclude 0, clear ``mme``?

    Returns ``(decision, explanation)`` where decision is one of
    ``"better"`` (the interval lies above 0 and, with ``mme``, above ``mme``),
    ``"worse"`` (mirror image), ``"equivalent within ±mme"`` (the interval lies
    inside ``(-mme, mme)``), ``"no detectable difference"`` (no ``mme`` and the
    interval contains 0) or ``"inconclusive"`` (anything else: the interval is
    too wide to say). Never claims more than the interval supports.

    Examples
    --------
    >>> decide(0.004, 0.146)[0]
    'better'
    >>> decide(0.004, 0.146, mme=0.02)[0]
    'inconclusive'
    >>> decide(-0.01, 0.012, mme=0.02)[0]
    'equivalent within ±mme'
    """
    if np.isnan(low) or np.isnan(high):
        return "inconclusive", "the interval could not be computed."
    above, below = low > 0, high < 0
    if mme is None:
        if above:
            return "better", "b is better than a: the interval excludes 0."
        if below:
            return "worse", "b is worse than a: the interval excludes 0."
        return (
            "no detectable difference",
            "the interval includes 0: the gap is not distinguishable from noise "
            "(which is not evidence that there is no gap).",
        )
    if above and low >= mme:
        return (
            "better",
            f"b is better than a by at least the minimum meaningful effect {mme:g}.",
        )
    if below and high <= -mme:
        return (
            "worse",
            f"b is worse than a by at least the minimum meaningful effect {mme:g}.",
        )
    if -mme < low and high < mme:
        return (
            "equivalent within ±mme",
            f"the whole interval lies within ±{mme:g}: any gap is smaller than "
            "the minimum meaningful effect.",
        )
    if above:
        return (
            "inconclusive",
            f"b is better than a (the interval excludes 0), but the gain may be "
            f"smaller than the minimum meaningful effect {mme:g}.",
        )
    if below:
        return (
            "inconclusive",
            f"b is worse than a (the interval excludes 0), but the loss may be "
            f"smaller than the minimum meaningful effect {mme:g}.",
        )
    return (
        "inconclusive",
        f"the interval includes 0 and reaches beyond ±{mme:g}: more inputs or runs "
        "are needed to decide.",
    )


def _pvalues(gaps, estimate, method, accel, z0, alternative) -> np.ndarray:
    """Bootstrap p-values by inverting the interval.

    The p-value is the smallest ``1 - confidence_level`` whose interval
    excludes 0. Percentile: with ``s`` the share of replicates below 0 (ties
    count one half), the ``1 - alpha`` interval excludes 0 once
    ``alpha / 2 < min(s, 1 - s)``, so ``p = 2 min(s, 1 - s)``; one-sided
    ``p = s`` (``"greater"``) or ``1 - s`` (``"less"``). Basic: the interval
    is the percentile interval reflected about the estimate, so ``s`` is the
    share below ``2 * estimate``. BCa: ``s`` is mapped back through BCa's
    level adjustment (Efron 1987, eq. 2.3 solved for the nominal level).
    P-values under ``1 / n_resamples`` are reported as ``1 / n_resamples``,
    the resolution of the bootstrap.
    """
    b = gaps.shape[-1]
    if method == "normal":
        # the normal interval excludes 0 once |gap| > z * SE
        with np.errstate(divide="ignore", invalid="ignore"):
            zstat = estimate / gaps.std(axis=-1, ddof=1)
        if alternative == "two-sided":
            p = 2 * stats.norm.sf(np.abs(zstat))
        elif alternative == "greater":
            p = stats.norm.sf(zstat)
        else:
            p = stats.norm.cdf(zstat)
        return np.clip(np.nan_to_num(p, nan=1.0), 1.0 / b, 1.0)
    point = 2 * estimate if method == "basic" else np.zeros_like(estimate)
    below = (gaps < point[:, None]).sum(axis=1) + 0.5 * (gaps == point[:, None]).sum(
        axis=1
    )
    s = below / b
    if method == "bca":
        with np.errstate(divide="ignore", invalid="ignore"):
            v = special.ndtri(s) - z0
            denom = 1 + accel * v
            zeta = np.where(denom > 0, v / denom - z0, np.sign(v) * np.inf)
        s = special.ndtr(zeta)
    if alternative == "two-sided":
        p = 2 * np.minimum(s, 1 - s)
    elif alternative == "greater":
        p = s
    else:
        p = 1 - s
    return np.clip(p, 1.0 / b, 1.0)


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def _pairs(systems: pd.Index, baseline, pairs) -> list[tuple[int, int]]:
    known = {s: i for i, s in enumerate(systems)}

    def pos(name, arg):
        if name not in known:
            raise ValueError(
                f"`{arg}`: {name!r} is not a system; systems are {list(systems)[:10]}."
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
            if len(pair) != 2:
                raise ValueError("`pairs` must be a list of (a, b) system pairs.")
            out.append((pos(pair[0], "pairs"), pos(pair[1], "pairs")))
        if not out:
            raise ValueError("`pairs` is empty.")
        return out
    return list(combinations(range(len(systems)), 2))


def _align_inputs(data, cluster, system, systems_used, missing):
    """Keep the systems compared; check (or drop) inputs that some systems lack."""
    frame = data[data[system].isin(systems_used)]
    codes, keys = factorize(frame, cluster, "cluster")
    sys_codes, sys_keys = factorize(frame, [system], "system")
    present = np.zeros((len(keys), len(sys_keys)), dtype=bool)
    present[codes, sys_codes] = True
    partial = ~present.all(axis=1)
    if not partial.any():
        return frame
    if missing == "raise":
        bad = np.flatnonzero(partial)[:5]
        lacking = [
            f"{keys[i]!r} (missing for {[sys_keys[j] for j in np.flatnonzero(~present[i])][:3]})"
            for i in bad
        ]
        raise ValueError(
            f"{int(partial.sum())} inputs are present for some systems but not others, "
            f"so the comparison cannot be paired: {', '.join(lacking)}. Pass "
            "missing='drop' to compare on the inputs all systems share."
        )
    warnings.warn(
        f"dropped {int(partial.sum())} of {len(keys)} inputs that are missing for at "
        f"least one compared system; the comparison uses the {int((~partial).sum())} "
        "inputs all of them share.",
        MissingInputsWarning,
        stacklevel=3,
    )
    return frame[~partial[codes]]


def _clt_gaps(cube, weight, pairs, alternative, level):
    """Paired normal-approximation gaps for ratio metrics (mean, accuracy).

    Per-input influence of system g: ``u_i = (num_i - est_g den_i) / mean(den)``
    (with ``weight="input"`` this is the per-input mean minus the estimate;
    the ratio-estimator form for pooled runs, Miller 2024). The gap's SE is
    that of the mean of ``u_b - u_a`` (stratified when strata are given).
    """
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
    with np.errstate(divide="ignore", invalid="ignore"):
        zstat = gap / se
    if alternative == "two-sided":
        p = 2 * stats.norm.sf(np.abs(zstat))
    elif alternative == "greater":
        p = stats.norm.sf(zstat)
    else:
        p = stats.norm.cdf(zstat)
    return est, gap, low, high, se, np.nan_to_num(p, nan=1.0)


def _win_loss_tie(cube, weight, pairs, metric):
    """Per-input wins, losses and ties of b against a (seed 002's 12-9-19 split)."""
    n = len(pairs)
    if not isinstance(metric, Metric) or metric.name not in ("mean", "accuracy"):
        return [np.full(n, np.nan)] * 3
    ((unit, _, _),) = cube.units("cluster", weight)
    score = unit.T[..., 0] / unit.T[..., 1]  # per-input score (N, G)
    wins = np.array([(score[:, b] > score[:, a]).sum() for a, b in pairs])
    losses = np.array([(score[:, b] < score[:, a]).sum() for a, b in pairs])
    ties = unit.n_clusters - wins - losses
    return wins, losses, ties


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
    metric, strategy, strata, weight, dropna, rng, successes, trials
        As in :func:`evalci.bootstrap` (any metric of the core; k=1 or k>1).
    method : {'percentile', 'basic', 'bca', 'normal', 'clt'}
        Bootstrap interval of the gap, or ``"clt"``: the paired normal
        approximation (seed 002's formula; mean and accuracy metrics only).
    mme : float, optional
        Minimum meaningful effect, on the metric's scale (0.02 = 2 points).
    adjust : {None, 'bonferroni', 'holm'}
        Multiplicity adjustment for confirmatory work (seeds 000, 004).
        Bonferroni adjusts p-values and widens every interval to a
        simultaneous one (level ``1 - (1 - confidence_level) / n_pairs``);
        Holm adjusts p-values only (it has no matching intervals), and the
        decision then uses the unadjusted interval.
    alternative : {'two-sided', 'less', 'greater'}
        ``"greater"``: H1 is gap > 0 (interval ``[low, inf)``).
    confidence_level : float
    n_resamples : int
    missing : {'raise', 'drop'}
        Inputs present for one system but not another: raise an error listing
        some of them, or drop them with a warning saying how many.

    Returns
    -------
    ComparisonResult

    Notes
    -----
    The p-value inverts the interval: it is the smallest ``1 - level`` whose
    interval (same method) excludes 0; see ``evalci.compare._pvalues``.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> res = evalci.compare(df, "correct", cluster="input_id", system="system",
    ...                      mme=0.02, n_resamples=2000, rng=0)
    >>> round(float(res.table.gap[0]), 3), res.table.decision[0]
    (-0.059, 'inconclusive')
    >>> res.table[["wins", "losses", "ties"]].iloc[0].tolist()
    [46, 62, 90]
    """
    if method not in _METHODS:
        raise ValueError(f"`method` must be one of {_METHODS}, not {method!r}.")
    if adjust not in (None, "bonferroni", "holm"):
        raise ValueError(
            f"`adjust` must be None, 'bonferroni' or 'holm', not {adjust!r}."
        )
    if alternative not in _ALTERNATIVES:
        raise ValueError(
            f"`alternative` must be one of {_ALTERNATIVES}, not {alternative!r}."
        )
    if missing not in ("raise", "drop"):
        raise ValueError(f"`missing` must be 'raise' or 'drop', not {missing!r}.")
    if mme is not None and not (np.isfinite(mme) and mme > 0):
        raise ValueError(f"`mme` must be a positive number (e.g. 0.02), not {mme!r}.")
    row_runs = None
    if _dask.is_dask_frame(data):
        data, row_runs = core._from_dask(
            data,
            value,
            [*as_columns(cluster, "cluster"), system],
            strategy,
            metric,
            None,
            strata,
            successes,
            trials,
        )
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"`data` must be a pandas DataFrame, not {type(data).__name__}."
        )
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
            f"`system` column {system!r} has {len(systems)} system(s); a comparison "
            "needs at least 2."
        )
    pair_pos = _pairs(systems, baseline, pairs)
    used = sorted({i for p in pair_pos for i in p})
    frame = _align_inputs(data, cluster_cols, system, systems[used], missing)
    # positions within the systems actually used (sorted, as the engine sorts)
    remap = {old: new for new, old in enumerate(used)}
    pair_pos = [(remap[a], remap[b]) for a, b in pair_pos]
    names = systems[used]
    m = len(pair_pos)
    level = (
        1 - (1 - confidence_level) / m if adjust == "bonferroni" else confidence_level
    )

    args = core._bootstrap_iv(
        frame,
        value,
        cluster_cols,
        strategy,
        metric,
        [system],
        strata,
        "percentile" if method == "clt" else method,
        confidence_level,
        n_resamples,
        weight,
        dropna,
        successes,
        trials,
        row_runs,
    )
    root = _rs.seed_sequence(rng)
    if method == "clt":
        if not isinstance(args.metric, Metric) or args.metric.name not in (
            "mean",
            "accuracy",
        ):
            raise ValueError(
                "method='clt' covers the mean and accuracy metrics; use a bootstrap "
                "method ('percentile', 'bca') for other metrics."
            )
        if strategy != "cluster":
            raise ValueError(
                "method='clt' is the paired cluster-robust normal interval; "
                "use strategy='cluster'."
            )
        cube, _ = core._prepare(frame, args, root)
        est, gap, low, high, se, p = _clt_gaps(
            cube, args.weight, pair_pos, alternative, level
        )
        gaps = None
        n_inputs = np.full(m, cube.n_clusters)
        metric_obj = args.metric
    else:
        rep = core._replicates(frame, args, root)
        cube, est, reps = rep.cube, rep.estimate, rep.reps
        groups_u, jack, bounds = rep.jackknife[0]
        ia = np.array([a for a, _ in pair_pos])
        ib = np.array([b for _, b in pair_pos])
        gaps = reps[ib] - reps[ia]
        gap = est[ib] - est[ia]
        accel = np.zeros(m)
        if rep.fast or method == "bca":
            accel = _intervals.acceleration((jack[:, ib] - jack[:, ia]).T, bounds)
        low, high, z0 = _intervals.interval(
            gaps, gap, method, level, accel=accel, alternative=alternative
        )
        se = gaps.std(axis=1, ddof=1)
        p = _pvalues(gaps, gap, method, accel, np.nan_to_num(z0), alternative)
        n_inputs = np.full(m, rep.n_inputs[0])
        metric_obj = args.metric
    if adjust == "bonferroni":
        p_adj = np.minimum(p * m, 1.0)
    elif adjust == "holm":
        p_adj = _holm(p)
    else:
        p_adj = p
    wins, losses, ties = _win_loss_tie(cube, args.weight, pair_pos, metric_obj)
    decisions = [decide(lo, hi, mme) for lo, hi in zip(low, high, strict=True)]
    table = pd.DataFrame(
        {
            "a": [names[a] for a, _ in pair_pos],
            "b": [names[b] for _, b in pair_pos],
            "estimate_a": [est[a] for a, _ in pair_pos],
            "estimate_b": [est[b] for _, b in pair_pos],
            "gap": gap,
            "low": low,
            "high": high,
            "standard_error": se,
            "pvalue": p,
            "pvalue_adjusted": p_adj,
            "excludes_zero": (low > 0) | (high < 0),
            "clears_mme": ((low >= mme) | (high <= -mme))
            if mme is not None
            else np.nan,
            "decision": [d for d, _ in decisions],
            "explanation": [e for _, e in decisions],
            "wins": wins,
            "losses": losses,
            "ties": ties,
            "n_inputs": n_inputs,
        }
    )
    name = (
        args.metric.name
        if isinstance(args.metric, Metric)
        else getattr(args.metric, "__name__", "callable")
    )
    return ComparisonResult(
        table=table,
        gap_distribution=gaps,
        method=method,
        strategy=strategy,
        confidence_level=confidence_level,
        adjust=adjust,
        alternative=alternative,
        mme=mme,
        n_resamples=None if method == "clt" else args.n_resamples,
        weight=args.weight,
        metric=name,
    )
