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

Run-level strategies are exact too, for any data. An input drawn ``W`` times
contributes, per group, ``W k`` runs drawn with replacement from its ``k``
runs (``hierarchical``) or ``W`` single runs (``single_draw``). Either way the
number of draws that land on each *distinct* run row is
``Multinomial(trials, count_v / k)`` over the input's distinct (already
weighted) row values; for 0/1 data there are at most two, and this is the
``Binomial(W k, c / k)`` (hierarchical) or ``Binomial(W, c / k)``
(single_draw) of the issue. :func:`run_level_patterns` builds the patterns
for that from a :class:`~evalci.resampling.Unit` as it is today, using the
*same weighted rows* as the index path, so the estimand is identical.

Reproducibility contract (as in :mod:`evalci.resampling`): replicate ``b``
comes from stream ``stream(root, _BOOT, unit_index, b // STREAM_SIZE)``,
whatever the blocking. Within one stream the draws are, in order:

1. for each stratum in order, ``multinomial(N_h, n_p / N_h, size=64)`` over
   its patterns (in canonical order);
2. for run-level strategies, for each group in order, for each value slot
   ``v = 0 .. V_g - 2`` in order, one ``binomial(remaining, p_v)`` of shape
   ``(64, P)`` (the multinomial over an input's distinct runs as a chain of
   conditional binomials; the last slot takes what remains).

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

from . import resampling as _rs

__all__ = [
    "Patterns",
    "find_patterns",
    "run_level_patterns",
    "run_level_exact",
    "should_use_patterns",
    "pattern_replicate_sums",
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
def _sorted_codes(col: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes of ``col`` that order like its values, and their number (radix).

    Integer-valued columns of small range are coded ``value - min`` (codes may
    skip unused values; order is all that matters); others are factorised by
    hashing (O(N)) and the few uniques sorted. NaN sorts last.
    """
    lo, hi = col.min(), col.max()
    if lo == hi:  # constant column (also the common "1" or "k" column)
        return np.zeros(col.shape[0], dtype=np.int64), 1
    if np.isfinite(lo) and np.isfinite(hi) and hi - lo <= _SMALL_RANGE:
        shifted = col - lo
        codes = shifted.astype(np.int64)
        if np.array_equal(codes, shifted):
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


def _row_codes(x: np.ndarray, lead: np.ndarray | None = None, radix0: int = 1):
    """One int64 code per row of ``x`` (R, c), ordered lexicographically.

    ``lead`` (R,) with ``radix0`` values is the most significant digit. The
    mixed-radix key is re-numbered densely whenever the next digit could
    overflow int64. Returns dense codes ``0 .. U-1`` and U.
    """
    n = x.shape[0]
    key = np.zeros(n, dtype=np.int64) if lead is None else lead.astype(np.int64)
    radix = radix0
    for j in range(x.shape[1]):
        codes, r = _sorted_codes(x[:, j])
        if r == 1:
            continue
        if radix * r > _INT64_MAX:
            key, radix = _compress(key)
        key = key * r + codes
        radix *= r
    return _dense(key, radix)


def _dense(key: np.ndarray, radix: int) -> tuple[np.ndarray, int]:
    n = key.shape[0]
    if radix <= max(4 * n, 1 << 16):  # counting is O(N + radix)
        present = np.bincount(key, minlength=radix) > 0
        lut = np.cumsum(present) - 1
        return lut[key], int(present.sum())
    return _compress(key)


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
    n = T.shape[0]
    bounds = np.asarray(strata_bounds, dtype=np.int64)
    n_strata = len(bounds) - 1
    flat = T.reshape(n, -1)
    stratum = np.repeat(np.arange(n_strata, dtype=np.int64), np.diff(bounds))
    inverse, n_pat = _row_codes(flat, stratum if n_strata > 1 else None, n_strata)
    multiplicity = np.bincount(inverse, minlength=n_pat).astype(np.int64)
    first = np.empty(n_pat, dtype=np.int64)
    first[inverse[::-1]] = np.arange(n - 1, -1, -1)  # first input of each pattern
    p_stratum = stratum[first]
    p_bounds = np.searchsorted(p_stratum, np.arange(n_strata + 1)).astype(np.int64)
    return Patterns(
        stats=T[first],
        stratum=p_stratum,
        multiplicity=multiplicity,
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


def _distinct_runs(rows, starts, counts):
    """Per input: distinct run rows (sorted) and their counts.

    Returns ``values`` (N, V, m) zero-padded, ``cnt`` (N, V) int64.
    """
    n = len(starts)
    k = np.asarray(counts, dtype=np.int64)
    m = rows.shape[1]
    total = int(k.sum())
    inp = np.repeat(np.arange(n, dtype=np.int64), k)
    ridx = np.repeat(np.asarray(starts, dtype=np.int64) - np.cumsum(k) + k, k)
    ridx += np.arange(total, dtype=np.int64)
    row_code_all, n_codes = _row_codes(rows)
    code = row_code_all[ridx]
    uniq_rows = np.empty((n_codes, m))
    uniq_rows[row_code_all] = rows
    # (input, value) pairs in order: input first, then value code
    if n * n_codes <= max(4 * total, 1 << 20):
        per = np.bincount(inp * n_codes + code, minlength=n * n_codes)
        pair = np.flatnonzero(per)
        pair_count = per[pair]
    else:
        pair, pair_count = np.unique(inp * n_codes + code, return_counts=True)
    p_inp, p_code = np.divmod(pair, n_codes)
    first = np.searchsorted(p_inp, np.arange(n))
    slot = np.arange(len(pair)) - first[p_inp]
    v = int(slot.max()) + 1 if len(pair) else 1
    values = np.zeros((n, v, m))
    cnt = np.zeros((n, v), dtype=np.int64)
    values[p_inp, slot] = uniq_rows[p_code]
    cnt[p_inp, slot] = pair_count
    return values, cnt


def run_level_patterns(unit: _rs.Unit) -> Patterns:
    """Joint patterns for the run-level strategies, from an index-path ``Unit``.

    An input's pattern is its cluster statistics ``T`` together with, per
    group, its distinct run rows (``unit.rows``, weighted exactly as the index
    path weights them) and their counts; two inputs share a pattern only if
    all of these are equal, so their run-level draws have the same law. For
    0/1 data there are at most ``2`` values per group and P is at most the
    number of distinct (c, k) combinations.

    Raises ValueError when ``unit`` has no run rows (see
    :func:`run_level_exact`).
    """
    if not run_level_exact(unit):
        raise ValueError(
            "run-level patterns need the unit's run rows (starts, counts, rows); "
            "build the unit with strategy='hierarchical' or 'single_draw'."
        )
    n, g, m = unit.T.shape
    per_group = [
        _distinct_runs(unit.rows[j], unit.starts[j], unit.counts[j]) for j in range(g)
    ]
    v = max(vals.shape[1] for vals, _ in per_group)
    values = np.zeros((n, g, v, m))
    cnt = np.zeros((n, g, v), dtype=np.int64)
    for j, (vals, c) in enumerate(per_group):
        values[:, j, : vals.shape[1]] = vals
        cnt[:, j, : c.shape[1]] = c
    key = np.concatenate(
        [unit.T, values.reshape(n, g, v * m), cnt.astype(float)], axis=2
    )
    pat = find_patterns(key, unit.strata_bounds)
    first = np.empty(pat.n_patterns, dtype=np.int64)
    first[pat.inverse[::-1]] = np.arange(n - 1, -1, -1)
    return Patterns(
        stats=unit.T[first],
        stratum=pat.stratum,
        multiplicity=pat.multiplicity,
        inverse=pat.inverse,
        bounds=pat.bounds,
        values=values[first],
        value_counts=cnt[first],
    )


# ------------------------------------------------------------------ choosing
#: Patterns when ``P <= N / PATTERN_RATIO`` (see :func:`should_use_patterns`).
PATTERN_RATIO = 4


def should_use_patterns(n_inputs: int, n_patterns: int, n_columns: int) -> bool:
    """Whether the pattern path should resample this unit (data shape only).

    Per replicate the index kernel costs about ``N`` integer draws plus ``N``
    gathers per statistic column (or a count and an ``N x cols`` product);
    the pattern path costs a ``P``-category multinomial (about P binomial
    draws) plus a ``P x cols`` product. Measured on this machine
    (``benchmarks/bench_patterns.py --crossover``, cluster strategy, B=2,000,
    N=20,000; see the module's RESULTS notes in the report): the pattern path
    is faster up to P/N ~ 0.5 with 2 columns and up to P/N ~ 0.9 with 20
    columns. ``P <= N / 4`` leaves a safety margin for other machines, and
    every case it sends to patterns is one where P is well below N (the cost
    of finding patterns, O(N), is below one index replicate's).

    The rule reads the data's shape only, never the number of resamples,
    blocks or workers, so that a Dask schedule and the numpy path take the
    same path and give the same replicates. ``n_columns`` (``G * m``) is part
    of the signature for a future column-aware threshold; the margin above
    covers every column count measured.
    """
    del n_columns  # the measured crossover only moves up with more columns
    return n_inputs >= 2 and n_patterns * PATTERN_RATIO <= n_inputs


# ------------------------------------------------------------------ drawing
def _pattern_counts(gen, patterns: Patterns, n_rep: int) -> np.ndarray:
    """Pattern counts ``(n_rep, P)``: per stratum, Multinomial(N_h, n_p / N_h)."""
    p = patterns.n_patterns
    mult = patterns.multiplicity
    w = np.zeros((n_rep, p), dtype=np.int64)
    bounds = patterns.bounds
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        if hi == lo:
            continue
        n_h = int(mult[lo:hi].sum())
        w[:, lo:hi] = gen.multinomial(n_h, mult[lo:hi] / n_h, size=n_rep)
    return w


def _run_level_sums(gen, w, patterns: Patterns, strategy: str, out) -> None:
    """Fill ``out`` (n_rep, G, m) with run-level sums for pattern counts ``w``."""
    values, cnt = patterns.values, patterns.value_counts
    p, g, v, m = values.shape
    k = cnt.sum(axis=2)  # (P, G)
    # conditional probability of slot s given the earlier slots were not hit
    before = np.cumsum(cnt, axis=2) - cnt  # (P, G, V)
    left = k[:, :, None] - before
    with np.errstate(invalid="ignore", divide="ignore"):
        cond = np.where(left > 0, cnt / np.maximum(left, 1), 0.0)
    used = (cnt > 0).any(axis=0)  # (G, V): slots some pattern uses
    hits = np.empty((w.shape[0], p, v))
    for j in range(g):
        remaining = w * k[:, j] if strategy == "hierarchical" else w.copy()
        n_slots = int(np.flatnonzero(used[j]).max()) + 1 if used[j].any() else 1
        hits[:] = 0.0
        for s in range(n_slots - 1):
            drawn = gen.binomial(remaining, cond[:, j, s])
            hits[:, :, s] = drawn
            remaining -= drawn
        hits[:, :, n_slots - 1] = remaining
        np.matmul(
            hits[:, :, :n_slots].reshape(w.shape[0], p * n_slots),
            values[:, j, :n_slots].reshape(p * n_slots, m),
            out=out[:, j, :],
        )


def pattern_replicate_sums(
    patterns: Patterns,
    root: np.random.SeedSequence,
    unit_index: int,
    strategy: str,
    first: int,
    n_streams: int,
) -> np.ndarray:
    """Summed statistics ``(n_streams * STREAM_SIZE, G, m)`` for a block of streams.

    The pattern analogue of :func:`evalci.resampling.stream_replicate_sums`:
    stream ``first + s`` gives replicates ``(first + s) * 64 ...`` whatever
    the blocking. ``strategy`` is ``"cluster"`` (also used for ``iid`` and
    ``mode_aggregate`` after the engine's mapping), ``"hierarchical"`` or
    ``"single_draw"``; the run-level ones need ``patterns`` from
    :func:`run_level_patterns`.
    """
    run_level = strategy in RUN_LEVEL
    if run_level and patterns.values is None:
        raise ValueError(
            f"strategy={strategy!r} on patterns needs run_level_patterns(unit), "
            "not find_patterns(T, ...)."
        )
    if not run_level and strategy != "cluster":
        raise ValueError(f"unknown strategy {strategy!r} for the pattern path.")
    p, g, m = patterns.stats.shape
    size = _rs.STREAM_SIZE
    out = np.empty((n_streams * size, g, m))
    flat_stats = patterns.stats.reshape(p, g * m)
    for s in range(n_streams):
        gen = _rs.stream(root, _rs._BOOT, unit_index, first + s)
        w = _pattern_counts(gen, patterns, size)
        block = out[s * size : (s + 1) * size]
        if run_level:
            _run_level_sums(gen, w, patterns, strategy, block)
        else:
            np.matmul(w.astype(float), flat_stats, out=block.reshape(size, g * m))
    return out


def replicate_sums(
    patterns: Patterns,
    root: np.random.SeedSequence,
    unit_index: int,
    strategy: str,
    n_resamples: int,
) -> np.ndarray:
    """All replicate sums ``(n_resamples, G, m)``: one block (memory is O(B P))."""
    total = _rs.n_streams_for(n_resamples)
    return pattern_replicate_sums(patterns, root, unit_index, strategy, 0, total)[
        :n_resamples
    ]


# ------------------------------------------------------------------ jackknife
def pattern_jackknife(
    patterns: Patterns, finalize, total: np.ndarray | None = None
) -> np.ndarray:
    """Leave-one-input-out values per pattern, ``(P, G)``.

    Leaving out any input of pattern p gives ``finalize(total - stats[p])``.
    Pass ``total = unit.T.sum(axis=0)`` (what ``core._fast_unit`` uses) to make
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
