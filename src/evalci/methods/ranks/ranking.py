"""Leaderboards: rank intervals and tie groups from shared bootstrap draws.

Every system is scored on the same resamples of inputs (one draw unit, as in
:func:`evalci.compare`), so the bootstrap distribution of every pairwise gap
is paired. From those ``(G, B)`` replicates this module reads:

* each system's rank distribution and its *marginal* percentile rank
  interval (Hall & Miller 2009) -- one system at a time, not simultaneous;
* *simultaneous* rank intervals (Mogstad, Romano, Shaikh & Wilhelm 2024,
  section 3): from a family of pairwise tests that controls the
  family-wise error rate, the number of systems significantly better than
  ``j`` (``L_j``) and significantly worse (``W_j``) give the rank interval
  ``[1 + L_j, G - W_j]``, which holds for all systems at once;
* tie groups: blocks of consecutive systems (in score order) that the same
  tests cannot separate.

The pairwise work is vectorised over the ``P = G (G - 1) / 2`` pairs and the
``B`` resamples: a ``(P, B)`` array of gaps, 37 MB for G = 31 and B = 10,000,
98 MB for G = 50, and at most two more of that size at once (measured peak
for G = 50: 200 MB for max-t and Holm, 300 MB for step-down; 2 s). The entry
points refuse more than :data:`MAX_PAIR_VALUES` pair-replicates.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_level, check_option
from evalci._base.warnings import DegenerateDataWarning
from evalci._base.warnings import warn as _warn
from evalci.engine import missing as _missing
from evalci.engine.results import BootstrapResult
from evalci.methods.compare import check_options, system_scores
from evalci.methods.ranks.board import (
    Leaderboard,
)
from evalci.methods.ranks.simultaneous import (
    _TOL,
    fdr,
    holm,
    max_t,
    pair_gaps,
    stepdown,
)

__all__ = ["leaderboard", "leaderboard_from_bootstrap"]

#: The pairwise tests behind the simultaneous rank intervals.
METHODS: tuple[str, ...] = ("max-t", "stepdown", "holm", "bh", "by")
#: Most pair-replicates (pairs x resamples): 800 MB of float64 per array.
MAX_PAIR_VALUES = 100_000_000


# ================================================================ the pairwise
def _flat_pairs(separated, gap, flat, n_units, level, names, a, b):
    """Pairs with no bootstrap spread: separated only by an exact sign test.

    No spread means the per-input gap is the same constant on all ``n``
    inputs: a zero gap is not separated; a nonzero one is when the sign
    test's two-sided ``2 ** (1 - n)`` is below ``(1 - level) / P``
    (Bonferroni over the pairs, conservative).
    """
    if not flat.any():
        return separated
    alpha = (1 - level) / len(gap)
    sign_p = 2.0 ** (1 - float(n_units))
    separated = separated.copy()
    separated[flat] = (np.abs(gap[flat]) > _TOL) & (sign_p < alpha)
    shown = ", ".join(
        f"{names[i]} vs {names[j]}"
        for i, j in zip(a[flat][:3], b[flat][:3], strict=True)
    )
    _warn(
        f"{int(flat.sum())} pairwise gaps have no bootstrap spread ({shown}): "
        "the two systems differ by the same amount on every input. They are "
        "separated only when the gap is not 0 and the exact sign test "
        f"(p = 2^(1 - {int(n_units)})) is below {alpha:.3g}.",
        DegenerateDataWarning,
    )
    return separated


# =================================================================== the ranks
def _point_ranks(score: np.ndarray) -> np.ndarray:
    """Rank 1 = the highest score; tied scores share the best rank ("min")."""
    from scipy.stats import rankdata

    return rankdata(-score, method="min").astype(int)


def marginal_rank_intervals(replicates: np.ndarray, level: float):
    """Each system's bootstrap ranks and their percentile interval.

    Ranks in each resample as in :func:`_point_ranks`; the interval holds the
    ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of one system's
    ranks (inverted CDF: ranks are integers). One system at a time, not
    simultaneous, and the plain bootstrap of ranks is unreliable when scores
    are (nearly) tied (Hall & Miller 2009).
    """
    from scipy.stats import rankdata

    ranks = rankdata(-replicates, axis=0, method="min").astype(int)
    alpha = 1 - level
    low = np.quantile(ranks, alpha / 2, axis=1, method="inverted_cdf")
    high = np.quantile(ranks, 1 - alpha / 2, axis=1, method="inverted_cdf")
    return ranks, low.astype(int), high.astype(int)


def rank_intervals(better: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[1 + L_j, G - W_j]`` from ``better[a, b]`` (a significantly better than b).

    ``L_j``: systems significantly better than ``j`` (column sums); ``W_j``:
    significantly worse (row sums). Mogstad et al. (2024), section 3.
    """
    g = len(better)
    return 1 + better.sum(axis=0), g - better.sum(axis=1)


def tie_groups(order: np.ndarray, separated: np.ndarray) -> np.ndarray:
    """Greedy blocks of consecutive systems, best first, no pair separated.

    Walk the systems in ``order`` (best first); a system joins the current
    group when it is separated from none of its members, else it opens the
    next group. Every group is then a run of consecutive ranks in which no
    two systems can be told apart, and the first system of each group is
    separated from some member of the group above it. Returns group numbers
    (1 = top) in ``order``'s order.
    """
    out = np.empty(len(order), int)
    members: list[int] = []
    k = 1
    for pos, j in enumerate(order):
        if members and separated[j, members].any():
            k, members = k + 1, []
        members.append(j)
        out[pos] = k
    return out


# ================================================================ entry points
def _leaderboard_iv(method, higher_is_better) -> None:
    """The options of :func:`leaderboard` that need no data."""
    check_option(
        method,
        "method",
        METHODS,
        describe="'max-t' (simultaneous gap intervals), 'stepdown' (Romano-Wolf), "
        "'holm', or the false discovery rate: 'bh' (Benjamini-Hochberg) or 'by' "
        "(Benjamini-Yekutieli)",
    )
    if not isinstance(higher_is_better, (bool, np.bool_)):
        raise TypeError(
            "`higher_is_better` must be True (rank 1 = highest score) or False "
            f"(rank 1 = lowest, e.g. an error rate); got {as_written(higher_is_better)}."
        )


def _check_size(n_systems: int, n_resamples: int) -> None:
    """Refuse a pairwise array that would not fit (pairs x resamples)."""
    n_pairs = n_systems * (n_systems - 1) // 2
    if n_pairs * n_resamples > MAX_PAIR_VALUES:
        most = max(MAX_PAIR_VALUES // max(n_pairs, 1), 1)
        raise ValueError(
            f"`n_resamples`: {n_systems} systems make {n_pairs} pairs, and "
            f"{n_pairs} x {n_resamples} pair-replicates exceed {MAX_PAIR_VALUES:,}; "
            f"use n_resamples <= {most}, or rank fewer systems."
        )


def _decisions(score, reps, method, level):
    """Separated pairs and the pairs table's test columns, by ``method``."""
    a, b, gap, gaps, se, flat = pair_gaps(score, reps)
    crit, low, high = None, np.full(len(gap), np.nan), np.full(len(gap), np.nan)
    p_adj = np.full(len(gap), np.nan)
    if method == "max-t":
        separated, crit = max_t(gap, gaps, se, flat, level)
        low, high = gap - crit * se, gap + crit * se
    elif method == "stepdown":
        separated, crit = stepdown(gap, gaps, se, flat, level)
    else:
        if method == "holm":
            separated, adj = holm(gap, se, flat, level)
        else:
            separated, adj = fdr(gap, se, flat, level, dependent=method == "by")
        p_adj = np.where(gap >= 0, adj[0], adj[1])
    if flat.all():  # no spread anywhere: the max is 0, a critical value of nothing
        crit = None  # (every pair is decided by the exact sign test instead)
    cols = {"gap": gap, "standard_error": se, "low": low, "high": high}
    cols["pvalue_adjusted"] = p_adj
    return (a, b, flat, separated), cols, crit


def leaderboard_from_bootstrap(
    result: BootstrapResult,
    *,
    method: str = "max-t",
    confidence_level: float | None = None,
    higher_is_better: bool = True,
) -> Leaderboard:
    """A :class:`Leaderboard` from a bootstrap of every system on shared draws.

    ``result`` is ``evalci.bootstrap(..., by="system")`` (one grouping
    column) whose groups share their draws (``result.paired``); no
    resampling happens. ``confidence_level`` defaults to the result's. See
    :func:`leaderboard` for the method.

    Parameters
    ----------
    result : BootstrapResult
        One score per system (one ``by`` column), computed on shared draws
        (``result.paired`` True), with no undefined (NaN) score or replicate.
    method : {'max-t', 'stepdown', 'holm', 'bh', 'by'}
        The pairwise tests behind the rank intervals, as in
        :func:`leaderboard` (default ``"max-t"``).
    confidence_level : float, optional
        Of the simultaneous rank intervals and the tests (family-wise), and
        of the score intervals in ``table``; default the result's level.
    higher_is_better : bool
        Rank 1 is the highest score (True, the default) or the lowest (False,
        e.g. an error rate or a latency).

    Returns
    -------
    Leaderboard

    Examples
    --------
    >>> import evalci
    >>> res = evalci.bootstrap(evalci.load_example(), "correct", "input_id",
    ...                        by="system", n_resamples=2000, rng=0)
    >>> board = evalci.leaderboard_from_bootstrap(res)
    >>> board.table[["system", "rank", "rank_low", "rank_high"]]
                               system  rank  rank_low  rank_high
    0    openai/gpt-5-nano-2025-08-07     1         1          1
    1  openai/gpt-5.4-mini-2026-03-17     2         2          2
    """
    _leaderboard_iv(method, higher_is_better)
    if result.groups is None or result.groups.nlevels != 1:
        raise ValueError(
            "`result` must be a bootstrap with one grouping column, e.g. "
            "evalci.bootstrap(df, 'correct', 'input_id', by='system')."
        )
    if not result.paired:
        raise ValueError(
            "`result`: the systems were not drawn together (they do not share "
            "their inputs), so their ranks cannot be compared pair by pair; use "
            "evalci.leaderboard(..., missing='drop') to keep the shared inputs."
        )
    if confidence_level is not None and confidence_level != result.confidence_level:
        # the score intervals at the same level, from the same replicates
        result = result.interval(confidence_level=check_level(confidence_level))
    level = result.confidence_level
    reps = np.asarray(result.bootstrap_distribution, dtype=float)
    estimate = np.asarray(result.estimate, dtype=float)
    _check_size(len(estimate), reps.shape[1])
    if np.isnan(reps).any() or np.isnan(estimate).any():
        raise ValueError(
            "`result`: some scores are undefined (NaN) on the data or on some "
            "resamples, so systems cannot be ranked; use a metric defined on "
            "every resample, or more inputs."
        )
    return _board(result, estimate, reps, method, level, higher_is_better)


def _board(result, estimate, reps, method, level, higher_is_better) -> Leaderboard:
    """The ranking itself, on validated replicates."""
    sign = 1.0 if higher_is_better else -1.0
    score, rscore = sign * estimate, sign * reps
    rank = _point_ranks(score)
    order = np.lexsort((np.arange(len(score)), rank))  # best first, stable
    score, rscore, rank = score[order], rscore[order], rank[order]
    names = list(result.groups[order])
    (a, b, flat, separated), cols, crit = _decisions(score, rscore, method, level)
    n_units = int(np.min(np.atleast_1d(np.asarray(result.n_clusters))))
    separated = _flat_pairs(separated, cols["gap"], flat, n_units, level, names, a, b)
    g = len(score)
    better = np.zeros((g, g), bool)
    better[a, b] = separated & (cols["gap"] > 0)
    better[b, a] = separated & (cols["gap"] < 0)
    lo, hi = rank_intervals(better)
    ranks, mlo, mhi = marginal_rank_intervals(rscore, level)
    low = np.asarray(result.low, dtype=float)[order]
    high = np.asarray(result.high, dtype=float)[order]
    table = pd.DataFrame(
        {
            "system": names,
            "estimate": estimate[order],
            "low": low,
            "high": high,
            "rank": rank,
            "rank_low": lo,
            "rank_high": hi,
            "marginal_rank_low": mlo,
            "marginal_rank_high": mhi,
            "tie_group": tie_groups(np.arange(g), better | better.T),
        }
    )
    cols["gap"] = sign * cols["gap"]
    for key in ("low", "high"):
        cols[key] = sign * cols[key]
    if sign < 0:  # gap a - b on the metric's scale: swap the interval's ends
        cols["low"], cols["high"] = cols["high"], cols["low"]
    pairs = pd.DataFrame(
        {"a": [names[i] for i in a], "b": [names[j] for j in b], **cols}
    )
    pairs["separated"] = separated
    idx = pd.Index(names, name="system")
    return Leaderboard(
        table=table,
        pairs=pairs,
        better=pd.DataFrame(better, index=idx, columns=idx),
        rank_distribution=ranks,
        scores=result,
        method=method,
        critical_value=crit,
        confidence_level=level,
        higher_is_better=bool(higher_is_better),
    )


def leaderboard(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    system: str = "system",
    *,
    metric="mean",
    method: str = "max-t",
    higher_is_better: bool = True,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    strategy: str = "cluster",
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
) -> Leaderboard:
    """Rank systems with simultaneous rank intervals and tie groups.

    Every system is scored on the same bootstrap draws of inputs (as in
    :func:`evalci.compare`), so every pairwise gap is paired. Pairwise tests
    that hold the family-wise error rate at ``1 - confidence_level`` give,
    for each system ``j``, the number ``L_j`` of systems significantly
    better and ``W_j`` significantly worse; its rank interval is
    ``[1 + L_j, G - W_j]`` (Mogstad, Romano, Shaikh & Wilhelm 2024, section
    3). With probability at least ``confidence_level`` (asymptotically)
    *every* system's true rank lies in its interval at once.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table (one row per input, run and system), or a counts table
        with ``successes=`` and ``trials=``. A Dask DataFrame is reduced
        exactly first, as in :func:`evalci.compare`.
    value, cluster : str
        Outcome column and input column, as in :func:`evalci.bootstrap`.
    system : str
        Column naming the system; at least 2 systems.
    metric, strategy, strata, weight, rng, successes, trials, input, weights, backend
        As in :func:`evalci.bootstrap`.
    method : {'max-t', 'stepdown', 'holm', 'bh', 'by'}
        The pairwise tests, all on the bootstrap of every gap ``a - b``
        standardised by its bootstrap standard error ``se``:

        * ``"max-t"`` (default): the ``confidence_level`` quantile ``c`` of
          ``max over pairs |gap* - gap| / se`` gives simultaneous intervals
          ``gap +- c se`` for all ``G (G - 1) / 2`` gaps (Mogstad et al.
          2024, section 3, with bootstrap rather than
          re-studentised scales); a pair is separated when its interval
          excludes 0. Kept in ``pairs.low``, ``pairs.high``.
        * ``"stepdown"``: Romano & Wolf's (2005) step-down version over the
          ``2 P`` one-sided hypotheses ``theta_a <= theta_b``: the critical
          value is recomputed over the hypotheses not yet rejected. Separates
          at least the pairs max-t does, at the same error rate; no intervals.
        * ``"holm"``: Holm (1979) over the ``2 P`` one-sided normal
          p-values of ``gap / se`` (those of ``evalci.compare`` with
          ``method="normal", alternative="greater"``); valid under any
          dependence of the tests, usually the least powerful of the
          three. ``pairs.pvalue_adjusted``.
        * ``"bh"``, ``"by"``: Benjamini-Hochberg (1995) or
          Benjamini-Yekutieli (2001, any dependence) over the same one-sided
          tests: the false discovery rate, not the family-wise error, is at
          most ``1 - confidence_level``, so more pairs separate among many
          systems; ``pairs.pvalue_adjusted`` holds the q-values, and the
          rank intervals are no longer simultaneous (a share of the
          separations behind them may be false).
    higher_is_better : bool
        Rank 1 is the highest score (True) or the lowest (False, e.g. an
        error rate or a latency).
    confidence_level : float
        Of the simultaneous rank intervals and of the tests (family-wise);
        also the level of each system's (marginal) score interval.
    n_resamples : int
        Bootstrap replicates; the pairwise array holds ``G (G - 1) / 2 x
        n_resamples`` floats (37 MB for 31 systems and 10,000 resamples;
        up to three such arrays at once).
    missing : {'raise', 'drop', 'zero'}
        What a missing sample (NaN) or an input some systems lack means, as
        in :func:`evalci.compare`: refuse (default), leave them out (with a
        warning), or count them as failures. ``"bounds"`` is refused here
        (see :func:`evalci.compare` for bounded gaps). Whenever something is
        missing, ``scores.counts`` counts it per system.
    dropna : bool
        Deprecated: ``dropna=True`` is ``missing="drop"``.

    Returns
    -------
    Leaderboard
        ``table`` (per system: score interval, rank, simultaneous and
        marginal rank intervals, tie group), ``pairs``, ``better``,
        ``rank_distribution``, ``scores``.

    Notes
    -----
    Ranks: rank 1 is the best; ``rank_j = 1 + #{k: score_k > score_j}``, so
    tied scores share the best rank (Mogstad et al.'s definition). A true
    tie is a block of ranks: if ``theta_j = theta_k`` the true ranks of both
    span ``[1 + #better, G - #worse]``, and the simultaneous interval covers
    the whole block when no tie is falsely separated.

    The *marginal* rank interval is the percentile interval of one system's
    bootstrap rank: not simultaneous, and the plain bootstrap of ranks is
    unreliable for (nearly) tied scores (Hall & Miller 2009); it is shown
    for comparison, the simultaneous interval is the one to report.

    Tie groups: systems in score order, best first, are cut greedily into
    blocks: a system joins the current block when the tests separate it from
    none of the block's members, else it opens the next block. Within a block
    no two systems can be told apart; systems in neighbouring blocks may
    still be inseparable (their rank intervals overlap), which the rank
    intervals show.

    A gap with no bootstrap spread (the same per-input gap on every input)
    is separated only by the exact sign test, with a
    :class:`~evalci.DegenerateDataWarning`.

    References
    ----------
    Mogstad, M., Romano, J. P., Shaikh, A. M., & Wilhelm, D. (2024).
    Inference for ranks with applications to mobility across neighbourhoods
    and academic achievement across countries. Review of Economic Studies
    91(1), 476-518.
    Romano, J. P., & Wolf, M. (2005). Exact and approximate stepdown methods
    for multiple hypothesis testing. JASA 100(469), 94-108.
    Holm, S. (1979). A simple sequentially rejective multiple test
    procedure. Scandinavian Journal of Statistics 6(2), 65-70.
    Hall, P., & Miller, H. (2009). Using the bootstrap to quantify the
    authority of an empirical ranking. Annals of Statistics 37(6B).

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> board = evalci.methods.ranks.ranking.leaderboard(df, "correct", "input_id",
    ...                                  n_resamples=2000, rng=0)
    >>> board.table[["system", "estimate", "rank_low", "rank_high", "tie_group"]]
                               system  estimate  rank_low  rank_high  tie_group
    0    openai/gpt-5-nano-2025-08-07  0.675758         1          1          1
    1  openai/gpt-5.4-mini-2026-03-17  0.617172         2          2          2
    >>> board.pairs[["gap", "low", "high", "separated"]].round(3)
         gap    low   high  separated
    0  0.059  0.004  0.113       True
    """
    _leaderboard_iv(method, higher_is_better)
    _missing.resolve(missing, dropna)  # dropna=True: deprecated
    check_options("percentile", None, "two-sided", missing, None, strategy)
    if missing == "bounds":
        raise ValueError(
            "missing='bounds' is not supported by leaderboard: a rank compares "
            "each system with all the others at once, and its worst case fills "
            "that system's missing runs with failures and every other system's "
            "with successes (its best case the reverse): a different filling of "
            "the whole table for each system, which one bootstrap of two "
            "fillings cannot represent, so rank intervals under worst-case "
            "bounds are not implemented. Instead: evalci.compare(..., "
            "missing='bounds') bounds each gap that matters (the two systems' "
            "opposite fillings, resampled together); or rank with "
            "missing='zero' (a missing run is a failure) or 'drop' (the scored "
            "runs), and say which."
        )
    result, scores = system_scores(
        data,
        value,
        cluster,
        system,
        rng=rng,
        missing=missing,
        dropna=dropna,
        check_size=_check_size,
        strategy=strategy,
        metric=metric,
        strata=strata,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        weight=weight,
        successes=successes,
        trials=trials,
        input=input,
        weights=weights,
        backend=backend,
    )
    board = leaderboard_from_bootstrap(
        result, method=method, higher_is_better=higher_is_better
    )
    return replace(board, input_scores=scores)
