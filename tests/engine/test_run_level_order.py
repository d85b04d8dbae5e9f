"""Run-level strategies without the row sort (issue 39).

hierarchical and single_draw on two-valued rows (0/1 data) and iid on whole
numbers leave the cube's rows in the table's order and sort them only when
the index kernel reads them (``Cube.pending_order``, ``Cube.settle``). Every
result must be bit for bit what the sorted cube gives: checked against the
cube settled at once (the path before issue 39), against values recorded on
main before the change, on shuffled tables, and the two order-free helpers
against the old code they replace (kept here as the reference).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine import passes, patterns_find, table
from evalci.engine.args import bootstrap_iv_of
from evalci.engine.cube import iid_order, value_codes


def tidy(n, systems=1, seed=0, kind="binary"):
    """A shuffled tidy table: one row per (input, run, system)."""
    rng = np.random.default_rng(seed)
    frames = []
    for s in range(systems):
        k = rng.integers(1, 6, n) if kind == "ragged" else np.full(n, 5)
        ids = np.repeat(np.arange(n), k)
        p = rng.beta(2, 2, n)[ids]
        if kind == "scores":  # three and more values: the run rows are read
            y = rng.integers(0, 4, len(ids)).astype(float)
        elif kind == "bool":
            y = rng.random(len(ids)) < p
        elif kind == "float":  # 0/1 as floats: whole numbers, scanned
            y = (rng.random(len(ids)) < p).astype(float)
        else:
            y = (rng.random(len(ids)) < p).astype(np.int8)
        frame = pd.DataFrame({"input_id": ids, "system": f"s{s}", "correct": y})
        frames.append(frame.assign(subject=frame.input_id % 3))
    df = pd.concat(frames, ignore_index=True)
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def run(df, strategy, force=None, **kw):
    if df.system.nunique() > 1:
        kw.setdefault("by", "system")
    passes._FORCE_PATH = force
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evalci.EvalciWarning)
            kw = {"n_resamples": 700, "rng": 9, **kw}
            return evalci.bootstrap(
                df, value="correct", cluster="input_id", strategy=strategy, **kw
            )
    finally:
        passes._FORCE_PATH = None


def settled_at_once(monkeypatch):
    """The path before issue 39: the cube in canonical order from the start."""

    def prepare(data, args, root):
        cube, n_runs = table.prepare(data, args, root)
        cube.settle()
        return cube, n_runs

    monkeypatch.setattr(passes, "prepare", prepare)


def same(a, b):
    assert a.kernel == b.kernel
    for name in ("estimate", "low", "high", "acceleration", "standard_error"):
        x, y = np.atleast_1d(getattr(a, name)), np.atleast_1d(getattr(b, name))
        np.testing.assert_array_equal(x, y, err_msg=name)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


CASES = [
    (strategy, kind, systems, extra)
    for strategy in ("hierarchical", "single_draw", "iid")
    for kind in ("binary", "ragged", "scores", "bool", "float")
    for systems in (1, 3)
    for extra in ({}, {"method": "bca", "weight": "run"}, {"strata": "subject"})
]


@pytest.mark.parametrize(("strategy", "kind", "systems", "extra"), CASES)
def test_bits_equal_the_sorted_cube(monkeypatch, strategy, kind, systems, extra):
    df = tidy(150 if systems == 3 else 400, systems, seed=3, kind=kind)
    new = run(df, strategy, **extra)
    shuffled = run(df.sample(frac=1.0, random_state=1), strategy, **extra)
    settled_at_once(monkeypatch)
    old = run(df, strategy, **extra)
    same(new, old)
    same(shuffled, old)


@pytest.mark.parametrize(
    ("strategy", "extra"),
    [
        ("iid", {"weights": "poisson"}),
        ("iid", {"weights": "poisson", "strata": "subject"}),
        ("hierarchical", {"backend": "dask"}),
        ("single_draw", {"backend": "dask", "method": "bca"}),
        ("iid", {"backend": "dask"}),
        ("hierarchical", {"paired": False}),
        ("single_draw", {"paired": False, "method": "bca"}),
    ],
)
def test_poisson_dask_and_unpaired_equal_the_sorted_cube(monkeypatch, strategy, extra):
    df = tidy(300, 2, seed=5)
    new = run(df, strategy, **extra)
    settled_at_once(monkeypatch)
    same(new, run(df, strategy, **extra))


@pytest.mark.parametrize("strategy", ["hierarchical", "single_draw", "iid"])
def test_index_kernel_sorts_first(monkeypatch, strategy):
    """Forced onto the index kernel (which draws rows by offset): the rows
    are sorted first, so a shuffled table gives the same bits."""
    df = tidy(200, 2, seed=4)
    new = run(df, strategy, force="index")
    shuffled = run(df.sample(frac=1.0, random_state=2), strategy, force="index")
    settled_at_once(monkeypatch)
    same(new, run(df, strategy, force="index"))
    same(shuffled, new)


def test_counts_tables_equal_the_sorted_cube(monkeypatch):
    rng = np.random.default_rng(6)
    df = pd.DataFrame(
        {
            "input_id": np.tile(np.arange(300), 2),
            "system": np.repeat(["a", "b"], 300),
            "c": rng.binomial(5, 0.6, 600),
            "k": 5,
        }
    ).sample(frac=1.0, random_state=3)
    kw = dict(successes="c", trials="k", cluster="input_id", by="system", rng=2)
    got = {
        s: evalci.bootstrap(df, strategy=s, **kw)
        for s in ("hierarchical", "single_draw")
    }
    settled_at_once(monkeypatch)
    for s, res in got.items():
        same(res, evalci.bootstrap(df, strategy=s, **kw))


def test_paired_comparison_equals_the_sorted_cube(monkeypatch):
    """compare() reads the per-input jackknife and scores of the cube."""
    df = tidy(300, 2, seed=8)
    kw = dict(cluster="input_id", system="system", strategy="hierarchical", rng=4)
    new = evalci.compare(df, "correct", method="bca", **kw)
    settled_at_once(monkeypatch)
    old = evalci.compare(df, "correct", method="bca", **kw)
    pd.testing.assert_frame_equal(new.to_frame(), old.to_frame())


# values of main before issue 39 (seeded, 2,000 resamples, shuffled tables)
RECORDED = {
    ("hierarchical", 1, False, "percentile"): ([0.4713166666666667], [0.548]),
    ("single_draw", 1, True, "bca"): ([0.46], [0.5733333333333334]),
    ("iid", 1, False, "bca"): ([0.4837896996902379], [0.5353333333333333]),
    ("hierarchical", 3, True, "bca"): (
        [0.47448209569477234, 0.41286443602815276, 0.49753334586362885],
        [0.5636111111111131, 0.5078781267598644, 0.5872885621984473],
    ),
    ("single_draw", 3, False, "percentile"): (
        [0.4533333333333333, 0.43333333333333335, 0.4666666666666667],
        [0.5666666666666667, 0.5533333333333333, 0.5766666666666667],
    ),
    ("iid", 3, True, "percentile"): (
        [0.48044692737430167, 0.42643923240938164, 0.5060240963855421],
        [0.5463687150837989, 0.4904051172707889, 0.5728368017524644],
    ),
}


@pytest.mark.parametrize("case", list(RECORDED))
def test_recorded_values_of_main(case):
    strategy, systems, ragged, method = case
    df = tidy(300, systems, 11, "ragged" if ragged else "binary")
    r = run(df, strategy, method=method, n_resamples=2000, rng=5)
    low, high = RECORDED[case]
    assert np.atleast_1d(r.low).tolist() == low
    assert np.atleast_1d(r.high).tolist() == high


def test_unsorted_only_where_the_kernel_reads_no_row():
    """The sort is skipped (pending) on the pattern path of two-valued rows
    and done where the run rows are read (three values; the index kernel)."""

    def pending(df, strategy, force=None):
        a = bootstrap_iv_of(
            df, {}, value="correct", cluster="input_id", strategy=strategy
        )
        passes._FORCE_PATH = force
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", evalci.EvalciWarning)
                p = passes.start_pass(df, a, np.random.SeedSequence(0))
        finally:
            passes._FORCE_PATH = None
        return p.cube.pending_order is not None

    binary, scores = tidy(400, seed=1), tidy(400, seed=1, kind="scores")
    assert pending(binary, "hierarchical") and pending(binary, "single_draw")
    assert pending(binary, "iid")
    assert not pending(scores, "hierarchical")
    assert not pending(binary, "hierarchical", force="index")
    assert not pending(binary, "iid", force="index")


# -------------------------------------------------- the order-free helpers
def _two_values_sorted(stats, row_group, g, order):
    """The reference: main's two_values of group g's rows in canonical order."""
    rows = stats[order]
    return patterns_find.two_values(rows[row_group[order] == g])


@pytest.mark.parametrize("seed", range(6))
def test_group_two_values_is_two_values_per_group(seed):
    rng = np.random.default_rng(seed)
    r, groups = 500, 4
    row_group = rng.integers(0, groups, r)
    stats = np.ones((r, 3))
    stats[:, 0] = rng.integers(0, 2, r)
    stats[:, 1] = 2 * stats[:, 0] - 1  # negative values are fine
    stats[row_group == 1, 0] = 7.0  # one value only
    stats[row_group == 2, 2] = rng.integers(0, 3, (row_group == 2).sum())  # many
    got = patterns_find.group_two_values(stats, row_group, groups)
    order = np.lexsort((stats[:, 0], row_group))
    for g in range(groups):
        want = _two_values_sorted(stats, row_group, g, order)
        if want is None:
            assert got[g] is None
        else:
            for a, b in zip(got[g], want, strict=True):
                assert a.tobytes() == b.tobytes()  # the same bits
    one = patterns_find.group_two_values(stats[row_group == 0], row_group[:0], 1)
    assert [x.tolist() for x in one[0]] == [x.tolist() for x in got[0]]


def test_group_two_values_refuses_order_dependent_bits():
    stats = np.array([[0.0, 1.0], [-0.0, 1.0], [1.0, 1.0]])
    assert patterns_find.group_two_values(stats, np.zeros(3, int), 1) is None
    stats[1, 0] = np.nan
    assert patterns_find.group_two_values(stats, np.zeros(3, int), 1) is None


@pytest.mark.parametrize(
    "values",
    [
        np.array([1, 0, 1, 1, 0, 0, 1], dtype=np.int8),
        np.array([True, False, True, True, False, False, True]),
        np.array([-128, 127, 0, -128, 5, 127, 0], dtype=np.int8),
        np.array([3, -2, 3, 0, -2, 1, 1], dtype=np.int64),
        np.array([2**63 + 5, 2**63 + 1, 2**63 + 5, 2**63 + 1] * 2, dtype=np.uint64)[:7],
        np.array([0.5, 0.0, 0.5, 1.0, 0.0, 1.0, 0.5]),  # floats: the lexsort
        np.array([0, 40_000, 0, 40_000, 1, 1, 2], dtype=np.int64),  # wide: lexsort
    ],
)
def test_iid_order_is_the_lexsort(values):
    rng = np.random.default_rng(0)
    for n_groups in (1, 3):
        group_codes = rng.integers(0, n_groups, len(values))
        series = pd.Series(values)
        want = np.lexsort((value_codes(series), group_codes))
        np.testing.assert_array_equal(iid_order(series, group_codes), want)
    big = pd.Series(rng.integers(0, 2, 10_000).astype(np.int8))
    group_codes = rng.integers(0, 5, 10_000)
    want = np.lexsort((value_codes(big), group_codes))
    np.testing.assert_array_equal(iid_order(big, group_codes), want)
