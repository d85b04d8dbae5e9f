"""A judge's position bias and self-preference against hand computations on
small tables (the sign test by scipy's binomtest, the t interval by hand)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci.preference import position_bias, self_preference


def games(verdicts, judge="j"):
    """Two games per prompt, x first then y first; ``verdicts`` per prompt."""
    rows = []
    for q, (g1, g2) in enumerate(verdicts):
        rows.append((q, "x", "y", g1, 1, judge))
        rows.append((q, "y", "x", g2, 2, judge))
    return pd.DataFrame(rows, columns=["question_id", "model_a", "model_b", "winner",
                                       "game", "judge"])


def test_position_bias_equals_a_hand_computation():
    # first-both (A, A) x3, second-both (B, B) x1, consistent x2 (x wins both; tie, tie)
    v = [("model_a", "model_a")] * 3 + [("model_b", "model_b")] + \
        [("model_a", "model_b"), ("tie", "tie")]
    t = position_bias(games(v)).table.loc["j"]
    scores = np.array([1, 1, 1, -1, 0, 0], float)  # mean of the two games' sides
    assert t.n_couples == 6
    assert t.first == pytest.approx(3 / 6) and t.second == pytest.approx(1 / 6)
    assert t.consistent == pytest.approx(2 / 6)
    assert t.bias == pytest.approx(scores.mean())
    se = scores.std(ddof=1) / np.sqrt(6)  # one couple a prompt: the plain t interval
    half = stats.t.ppf(0.975, 5) * se
    assert (t.low, t.high) == pytest.approx((scores.mean() - half, scores.mean() + half))
    assert t.pvalue == pytest.approx(stats.binomtest(3, 4, 0.5).pvalue)


def test_an_unbiased_judge_has_no_position_bias_and_judges_are_apart():
    gen = np.random.default_rng(0)
    fair = [("model_a", "model_b") if gen.random() < 0.6 else ("model_b", "model_a")
            for _ in range(200)]
    biased = [("model_a", "model_a") if gen.random() < 0.4 else f for f in fair]
    both = pd.concat([games(fair, "fair"), games(biased, "biased")])
    t = position_bias(both).table
    assert t.loc["fair", "bias"] == 0 and t.loc["fair", "consistent"] == 1
    assert t.loc["biased", "low"] > 0 and t.loc["biased", "pvalue"] < 1e-6


def test_position_bias_refuses_games_not_judged_both_ways():
    g = games([("model_a", "model_b")] * 3).iloc[:-1]
    with pytest.raises(ValueError, match="not one in each order"):
        position_bias(g)
    with pytest.raises(ValueError, match="'model_a', 'model_b' or 'tie'"):
        position_bias(games([("A", "model_b")]))


def test_self_preference_equals_a_hand_computation():
    rows = []
    for q in range(4):
        for judge, win in (("gpt", "model_a"), ("claude", "model_b"), ("gemini", "tie")):
            rows.append((q, "gpt-4", "llama", win, judge))
    df = pd.DataFrame(rows, columns=["question_id", "model_a", "model_b", "winner", "judge"])
    df.loc[(df.question_id == 3) & (df.judge == "gpt"), "winner"] = "tie"
    out = self_preference(df, {"gpt": "gpt-4"}).loc["gpt"]
    own = np.array([1, 1, 1, 0.5])
    others = np.array([0.25] * 4)  # claude: 0, gemini: 1/2
    d = own - others
    assert out.own == pytest.approx(own.mean()) and out.others == pytest.approx(0.25)
    assert out.preference == pytest.approx(d.mean())
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2
    assert (out.low, out.high) == pytest.approx((d.mean() - half, d.mean() + half))
    assert out.pvalue == pytest.approx(stats.ttest_1samp(d, 0).pvalue)
    assert "position_bias" in dir(evalci.preference)
