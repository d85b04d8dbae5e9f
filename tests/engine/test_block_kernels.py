"""Moving blocks (issue 27): sums of block sums on both kernels.

For whole numbers the index kernel adds precomputed block sums instead of
gathering rows (:mod:`evalci.engine.blocks`): compared with the
row-gathering kernel on the same streams, bit for bit.

When a replicate's sums vary in one column only (one system, equal runs per
input), the pattern kernel draws that column's total by inverse CDF from its
exact law, the convolution of the per-block laws
(:mod:`evalci.engine.patterns_total`). References here: the convolution in
exact integer arithmetic (small cases) and by direct float convolution of
nonnegative terms (relative accuracy, no FFT); the index kernel's documented
draws through two-sample Kolmogorov-Smirnov tests, each requiring p > 1e-4
(false-failure rate below 1e-4 per assertion, about 6e-4 for the file).
"""

import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci.engine import (
    blocks,
    passes,
    patterns_draw,
    patterns_total,
    resampling,
    tiles,
)


def _sequence(n, seed, k=3, values=(0, 1)):
    """Scores with serial dependence (a two-state Markov chain), k runs each."""
    rng = np.random.default_rng(seed)
    state = np.empty(n, dtype=int)
    state[0] = 1
    for t in range(1, n):
        state[t] = state[t - 1] if rng.random() < 0.8 else 1 - state[t - 1]
    p = np.repeat(np.where(state == 1, 0.8, 0.3), k)
    lo, hi = values
    return pd.DataFrame(
        {
            "turn": np.repeat(np.arange(n), k),
            "score": np.where(rng.random(k * n) < p, hi, lo),
        }
    )


def _per_input(df, k=3):
    s = df.groupby("turn").score.sum().to_numpy().astype(float)
    return np.stack([s, np.full(len(s), float(k))], axis=1)[:, None, :]


def _block_laws(c, length):
    """Per group of draws: (values, counts over the starts, draws), by brute force."""
    n = len(c)
    nb = -(-n // length)
    rest = n - (nb - 1) * length
    full = [int(c[s : s + length].sum()) for s in range(n - length + 1)]
    groups = [(full, nb - (rest < length))]
    if rest < length:
        groups.append(([int(c[s : s + rest].sum()) for s in range(n - length + 1)], 1))
    return groups


def _exact_pmf(groups):
    """P(T = t) as Fractions: the convolution in exact integer arithmetic."""
    poly, denom = {0: 1}, 1
    for values, draws in groups:
        one = {}
        for v in values:
            one[v] = one.get(v, 0) + 1
        for _ in range(draws):
            new = {}
            for a, x in poly.items():
                for b, y in one.items():
                    new[a + b] = new.get(a + b, 0) + x * y
            poly = new
            denom *= len(values)
    return {t: Fraction(x, denom) for t, x in poly.items()}


def _direct_pmf(groups):
    """P(T = t), t = 0 ... max, by direct float convolution (nonnegative terms)."""
    pmf = np.ones(1)
    for values, draws in groups:
        one = np.bincount(values) / len(values)
        for _ in range(draws):
            pmf = np.convolve(pmf, one)
    return pmf


def test_the_law_of_the_total_is_the_exact_convolution():
    # n = 83, L = 6: 13 full blocks and a partial one of 5 inputs
    df = _sequence(83, seed=1)
    c = df.groupby("turn").score.sum().to_numpy()
    plan = patterns_draw.block_plan(_per_input(df), 6)
    assert plan.form == "total" and plan.n_draws == 1
    law = plan.total
    exact = _exact_pmf(_block_laws(c, 6))
    support = np.arange(max(exact) + 1)
    pmf = np.array([float(exact.get(t, 0)) for t in support])
    cdf = np.cumsum(pmf)
    # a replicate's total is base + lo + t, t = 0 ... len(cdf) - 1
    start = int(law.base[law.column]) + law.lo
    t = start + np.arange(len(law.cdf))
    np.testing.assert_allclose(law.cdf, cdf[t], rtol=0, atol=1e-12)
    # the window drops at most 2**-70 on each side
    below = cdf[start - 1] if start > 0 else 0.0
    assert below <= 2.0**-70
    assert 1.0 - cdf[t[-1]] <= 2.0**-70 + 1e-15
    # the constant column: every replicate has 3 runs per input, 83 inputs
    assert law.column == 0 and law.base[1] == 3.0 * 83


@pytest.mark.parametrize("n, length", [(2000, 8), (20_000, 27)])
def test_a_long_total_is_cut_to_its_window_without_losing_mass(n, length):
    # against direct convolution (relative accuracy even in the far tails)
    df = _sequence(n, seed=n)
    c = df.groupby("turn").score.sum().to_numpy()
    law = patterns_draw.block_plan(_per_input(df), length).total
    pmf = _direct_pmf(_block_laws(c, length))
    cdf = np.cumsum(pmf)
    start = int(law.base[law.column]) + law.lo
    hi = start + len(law.cdf) - 1
    assert len(law.cdf) < len(pmf) / 4  # the window is much narrower than the support
    assert cdf[start - 1] <= 2.0**-70 and 1.0 - cdf[hi] <= 1e-15
    np.testing.assert_allclose(law.cdf, cdf[start : hi + 1], rtol=0, atol=1e-12)


def test_many_blocks_against_the_binomial_law():
    # inputs 1, 1, 0, 1, 1, 0, ... and L = 2: every block sums to 1 or 2, so
    # the total of n full blocks is n + Binomial(n, P(sum = 2)); scipy's
    # binomial CDF is the reference (FFT rounding grows with n: ~6e-12 here)
    n_inputs = 300_000
    x = np.tile([1.0, 1.0, 0.0], n_inputs // 3)
    T = np.stack([x, np.ones(n_inputs)], axis=1)[:, None, :]
    law = patterns_draw.block_plan(T, 2).total
    n = n_inputs // 2
    p2 = np.mean(x[:-1] + x[1:] == 2)
    t = law.base[law.column] + law.lo + np.arange(len(law.cdf))
    want = stats.binom.cdf(t - n, n, p2)
    np.testing.assert_allclose(law.cdf, want, rtol=0, atol=1e-10)
    below = stats.binom.cdf(t[0] - 1 - n, n, p2)  # the mass left of the window
    assert below <= 2.0**-70 and 1.0 - want[-1] <= 1e-15


def _blocks(monkeypatch, path, df, rng, n_resamples=4000, **kw):
    monkeypatch.setattr(passes, "_FORCE_PATH", path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        return evalci.bootstrap(
            df,
            "score",
            "turn",
            n_resamples=n_resamples,
            rng=rng,
            strategy="moving_block",
            method="percentile",
            **kw,
        )


def test_replicates_are_the_documented_draws(monkeypatch):
    # per stream (BOOT, 0, s): 64 uniforms u; T = the smallest t with
    # P(T <= t) > u (the reference law); a replicate's mean is T / (3 n)
    df = _sequence(203, seed=5)
    length, b = 10, 300
    res = _blocks(monkeypatch, "patterns", df, 9, n_resamples=b, block_length=length)
    assert res.kernel == "patterns"
    c = df.groupby("turn").score.sum().to_numpy()
    cdf = np.cumsum(_direct_pmf(_block_laws(c, length)))
    root = resampling.seed_sequence(9)
    want = []
    for s in range(resampling.n_streams_for(b)):
        u = resampling.stream(root, 0, 0, s).random(64)
        want.extend(np.searchsorted(cdf, u, side="right") / (3.0 * 203))
    np.testing.assert_allclose(
        np.ravel(res.bootstrap_distribution), want[:b], rtol=1e-12
    )


@pytest.mark.parametrize(
    "n, length, values",
    [(403, 10, (0, 1)), (250, 7, (-1, 2)), (500, 1, (0, 1)), (360, 12, (0, 1))],
)
def test_the_total_draws_the_index_law(monkeypatch, n, length, values):
    # 4,000 replicates each from independent seeds; n = 403, L = 10 leaves a
    # partial last block (r = 3); scores -1 / 2 have negative block sums
    df = _sequence(n, seed=n, values=values)
    if length > 1:
        plan = patterns_draw.block_plan(_per_input(df), length)
        assert plan.form == "total"
    idx = _blocks(monkeypatch, "index", df, 1, block_length=length)
    pat = _blocks(monkeypatch, "patterns", df, 2, block_length=length)
    assert (idx.kernel, pat.kernel) == ("index", "patterns")
    x, y = np.ravel(idx.bootstrap_distribution), np.ravel(pat.bootstrap_distribution)
    assert stats.ks_2samp(x, y).pvalue > 1e-4
    np.testing.assert_allclose(idx.estimate, pat.estimate, rtol=1e-12)


def test_the_total_form_is_used_only_where_one_column_varies():
    df = _sequence(300, seed=3)
    T = _per_input(df)
    assert patterns_draw.block_plan(T, 5).form == "total"
    assert (
        patterns_draw.block_plan(T, 1).form == "cluster"
    )  # L = 1: cluster, bit for bit
    # unequal runs per input: the run counts vary too
    uneven = T.copy()
    uneven[::7, 0, 1] = 4.0
    assert patterns_draw.block_plan(uneven, 5).form == "cluster"
    # two systems in one draw unit: two totals
    two = np.concatenate([T, T[::-1]], axis=1)
    assert patterns_draw.block_plan(two, 5).form == "cluster"


def test_the_total_form_gives_way_where_its_fft_is_dearer(monkeypatch):
    # a wide window against few distinct block sums: the multinomial is cheaper
    T = _per_input(_sequence(300, seed=3))
    assert patterns_draw.block_plan(T, 5).form == "total"
    monkeypatch.setattr(patterns_total, "TOTAL_RATIO", 1)
    assert patterns_draw.block_plan(T, 5).form == "cluster"
    # block sums spread over more values than the largest window: no FFT,
    # and no pmf over that span (it would be ~1 GB here)
    monkeypatch.setattr(patterns_total, "TOTAL_RATIO", 1 << 12)
    wide = T.copy()
    wide[:, 0, 0] *= 2.0**23
    tracemalloc.start()
    try:
        assert patterns_draw.block_plan(wide, 5).form == "cluster"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50e6


def test_blocks_of_streams_and_dask_tasks_never_change_the_numbers(monkeypatch):
    # replicate b comes from stream b // 64 whatever the blocking
    from evalci.engine import patterns_find

    T = _per_input(_sequence(300, seed=4))
    plan = patterns_draw.block_plan(T, 6)
    found = patterns_find.find_patterns(T, np.array([0, 300]))
    root = np.random.SeedSequence(3)

    def block(first, n):
        return patterns_draw.pattern_replicate_sums(
            found, root, 0, "moving_block", first, n, plan=plan
        )

    whole = block(0, 7)
    parts = np.concatenate([block(0, 2), block(2, 1), block(3, 4)])
    assert np.array_equal(whole, parts)
    # the same on Dask, split into tasks of one and of three streams
    dask = pytest.importorskip("dask")
    from evalci.engine import scaleout

    df = _sequence(300, seed=4)
    kw = dict(strategy="moving_block", block_length=6, n_resamples=700, rng=5)
    ref = evalci.bootstrap(df, "score", "turn", **kw)
    assert ref.kernel == "patterns"
    for size in (1, 3):
        monkeypatch.setattr(scaleout, "TASK_STREAMS", size)
        with dask.config.set(scheduler="threads"):
            got = evalci.bootstrap(df, "score", "turn", backend="dask", **kw)
        assert np.array_equal(ref.bootstrap_distribution, got.bootstrap_distribution)
        assert (ref.low, ref.high) == (got.low, got.high)


@pytest.mark.parametrize(
    "n, length, g, m, scale",
    [(97, 5, 1, 2, 1), (100, 10, 2, 2, 10_000), (61, 7, 3, 2, 2**33), (50, 3, 1, 5, 1)],
)
def test_block_sums_are_the_gathered_rows_bit_for_bit(n, length, g, m, scale):
    # whole numbers: every sum is exact, so adding block sums must give the
    # row-gathering kernel's numbers exactly (few columns: gathered rows;
    # more than GATHER_COLUMNS: counts times T), on the same streams; the
    # scales put the block sums in int16, int32 and int64
    rng = np.random.default_rng(n)
    T = rng.integers(-3, 6, (n, g, m)).astype(float) * scale
    T[:, :, -1] = 4.0  # the runs column at equal k
    unit = resampling.Unit(0, T, np.array([0, n]), block_length=length)
    root = np.random.SeedSequence(11)
    kw = dict(weights="multinomial")
    rows = tiles.stream_replicate_sums(unit, root, "moving_block", 2, 3, **kw)
    sums = blocks.stream_replicate_sums(unit, root, "moving_block", 2, 3, **kw)
    assert np.array_equal(rows, sums)
    assert not np.array_equal(
        blocks.stream_replicate_sums(unit, root, "moving_block", 3, 3, **kw), sums
    )


def test_the_block_kernel_is_only_for_exact_sums():
    T = np.array([[1.0], [2.0], [-0.0], [3.0]] * 10).reshape(40, 1, 1)
    assert not blocks.exact_sums(T.reshape(40, 1))  # a negative zero
    assert blocks.exact_sums(np.abs(T).reshape(40, 1))
    assert not blocks.exact_sums(np.full((40, 1), 0.5))
    assert not blocks.exact_sums(np.full((40, 1), 2.0**48))  # 40 x 2**48 > 2**53


@pytest.mark.parametrize(
    "count, scales",
    [(2173, [230, 230]), (7, [1, 5, 2**20, 3]), (50, [2**40, 2**30, 1])],
)
def test_packed_columns_sum_to_each_columns_own_sum(count, scales):
    # deterministic: the packed words' int64 sums of `count` gathered starts
    # unpack to every column's own exact sum (negative values included), with
    # as many words as 63-bit fields allow
    rng = np.random.default_rng(count)
    s = 500
    full = np.stack([rng.integers(-sc // 3, sc + 1, s) for sc in scales]).astype(float)
    words = blocks.pack_columns(full, count)
    widths = [int(count * (c.max() - c.min())).bit_length() for c in full]
    assert sum(len(w.columns) for w in words) == len(scales)
    assert all(sum(widths[i] for i in w.columns) <= 63 for w in words)
    head = rng.integers(0, s, size=(64, count))
    for w in words:
        total = np.take(w.table, head).sum(axis=1, dtype=np.int64)
        for j, got in zip(w.columns, w.unpack(total), strict=True):
            want = full[j].astype(np.int64)[head].sum(axis=1)
            assert np.array_equal(got, want)
