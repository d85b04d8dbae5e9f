"""Input ids of every dtype factorize as ``pd.factorize(sort=True)`` (issue 34).

Ids of dtype uint64 above 2**63 (64-bit hashes) crashed ``cluster_ci`` with
``OverflowError`` in the O(N) factorize's table of present values. The
reference for every dtype is pandas' own sorted factorize: the same codes, the
same unique keys and the same dtype of the keys. Each dtype is tried twice,
with a narrow range of values (the O(N) table path for integers) and a wide
one (the hashed path).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine.cube import factorize, sorted_factorize

RNG = np.random.default_rng(34)
TOP = np.iinfo(np.uint64).max


def _ints(dtype):
    """Narrow (a few values at each end of the dtype's range) and wide ids."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    low = [lo + int(d) for d in RNG.integers(0, 5, 40)]
    high = [hi - int(d) for d in RNG.integers(0, 5, 40)]
    wide = low[:20] + high[:20] + [0, 1, 0]
    wide = [wide[i] for i in RNG.permutation(len(wide))]
    return {
        f"{np.dtype(dtype).name} low": np.array(low, dtype=object).astype(dtype),
        f"{np.dtype(dtype).name} high": np.array(high, dtype=object).astype(dtype),
        f"{np.dtype(dtype).name} wide": np.array(wide, dtype=object).astype(dtype),
    }


INT_DTYPES = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
]
KEYS = {name: v for d in INT_DTYPES for name, v in _ints(d).items()}
KEYS.update(
    {
        # 64-bit hashes: above 2**63, narrow (table path) and spread (hashed)
        "uint64 hashes narrow": np.uint64(2**63)
        + RNG.integers(0, 200, 300).astype(np.uint64),
        "uint64 hashes spread": RNG.integers(
            2**63, TOP, 300, dtype=np.uint64, endpoint=True
        ),
        "uint64 across 2**63": np.array(
            [2**63 - 2, 2**63 + 3, 2**63 - 2, 2**63], dtype=np.uint64
        ),
        "uint64 sorted above 2**63": np.arange(2**63 + 10, 2**63 + 20, dtype=np.uint64),
        "bool": RNG.random(30) < 0.5,
        "bool one value": np.ones(5, dtype=bool),
        "datetime64": pd.date_range("2020", periods=6, freq="h")[::-1].repeat(2),
        "datetime64 tz": pd.date_range("2020", periods=6, freq="D", tz="Europe/Paris")[
            [3, 1, 4, 1, 5]
        ],
        "datetime64 s": np.array(
            ["2021-03-01", "2020-01-01", "2021-03-01"], dtype="M8[s]"
        ),
        "timedelta64": pd.to_timedelta([3, 1, 2, 1, 3], unit="s"),
        "category unused": pd.Categorical(
            ["x", "y", "x"], categories=["z", "y", "x", "w"]
        ),
        "category ordered": pd.Categorical(
            ["lo", "hi", "mid", "hi"],
            categories=["lo", "mid", "hi", "never"],
            ordered=True,
        ),
        "category of ints": pd.Categorical([30, 10, 30], categories=[30, 20, 10]),
        "Int64": pd.array([3, 1, 2, 3], dtype="Int64"),
        "UInt64 above 2**63": pd.array([TOP, 2**63 + 1, TOP], dtype="UInt64"),
        "Int8": pd.array([-128, 127, 0, 127], dtype="Int8"),
        "boolean": pd.array([True, False, True], dtype="boolean"),
        "str": RNG.choice(["b", "a", "c", "aa"], 200),
        "string dtype": pd.array(["b", "a", "b", "é"], dtype="string"),
        "object str": np.array(["q2", "q10", "q1"], dtype=object),
        "object ints above 2**63": np.array([TOP, 1, 2**63 + 7, 1], dtype=object),
        "object mixed": np.array([2, "a", 1, "a", 2.5], dtype=object),
        "object tuples": np.array(
            [("t", 2), ("s", 1), ("t", 2)] + [None], dtype=object
        )[:3],
        "float": RNG.random(60),
    }
)


@pytest.mark.parametrize("name", list(KEYS))
def test_sorted_factorize_is_pandas_sorted_factorize(name):
    series = pd.Series(KEYS[name])
    want_codes, want = pd.factorize(series, sort=True)
    want = pd.Index(want)
    codes, got = sorted_factorize(series)
    np.testing.assert_array_equal(codes, want_codes)
    assert codes.dtype == np.int64
    assert got.equals(want), (got, want)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("name", list(KEYS))
def test_factorize_names_the_column_and_keeps_the_keys(name):
    frame = pd.DataFrame({"id": KEYS[name]})
    want_codes, want = pd.factorize(frame["id"], sort=True)
    codes, got = factorize(frame, ["id"], "cluster")
    np.testing.assert_array_equal(codes, want_codes)
    assert got.name == "id" and got.equals(pd.Index(want))


def test_several_columns_with_a_hash_column():
    n = 400
    df = pd.DataFrame(
        {
            "task": RNG.choice(["b", "a"], n),
            "h": np.uint64(TOP) - RNG.integers(0, 50, n).astype(np.uint64),
        }
    )
    parts = [pd.factorize(df[c], sort=True) for c in ["task", "h"]]
    combos, inverse = np.unique(
        np.column_stack([c for c, _ in parts]), axis=0, return_inverse=True
    )
    codes, index = factorize(df, ["task", "h"], "cluster")
    np.testing.assert_array_equal(codes, inverse.reshape(-1))
    assert index.get_level_values("h").dtype == np.uint64
    assert index.get_level_values("h").max() <= np.uint64(2**64 - 1)


def _table(ids):
    """Five runs on each of the ``ids``, as a tidy table with a seeded score."""
    rng = np.random.default_rng(5)
    p = rng.uniform(0.2, 0.9, len(ids))
    rows = pd.DataFrame(
        {"id": np.repeat(ids, 5), "correct": rng.random(5 * len(ids)) < np.repeat(p, 5)}
    )
    return rows.sample(frac=1.0, random_state=1).reset_index(drop=True)


@pytest.mark.parametrize(
    "hashes",
    [
        np.uint64(2**63)
        + RNG.choice(1000, 60, replace=False).astype(np.uint64),  # table
        RNG.choice(2**62, 60, replace=False).astype(np.uint64)
        + np.uint64(2**63),  # hashed
    ],
    ids=["narrow", "spread"],
)
def test_cluster_ci_on_uint64_hashes_is_cluster_ci_on_small_ids(hashes):
    """The same interval, bit for bit, as the same table with its hashes
    mapped in order to 0..N-1: ids only name inputs, and their order is kept."""
    table = _table(hashes)
    small = table.assign(id=pd.Index(np.sort(hashes)).get_indexer(table["id"]))
    kw = dict(cluster="id", n_resamples=500, rng=3)
    got = evalci.cluster_ci(table, "correct", **kw)
    want = evalci.cluster_ci(small, "correct", **kw)
    assert (got.estimate, got.low, got.high) == (want.estimate, want.low, want.high)
    np.testing.assert_array_equal(
        got.bootstrap_distribution, want.bootstrap_distribution
    )
    assert got.n_inputs == len(hashes)


@pytest.mark.parametrize(
    "name",
    [
        "uint64 hashes narrow",
        "int8 wide",
        "datetime64 tz",
        "category unused",
        "Int64",
        "string dtype",
    ],
)
def test_cluster_ci_runs_on_each_kind_of_id(name):
    ids = pd.unique(pd.Series(KEYS[name]))
    table = _table(np.asarray(ids, dtype=object))
    table["id"] = table["id"].astype(pd.Series(KEYS[name]).dtype)
    with warnings.catch_warnings():  # a few ids only: FewClustersWarning
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        got = evalci.cluster_ci(table, "correct", cluster="id", n_resamples=200, rng=0)
    assert got.n_inputs == len(ids)
    assert 0 <= got.low <= got.estimate <= got.high <= 1
