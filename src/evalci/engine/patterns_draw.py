"""Drawing replicates on patterns: the draw plans and the replicate sums.

A :class:`DrawPlan` says how one unit's replicates are drawn from its
:class:`~evalci.engine.patterns_find.Patterns` (cluster, mixture or
conditional form); :func:`pattern_replicate_sums` draws them stream by
stream, multinomial (or :func:`poisson_pattern_sums`, Poisson(1) weights
per input). The law and the reproducibility contract are in
:mod:`evalci.engine.patterns`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalci._base.streams import streams
from evalci._base.text import as_written
from evalci.engine import resampling as _rs
from evalci.engine.blocks import block_tables
from evalci.engine.patterns_find import (
    Patterns,
    _first_index,
    _row_codes,
    find_patterns,
)
from evalci.engine.patterns_total import TotalLaw, total_law

__all__ = [
    "block_plan",
    "DrawPlan",
    "draw_plan",
    "pattern_replicate_sums",
    "poisson_pattern_sums",
    "replicate_sums",
]

#: The run-level strategies: their plans draw runs as well as inputs.
RUN_LEVEL = ("hierarchical", "single_draw")

#: The mixture form enumerates (pattern, joint run outcome) pairs: at most
#: this many statistics (pairs x G x m) are built, else the conditional form.
MIXTURE_BUDGET = 1 << 22


@dataclass(frozen=True)
class DrawPlan:
    """How the replicates of one unit are drawn on the pattern path.

    Every form first draws, per stratum, ``Multinomial(N_h, pvals_h)`` counts
    over ``categories``; a replicate's sums are ``counts @ stats``, plus, for
    the conditional form, run-level binomials per pattern.

    ``form`` is one of

    * ``"cluster"``: categories are the patterns, ``pvals = n_p / N_h``;
    * ``"mixture"`` (run level, exact): one resampled input contributes a
      random vector Z -- its pattern drawn with probability ``n_p / N_h``,
      then its runs (``k`` with replacement, or one) -- and the N_h draws are
      iid, so a replicate is ``Multinomial(N_h, P(Z = z))`` over the distinct
      values z of Z. For two-valued runs (0/1 data) hierarchical Z has at most
      ``k + 1`` values per group (``Binomial(k, c / k)`` correct runs) and
      single_draw at most 2. Used when the joint outcomes fit
      :data:`MIXTURE_BUDGET` and (hierarchical) every input has at most two
      distinct runs per group;
    * ``"total"`` (moving blocks, exact): a replicate's sums are fixed by one
      integer total drawn by inverse CDF from one uniform per replicate
      (:mod:`evalci.engine.patterns_total`); ``stats`` is ``(1, G, m)``, the
      sums at total 0, and ``strata`` is empty;
    * ``"conditional"`` (run level, exact, any data): categories are the
      patterns; then per group and pattern drawn ``W_p`` times the runs are
      ``Multinomial(W_p k, cnt / k)`` (hierarchical) or ``Multinomial(W_p,
      cnt / k)`` (single_draw) over its distinct runs, drawn as conditional
      binomials (for 0/1 data ``Binomial(W_p k, c / k)`` / ``Binomial(W_p,
      c / k)``).

    The form depends on the data only. Probabilities are float64 (as
    ``n_p / N_h`` is): "exact" means the law of the index path up to
    rounding of the probabilities (~1e-16).
    """

    form: str
    stats: np.ndarray  # (Q, G, m) contribution of one draw of each category
    strata: tuple  # per non-empty stratum: (lo, hi, N_h, pvals (hi - lo,))
    runs: tuple | None = None  # conditional form: per group (k, slots, rows)
    hierarchical: bool = False
    total: TotalLaw | None = None  # total form: the law of the one total

    @property
    def n_categories(self) -> int:
        return self.stats.shape[0]

    @property
    def n_draws(self) -> int:
        """Random variates per replicate (multinomial categories + binomials)."""
        if self.total is not None:
            return 1
        extra = 0
        if self.runs is not None:
            extra = sum(len(r) for _, slots, _ in self.runs for r, _, _ in slots[:-1])
        return self.n_categories + extra


def _strata(bounds: np.ndarray, sizes: np.ndarray, probs: np.ndarray) -> tuple:
    plan = []
    for h, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        if hi > lo:
            pv = probs[lo:hi]
            plan.append((int(lo), int(hi), int(sizes[h]), pv / pv.sum()))
    return tuple(plan)


def _stratum_sizes(patterns: Patterns) -> np.ndarray:
    return np.diff(patterns.input_bounds)


def _runs_plan(patterns: Patterns) -> tuple:
    """Per group: the value slots to draw and the patterns each slot is random for.

    The multinomial over an input's distinct runs is drawn as conditional
    binomials, slot by slot: slot s of pattern p takes ``Binomial(remaining,
    cnt_s / (k - cnt_0 - ... - cnt_{s-1}))``. Where that probability is 0 or 1
    the draw is deterministic (0, or all that remains) and is not made; which
    patterns are random depends on the data only.
    """
    values, cnt = patterns.values, patterns.value_counts
    k = cnt.sum(axis=2)  # (P, G)
    left = k[:, :, None] - (np.cumsum(cnt, axis=2) - cnt)  # runs not in slots < s
    cond = cnt / np.maximum(left, 1)
    plan = []
    for j in range(values.shape[1]):
        used = np.flatnonzero((cnt[:, j] > 0).any(axis=0))
        n_slots = int(used.max()) + 1 if used.size else 1
        slots = []
        for s in range(n_slots):
            c = cond[:, j, s]
            rand = np.flatnonzero((c > 0) & (c < 1))
            slots.append((rand, c[rand], np.flatnonzero(c == 1)))
        rows = np.ascontiguousarray(values[:, j, :n_slots].transpose(1, 0, 2))
        plan.append(
            (k[:, j], tuple(slots), rows.reshape(n_slots * values.shape[0], -1))
        )
    return tuple(plan)


def _group_outcomes(patterns: Patterns, j: int, hierarchical: bool):
    """Per pattern, the values of one draw's contribution to group j.

    Returns ``z`` (P, S, m) and ``prob`` (P, S) (zero where padded), or None
    when the group has more than two distinct runs per input (hierarchical).
    """
    vals = patterns.values[:, j]  # (P, V, m)
    cnt = patterns.value_counts[:, j]  # (P, V)
    used = np.flatnonzero((cnt > 0).any(axis=0))
    n_slots = int(used.max()) + 1 if used.size else 1
    vals, cnt = vals[:, :n_slots], cnt[:, :n_slots]
    k = cnt.sum(axis=1)  # (P,)
    if not hierarchical:  # one run: its value, with probability cnt / k
        return vals, cnt / k[:, None]
    if n_slots > 2:
        return None
    if n_slots == 1:  # every run of every input alike: k copies of it
        return (k[:, None] * vals[:, 0])[:, None, :], np.ones((len(k), 1))
    from scipy import stats  # the binomial pmf, accurate to ~1e-15

    y = np.arange(int(k.max()) + 1)  # runs landing on the second value
    prob = stats.binom.pmf(y[None, :], k[:, None], cnt[:, 1:2] / k[:, None])
    prob[y[None, :] > k[:, None]] = 0.0
    z = (
        y[None, :, None] * vals[:, 1:2]
        + (k[:, None] - y[None, :])[:, :, None] * vals[:, 0:1]
    )
    return z, prob


def _mixture_plan(patterns: Patterns, hierarchical: bool) -> DrawPlan | None:
    """The mixture form (see :class:`DrawPlan`), or None if it does not apply."""
    p, g, m = patterns.stats.shape
    outcomes = []
    size = p * g * m
    for j in range(g):
        out = _group_outcomes(patterns, j, hierarchical)
        if out is None:
            return None
        size *= out[1].shape[1]
        if size > MIXTURE_BUDGET:
            return None
        outcomes.append(out)
    # joint outcome of one draw: groups are independent given the pattern
    shape = (p,) + tuple(o[1].shape[1] for o in outcomes)
    prob = np.broadcast_to(
        (patterns.multiplicity / _stratum_sizes(patterns)[patterns.stratum]).reshape(
            (p,) + (1,) * g
        ),
        shape,
    ).copy()
    z = np.empty(shape + (g, m))
    for j, (zj, pj) in enumerate(outcomes):
        axes = [1] * g
        axes[j] = pj.shape[1]
        prob *= pj.reshape((p, *axes))
        z[..., j, :] = zj.reshape((p, *axes, m))
    stratum = np.broadcast_to(patterns.stratum.reshape((p,) + (1,) * g), shape)
    keep = prob.reshape(-1) > 0
    z = z.reshape(-1, g * m)[keep]
    prob = prob.reshape(-1)[keep]
    stratum = stratum.reshape(-1)[keep]
    # distinct outcomes per stratum, canonical (stratum, lexicographic) order
    n_strata = len(patterns.bounds) - 1
    code, n_cat = _row_codes(z, stratum if n_strata > 1 else None, n_strata)
    pvals = np.bincount(code, weights=prob, minlength=n_cat)
    first = _first_index(code, n_cat)
    cat_stratum = stratum[first]
    bounds = np.searchsorted(cat_stratum, np.arange(n_strata + 1))
    return DrawPlan(
        form="mixture",
        stats=z[first].reshape(n_cat, g, m),
        strata=_strata(bounds, _stratum_sizes(patterns), pvals),
        hierarchical=hierarchical,
    )


def draw_plan(patterns: Patterns, strategy: str, form: str | None = None) -> DrawPlan:
    """The :class:`DrawPlan` for ``strategy`` (data shape only; O(P) to build).

    ``strategy`` is ``"cluster"`` (also for ``iid`` / ``mode_aggregate``
    after the engine's mapping), ``"hierarchical"`` or ``"single_draw"``;
    the run-level ones need ``patterns`` from :func:`run_level_patterns` or
    :func:`binary_run_patterns`. ``form="conditional"`` forces the
    conditional run-level form (for tests and comparisons); by default the
    mixture form is used where it applies.
    """
    if strategy in RUN_LEVEL:
        if patterns.values is None:
            raise ValueError(
                f"strategy={as_written(strategy)} on patterns needs run_level_patterns(unit), "
                "not find_patterns(T, ...)."
            )
        hierarchical = strategy == "hierarchical"
        plan = None if form == "conditional" else _mixture_plan(patterns, hierarchical)
        if plan is not None:
            return plan
        return DrawPlan(
            form="conditional",
            stats=patterns.stats,
            strata=_strata(
                patterns.bounds, _stratum_sizes(patterns), patterns.multiplicity * 1.0
            ),
            runs=_runs_plan(patterns),
            hierarchical=hierarchical,
        )
    if strategy != "cluster":
        raise ValueError(
            f"unknown strategy {as_written(strategy)} for the pattern path."
        )
    return DrawPlan(
        form="cluster",
        stats=patterns.stats,
        strata=_strata(
            patterns.bounds, _stratum_sizes(patterns), patterns.multiplicity * 1.0
        ),
    )


def block_plan(T: np.ndarray, length: int) -> DrawPlan | None:
    """The moving-block bootstrap on patterns: a replicate is a sum of block sums.

    A moving-block replicate (:func:`evalci.engine.resampling.draw_moving_blocks`)
    concatenates ``nb = ceil(N / L)`` blocks of ``L`` consecutive inputs, their
    starts iid uniform on ``0 .. N - L``, truncated to N inputs: its sums are
    the sums of ``nb - 1`` full blocks and of the first ``r = N - (nb - 1) L``
    inputs of the last. A sum does not depend on the order of its terms, so
    the replicate is ``Multinomial(nb - 1, n_p / S)`` counts over the P
    distinct full-block sums (``n_p`` of the ``S = N - L + 1`` starts give
    block sum p) times those sums, plus one draw over the distinct partial
    sums (one stratum more, or ``nb`` full blocks when ``r = L``). Same law as
    the index path, at O(B P) instead of O(B N).

    When the block sums vary in one column only (one system with equal runs
    per input, e.g. a tidy 0/1 table), the replicate is fixed by that
    column's total, whose law (the convolution of the per-draw laws) is
    computed once: the ``"total"`` form, one uniform per replicate instead of
    a multinomial over the distinct block sums (where its FFT is cheaper:
    :data:`~evalci.engine.patterns_total.TOTAL_RATIO`).

    Block sums are exact only for whole-number statistics (0/1 sums, counts),
    which is also where they repeat: other statistics (None) take the index
    path. ``L = 1`` is the cluster plan of ``find_patterns(T)`` bit for bit.
    """
    T = np.asarray(T, dtype=float)
    n, g, m = T.shape
    if length == 1:
        found = find_patterns(T, np.array([0, n]))
        return draw_plan(found, "cluster")
    flat = T.reshape(n, g * m)
    big = float(np.abs(flat).max()) if flat.size else 0.0
    if big * n >= 2.0**53 or not np.array_equal(flat, np.trunc(flat)):
        return None
    full, last = block_tables(flat, length)  # whole numbers: exact sums
    n_starts, n_blocks = n - length + 1, -(-n // length)
    partial = n_blocks * length > n  # a truncated last block
    parts = [(full, n_blocks - partial)] + ([(last, 1)] if partial else [])
    law = total_law(parts)
    if law is not None:
        return DrawPlan(
            form="total", stats=law.base.reshape(1, g, m), strata=(), total=law
        )
    stats, strata, lo = [], [], 0
    for sums, draws in parts:
        found = find_patterns(sums.reshape(n_starts, g, m), np.array([0, n_starts]))
        pv = found.multiplicity * 1.0
        strata.append((lo, lo + found.n_patterns, int(draws), pv / pv.sum()))
        stats.append(found.stats)
        lo += found.n_patterns
    return DrawPlan(form="cluster", stats=np.concatenate(stats), strata=tuple(strata))


def _category_counts(gen, strata: tuple, n_cat: int, n_rep: int) -> np.ndarray:
    """Counts ``(n_rep, Q)``: per stratum in order, Multinomial(N_h, pvals_h)."""
    if len(strata) == 1 and strata[0][1] - strata[0][0] == n_cat:
        return gen.multinomial(strata[0][2], strata[0][3], size=n_rep)
    w = np.zeros((n_rep, n_cat), dtype=np.int64)
    for lo, hi, n_h, pvals in strata:
        w[:, lo:hi] = gen.multinomial(n_h, pvals, size=n_rep)
    return w


def _conditional_sums(gen, w, runs, hierarchical: bool, out) -> None:
    """Fill ``out`` (n_rep, G, m) with run-level sums for pattern counts ``w``."""
    n_rep, p = w.shape
    for j, (k, slots, rows) in enumerate(runs):
        remaining = w * k if hierarchical else w.copy()
        hits = np.zeros((n_rep, len(slots), p))
        for s, (rand, probs, certain) in enumerate(slots):
            if s == len(slots) - 1:  # the last slot takes what remains
                hits[:, s] = remaining
                break
            if rand.size:
                drawn = gen.binomial(remaining[:, rand], probs)
                hits[:, s, rand] = drawn
                remaining[:, rand] -= drawn
            if certain.size:
                hits[:, s, certain] = remaining[:, certain]
                remaining[:, certain] = 0
        np.matmul(hits.reshape(n_rep, -1), rows, out=out[:, j, :])


def pattern_replicate_sums(
    patterns: Patterns,
    root: np.random.SeedSequence,
    unit_index: int,
    strategy: str,
    first: int,
    n_streams: int,
    *,
    plan: DrawPlan | None = None,
    weights: str = "multinomial",
) -> np.ndarray:
    """Summed statistics ``(n_streams * STREAM_SIZE, G, m)`` for a block of streams.

    The pattern analogue of :func:`evalci.engine.tiles.stream_replicate_sums`:
    stream ``first + s`` gives replicates ``(first + s) * 64 ...`` whatever
    the blocking. ``plan`` (from :func:`draw_plan`, built here if not given)
    may be computed once and shared by the blocks of a unit.
    ``weights="poisson"`` (cluster plan only): see :func:`poisson_pattern_sums`.
    """
    _rs.check_weights(weights, strategy)
    if plan is None:
        plan = draw_plan(patterns, strategy)
    if weights == "poisson":
        return poisson_pattern_sums(patterns, root, unit_index, first, n_streams, plan)
    g, m = patterns.stats.shape[1:]
    q = plan.n_categories
    size = _rs.STREAM_SIZE
    out = np.empty((n_streams * size, g, m))
    flat_stats = plan.stats.reshape(q, g * m)
    gens = streams(root, (_rs._BOOT, unit_index), first, n_streams)
    if plan.total is not None:  # one uniform per replicate, by inverse CDF
        u = np.empty(n_streams * size)
        for s, gen in enumerate(gens):
            gen.random(out=u[s * size : (s + 1) * size])
        plan.total.sums(u, out=out.reshape(-1, g * m))
        return out
    if plan.runs is None and _exact_products(plan):
        _whole_number_sums(gens, plan, n_streams, out.reshape(-1, g * m))
        return out
    for s, gen in enumerate(gens):
        w = _category_counts(gen, plan.strata, q, size)
        block = out[s * size : (s + 1) * size]
        if plan.runs is not None:
            _conditional_sums(gen, w, plan.runs, plan.hierarchical, block)
        else:
            np.matmul(w.astype(float), flat_stats, out=block.reshape(size, g * m))
    return out


def _exact_products(plan: DrawPlan) -> bool:
    """Whether ``counts @ stats`` is exact: whole-number statistics whose sums
    over a replicate's draws stay below 2**53 (then any blocking of the
    product gives the same bits)."""
    x = plan.stats
    if x.size == 0:
        return False
    draws = sum(n_h for _, _, n_h, _ in plan.strata)
    big = float(np.abs(x).max())
    return big * max(draws, 1) < 2.0**53 and bool(np.array_equal(x, np.trunc(x)))


def _whole_number_sums(gens, plan: DrawPlan, n_streams: int, out: np.ndarray) -> None:
    """Fill ``out`` (n_streams * 64, G m) with ``counts @ stats``, one product
    per chunk of streams (about 4 MB of counts) instead of one per stream."""
    q, size = plan.n_categories, _rs.STREAM_SIZE
    flat_stats = plan.stats.reshape(q, -1)
    per = max(1, (1 << 19) // (size * q))
    w = np.empty((per * size, q), dtype=np.int64)
    for s, gen in enumerate(gens):
        r = (s % per) * size
        w[r : r + size] = _category_counts(gen, plan.strata, q, size)
        if s % per == per - 1 or s == n_streams - 1:
            lo = (s - s % per) * size
            rows = r + size
            np.matmul(w[:rows].astype(float), flat_stats, out=out[lo : lo + rows])


def poisson_pattern_sums(
    patterns: Patterns,
    root: np.random.SeedSequence,
    unit_index: int,
    first: int,
    n_streams: int,
    plan: DrawPlan | None = None,
) -> np.ndarray:
    """Replicate sums with Poisson(1) weights per input, drawn per pattern.

    The sum of independent Poisson(1) weights over the ``n_p`` inputs of a
    pattern is Poisson(``n_p``): the same law as the index path's
    (:func:`evalci.engine.tiles.poisson_piece_sums`), other numbers. Stream
    ``(POISSON, unit_index, first + s)`` draws
    ``poisson(multiplicity, (STREAM_SIZE, P))``; the sums are those counts
    times the pattern statistics. Strata do not change Poisson weights.
    Cluster plans only (run-level plans resample runs too).

    Examples
    --------
    >>> import numpy as np
    >>> from evalci.engine.patterns import find_patterns, poisson_pattern_sums
    >>> T = np.array([[[1.0, 1.0]], [[0.0, 1.0]], [[1.0, 1.0]]])
    >>> found = find_patterns(T, np.array([0, 3]))
    >>> poisson_pattern_sums(found, np.random.SeedSequence(0), 0, 0, 2).shape
    (128, 1, 2)
    """
    if plan is not None and plan.form != "cluster":
        raise ValueError(
            "`weights='poisson'` needs the cluster plan (draw_plan(..., 'cluster')); "
            f"got a {as_written(plan.form)} plan; use weights='multinomial' for run-level "
            "strategies."
        )
    p, g, m = patterns.stats.shape
    size = _rs.STREAM_SIZE
    lam = patterns.multiplicity.astype(float)
    flat_stats = patterns.stats.reshape(p, g * m)
    out = np.empty((n_streams * size, g * m))
    for s, gen in enumerate(
        streams(root, (_rs._POISSON, unit_index), first, n_streams)
    ):
        w = gen.poisson(lam, (size, p)).astype(float)
        np.matmul(w, flat_stats, out=out[s * size : (s + 1) * size])
    return out.reshape(n_streams * size, g, m)


def replicate_sums(
    patterns: Patterns,
    root: np.random.SeedSequence,
    unit_index: int,
    strategy: str,
    n_resamples: int,
    *,
    plan: DrawPlan | None = None,
    weights: str = "multinomial",
) -> np.ndarray:
    """All replicate sums ``(n_resamples, G, m)``: one block (memory is O(B P))."""
    total = _rs.n_streams_for(n_resamples)
    sums = pattern_replicate_sums(
        patterns, root, unit_index, strategy, 0, total, plan=plan, weights=weights
    )
    return sums[:n_resamples]
