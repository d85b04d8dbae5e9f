"""A judge as a facet of preferences: prompts and judges resampled
independently (the pigeonhole bootstrap), checked against the prompt
bootstrap when there is one judge and against explicit products of counts."""

import numpy as np
import pandas as pd
import pytest

from evalci.engine import resampling as rs
from evalci.methods.preference.boot import _crossed_weights
from evalci.preference import preference_ci, simulate_battles


@pytest.fixture(scope="module")
def battles():
    return simulate_battles({"a": 0.0, "b": 0.3, "c": 0.6, "d": 0.9}, 120, rng=0)


def biased_judges(battles, biases=(0.0, 0.25, -0.25), seed=2):
    gen = np.random.default_rng(seed)
    parts = []
    for k, bias in enumerate(biases):
        x = battles.assign(judge=f"j{k}")
        flip = gen.random(len(x)) < abs(bias)
        fav = "a" if bias > 0 else "d"
        x.loc[flip & (x.model_a == fav), "winner"] = "model_a"
        x.loc[flip & (x.model_b == fav), "winner"] = "model_b"
        parts.append(x)
    return pd.concat(parts, ignore_index=True)


def test_one_judge_is_the_prompt_bootstrap(battles):
    plain = preference_ci(battles, n_resamples=200, rng=1)
    judged = preference_ci(battles.assign(judge="only"), judge="judge",
                           n_resamples=200, rng=1)
    np.testing.assert_array_equal(plain.scores.bootstrap_distribution,
                                  judged.scores.bootstrap_distribution)


def test_weights_are_products_of_each_facets_counts():
    prompts = np.array([0, 0, 1, 2, 2, 3])
    judges = np.array([0, 1, 1, 0, 1, 0])
    root = np.random.SeedSequence(5)
    out = _crossed_weights((prompts, judges), root, 0, 2, np.empty((128, 6)))
    for s in range(2):
        wp = np.bincount(rs.draw_clusters(rs.stream(root, rs._BOOT, 0, s), 64,
                                          np.array([0, 4]))[7], minlength=4)
        wj = np.bincount(rs.draw_clusters(rs.stream(root, rs._BOOT, 17, s), 64,
                                          np.array([0, 2]))[7], minlength=2)
        np.testing.assert_array_equal(out[64 * s + 7], wp[prompts] * wj[judges])


def test_judges_who_disagree_widen_the_interval(battles):
    three = biased_judges(battles)
    by_judge = preference_ci(three, judge="judge", n_resamples=300, rng=1).scores
    by_prompt = preference_ci(three, n_resamples=300, rng=1).scores
    width = lambda r: (r.high - r.low).to_numpy()  # noqa: E731
    w_j, w_p = width(by_judge), width(by_prompt)
    # the judges disagree on a and d (one favours a, one d): wider there
    assert w_j[0] > 1.5 * w_p[0] and w_j[3] > 1.5 * w_p[3]
    np.testing.assert_allclose(by_judge.estimate, by_prompt.estimate)


def test_judge_needs_one_prompt_column(battles):
    three = biased_judges(battles)
    with pytest.raises(ValueError, match="the same column"):
        preference_ci(three, judge="question_id", n_resamples=50)
    with pytest.raises(ValueError, match="`cluster` to be one column"):
        preference_ci(three, judge="judge", cluster=["question_id", "judge"],
                      n_resamples=50)
