"""Intervals over random facets: the multiway SE against statsmodels'
two-way cluster-robust covariance (and a row-level loop for three ways), the
pigeonhole replicates against explicit weights, paired gaps on shared draws,
and reproducibility whatever the row order."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from facet_tables import crossed

import evalci
from evalci.methods.facets import cells_of
from evalci.methods.facets.pigeonhole import _counts, pigeonhole_replicates


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_multiway_equals_statsmodels_two_way_cluster():
    sm = pytest.importorskip("statsmodels.api")
    df = crossed(n=30, t=5, r=2, seed=2)
    r = evalci.facet_ci(df, "y", "input", "template", method="multiway")
    ols = sm.OLS(df.y.to_numpy(), np.ones((len(df), 1))).fit(
        cov_type="cluster",
        cov_kwds={"groups": np.column_stack([df.input, df.template])})
    assert r.standard_error == pytest.approx(ols.bse[0], rel=1e-10)
    one = sm.OLS(df.y.to_numpy(), np.ones((len(df), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": df.input.to_numpy()})
    assert r.naive_standard_error == pytest.approx(one.bse[0], rel=1e-10)
    assert r.df == 4  # fewest levels (5 templates) - 1


def test_multiway_three_ways_equals_a_row_loop():
    """CGM's inclusion-exclusion written out over rows, one clustering at a time."""
    df = crossed(n=8, t=3, j=3, r=2, seed=4)
    r = evalci.facet_ci(df, "y", "input", ["template", "judge"], method="multiway")
    u = (df.y - df.y.mean()) / len(df)
    total = 0.0
    for k in (1, 2, 3):
        for dims in combinations(["input", "template", "judge"], k):
            sums = u.groupby([df[d] for d in dims]).sum()
            g = len(sums)
            total += (-1) ** (k + 1) * g / (g - 1) * (sums**2).sum()
    assert r.standard_error**2 == pytest.approx(total, rel=1e-10)


def test_pigeonhole_replicates_equal_explicit_weights():
    df = crossed(n=9, t=4, j=3, r=1, seed=6).sample(frac=0.9, random_state=0)
    cells = cells_of(df, "y", "input", ["template", "judge"])
    root = np.random.SeedSequence(11)
    reps = pigeonhole_replicates(root, cells.present, cells.means(), 70)
    wi = _counts(root, 0, 9, 0, 70)
    wt = _counts(root, 1, 4, 0, 70)
    wj = _counts(root, 2, 3, 0, 70)
    m, p = cells.means()[0], cells.present[0]
    for b in (0, 1, 63, 64, 69):  # both sides of a stream's end
        num = den = 0.0
        for i in range(9):
            for t in range(4):
                for j in range(3):
                    w = wi[b, i] * wt[b, t] * wj[b, j] * p[i, t, j]
                    num += w * m[i, t, j]
                    den += w
        assert reps[0, b] == pytest.approx(num / den, rel=1e-12)
    assert (wi.sum(axis=1) == 9).all() and (wj.sum(axis=1) == 3).all()


def test_same_seed_same_numbers_whatever_the_row_order():
    df = crossed(seed=8)
    a = evalci.facet_ci(df, "y", "input", "template", method="pigeonhole",
                        n_resamples=500, rng=3)
    b = evalci.facet_ci(df.sample(frac=1.0, random_state=5), "y", "input", "template",
                        method="pigeonhole", n_resamples=500, rng=3)
    np.testing.assert_allclose(a.bootstrap_distribution, b.bootstrap_distribution,
                               rtol=1e-12)
    assert (a.low, a.high) == pytest.approx((b.low, b.high), rel=1e-12)


def test_gaps_share_the_draws_of_the_systems():
    one = crossed(seed=1).assign(system="a")
    two = crossed(seed=2).assign(system="b")
    both = pd.concat([one, two])
    per = evalci.facet_ci(both, "y", "input", "template", by="system",
                          method="pigeonhole", n_resamples=300, rng=0)
    gap = evalci.facet_compare(both, "y", "input", "template", baseline="a",
                               method="pigeonhole", n_resamples=300, rng=0)
    dist = per.bootstrap_distribution
    np.testing.assert_allclose(gap.bootstrap_distribution[0], dist[1] - dist[0],
                               rtol=1e-9, atol=1e-12)
    assert gap.estimate.iloc[0] == pytest.approx(two.y.mean() - one.y.mean())
    assert list(gap.groups) == ["b - a"]


def test_components_interval_is_wider_than_inputs_only_when_templates_vary():
    df = crossed(n=60, t=6, r=2, sd=(1.0, 0.6, 0.3, 0.5, 1.0), seed=9)
    r = evalci.facet_ci(df, "y", "input", "template")
    naive = evalci.cluster_ci(df, "y", "input", n_resamples=2000, rng=0)
    assert r.standard_error > 1.5 * r.naive_standard_error
    assert r.high - r.low > naive.high - naive.low
    assert r.naive_standard_error == pytest.approx(naive.standard_error, rel=0.1)


def test_accessors_and_dataarray_give_the_same_numbers():
    df = crossed(n=12, t=3, r=2, seed=10)
    ref = evalci.facet_ci(df, "y", "input", "template", method="pigeonhole",
                          n_resamples=200, rng=1)
    via = df.evalci.cluster_ci("y", cluster="input", facets=["template"],
                               method="pigeonhole", n_resamples=200, rng=1)
    np.testing.assert_array_equal(ref.bootstrap_distribution, via.bootstrap_distribution)
    da = df.set_index(["input", "template", "run"]).y.to_xarray()
    out = da.evalci.facet_ci(facets=["template"], method="pigeonhole",
                             n_resamples=200, rng=1)
    np.testing.assert_allclose(out.bootstrap_distribution, ref.bootstrap_distribution,
                               rtol=1e-12)
    g = da.evalci.g_study(facets="template")
    assert g.components["variance"].to_dict() == pytest.approx(
        ref.g_study.components["variance"].to_dict(), rel=1e-10)


def test_input_frame_is_not_modified():
    df = crossed(n=10, t=3, r=2)
    before = df.copy()
    evalci.facet_ci(df, "y", "input", "template", method="pigeonhole", n_resamples=100)
    evalci.facet_compare(pd.concat([df.assign(system="a"), df.assign(system="b", y=-df.y)]),
                         "y", "input", "template")
    pd.testing.assert_frame_equal(df, before)


def test_repr_and_frame():
    r = evalci.facet_ci(crossed(n=10, t=3), "y", "input", "template")
    assert "FacetResult" in repr(r) and "template" in repr(r)
    assert list(r.to_frame().columns)[:3] == ["estimate", "low", "high"]
    assert "GStudy" in repr(r.g_study)
