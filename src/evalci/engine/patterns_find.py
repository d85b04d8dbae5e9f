"""Finding patterns: the distinct statistics rows of a draw unit and their multiplicities.

Inputs whose rows are equal are exchangeable, so the pattern kernel
(:mod:`evalci.engine.patterns`) resamples the P distinct rows instead of the
N inputs. Here they are found, per stratum and in canonical order (stratum,
then lexicographic on the values): :func:`find_patterns` for the cluster
statistics ``T``; :func:`run_level_patterns` (from the unit's run rows) and
:func:`binary_run_patterns` (from per-input counts of two-valued rows) for
the run-level strategies, with each pattern's distinct runs and their counts.
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
    "group_two_values",
    "binary_counts",
]

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
    return _counted_codes(x, lead, radix0)[:2]


def _counted_codes(x, lead: np.ndarray | None = None, radix0: int = 1):
    """:func:`_row_codes` and the rows of each code, ``(codes, U, counts)``."""
    whole = _whole_key(x)
    if whole is not None and radix0 * whole[1] <= _INT64_MAX:
        key, radix = whole
        if lead is not None:  # the same key, digit by digit, as below
            key += lead.astype(np.int64) * radix
            radix *= radix0
        return _dense(key, radix)
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
        return np.zeros(n, dtype=np.int64), 1, np.array([n], dtype=np.int64)
    return _dense(key, radix)


def _whole_key(x) -> tuple[np.ndarray, int] | None:
    """:func:`_row_codes`'s mixed-radix key of a 2-D float array of whole
    numbers, in one product instead of a column at a time, and its radix.

    Each column's digit is ``value - min`` with radix ``max - min + 1`` (a
    constant column: radix 1, no digit), as :func:`_sorted_codes` codes it.
    When the radix product is at most 2**53 every partial sum of
    ``(x - min) @ place`` is a whole number below it, so the float product
    is the key exactly (and ``x @ place - min @ place`` is, without the
    copy, when ``|x| @ place`` stays below 2**53 too); otherwise (two
    columns or fewer, other arrays) None.
    """
    if not isinstance(x, np.ndarray) or x.ndim != 2 or x.dtype != np.float64:
        return None
    if x.shape[0] == 0 or x.shape[1] <= 2:  # few columns: as quick one by one
        return None
    lo = np.array([col.min() for col in x.T])  # column by column: no
    hi = np.array([col.max() for col in x.T])  # strided axis-0 reduction
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        return None
    if (hi - lo > _SMALL_RANGE).any():
        return None
    radices = [int(r) + 1 for r in (hi - lo).tolist()]
    place = [1] * len(radices)  # the weight of each column's digit
    for j in range(len(radices) - 2, -1, -1):
        place[j] = place[j + 1] * radices[j + 1]
    if place[0] * radices[0] > 2**53 or not np.array_equal(x, np.trunc(x)):
        return None
    weights = np.array(place, dtype=float)
    if float(np.maximum(-lo, hi) @ weights) < 2.0**53:  # x @ weights exact too
        key = x @ weights - float(lo @ weights)
    else:
        key = (x - lo) @ weights
    return key.astype(np.int64), place[0] * radices[0]


def _dense(key: np.ndarray, radix: int) -> tuple[np.ndarray, int, np.ndarray]:
    """Dense codes of ``key``, their number and the rows of each."""
    n = key.shape[0]
    if radix <= max(4 * n, 1 << 16):  # counting is O(N + radix)
        counts = np.bincount(key, minlength=radix)
        present = counts > 0
        if present.all():
            return key, radix, counts
        lut = np.cumsum(present) - 1
        return lut[key], int(present.sum()), counts[present]
    codes, n_codes = _compress(key)
    return codes, n_codes, np.bincount(codes, minlength=n_codes)


def _first_index(inverse: np.ndarray, n_codes: int) -> np.ndarray:
    """Position of the first occurrence of each code ``0 .. n_codes - 1``."""
    if n_codes <= 8:  # a few scans that stop at the first hit: no scatter
        return np.array([np.argmax(inverse == c) for c in range(n_codes)], np.int64)
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
    inverse, n_pat, multiplicity = _counted_codes(key, lead, n_strata)
    multiplicity = multiplicity.astype(np.int64, copy=False)
    first = _first_index(inverse, n_pat)
    p_stratum = (np.searchsorted(bounds, first, side="right") - 1).astype(np.int64)
    p_bounds = np.searchsorted(p_stratum, np.arange(n_strata + 1)).astype(np.int64)
    return inverse, first, multiplicity, p_stratum, p_bounds


def _from_groups(stats, grouped, values=None, value_counts=None) -> Patterns:
    """:class:`Patterns` from :func:`_group_rows`'s output.

    ``stats`` (N, G, m) are the inputs' statistics; each pattern keeps its
    first input's row.
    """
    inverse, first, mult, stratum, p_bounds = grouped
    return Patterns(
        stats=stats[first],
        stratum=stratum,
        multiplicity=mult,
        inverse=inverse,
        bounds=p_bounds,
        values=values,
        value_counts=value_counts,
    )


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
    return _from_groups(T, _group_rows(T.reshape(T.shape[0], -1), bounds))


def run_level_exact(unit: _rs.Unit) -> bool:
    """Whether ``unit`` carries what the exact run-level forms need.

    The forms need, per group, every run row with its (weighted) statistics
    and the rows of each input: ``unit.starts``, ``unit.counts`` and
    ``unit.rows`` as :meth:`evalci.engine.cube.Cube.units` builds them for
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
    grouped = _group_rows(cols, np.asarray(unit.strata_bounds, dtype=np.int64))
    first = grouped[1]
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
    return _from_groups(unit.T, grouped, values, cnt)


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


def group_two_values(
    stats: np.ndarray, row_group: np.ndarray, n_groups: int, whole: bool = False
) -> list | None:
    """:func:`two_values` of every group's rows, in any order of the rows.

    Returns a list of ``n_groups`` entries, each ``(low, high)`` as
    :func:`two_values` gives it on the group's rows ``stats[row_group == g]``
    (None for a group with three or more distinct rows, or none at all),
    found from one code per distinct row and one bincount: no gather of
    the groups' rows, no sort (one group: :func:`two_values` of all rows). Equal values are then equal bits, so the rows
    returned do not depend on which row comes first -- unless a statistic
    is NaN or -0.0 (equal to 0.0, other bits): then the whole answer is None.
    ``whole=True`` says the statistics were made from integers (finite, no
    -0.0), which skips the check.
    """
    stats = np.asarray(stats, dtype=float)
    if len(stats) == 0:
        return None
    if not whole:
        big = max(float(stats.max()), -float(stats.min()))
        negative = np.signbit(stats)
        if not np.isfinite(big) or (negative.any() and (stats[negative] == 0).any()):
            return None
    if n_groups == 1:  # the distinct values, the same bits in any order
        return [two_values(stats)]
    code, n_codes = _row_codes(stats)
    if n_groups * n_codes > max(4 * len(code), 1 << 16):
        return None
    key = code if n_groups == 1 else row_group * n_codes + code
    present = np.bincount(key, minlength=n_groups * n_codes).reshape(n_groups, -1)
    first = _first_index(code, n_codes)
    out = []
    for g in range(n_groups):
        found = np.flatnonzero(present[g])  # codes order rows lexicographically
        if not 1 <= len(found) <= 2:
            out.append(None)
            continue
        low, high = stats[first[found[0]]], stats[first[found[-1]]]
        out.append((low.copy(), high.copy()))
    return out


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
    first = grouped[1]
    f = np.ones((len(first), g)) if scale is None else scale[first]
    values = np.stack(
        [
            f[:, :, None] * np.asarray(low, float),
            f[:, :, None] * np.asarray(high, float),
        ],
        axis=2,
    )  # (P, G, 2, m)
    cnt = np.stack([k[first] - c[first], c[first]], axis=2)
    return _from_groups(T, grouped, values, cnt)
