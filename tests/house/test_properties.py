"""Properties that must hold for any data (hypothesis)."""

import warnings

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import evalci


@st.composite
def tables(draw):
    n = draw(st.integers(2, 12))
    ks = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    rows = []
    for i, k in enumerate(ks):
        for r in range(k):
            rows.append((f"in{i}", r, draw(st.integers(0, 1)), draw(st.integers(0, 2))))
    df = pd.DataFrame(rows, columns=["input_id", "run", "correct", "pred"])
    perm = draw(st.permutations(range(len(df))))
    return df, df.iloc[list(perm)]


@settings(max_examples=40, deadline=None)
@given(
    tables(),
    st.sampled_from(["cluster", "hierarchical", "single_draw"]),
    st.sampled_from(["input", "run"]),
)
def test_row_order_never_changes_a_result(pair, strategy, weight):
    df, shuffled = pair
    kw = dict(
        cluster="input_id", strategy=strategy, weight=weight, n_resamples=64, rng=1
    )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.DegenerateDataWarning)
        warnings.simplefilter("ignore", evalci.FewClustersWarning)
        a = evalci.bootstrap(df, "correct", **kw)
        b = evalci.bootstrap(shuffled, "correct", **kw)
    np.testing.assert_allclose(
        a.bootstrap_distribution, b.bootstrap_distribution, rtol=1e-12, atol=1e-15
    )
    assert a.estimate == b.estimate or np.isclose(a.estimate, b.estimate)


@settings(max_examples=40, deadline=None)
@given(tables())
def test_replicates_stay_within_the_range_of_input_scores(pair):
    df, _ = pair

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.DegenerateDataWarning)
        warnings.simplefilter("ignore", evalci.FewClustersWarning)
        res = evalci.cluster_ci(
            df, "correct", cluster="input_id", n_resamples=64, rng=0
        )
    per_input = df.groupby("input_id").correct.mean()
    assert per_input.min() - 1e-12 <= res.bootstrap_distribution.min()
    assert res.bootstrap_distribution.max() <= per_input.max() + 1e-12
    assert res.low <= res.high


def test_registered_metric_is_found_by_name():
    evalci.metrics.register_metric(
        evalci.metrics.accuracy(truth="label"), name="label_accuracy", overwrite=True
    )
    df = pd.DataFrame(
        {
            "input_id": np.arange(30),
            "pred": np.arange(30) % 3,
            "label": np.arange(30) % 2,
        }
    )
    res = evalci.cluster_ci(
        df, "pred", cluster="input_id", metric="label_accuracy", n_resamples=100, rng=0
    )
    assert res.estimate == (df.pred == df.label).mean()
    assert "label_accuracy" in evalci.metrics.available_metrics()
