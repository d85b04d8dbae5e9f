"""lm-eval's aggregated results read as the harness wrote them (the builder
in tests/logs.py writes lm-eval's own results_<date>.json layout)."""

import json

import numpy as np
import pytest

import evalci
from logs import lm_results


def test_reads_every_task_metric_and_filter(tmp_path):
    res = lm_results("arc_easy", "m/a", "pretrained=m/a")
    res["results"]["arc_easy"].update({"acc_norm,none": 0.6, "acc_norm_stderr,none": "N/A"})
    res["results"]["mmlu"] = {"alias": "mmlu", "acc,none": 0.4, "acc_stderr,none": 0.02}
    (tmp_path / "results_2025-03-04T10-00-00.json").write_text(json.dumps(res))
    (tmp_path / "samples_arc_easy_2025-03-04T10-00-00.jsonl").write_text("")
    out = evalci.read_lm_eval_results(tmp_path)
    assert list(out.columns) == ["system", "task", "metric", "filter", "value", "stderr",
                                 "n_samples", "log_file"]
    got = out.set_index(["task", "metric"])
    assert got.loc[("arc_easy", "acc"), "value"] == 0.5
    assert got.loc[("arc_easy", "acc"), "stderr"] == 0.1
    assert np.isnan(got.loc[("arc_easy", "acc_norm"), "stderr"])
    assert got.loc[("mmlu", "acc"), "value"] == 0.4
    assert (out.system == "m/a").all() and (out["filter"] == "none").all()
    assert got.loc[("arc_easy", "acc"), "n_samples"] == 12


def test_refuses_what_is_not_a_results_file(tmp_path):
    (tmp_path / "results_x.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="holds a JSON object, not a list"):
        evalci.read_lm_eval_results(tmp_path / "results_x.json")
    (tmp_path / "results_x.json").write_text(json.dumps({"results": {"t": {"acc,none": "x"}}}))
    with pytest.raises(ValueError, match="acc,none. is a string, not a number"):
        evalci.read_lm_eval_results(tmp_path / "results_x.json")
