"""evalci.testing: assertions that gate on what the interval supports."""

import dask.dataframe as dd
import pytest

import evalci
from evalci import testing


def test_assert_score_above(gpqa):
    res = gpqa.evalci.cluster_ci(
        "correct", "input_id", by="system", n_resamples=500, rng=0
    )
    testing.assert_score_above(res, 0.5)
    with pytest.raises(
        AssertionError,
        match=r"not shown to be above 0.6: "
        r"openai/gpt-5.4-mini",
    ):
        testing.assert_score_above(res, 0.6)
    one = gpqa[gpqa.system == res.groups[0]].evalci.analytic_ci("correct", "input_id")
    with pytest.raises(AssertionError, match=r"score: 0.6758"):
        testing.assert_score_above(one, 0.65)


def test_assert_no_regression(gpqa):
    gaps = gpqa.evalci.compare("correct", "input_id", n_resamples=2000, rng=0)
    with pytest.raises(AssertionError, match=r"regression: .* is worse than"):
        testing.assert_no_regression(gaps)
    # the GPQA loss, -5.9 points [-11.4, -0.4], is significant and its estimate
    # exceeds 2 points: a regression at mme=0.02, as compare decides it
    with pytest.raises(AssertionError, match=r"regression"):
        testing.assert_no_regression(gaps, mme=0.02)
    # ... but not at mme=0.10, where a loss that size is not meaningful
    testing.assert_no_regression(gaps, mme=0.10)
    with_mme = gpqa.evalci.compare(
        "correct", "input_id", mme=0.02, n_resamples=2000, rng=0
    )
    assert with_mme.table.decision.iloc[0] == "worse"
    with pytest.raises(TypeError, match=r"must be a ComparisonResult"):
        testing.assert_no_regression(None)


def test_assert_results_equal(gpqa):
    kw = dict(by="system", n_resamples=300, rng=1)
    a = gpqa.evalci.cluster_ci("correct", "input_id", **kw)
    b = dd.from_pandas(
        gpqa.sample(frac=1, random_state=2), npartitions=3
    ).evalci.cluster_ci("correct", "input_id", **kw)
    testing.assert_results_equal(a, b)
    c = gpqa.evalci.cluster_ci(
        "correct", "input_id", by="system", n_resamples=300, rng=2
    )
    with pytest.raises(AssertionError, match=r"differs"):
        testing.assert_results_equal(a, c)
    assert evalci.testing is testing
