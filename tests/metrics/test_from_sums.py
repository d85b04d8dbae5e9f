"""``evalci.metrics.from_sums``: a Metric from a function of named column sums.

References: the same metric written by hand as a ``Metric`` (bit for bit:
same statistics, same draws), the built-in mean and ratio, and the callable
it replaces on the same draws (the index kernel draws what the callable
path gathers, for units of at most TILE_SIZE inputs).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine import passes

from conftest import clustered

M = evalci.metrics


def by_hand(columns, finalize, scale_invariant=False, value="correct"):
    """The Metric one writes by hand: the columns and a 1 per row, summed
    (the value column is read as ``v``, not listed in ``columns``)."""

    def statistics(d, v):
        arrays = [np.asarray(d[v if c == value else c]) for c in columns]
        whole = all(a.dtype.kind in "biu" for a in arrays)
        out = np.ones((len(arrays[0]), len(columns) + 1), np.int64 if whole else float)
        for i, a in enumerate(arrays):
            out[:, i] = a
        return out

    def fin(s):
        with np.errstate(invalid="ignore", divide="ignore"):
            return finalize(s)

    return evalci.Metric(
        "by_hand",
        statistics=statistics,
        finalize=fin,
        columns=tuple(c for c in columns if c != value),
        scale_invariant=scale_invariant,
    )


def costs(n=80, k=3, seed=4):
    df = clustered(n=n, k=k, seed=seed)
    rng = np.random.default_rng(seed)
    df["tokens"] = rng.integers(50, 400, len(df))
    df["cost"] = df.tokens * 1e-3 + rng.random(len(df))
    return df


def same(a, b):
    """Every number of two results, bit for bit."""
    for name in ("estimate", "low", "high", "standard_error", "acceleration", "z0"):
        np.testing.assert_array_equal(
            np.asarray(getattr(a, name)), np.asarray(getattr(b, name)), err_msg=name
        )
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    assert a.kernel == b.kernel


CASES = [  # strategy, weight, unequal runs
    ("cluster", "input", False),
    ("cluster", "input", True),
    ("cluster", "run", True),
    ("iid", "input", False),
    ("single_draw", "input", False),
    ("hierarchical", "input", True),
    ("hierarchical", "run", False),
    ("moving_block", "input", False),
]


@pytest.mark.parametrize(("strategy", "weight", "unequal"), CASES)
@pytest.mark.parametrize("scale_invariant", [True, False])
def test_share_equals_the_metric_by_hand_bit_for_bit(
    strategy, weight, unequal, scale_invariant
):
    df = clustered(n=70, k=3, seed=1, unequal=unequal)
    kw = dict(
        cluster="input_id",
        by="system",
        strategy=strategy,
        weight=weight,
        method="bca" if strategy == "cluster" else "percentile",
        n_resamples=300,
        rng=5,
    )
    if strategy == "moving_block":
        kw["block_length"] = 3
    if strategy == "iid":
        kw.pop("cluster")
    share = M.from_sums(
        "share",
        "correct",
        lambda s: s["correct"] / s["n"],
        scale_invariant=scale_invariant,
    )
    hand = by_hand(["correct"], lambda s: s[..., 0] / s[..., 1], scale_invariant)
    a = evalci.bootstrap(df, "correct", metric=share, **kw)
    same(a, evalci.bootstrap(df, "correct", metric=hand, **kw))
    assert a.metric == "share" and a.metric_calls is None
    if scale_invariant:  # and the built-in mean (the same statistics)
        same(a, evalci.bootstrap(df, "correct", **kw))


@pytest.mark.parametrize("path", ["index", "patterns"])
def test_two_columns_and_a_nonlinear_finalize_equal_by_hand(monkeypatch, path):
    # cost per correct answer with the value column not among the sums, and a
    # finalize that is not a ratio: bit for bit against the Metric by hand, on
    # either kernel
    monkeypatch.setattr(passes, "_FORCE_PATH", path)
    df = costs()
    kw = dict(cluster="input_id", by="system", method="bca", n_resamples=400, rng=3)

    def rate(s):
        return np.sqrt(s["cost"] / s["tokens"]) * s["n"] / (s["n"] + 1.0)

    fast = M.from_sums("rate", ["cost", "tokens"], rate)
    hand = by_hand(
        ["cost", "tokens"],
        lambda s: np.sqrt(s[..., 0] / s[..., 1]) * s[..., 2] / (s[..., 2] + 1.0),
    )
    a = evalci.cluster_ci(df, "correct", metric=fast, **kw)
    same(a, evalci.cluster_ci(df, "correct", metric=hand, **kw))
    assert a.kernel == path


def test_ratio_equals_the_built_in_ratio():
    df = costs()
    kw = dict(cluster="input_id", by="system", n_resamples=500, rng=8)
    fast = M.from_sums(
        "cpc",
        ["cost", "correct"],
        lambda s: s["cost"] / s["correct"],
        scale_invariant=True,
    )
    a = evalci.cluster_ci(df, "cost", metric=fast, **kw)
    b = evalci.cluster_ci(df, "cost", metric=M.ratio("correct"), **kw)
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-13
    )
    np.testing.assert_allclose(
        np.asarray(a.estimate), np.asarray(b.estimate), rtol=1e-14
    )


@pytest.mark.parametrize("strategy", ["cluster", "single_draw", "hierarchical"])
def test_equals_the_callable_on_the_same_draws(monkeypatch, strategy):
    # the index kernel draws, stream by stream, the inputs (and runs) the
    # callable path gathers as rows: every replicate is the callable's value
    # on that resample, to rounding (pandas sums in another order)
    monkeypatch.setattr(passes, "_FORCE_PATH", "index")
    df = costs(n=60)
    one = df[df.system == "sys1"]
    kw = dict(
        cluster="input_id", strategy=strategy, method="bca", n_resamples=200, rng=11
    )

    def tokens_per_cost(d):
        return d.tokens.sum() / d.cost.sum()

    fast = M.from_sums("tpc", ["tokens", "cost"], lambda s: s["tokens"] / s["cost"])
    # the value column is the summed, continuous `cost`: an input's runs sit
    # in the cube sorted by value, then (a Metric only) by its other columns,
    # so a run-level draw picks the same row on both paths only when the value
    # has no ties within an input (with "correct" or the integer "tokens" they
    # differ draw for draw: the same law)
    a = evalci.bootstrap(one, "cost", metric=fast, **kw)
    b = evalci.bootstrap(one, "cost", metric=tokens_per_cost, **kw)
    assert (a.kernel, b.kernel) == ("index", "rows")
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-12
    )
    assert a.estimate == pytest.approx(b.estimate, rel=1e-13)
    if strategy == "cluster":  # the jackknife of sums against the callable's loop
        assert a.acceleration == pytest.approx(b.acceleration, rel=1e-8)


def test_compare_and_dask_take_it():
    dd = pytest.importorskip("dask.dataframe")
    df = clustered(n=50, k=3, seed=6)
    share = M.from_sums("share", "correct", lambda s: s["correct"] / s["n"])
    kw = dict(cluster="input_id", by="system", n_resamples=300, rng=2)
    a = evalci.cluster_ci(df, "correct", metric=share, **kw)
    ddf = dd.from_pandas(df.sample(frac=1, random_state=0), npartitions=3)
    b = ddf.evalci.cluster_ci("correct", metric=share, **kw)
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-12
    )
    gap = evalci.compare(
        df,
        "correct",
        cluster="input_id",
        system="system",
        metric=share,
        n_resamples=300,
        rng=2,
    ).table
    ref = evalci.compare(
        df, "correct", cluster="input_id", system="system", n_resamples=300, rng=2
    ).table
    np.testing.assert_allclose(
        gap[["gap", "low", "high"]].to_numpy(float),
        ref[["gap", "low", "high"]].to_numpy(float),
        rtol=1e-12,
    )


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(columns=[]), TypeError, "`columns` must name"),
        (dict(columns=["correct", 3]), TypeError, "`columns` must hold"),
        (dict(columns=["correct", "correct"]), ValueError, "names 'correct' twice"),
        (dict(columns=["n"]), ValueError, "`count` 'n' is also in `columns`"),
        (dict(count=""), TypeError, "`count` must be"),
        (dict(finalize=3), TypeError, "`finalize` must be a callable"),
        (
            dict(finalize=lambda s: s["corect"] / s["n"]),
            ValueError,
            "reads the sum 'corect', which is not one of the names in `columns` \\['correct'\\]",
        ),
        (
            dict(finalize=lambda s: float(s["correct"].sum())),
            ValueError,
            r"one value per set of sums, shape \(2, 3\) here, got shape \(\)",
        ),
        (
            dict(finalize=lambda s: s["correct"][..., None]),
            ValueError,
            r"got shape \(2, 3, 1\)",
        ),
        (
            dict(finalize=lambda s: np.array(["a"] * 6).reshape(2, 3)),
            ValueError,
            "must return numbers",
        ),
        (
            dict(finalize=lambda s: __import__("math").sqrt(s["correct"])),
            TypeError,
            "failed on a block of sums",
        ),
        (dict(name=""), ValueError, "`name` must be"),
        (dict(scale_invariant="yes"), TypeError, "`scale_invariant`"),
    ],
)
def test_bad_arguments_fail_at_once_naming_them(kwargs, error, match):
    args = dict(
        name="share", columns=["correct"], finalize=lambda s: s["correct"] / s["n"]
    )
    with pytest.raises(error, match=match):
        M.from_sums(**{**args, **kwargs})


def test_bad_columns_fail_at_the_call_naming_them():
    df = costs(n=20).query("system == 'sys0'").reset_index(drop=True)
    kw = dict(cluster="input_id", n_resamples=50, rng=0)
    with pytest.raises(ValueError, match="`metric`: column 'tokns' is not in"):
        evalci.cluster_ci(
            df,
            "correct",
            metric=M.from_sums("r", ["tokns"], lambda s: s["tokns"] / s["n"]),
            **kw,
        )
    text = df.assign(tokens=df.tokens.astype(str))
    with pytest.raises(
        ValueError,
        match=re.escape("`columns`: column 'tokens' of metric 'r' must be numeric"),
    ):
        evalci.cluster_ci(
            text,
            "correct",
            metric=M.from_sums("r", ["tokens"], lambda s: s["tokens"] / s["n"]),
            **kw,
        )
    holes = df.assign(cost=df.cost.where(df.index % 7 != 0))
    with pytest.raises(ValueError, match="'cost'"):
        evalci.cluster_ci(
            holes,
            "correct",
            metric=M.from_sums("r", ["cost"], lambda s: s["cost"] / s["n"]),
            **kw,
        )
    inf = df.assign(cost=df.cost.where(df.index != 3, np.inf))
    with pytest.raises(ValueError, match="`metric` column 'cost' has 1 infinite"):
        evalci.cluster_ci(
            inf,
            "correct",
            metric=M.from_sums("r", ["cost"], lambda s: s["cost"] / s["n"]),
            **kw,
        )


def test_undefined_values_warn_as_for_any_metric():
    # a zero denominator on the data: NaN with the engine's usual warning
    df = costs(n=20).query("system == 'sys0'").assign(zero=0)
    m = M.from_sums("r", ["cost", "zero"], lambda s: s["cost"] / s["zero"] - np.inf)
    with pytest.warns(evalci.DegenerateDataWarning, match="undefined on the data"):
        r = evalci.cluster_ci(
            df, "correct", cluster="input_id", metric=m, n_resamples=50, rng=0
        )
    assert np.isnan(r.estimate)


def test_registered_by_name():
    share = M.from_sums("share_fs", "correct", lambda s: s["correct"] / s["n"])
    M.register_metric(share, overwrite=True)
    df = clustered(n=30, k=2, seed=2)
    kw = dict(cluster="input_id", by="system", n_resamples=100, rng=1)
    same(
        evalci.cluster_ci(df, "correct", metric="share_fs", **kw),
        evalci.cluster_ci(df, "correct", metric=share, **kw),
    )


# ------------------------------------------- the callable path says its cost
def test_a_callable_result_says_its_calls():
    df = clustered(n=30, k=2, seed=3)
    kw = dict(cluster="input_id", n_resamples=120, rng=1)
    one = evalci.cluster_ci(
        df[df.system == "sys0"], "correct", metric=lambda d: d.correct.median(), **kw
    )
    assert one.kernel == "rows" and one.metric_calls == 121
    assert "callable metric: 121 calls on gathered rows (kernel='rows'" in repr(one)
    both = evalci.cluster_ci(
        df,
        "correct",
        by="system",
        method="bca",
        metric=lambda d: d.correct.median(),
        **kw,
    )
    assert both.metric_calls == 2 * (1 + 120) + 2 * 30  # + the jackknife
    assert "callable metric: 302 calls" in repr(both)
    fast = evalci.cluster_ci(df, "correct", by="system", **kw)
    assert fast.metric_calls is None and "calls" not in repr(fast)


def test_a_callable_mean_is_told_of_the_fast_paths():
    df = clustered(n=30, k=2, seed=3)
    one = df[df.system == "sys0"]
    kw = dict(cluster="input_id", rng=1)
    with pytest.warns(evalci.SlowMetricWarning, match="metric='mean'.*from_sums"):
        evalci.cluster_ci(
            one, "correct", metric=lambda d: d.correct.mean(), n_resamples=1000, **kw
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", evalci.SlowMetricWarning)
        # few calls: quick anyway; a median: not a function of sums
        evalci.cluster_ci(
            one, "correct", metric=lambda d: d.correct.mean(), n_resamples=200, **kw
        )
        evalci.cluster_ci(
            one, "correct", metric=lambda d: d.correct.median(), n_resamples=1000, **kw
        )
        # the mean on the data, another statistic on the resamples
        seen = []

        def first_mean(d):
            seen.append(1)
            return d.correct.mean() if len(seen) == 1 else d.correct.median()

        evalci.cluster_ci(one, "correct", metric=first_mean, n_resamples=1000, **kw)


def test_a_callable_mean_of_a_label_column_is_not_checked():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"input_id": np.repeat(np.arange(40), 2), "pred": rng.choice(list("ab"), 80)}
    )
    share_a = lambda d: (d.pred == "a").mean()  # noqa: E731
    kw = dict(cluster="input_id", n_resamples=1000, metric=share_a, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", evalci.SlowMetricWarning)
        r = evalci.cluster_ci(df, "pred", **kw)
    assert r.estimate == (df.pred == "a").mean()


def test_same_law_as_the_callable_where_draws_differ():
    # the default kernel (patterns on 0/1 data) draws other numbers than the
    # callable's gathered rows: a two-sample KS test of the replicates at
    # level 1e-3 (seeded, so it passes or fails for good; under the null a
    # fresh seed would fail it with chance 1e-3)
    from scipy import stats

    df = clustered(n=60, k=3, seed=9)
    one = df[df.system == "sys0"]
    kw = dict(cluster="input_id", strategy="single_draw", n_resamples=2000, rng=4)
    share = M.from_sums("share", "correct", lambda s: s["correct"] / s["n"])
    a = evalci.bootstrap(one, "correct", metric=share, **kw)
    with pytest.warns(evalci.SlowMetricWarning):
        b = evalci.bootstrap(one, "correct", metric=lambda d: d.correct.mean(), **kw)
    assert (a.kernel, b.kernel) == ("patterns", "rows")
    assert a.estimate == pytest.approx(b.estimate, rel=1e-14)
    assert (
        stats.ks_2samp(a.bootstrap_distribution, b.bootstrap_distribution).pvalue > 1e-3
    )


# ------------------------------------------------- per-input statistics
def all_runs_by_hand():
    """pass^k at k = every run, as a hand-written per-input Metric."""

    def per_input(t):
        return np.stack(
            [(t[..., 0] == t[..., 1]).astype(float), np.ones(t.shape[:-1])], -1
        )

    hand = by_hand(["correct"], lambda s: s[..., 0] / s[..., 1])
    return evalci.Metric(
        "by_hand",
        statistics=hand.statistics,
        finalize=hand.finalize,
        per_input=per_input,
    )


ALL_RUNS = dict(
    name="all_runs",
    columns="correct",
    finalize=lambda s: s["all"] / s["n"],
    per_input=lambda s: {"all": s["correct"] == s["n"]},
)


@pytest.mark.parametrize("path", ["index", "patterns"])
def test_per_input_equals_the_metric_by_hand_bit_for_bit(monkeypatch, path):
    monkeypatch.setattr(passes, "_FORCE_PATH", path)
    df = clustered(n=70, k=3, seed=12, unequal=True)
    kw = dict(cluster="input_id", by="system", method="bca", n_resamples=300, rng=2)
    a = evalci.cluster_ci(df, "correct", metric=M.from_sums(**ALL_RUNS), **kw)
    same(a, evalci.cluster_ci(df, "correct", metric=all_runs_by_hand(), **kw))
    assert a.kernel == path


def test_per_input_equals_the_callable_on_the_same_draws(monkeypatch):
    # each drawn copy of an input is its own input on the callable path (its
    # key relabelled), as the per-input sums count it
    monkeypatch.setattr(passes, "_FORCE_PATH", "index")
    df = clustered(n=40, k=4, seed=13)
    one = df[df.system == "sys1"]
    kw = dict(cluster="input_id", method="bca", n_resamples=200, rng=6)
    a = evalci.cluster_ci(one, "correct", metric=M.from_sums(**ALL_RUNS), **kw)
    b = evalci.cluster_ci(
        one,
        "correct",
        metric=lambda d: d.groupby("input_id").correct.min().mean(),
        **kw,
    )
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-12
    )
    assert a.estimate == pytest.approx(b.estimate, rel=1e-14)
    assert a.acceleration == pytest.approx(b.acceleration, rel=1e-9)


@pytest.mark.parametrize(
    ("per_input", "error", "match"),
    [
        (3, TypeError, "`per_input` must be a callable"),
        (lambda s: s["correct"], ValueError, "must return a non-empty mapping"),
        (lambda s: {"n": s["correct"]}, ValueError, "without the count 'n'"),
        (
            lambda s: {"all": s["corect"]},
            ValueError,
            "`per_input` of metric 'all_runs' reads the sum 'corect'",
        ),
        (
            lambda s: {"all": s["correct"][..., :1, None]},
            ValueError,
            r"numbers of the shape of its sums, \(2, 3\)",
        ),
        (
            lambda s: {"some": s["correct"] > 0},
            ValueError,
            "`finalize` of metric 'all_runs' reads the sum 'all', which is not one of "
            r"the names in `per_input` \['some'\]",
        ),
    ],
)
def test_bad_per_input_fails_at_once_naming_it(per_input, error, match):
    with pytest.raises(error, match=match):
        M.from_sums(**{**ALL_RUNS, "per_input": per_input})


def test_per_input_needs_whole_inputs():
    df = clustered(n=20, k=2, seed=1)
    with pytest.raises(ValueError, match="`strategy`='hierarchical' cannot be used"):
        evalci.bootstrap(
            df[df.system == "sys0"],
            "correct",
            cluster="input_id",
            strategy="hierarchical",
            metric=M.from_sums(**ALL_RUNS),
            n_resamples=50,
        )
