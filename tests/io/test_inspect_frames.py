"""Inspect's samples_df / evals_df shapes (their default columns, as
inspect_ai.analysis defines them) into the tidy table, without inspect_ai
installed; tests/io/test_inspect_ai.py checks a frame inspect_ai builds."""

import numpy as np
import pandas as pd
import pytest

import evalci


def frames():
    samples = pd.DataFrame({
        "sample_id": ["u1", "u2", "u3", "u4", "u5", "u6"],
        "eval_id": ["e1", "e1", "e1", "e2", "e2", "e2"],
        "id": [1, 2, 3, 1, 2, 3], "epoch": [1, 1, 1, 1, 1, 1],
        "score_match": ["C", "I", None, "P", True, "0.25"],
        "error": ["", "", "boom", "", "", ""]})
    evals = pd.DataFrame({"eval_id": ["e1", "e2"], "model": ["m/a", "m/b"],
                          "task_name": ["t", "t"]})
    return samples, evals


def test_frames_map_scores_models_and_errors():
    samples, evals = frames()
    out = evalci.io.from_inspect_frames(samples, evals)
    assert list(out.columns) == ["input", "run", "system", "task", "match", "error"]
    np.testing.assert_array_equal(out["match"], [1.0, 0.0, np.nan, 0.5, 1.0, 0.25])
    assert out.system.tolist() == ["m/a"] * 3 + ["m/b"] * 3
    assert out.error.tolist()[2] == "boom" and out.error.isna().sum() == 5


def test_frames_refuse_what_they_cannot_map():
    samples, evals = frames()
    with pytest.raises(ValueError, match="no model column; pass `evals=`"):
        evalci.io.from_inspect_frames(samples)
    with pytest.raises(ValueError, match="eval 'e2' is not in `evals`"):
        evalci.io.from_inspect_frames(samples, evals.iloc[:1])
    with pytest.raises(ValueError, match="no score_other column"):
        evalci.io.from_inspect_frames(samples, evals, scorer="other")
    bad = samples.assign(score_match="maybe")
    with pytest.raises(ValueError, match="value_to_float"):
        evalci.io.from_inspect_frames(bad, evals)
