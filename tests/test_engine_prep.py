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
