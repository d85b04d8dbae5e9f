"""How fragile is a verdict? The fewest inputs whose removal flips it.

A paired decision (``b`` is better than ``a``, or the two cannot be told
apart) rests on per-input differences ``d_i = score_b,i - score_a,i``. Its
*fragility* is the smallest number of inputs whose removal flips it
(Broderick, Giordano & Meager 2020 call the share the "approximate maximum
influence perturbation"; Huang et al. 2025 found that removing 2 of 57,477
Chatbot Arena votes flips its first place).

Three computations, each with what it guarantees:

* **0/1 paired data, the exact sign test** (McNemar's exact test on the
  discordant inputs): with ``w`` wins of ``b`` and ``l`` losses, only wins
  and losses move the test (ties do not enter it), and its p-value is
  monotone in each count, so the fewest removals are ``r`` wins alone or
  ``r`` losses alone: found exactly, in ``O(w + l)``. Any ``r`` inputs of
  the removed kind do; the ones named are the first ``r`` in input order.
* **any other per-input scores, the paired normal (CLT) test**
  ``z = mean(d) / (sd(d) / sqrt(n))``: a greedy search removes, one at a
  time, the input whose removal moves ``z`` furthest toward the other
  decision, recomputing ``z`` exactly after each removal. The inputs it
  names do flip the decision, so the count is an **upper bound** on the
  smallest number (a brute-force search over all subsets can only find as
  few or fewer; the tests check this).
* **the order of two scores** (``flip="order"``: no longer ahead but
  strictly behind): removing the ``r`` largest ``d_i`` lowers the mean of
  the rest the most of any ``r`` removals, so this count is exact for any
  scores.

The bootstrap's decision (``evalci.compare``) and these tests agree except
near the boundary; ``fragility_significant`` says what the test decides on
all the data, so a reader sees which decision the count flips.

References
----------
Broderick, T., Giordano, R., & Meager, R. (2020). An automatic
finite-sample robustness metric: when can dropping a little data make a
big difference? arXiv:2011.14999.
Huang, J. Y., Shen, Y., Wei, D., & Broderick, T. (2025). Dropping just a
handful of preferences can change top large language model rankings.
arXiv:2508.11847.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.validate import (
    check_integer,
    check_level,
    check_option,
    check_scores,
)

__all__ = ["Fragility", "pair_fragility", "fragility_table", "FLIPS"]

#: What a removal may flip: the test's decision, or the order of the scores.
FLIPS: tuple[str, ...] = ("decision", "order")
_ALTERNATIVES = ("two-sided", "less", "greater")


@dataclass(frozen=True)
class Fragility:
    """The fewest inputs whose removal flips one paired decision.

    Attributes
    ----------
    n_removed : int or None
        How many inputs to remove (None: no removal flips it, or none within
        ``max_remove``). Two systems with the same score on every input have
        no gap to overturn: None, with ``exact`` True.
    inputs : tuple
        Their ids, in removal order.
    test : str
        ``"sign test"`` (exact), ``"paired CLT"`` (greedy: an upper bound on
        the smallest number) or ``"order"`` (exact).
    exact : bool
        Whether ``n_removed`` is the smallest number (False: an upper bound).
    significant : bool or None
        The test's decision on all the inputs (None for ``flip="order"``).
    """

    n_removed: int | None
    inputs: tuple
    test: str
    exact: bool
    significant: bool | None


# ----------------------------------------------------------------- sign test
def _sign_pvalues(w: np.ndarray, n_loss: np.ndarray, alternative: str) -> np.ndarray:
    """Exact sign-test p-values of ``w`` wins against ``l`` losses (p = 1/2).

    Two-sided: ``min(1, 2 P(X <= min(w, l)))``, X ~ Bin(w + l, 1/2), which is
    scipy's ``binomtest`` at p = 1/2 (the distribution is symmetric).
    """
    from scipy import stats  # slow to import: only when used

    w, n_loss = np.broadcast_arrays(np.asarray(w), np.asarray(n_loss))
    n = w + n_loss
    if alternative == "greater":  # H1: b better, P(X >= w)
        return np.where(n > 0, stats.binom.sf(w - 1, n, 0.5), 1.0)
    if alternative == "less":
        return np.where(n > 0, stats.binom.cdf(w, n, 0.5), 1.0)
    p = 2.0 * stats.binom.cdf(np.minimum(w, n_loss), n, 0.5)
    return np.where((n > 0) & (w != n_loss), np.minimum(p, 1.0), 1.0)


def _first_flip(w, n_loss, remove_wins: bool, alpha, alternative, significant):
    """Fewest wins (or losses) to remove so the test's decision changes."""
    top = w if remove_wins else n_loss
    r = np.arange(top + 1)
    p = (
        _sign_pvalues(w - r, n_loss, alternative)
        if remove_wins
        else _sign_pvalues(w, n_loss - r, alternative)
    )
    hit = np.flatnonzero((p < alpha) != significant)
    return int(hit[0]) if len(hit) else None


def _sign_fragility(d, ids, alpha, alternative) -> Fragility:
    """Exact fragility of the sign test on ``d`` in {-1, 0, 1}."""
    win, loss = np.flatnonzero(d > 0), np.flatnonzero(d < 0)
    w, n_loss = len(win), len(loss)
    significant = bool(_sign_pvalues(w, n_loss, alternative) < alpha)
    if significant:  # remove the side that carries the decision
        if alternative == "greater" or (alternative == "two-sided" and w > n_loss):
            kinds = [True]
        else:
            kinds = [False]
    else:  # make it significant: losses (b wins) or wins (a wins) away
        kinds = {"greater": [False], "less": [True]}.get(alternative, [False, True])
    best = None
    for remove_wins in kinds:
        r = _first_flip(w, n_loss, remove_wins, alpha, alternative, significant)
        if r is not None and (best is None or r < best[0]):
            best = (r, win if remove_wins else loss)
    if best is None:
        return Fragility(None, (), "sign test", True, significant)
    r, pool = best
    return Fragility(r, tuple(ids[pool[:r]].tolist()), "sign test", True, significant)


# ------------------------------------------------------------ paired CLT
def _z(s1, s2, n):
    """The paired z statistic from sums (arrays broadcast); +-inf when sd = 0
    (0 when the mean is 0 too). Both branches of ``np.where`` are computed,
    so 0/0 and 0 * inf happen by design: no RuntimeWarning may escape."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mean = s1 / n
        var = np.maximum(s2 - s1 * mean, 0.0) / (n - 1)
        z = mean / np.sqrt(var / n)
    tiny = var <= 1e-24 * np.maximum(1.0, mean**2)
    # np.where computes both branches: sign(0) * inf is NaN (never chosen)
    flat = np.where(np.abs(mean) > 1e-12, np.copysign(np.inf, mean), 0.0)
    return np.where(tiny, flat, z)


def _clt_significant(z, crit, alternative):
    if alternative == "greater":
        return z > crit
    if alternative == "less":
        return z < -crit
    return np.abs(z) > crit


def _alive(counts, j, step):
    """The nearest position from ``j`` (in direction ``step``) with inputs left."""
    while 0 <= j < len(counts) and counts[j] == 0:
        j += step
    return j if 0 <= j < len(counts) else None


def _candidates(values, counts, s1, s2):
    """Where ``z`` after one removal can be largest or smallest.

    Removing a value ``v`` leaves ``u = s1 - v`` summed; ``z`` is then
    proportional to ``u / sqrt(q(u))`` with ``q(u) = s2 - (s1 - u)^2 -
    u^2 / (n - 1)``, whose derivative has the sign of ``s2 - s1^2 + s1 u``:
    linear in ``u``, so ``z`` has one turning point, at ``v = s2 / s1``, and
    is monotone on either side. Its extremes over the values left are at
    the two ends and beside that point: at most four candidates.
    """
    out = {_alive(counts, 0, 1), _alive(counts, len(counts) - 1, -1)}
    if s1 != 0:
        k = int(np.searchsorted(values, s2 / s1))
        out |= {_alive(counts, k, 1), _alive(counts, k - 1, -1)}
    return np.array(sorted(j for j in out if j is not None), dtype=int)


def _greedy(d, ids, crit, alternative, significant, up, max_remove):
    """Greedy removals moving ``z`` up (``up``) or down until the decision flips.

    Each step removes the input whose removal moves ``z`` furthest (exactly:
    :func:`_candidates`), so a step costs O(1) but for skipping used values.
    """
    values, inverse, counts = np.unique(d, return_inverse=True, return_counts=True)
    # the inputs of each value, in input order, to name the ones removed
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts[:-1])]).astype(int)
    taken = np.zeros(len(values), dtype=int)
    s1, s2, n = float(d.sum()), float((d**2).sum()), float(len(d))
    removed = []
    while len(removed) < max_remove and n > 3:
        cand = _candidates(values, counts, s1, s2)
        v = values[cand]
        z_after = _z(s1 - v, s2 - v**2, n - 1)
        j = int(cand[np.argmax(z_after) if up else np.argmin(z_after)])
        removed.append(order[starts[j] + taken[j]])
        taken[j] += 1
        counts[j] -= 1
        s1, s2, n = s1 - values[j], s2 - values[j] ** 2, n - 1
        if bool(_clt_significant(_z(s1, s2, n), crit, alternative)) != significant:
            return ids[np.array(removed)].tolist()
    return None


def _clt_fragility(d, ids, alpha, alternative, max_remove) -> Fragility:
    """Greedy fragility of the paired CLT test: an upper bound."""
    from scipy import stats

    crit = stats.norm.isf(alpha / 2 if alternative == "two-sided" else alpha)
    z = _z(d.sum(), (d**2).sum(), len(d))
    significant = bool(_clt_significant(z, crit, alternative))
    if significant:
        ups = [bool(z < 0)]  # move z back toward 0
    else:
        ups = {"greater": [True], "less": [False]}.get(alternative, [True, False])
    best = None
    for up in ups:
        got = _greedy(d, ids, crit, alternative, significant, up, max_remove)
        if got is not None and (best is None or len(got) < len(best)):
            best = got
    if best is None:
        return Fragility(None, (), "paired CLT", False, significant)
    return Fragility(len(best), tuple(best), "paired CLT", False, significant)


# ------------------------------------------------------------------ order
def _order_fragility(d, ids) -> Fragility:
    """Fewest removals after which the mean of ``d`` has the opposite sign (exact)."""
    total = d.sum()
    if abs(total) <= 1e-12 * max(1.0, np.abs(d).sum()):
        return Fragility(0, (), "order", True, None)  # already tied
    sign = np.sign(total)
    pos = np.argsort(-sign * d, kind="stable")  # the largest contributions first
    rest = total - np.concatenate([[0.0], np.cumsum(d[pos])])  # after r removals
    r = np.arange(len(d) + 1)
    ok = (sign * rest < -1e-12) & (r < len(d))
    hit = np.flatnonzero(ok)
    if not len(hit):
        return Fragility(None, (), "order", True, None)
    k = int(hit[0])
    return Fragility(k, tuple(ids[pos[:k]].tolist()), "order", True, None)


def _no_gap(a, b, flip) -> Fragility:
    """Two systems with the same score on every input: no removal leaves a
    difference, so none flips the decision (not significant) or the order
    (neither ahead). Exact, without a search (which would divide 0 by 0)."""
    if flip == "order":
        return Fragility(None, (), "order", True, None)
    binary = np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all()
    return Fragility(None, (), "sign test" if binary else "paired CLT", True, False)


# ------------------------------------------------------------------ public
def pair_fragility(
    score_a,
    score_b,
    ids=None,
    *,
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
    flip: str = "decision",
    max_remove: int | None = None,
) -> Fragility:
    """The fewest inputs whose removal flips the paired decision ``b`` vs ``a``.

    Parameters
    ----------
    score_a, score_b : array-like
        Per-input scores of the two systems, on the same inputs (same order).
    ids : array-like, optional
        Input ids (default ``0 .. n-1``).
    confidence_level : float
        The test's level: significant when its p-value is below
        ``1 - confidence_level``.
    alternative : {'two-sided', 'less', 'greater'}
        As in :func:`evalci.compare` (``"greater"``: H1 is ``b > a``).
    flip : {'decision', 'order'}
        ``"decision"``: flip significance (significant becomes not, or
        not-significant becomes significant either way, the fewer removals
        of the two). ``"order"``: the system ahead becomes strictly behind.
    max_remove : int, optional
        Stop the greedy search after this many removals (default: all but 3).

    Returns
    -------
    Fragility

    Notes
    -----
    With every score 0 or 1 the decision is the exact sign test's (exact
    count); otherwise the paired CLT test's (greedy count, an upper bound).
    See the module docstring.

    Examples
    --------
    >>> from evalci.methods.compare.fragility import pair_fragility
    >>> a = [0] * 10 + [1] * 20
    >>> b = [1] * 10 + [1] * 20   # b wins 10 inputs, loses none
    >>> f = pair_fragility(a, b)
    >>> f.n_removed, f.test, f.significant
    (5, 'sign test', True)
    """
    check_option(flip, "flip", FLIPS)
    check_option(alternative, "alternative", _ALTERNATIVES)
    alpha = 1.0 - check_level(confidence_level)
    fix = "; drop the inputs either system lacks from both"
    a = check_scores(score_a, "score_a", fix=fix)
    b = check_scores(score_b, "score_b", fix=fix)
    if len(a) != len(b) or len(a) == 0:
        raise ValueError(
            "`score_a` and `score_b` must be of the same length, at least 1 (one "
            f"score per input, the same inputs in the same order); got {len(a)} "
            f"and {len(b)}."
        )
    _check_magnitude(a, b)
    if max_remove is not None:
        max_remove = check_integer(max_remove, "max_remove", hint=" or None")
    ids = _check_ids(ids, len(a))
    return _fragility(a, b, ids, alpha, alternative, flip, max_remove)


def _check_magnitude(a, b) -> None:
    """Refuse scores whose differences or their squares overflow float64."""
    big = max(np.abs(a).max(), np.abs(b).max())
    limit = np.sqrt(np.finfo(float).max / (8.0 * len(a)))
    if big > limit:
        raise ValueError(
            f"`score_a` and `score_b` reach {big:.3g}: the squares of their "
            f"differences, summed, overflow float64 beyond {limit:.2g}; rescale "
            "both (the decision does not change with the scale)."
        )


def _check_ids(ids, n: int) -> np.ndarray:
    """``ids``: one per input (default ``0 .. n-1``)."""
    if ids is None:
        return np.arange(n)
    if isinstance(ids, (str, bytes)) or not np.ndim(ids) == 1:
        raise ValueError(
            f"`ids` must be a 1-D sequence of input ids, one per score; got "
            f"{type(ids).__name__}."
        )
    ids = np.asarray(ids)
    if len(ids) != n:
        raise ValueError(
            f"`ids` must name every input once (one id per score): {len(ids)} ids "
            f"for {n} scores."
        )
    return ids


def _fragility(a, b, ids, alpha, alternative, flip, max_remove) -> Fragility:
    """:func:`pair_fragility` on checked arrays; NaN marks an input one side lacks."""
    keep = ~(np.isnan(a) | np.isnan(b))  # an input either system lacks: not paired
    d, ids = (b - a)[keep], ids[keep]
    if not np.any(d):  # the same score on every input: no gap to overturn
        return _no_gap(a[keep], b[keep], flip)
    if flip == "order":
        return _order_fragility(d, ids)
    if np.isin(a[keep], (0.0, 1.0)).all() and np.isin(b[keep], (0.0, 1.0)).all():
        return _sign_fragility(d, ids, alpha, alternative)
    limit = len(d) if max_remove is None else int(max_remove)
    return _clt_fragility(d, ids, alpha, alternative, limit)


def fragility_table(
    scores: pd.DataFrame,
    pairs,
    *,
    confidence_level: float,
    alternative: str = "two-sided",
    flip: str = "decision",
) -> pd.DataFrame:
    """Fragility of each pair ``(a, b)``: columns of a comparison's table.

    ``scores``: per-input scores, one column per system, indexed by input.
    Returns ``fragility`` (nullable int), ``fragility_inputs`` (tuples of
    ids), ``fragility_test``, ``fragility_exact``, ``fragility_significant``.
    """
    ids = scores.index.to_numpy()
    rows = []
    for a, b in pairs:
        # NaN: an input one system lacks (missing="drop"), left out of the pair
        f = _fragility(
            scores[a].to_numpy(float),
            scores[b].to_numpy(float),
            ids,
            1.0 - confidence_level,
            alternative,
            flip,
            None,
        )
        rows.append((f.n_removed, f.inputs, f.test, f.exact, f.significant))
    cols = ["fragility", "fragility_inputs", "fragility_test", "fragility_exact"]
    out = pd.DataFrame(rows, columns=[*cols, "fragility_significant"])
    out["fragility"] = out["fragility"].astype("Int64")
    return out
