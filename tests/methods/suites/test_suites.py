"""suite_ci: micro and macro suite scores, their standard errors, two stages.

References: hand computations (pandas group-bys written out here), the
bootstrap's own expected variance in closed form (each formula derived in
its test), and a seeded coverage simulation with tasks drawn from a
universe.
"""


import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.methods.suites.scores import MissingTasksWarning

from conftest import DATA  # noqa: E402


def _suite(rng, n_tasks=6, sizes=(5, 40), systems=("a", "b", "c"), runs=1):
    """0/1 scores, tasks of unequal size, ``runs`` runs per item."""
    rows = []
    for t in range(n_tasks):
        n = int(rng.integers(*sizes))
        p_task = rng.uniform(0.2, 0.9)
        for s_i, s in enumerate(systems):
            p = np.clip(p_task + 0.05 * s_i, 0, 1)
            for i in range(n):
                for r in range(runs):
                    rows.append((s, f"t{t}", i, r, float(rng.random() < p)))
    return pd.DataFrame(rows, columns=["system", "task", "item", "run", "correct"])


def _hand(df):
    """Per system: macro, micro, and the four analytic SEs, by hand."""
    item = df.groupby(["system", "task", "item"]).correct.mean().reset_index()
    out = {}
    for s, g in item.groupby("system"):
        per = g.groupby("task").correct
        m, v, n = per.mean(), per.var(ddof=1), per.size()
        t = len(m)
        micro = g.correct.mean()
        out[s] = dict(
            macro=m.mean(),
            micro=micro,
            se_fixed_macro=np.sqrt((v / n).sum()) / t,
            se_fixed_micro=np.sqrt((v / n * n**2).sum()) / n.sum(),
            se_random_macro=m.std(ddof=1) / np.sqrt(t),
            se_random_micro=np.sqrt(((n * (m - micro)) ** 2).sum() / (t * (t - 1)))
            / n.mean(),
        )
    return pd.DataFrame(out).T


def test_weighting_and_analytic_se_match_hand_computation():
    df = _suite(np.random.default_rng(0), runs=2)  # runs averaged per item first
    hand = _hand(df)
    for weighting in ("macro", "micro"):
        for tasks in ("fixed", "random"):
            r = (
                evalci.suite_ci(
                    df,
                    "correct",
                    task="task",
                    cluster="item",
                    weighting=weighting,
                    tasks=tasks,
                    n_resamples=200,
                    rng=0,
                )
                if tasks == "fixed"
                else _random(df, weighting)
            )
            t = r.table.set_index("system")
            np.testing.assert_allclose(t.estimate, hand[weighting], rtol=1e-12)
            np.testing.assert_allclose(
                t.standard_error_analytic, hand[f"se_{tasks}_{weighting}"], rtol=1e-12
            )


def _random(df, weighting, **kw):
    with pytest.warns(evalci.FewClustersWarning, match="tasks='random' with 6"):
        return evalci.suite_ci(
            df,
            "correct",
            task="task",
            cluster="item",
            weighting=weighting,
            tasks="random",
            n_resamples=kw.pop("n_resamples", 200),
            rng=0,
            **kw,
        )


def test_macro_se_is_not_the_pooled_se():
    # lm-eval before PR 3882: the macro mean with the pooled (micro)
    # estimator's SE. With unequal task sizes they differ; ours match each.
    df = _suite(np.random.default_rng(1), sizes=(5, 200))
    hand = _hand(df)
    assert not np.allclose(hand.se_fixed_macro, hand.se_fixed_micro, rtol=0.1)
    r = evalci.suite_ci(df, "correct", "task", "item", n_resamples=200, rng=0)
    np.testing.assert_allclose(
        r.table.standard_error_analytic, hand.se_fixed_macro.to_numpy(), rtol=1e-12
    )


def _bootstrap_variances(df):
    """The exact variance of each scheme's replicates (ddof=0 within tasks).

    Fixed tasks: task t's resampled mean has variance s0_t^2 / n_t and the
    tasks are independent, so macro: sum_t s0_t^2 / n_t / T^2; micro:
    sum_t n_t^2 s0_t^2 / n_t / N^2. Random tasks, macro: each of the T
    draws picks a task uniformly, then resamples its items; one draw's
    variance is var0_t(m_t) + mean_t(s0_t^2 / n_t), and the macro mean
    averages T independent draws.
    """
    item = df.groupby(["system", "task", "item"]).correct.mean().reset_index()
    out = {}
    for s, g in item.groupby("system"):
        per = g.groupby("task").correct
        m, v0, n = per.mean(), per.var(ddof=0), per.size()
        t = len(m)
        out[s] = dict(
            fixed_macro=(v0 / n).sum() / t**2,
            fixed_micro=(n * v0).sum() / n.sum() ** 2,
            random_macro=(m.var(ddof=0) + (v0 / n).mean()) / t,
        )
    return pd.DataFrame(out).T


def test_bootstrap_se_matches_its_expected_variance():
    # B = 4000: an SD from B draws has relative SE ~ 1 / sqrt(2B) = 1.1%;
    # a 6% tolerance is over 5 SEs (false-failure rate < 1e-6 per check)
    df = _suite(np.random.default_rng(2))
    want = _bootstrap_variances(df)
    for weighting, tasks in [
        ("macro", "fixed"),
        ("micro", "fixed"),
        ("macro", "random"),
    ]:
        if tasks == "random":
            r = _random(df, weighting, n_resamples=4000)
        else:
            r = evalci.suite_ci(
                df,
                "correct",
                "task",
                "item",
                weighting=weighting,
                n_resamples=4000,
                rng=3,
            )
        got = r.table.set_index("system").standard_error
        np.testing.assert_allclose(
            got, np.sqrt(want[f"{tasks}_{weighting}"]), rtol=0.06
        )


def test_paired_draws_and_row_order():
    df = _suite(np.random.default_rng(4))
    twin = df[df.system == "a"].assign(system="a2")
    both = pd.concat([df, twin], ignore_index=True)
    r = evalci.suite_ci(both, "correct", "task", "item", n_resamples=300, rng=5)
    g = r.gaps([("a", "a2")])
    assert g.gap[0] == 0 and g.low[0] == 0 and g.high[0] == 0  # same draws
    shuffled = both.sample(frac=1, random_state=0)
    r2 = evalci.suite_ci(shuffled, "correct", "task", "item", n_resamples=300, rng=5)
    np.testing.assert_array_equal(r.bootstrap_distribution, r2.bootstrap_distribution)
    assert both.columns.tolist() == shuffled.columns.tolist()  # not mutated
    # a gap's interval reads the paired differences of the replicates
    gab = r.gaps([("a", "b")])
    pos = {s: i for i, s in enumerate(r.table.system)}
    d = r.bootstrap_distribution[pos["b"]] - r.bootstrap_distribution[pos["a"]]
    np.testing.assert_allclose(
        gab[["low", "high"]].iloc[0], np.quantile(d, [0.025, 0.975])
    )


def test_mean_win_rate_by_hand():
    # task means: t1: a .5, b 1, c 0; t2: a 1, b 1, c .5
    # win rates t1: a 1/2, b 1, c 0; t2: a 3/4, b 3/4, c 0 (ties half)
    df = pd.DataFrame(
        {
            "system": list("aabbcc") * 2,
            "task": ["t1"] * 6 + ["t2"] * 6,
            "item": [1, 2] * 6,
            "correct": [1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0],
        }
    )
    r = evalci.suite_ci(df, "correct", "task", "item", metric="win_rate", rng=0)
    np.testing.assert_allclose(r.table.estimate, [0.625, 0.875, 0.0])
    assert r.table.standard_error_analytic.isna().all()
    with pytest.raises(ValueError, match="weighting='macro' with metric='win_rate'"):
        evalci.suite_ci(
            df, "correct", "task", "item", metric="win_rate", weighting="micro"
        )


def test_sparse_matrix_warns_and_refuses_gaps():
    df = _suite(np.random.default_rng(6))
    sparse = df[~((df.system == "c") & df.task.isin(["t0", "t3"]))]
    with pytest.warns(
        MissingTasksWarning, match=r"2 \(system, task\) cells.*'c', 't0'"
    ):
        r = evalci.suite_ci(sparse, "correct", "task", "item", n_resamples=200, rng=0)
    assert r.missing_cells.values.tolist() == [["c", "t0"], ["c", "t3"]]
    assert r.table.n_tasks.tolist() == [6, 6, 4]
    hand = _hand(sparse)  # c over the 4 tasks it ran
    np.testing.assert_allclose(r.table.estimate, hand.macro.to_numpy())
    r.gaps([("a", "b")])  # same tasks: fine
    with pytest.raises(ValueError, match="ran different tasks.*missing='common'"):
        r.gaps([("a", "c")])
    with pytest.warns(MissingTasksWarning, match="only the tasks every system ran"):
        common = evalci.suite_ci(
            sparse, "correct", "task", "item", missing="common", n_resamples=200, rng=0
        )
    assert common.table.n_tasks.tolist() == [4, 4, 4]
    kept = sparse[~sparse.task.isin(["t0", "t3"])]
    np.testing.assert_allclose(common.table.estimate, _hand(kept).macro.to_numpy())
    common.gaps([("a", "c")])
    with pytest.warns(MissingTasksWarning, match="compare averages over different"):
        avail = evalci.suite_ci(
            sparse,
            "correct",
            "task",
            "item",
            missing="available",
            rng=0,
            n_resamples=200,
        )
    avail.gaps([("a", "c")])


def test_bad_input():
    df = _suite(np.random.default_rng(7))
    with pytest.raises(ValueError, match="`weighting` must be one of"):
        evalci.suite_ci(df, "correct", "task", "item", weighting="mean")
    with pytest.raises(ValueError, match="`tasks` must be one of"):
        evalci.suite_ci(df, "correct", "task", "item", tasks="sampled")
    with pytest.raises(ValueError, match="`task`, `cluster` are required|required"):
        evalci.suite_ci(df, "correct")
    partial = df.drop(index=df.index[(df.system == "b") & (df.task == "t1")][:2])
    with pytest.raises(ValueError, match="'b' ran task 't1' but lacks 2"):
        evalci.suite_ci(partial, "correct", "task", "item")
    with pytest.raises(ValueError, match="`pairs`: 'z' is not a system"):
        evalci.suite_ci(df, "correct", "task", "item", n_resamples=50).gaps(
            [("a", "z")]
        )


def test_mmlu_pro_categories_as_tasks():
    path = DATA / "mmlu_pro_4sys_k1.csv"
    df = pd.read_csv(path)
    r = evalci.suite_ci(df, "correct", "category", "input_id", n_resamples=300, rng=0)
    per = df.groupby(["system", "category"]).correct.mean().groupby("system").mean()
    np.testing.assert_allclose(r.table.set_index("system").estimate, per)
    assert (r.table.n_tasks == 14).all() and (r.table.n_items == 12032).all()


@pytest.mark.slow
def test_two_stage_interval_covers_the_universe_mean():
    # A universe of tasks with success rates p_t ~ Beta(6, 4) (mean 0.6, the
    # estimand); each trial draws T = 20 tasks with 30 items each. The
    # macro mean's interval should cover 0.6: the two-stage (random tasks)
    # interval does (measured 0.947 here; in theory slightly conservative,
    # as the second stage counts the items' noise again), the fixed-task
    # one does not (measured 0.683: it ignores which tasks were drawn).
    # 300 trials: a coverage's SE is about 0.013, so the band [0.90, 0.995]
    # is over 3.5 SEs from 0.95 on either side (false-failure rate < 0.1%);
    # 0.8 for the fixed interval is 9 SEs above what it measures.
    rng = np.random.default_rng(2025)
    hits = {"fixed": 0, "random": 0}
    trials = 300
    for trial in range(trials):
        p = rng.beta(6, 4, 20)
        y = (rng.random((20, 30)) < p[:, None]).astype(float)
        df = pd.DataFrame(
            {
                "system": "m",
                "task": np.repeat(np.arange(20), 30),
                "item": np.tile(np.arange(30), 20),
                "correct": y.ravel(),
            }
        )
        for tasks in hits:
            r = evalci.suite_ci(
                df,
                "correct",
                "task",
                "item",
                tasks=tasks,
                n_resamples=300,
                rng=trial,
            )
            hits[tasks] += bool(r.table.low[0] <= 0.6 <= r.table.high[0])
    coverage = {k: v / trials for k, v in hits.items()}
    assert 0.90 <= coverage["random"] <= 0.995, coverage
    assert coverage["fixed"] < 0.8, coverage


# ------------------------------------------------ issue 34: checked like the rest
def test_empty_and_multiindex_tables_are_refused():
    df = _suite(np.random.default_rng(7))
    with pytest.raises(ValueError, match="`data` has no rows"):
        evalci.suite_ci(df.iloc[:0], "correct", "task", "item")
    wide = df.copy()
    wide.columns = pd.MultiIndex.from_tuples([(c, "x") for c in df.columns])
    with pytest.raises(ValueError, match="`data` has MultiIndex columns"):
        evalci.suite_ci(wide, "correct", "task", "item")


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_no_nan_without_a_word():
    df = _suite(np.random.default_rng(7), systems=("a",))
    with pytest.raises(ValueError, match="'win_rate' needs at least two systems"):
        evalci.suite_ci(df, "correct", "task", "item", metric="win_rate")
    with pytest.raises(ValueError, match="`n_resamples` must be at least 2"):
        evalci.suite_ci(df, "correct", "task", "item", n_resamples=1)
    huge = df.assign(correct=df.correct * 1e308)
    with pytest.raises(ValueError, match=r"reaches 1e\+308.*Rescale the column"):
        evalci.suite_ci(huge, "correct", "task", "item")
    # a system alone on every task it ran has no one to beat: NaN, and said why
    two = _suite(np.random.default_rng(8), n_tasks=3, systems=("a", "b"))
    alone = _suite(np.random.default_rng(9), n_tasks=1, systems=("c",))
    sparse = pd.concat([two, alone.assign(task="solo")], ignore_index=True)
    with (
        pytest.warns(MissingTasksWarning),
        pytest.warns(evalci.DegenerateDataWarning, match="no win rate for 'c'"),
    ):
        res = evalci.suite_ci(
            sparse, "correct", "task", "item", metric="win_rate",
            missing="available", n_resamples=50, rng=0,
        )  # fmt: skip
    t = res.table.set_index("system")
    assert np.isnan(t.loc["c", "estimate"]) and t.drop("c").estimate.notna().all()
