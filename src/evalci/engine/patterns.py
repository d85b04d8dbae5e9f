"""Patterns: the exact fast path of the cluster bootstrap (issue 10).

Inputs whose statistics rows are equal are exchangeable: a cluster resample
of stratum h (``N_h`` inputs drawn uniformly with replacement) is fully
described by how many copies of each distinct row ("pattern") it drew, and
those counts are ``Multinomial(N_h, n_p / N_h)`` over the patterns of the
stratum (``n_p`` = multiplicity). Same law as the index kernel in
:mod:`evalci.engine.resampling`, at O(N + B P) instead of O(B N). A replicate's sums
are ``counts @ pattern_stats``. Groups (systems) of one draw unit share draws,
so patterns are *joint*: distinct rows of the flattened ``(G * m)``
statistics, and comparisons stay paired.

Run-level strategies are exact too, for any data (:class:`DrawPlan`). One
resampled input contributes a random vector: its pattern (probability
``n_p / N_h``), then per group ``k`` runs drawn with replacement from its
``k`` runs (``hierarchical``) or one run (``single_draw``). The N_h draws of a
stratum are iid, so

* the *mixture* form draws ``Multinomial(N_h, P(Z = z))`` over the distinct
  values z of one draw's contribution Z. For 0/1 data Z has at most
  ``k + 1`` values per group (``Binomial(k, c / k)`` correct runs;
  ``Binomial(W k, c / k)`` of the issue, summed over the W copies) or 2
  (single_draw), so a run-level replicate costs what a cluster one does;
* the *conditional* form (any number of distinct runs, many groups) draws the
  pattern counts W, then per pattern and group ``Multinomial(W k, cnt / k)``
  (or ``(W, cnt / k)``) over its distinct runs, as conditional binomials.

Run-level patterns come from the unit's weighted run rows
(:func:`run_level_patterns`, O(N k)), or, for two-valued rows (0/1 data),
from per-input counts (:func:`binary_run_patterns`, O(N)); both use the rows
*as the index path weights them*, so the estimand is identical.

Reproducibility contract (as in :mod:`evalci.engine.resampling`): replicate ``b``
comes from stream ``stream(root, _BOOT, unit_index, b // STREAM_SIZE)``,
whatever the blocking. Within one stream the draws are, in order:

1. for each stratum in order, ``multinomial(N_h, pvals_h, size=64)`` over its
   categories in canonical order (patterns, or the mixture's outcomes);
2. conditional form only: for each group in order, for each value slot
   ``v = 0 .. V_g - 2`` in order, one ``binomial(remaining, p_v)`` over the
   patterns for which that slot is random (the last slot takes what
   remains).

Moving blocks (:func:`block_plan`) draw ``Multinomial(nb - 1)`` over the
distinct full-block sums, then one draw over the distinct partial sums;
or, where the block sums vary in one column only (the ``"total"`` form,
:mod:`evalci.engine.patterns_total`), ``random(64)``: one uniform per
replicate, its total the inverse CDF of the exact law at it.

Patterns are found in a canonical order -- stratum, then lexicographic on the
values -- so results do not depend on the order of the inputs. The draws of
the pattern path differ from the index path's (same law, other numbers), so
which path runs must depend on the data's shape only
(:func:`should_use_patterns`), never on scheduling.

The modules: :mod:`evalci.engine.patterns_find` finds the patterns,
:mod:`evalci.engine.patterns_draw` draws replicates on them; this one
chooses between the pattern and index paths (:func:`should_use_patterns`),
gives the exact jackknife on patterns and the run-level patterns of a cube's
draw unit (:func:`run_patterns`, from counts where no run row is read), and
re-exports the kernel.
"""

from __future__ import annotations

import numpy as np

from evalci.engine.cube import unit_cells
from evalci.engine.patterns_draw import (
    RUN_LEVEL,  # noqa: F401  (passes reads patterns.RUN_LEVEL)
    DrawPlan,
    block_plan,
    draw_plan,
    pattern_replicate_sums,
    poisson_pattern_sums,
    replicate_sums,
)
from evalci.engine.patterns_find import (
    Patterns,
    binary_counts,
    binary_run_patterns,
    find_patterns,
    run_level_exact,
    run_level_patterns,
    two_values,
)

__all__ = [
    "Patterns",
    "find_patterns",
    "run_level_patterns",
    "run_level_exact",
    "binary_run_patterns",
    "two_values",
    "binary_counts",
    "should_use_patterns",
    "DrawPlan",
    "block_plan",
    "draw_plan",
    "pattern_replicate_sums",
    "poisson_pattern_sums",
    "replicate_sums",
    "pattern_jackknife",
    "expand_jackknife",
    "pattern_acceleration",
    "run_patterns",
    "counts_suffice",
]

# ------------------------------------------------------------------ choosing
#: Patterns when ``P * PATTERN_RATIO <= N`` (see :func:`should_use_patterns`).
PATTERN_RATIO = 32


def should_use_patterns(
    n_inputs: int, n_patterns: int, n_columns: int, *, n_runs: int = 0
) -> bool:
    """Whether the pattern path should resample this unit (data shape only).

    ``n_patterns`` is the number of random variates one replicate draws on
    the pattern path -- :attr:`DrawPlan.n_draws`: P for cluster, the mixture's
    categories, or P plus the run binomials for the conditional form --
    ``n_columns`` is ``G * m``, and ``n_runs`` the run draws the index path
    makes per replicate on top of its N cluster draws: 0 for cluster, the
    unit's total runs ``sum(k)`` over groups for hierarchical, ``N * G`` for
    single_draw. The rule is ``n_patterns * 32 <= n_inputs + n_runs``.

    Per replicate the index kernel costs N integer draws plus N gathers per
    column (or a count and an ``N x cols`` product); the pattern path costs
    about P binomial variates (numpy's multinomial: ~70-200 ns each, since
    every one recomputes its set-up) plus a ``P x cols`` product. Measured
    (``benchmarks/bench_patterns.py --crossover``: cluster, B=640, inputs
    spread uniformly over P rows, N = 2,000 and 20,000, 2 / 4 / 20 columns,
    2 shared cores), index time / pattern time was

    ======  =========  =========  =========  =========
    P/N     1/256      1/64       1/32       1/16
    ======  =========  =========  =========  =========
    ratio   7 - 22x    2.9 - 7x   1.2 - 2.6x 0.6 - 1.3x
    ======  =========  =========  =========  =========

    so the crossover is at P/N ~ 1/25 (2 columns) to ~1/12 (20 columns).
    ``P <= N / 32`` keeps every case on the faster path (with at least 1.2x at
    the boundary in every configuration measured); one 0/1 system with k=5
    (P <= 6) takes patterns from N = 192, two systems (P <= 36) from N = 1,152.
    Run-level index draws cost ``N + n_runs`` variates per replicate (each
    also gathering a run row, so dearer than a cluster draw): the same ratio
    is conservative there. Measured at N=1,000, B=2,000: two systems,
    hierarchical mixture (36 draws vs 11,000) 10x faster than the index path,
    single_draw (4 vs 3,000) 23x; ten systems, conditional form (8,874 draws
    vs 51,000 / 11,000): 0.6x / 0.2x, and the rule picks the index path.
    ``n_columns`` is kept for a column-aware rule; the measured gain from it
    was not worth a second constant. Re-measured after issue 39 made the
    index product of whole numbers exact in float32 (ten systems of 0..5
    correct runs, N = 20,000 and 100,000): patterns 1.15-1.9x faster at
    P/N = 1/32, 0.7x at 1/16, so the break-even still lies between and the
    rule stands.

    The rule reads the data's shape only, never the number of resamples,
    blocks or workers, so that a Dask schedule and the numpy path take the
    same path and give the same replicates.
    """
    del n_columns
    return n_inputs >= 2 and n_patterns * PATTERN_RATIO <= n_inputs + n_runs


# ------------------------------------------------------------------ jackknife
def pattern_jackknife(
    patterns: Patterns, finalize, total: np.ndarray | None = None
) -> np.ndarray:
    """Leave-one-input-out values per pattern, ``(P, G)``.

    Leaving out any input of pattern p gives ``finalize(total - stats[p])``.
    Pass ``total = unit.T.sum(axis=0)`` (what ``engine._fast_unit`` uses) to make
    ``expand_jackknife`` bit-identical to the index path's jackknife; by
    default it is ``multiplicity @ stats`` (equal up to rounding).
    """
    if total is None:
        total = np.tensordot(
            patterns.multiplicity.astype(float), patterns.stats, axes=1
        )
    return finalize(np.asarray(total)[None] - patterns.stats)


def expand_jackknife(jack: np.ndarray, patterns: Patterns) -> np.ndarray:
    """The full ``(N, G)`` jackknife in the unit's input order: O(N)."""
    return jack[patterns.inverse]


def pattern_acceleration(jack: np.ndarray, patterns: Patterns) -> np.ndarray:
    """BCa acceleration from pattern jackknife values ``(..., P)``.

    Equals :func:`evalci.engine.intervals.acceleration` on the full ``(..., N)``
    jackknife with the unit's strata (every input of pattern p has value
    ``jack[..., p]``; sums over inputs become sums weighted by multiplicity),
    to rounding. Deviations are taken from the stratum's first pattern, so a
    stratum whose values are all equal contributes exactly 0 (the index
    formula can leave ~1e-17 noise there, which is meaningless anyway).
    """
    jack = np.asarray(jack, dtype=float)
    num = np.zeros(jack.shape[:-1])
    den = np.zeros(jack.shape[:-1])
    mult = patterns.multiplicity.astype(float)
    b = patterns.bounds
    for lo, hi in zip(b[:-1], b[1:], strict=True):
        w = mult[lo:hi]
        nh = w.sum()
        if nh < 2:
            continue
        d = jack[..., lo:hi] - jack[..., lo : lo + 1]
        lval = (nh - 1) * ((d * w).sum(axis=-1, keepdims=True) / nh - d)
        num += (w * lval**3).sum(axis=-1) / nh**3
        den += (w * lval**2).sum(axis=-1) / nh**2
    with np.errstate(invalid="ignore", divide="ignore"):
        a = num / (6.0 * den**1.5)
    return np.where(den > 0, a, 0.0)


# ------------------------------------------------ run-level patterns of a cube
def run_patterns(unit, groups, clusters, kk, cube, strategy: str, weight: str, metric):
    """Run-level patterns: from per-input counts when every group's runs take
    two values (0/1 data, counts tables), else from the unit's run rows.

    ``unit``, ``groups`` and ``clusters`` are a draw unit of ``cube``
    (:meth:`~evalci.engine.cube.Cube.units`), ``kk`` (N_u, G_u) the runs of
    each of its inputs and groups; ``metric`` is the Metric resampled.
    """
    if cube.runs is not None:  # counts table: a run is [0, 1] or [1, 1]
        low = np.tile([0.0, 1.0], (len(groups), 1))
        high = np.tile([1.0, 1.0], (len(groups), 1))
    else:
        pairs = cube.two_valued()
        if pairs is None:  # NaN or -0.0: the group's rows in canonical order
            pairs = [two_values(cube.stats[cube.row_group == g]) for g in groups]
        else:
            pairs = [pairs[g] for g in groups]
        if any(v is None for v in pairs):
            return run_level_patterns(unit)
        low, high = (np.array(v) for v in zip(*pairs, strict=True))
    sums = unit_cells(cube.cell_sums(), clusters, groups)  # raw, unweighted
    c = binary_counts(sums, kk, low, high)
    # the factor Cube.units applies to each run row (exact grid at equal k)
    constant = metric.scale_invariant & (kk == kk[:1]).all(axis=0)
    if constant.all():  # a factor of 1 everywhere: the same values and patterns
        scale = None
    elif strategy == "hierarchical" and weight == "input":
        scale = np.where(constant, 1.0, 1.0 / kk)
    elif strategy == "single_draw" and weight == "run":
        scale = np.where(constant, 1.0, kk.astype(float))
    else:
        scale = None
    return binary_run_patterns(unit.T, c, kk, low, high, unit.strata_bounds, scale)


def counts_suffice(cube) -> bool:
    """Whether the run-level patterns of every group come from per-input
    counts (:func:`run_patterns`), which read no run row: a counts table, or
    groups of two-valued rows that :meth:`Cube.two_valued` reads in any order."""
    if cube.runs is not None:
        return True
    pairs = cube.two_valued()
    return pairs is not None and all(v is not None for v in pairs)
