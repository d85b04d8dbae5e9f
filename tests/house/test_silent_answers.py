"""Issue 8: paths that used to return a plausible wrong number, each pinned.

Every test here failed on the code before the fix and asserts the right answer.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalci

from conftest import clustered, shared_data

# -- callable metrics see each drawn copy as its own input --------------------


def _pass_hat_4(d: pd.DataFrame) -> float:
    """pass^4 on tau-bench: the share of tasks whose 4 trials all succeed."""
    return d.groupby("input_id").correct.min().mean()


def test_callable_pass_hat_k_matches_a_per_task_bootstrap():
    # tau-bench airline, gpt-4o, 50 tasks x 4 trials (tests/data/PROVENANCE.md)
    df = shared_data("taubench_airline_gpt4o_4runs.csv")
    res = evalci.cluster_ci(
        df, "correct", cluster="input_id", metric=_pass_hat_4, n_resamples=3000, rng=0
    )
    # hand-written per-task bootstrap: resample the 50 task indicators
    ok = df.groupby("input_id").correct.min().to_numpy(dtype=float)
    idx = np.random.default_rng(1).integers(0, len(ok), (20_000, len(ok)))
    hand = ok[idx].mean(axis=1)
    assert res.estimate == pytest.approx(ok.mean())
    # SD of a bootstrap SD estimate is about SD / sqrt(2B): 1.3% at B=3000, so
    # 8% is > 5 SE (false failure < 1e-6); the old path was 23% too narrow.
    ratio = res.standard_error / hand.std(ddof=1)
    assert abs(ratio - 1) < 0.08, ratio
    assert abs(res.bootstrap_distribution.mean() - hand.mean()) < 4 * hand.std() / 50


def test_callable_receives_copy_numbers_in_the_cluster_column():
    df = clustered(n=12, k=2).query("system == 'sys0'")
    seen = []

    def metric(d):
        seen.append(d["input_id"].iloc[0])
        return d.correct.mean()

    evalci.cluster_ci(
        df, "correct", cluster="input_id", metric=metric, n_resamples=50, rng=0
    )
    assert not isinstance(seen[0], tuple)  # the estimate sees the original rows
    key, copy = seen[1]
    assert key in set(df.input_id) and copy == 0


@st.composite
def per_input_tables(draw):
    n = draw(st.integers(10, 25))
    k = draw(st.integers(1, 4))
    p = draw(st.lists(st.floats(0.05, 0.95), min_size=n, max_size=n))
    seed = draw(st.integers(0, 2**16))
    y = (np.random.default_rng(seed).random((n, k)) < np.array(p)[:, None]).astype(int)
    return pd.DataFrame(
        {"input_id": np.repeat([f"q{i}" for i in range(n)], k), "correct": y.ravel()}
    )


@settings(max_examples=25, deadline=None)
@given(per_input_tables(), st.sampled_from(["min", "max"]))
def test_per_input_callable_equals_the_equivalent_metric(df, how):
    # A callable that aggregates per input (all/any of k runs) must give the
    # replicates of the Metric run on the per-input table: same draws, so equal.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.DegenerateDataWarning)
        slow = evalci.cluster_ci(
            df,
            "correct",
            cluster="input_id",
            metric=lambda d: getattr(d.groupby("input_id").correct, how)().mean(),
            n_resamples=64,
            rng=3,
        )
        per_input = getattr(df.groupby("input_id", as_index=False).correct, how)()
        fast = evalci.cluster_ci(
            per_input, "correct", cluster="input_id", n_resamples=64, rng=3
        )
    np.testing.assert_allclose(
        slow.bootstrap_distribution, fast.bootstrap_distribution, atol=1e-12
    )


# -- clusters above the input ---------------------------------------------------


def _swebench_one():
    df = shared_data("swebench_lite_k1_clustered.csv")
    return df[df.system == "20250625_ExpeRepair-v1_claude-4-sonnet-20250514"]


def test_inputs_nested_in_repos_count_equally():
    one = _swebench_one()  # 300 problems in 12 repositories, k=1
    with pytest.warns(evalci.FewClustersWarning, match="only 12 clusters"):
        res = evalci.cluster_ci(
            one, "correct", cluster="repo", input="input_id", n_resamples=2000, rng=0
        )
    assert res.estimate == pytest.approx(one.correct.mean())  # 181/300 = 0.603
    assert res.estimate == pytest.approx(0.6033, abs=1e-4)
    assert (res.n_inputs, res.n_clusters) == (300, 12)
    assert res.cluster == ("repo",) and res.input == ("input_id",)
    assert "n_clusters=12" in repr(res)  # the result states both units
    assert "resampling clusters ['repo'] with inputs ['input_id']" in res._header()
    # whole repos are resampled: wider than resampling the 300 problems alone
    plain = evalci.cluster_ci(
        one, "correct", cluster="input_id", n_resamples=2000, rng=0
    )
    assert res.high - res.low > plain.high - plain.low


def test_cluster_above_the_input_without_input_warns_and_names_it():
    one = _swebench_one()
    with pytest.warns(evalci.EstimandWarning, match="input='input_id'"):
        res = evalci.cluster_ci(one, "correct", cluster="repo", n_resamples=200, rng=0)
    # what it then computes, stated in the warning: the mean of 12 repo means
    assert res.estimate == pytest.approx(one.groupby("repo").correct.mean().mean())


@pytest.mark.filterwarnings("ignore::evalci.FewClustersWarning")
def test_nested_inputs_with_unequal_runs_match_a_per_input_callable():
    # 8 clusters of 3 inputs with 1-4 runs each: the Metric path weights inputs
    # equally while resampling clusters; the callable computes the same thing by
    # hand from the same draws (copies relabelled on both key columns).
    rng = np.random.default_rng(5)
    rows = [
        (f"c{c}", f"c{c}-i{i}", int(rng.random() < 0.3 + 0.05 * c))
        for c in range(8)
        for i in range(3)
        for _ in range(int(rng.integers(1, 5)))
    ]
    df = pd.DataFrame(rows, columns=["repo", "input_id", "correct"])
    kw = dict(cluster="repo", input="input_id", n_resamples=300, rng=2)
    fast = evalci.cluster_ci(df, "correct", **kw)
    slow = evalci.cluster_ci(
        df,
        "correct",
        metric=lambda d: d.groupby("input_id").correct.mean().mean(),
        weight="run",
        **kw,
    )
    assert fast.estimate == pytest.approx(df.groupby("input_id").correct.mean().mean())
    np.testing.assert_allclose(
        fast.bootstrap_distribution, slow.bootstrap_distribution, atol=1e-12
    )


def test_input_must_nest_in_one_cluster():
    df = pd.DataFrame(
        {"repo": list("aabbcc"), "input_id": [1, 2, 2, 3, 4, 5], "correct": 1}
    )
    with pytest.raises(ValueError, match=r"inputs \[2\] appear in more than one"):
        evalci.cluster_ci(df, "correct", cluster="repo", input="input_id")


def test_input_needs_the_cluster_strategy():
    df = clustered(n=12, k=2).query("system == 'sys0'")
    with pytest.raises(ValueError, match=r"strategy='cluster'"):
        evalci.bootstrap(
            df, "correct", cluster="subject", input="input_id", strategy="hierarchical"
        )


# -- several systems pooled by accident --------------------------------------------


def test_pooling_systems_warns_and_names_by(gpqa):
    with pytest.warns(evalci.PooledGroupsWarning, match=r"by='system'"):
        evalci.cluster_ci(gpqa, "correct", cluster="input_id", n_resamples=100, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evalci.cluster_ci(
            gpqa, "correct", cluster="input_id", by="system", n_resamples=100, rng=0
        )


def test_a_model_answer_column_is_not_a_system(gpqa):
    df = gpqa[gpqa.system == gpqa.system.iloc[0]].assign(
        model_answer=lambda d: np.where(d.correct == 1, "A", "B")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evalci.cluster_ci(df, "correct", cluster="input_id", n_resamples=100, rng=0)


# -- labels and predictions of different types ------------------------------------


@pytest.mark.parametrize("make", [evalci.metrics.accuracy, evalci.metrics.kappa])
def test_int_predictions_against_string_labels_raise(make):
    df = pd.DataFrame(
        {
            "input_id": np.arange(20),
            "pred": np.arange(20) % 3,
            "label": (np.arange(20) % 3).astype(str),
        }
    )
    with pytest.raises(
        ValueError, match=r"'pred', dtype int64.*'label', dtype object.*share no value"
    ):
        evalci.cluster_ci(df, "pred", cluster="input_id", metric=make(truth="label"))
    # the same labels as one type give the right answer: every prediction is right
    ok = df.assign(label=df.label.astype(int))
    with pytest.warns(evalci.DegenerateDataWarning):
        res = evalci.cluster_ci(
            ok, "pred", cluster="input_id", metric=make(truth="label"), n_resamples=50
        )
    assert res.estimate == pytest.approx(1.0)


# -- non-finite values ---------------------------------------------------------------


@pytest.mark.parametrize("dropna", [False, True])
@pytest.mark.parametrize("entry", ["function", "accessor", "compare"])
def test_inf_is_refused_like_nan(entry, dropna):
    df = clustered(n=20, k=2).assign(score=lambda d: d.correct.astype(float))
    df.loc[5, "score"] = np.inf
    kw = dict(cluster="input_id", dropna=dropna, n_resamples=50)
    with pytest.raises(ValueError, match=r"`value` column 'score' has 1 infinite"):
        if entry == "function":
            evalci.cluster_ci(df, "score", by="system", **kw)
        elif entry == "accessor":
            df.evalci.bootstrap("score", by="system", **kw)
        else:
            evalci.compare(df, "score", system="system", **kw)


def test_inf_in_counts_is_refused():
    df = pd.DataFrame({"input_id": range(12), "c": 1.0, "n": 2.0})
    df.loc[3, "n"] = np.inf
    with pytest.raises(ValueError, match=r"`trials` column 'n' has 1 infinite"):
        evalci.cluster_ci(df, cluster="input_id", successes="c", trials="n")


# -- too few resamples, or too many ---------------------------------------------------


def test_one_resample_is_refused_and_few_warn():
    df = clustered(n=20, k=2).query("system == 'sys0'")
    with pytest.raises(ValueError, match=r"`n_resamples` must be at least 2"):
        evalci.cluster_ci(df, "correct", cluster="input_id", n_resamples=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.DegenerateDataWarning)  # 2 may tie
        with pytest.warns(evalci.FewResamplesWarning, match=r"use at least 40"):
            evalci.cluster_ci(df, "correct", cluster="input_id", n_resamples=2, rng=0)
    with pytest.warns(evalci.FewResamplesWarning, match=r"use at least 200"):
        evalci.cluster_ci(
            df, "correct", cluster="input_id", n_resamples=100, confidence_level=0.99
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = evalci.cluster_ci(df, "correct", cluster="input_id", n_resamples=40, rng=0)
        assert r.low <= r.estimate <= r.high


def test_resamples_beyond_memory_are_refused_up_front():
    df = clustered(n=20, k=2).query("system == 'sys0'")
    with pytest.raises(
        ValueError, match=r"`n_resamples`=1000000000 needs about .* GiB"
    ):
        evalci.cluster_ci(df, "correct", cluster="input_id", n_resamples=10**9)


# -- mode_aggregate says what it computes ------------------------------------------------


def test_mode_aggregate_of_a_01_column_is_most_runs_correct_not_the_label_mode():
    # 3 classes, k=3. Input 0: labels a, b, c (truth a): the label mode is a
    # 3-way tie; 1 of 3 runs correct, so "most runs correct" is 0. Input 1:
    # labels b, b, a (truth a): label mode b (wrong), 1 of 3 correct.
    rng = np.random.default_rng(0)
    n, k = 300, 3
    truth = rng.integers(0, 3, n)
    pred = np.where(
        rng.random((n, k)) < 0.5, truth[:, None], rng.integers(0, 3, (n, k))
    )
    df = pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(n), k),
            "pred": pred.ravel(),
            "label": np.repeat(truth, k),
        }
    )
    df["correct"] = (df.pred == df.label).astype(int)
    kw = dict(cluster="input_id", strategy="mode_aggregate", n_resamples=50, rng=0)
    with pytest.warns(evalci.EstimandWarning, match=r"share of inputs where most runs"):
        r01 = evalci.bootstrap(df, "correct", **kw)
    with pytest.warns(evalci.EstimandWarning, match=r"mode of each input's labels"):
        rlab = evalci.bootstrap(
            df, "pred", metric=evalci.metrics.accuracy(truth="label"), **kw
        )
    # k=3 (odd): no ties for 0/1, so the 0/1 estimate is exact
    most = (df.groupby("input_id").correct.sum() >= 2).mean()
    assert r01.estimate == pytest.approx(most)
    assert rlab.estimate > r01.estimate  # the label mode wins ties a 0/1 vote loses


# -- degenerate and small cases say so --------------------------------------------------


def test_kappa_on_four_inputs_says_why_it_is_nan():
    df = pd.DataFrame(
        {"input_id": range(4), "pred": list("abab"), "label": list("abba")}
    )
    with (
        pytest.warns(evalci.DegenerateDataWarning, match=r"undefined score"),
        pytest.warns(evalci.FewClustersWarning, match=r"only 4 inputs"),
    ):
        r = evalci.cluster_ci(
            df,
            "pred",
            cluster="input_id",
            metric=evalci.metrics.kappa(truth="label"),
            n_resamples=200,
            rng=0,
        )
    assert np.isnan(r.low)


def test_two_inputs_warn():
    df = pd.DataFrame({"input_id": [0, 0, 1, 1], "correct": [0, 1, 1, 1]})
    with pytest.warns(evalci.FewClustersWarning, match=r"only 2 inputs"):
        evalci.cluster_ci(df, "correct", cluster="input_id", n_resamples=50, rng=0)


def test_counts_near_two_to_the_62_are_refused():
    df = pd.DataFrame({"input_id": range(12), "c": 1, "n": 2**62})
    with pytest.raises(ValueError, match=r"add up to .* beyond 2\*\*53"):
        evalci.cluster_ci(df, cluster="input_id", successes="c", trials="n")


# -- warnings point at the caller's line --------------------------------------------------


@pytest.mark.parametrize("via", ["function", "accessor"])
def test_warnings_point_at_the_callers_line(via, gpqa):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if via == "function":
            evalci.cluster_ci(gpqa, "correct", cluster="input_id", n_resamples=50)
        else:
            gpqa.evalci.cluster_ci("correct", cluster="input_id", n_resamples=50)
    assert w and all(x.filename == __file__ for x in w), [x.filename for x in w]


def test_html_repr_escapes_user_metric_names():
    m = evalci.metrics.Metric(
        "<b>x</b>",
        statistics=lambda d, v: np.column_stack([d[v], np.ones(len(d[v]))]),
        finalize=lambda t: t[..., 0] / t[..., 1],
    )
    df = clustered(n=20, k=2)
    res = evalci.cluster_ci(
        df, "correct", cluster="input_id", by="system", metric=m, n_resamples=50
    )
    assert "<b>x</b>" not in res._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in res._repr_html_()


def test_compare_with_inputs_nested_in_repos():
    # SWE-bench Lite, two systems, 300 problems in 12 repositories, k=1
    df = shared_data("swebench_lite_k1_clustered.csv")
    two = df[df.system.isin(df.system.unique()[:2])]
    kw = dict(cluster="repo", input="input_id", system="system", n_resamples=2000)
    with pytest.warns(evalci.FewClustersWarning, match="only 12 clusters"):
        res = evalci.compare(two, "correct", rng=0, **kw)
    a, b = res.table.a[0], res.table.b[0]
    by_input = two.pivot_table("correct", "input_id", "system")
    # the gap is over the 300 problems, each counting once ...
    assert res.table.gap[0] == pytest.approx((by_input[b] - by_input[a]).mean())
    # ... and wins / losses are counted per problem, not per repository
    assert res.table.wins[0] == int((by_input[b] > by_input[a]).sum())
    assert res.table.n_inputs[0] == 300
    # whole repositories resampled: the interval is wider than resampling problems
    plain = evalci.compare(
        two, "correct", cluster="input_id", system="system", n_resamples=2000, rng=0
    )
    assert (
        res.table.high[0] - res.table.low[0] > plain.table.high[0] - plain.table.low[0]
    )
    with pytest.warns(evalci.FewClustersWarning):
        clt = evalci.compare(two, "correct", method="clt", **kw)
    assert clt.table.gap[0] == pytest.approx(res.table.gap[0])


def test_report_with_inputs_nested_in_repos():
    df = shared_data("swebench_lite_k1_clustered.csv")
    two = df[df.system.isin(df.system.unique()[:2])]
    with pytest.warns(evalci.FewClustersWarning):
        rep = evalci.report(
            two, "correct", cluster="repo", input="input_id", n_resamples=500, rng=0
        )
    text = str(rep)
    assert "N = 300" in text and "k=1" in text


def test_report_and_flaky_accessors_take_counts_by_keyword():
    df = shared_data("cruxeval_output_T0.2_counts.csv")
    two = df[df.system.isin(df.system.unique()[:2])]
    kw = dict(cluster="input_id", successes="n_correct", trials="n_runs")
    rep = two.evalci.report(n_resamples=500, rng=0, **kw)
    assert rep.n_inputs == 800
    assert len(two.evalci.flaky(**kw)) > 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(value="input_id", cluster="input_id"), r"`value` and `cluster` both"),
        (dict(value="correct", cluster="input_id", by="correct"), r"`by` and `value`"),
        (
            dict(value="correct", cluster="input_id", by="subject", strata="subject"),
            r"`by` and `strata` both name column 'subject'",
        ),
        (
            dict(value="correct", cluster="input_id", strata="correct"),
            r"`value` and `strata` both",
        ),
    ],
)
def test_one_column_one_role(kwargs, match):
    df = clustered(n=20, k=2).query("system == 'sys0'")
    with pytest.raises(ValueError, match=match):
        evalci.bootstrap(df, **kwargs)


def test_duplicate_column_names_are_refused():
    df = clustered(n=20, k=2).query("system == 'sys0'")
    twice = pd.concat([df, df[["correct"]]], axis=1)
    with pytest.raises(ValueError, match=r"several columns named \['correct'\]"):
        evalci.cluster_ci(twice, "correct", cluster="input_id")


def test_labels_that_mix_numbers_and_text_are_refused():
    df = pd.DataFrame(
        {
            "input_id": range(20),
            "pred": pd.Series([1, "1"] * 10, dtype=object),
            "label": "1",
        }
    )
    with pytest.raises(
        ValueError, match=r"`value` column 'pred' mixes numbers and text"
    ):
        evalci.cluster_ci(
            df,
            "pred",
            cluster="input_id",
            metric=evalci.metrics.accuracy(truth="label"),
        )


def test_degenerate_gap_with_nested_inputs_counts_clusters():
    # 20 repositories x 5 problems, both systems solve everything: the exact
    # bound is over the 20 independent clusters, and the explanation says so
    df = pd.DataFrame(
        {
            "repo": np.repeat([f"r{i}" for i in range(20)], 5),
            "input_id": range(100),
            "correct": 1,
        }
    )
    two = pd.concat([df.assign(system="A"), df.assign(system="B")])
    with (
        pytest.warns(evalci.DegenerateDataWarning),
        pytest.warns(evalci.FewClustersWarning),
    ):
        res = evalci.compare(
            two, "correct", cluster="repo", input="input_id", mme=0.02, n_resamples=200
        )
    row = res.table.iloc[0]
    bound = 1 - 0.025 ** (1 / 20)  # Clopper-Pearson, 0 of 20, two-sided 95%
    assert row.high == pytest.approx(bound) and row.n_clusters == 20
    assert "all 20 clusters" in row.explanation
    assert row.decision == "inconclusive"


def test_a_metric_undefined_on_the_data_says_so():
    df = clustered(n=20, k=2).query("system == 'sys0'")
    with pytest.warns(evalci.DegenerateDataWarning, match=r"undefined on the data"):
        r = evalci.cluster_ci(
            df,
            "correct",
            cluster="input_id",
            metric=lambda d: float("nan"),
            n_resamples=50,
            rng=0,
        )
    assert np.isnan(r.low)


def test_missing_counts_name_the_counts_arguments():
    df = pd.DataFrame({"input_id": range(12), "c": 1.0, "n": 2})
    df.loc[3, "c"] = np.nan
    with pytest.raises(
        ValueError, match=r"`successes/trials`: column 'c' has 1 missing"
    ):
        evalci.cluster_ci(df, cluster="input_id", successes="c", trials="n")
