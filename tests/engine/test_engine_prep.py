"""Table preparation in O(N) and the seeded streams (issue 27).

The references are the slow, obviously correct forms the fast ones replace:
``pd.factorize(..., sort=True)`` and ``np.unique(..., axis=0)`` for the key
codes, numpy's own ``PCG64(SeedSequence(...))`` for every stream, and the
same table in another row order for results that must not depend on it.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci._base import streams as _streams
from evalci.engine.cube import factorize, sorted_factorize
from evalci.engine.resampling import stream

RNG = np.random.default_rng(27)

KEYS = {
    "int8 negative": RNG.integers(-100, 100, 300).astype(np.int8),
    "uint8": RNG.integers(0, 250, 300).astype(np.uint8),
    "uint64 wide": RNG.integers(0, 2**63, 80, dtype=np.uint64),
    "int64 wide": RNG.integers(-(2**62), 2**62, 80),
    "int64 sorted": np.arange(500),
    "int64 repeated sorted": np.repeat(np.arange(50), 3),
    "int64 permuted": RNG.permutation(1000),
    "str": RNG.choice(["b", "a", "c", "aa"], 200),
    "str sorted": np.array([f"q{i:04d}" for i in range(300)], dtype=object),
    "object mixed": np.array([2, "a", 1, "a", 2], dtype=object),
    "float": RNG.random(60),
    "bool": RNG.random(30) < 0.5,
    "category": pd.Categorical(["x", "y", "x", "z"], categories=["z", "y", "x"]),
    "datetime": pd.date_range("2020", periods=6)[::-1],
    "Int64": pd.array([3, 1, 2, 3], dtype="Int64"),
}


@pytest.mark.parametrize("name", list(KEYS))
def test_sorted_factorize_is_pandas_sorted_factorize(name):
    series = pd.Series(KEYS[name])
    want_codes, want = pd.factorize(series, sort=True)
    codes, got = sorted_factorize(series)
    np.testing.assert_array_equal(codes, want_codes)
    assert codes.dtype == np.int64
    assert got.equals(pd.Index(want)) and got.dtype == pd.Index(want).dtype


def test_factorize_of_several_columns_is_unique_of_rows():
    df = pd.DataFrame(
        {
            "a": RNG.integers(0, 5, 400),
            "b": RNG.choice(list("xyz"), 400),
            "c": RNG.integers(0, 10**12, 400),
        }
    )
    for cols in (["a", "b"], ["b", "c", "a"]):
        parts = [pd.factorize(df[c], sort=True) for c in cols]
        combos, inverse = np.unique(
            np.column_stack([c for c, _ in parts]), axis=0, return_inverse=True
        )
        want = pd.MultiIndex.from_arrays(
            [pd.Index(u)[combos[:, i]] for i, (_, u) in enumerate(parts)], names=cols
        )
        codes, index = factorize(df, cols, "cluster")
        np.testing.assert_array_equal(codes, inverse.reshape(-1))
        assert index.equals(want) and list(index.names) == cols


ROOTS = [
    np.random.SeedSequence(0),
    np.random.SeedSequence(7),
    np.random.SeedSequence(),  # 128 bits of OS entropy
    np.random.SeedSequence(2**300 + 17, spawn_key=(4, 2**45)),
    np.random.SeedSequence(123).spawn(3)[2],
]


@pytest.mark.parametrize("root", range(len(ROOTS)))
@pytest.mark.parametrize("key", [(1, 0), (1, 3), (2, 0), (1, 2**33)])
def test_streams_are_numpys_own_generators(root, key):
    seq = ROOTS[root]
    first = 2**32 - 3 if root == 1 else 5  # the last stream numbers of one word
    gens = _streams.streams(seq, key, first, 3)
    for s, gen in enumerate(gens):
        want = stream(seq, *key, first + s)
        assert gen.bit_generator.state == want.bit_generator.state
        np.testing.assert_array_equal(gen.random(5), want.random(5))


def test_streams_past_one_word_fall_back_to_numpy():
    seq = np.random.SeedSequence(3)
    gens = list(enumerate(_streams.streams(seq, (1, 0), 2**32 - 1, 3)))
    assert len(gens) == 3
    for s, gen in gens:  # each its own generator here, built the slow way
        want = stream(seq, 1, 0, 2**32 - 1 + s)
        assert gen.bit_generator.state == want.bit_generator.state


def _boot(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        res = evalci.bootstrap(df, n_resamples=300, rng=5, method="bca", **kw)
    return res.to_frame(), res.bootstrap_distribution


def _same(a, b):
    pd.testing.assert_frame_equal(a[0], b[0], check_exact=True)
    np.testing.assert_array_equal(a[1], b[1])


TABLES = {
    "counts": (
        pd.DataFrame(
            {
                "input_id": RNG.permutation(300) * 7,
                "c": RNG.integers(0, 6, 300),
                "k": 5,
            }
        ),
        dict(cluster="input_id", successes="c", trials="k"),
    ),
    "tidy int, two systems": (
        pd.DataFrame(
            {
                "input_id": np.tile(np.repeat(np.arange(200), 3), 2),
                "system": np.repeat(["s1", "s0"], 600),
                "correct": (RNG.random(1200) < 0.6).astype(np.int8),
            }
        ),
        dict(cluster="input_id", value="correct", by="system"),
    ),
    "tidy str, unequal k": (
        pd.DataFrame(
            {
                "input_id": [f"q{i % 150}" for i in range(500)],
                "correct": RNG.random(500) < 0.5,
            }
        ),
        dict(cluster="input_id", value="correct"),
    ),
    "float scores (rows summed in canonical order)": (
        pd.DataFrame(
            {
                "input_id": np.repeat(np.arange(120), 4),
                "score": RNG.random(480) * 0.1 + 1e-3 * RNG.random(480),
            }
        ),
        dict(cluster="input_id", value="score"),
    ),
    "float scores, strata": (
        pd.DataFrame(
            {
                "input_id": np.repeat(np.arange(120), 2),
                "level": np.repeat(np.arange(120) % 3, 2),
                "score": RNG.random(240) / 3,
            }
        ),
        dict(cluster="input_id", value="score", strata="level"),
    ),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_results_do_not_depend_on_row_order(name):
    df, kw = TABLES[name]
    shuffled = df.sample(frac=1.0, random_state=3)
    _same(_boot(df, **kw), _boot(shuffled, **kw))
    _same(_boot(df, **kw), _boot(shuffled.reset_index(drop=True), **kw))


def test_float_sums_in_any_row_order_are_the_canonical_sums():
    # per-input sums of these floats differ in the last bit with the order of
    # addition (0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1): the engine must add each
    # input's rows in one fixed order, so the estimate is the same bits
    df = pd.DataFrame(
        {"input_id": np.repeat(np.arange(40), 3), "v": np.tile([0.1, 0.2, 0.3], 40)}
    )
    reverse = df.iloc[::-1]
    assert 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1
    _same(
        _boot(df, cluster="input_id", value="v"),
        _boot(reverse, cluster="input_id", value="v"),
    )


def test_the_callers_frame_is_not_modified():
    df, kw = TABLES["counts"]
    before = df.copy()
    _boot(df, **kw)
    pd.testing.assert_frame_equal(df, before)


def _blocks(monkeypatch, path, df, rng, n_resamples=4000, **kw):
    from evalci.engine import passes

    monkeypatch.setattr(passes, "_FORCE_PATH", path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        return evalci.bootstrap(
            df,
            n_resamples=n_resamples,
            rng=rng,
            strategy="moving_block",
            method="percentile",
            **kw,
        )


def _sequence(n, seed, systems=1):
    # 0/1 outcomes with serial dependence (a two-state Markov chain), k=3 runs
    rng = np.random.default_rng(seed)
    frames = []
    for s in range(systems):
        state = np.empty(n, dtype=int)
        state[0] = 1
        for t in range(1, n):
            state[t] = state[t - 1] if rng.random() < 0.8 else 1 - state[t - 1]
        p = np.where(state == 1, 0.8, 0.3)
        frames.append(
            pd.DataFrame(
                {
                    "turn": np.repeat(np.arange(n), 3),
                    "system": f"s{s}",
                    "correct": (rng.random(3 * n) < np.repeat(p, 3)).astype(int),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize(
    "n, length, systems", [(400, 7, 1), (403, 10, 2), (300, 12, 1)]
)
def test_moving_blocks_on_patterns_draw_the_index_law(monkeypatch, n, length, systems):
    # Two-sample KS test between the index kernel (the documented draws) and
    # the pattern kernel (block sums as patterns), 4,000 replicates each from
    # independent seeds; per comparison the false-failure rate is 1e-4.
    # n = 403, L = 10 leaves a partial last block (r = 3).
    df = _sequence(n, seed=n, systems=systems)
    kw = dict(value="correct", cluster="turn", block_length=length)
    if systems > 1:
        kw["by"] = "system"
    idx = _blocks(monkeypatch, "index", df, 1, **kw)
    pat = _blocks(monkeypatch, "patterns", df, 2, **kw)
    assert (idx.kernel, pat.kernel) == ("index", "patterns")
    from scipy import stats

    da = np.atleast_2d(idx.bootstrap_distribution)
    dp = np.atleast_2d(pat.bootstrap_distribution)
    for x, y in zip(da, dp, strict=True):
        assert stats.ks_2samp(x, y).pvalue > 1e-4
    if systems > 1:  # the paired gap, too
        assert stats.ks_2samp(da[1] - da[0], dp[1] - dp[0]).pvalue > 1e-4
    np.testing.assert_allclose(idx.estimate, pat.estimate, rtol=1e-12)
    # the dependence is kept: wider than the cluster bootstrap on the same data
    # (a persistent chain: the std of the mean is ~1.3-1.6x the independent one)
    assert np.std(dp[0]) > 1.1 * np.std(
        np.atleast_2d(
            _boot(df, **{k: v for k, v in kw.items() if k != "block_length"})[1]
        )[0]
    )


def test_moving_blocks_on_patterns_are_the_documented_draws(monkeypatch):
    # a slow re-draw of the pattern plan: per stream, Multinomial(nb - 1) over
    # the distinct full-block sums (sorted), then one draw over the distinct
    # partial sums (sorted), from stream (BOOT, 0, s). The multinomial form:
    # the total form (one system, equal runs) is switched off here and
    # tested in tests/test_block_totals.py
    from evalci.engine import patterns_total, resampling

    monkeypatch.setattr(patterns_total, "TOTAL_RATIO", 0)

    df = _sequence(203, seed=5)
    L, B = 10, 300
    res = _blocks(
        monkeypatch,
        "patterns",
        df,
        9,
        n_resamples=B,
        value="correct",
        cluster="turn",
        block_length=L,
    )
    assert res.kernel == "patterns"
    c = df.groupby("turn").correct.sum().to_numpy()  # k = 3 for every input
    n = len(c)
    full = np.array([c[s : s + L].sum() for s in range(n - L + 1)])
    part = np.array([c[s : s + 3].sum() for s in range(n - L + 1)])  # r = 3
    fv, fn = np.unique(full, return_counts=True)
    pv, pn = np.unique(part, return_counts=True)
    root = resampling.seed_sequence(9)
    want = []
    for s in range(resampling.n_streams_for(B)):
        gen = resampling.stream(root, 0, 0, s)
        wf = gen.multinomial(-(-n // L) - 1, fn / fn.sum(), size=64)
        wp = gen.multinomial(1, pn / pn.sum(), size=64)
        want.extend((wf @ fv + wp @ pv) / (3.0 * n))
    np.testing.assert_allclose(
        np.ravel(res.bootstrap_distribution), want[:B], rtol=1e-12
    )
