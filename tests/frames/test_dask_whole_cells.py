"""0/1 and count data reduced on Dask without a shuffle (issue 39).

Each partition sums its rows into partial cells and the partials are added
by input block (``evalci-cells``, ``evalci-sum``). The reference is the
pandas path on the same rows (bit for bit, ``np.array_equal``), and for the
cells themselves the canonical-order sums of the whole table
(:func:`evalci.engine.cells.cell_statistics`, which the shuffle path runs).
Layouts: an input's runs split across partitions (rows shuffled), 1 to 24
partitions (a tree of several levels, ``FAN_IN`` lowered, and several
blocks), several systems, strata, integer and float 0/1 columns, string and
integer input keys.
"""

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine import args as _args
from evalci.engine import cells as _cells
from evalci.frames import dask_cells, dask_frame

from conftest import local_cluster  # noqa: E402

FIELDS = ("estimate", "low", "high", "standard_error", "bootstrap_distribution")
KW = dict(n_resamples=1100, rng=5)


def identical(a, b):
    for f in FIELDS:
        x, y = np.asarray(getattr(a, f)), np.asarray(getattr(b, f))
        assert np.array_equal(x, y, equal_nan=True), f
    assert np.array_equal(np.asarray(a.n_runs), np.asarray(b.n_runs))


def table(n=150, k=4, systems=3, dtype=np.int8, keys="int", seed=0):
    """0/1 outcomes of ``n`` inputs x up to ``k`` runs x ``systems``, rows shuffled."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(systems):
        for i in range(n):
            for r in range(int(rng.integers(1, k + 1))):
                rows.append((i, r, f"sys{s}", i % 3, rng.random() < 0.3 + 0.2 * s))
    df = pd.DataFrame(rows, columns=["input_id", "run", "system", "subject", "correct"])
    df["correct"] = df["correct"].astype(dtype)
    if keys == "str":
        df["input_id"] = "q" + df["input_id"].astype(str)
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)


@pytest.fixture
def no_shuffle(monkeypatch):
    """Fail if the shuffle path runs."""

    def refuse(*args, **kwargs):
        raise AssertionError("the shuffle ran")

    monkeypatch.setattr(dask_frame, "cell_parts", refuse)


CASES = [
    dict(by="system"),
    dict(by="system", strata="subject", method="bca"),
    dict(method="bca", weight="run"),
]


@pytest.mark.parametrize(
    "kw, npartitions", [(CASES[0], 1), (CASES[1], 7), (CASES[2], 5), (CASES[1], 24)]
)
def test_0_1_outcomes_equal_pandas_without_a_shuffle(
    kw, npartitions, no_shuffle, monkeypatch
):
    # 24 partitions: 3 blocks, each a tree of five levels (at most 2 a task)
    monkeypatch.setattr(dask_cells, "FAN_IN", 2 if npartitions > 10 else 64)
    df = table(n=50 if npartitions > 10 else 120)
    if "by" not in kw:
        df = df[df.system == "sys1"]
    ref = evalci.cluster_ci(df, "correct", "input_id", **KW, **kw)
    ddf = dd.from_pandas(df, npartitions=npartitions, sort=False)
    with dask.config.set(scheduler="sync"):
        eager = ddf.evalci.cluster_ci("correct", "input_id", **KW, **kw)
        lazy = ddf.evalci.cluster_ci("correct", "input_id", compute=False, **KW, **kw)
        names = {str(k[0] if isinstance(k, tuple) else k) for k in lazy.dask}
        identical(ref, eager)
        identical(ref, lazy.compute())
    assert any(n.startswith("evalci-cells") for n in names)
    assert not any("shuffle" in n for n in names)
    if npartitions > 10:  # 24 -> 12 -> 6 -> 3 -> 2 -> 1: five levels
        assert any(n.startswith("evalci-sum-") and n.endswith("-4-0") for n in names)


def test_float_bool_and_string_keys_on_a_local_cluster(no_shuffle):
    with local_cluster(n_workers=2, processes=False) as (_, client):
        for dtype, keys in [(float, "str"), (bool, "int"), (int, "str")]:
            df = table(n=80, dtype=dtype, keys=keys, seed=1)
            ref = evalci.cluster_ci(df, "correct", "input_id", by="system", **KW)
            ddf = dd.from_pandas(df, npartitions=11, sort=False)
            got = evalci.cluster_ci(ddf, "correct", "input_id", by="system", **KW)
            identical(ref, got)


def test_the_blocks_hold_the_canonical_sums_of_the_whole_table():
    # independent reference: each cell's rows summed in one place, in order
    df = table(n=300, keys="str", seed=2)
    meta = df.iloc[:0]
    args = _args.bootstrap_iv_of(
        meta, dict(value="correct", cluster="input_id", by="system", strata="subject")
    )
    want = _cells.cell_statistics(df, args)
    ddf = dd.from_pandas(df, npartitions=19, sort=False)
    blocks, bigs = dask_cells.block_cells(ddf, args, "t")
    with dask.config.set(scheduler="sync"):
        blocks, bigs = dask.compute(blocks, bigs)
    assert len(blocks) == 3  # 19 partitions: 3 blocks of the input keys
    assert dask_cells.exact(blocks, bigs)
    got = pd.concat(blocks, ignore_index=True)
    keys = ["input_id", "system", "subject"]
    assert not got.duplicated(keys).any()
    want, got = (t.sort_values(keys).reset_index(drop=True) for t in (want, got))
    pd.testing.assert_frame_equal(got, want[got.columns], check_dtype=False)


def test_scores_take_the_shuffle_and_equal_pandas():
    # not whole: every partition says so at once; the shuffle path decides
    rng = np.random.default_rng(3)
    df = table(seed=3).assign(score=lambda d: rng.normal(size=len(d)))
    ref = evalci.cluster_ci(df, "score", "input_id", by="system", **KW)
    ddf = dd.from_pandas(df, npartitions=5, sort=False)
    args = _args.bootstrap_iv_of(
        df.iloc[:0], dict(value="score", cluster="input_id", by="system")
    )
    with dask.config.set(scheduler="sync"):
        blocks, bigs = dask.compute(*dask_cells.block_cells(ddf, args, "t"))
        assert blocks == [None] and bigs == [None] * 5
        assert not dask_cells.exact(blocks, bigs)
        identical(ref, ddf.evalci.cluster_ci("score", "input_id", by="system", **KW))
        lazy = ddf.evalci.cluster_ci("score", "input_id", compute=False, **KW)
    assert not any("evalci-cells" in str(k) for k in lazy.dask)


def test_counts_too_large_to_add_in_any_order_take_the_shuffle():
    # whole, but the largest times a cell's runs reaches 2**53: pandas sums
    # in the canonical order, and so does the shuffle path
    df = table(n=40, systems=1, dtype=np.int64, seed=4)
    df["correct"] = df["correct"] * 2**51 + df["run"]
    ref = evalci.cluster_ci(df, "correct", "input_id", **KW)
    ddf = dd.from_pandas(df, npartitions=4, sort=False)
    with dask.config.set(scheduler="sync"):
        identical(ref, ddf.evalci.cluster_ci("correct", "input_id", **KW))
        lazy = ddf.evalci.cluster_ci("correct", "input_id", compute=False, **KW)
        with pytest.raises(ValueError, match="too large to add exactly"):
            lazy.compute()


def test_whole_by_type_reads_the_metadata():
    meta = pd.DataFrame(
        {
            "id": pd.Series(dtype=np.int32),
            "i": pd.Series(dtype=np.int8),
            "b": pd.Series(dtype=bool),
            "f": pd.Series(dtype=float),
        }
    )
    for value, whole in (("i", True), ("b", True), ("f", False)):
        args = _args.bootstrap_iv_of(meta, dict(value=value, cluster="id"))
        assert dask_cells.whole_by_type(meta, args) is whole


def test_input_blocks_agree_across_partitions():
    ints = pd.DataFrame({"k": np.array([5, -3, 12, 5, 7], dtype=np.int32)})
    assert dask_cells.input_blocks(ints, 4).tolist() == [1, 1, 0, 1, 3]
    strs = pd.DataFrame({"k": ["a", "b", "c", "a"]})
    alone = pd.DataFrame({"k": ["c"]})
    blocks = dask_cells.input_blocks(strs, 5)
    assert blocks[0] == blocks[3]
    assert blocks[2] == dask_cells.input_blocks(alone, 5)[0]
    assert blocks.min() >= 0 and blocks.max() < 5


def test_dense_cells_and_cell_order_match_unique_and_lexsort():
    rng = np.random.default_rng(6)
    for size in (50, 10**6):  # a table of the codes, then np.unique's sort
        flat = rng.integers(0, size, 400)
        first, cell = _cells._dense_cells(flat)
        _, _, want = np.unique(flat, return_index=True, return_inverse=True)
        assert np.array_equal(cell, want)
        assert np.array_equal(flat[first], np.unique(flat))
    cells = rng.permutation(60 * 3)[:150]
    cluster, group = cells % 60, cells // 60
    want = np.lexsort((cluster, group))
    assert np.array_equal(_cells._cell_order(cluster, group, 60, 3), want)
    assert _cells._cell_order(np.arange(9) % 3, np.arange(9) // 3, 3, 3) is None
    twice = np.concatenate([cluster, cluster[:5]]), np.concatenate([group, group[:5]])
    assert np.array_equal(
        _cells._cell_order(*twice, 60, 3), np.lexsort(twice)
    )  # a repeated cell: the sort
