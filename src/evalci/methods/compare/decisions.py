"""Seed 002's decision rule and what it reads: the minimum meaningful effect,
the p-values of the bootstrap gaps (by inverting the interval), Holm's
adjustment with its veto, and the exact bounds used when a gap's bootstrap
distribution has no spread (the share of differing units, the sign test)."""

from __future__ import annotations

import numbers

import numpy as np

from evalci._base.lazy import special
from evalci._base.text import as_written
from evalci._base.validate import (
    check_option,
)
from evalci.engine.missing import CHOICES as MISSING_CHOICES
from evalci.engine.missing import MISSING

__all__ = ["ADJUST", "check_options", "decide", "fdr_adjusted", "holm_adjusted"]

#: ``adjust=`` of a comparison: family-wise (Bonferroni, Holm) or the false
#: discovery rate (Benjamini-Hochberg; Benjamini-Yekutieli under dependence).
ADJUST = (None, "bonferroni", "holm", "bh", "by")
_ADJUST_HELP = (
    "None, 'bonferroni', 'holm' (family-wise error), 'bh' (Benjamini-Hochberg "
    "false discovery rate) or 'by' (Benjamini-Yekutieli, any dependence)"
)

_METHODS = ("percentile", "basic", "bca", "normal", "clt")
_ALTERNATIVES = ("two-sided", "less", "greater")


_TOL = 1e-12  # float noise in an endpoint on a grid (e.g. -0.02 read as -0.0199..)


def _g(x: float) -> str:
    """Default number format of the explanations (the metric's own scale)."""
    return f"{x:.4g}"


def _fmt_p(p: float, at_floor: bool = False) -> str:
    """A p-value as text: ``"< 0.0001"`` when it is only a bound, never "0"."""
    if np.isnan(p):
        return "nan"
    if at_floor:  # round the bound up, never down: "< 0.15" for 1/7, not "< 0.14"
        scale = 10.0 ** (1 - np.floor(np.log10(p)))
        return f"< {np.ceil(p * scale - 1e-9) / scale:.2g}"
    if p < 1e-300:
        return "< 1e-300"
    return f"{p:.3g}"


def _check_mme(mme) -> float | None:
    """``mme`` as a positive finite float (or None), or a ValueError naming it."""
    if mme is None:
        return None
    ok = isinstance(mme, numbers.Real) and not isinstance(mme, (bool, np.bool_))
    if not ok or not (np.isfinite(mme) and mme > 0):
        raise ValueError(
            "`mme` (minimum meaningful effect) must be a positive finite number on the "
            f"metric's scale, e.g. mme=0.02 for 2 points of accuracy; got {as_written(mme)}."
        )
    return float(mme)


def check_options(
    method, adjust, alternative, missing, mme, strategy=None
) -> float | None:
    """The options of :func:`compare` that need no data; ``mme`` normalised.

    One place, so that ``compare``, ``report`` and the lazy paths (Dask
    DataFrames, Dask-backed DataArrays) refuse the same things with the same
    messages before any data is read.
    """
    if strategy == "iid":
        raise ValueError(
            "strategy='iid' resamples rows one by one, so two systems share no "
            "draws and their gap cannot be paired; use strategy='cluster' (the "
            "default: inputs drawn with all their runs, the same draws for every "
            "system), or strategy='hierarchical' or 'single_draw'."
        )
    check_option(method, "method", _METHODS)
    check_option(adjust, "adjust", ADJUST, describe=_ADJUST_HELP)
    check_option(alternative, "alternative", _ALTERNATIVES)
    check_option(missing, "missing", MISSING, describe=f"one of {MISSING_CHOICES}")
    return _check_mme(mme)


def decide(
    low: float, high: float, mme: float | None = None, *, estimate: float | None = None
) -> tuple[str, str]:
    """Seed 002's decision rule: does the gap's interval exclude 0, clear ``mme``?

    Returns ``(decision, explanation)`` where decision is one of
    ``"better"`` (the interval lies above 0 and, with ``mme``, above ``mme``),
    ``"worse"`` (the interval lies below 0 and, with ``mme``, below ``-mme``,
    or its ``estimate`` is a loss of at least ``mme``), ``"equivalent within
    ±mme"`` (the interval lies inside ``(-mme, mme)``), ``"no detectable
    difference"`` (no ``mme`` and the interval contains 0) or
    ``"inconclusive"`` (anything else: the interval is too wide to say).

    The rule is deliberately asymmetric (seed 002: "a missed regression is
    often costlier than a false alarm"): a gain is called "better" only when
    the whole interval clears ``mme``, but a significant loss (interval below
    0) whose ``estimate`` is at least ``mme`` is called "worse", with an
    explanation saying that a smaller loss is not ruled out. Without
    ``estimate`` only the interval is used.

    Parameters
    ----------
    low, high : float
        The gap's interval (``b - a``; ``low`` may be ``-inf`` and ``high``
        ``inf`` for one-sided intervals).
    mme : float, optional
        Minimum meaningful effect, a positive number on the metric's scale
        (0.02 = 2 points of accuracy). Default None: only whether the interval
        excludes 0.
    estimate : float, optional
        The gap's point estimate; with ``mme``, a significant loss of at least
        ``mme`` is "worse" even when the interval reaches above ``-mme``.

    Returns
    -------
    decision, explanation : str
        The verdict and a sentence saying why.

    Examples
    --------
    >>> decide(0.004, 0.146)[0]
    'better'
    >>> decide(0.004, 0.146, mme=0.02)[0]
    'inconclusive'
    >>> decide(-0.01, 0.012, mme=0.02)[0]
    'equivalent within ±mme'
    >>> decide(-0.114, -0.004, mme=0.02, estimate=-0.059)[0]
    'worse'
    """
    return _decide(low, high, _check_mme(mme), estimate, _g)


_NOISE = (
    "the gap is not distinguishable from noise (which is not evidence that there "
    "is no gap)."
)


def _equivalent(low, high, mme, fmt):
    """The equivalence verdict if the interval lies inside ``(-mme, mme)``, else None."""
    if mme is None or not (-mme + _TOL < low and high < mme - _TOL):
        return None
    return (
        "equivalent within ±mme",
        f"the whole interval lies within ±{fmt(mme)}: any gap is smaller than "
        "the minimum meaningful effect.",
    )


def _decide_vetoed(low, high, mme, fmt, not_significant):
    """:func:`_decide` for an interval that excludes 0 but is not significant."""
    equivalent = _equivalent(low, high, mme, fmt)
    if equivalent is not None:
        return equivalent
    if mme is None:
        return "no detectable difference", f"{not_significant}: {_NOISE}"
    return (
        "inconclusive",
        f"{not_significant}: more inputs or runs are needed to decide.",
    )


def _decide(low, high, mme, estimate=None, fmt=_g, not_significant=None):
    """:func:`decide` with a number format and an optional multiplicity veto.

    ``not_significant``: text saying why an interval that excludes 0 does not
    count as significant (e.g. Holm's adjusted p-value); then only
    equivalence or "no detectable difference"/"inconclusive" can come out.
    """
    if np.isnan(low) or np.isnan(high):
        return "inconclusive", "the interval could not be computed."
    above, below = low > 0, high < 0
    if not_significant is not None and (above or below):
        return _decide_vetoed(low, high, mme, fmt, not_significant)
    if mme is None:
        if above:
            return "better", "b is better than a: the interval excludes 0."
        if below:
            return "worse", "b is worse than a: the interval excludes 0."
        return "no detectable difference", f"the interval includes 0: {_NOISE}"
    if above and low >= mme - _TOL:
        return (
            "better",
            f"b is better than a by at least the minimum meaningful effect {fmt(mme)}.",
        )
    if below and high <= -mme + _TOL:
        return (
            "worse",
            f"b is worse than a by at least the minimum meaningful effect {fmt(mme)}.",
        )
    equivalent = _equivalent(low, high, mme, fmt)
    if equivalent is not None:
        return equivalent
    if below and estimate is not None and estimate <= -mme + _TOL:
        return (
            "worse",
            f"b is worse than a: the interval excludes 0 and the estimated loss, "
            f"{fmt(-estimate)}, is at least the minimum meaningful effect "
            f"{fmt(mme)}; the interval does not rule out a smaller loss (a "
            "significant regression is reported, not waved through).",
        )
    if above:
        return (
            "inconclusive",
            "b is better than a (the interval excludes 0), but the gain may be "
            f"smaller than the minimum meaningful effect {fmt(mme)}.",
        )
    if below:
        return (
            "inconclusive",
            "b is worse than a (the interval excludes 0), but the loss may be "
            f"smaller than the minimum meaningful effect {fmt(mme)}.",
        )
    return (
        "inconclusive",
        f"the interval includes 0 and reaches beyond ±{fmt(mme)}: more inputs or "
        "runs are needed to decide.",
    )


def _share_bound(n, alpha, two_sided=True):
    """Exact (Clopper-Pearson) upper bound on a share with 0 events in ``n``.

    ``1 - (alpha / 2) ** (1 / n)`` two-sided (Clopper & Pearson 1934; about
    3.689 / n at 95%, the two-sided rule of three, -ln(0.025) = 3.689),
    ``1 - alpha ** (1 / n)`` one-sided (the rule of three, 3 / n;
    Hanley & Lippman-Hand 1983).
    """
    return 1.0 - (alpha / 2 if two_sided else alpha) ** (1.0 / np.asarray(n))


def _degenerate_bound(c, n, alpha, alternative):
    """Exact interval of a gap whose per-input difference is ``c`` on all n inputs.

    Per-input scores lie in [0, 1], so a difference lies in [-1, 1]. The share
    of (population) inputs whose difference is not ``c`` is at most
    ``U = _share_bound(n)``; they can move the gap by at most ``(1 + c) U``
    down and ``(1 - c) U`` up. For ``c = 0``: ``|gap| <= U``, the share of
    inputs on which the systems differ.
    """
    u = _share_bound(n, alpha, alternative == "two-sided")
    low = max(c - (1 + c) * u, -1.0) if alternative != "less" else -np.inf
    high = min(c + (1 - c) * u, 1.0) if alternative != "greater" else np.inf
    return low, high, u


def _sign_test(c, n, alternative):
    """Exact sign-test p-value when all n per-input differences equal ``c``."""
    if c == 0:
        return 1.0
    one = 0.5**n
    if alternative == "two-sided":
        return min(1.0, 2 * one)
    return one if (c > 0) == (alternative == "greater") else 1.0


def _pair_level(confidence_level, adjust, m):
    """The level of each pair's interval: simultaneous under Bonferroni."""
    if adjust == "bonferroni":
        return 1 - (1 - confidence_level) / m
    return confidence_level


def _no_exact_bound(metric) -> str:
    """Explanation of a degenerate gap with no exact bound."""
    return (
        "every bootstrap resample gives the same gap, so the "
        "bootstrap interval has zero width and says nothing about "
        f"uncertainty; no exact bound is available for metric "
        f"{as_written(metric)} (it needs per-input scores in [0, 1]), so "
        "nothing can be decided from these data."
    )


def _exact_bound_text(row, mme, level, alternative, fmt) -> str:
    """What a degenerate pair's exact bound says (the start of its explanation)."""
    # the bound counts independent units: the resampled clusters
    n = int(row.n_clusters)
    unit = "inputs" if n == int(row.n_inputs) else "clusters"
    side = "two-sided" if alternative == "two-sided" else "one-sided"
    u = float(_share_bound(n, 1 - level, alternative == "two-sided"))
    if abs(row.gap) <= _TOL:
        what = f"the two systems score the same on all {n} {unit}"
        share = f"the share of {unit} on which they differ"
    else:
        what = (
            f"b - a is {fmt(row.gap)} on every one of the {n} {unit} (p: "
            "exact sign test)"
        )
        share = f"the share of {unit} where the difference is not that"
    text = (
        f"{what}, so every bootstrap resample gives the same gap and the "
        "bootstrap interval has zero width, which says nothing about "
        f"uncertainty; instead, {share} is at most {fmt(u)} (exact "
        f"Clopper-Pearson {side} {level:.4g} bound with 0 of {n}), which "
        f"puts the gap in [{fmt(row.low)}, {fmt(row.high)}]"
    )
    if mme is not None and abs(row.gap) <= _TOL and u >= mme:
        tail = 1 - level if side == "one-sided" else (1 - level) / 2
        need = int(np.floor(np.log(tail) / np.log1p(-mme))) + 1
        text += (
            f" (equivalence within ±{fmt(mme)} needs at least {need} {unit} "
            "with no difference)"
        )
    return text + ": "


_NAMES = {"holm": ("Holm", "adjusted p"), "bh": ("Benjamini-Hochberg", "q"),
          "by": ("Benjamini-Yekutieli", "q")}


def _holm_veto(row, alpha, m, adjust="holm"):
    """Why an interval that excludes 0 is not significant after a step-wise
    adjustment (Holm, BH, BY), or None."""
    if not (row.low > 0 or row.high < 0):
        return None
    name, what = _NAMES[adjust]
    p = row.pvalue_adjusted
    if np.isnan(p):
        return (
            f"the interval excludes 0, but the {name} {what}-value could "
            "not be computed (some pair has no p-value)"
        )
    if p >= alpha:
        return (
            f"the interval excludes 0, but not after {name}'s adjustment for "
            f"{m} comparisons ({what} = "
            f"{_fmt_p(p, row.pvalue_adjusted_at_floor)}, not below {alpha:g})"
        )
    return None


def _judge(t, mme, adjust, confidence_level, alternative, metric, fmt=_g):
    """Decision and explanation of every pair (rows of a comparison table).

    Degenerate pairs (no spread in the bootstrap) are judged on the exact
    bound in ``low``/``high``; under Holm, a pair whose interval excludes 0
    but whose adjusted p-value is not below ``1 - confidence_level`` is not
    called better or worse.
    """
    m = len(t)
    alpha = 1 - confidence_level
    level = _pair_level(confidence_level, adjust, m)
    out = []
    for row in t.itertuples(index=False):
        prefix = ""
        if row.degenerate:
            if np.isnan(row.low) and np.isnan(row.high):
                out.append(("inconclusive", _no_exact_bound(metric)))
                continue
            prefix = _exact_bound_text(row, mme, level, alternative, fmt)
        veto = _holm_veto(row, alpha, m, adjust) if adjust in _NAMES else None
        d, e = _decide(row.low, row.high, mme, row.gap, fmt, veto)
        out.append((d, prefix + e))
    return out


def _pvalues(gaps, estimate, method, accel, z0, alternative):
    """Bootstrap p-values by inverting the interval, and where they are a bound.

    The p-value is the smallest ``1 - confidence_level`` whose interval
    excludes 0. Percentile: with ``s`` the share of replicates below 0 (ties
    count one half), the ``1 - alpha`` interval excludes 0 once
    ``alpha / 2 < min(s, 1 - s)``, so ``p = 2 min(s, 1 - s)``; one-sided
    ``p = s`` (``"greater"``) or ``1 - s`` (``"less"``). Basic: the interval
    is the percentile interval reflected about the estimate, so ``s`` is the
    share below ``2 * estimate``. BCa: ``s`` is mapped back through BCa's
    level adjustment (Efron 1987, eq. 2.3 solved for the nominal level):
    ``z = v / (1 + a v) - z0`` with ``v = Phi^-1(s) - z0``; when no replicate
    lies on one side of 0 (``v = -inf`` or ``inf``), ``v / (1 + a v)`` tends
    to ``1 / a``, which is its value there (the formula alone gives
    ``inf / inf = NaN``).

    P-values under ``1 / n_resamples``, the resolution of the bootstrap, are
    returned as ``1 / n_resamples`` with ``at_floor`` True: the true p-value
    is smaller than that, not equal to it. NaN only where BCa's bias
    correction is infinite (every replicate on one side of the estimate).
    """
    b = gaps.shape[-1]
    if method == "normal":
        # the normal interval excludes 0 once |gap| > z * SE
        with np.errstate(divide="ignore", invalid="ignore"):
            se = gaps.std(axis=-1, ddof=1)
        p = _normal_pvalue(estimate, se, alternative)
    else:
        point = 2 * estimate if method == "basic" else np.zeros_like(estimate)
        below = (gaps < point[:, None]).sum(axis=1)
        ties = (gaps == point[:, None]).sum(axis=1)
        s = (below + 0.5 * ties) / b
        if method == "bca":
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                v = special.ndtri(s) - z0
                denom = 1 + accel * v
                ratio = np.where(np.isinf(v) & (accel != 0), 1 / accel, v / denom)
                zeta = np.where(denom > 0, ratio - z0, np.sign(v) * np.inf)
            s = np.where(np.isfinite(z0), special.ndtr(zeta), np.nan)
        if alternative == "two-sided":
            p = 2 * np.minimum(s, 1 - s)
        elif alternative == "greater":
            p = s
        else:
            p = 1 - s
    at_floor = p < 1.0 / b  # NaN compares False
    return np.clip(p, 1.0 / b, 1.0), at_floor


def _normal_pvalue(estimate, se, alternative):
    """Normal-approximation p-value of ``estimate / se``.

    0 / 0 (no spread and no gap: degenerate) gives 1, not NaN.
    """
    from scipy import stats  # slow to import: only when used

    with np.errstate(divide="ignore", invalid="ignore"):
        zstat = estimate / se
    if alternative == "two-sided":
        p = 2 * stats.norm.sf(np.abs(zstat))
    elif alternative == "greater":
        p = stats.norm.sf(zstat)
    else:
        p = stats.norm.cdf(zstat)
    return np.nan_to_num(p, nan=1.0)


def holm_adjusted(p: np.ndarray, at_floor: np.ndarray | None = None):
    """Holm (1979) step-down adjusted p-values, and which are only bounds.

    ``p_(i)`` adjusted is ``max_{j <= i} min(1, (m - j + 1) p_(j))``. A NaN
    p-value has no rank, so no adjusted p-value can be computed: all are NaN
    (never re-ranked around it). An adjusted p-value is a bound (``< x``)
    when its maximum comes only from p-values at the bootstrap floor.
    """
    m = len(p)
    at_floor = np.zeros(m, bool) if at_floor is None else np.asarray(at_floor)
    if np.isnan(p).any():
        return np.full(m, np.nan), np.zeros(m, bool)
    order = np.argsort(p, kind="stable")
    terms = (m - np.arange(m)) * p[order]
    run = np.maximum.accumulate(terms)
    exact = np.maximum.accumulate(np.where(at_floor[order], -np.inf, terms))
    adj, bound = np.empty(m), np.empty(m, bool)
    adj[order] = np.minimum(run, 1.0)
    bound[order] = (exact < run) & (run < 1.0)
    return adj, bound


def fdr_adjusted(p: np.ndarray, at_floor: np.ndarray | None = None, *,
                 dependent: bool = False):
    """Benjamini-Hochberg (1995) q-values, or Benjamini-Yekutieli (2001)
    with ``dependent=True``, and which are only bounds.

    ``q_(i) = min_{j >= i} min(1, c m p_(j) / j)`` for the sorted p-values,
    ``c = 1`` (BH: independent or positively dependent tests) or ``c = sum_{k
    <= m} 1 / k`` (BY: any dependence). Rejecting where ``q < alpha`` keeps
    the expected share of false discoveries at most ``alpha``. A NaN p-value
    has no rank: all are NaN. A q-value is a bound (``< x``) when its
    minimum comes only from p-values at the bootstrap floor.

    Examples
    --------
    >>> import numpy as np
    >>> fdr_adjusted(np.array([0.01, 0.04, 0.03, 0.5]))[0].round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.5]
    """
    p = np.asarray(p, dtype=float)
    m = len(p)
    at_floor = np.zeros(m, bool) if at_floor is None else np.asarray(at_floor)
    if np.isnan(p).any():
        return np.full(m, np.nan), np.zeros(m, bool)
    c = float(np.sum(1.0 / np.arange(1, m + 1))) if dependent else 1.0
    order = np.argsort(p, kind="stable")[::-1]  # largest first
    terms = c * m * p[order] / np.arange(m, 0, -1)
    run = np.minimum.accumulate(terms)
    exact = np.minimum.accumulate(np.where(at_floor[order], np.inf, terms))
    adj, bound = np.empty(m), np.empty(m, bool)
    adj[order] = np.minimum(run, 1.0)
    bound[order] = (exact > run) & (run < 1.0)
    return adj, bound
