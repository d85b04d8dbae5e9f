"""Every bad input gets a clear error naming the argument and the fix."""

import numpy as np
import pandas as pd
import pytest

import evalci


@pytest.fixture
def df():
    return pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(10), 2),
            "correct": [0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1],
            "subject": np.repeat(np.arange(10) % 2, 2),
            "label": "a",
            "pred": np.tile(["a", "b"], 10),
            "score": np.linspace(0, 1, 20),
        }
    )


def ci(df, *args, **kwargs):
    kwargs.setdefault("n_resamples", 50)
    return evalci.bootstrap(df, *args, **kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            dict(value="corect", cluster="input_id"),
            r"`value`: column 'corect' is not in",
        ),
        (dict(value="correct", cluster="qid"), r"`cluster`: column 'qid' is not in"),
        (
            dict(value="correct", cluster="input_id", by="model"),
            r"`by`: column 'model'",
        ),
        (
            dict(value="correct", cluster="input_id", strata="topic"),
            r"`strata`: column",
        ),
        (
            dict(
                value="pred",
                cluster="input_id",
                metric=evalci.metrics.kappa(truth="gold"),
            ),
            r"`metric`: column 'gold'",
        ),
        (
            dict(value="correct", cluster=None),
            r"`cluster` is required .*strategy='iid'",
        ),
        (
            dict(value="correct", cluster="input_id", strategy="twostage"),
            r"`strategy` must be one of",
        ),
        (
            dict(value="correct", cluster="input_id", method="bc"),
            r"`method` must be one of",
        ),
        (
            dict(value="correct", cluster="input_id", metric="f1"),
            r"`metric` 'f1' is not registered",
        ),
        (
            dict(value="correct", cluster="input_id", confidence_level=95),
            r"`confidence_level` must be a number in \(0, 1\)",
        ),
        (
            dict(value="correct", cluster="input_id", confidence_level=0.0),
            r"`confidence_level`",
        ),
        (
            dict(value="correct", cluster="input_id", n_resamples=0),
            r"`n_resamples` must be a positive integer",
        ),
        (
            dict(value="correct", cluster="input_id", n_resamples=10.5),
            r"`n_resamples` must be a positive integer",
        ),
        (dict(value="correct", cluster="input_id", weight="item"), r"`weight` must be"),
        (
            dict(value="correct", cluster="input_id", by="input_id"),
            r"`by` and `cluster` share column 'input_id'",
        ),
        (
            dict(value="pred", cluster="input_id"),
            r"`value` column 'pred' is not numeric",
        ),
        (
            dict(value="score", cluster="input_id", strategy="mode_aggregate"),
            r"must hold only 0/1 \(mode_aggregate",
        ),
    ],
)
def test_argument_errors(df, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ci(df, **kwargs)


def test_nan_in_value_needs_dropna(df):
    bad = df.assign(correct=df.correct.astype(float))
    bad.loc[3, "correct"] = np.nan
    with pytest.raises(
        ValueError, match=r"column 'correct' has 1 missing values .*missing='drop'"
    ):
        ci(bad, "correct", cluster="input_id")
    with pytest.warns(evalci.MissingDataWarning, match="left out 1 of 20 runs"):
        res = ci(bad, "correct", cluster="input_id", missing="drop", rng=0)
    assert res.n_runs == 19


def test_nan_in_cluster_key(df):
    bad = df.assign(input_id=df.input_id.astype(float))
    bad.loc[0, "input_id"] = np.nan
    with pytest.raises(ValueError, match=r"`cluster` column 'input_id' has 1 missing"):
        ci(bad, "correct", cluster="input_id")


def test_one_input(df):
    with pytest.raises(
        ValueError, match=r"need at least 2 inputs to resample; found 1"
    ):
        ci(df[df.input_id == 0], "correct", cluster="input_id")


def test_one_input_in_a_group_is_named(df):
    two = pd.concat([df.assign(system="A"), df[df.input_id == 0].assign(system="B")])
    with pytest.raises(ValueError, match=r"in group 'B'; found 1"):
        ci(two, "correct", cluster="input_id", by="system")


def test_strata_varying_within_input(df):
    bad = df.assign(subject=np.arange(20) % 2)
    with pytest.raises(
        ValueError, match=r"`strata` column 'subject' varies within an input"
    ):
        ci(bad, "correct", cluster="input_id", strata="subject")


def test_mixed_type_keys_are_ordered_deterministically(df):
    mixed = df.assign(input_id=df.input_id.astype(object))
    mixed.loc[0:1, "input_id"] = "x"
    a = ci(mixed, "correct", cluster="input_id", rng=0)
    b = ci(mixed.iloc[::-1], "correct", cluster="input_id", rng=0)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


def test_not_a_dataframe():
    with pytest.raises(TypeError, match=r"`data` must be a pandas DataFrame"):
        evalci.bootstrap({"correct": [1, 0]}, "correct", cluster="input_id")


def test_bad_rng(df):
    with pytest.raises(TypeError, match=r"`rng` must be"):
        ci(df, "correct", cluster="input_id", rng="seed")
    with pytest.raises(TypeError, match=r"legacy RandomState"):
        ci(df, "correct", cluster="input_id", rng=np.random.RandomState(0))


def test_callable_metric_with_unequal_k_needs_weight_run(df):
    uneven = df.iloc[1:]
    with pytest.raises(ValueError, match=r"pass weight='run' to pool runs"):
        ci(uneven, "correct", cluster="input_id", metric=lambda d: d.correct.mean())
    res = ci(
        uneven,
        "correct",
        cluster="input_id",
        metric=lambda d: d.correct.mean(),
        weight="run",
        rng=0,
    )
    assert res.estimate == pytest.approx(uneven.correct.mean())


def test_callable_metric_must_return_a_number(df):
    with pytest.raises(TypeError, match=r"must return one number"):
        ci(df, "correct", cluster="input_id", metric=lambda d: d)


def test_mode_aggregate_truth_must_be_constant(df):
    bad = df.assign(label=np.tile(["a", "b"], 10))
    with (
        pytest.warns(evalci.EstimandWarning),
        pytest.raises(ValueError, match=r"column 'label' varies within an input"),
    ):
        ci(
            bad,
            "pred",
            cluster="input_id",
            strategy="mode_aggregate",
            metric=evalci.metrics.accuracy(truth="label"),
        )


def test_metric_registry_errors():
    with pytest.raises(ValueError, match=r"already registered; pass overwrite=True"):
        evalci.metrics.register_metric(evalci.metrics.mean)
    with pytest.raises(TypeError, match=r"must be an evalci.metrics.Metric"):
        evalci.metrics.register_metric(lambda d: 0)
    with pytest.raises(TypeError, match=r"`metric` must be a registered name"):
        evalci.metrics.get_metric(3)


def test_bad_metric_statistics_shape(df):
    broken = evalci.Metric(
        "broken", statistics=lambda d, v: np.ones(3), finalize=lambda s: s[..., 0]
    )
    with pytest.raises(ValueError, match=r"`statistics` must return an array of shape"):
        ci(df, "correct", cluster="input_id", metric=broken)


def test_interval_recompute_errors(df):
    res = ci(
        df, "correct", cluster="input_id", rng=0, metric=lambda d: d.correct.mean()
    )
    with pytest.raises(ValueError, match=r"BCa needs the jackknife acceleration"):
        res.interval(method="bca")
    with pytest.raises(ValueError, match=r"`confidence_level` must be in"):
        res.interval(confidence_level=2)


def test_index_level_is_named_as_such(df):
    with pytest.raises(
        ValueError,
        match=r"'input_id' is an index level, not a column; "
        r"use df.reset_index\('input_id'\)",
    ):
        ci(df.set_index("input_id"), "correct", cluster="input_id")
