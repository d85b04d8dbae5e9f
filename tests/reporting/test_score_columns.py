"""Results as <name>_avg / <name>_std_err columns: the same numbers as the
result's own frame, indexed by group, ready to join onto a leaderboard."""

import pandas as pd
import pytest

import evalci


def test_columns_equal_the_result_and_join_by_system():
    df = evalci.load_example()
    r = evalci.cluster_ci(df, "correct", "input_id", by="system", n_resamples=500, rng=0)
    cols = evalci.score_columns(r, "gpqa")
    frame = r.to_frame().set_index("system")
    pd.testing.assert_series_equal(cols["gpqa_avg"], frame["estimate"], check_names=False)
    pd.testing.assert_series_equal(cols["gpqa_std_err"], frame["standard_error"],
                                   check_names=False)
    board = pd.DataFrame({"model": list(frame.index), "mmlu_avg": [0.5, 0.6]})
    joined = board.join(cols, on="model")
    assert joined["gpqa_ci_low"].notna().all()


def test_columns_refuse_what_is_not_a_result():
    with pytest.raises(TypeError, match="`name`"):
        evalci.score_columns(None, 3)
    with pytest.raises(TypeError, match="to_frame"):
        evalci.score_columns([1], "x")
