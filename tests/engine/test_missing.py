"""``missing=`` on bootstrap / cluster_ci: raise, drop, zero, bounds (issue 22)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci import MissingDataWarning

B = 2000


def quiet(fn, *args, **kwargs):
    """``fn`` with evalci's warnings recorded, not raised (small tables)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [w.category for w in caught]


@pytest.fixture
def flat():
    """Four inputs, one run each; the last errored."""
    return pd.DataFrame(
        {
            "q": ["a", "b", "c", "d"],
            "y": [1.0, 0.0, 1.0, np.nan],
            "error": [None, None, None, "RuntimeError: boom"],
        }
    )


@pytest.fixture
def runs():
    """Three inputs, two runs: a has one missing run, c is wholly missing."""
    return pd.DataFrame(
        {
            "q": ["a", "a", "b", "b", "c", "c"],
            "y": [1.0, np.nan, 0.0, 0.0, np.nan, np.nan],
            "error": [None, "x", None, None, None, "y"],
            "limit": [None, None, None, None, "token", None],
        }
    )


def test_raise_names_counts_inputs_causes_and_choices(runs):
    with pytest.raises(ValueError) as e:
        evalci.cluster_ci(runs, "y", "q")
    msg = str(e.value)
    assert "column 'y' has 3 missing values (of 6 rows) in 2 inputs ('a', 'c')" in msg
    assert "2 errored, 1 hit a limit" in msg
    for choice in ("'raise'", "'drop'", "'zero'", "'bounds'"):
        assert choice in msg


@pytest.mark.filterwarnings("ignore::evalci.FewClustersWarning")
def test_drop_by_hand_and_warns(runs):
    with pytest.warns(MissingDataWarning, match="left out 3 of 6 runs"):
        r = evalci.cluster_ci(runs, "y", "q", missing="drop", rng=0)
    # a's scored run (1) and b (0, 0): the wholly missing input c disappears
    assert r.estimate == pytest.approx(0.5)
    assert (r.n_inputs, r.n_runs) == (2, 3)
    row = r.to_frame().iloc[0]
    assert row.n_attempted == 6 and row.n_scored == 3 and row.n_missing == 3
    assert row.n_errored == 2 and row.n_hit_limit == 1 and row.n_inputs_unscored == 1
    assert "scored 3 of 6 runs; 2 errored; 1 hit a limit" in repr(r)


def test_zero_fills_runs_by_hand(runs):
    r, _ = quiet(evalci.cluster_ci, runs, "y", "q", missing="zero", rng=0)
    # a = (1 + 0) / 2, b = 0, c = 0: each input keeps its two runs
    assert r.estimate == pytest.approx(1 / 6)
    assert (r.n_inputs, r.n_runs) == (3, 6)


def test_bounds_missing_run_and_missing_input_by_hand(runs):
    r, _ = quiet(evalci.cluster_ci, runs, "y", "q", missing="bounds", rng=0,
                 n_resamples=B)  # fmt: skip
    # c = mean of the scored shares (1/2, 1, 0); scored part weights a run by
    # 1 / (attempted runs): (1/2) / (1/2 + 1) = 1/3
    assert r.share_scored == pytest.approx(0.5)
    assert r.estimate == pytest.approx(1 / 3)
    # identified set [c * 1/3, c * 1/3 + 1 - c] = [zero-filled, one-filled]
    one = runs.assign(y=runs.y.fillna(1))
    full, _ = quiet(evalci.cluster_ci, one, "y", "q", rng=0, n_resamples=B)
    zero, _ = quiet(evalci.cluster_ci, runs, "y", "q", missing="zero", rng=0,
                    n_resamples=B)  # fmt: skip
    assert 0.5 * r.estimate == pytest.approx(zero.estimate)
    assert 0.5 * r.estimate + 0.5 == pytest.approx(full.estimate)
    assert (r.bound_low, r.bound_high) == (zero.estimate, full.estimate)
    # each end is its filling's, resampled with the draws of the plain call
    assert (r.low, r.high) == (zero.low, full.high)
    assert (r.n_inputs, r.n_runs) == (3, 6)  # every attempted run
    frame = r.to_frame()
    assert {"bound_low", "bound_high", "share_scored"} <= set(frame.columns)


def test_bounds_weight_run_pools_runs(runs):
    r, _ = quiet(evalci.cluster_ci, runs, "y", "q", missing="bounds", rng=0,
                 weight="run", n_resamples=B)  # fmt: skip
    assert r.share_scored == pytest.approx(3 / 6)  # scored runs of all runs
    assert r.estimate == pytest.approx(1 / 3)  # pooled: (1 + 0 + 0) / 3


@pytest.mark.parametrize("method", ["percentile", "bca", "basic"])
def test_bounds_are_the_ends_of_the_two_fillings(method):
    # the low end is the interval of the table with every missing run a
    # failure, the high end that of the table with every one a success,
    # each resampled with the draws of the plain call (by=system: two groups)
    df = pd.DataFrame({
        "q": np.tile(np.arange(12), 2),
        "system": np.repeat(["A", "B"], 12),
        "y": [1, 0, np.nan, 1, 1, 0, 1, np.nan, 0, 1, 1, 0] * 2,
    })  # fmt: skip
    df.loc[df.system == "B", "y"] = df.y[df.system == "B"].fillna(0.5)
    kw = dict(by="system", rng=3, n_resamples=B, method=method)
    r, _ = quiet(evalci.cluster_ci, df, "y", "q", missing="bounds", **kw)
    zero, _ = quiet(evalci.cluster_ci, df.fillna({"y": 0.0}), "y", "q", **kw)
    one, _ = quiet(evalci.cluster_ci, df.fillna({"y": 1.0}), "y", "q", **kw)
    assert r.low.tolist() == zero.low.tolist()
    assert r.high.tolist() == one.high.tolist()
    assert r.share_scored.tolist() == [10 / 12, 1.0]
    # another method or level from the same replicates: again each filling's
    r90 = r.interval("percentile", confidence_level=0.9)
    z90 = zero.interval("percentile", confidence_level=0.9)
    o90 = one.interval("percentile", confidence_level=0.9)
    assert r90.low.tolist() == z90.low.tolist()
    assert r90.high.tolist() == o90.high.tolist()
    assert r90.bound_low.tolist() == r.bound_low.tolist()
    # the ends' Monte-Carlo errors are the fillings'
    mc = r.mc_error()
    assert mc.mc_error_low.tolist() == zero.mc_error().mc_error_low.tolist()
    assert mc.mc_error_high.tolist() == one.mc_error().mc_error_high.tolist()


def test_bounds_by_group_align_with_groups():
    df = pd.DataFrame(
        {
            "q": list(range(6)) * 2,
            "system": ["A"] * 6 + ["B"] * 6,
            "y": [1, 1, 0, 1, np.nan, 1, 0, 0, 1, 0, 1, 0],
        }
    )
    r, _ = quiet(evalci.cluster_ci, df, "y", "q", by="system", missing="bounds",
                 rng=0, n_resamples=B)  # fmt: skip
    assert r.share_scored["A"] == pytest.approx(5 / 6)
    assert r.share_scored["B"] == pytest.approx(1.0)
    plain, _ = quiet(evalci.cluster_ci, df[df.system == "B"], "y", "q", rng=0,
                     n_resamples=B)  # fmt: skip
    # nothing of B is missing: both fillings are B, same draws as alone
    assert (r.low["B"], r.high["B"]) == (plain.low, plain.high)
    t = r.to_frame()
    assert t.n_missing.tolist() == [1, 0]


def test_nothing_missing_leaves_the_frame_as_it_was():
    df = evalci.load_example()
    one = df[df.system == df.system.iloc[0]]
    plain = evalci.cluster_ci(one, "correct", "input_id", rng=0, n_resamples=200)
    for m in ("drop", "zero", "bounds"):
        r = evalci.cluster_ci(one, "correct", "input_id", rng=0, n_resamples=200,
                              missing=m)  # fmt: skip
        assert r.counts is None and list(r.to_frame()) == list(plain.to_frame())
        assert r.low == plain.low and r.high == plain.high


def test_bad_missing_value_is_one_error(flat):
    with pytest.raises(ValueError, match=r"`missing` must be one of 'raise'"):
        evalci.cluster_ci(flat, "y", "q", missing="ignore")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"metric": lambda d: d.y.mean()},
        {"metric": evalci.metrics.ratio("d")},
        {"metric": evalci.metrics.kappa(truth="t")},
    ],
)
def test_bounds_refuse_a_metric_of_unknown_range(flat, kwargs):
    df = flat.assign(d=1.0, t=[0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"range of .* is unknown"):
        evalci.cluster_ci(df, "y", "q", missing="bounds", **kwargs)


def test_bounds_and_zero_refuse_scores_outside_0_1(flat):
    df = flat.assign(y=flat.y * 5)
    for m in ("bounds", "zero"):
        with pytest.raises(ValueError, match=r"scores in \[0, 1\]"):
            evalci.cluster_ci(df, "y", "q", missing=m)


def test_bounds_refuse_other_strategies(flat):
    with pytest.raises(ValueError, match=r"strategy='cluster'"):
        evalci.bootstrap(flat, "y", "q", strategy="single_draw", missing="bounds")


def test_dropna_is_a_deprecated_alias(flat):
    old, caught = quiet(evalci.cluster_ci, flat, "y", "q", dropna=True, rng=0)
    assert DeprecationWarning in caught and MissingDataWarning in caught
    with pytest.warns(DeprecationWarning, match=r"use|pass missing='drop'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evalci.EvalciWarning)
            evalci.cluster_ci(flat, "y", "q", dropna=True, rng=0)
    new, _ = quiet(evalci.cluster_ci, flat, "y", "q", missing="drop", rng=0)
    assert (old.low, old.high, old.missing) == (new.low, new.high, "drop")
    with pytest.raises(ValueError, match=r"dropna=True.*disagree"):
        evalci.cluster_ci(flat, "y", "q", dropna=True, missing="zero")


def test_accessor_forwards_missing(flat):
    r, _ = quiet(flat.evalci.cluster_ci, "y", "q", missing="zero", rng=0)
    assert r.estimate == pytest.approx(0.5) and r.missing == "zero"


@pytest.mark.parametrize("m", ["drop", "zero", "bounds"])
def test_dask_gives_the_pandas_numbers_and_counts(m):
    # every policy on a Dask DataFrame reduces exactly and must give the
    # numbers and the counts of the pandas table, bit for bit
    dd = pytest.importorskip("dask.dataframe")
    df = _table_with_holes()
    ddf = dd.from_pandas(df, npartitions=3)
    kw = dict(cluster="q", by="system", missing=m, n_resamples=500, rng=3)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        want = evalci.cluster_ci(df, "y", **kw).to_frame()
        have = evalci.cluster_ci(ddf, "y", **kw).to_frame()
    # the labels' string dtype is Dask's own (pyarrow); the numbers are exact
    same = {"system": object}
    pd.testing.assert_frame_equal(have.astype(same), want.astype(same))
    assert want.n_missing.tolist() == [1, 4]
    kinds = [w.category for w in got]
    assert kinds.count(evalci.MissingDataWarning) == (2 if m == "drop" else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        a = evalci.compare(df, "y", "q", missing=m, n_resamples=500, rng=3)
        b = evalci.compare(ddf, "y", "q", missing=m, n_resamples=500, rng=3)
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.counts, b.counts, check_index_type=False)


def test_dask_refusal_counts_the_whole_table():
    # each partition's reduction sees its own rows only; the refusal must
    # count all of them (5 missing of 240 runs, in 3 inputs), not one part's
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(_table_with_holes(), npartitions=3)
    with pytest.raises(ValueError, match=r"has 5 missing values \(of 240 rows\) in 3 "):
        evalci.cluster_ci(ddf, "y", "q", by="system", n_resamples=100)


def _table_with_holes():
    """40 inputs x 2 systems x 3 runs, 5 missing runs in 3 inputs."""
    rng = np.random.default_rng(0)
    rows = [
        (f"q{i:02d}", s, r, float(rng.random() < 0.6 + 0.1 * (s == "b")))
        for i in range(40)
        for s in ("a", "b")
        for r in range(3)
    ]
    df = pd.DataFrame(rows, columns=["q", "system", "run", "y"])
    df.loc[[3, 10, 50, 51, 52], "y"] = np.nan
    return df


def test_a_reduced_table_counts_runs_not_distinct_rows():
    # compare on Dask reduces the rows to distinct rows with multiplicities
    # (engine.table.ReducedRows): the refusal must count the table's rows
    # (12, 2 missing), not the distinct rows the workers send back (7, 1).
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame(
        {
            "input": (["a"] * 3 + ["b"] * 3) * 2,
            "system": ["s"] * 6 + ["t"] * 6,
            "y": [1.0, np.nan, np.nan, 1.0, 0.0, 0.0] + [1.0] * 3 + [0.0] * 3,
        }
    )
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(ValueError, match=r"has 2 missing values \(of 12 rows\)"):
        evalci.compare(ddf, "y", "input", n_resamples=50)


def _one_system_unscored():
    """Systems a (one run of 20 missing) and b (every run missing), k=2."""
    df = pd.DataFrame({
        "q": np.tile(np.repeat(np.arange(20), 2), 2),
        "system": np.repeat(["a", "b"], 40),
        "y": np.r_[np.arange(40) % 3 == 0, np.zeros(40)].astype(float),
    })  # fmt: skip
    df.loc[5, "y"] = np.nan
    df.loc[df.system == "b", "y"] = np.nan
    return df


def test_bounds_keep_a_wholly_missing_group_as_0_to_1():
    # issue 34: b had silently disappeared from the result and its counts;
    # its score may be anything in [0, 1], so its row says [0, 1], with a
    # warning for its NaN scored part
    df = _one_system_unscored()
    with pytest.warns(
        MissingDataWarning, match=r"group 'b' has no scored run.*\[0, 1\]"
    ):
        r = evalci.cluster_ci(df, "y", "q", by="system", missing="bounds",
                              rng=0, n_resamples=500)  # fmt: skip
    assert r.groups.tolist() == ["a", "b"]
    assert (r.low["b"], r.high["b"]) == (0.0, 1.0)
    assert np.isnan(r.estimate["b"]) and r.share_scored["b"] == 0
    assert r.to_frame().n_scored.tolist() == [39, 0]
    assert "scored 39 of 80 runs" in repr(r)


def test_drop_names_a_group_it_leaves_out():
    df = _one_system_unscored()
    with pytest.warns(
        MissingDataWarning, match=r"group 'b' has no scored run and is left out"
    ):
        r = evalci.cluster_ci(df, "y", "q", by="system", missing="drop", rng=0,
                              n_resamples=200)  # fmt: skip
    assert r.groups.tolist() == ["a"]


def _nullable(dtype):
    """Two systems x 12 inputs x 2 runs of 0/1 values, three of them NA, as ``dtype``."""
    y = pd.Series(np.r_[np.arange(24) % 3 == 0, np.arange(24) % 2 == 0].astype(int))
    df = pd.DataFrame({
        "q": np.tile(np.repeat(np.arange(12), 2), 2),
        "system": np.repeat(["a", "b"], 24),
        "y": y.astype("boolean" if dtype == "boolean" else dtype),
    })  # fmt: skip
    df.loc[[1, 7, 30], "y"] = pd.NA
    return df


_ENTRY_POINTS = {
    "cluster_ci": lambda df, **kw: evalci.cluster_ci(df, "y", "q", by="system", **kw),
    "analytic_ci": lambda df, rng, n_resamples, **kw: evalci.analytic_ci(
        df, "y", "q", by="system", **kw
    ),
    "compare": lambda df, **kw: evalci.compare(df, "y", "q", **kw),
    "leaderboard": lambda df, **kw: evalci.leaderboard(df, "y", "q", **kw),
}


def _frame(result):
    return result.to_frame() if hasattr(result, "to_frame") else result.table


@pytest.mark.parametrize("dtype", ["boolean", "Int64", "Float64"])
@pytest.mark.parametrize("m", ["raise", "drop", "zero", "bounds"])
@pytest.mark.parametrize("entry", list(_ENTRY_POINTS))
def test_nullable_dtypes_fill_on_a_float_view(entry, m, dtype):
    # issue 34: a nullable boolean column refused its fill ("Invalid value
    # '0.0' for dtype 'boolean'") in compare, leaderboard and cluster_ci;
    # every nullable dtype gives the float64 numbers, under every policy
    fn = _ENTRY_POINTS[entry]
    df = _nullable(dtype)
    before = df.copy()
    ref = df.assign(y=df.y.astype("float64"))
    kw = dict(missing=m, rng=0, n_resamples=200)
    if m == "raise" or (entry == "leaderboard" and m == "bounds"):
        with pytest.raises(ValueError, match="3 missing values|not supported by"):
            fn(df, **kw)
        return
    got, _ = quiet(fn, df, **kw)
    want, _ = quiet(fn, ref, **kw)
    pd.testing.assert_frame_equal(_frame(got), _frame(want))
    pd.testing.assert_frame_equal(df, before)  # the user's frame untouched


def test_bounds_results_print_in_every_form():
    # the repr, the HTML and the frame of a bounded result, with and without
    # groups, with a group wholly missing
    df = _one_system_unscored()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        grouped = evalci.cluster_ci(df, "y", "q", by="system", missing="bounds",
                                    rng=0, n_resamples=200)  # fmt: skip
        one = evalci.cluster_ci(df[df.system == "a"], "y", "q", missing="bounds",
                                rng=0, n_resamples=200)  # fmt: skip
    for r in (grouped, one):
        text = repr(r)
        assert "worst-case bounds ('bounds'): scored 39 of" in text
        assert "<b>BootstrapResult</b>" in r._repr_html_()
        assert {"bound_low", "bound_high", "share_scored"} <= set(r.to_frame())
    assert "bound_low" in repr(grouped) and "low=" in repr(one)
