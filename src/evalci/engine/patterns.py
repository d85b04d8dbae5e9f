"""Patterns: the exact fast path of the cluster bootstrap (issue 10).

Inputs whose statistics rows are equal are exchangeable: a cluster resample
of stratum h (``N_h`` inputs drawn uniformly with replacement) is fully
described by how many copies of each distinct row ("pattern") it drew, and
those counts are ``Multinomial(N_h, n_p / N_h)`` over the patterns of the
stratum (``n_p`` = multiplicity). Same law as the index kernel in
:mod:`evalci.resampling`, at O(N + B P) instead of O(B N). A replicate's sums
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

Reproducibility contract (as in :mod:`evalci.resampling`): replicate ``b``
comes from stream ``stream(root, _BOOT, unit_index, b // STREAM_SIZE)``,
whatever the blocking. Within one stream the draws are, in order:

1. for each stratum in order, ``multinomial(N_h, pvals_h, size=64)`` over its
   categories in canonical order (patterns, or the mixture's outcomes);
2. conditional form only: for each group in order, for each value slot
   ``v = 0 .. V_g - 2`` in order, one ``binomial(remaining, p_v)`` over the
   patterns for which that slot is random (the last slot takes what
   remains).

Patterns are found in a canonical order -- stratum, then lexicographic on the
values -- so results do not depend on the order of the inputs. The draws of
the pattern path differ from the index path's (same law, other numbers), so
which path runs must depend on the data's shape only
(:func:`should_use_patterns`), never on scheduling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci.engine import resampling as _rs

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
    "draw_plan",
    "pattern_replicate_sums",
    "poisson_pattern_sums",
    "replicate_sums",
    "pattern_jackknife",
    "expand_jackknife",
    "pattern_acceleration",
]

RUN_LEVEL = ("hierarchical", "single_draw")
_INT64_MAX = np.iinfo(np.int64).max
# Integer-valued columns with at most this range are coded as value - min
# (O(N), no hashing); others are factorised.
_SMALL_RANGE = 1 << 16


@dataclass(frozen=True)
class Patterns:
    """Distinct statistics rows of a draw unit, per stratum, in canonical order.

    Attributes
    ----------
    stats : (P, G, m) float
        The cluster-level statistics ``T`` of each pattern (a representative
        input's row, bit for bit).
    stratum : (P,) int64
        Stratum (position in the unit's ``strata_bounds``) of each pattern.
    multiplicity : (P,) int64
        How many inputs share each pattern (``n_p``); sums to N.
    inverse : (N,) int64
        Pattern id of each input, in the unit's input order:
        ``stats[inverse]`` equals ``T``.
    bounds : (H + 1,) int64
        Pattern offsets of each stratum (patterns are sorted by stratum first).
    values : (P, G, V, m) float, optional
        Run level only: the distinct (weighted) run rows of each pattern and
        group, sorted; slots past a group's last value are zero-padded.
    value_counts : (P, G, V) int64, optional
        Run level only: how many of the input's ``k`` runs hold each value
        (zero for padding); ``value_counts.sum(-1)`` is ``k``.
    """

    stats: np.ndarray
    stratum: np.ndarray
    multiplicity: np.ndarray
    inverse: np.ndarray
    bounds: np.ndarray
    values: np.ndarray | None = None
    value_counts: np.ndarray | None = None

    @property
    def n_patterns(self) -> int:
        return self.stats.shape[0]

    @property
    def n_inputs(self) -> int:
        return self.inverse.shape[0]

    @property
    def input_bounds(self) -> np.ndarray:
        """Input offsets of each stratum (the unit's ``strata_bounds``)."""
        n_strata = len(self.bounds) - 1
        sizes = np.bincount(self.stratum, self.multiplicity, minlength=n_strata)
        return np.concatenate([[0], np.cumsum(sizes.astype(np.int64))])


# ------------------------------------------------------------------ finding
def _sorted_codes(col: np.ndarray) -> tuple[np.ndarray | None, int]:
    """Codes of ``col`` that order like its values, and their number (radix).

    A constant column gives ``(None, 1)``: it adds no digit.

    Integer-valued columns of small range are coded ``value - min`` (codes may
    skip unused values; order is all that matters); others are factorised by
    hashing (O(N)) and the few uniques sorted. NaN sorts last.
    """
    lo, hi = col.min(), col.max()
    if lo == hi:  # constant column (the common "1" or "k" column): no digit
        return None, 1
    if col.dtype.kind in "iu" and hi - lo <= _SMALL_RANGE:  # integer counts
        return col.astype(np.int64) - np.int64(lo), int(hi - lo) + 1
    if np.isfinite(lo) and np.isfinite(hi) and hi - lo <= _SMALL_RANGE:
        shifted = col - lo if lo != 0 else col
        codes = shifted.astype(np.int64)
        if (codes == shifted).all():
            return codes, int(hi - lo) + 1
    codes, uniques = pd.factorize(col, use_na_sentinel=False)
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[np.argsort(np.asarray(uniques), kind="stable")] = np.arange(len(uniques))
    return rank[codes], len(uniques)


def _compress(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Renumber an int64 key densely, keeping its order."""
    codes, uniques = pd.factorize(key)
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[np.argsort(uniques, kind="stable")] = np.arange(len(uniques))
    return rank[codes], len(uniques)


def _row_codes(x, lead: np.ndarray | None = None, radix0: int = 1):
    """One int64 code per row of ``x`` (R, c), ordered lexicographically.

    ``x`` is a 2-D array or a list of its c columns (1-D arrays of length R).

    ``lead`` (R,) with ``radix0`` values is the most significant digit. The
    mixed-radix key is re-numbered densely whenever the next digit could
    overflow int64. Returns dense codes ``0 .. U-1`` and U.
    """
    columns = list(x.T) if isinstance(x, np.ndarray) else list(x)
    n = len(lead) if lead is not None else len(columns[0]) if columns else 0
    key = None if lead is None else lead.astype(np.int64)
    radix = radix0
    for col in columns:
        codes, r = _sorted_codes(col)
        if r == 1:
            continue
        if key is None:
            key, radix = codes, r
            continue
        if radix * r > _INT64_MAX:
            key, radix = _compress(key)
        key *= r
        key += codes
        radix *= r
    if key is None:
        return np.zeros(n, dtype=np.int64), 1
    return _dense(key, radix)


def _dense(key: np.ndarray, radix: int) -> tuple[np.ndarray, int]:
    n = key.shape[0]
    if radix <= max(4 * n, 1 << 16):  # counting is O(N + radix)
        present = np.bincount(key, minlength=radix) > 0
        if present.all():
            return key, radix
        lut = np.cumsum(present) - 1
        return lut[key], int(present.sum())
    return _compress(key)


def _first_index(inverse: np.ndarray, n_codes: int) -> np.ndarray:
    """Position of the first occurrence of each code ``0 .. n_codes - 1``."""
    first = np.empty(n_codes, dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(inverse) - 1, -1, -1)
    return first


def _group_rows(key, bounds: np.ndarray):
    """Canonical distinct rows of ``key`` (N, c) per stratum.

    ``key`` is a 2-D array or a list of its columns.

    Returns ``inverse`` (N,), ``first`` (P,) (first input of each pattern),
    ``multiplicity`` (P,), the stratum of each pattern and pattern bounds.
    """
    n_strata = len(bounds) - 1
    lead = None
    if n_strata > 1:  # the stratum is the most significant digit
        lead = np.repeat(np.arange(n_strata, dtype=np.int64), np.diff(bounds))
    inverse, n_pat = _row_codes(key, lead, n_strata)
    multiplicity = np.bincount(inverse, minlength=n_pat).astype(np.int64)
    first = _first_index(inverse, n_pat)
    p_stratum = (np.searchsorted(bounds, first, side="right") - 1).astype(np.int64)
    p_bounds = np.searchsorted(p_stratum, np.arange(n_strata + 1)).astype(np.int64)
    return inverse, first, multiplicity, p_stratum, p_bounds


def find_patterns(T: np.ndarray, strata_bounds: np.ndarray) -> Patterns:
    """Distinct rows of ``T`` (N, G, m) per stratum, in canonical order.

    Patterns are ordered by stratum, then lexicographically by the flattened
    ``(G * m)`` values, so a permutation of the inputs (within strata) gives
    the same patterns and multiplicities. O(N) for integer-valued statistics
    of small range (0/1 sums), O(N) hashing plus a sort of the distinct values
    otherwise.

    Returns
    -------
    Patterns
        ``stats`` (P, G, m), ``stratum`` (P,), ``multiplicity`` (P,),
        ``inverse`` (N,) and ``bounds`` (H + 1,).
    """
    T = np.asarray(T, dtype=float)
    bounds = np.asarray(strata_bounds, dtype=np.int64)
    inverse, first, mult, stratum, p_bounds = _group_rows(
        T.reshape(T.shape[0], -1), bounds
    )
    return Patterns(
        stats=T[first],
        stratum=stratum,
        multiplicity=mult,
        inverse=inverse,
        bounds=p_bounds,
    )


def run_level_exact(unit: _rs.Unit) -> bool:
    """Whether ``unit`` carries what the exact run-level forms need.

    The forms need, per group, every run row with its (weighted) statistics
    and the rows of each input: ``unit.starts``, ``unit.counts`` and
    ``unit.rows`` as :meth:`evalci._data.Cube.units` builds them for
    ``strategy="hierarchical"`` / ``"single_draw"`` with a sufficient-statistic
    metric. Given those, the multinomial over an input's distinct rows is
    exact for any data; it is *fast* when inputs have few distinct rows
    (0/1 data: at most 2), which :func:`should_use_patterns` judges from P.
    """
    g = unit.T.shape[1]
    return len(unit.rows) == g and len(unit.starts) == g and len(unit.counts) == g


def _input_of_rows(starts: np.ndarray, k: np.ndarray, n_rows: int) -> np.ndarray:
    """Input of each row, when the inputs' row ranges tile ``0 .. n_rows``.

    ``Cube.units`` lays each group's rows out input after input (in cluster
    code order), so this is one repeat; otherwise None.
    """
    order = np.argsort(starts, kind="stable")
    s, kk = starts[order], k[order]
    if len(s) and (
        s[0] != 0 or s[-1] + kk[-1] != n_rows or (s[1:] != s[:-1] + kk[:-1]).any()
    ):
        return None
    return np.repeat(order, kk)


def _run_counts(rows, starts, counts):
    """Per input, how many of its runs hold each distinct row value.

    Returns ``(per, uniq)``: ``per`` (N, C) int64 counts over the C distinct
    rows ``uniq`` (C, m) of the group (sorted), or None when N * C would be
    too large (many distinct rows: continuous scores).
    """
    n = len(starts)
    k = np.asarray(counts, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    row_code, n_codes = _row_codes(rows)
    if n * n_codes > max(4 * rows.shape[0], 1 << 20):
        return None
    inp = _input_of_rows(starts, k, rows.shape[0])
    code = row_code
    if inp is None:  # general layout: gather each input's rows
        inp = np.repeat(np.arange(n, dtype=np.int64), k)
        ridx = np.repeat(starts - np.cumsum(k) + k, k) + np.arange(int(k.sum()))
        code = row_code[ridx]
    inp *= n_codes
    inp += code
    per = np.bincount(inp, minlength=n * n_codes).reshape(n, n_codes)
    # one row of each distinct value: search the rows of an input that has it
    owner = (per > 0).argmax(axis=0)
    uniq = np.empty((n_codes, rows.shape[1]))
    for c, i in enumerate(owner):
        seg = row_code[starts[i] : starts[i] + k[i]]
        uniq[c] = rows[starts[i] + int(np.flatnonzero(seg == c)[0])]
    return per, uniq


def _distinct_runs(rows, starts, counts):
    """Per input: distinct run rows (sorted) and their counts, any number of them.

    Returns ``values`` (N, V, m) zero-padded, ``cnt`` (N, V) int64. O(R log R):
    the fallback for groups with many distinct rows.
    """
    n = len(starts)
    k = np.asarray(counts, dtype=np.int64)
    m = rows.shape[1]
    inp = np.repeat(np.arange(n, dtype=np.int64), k)
    ridx = np.repeat(np.asarray(starts, dtype=np.int64) - np.cumsum(k) + k, k)
    ridx += np.arange(int(k.sum()), dtype=np.int64)
    row_code_all, n_codes = _row_codes(rows)
    uniq_rows = np.empty((n_codes, m))
    uniq_rows[row_code_all] = rows
    pair, pair_count = np.unique(inp * n_codes + row_code_all[ridx], return_counts=True)
    p_inp, p_code = np.divmod(pair, n_codes)
    slot = np.arange(len(pair)) - np.searchsorted(p_inp, np.arange(n))[p_inp]
    v = int(slot.max()) + 1 if len(pair) else 1
    values = np.zeros((n, v, m))
    cnt = np.zeros((n, v), dtype=np.int64)
    values[p_inp, slot] = uniq_rows[p_code]
    cnt[p_inp, slot] = pair_count
    return values, cnt


def _compact(per: np.ndarray, uniq: np.ndarray):
    """Counts over all C distinct rows (P, C) -> per-pattern slots (P, V, m), (P, V)."""
    pi, ci = np.nonzero(per)  # row-major: by pattern, then by value
    slot = np.arange(len(pi)) - np.searchsorted(pi, np.arange(per.shape[0]))[pi]
    v = int(slot.max()) + 1 if len(pi) else 1
    values = np.zeros((per.shape[0], v, uniq.shape[1]))
    cnt = np.zeros((per.shape[0], v), dtype=np.int64)
    values[pi, slot] = uniq[ci]
    cnt[pi, slot] = per[pi, ci]
    return values, cnt


def run_level_patterns(unit: _rs.Unit) -> Patterns:
    """Joint patterns for the run-level strategies, from an index-path ``Unit``.

    An input's pattern is its cluster statistics ``T`` together with, per
    group, how many of its runs hold each distinct run row (``unit.rows``,
    weighted exactly as the index path weights them); two inputs share a
    pattern only if all of these are equal, so their run-level draws have the
    same law. For 0/1 data an input has at most 2 distinct runs per group and
    P is at most the number of distinct (c, k) combinations. O(R) for the R
    run rows when groups have few distinct rows, O(R log R) otherwise.

    Raises ValueError when ``unit`` has no run rows (see
    :func:`run_level_exact`).
    """
    if not run_level_exact(unit):
        raise ValueError(
            "run-level patterns need the unit's run rows (starts, counts, rows); "
            "build the unit with strategy='hierarchical' or 'single_draw'."
        )
    n, g, m = unit.T.shape
    cols = list(unit.T.reshape(n, g * m).T)
    groups = []
    for j in range(g):
        dense = _run_counts(unit.rows[j], unit.starts[j], unit.counts[j])
        if dense is not None:
            cols += list(dense[0].T)
        else:
            vals, cnt = _distinct_runs(unit.rows[j], unit.starts[j], unit.counts[j])
            cols += list(vals.reshape(n, -1).T) + list(cnt.T)
            dense = (vals, cnt)
        groups.append(dense)
    inverse, first, mult, stratum, p_bounds = _group_rows(
        cols, np.asarray(unit.strata_bounds, dtype=np.int64)
    )
    slots = []
    for a, b in groups:
        if a.ndim == 2:  # dense counts (N, C) and the distinct rows
            slots.append(_compact(a[first], b))
        else:
            slots.append((a[first], b[first]))
    v = max(vals.shape[1] for vals, _ in slots)
    values = np.zeros((len(first), g, v, m))
    cnt = np.zeros((len(first), g, v), dtype=np.int64)
    for j, (vals, c) in enumerate(slots):
        values[:, j, : vals.shape[1]] = vals
        cnt[:, j, : c.shape[1]] = c
    return Patterns(
        stats=unit.T[first],
        stratum=stratum,
        multiplicity=mult,
        inverse=inverse,
        bounds=p_bounds,
        values=values,
        value_counts=cnt,
    )


def two_values(rows: np.ndarray):
    """``(low, high)`` if the rows ``(R, m)`` take at most two distinct values.

    ``low <= high`` lexicographically (equal when every row is the same), or
    None when there are three or more distinct rows. O(R m): the check that
    lets :func:`binary_run_patterns` replace the run rows by counts. Pass the
    *raw* rows of one group (``Cube.stats`` of the group, before weighting).
    """
    rows = np.asarray(rows, dtype=float)
    first = rows[0]
    other = rows[:, 0] != first[0]  # column by column: fast for few columns
    for j in range(1, rows.shape[1]):
        other |= rows[:, j] != first[j]
    if not other.any():
        return first.copy(), first.copy()
    second = rows[int(np.argmax(other))]
    is_second = rows[:, 0] == second[0]
    for j in range(1, rows.shape[1]):
        is_second &= rows[:, j] == second[j]
    if not np.array_equal(other, is_second):  # a row that is neither
        return None
    if tuple(second) < tuple(first):
        first, second = second, first
    return first.copy(), second.copy()


def binary_counts(
    sums: np.ndarray, runs: np.ndarray, low: np.ndarray, high: np.ndarray
) -> np.ndarray:
    """Successes ``c`` (N, G) from raw cell sums of two-valued rows: O(N G).

    ``sums`` (N, G, m) are the *unweighted* per-input sums of the rows
    (``Cube.cell_sums()``), ``runs`` (N, G) the runs k, ``low``/``high``
    (G, m) the two row values per group: ``sums = (k - c) low + c high``.
    """
    sums = np.asarray(sums, dtype=float)
    low, high = np.asarray(low, float), np.asarray(high, float)
    c = np.zeros(np.shape(runs), dtype=np.int64)
    for j in range(sums.shape[1]):
        diff = high[j] - low[j]
        if not diff.any():
            continue  # one value: every run is "low"
        col = int(np.flatnonzero(diff)[0])
        x = (sums[:, j, col] - runs[:, j] * low[j, col]) / diff[col]
        c[:, j] = np.rint(x).astype(np.int64)
    return c


def binary_run_patterns(
    T: np.ndarray,
    successes: np.ndarray,
    runs: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    strata_bounds: np.ndarray,
    scale: np.ndarray | None = None,
) -> Patterns:
    """Run-level patterns from per-input counts, without the run rows: O(N).

    For a metric whose run rows take two values per group -- ``low`` for a
    failed run, ``high`` for a success (mean and accuracy of 0/1 data:
    ``(0, 1)`` and ``(1, 1)``) -- an input is described per group by its
    ``successes`` c and ``runs`` k. This gives the same law as
    :func:`run_level_patterns` on the unit's rows, at O(N) instead of O(N k).
    Patterns are ordered by (stratum, c, k) here, by (stratum, T, runs) there:
    both canonical, so their replicates differ but their law does not.

    Parameters
    ----------
    T : (N, G, m)
        The unit's cluster statistics (for the estimate and jackknife).
    successes, runs : (N, G) int
        c and k of each input and group (k > 0).
    low, high : (G, m)
        The two *raw* run rows of each group.
    scale : (N, G), optional
        The factor ``Cube.units`` applies to an input's run rows: ``1 / k`` for
        hierarchical with ``weight="input"``, ``k`` for single_draw with
        ``weight="run"``, 1 otherwise (also when the equal-k scale-invariant
        shortcut skips the reweighting). Rounding may differ from the index
        path's ``x / k`` in the last bit.
    """
    T = np.asarray(T, dtype=float)
    c = np.asarray(successes, dtype=np.int64)
    k = np.asarray(runs, dtype=np.int64)
    n, g, m = T.shape
    if c.shape != (n, g) or k.shape != (n, g):
        raise ValueError(f"successes and runs must have shape {(n, g)}.")
    if k.min() <= 0 or c.min() < 0 or (k - c).min() < 0:
        raise ValueError("need 0 <= successes <= runs and runs > 0 for every input.")
    bounds = np.asarray(strata_bounds, dtype=np.int64)
    if scale is not None:
        scale = np.broadcast_to(np.asarray(scale, dtype=float), (n, g))
    # In Cube.units T and the scale are functions of (c, k) per group: group on
    # the integer counts (fast), then check that; if not, group on all of it.
    grouped = _group_rows(list(c.T) + list(k.T), bounds)
    inverse, first = grouped[0], grouped[1]

    def constant_within_patterns(x):  # (N, c): equal rows inside each pattern
        return all(np.array_equal(col, np.take(col[first], inverse)) for col in x.T)

    if not constant_within_patterns(T.reshape(n, g * m)) or (
        scale is not None and not constant_within_patterns(scale)
    ):
        cols = list(c.T) + list(k.T) + list(T.reshape(n, g * m).T)
        if scale is not None:
            cols += list(scale.T)
        grouped = _group_rows(cols, bounds)
    inverse, first, mult, stratum, p_bounds = grouped
    f = np.ones((len(first), g)) if scale is None else scale[first]
    values = np.stack(
        [
            f[:, :, None] * np.asarray(low, float),
            f[:, :, None] * np.asarray(high, float),
        ],
        axis=2,
    )  # (P, G, 2, m)
    cnt = np.stack([k[first] - c[first], c[first]], axis=2)
    return Patterns(
        stats=T[first],
        stratum=stratum,
        multiplicity=mult,
        inverse=inverse,
        bounds=p_bounds,
        values=values,
        value_counts=cnt,
    )


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
    was not worth a second constant.

    The rule reads the data's shape only, never the number of resamples,
    blocks or workers, so that a Dask schedule and the numpy path take the
    same path and give the same replicates.
    """
    del n_columns
    return n_inputs >= 2 and n_patterns * PATTERN_RATIO <= n_inputs + n_runs


# ------------------------------------------------------------------ drawing
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

    @property
    def n_categories(self) -> int:
        return self.stats.shape[0]

    @property
    def n_draws(self) -> int:
        """Random variates per replicate (multinomial categories + binomials)."""
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
                f"strategy={strategy!r} on patterns needs run_level_patterns(unit), "
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
        raise ValueError(f"unknown strategy {strategy!r} for the pattern path.")
    return DrawPlan(
        form="cluster",
        stats=patterns.stats,
        strata=_strata(
            patterns.bounds, _stratum_sizes(patterns), patterns.multiplicity * 1.0
        ),
    )


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

    The pattern analogue of :func:`evalci.resampling.stream_replicate_sums`:
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
    for s in range(n_streams):
        gen = _rs.stream(root, _rs._BOOT, unit_index, first + s)
        w = _category_counts(gen, plan.strata, q, size)
        block = out[s * size : (s + 1) * size]
        if plan.runs is not None:
            _conditional_sums(gen, w, plan.runs, plan.hierarchical, block)
        else:
            np.matmul(w.astype(float), flat_stats, out=block.reshape(size, g * m))
    return out


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
    (:func:`evalci.resampling.poisson_piece_sums`), other numbers. Stream
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
            f"got a {plan.form!r} plan; use weights='multinomial' for run-level "
            "strategies."
        )
    p, g, m = patterns.stats.shape
    size = _rs.STREAM_SIZE
    lam = patterns.multiplicity.astype(float)
    flat_stats = patterns.stats.reshape(p, g * m)
    out = np.empty((n_streams * size, g * m))
    for s in range(n_streams):
        gen = _rs.stream(root, _rs._POISSON, unit_index, first + s)
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

    Equals :func:`evalci.intervals.acceleration` on the full ``(..., N)``
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
