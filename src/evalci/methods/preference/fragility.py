"""How many votes hold up a Bradley-Terry ranking? A greedy search, verified.

For two models ``a`` ranked above ``b`` (log-strength gap ``theta_a -
theta_b > 0``), the *fragility* of their order is the smallest number of
battles whose removal puts ``b`` strictly ahead once the model is refitted.
Huang et al. (2025) found that removing 2 of Chatbot Arena's 57,477 votes
flips its first place. Finding the smallest set exactly is a search over
subsets; this module finds a small one by a greedy search:

1. **Influence.** At the fit ``theta(w)`` on battle weights ``w`` (all 1),
   removing one battle ``r`` moves the parameters by about ``H^{-1} g_r``
   (``H`` the log-likelihood's Hessian, ``g_r`` the battle's score; the
   implicit function theorem on ``grad L(theta(w), w) = 0``), so the gap by
   ``-(v . g_r)`` with ``v = (-H)^{-1} (e_a - e_b)``: one linear solve gives
   every battle's influence. Battles of one kind (same pair, same outcome,
   same ``strength`` weight) have the same influence, so the search works on
   kinds, a few per pair, however many battles there are.
2. **Greedy removal.** Remove battles of the kinds that move the gap most
   toward zero -- as many as the first-order prediction says move it at
   most half the way (:data:`STEP_SHARE`), at least one -- then refit
   exactly (Newton, warm-started); repeat until the refitted gap changes
   sign. Near the flip every step removes one battle of the most
   influential kind: the plain greedy search.
3. **Put back.** Each removed kind is tried back (all at once, one
   vectorised refit per round); one whose return leaves ``b`` ahead is
   kept back, until none is.

**The guarantee.** The count returned is an **upper bound** on the smallest
number: the search exhibits a set of battles (``fragility_rows``) whose
removal flips the order, verified by an exact refit. It is not always the
smallest (a brute-force search over subsets can find fewer; the tests check
it never finds more, and state how often the two agree). Removals that
leave some model's maximum-likelihood score infinite (it would win or lose
every battle it plays) are not considered.

**No lower bound.** ``fragility_first_order`` is the fewest removals that
flip the gap under the linear (influence) approximation at the full-data
fit -- the count ``AMIP`` (Broderick et al. 2020) reports. It is an
estimate, not a bound: the gap is not linear in the weights, and the
approximation can under- or overstate the number needed.

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

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base import text as _text
from evalci._base.lazy import sparse
from evalci._base.validate import check_integer, check_number, check_option
from evalci.methods.preference import fit as _fit
from evalci.methods.preference.boot import split_counts
from evalci.methods.preference.data import _unique, check_graph, encode, row_cells

__all__ = ["PreferenceFragility", "preference_fragility"]

#: Each greedy step removes battles predicted to close at most this share of
#: the remaining gap (at least one battle), then refits exactly.
STEP_SHARE = 0.5
#: ``b`` is ahead when its log-strength exceeds ``a``'s by more than this
#: (Newton's error is of order 1e-14).
FLIP_TOL = 1e-9
_MODELS = ("bradley-terry", "davidson")
_TIES = ("half", "drop")


# ================================================================ the problem
@dataclass(frozen=True)
class _Problem:
    """Battle kinds and how to refit after removing some of each."""

    pairs: _fit.Pairs
    model: str
    ties: str
    prior: float
    ref: int
    kind_cell: np.ndarray  # (K,) matchup cell 3 * pair + outcome
    kind_weight: np.ndarray  # (K,) strength weight of one battle
    kind_count: np.ndarray  # (K,) battles of the kind
    onehot: sparse.csr_matrix = field(repr=False)  # (K, 3P): weight at its cell

    @property
    def davidson(self) -> bool:
        return self.model == "davidson"

    def counts(self, removed: np.ndarray) -> tuple:
        """``(wi, wj, t)`` of each row of ``removed`` (B, K) battles taken out."""
        left = np.atleast_2d(self.kind_count - removed).astype(float)
        y = np.asarray((self.onehot.T @ left.T).T)
        return split_counts(y, self.model, self.ties)

    def refit(self, removed, start):
        """Exact fits (B rows) after the removals; ``ok`` where the maximum exists."""
        wi, wj, t = self.counts(removed)
        ok = np.ones(len(wi), bool)
        if self.davidson:
            ok &= (t.sum(axis=1) > 0) & ((wi + wj).sum(axis=1) > 0)
        if self.prior == 0:
            ok &= _fit.strongly_connected(wi, wj, t, self.pairs)
        theta = np.zeros((len(wi), self.pairs.n_models))
        lam = np.zeros(len(wi))
        if ok.any():
            code = "davidson" if self.davidson else "bt"
            th, lm, conv = _fit.fit(
                wi[ok],
                wj[ok],
                t[ok],
                self.pairs,
                model=code,
                ref=self.ref,
                prior=self.prior,
                start=start,
            )
            theta[ok], lam[ok] = th, lm
            ok[np.flatnonzero(ok)[~conv]] = False
        return theta, lam, ok

    def influence(self, removed, theta, lam, a: int, b: int) -> np.ndarray:
        """First-order change of ``theta_a - theta_b`` per battle of each kind removed."""
        wi, wj, t = self.counts(removed)
        g, pairs = self.pairs.n_models, self.pairs
        inc = pairs.incidence
        objective = _fit._davidson if self.davidson else _fit._bt
        th, lm = theta[None], np.array([lam])
        _, h, cross, h_lam = objective(th, lm, wi, wj, t, pairs, inc, self.prior)
        hess = _fit._hessian(h, cross, h_lam, pairs, np.abs(inc), self.prior)[0]
        free = np.arange(g + self.davidson)
        if self.prior == 0:
            free = free[free != self.ref]
        c = np.zeros(len(hess))
        c[a], c[b] = 1.0, -1.0
        v = np.zeros(len(hess))
        v[free] = np.linalg.solve(-hess[np.ix_(free, free)], c[free])
        s_d, s_lam = self._scores(theta, lam)  # (P, 3) each
        per_cell = s_d * (v[pairs.i] - v[pairs.j])[:, None]
        if self.davidson:
            per_cell = per_cell + s_lam * v[g]
        return -self.kind_weight * per_cell.ravel()[self.kind_cell]

    def _scores(self, theta, lam):
        """One battle's d loglik / d(theta_i - theta_j) and / d lam, per cell."""
        d = theta[self.pairs.i] - theta[self.pairs.j]
        if not self.davidson:
            s = 1.0 / (1.0 + np.exp(-d))
            s_d = np.column_stack([1.0 - s, -s, 0.5 - s])
            return s_d, None
        half = 0.5 * d
        log_den = np.logaddexp(np.logaddexp(half, -half), lam)
        pi, pj = np.exp(half - log_den), np.exp(-half - log_den)
        pt = np.exp(lam - log_den)
        m = 0.5 * (pi - pj)
        s_d = np.column_stack([0.5 - m, -0.5 - m, -m])
        s_lam = np.column_stack([-pt, -pt, 1.0 - pt])
        return s_d, s_lam


def _problem(cell, weight, battles, model, ties, prior, ref):
    """Battle kinds: distinct ``(cell, weight)`` among the rows that count."""
    counted = np.flatnonzero(cell >= 0)
    weights, wcode, _ = _unique(weight[counted])
    key = cell[counted] * len(weights) + wcode
    kinds, kind_of, count = _unique(key)
    kind_cell = kinds // len(weights)
    kind_weight = weights[kinds % len(weights)]
    n_cells = 3 * len(battles.pairs.i)
    onehot = sparse.csr_matrix(
        (kind_weight, (np.arange(len(kinds)), kind_cell)), shape=(len(kinds), n_cells)
    )
    prob = _Problem(
        pairs=battles.pairs,
        model=model,
        ties=ties,
        prior=prior,
        ref=ref,
        kind_cell=kind_cell,
        kind_weight=kind_weight,
        kind_count=count,
        onehot=onehot,
    )
    # rows of each kind, in table order: the ones named are the first
    order = counted[np.argsort(kind_of, kind="stable")]
    starts = np.r_[0, np.cumsum(count)[:-1]]
    return prob, order, starts


# ================================================================ the search
def _plan(delta, left, gap, budget) -> np.ndarray:
    """Removals per kind predicted to close at most STEP_SHARE of ``gap``."""
    plan = np.zeros(len(delta), np.int64)
    target = STEP_SHARE * gap
    moved = 0.0
    for k in np.argsort(delta, kind="stable"):
        if delta[k] >= 0 or budget == 0:
            break
        if left[k] == 0:
            continue
        want = int((target - moved) // -delta[k])
        if not plan.any():
            want = max(want, 1)  # every step removes at least one battle
        m = min(int(left[k]), budget, want)
        if m == 0:
            break
        plan[k] = m
        moved -= m * delta[k]
        budget -= m
        if moved >= target - 1e-15 * gap:
            break
    return plan


def _greedy(prob: _Problem, a, b, theta, lam, cap):
    """Removals (K,) after which ``b`` is ahead of ``a``, or None within ``cap``."""
    removed = np.zeros(len(prob.kind_count), np.int64)
    blocked = np.zeros(len(removed), bool)
    gap = theta[a] - theta[b]
    while gap >= -FLIP_TOL:
        n = int(removed.sum())
        if n >= cap:
            return None
        delta = prob.influence(removed, theta, lam, a, b)
        left = np.where(blocked, 0, prob.kind_count - removed)
        plan = _plan(delta, left, max(gap, FLIP_TOL), cap - n)
        if not plan.any():
            return None
        th, lm, ok = prob.refit(removed + plan, (theta, lam))
        if not ok[0]:
            if plan.sum() > 1:  # retry with the single most influential battle
                plan = np.zeros_like(plan)
                plan[np.argmin(np.where(left > 0, delta, np.inf))] = 1
                th, lm, ok = prob.refit(removed + plan, (theta, lam))
            if not ok[0]:
                blocked |= plan > 0  # this removal leaves a score infinite
                continue
        removed, theta, lam = removed + plan, th[0], lm[0]
        gap = theta[a] - theta[b]
    return _put_back(prob, a, b, removed, theta, lam)


def _put_back(prob: _Problem, a, b, removed, theta, lam) -> np.ndarray:
    """Return removed battles, one kind at a time, while ``b`` stays ahead."""
    while True:
        kinds = np.flatnonzero(removed)
        if not len(kinds):
            return removed
        trial = np.repeat(removed[None], len(kinds), axis=0)
        trial[np.arange(len(kinds)), kinds] -= 1
        th, _, ok = prob.refit(trial, (theta, lam))
        gaps = np.where(ok, th[:, a] - th[:, b], np.inf)
        best = int(np.argmin(gaps))
        if gaps[best] >= -FLIP_TOL:
            return removed
        removed = trial[best]


def _first_order(delta, count, gap):
    """Fewest removals that flip the gap to first order (an estimate), or None."""
    order = np.argsort(delta, kind="stable")
    order = order[delta[order] < 0]
    moved = np.cumsum(-delta[order] * count[order])
    k = int(np.searchsorted(moved, gap, side="right"))
    if k == len(order):
        return None
    before = moved[k - 1] if k else 0.0
    return int(count[order[:k]].sum() + np.floor((gap - before) / -delta[order[k]]) + 1)


# ================================================================== results
@dataclass(frozen=True, repr=False)
class PreferenceFragility:
    """The fewest battles found whose removal flips each order on a ranking.

    Attributes
    ----------
    table : pandas.DataFrame
        One row for the top place (``place == "top"``: ``a`` is first, ``b``
        the model that overtakes it with the fewest removals found), then
        one per adjacent pair (``"adjacent"``: ``a`` ranked just above
        ``b``). Columns ``a, b, gap`` (points on the Elo-like scale),
        ``theta_gap`` (natural log-strengths), ``fragility`` (battles to
        remove: an upper bound on the smallest number; missing when the
        search found none within ``max_remove``), ``fragility_share`` (of
        the battles counted), ``fragility_rows`` (their row labels in the
        table given, in table order), ``fragility_first_order`` (the
        linear approximation's count: an estimate, not a bound).
    model : str
        ``"bradley-terry"`` or ``"davidson"``.
    n_battles : int
        Battles counted (rows with positive weight).
    """

    table: pd.DataFrame = field(repr=False)
    model: str
    n_battles: int

    @property
    def top(self) -> pd.Series:
        """The top place's row of :attr:`table`."""
        return self.table.iloc[0]

    def to_frame(self) -> pd.DataFrame:
        """:attr:`table` (a copy)."""
        return self.table.copy()

    def _header(self) -> str:
        return (
            f"{self.model}, {self.n_battles:,} battles; fragility = battles to "
            "remove so b ends ahead of a (greedy, verified by a refit: an upper "
            "bound on the fewest)"
        )

    def __repr__(self) -> str:
        body = _text.table_text(self.table.drop(columns="fragility_rows"))
        return f"PreferenceFragility: {_text.terminal(self._header())}\n{body}"

    def _repr_html_(self) -> str:
        shown = self.table.drop(columns="fragility_rows")
        return _text.result_html("PreferenceFragility", self._header(), shown)


# ================================================================ entry point
def preference_fragility(
    battles: pd.DataFrame,
    *,
    model: str = "bradley-terry",
    ties: str = "half",
    strength: dict | None = None,
    prior: float | None = None,
    max_remove: int | None = None,
    scale: float = 400.0,
    base: float = 10.0,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    verdict: str = "verdict",
) -> PreferenceFragility:
    """The fewest battles whose removal flips the top place and each adjacent pair.

    A greedy search on the battles' influence with exact refits (module
    :mod:`evalci.methods.preference.fragility`): every count it returns
    comes with the battles to drop, and dropping them and refitting puts
    ``b`` strictly ahead of ``a`` -- so the count is an **upper bound** on
    the smallest number. There is no lower bound;
    ``fragility_first_order`` is the influence approximation's estimate.

    Parameters
    ----------
    battles : pandas.DataFrame
        As in :func:`evalci.preference.bradley_terry`; never modified.
    model : {'bradley-terry', 'davidson'}
        The model ranked.
    ties : {'half', 'drop'}
        Bradley-Terry's ties (ignored by Davidson).
    strength : dict, optional
        Verdict weights, as in :func:`evalci.preference.preference_ci`; a
        removed battle takes its weight with it.
    prior : float or None
        Gaussian penalty on the log-strengths (0: maximum likelihood). None
        (default): maximum likelihood when every model wins and loses
        somewhere, else the weak prior 0.01, warned (as in
        :func:`evalci.preference.preference_ci`).
    max_remove : int, optional
        Give up on a pair after this many removals (default: no limit; at
        least 1).
    scale, base : float
        The Elo-like scale of ``gap`` (points per factor ``base`` of odds).
    model_a, model_b, winner, verdict : str
        Column names.

    Returns
    -------
    PreferenceFragility

    Examples
    --------
    >>> import evalci
    >>> battles = evalci.preference.simulate_battles(
    ...     {"a": 0.3, "b": 0.25, "c": -0.5}, n_prompts=100, rng=1)
    >>> frag = evalci.preference.preference_fragility(battles)
    >>> frag.table[["place", "a", "b", "fragility"]]
          place  a  b  fragility
    0       top  a  b         22
    1  adjacent  a  b         22
    2  adjacent  b  c         13
    """
    check_option(model, "model", _MODELS, describe="'bradley-terry' or 'davidson'")
    check_option(ties, "ties", _TIES, describe="'half' or 'drop'")
    if prior is not None:
        prior = check_number(prior, "prior", low=0, hint=", e.g. 0 or 0.01")
    scale = check_number(scale, "scale", low=0, low_open=True, hint=", e.g. 400")
    base = check_number(base, "base", low=1, low_open=True, hint=", e.g. 10")
    if max_remove is not None:
        max_remove = check_integer(max_remove, "max_remove", hint=" or None")
    ties = ties if model == "bradley-terry" else "half"
    drop = "drop" if ties == "drop" else "keep"
    cols = dict(model_a=model_a, model_b=model_b, winner=winner, verdict=verdict)
    data = encode(battles, strength=strength, ties=drop, **cols)
    wi, wj, t = split_counts(data.counts.reshape(1, -1), model, ties)
    prior = check_graph(data, wi[0], wj[0], t[0], model, prior)
    cell, weight = row_cells(battles, data, strength=strength, ties=drop, **cols)
    prob, order, starts = _problem(cell, weight, data, model, ties, prior, 0)
    theta, lam, _ = prob.refit(np.zeros(len(prob.kind_count), np.int64), None)
    theta, lam = theta[0], lam[0]
    cap = np.inf if max_remove is None else int(max_remove)
    rows = _rows(prob, theta, lam, cap)
    labels = battles.index
    per_point = scale / np.log(base)
    names = data.models
    out = []
    for place, a, b, removed, first in rows:
        took = None if removed is None else _taken(removed, order, starts)
        n = None if took is None else len(took)
        out.append(
            {
                "place": place,
                "a": names[a],
                "b": names[b],
                "gap": per_point * (theta[a] - theta[b]),
                "theta_gap": theta[a] - theta[b],
                "fragility": n,
                "fragility_share": np.nan if n is None else n / len(order),
                "fragility_rows": () if took is None else tuple(labels[took]),
                "fragility_first_order": first,
            }
        )
    table = pd.DataFrame(out)
    for c in ("fragility", "fragility_first_order"):
        table[c] = table[c].astype("Int64")
    return PreferenceFragility(table=table, model=model, n_battles=len(order))


def _rows(prob: _Problem, theta, lam, cap):
    """``(place, a, b, removed, first_order)``: the top place, then adjacent pairs."""
    ranking = np.argsort(-theta, kind="stable")
    zero = np.zeros(len(prob.kind_count), np.int64)
    cache: dict = {}

    def search(a, b, limit):
        if theta[a] - theta[b] <= FLIP_TOL:  # tied already: no removal needed
            return zero
        hit = cache.get((a, b))
        if hit is not None and (hit[0] is not None or hit[1] >= limit):
            found = hit[0]
            return found if found is not None and found.sum() <= limit else None
        found = _greedy(prob, a, b, theta, lam, limit)
        cache[(a, b)] = (found, limit)
        return found

    def first(a, b):
        delta = prob.influence(zero, theta, lam, a, b)
        return _first_order(delta, prob.kind_count, theta[a] - theta[b])

    top = ranking[0]
    # challengers by their first-order count, so a small count found early
    # caps the searches after it
    firsts = {b: first(top, b) for b in ranking[1:]}
    best, best_b = None, ranking[1]
    for b in sorted(
        ranking[1:], key=lambda m: np.inf if firsts[m] is None else firsts[m]
    ):
        limit = cap if best is None else min(cap, int(best.sum()) - 1)
        if limit < 1:
            break
        found = search(top, b, limit)
        if found is not None:
            best, best_b = found, b
    out = [("top", top, best_b, best, firsts[best_b])]
    for a, b in zip(ranking[:-1], ranking[1:], strict=True):
        out.append(("adjacent", a, b, search(a, b, cap), first(a, b)))
    return out


def _taken(removed, order, starts) -> np.ndarray:
    """Row positions of the removed battles: the first of each kind, in table order."""
    parts = [order[starts[k] : starts[k] + removed[k]] for k in np.flatnonzero(removed)]
    return np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
