"""Dask DataFrames: an exact Dask reduction, then the same engine as pandas."""

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from dask.callbacks import Callback

import evalci
from evalci.frames import dask_frame as _dask
from evalci.frames.accessors import EvalciDaskDataFrameAccessor, EvalciDataFrameAccessor
from evalci.reporting.report_result import Report

from conftest import clustered, local_cluster, shared_data


def same(a, b):
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(np.asarray(a.low), np.asarray(b.low), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(a.n_runs), np.asarray(b.n_runs))


@pytest.mark.parametrize("weight", ["input", "run"])
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_dask_frame_equals_pandas(weight, method):
    df = clustered(n=60, k=3, unequal=True, seed=3)
    ddf = dd.from_pandas(df.sample(frac=1, random_state=0), npartitions=5)
    kw = dict(
        by="system",
        strata="subject",
        method=method,
        weight=weight,
        n_resamples=500,
        rng=2,
    )
    same(
        evalci.cluster_ci(df, "correct", "input_id", **kw),
        ddf.evalci.cluster_ci("correct", "input_id", **kw),
    )


def test_dask_frame_kappa_and_counts_table():
    sim = evalci.simulate.confusion_model(80, 4, rng=3)
    metric = evalci.metrics.kappa(truth="label")
    kw = dict(metric=metric, method="bca", n_resamples=400, rng=1)
    same(
        evalci.cluster_ci(sim, "pred", "input_id", **kw),
        evalci.cluster_ci(dd.from_pandas(sim, npartitions=3), "pred", "input_id", **kw),
    )
    counts = shared_data("aime2024_cot_highk_counts.csv")
    solved = counts.groupby("system").n_correct.sum()
    counts = counts[counts.system.isin(solved.index[solved > 0][:3])]
    kw = dict(
        by="system", successes="n_correct", trials="n_runs", n_resamples=300, rng=0
    )
    same(
        counts.evalci.cluster_ci(cluster="input_id", **kw),
        dd.from_pandas(counts, npartitions=4).evalci.cluster_ci(
            cluster="input_id", **kw
        ),
    )


def test_dask_frame_compare(gpqa):
    ddf = dd.from_pandas(gpqa, npartitions=3)
    for method in ["percentile", "clt"]:
        a = gpqa.evalci.compare(
            "correct", "input_id", method=method, n_resamples=500, rng=0
        )
        b = ddf.evalci.compare(
            "correct", "input_id", method=method, n_resamples=500, rng=0
        )
        pd.testing.assert_frame_equal(a.table, b.table)


def test_dask_frame_missing_values_and_errors(gpqa):
    holes = gpqa.assign(correct=gpqa.correct.astype(float))
    holes.loc[[0, 5], "correct"] = np.nan
    ddf = dd.from_pandas(holes, npartitions=2)
    with pytest.raises(ValueError, match=r"missing values .*missing='drop'"):
        ddf.evalci.cluster_ci("correct", "input_id", by="system")
    with pytest.warns(evalci.MissingDataWarning, match=r"left out 2 of 1980 runs"):
        res = ddf.evalci.cluster_ci(
            "correct", "input_id", by="system", missing="drop", n_resamples=100, rng=0
        )
    assert res.n_runs.sum() == len(gpqa) - 2
    assert res.counts.n_missing.sum() == 2  # counted, as on pandas
    with pytest.raises(ValueError, match=r"callable `metric` needs the rows"):
        ddf.evalci.cluster_ci("correct", "input_id", metric=lambda d: d.correct.mean())
    with pytest.raises(ValueError, match=r"supports strategy='cluster'"):
        ddf.evalci.bootstrap("correct", "input_id", strategy="hierarchical")
    with pytest.raises(ValueError, match=r"`cluster`: column 'qid' is not in the"):
        ddf.evalci.cluster_ci("correct", "qid")


def test_dask_frame_on_a_distributed_cluster(gpqa):
    pytest.importorskip("distributed")
    eager = gpqa.evalci.cluster_ci(
        "correct", "input_id", by="system", n_resamples=300, rng=4
    )
    with local_cluster(n_workers=2, processes=False) as (cluster, _):
        res = dd.from_pandas(gpqa, npartitions=4).evalci.cluster_ci(
            "correct", "input_id", by="system", n_resamples=300, rng=4
        )
    same(eager, res)


# ------------------------------------------------ every method of the accessor
class Computes(Callback):
    """Counts the graphs a local scheduler runs."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def _start(self, dsk):
        self.n += 1


def test_the_dask_accessor_has_every_method_of_the_pandas_one():
    public = {m for m in dir(EvalciDataFrameAccessor) if not m.startswith("_")}
    assert public <= set(dir(EvalciDaskDataFrameAccessor))


def _equal(a, b, exact=True):
    """Results of the pandas and the Dask accessor are the same."""
    tol = {} if exact else dict(check_exact=False, rtol=1e-12, atol=1e-15)
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, **tol)
    elif isinstance(a, xr.DataArray):
        xr.testing.assert_identical(a, b)
    elif isinstance(a, evalci.Plan):
        sa, sb = a.summary(), b.summary()
        assert sa.keys() == sb.keys()
        for key in sa:
            if isinstance(sa[key], float):
                assert sa[key] == pytest.approx(sb[key], rel=1e-12, nan_ok=True), key
            else:
                assert sa[key] == sb[key], key
    elif isinstance(a, Report):
        assert a.to_text() == b.to_text()
        pd.testing.assert_frame_equal(a.scores.to_frame(), b.scores.to_frame())
        pd.testing.assert_frame_equal(a.comparison.table, b.comparison.table)
        pd.testing.assert_frame_equal(a.flaky, b.flaky)
    elif hasattr(a, "to_frame"):
        pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    else:
        assert a == b


_A, _B = sorted(evalci.load_example().system.unique())


def _methods():
    a, b = _A, _B
    k1 = dict(n_correct=None)  # marks a k=1 table (first run only)
    return [
        ("icc", ("correct", "input_id"), dict(system="system"), False),
        ("icc", ("correct", "input_id"), dict(system="system", pairs="all"), True),
        (
            "icc",
            ("correct", "input_id"),
            dict(system="system", pairs="all", run=None),
            False,
        ),
        ("width_table", ("correct", "input_id"), dict(by="system"), False),
        (
            "plan",
            ("correct", "input_id"),
            dict(by="system", n_inputs="data", target_width=0.12),
            False,
        ),
        (
            "plan",
            ("correct", "input_id"),
            dict(budget=5000, cost_input=1, cost_run=1),
            False,
        ),
        (
            "sample_size",
            ("correct", "input_id"),
            dict(system="system", effect=0.05),
            False,
        ),
        (
            "sample_size",
            ("correct", "input_id"),
            dict(system="system", pair=(a, b), effect=-0.05),
            True,
        ),
        ("mde", ("correct", "input_id"), dict(system="system", pair=(a, b)), True),
        ("mde", ("correct", "input_id"), dict(by="system"), False),
        ("flaky", ("correct", "input_id"), dict(by="system"), True),
        ("analytic_ci", ("correct", "input_id"), dict(by="system"), True),
        (
            "analytic_ci",
            ("correct", "input_id"),
            dict(by="system", weight="run"),
            True,
        ),
        ("analytic_ci", ("correct",), dict(by="system", method="wilson", **k1), True),
        ("mcnemar", ("correct", "input_id", "system", a, b), dict(**k1), True),
        (
            "report",
            ("correct", "input_id"),
            dict(mme=0.02, method="bca", n_resamples=500, rng=3),
            True,
        ),
        ("to_xarray", ("correct",), dict(), True),
        ("to_xarray", ("correct",), dict(run=None), True),
    ]


@pytest.mark.parametrize(
    "name, args, kwargs, exact",
    _methods(),
    ids=[f"{c[0]}-{i}" for i, c in enumerate(_methods())],
)
def test_every_method_equals_pandas_on_a_distributed_cluster(
    gpqa, client, name, args, kwargs, exact
):
    kwargs = dict(kwargs)
    data = gpqa
    if kwargs.pop("n_correct", 0) is None:  # a k=1 table: one run per input
        data = gpqa[gpqa.run == 1]
    ddf = dd.from_pandas(data.sample(frac=1, random_state=1), npartitions=4)
    with dask.config.set(scheduler=client):
        got = getattr(ddf.evalci, name)(*args, **kwargs)
        ref = ddf.compute()  # the same data (Dask's string dtypes), row order kept
    _equal(getattr(ref.evalci, name)(*args, **kwargs), got, exact=exact)


def test_counts_paths_equal_pandas_on_the_counts_table(gpqa):
    """0/1 outcomes are reduced to successes/trials: the pandas counts answer."""
    ddf = dd.from_pandas(gpqa, npartitions=3)
    counts = (
        ddf.compute()
        .groupby(["input_id", "system"], as_index=False)
        .agg(s=("correct", "sum"), n=("correct", "size"))
    )
    got = ddf.evalci.icc("correct", "input_id", system="system")
    ref = counts.evalci.icc(
        cluster="input_id", system="system", successes="s", trials="n"
    )
    pd.testing.assert_frame_equal(got, ref)  # bit for bit
    rows = gpqa.evalci.icc("correct", "input_id", system="system")
    np.testing.assert_allclose(got.rho, rows.rho, rtol=1e-13)


def test_counts_table_input_and_scores_take_the_rows_path(gpqa):
    counts = gpqa.groupby(["input_id", "system"], as_index=False).agg(
        s=("correct", "sum"), n=("correct", "size")
    )
    dcounts = dd.from_pandas(counts, npartitions=3)
    kw = dict(cluster="input_id", by="system", successes="s", trials="n")
    _equal(dcounts.compute().evalci.width_table(**kw), dcounts.evalci.width_table(**kw))
    scores = gpqa.assign(score=gpqa.correct * 0.5 + (gpqa.run % 2) * 0.25)
    dscores = dd.from_pandas(scores, npartitions=3)
    ref = dscores.compute().evalci.icc("score", "input_id", system="system")
    _equal(ref, dscores.evalci.icc("score", "input_id", system="system"), exact=False)
    _equal(
        dscores.compute().evalci.flaky("score", "input_id", by="system"),
        dscores.evalci.flaky("score", "input_id", by="system"),
        exact=False,
    )


def test_methods_that_need_rows_say_so_past_the_limit(gpqa, monkeypatch):
    ddf = dd.from_pandas(gpqa, npartitions=3)
    monkeypatch.setattr(_dask, "MAX_EXPANDED_ROWS", 1000)
    # flaky takes counts (0/1 outcomes), so it needs no rows: checked below
    ddf.evalci.flaky("correct", "input_id")
    for name, args in [
        ("analytic_ci", ("correct", "input_id")),
        ("report", ("correct", "input_id")),
    ]:
        with pytest.raises(
            ValueError,
            match=rf"{name} on a Dask DataFrame needs one row per run, and this "
            rf"table has 1,980 of them .*ddf.compute\(\).evalci.{name}",
        ):
            getattr(ddf.evalci, name)(*args)
    # 0/1 outcomes: counts, whatever the size
    ddf.evalci.icc("correct", "input_id", system="system")
    scores = dd.from_pandas(gpqa.assign(score=gpqa.correct * 0.5), npartitions=3)
    with pytest.raises(ValueError, match=r"icc on a Dask DataFrame needs one row"):
        scores.evalci.icc("score", "input_id", system="system")
    with pytest.raises(ValueError, match=r"width_table\(observed=True\) subsamples"):
        ddf.evalci.width_table("correct", "input_id", observed=True)


# ------------------------------------------- errors, before anything computes
@pytest.mark.parametrize(
    "name, args, kwargs, error, match",
    [
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(method="nope"),
            ValueError,
            r"`method` must be one of",
        ),
        (
            "bootstrap",
            ("correct", "input_id"),
            dict(strategy="nope"),
            ValueError,
            r"`strategy` must be one of",
        ),
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(confidence_level=1.5),
            ValueError,
            r"`confidence_level` must be a number in \(0, 1\)",
        ),
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(n_resamples=0),
            ValueError,
            r"`n_resamples` must be a positive integer",
        ),
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(weight="rows"),
            ValueError,
            r"`weight` must be 'input'",
        ),
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(metric="nope"),
            ValueError,
            r"nope",
        ),
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(metric=evalci.metrics.kappa(truth="label")),
            ValueError,
            r"`metric`: column 'label' is not in the DataFrame",
        ),
        (
            "cluster_ci",
            ("correct", "qid"),
            dict(),
            ValueError,
            r"`cluster`: column 'qid' is not in the DataFrame",
        ),
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(by="model"),
            ValueError,
            r"`by`: column 'model' is not",
        ),
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(strata="topic"),
            ValueError,
            r"`strata`: column 'topic' is not",
        ),
        (
            "cluster_ci",
            ("correct", "input_id"),
            dict(n_resample=10),
            TypeError,
            r"unexpected keyword argument 'n_resample'",
        ),
        (
            "cluster_ci",
            (["correct", "run"], "input_id"),
            dict(),
            TypeError,
            r"`value` must be one column name \(str\), not a list",
        ),
        (
            "cluster_ci",
            (None, "input_id"),
            dict(successes="correct"),
            ValueError,
            r"needs both `successes` .* and `trials`",
        ),
        (
            "cluster_ci",
            (None, "input_id"),
            dict(trials="run"),
            ValueError,
            r"needs both `successes` .* and `trials`",
        ),
        (
            "compare",
            ("correct", "input_id"),
            dict(n_resamples=0),
            ValueError,
            r"`n_resamples` must be a positive integer",
        ),
        (
            "compare",
            ("correct", "input_id"),
            dict(confidence_level=0),
            ValueError,
            r"`confidence_level` must be",
        ),
        (
            "compare",
            ("correct", "input_id"),
            dict(system="model"),
            ValueError,
            r"`system`: column 'model' is not",
        ),
        (
            "compare",
            (["correct"], "input_id"),
            dict(),
            TypeError,
            r"`value` must be one column name",
        ),
        (
            "icc",
            ("correct", "qid"),
            dict(),
            ValueError,
            r"`cluster`: column 'qid' is not",
        ),
        (
            "icc",
            ("correct", "input_id"),
            dict(successes="correct"),
            ValueError,
            r"`successes` and `trials` go together",
        ),
        (
            "icc",
            ("correct", "input_id"),
            dict(pairs="all"),
            ValueError,
            r"`pairs` needs `system=`",
        ),
        (
            "width_table",
            ("correct", "input_id"),
            dict(n_resamples=-1),
            ValueError,
            r"`n_resamples` must be a positive integer",
        ),
        (
            "plan",
            ("correct", "input_id"),
            dict(confidence_level=2),
            ValueError,
            r"`confidence_level` must be in \(0, 1\)",
        ),
        (
            "mde",
            ("correct", "input_id"),
            dict(pair=("a", "b")),
            ValueError,
            r"`pair` needs `system=`",
        ),
        (
            "analytic_ci",
            ("correct", "input_id"),
            dict(method="nope"),
            ValueError,
            r"`method` must be one of",
        ),
        (
            "analytic_ci",
            ("correct", "input_id"),
            dict(method="fce"),
            ValueError,
            r"`truth` is required",
        ),
        (
            "mcnemar",
            ("correct", "input_id", "model", "a", "b"),
            dict(),
            ValueError,
            r"`system`: column 'model' is not",
        ),
        (
            "flaky",
            ("correct", "qid"),
            dict(),
            ValueError,
            r"`cluster`: column 'qid' is not",
        ),
        (
            "report",
            ("correct", "input_id"),
            dict(adjust="sidak"),
            ValueError,
            r"`adjust` must be None, 'bonferroni', 'holm' \(family-wise error\), 'bh'",
        ),
        (
            "report",
            ("correct", "input_id"),
            dict(n_resamples=0),
            ValueError,
            r"`n_resamples` must be a positive integer",
        ),
        (
            "to_xarray",
            ("correct",),
            dict(input="qid"),
            ValueError,
            r"`to_xarray`: column 'qid' is not",
        ),
    ],
)
def test_bad_arguments_raise_before_the_reduction_is_computed(
    gpqa, name, args, kwargs, error, match
):
    ddf = dd.from_pandas(gpqa, npartitions=3)
    computes = Computes()
    with dask.config.set(scheduler="sync"), computes:
        with pytest.raises(error, match=match):
            getattr(ddf.evalci, name)(*args, **kwargs)
        assert computes.n == 0
        ddf.evalci.flaky("correct", "input_id")  # the counter does count
        assert computes.n == 1


def test_counts_and_inf_errors_name_the_value(gpqa):
    counts = (
        gpqa.groupby(["input_id", "system"], as_index=False)
        .agg(s=("correct", "sum"), n=("correct", "size"))
        .astype({"s": float})
    )
    counts.loc[3, "s"] = np.nan  # a Dask sum used to count it as 0
    dcounts = dd.from_pandas(counts, npartitions=2)
    with pytest.raises(ValueError, match=r"column 's' has 1 missing values"):
        dcounts.evalci.cluster_ci(cluster="input_id", successes="s", trials="n")
    scores = gpqa.assign(score=gpqa.correct.astype(float))
    scores.loc[7, "score"] = np.inf
    dscores = dd.from_pandas(scores, npartitions=2)
    for call in [
        lambda: dscores.evalci.cluster_ci("score", "input_id", by="system"),
        lambda: dscores.evalci.compare("score", "input_id"),
        lambda: dscores.evalci.icc("score", "input_id"),
        lambda: dscores.evalci.flaky("score", "input_id"),
        lambda: evalci.cluster_ci(dscores, "score", "input_id"),
    ]:
        with pytest.raises(
            ValueError, match=r"`value` column 'score' has 1 infinite values"
        ):
            call()


def test_a_value_that_is_not_0_1_is_refused_where_counts_are_needed(gpqa):
    twos = dd.from_pandas(gpqa.assign(correct=gpqa.correct * 2), npartitions=2)
    a, b = sorted(gpqa.system.unique())
    with pytest.raises(ValueError, match=r"must hold only 0/1 for McNemar"):
        twos[twos.run == 1].evalci.mcnemar("correct", "input_id", "system", a, b)
    with pytest.raises(ValueError, match=r"must hold only 0/1 for method='wilson'"):
        twos[twos.run == 1].evalci.analytic_ci("correct", method="wilson")


# ----------------------------------------------------------------- warnings
def test_warnings_point_at_the_callers_line(gpqa):
    df = clustered(n=31, k=2, seed=5)
    df["subject"] = np.where(df.input_id == "q030", 9, df.subject)  # one input
    ddf = dd.from_pandas(df, npartitions=3)
    with pytest.warns(evalci.FewClustersWarning) as w:
        ddf.evalci.cluster_ci(
            "correct", "input_id", by="system", strata="subject", n_resamples=50
        )
    assert w[0].filename == __file__
    solved = dd.from_pandas(gpqa.assign(correct=1), npartitions=2)
    with pytest.warns(evalci.DegenerateDataWarning) as w:
        solved.evalci.cluster_ci("correct", "input_id", n_resamples=50)
    assert w[0].filename == __file__
    with pytest.warns(evalci.DegenerateDataWarning) as w:
        solved.evalci.report("correct", "input_id", n_resamples=50, rng=0)
    assert {x.filename for x in w} == {__file__}


@pytest.mark.parametrize(
    "fn, args, kwargs, error, match",
    [
        (evalci.cluster_ci, (["correct"], "input_id"), {}, TypeError, r"one column"),
        (
            evalci.cluster_ci,
            (None, "input_id"),
            dict(successes="correct"),
            ValueError,
            r"needs both `successes`",
        ),
        (
            evalci.bootstrap,
            ("correct", "input_id"),
            dict(strategy="nope"),
            ValueError,
            r"`strategy` must be one of",
        ),
        (
            evalci.cluster_ci,
            ("correct", "qid"),
            {},
            ValueError,
            r"`cluster`: column 'qid'",
        ),
        (
            evalci.cluster_ci,
            ("correct", "input_id"),
            dict(metric="nope"),
            ValueError,
            r"nope",
        ),
        (evalci.compare, (["correct"], "input_id"), {}, TypeError, r"one column"),
        (
            evalci.compare,
            ("correct", "input_id"),
            dict(strategy="hierarchical"),
            ValueError,
            r"supports strategy='cluster'",
        ),
    ],
)
def test_the_functions_check_what_they_pass_to_the_reduction_first(
    gpqa, fn, args, kwargs, error, match
):
    # evalci.cluster_ci(ddf, ...) hands _from_dask only some of its arguments;
    # those are checked before the reduction
    ddf = dd.from_pandas(gpqa, npartitions=3)
    computes = Computes()
    with dask.config.set(scheduler="sync"), computes:
        with pytest.raises(error, match=match):
            fn(ddf, *args, **kwargs)
    assert computes.n == 0
