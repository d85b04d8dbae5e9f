"""Bad input to the facets family gets a clear error naming the argument and
the fix; a Dask DataFrame reduced on a real loopback cluster gives the pandas
numbers for the same seed."""

import numpy as np
import pandas as pd
import pytest
from facet_tables import crossed

import evalci


@pytest.fixture
def df():
    return crossed(n=10, t=3, r=2, seed=20)


@pytest.mark.parametrize(
    ("change", "kwargs", "error", "match"),
    [
        (None, {"facets": ["nope"]}, ValueError, "`facets`: column 'nope'"),
        (None, {"facets": []}, ValueError, "`facets` is empty"),
        (None, {"facets": ["input"]}, ValueError, "both as `cluster` and as `facets`"),
        (None, {"facets": ["template"], "by": "template"}, ValueError, "each column plays one role"),
        (None, {"cluster": ["input", "run"]}, TypeError, "one column naming the input"),
        (lambda d: d.assign(y=np.where(d.index == 3, np.nan, d.y)), {}, ValueError,
         "`value` column 'y' has 1 missing"),
        (lambda d: d.assign(y=np.where(d.index == 3, np.inf, d.y)), {}, ValueError,
         "infinite"),
        (lambda d: d.assign(y=d.y.astype(str)), {}, TypeError, "must hold numbers"),
        (lambda d: d.assign(template=0), {}, ValueError, "has 1 level"),
        (lambda d: d.assign(template=d.template.astype(object).where(d.index != 2)),
         {}, ValueError, "`facets` column 'template' has 1 missing"),
        (None, {"method": "bca"}, ValueError, "`method` must be one of 'components'"),
        (None, {"method": "pigeonhole", "n_resamples": 10}, ValueError, "n_resamples"),
        (None, {"confidence_level": 95}, ValueError, "confidence_level"),
        (None, {"run": "run", "facets": []}, ValueError, "`facets` is empty"),
        (lambda d: d.assign(run=0), {"run": "run"}, ValueError, "repeat a run of their cell"),
    ],
)
def test_bad_input_is_refused(df, change, kwargs, error, match):
    data = df if change is None else change(df)
    args = {"facets": ["template"], "cluster": "input", **kwargs}
    with pytest.raises(error, match=match):
        evalci.facet_ci(data, "y", args.pop("cluster"), args.pop("facets"), **args)


def test_compare_refuses_one_system_and_unknown_baseline(df):
    with pytest.raises(ValueError, match="one system"):
        evalci.facet_compare(df.assign(system="a"), "y", "input", "template")
    two = pd.concat([df.assign(system="a"), df.assign(system="b")])
    with pytest.raises(ValueError, match="`baseline` 'c' is not a system"):
        evalci.facet_compare(two, "y", "input", "template", baseline="c")


def test_unbalanced_designs_are_counted_not_dropped(df):
    part = df.drop(index=df.index[(df.input == 0) & (df.template == 1)])
    g = evalci.g_study(part, "y", "input", "template")
    assert g.n_empty_cells == 1 and g.n_cells == 30 and g.n_runs == len(part)
    assert g.estimator == "reml"


def test_dask_frame_gives_the_pandas_numbers():
    dd = pytest.importorskip("dask.dataframe")
    from conftest import local_cluster

    df = crossed(n=15, t=4, r=2, seed=21)
    df["system"] = np.where(df.input % 2, "a", "b")
    df = pd.concat([df.assign(system="a"), df.assign(system="b", y=df.y + 0.5)])
    ddf = dd.from_pandas(df.sample(frac=1.0, random_state=2), npartitions=3)
    with local_cluster(2):
        got = evalci.facet_ci(ddf, "y", "input", "template", by="system",
                              method="pigeonhole", n_resamples=300, rng=4)
        gap = ddf.evalci.facet_compare("y", "input", "template", method="multiway")
        g = ddf.evalci.g_study("y", "input", "template", by="system")
    want = evalci.facet_ci(df, "y", "input", "template", by="system",
                           method="pigeonhole", n_resamples=300, rng=4)
    np.testing.assert_allclose(got.bootstrap_distribution, want.bootstrap_distribution,
                               rtol=1e-12)
    pd.testing.assert_frame_equal(got.to_frame(), want.to_frame(), rtol=1e-12,
                                  check_index_type=False)  # Dask keeps strings as string[pyarrow]
    ref_gap = evalci.facet_compare(df, "y", "input", "template", method="multiway")
    assert gap.estimate.iloc[0] == pytest.approx(ref_gap.estimate.iloc[0], rel=1e-12)
    pd.testing.assert_frame_equal(g.components, want.g_study.components, rtol=1e-10,
                                  check_index_type=False)


def test_labels_of_two_types_and_doubled_columns_are_refused(df):
    mixed = df.assign(template=df.template.astype(object).where(df.template != 0, "a"))
    with pytest.raises(TypeError, match="mixes labels of different types"):
        evalci.facet_ci(mixed, "y", "input", "template")
    doubled = pd.concat([df, df[["y"]]], axis=1)
    with pytest.raises(ValueError, match="2 columns named 'y'"):
        evalci.facet_ci(doubled, "y", "input", "template")


def test_gaps_refuse_systems_with_different_cells(df):
    two = pd.concat([df.assign(system="a"), df[df.input < 5].assign(system="b")])
    with pytest.raises(ValueError, match="differ in 15 .input, facet levels. cells"):
        evalci.facet_compare(two, "y", "input", "template")


def test_a_score_without_spread_says_so(df):
    with pytest.warns(evalci.DegenerateDataWarning, match="zero width"):
        r = evalci.facet_ci(df.assign(y=1.0), "y", "input", "template")
    assert r.low == r.high == 1.0


def test_pigeonhole_refuses_groups_the_draws_can_miss():
    big = crossed(n=40, t=3, r=1, seed=22).assign(group="big")
    small = crossed(n=40, t=3, r=1, seed=23)
    small = small[small.input == 0].assign(input=1000, group="small")
    with pytest.raises(ValueError, match="analyse those groups one at a time"):
        evalci.facet_ci(pd.concat([big, small]), "y", "input", "template", by="group",
                        method="pigeonhole", n_resamples=500, rng=0)
