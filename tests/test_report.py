"""Flaky inputs and the comparison report."""

import numpy as np
import pandas as pd
import pytest

import evalci


def test_flaky_matches_direct_computation(gpqa):
    table = gpqa.evalci.flaky("correct", cluster="input_id", by="system")
    direct = gpqa.groupby(["system", "input_id"]).correct.agg(["mean", "var", "size"])
    merged = table.set_index(["system", "input_id"]).join(direct)
    np.testing.assert_allclose(merged.pass_rate, merged["mean"])
    np.testing.assert_allclose(merged.variance, merged["var"], atol=1e-12)
    assert (merged.flaky == ((merged["mean"] > 0) & (merged["mean"] < 1))).all()
    # shares of each system's run-to-run variance add up to 1
    np.testing.assert_allclose(table.groupby("system").share.sum(), 1.0)
    # ordered within each system by share, largest first
    for _, part in table.groupby("system"):
        assert part.share.is_monotonic_decreasing


def test_flaky_share_weights_by_runs():
    # input 0: 2 runs [0, 1] (var 0.5, /2); input 1: 4 runs [0, 0, 1, 1] (var 1/3, /4)
    df = pd.DataFrame({"q": [0, 0, 1, 1, 1, 1, 2, 2], "y": [0, 1, 0, 0, 1, 1, 1, 1]})
    t = evalci.flaky(df, "y", "q")
    assert list(t.q) == [0, 1, 2]
    c0, c1 = 0.5 / 2, (1 / 3) / 4
    np.testing.assert_allclose(t.share, [c0 / (c0 + c1), c1 / (c0 + c1), 0.0])
    assert list(t.flaky) == [True, True, False]


def test_flaky_errors(gpqa):
    with pytest.raises(ValueError, match=r"`value`: column 'ok'"):
        gpqa.evalci.flaky("ok", cluster="input_id")
    with pytest.raises(ValueError, match=r"must be numeric"):
        gpqa.evalci.flaky("system", cluster="input_id")


def test_report_has_seed002_five_things(gpqa):
    rep = gpqa.evalci.report(
        "correct", cluster="input_id", mme=0.02, n_resamples=2000, rng=0
    )
    text = rep.to_text()
    assert "Inputs N = 198" in text and "k=5" in text
    assert "Minimum meaningful effect: 2.0 points" in text
    assert "Flaky inputs" in text and "Decision:" in text
    assert "excludes 0" in text and "does not clear" in text
    md = rep.to_markdown()
    assert "| system | score | interval |" in md
    assert "<table>" in rep.to_html()
    frame = rep.to_frame()
    assert list(frame.kind) == ["score", "score", "gap"]
    # the report's numbers are those of the functions it is built from
    comp = gpqa.evalci.compare(
        "correct", cluster="input_id", mme=0.02, n_resamples=2000, rng=0
    )
    assert frame.estimate[2] == comp.table.gap[0] and frame.low[2] == comp.table.low[0]
    scores = gpqa.evalci.cluster_ci(
        "correct", cluster="input_id", by="system", n_resamples=2000, rng=0
    )
    np.testing.assert_array_equal(frame.low[:2], scores.low.to_numpy())
    # the scores and the gap come from the same draws
    np.testing.assert_array_equal(
        rep.scores.bootstrap_distribution[1] - rep.scores.bootstrap_distribution[0],
        rep.comparison.gap_distribution[0],
    )


def test_report_without_mme_asks_for_one(gpqa):
    rep = gpqa.evalci.report("correct", cluster="input_id", n_resamples=500, rng=0)
    assert "not set (set it before running the comparison)" in repr(rep)
