"""Codes kept for one call (``engine.keys.remembered_codes``): the same
codes as computed afresh, never another column's.

compare and leaderboard code their input and system columns several times in
one call (checking what is missing, then in the cube); inside the block each
column is coded once. The reference is the computation outside the block
(``pd.factorize(sort=True)``'s codes, tested for every dtype in
test_factorize_dtypes.py).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine import keys
from evalci.engine.keys import remembered_codes, sorted_factorize

RNG = np.random.default_rng(39)
WORDS = np.array([f"q{i:03d}" for i in RNG.permutation(200)], dtype=object)

COLUMNS = {
    "object strings": pd.Series(WORDS, dtype=object),
    "pandas strings": pd.Series(WORDS, dtype="string"),
    "str": pd.Series(WORDS, dtype="str"),
    "categorical": pd.Series(pd.Categorical(WORDS)),
    "int64 wide": pd.Series(RNG.integers(-(2**62), 2**62, 200)),
    "int64 narrow": pd.Series(RNG.integers(0, 50, 200)),
    "float": pd.Series(RNG.random(200)),
}


@pytest.mark.parametrize("name", list(COLUMNS))
def test_kept_codes_equal_fresh_ones_and_are_copies(name):
    s = COLUMNS[name]
    fresh_codes, fresh_keys = sorted_factorize(s)
    with remembered_codes():
        first, k1 = sorted_factorize(s)
        first[:] = -1  # a caller changing its codes changes no kept ones
        again, k2 = sorted_factorize(s)
        nested = None
        with remembered_codes():  # nested blocks share the outer one
            nested = sorted_factorize(s)[0]
        assert len(keys._KEPT.get()) == 1
    assert keys._KEPT.get() is None  # nothing kept after the block
    np.testing.assert_array_equal(again, fresh_codes)
    np.testing.assert_array_equal(nested, fresh_codes)
    assert k1.equals(fresh_keys) and k2.equals(fresh_keys)


@pytest.mark.parametrize("name", list(COLUMNS))
def test_other_columns_over_the_same_memory_get_their_own_codes(name):
    """Slices, reversed views and other columns never take a kept entry."""
    s = COLUMNS[name]
    others = [s.iloc[1:], s.iloc[:-1], s.iloc[::-1], s.iloc[::2], s.copy()]
    others.append(s.sort_values())
    with remembered_codes():
        sorted_factorize(s)
        got = [sorted_factorize(o) for o in others]
    for o, (codes, uniques) in zip(others, got, strict=True):
        want_codes, want_keys = pd.factorize(o, sort=True)
        np.testing.assert_array_equal(codes, want_codes)
        np.testing.assert_array_equal(np.asarray(uniques), np.asarray(want_keys))


def _systems_table(dtype):
    n, k = 60, 3
    gen = np.random.default_rng(7)
    df = pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(WORDS[:n], k), 3),
            "system": np.repeat(["a", "c", "b"], n * k),
            "correct": (gen.random(3 * n * k) < 0.6).astype(int),
        }
    )
    df = df.iloc[gen.permutation(len(df))].reset_index(drop=True)
    return df.astype({"input_id": dtype, "system": dtype})


@pytest.mark.parametrize("dtype", [object, "str", "category"])
def test_compare_and_leaderboard_equal_integer_coded_tables(dtype):
    """The same table with ids and names replaced by integers that sort like
    them gives the same gaps and scores, bit for bit (the cube's order is
    the keys' sorted order either way); the user's table is not changed."""
    df = _systems_table(dtype)
    before = df.copy()
    coded = df.assign(
        input_id=pd.factorize(df["input_id"].astype(str), sort=True)[0],
        system=pd.factorize(df["system"].astype(str), sort=True)[0],
    )
    kw = dict(n_resamples=500, rng=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        got = evalci.compare(df, "correct", "input_id", "system", **kw).to_frame()
        want = evalci.compare(coded, "correct", "input_id", "system", **kw).to_frame()
        board = evalci.leaderboard(df, "correct", "input_id", "system", **kw)
        board_coded = evalci.leaderboard(coded, "correct", "input_id", "system", **kw)
    cols = ["estimate_a", "estimate_b", "gap", "low", "high", "pvalue"]
    np.testing.assert_array_equal(got[cols].to_numpy(), want[cols].to_numpy())
    assert got["a"].tolist() == ["a", "a", "b"] and got["b"].tolist() == ["b", "c", "c"]
    a, b = board.to_frame(), board_coded.to_frame()
    num = [c for c in a.columns if a[c].dtype.kind in "fi"]
    assert "estimate" in num
    np.testing.assert_array_equal(a[num].to_numpy(), b[num].to_numpy())
    assert a["system"].tolist() == ["abc"[i] for i in b["system"]]
    pd.testing.assert_frame_equal(df, before)
