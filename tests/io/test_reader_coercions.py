"""No value a reader reads is coerced silently: a count or run number that
is not a whole number, a score that is text, is refused with the file, the
line (or entry, or member) and the field named (issue 34).

Before: a HELM ``train_trial_index`` of 1.5 became run 1 (a stat's mean
as text was already refused; kept here as a guard), a ``num_instances`` of
3.5 was rounded to 4, an
Inspect ``total_samples`` of 3.5 became 3, lm-eval's
``n-samples.<task>.effective`` of 2.5 became 2, and a ``score=`` function
returning "1" was read as 1.0.
"""

from __future__ import annotations

import json
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from evalci.io import inspect as inspect_reader
from evalci.io.readers import read_helm, read_inspect, read_lm_eval

sys.path.insert(0, str(Path(__file__).parent))
from test_read_inspect import eval_members, write_zip  # noqa: E402
from test_read_lm_eval_helm import _helm_file as _helm  # noqa: E402
from test_read_lm_eval_helm import write_lm_run  # noqa: E402

from logs import inspect_sample, inspect_spec  # noqa: E402


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda e: e | {"train_trial_index": 1.5},
         r"`train_trial_index` in entry \[1\] is 1\.5 \(a number\), not a whole number"),
        (lambda e: e | {"train_trial_index": "0"},
         r"`train_trial_index` in entry \[1\] is '0' \(a string\), not a whole number"),
        (lambda e: e | {"stats": [e["stats"][0], e["stats"][1] | {"mean": "1"}]},
         r"`mean` in entry \[1\], stats\[1\] is a string, not a number"),
    ],
)  # fmt: skip
def test_helm_fields_are_not_coerced(tmp_path, edit, said):
    _, f = _helm(tmp_path)
    entries = json.loads(f.read_text())
    entries[1] = edit(entries[1])
    f.write_text(json.dumps(entries))
    with pytest.raises(ValueError, match=said):
        read_helm(f)


def test_helm_num_instances_not_rounded(tmp_path):
    run, f = _helm(tmp_path)
    stats = json.loads((run / "stats.json").read_text())
    for s in stats:
        if s["name"]["name"] == "num_instances":
            s["mean"] = 3.5
    (run / "stats.json").write_text(json.dumps(stats))
    with pytest.raises(
        ValueError,
        match=r"stats\.json: the field `mean` in the num_instances of split 'test' "
        r"\(summed\) is 3\.5 \(a number\), not a whole number",
    ):
        read_helm(f)


def test_lm_eval_effective_count_not_truncated(tmp_path):
    f, results = write_lm_run(tmp_path, "arc_easy", 5)
    res = next(f.parent.glob("results_*.json"))
    results["n-samples"]["arc_easy"]["effective"] = 2.5
    res.write_text(json.dumps(results))
    with pytest.raises(
        ValueError, match=r"the field `arc_easy\.effective` in `n-samples` is 2\.5"
    ):
        read_lm_eval(tmp_path)


def test_lm_eval_score_function_must_return_a_number(tmp_path):
    f, _ = write_lm_run(tmp_path, "arc_easy", 3)
    with pytest.raises(
        TypeError,
        match=r"`score`: .*samples_arc_easy_.*\.jsonl, line 1 \(doc_id 0\): the score "
        r"function returned '1' \(str\), not a number",
    ):
        read_lm_eval(tmp_path, score=lambda responses, doc: "1")
    df = read_lm_eval(tmp_path, score=lambda responses, doc: np.bool_(True))
    assert df.score.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "native", [False, True] if find_spec("inspect_ai") else [False]
)
def test_inspect_total_samples_not_truncated(tmp_path, monkeypatch, native):
    if not native:
        monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: None)
    elif inspect_reader._inspect_ai() is None:
        pytest.skip("inspect_ai is not installed (the optional extra 'inspect')")
    spec = inspect_spec("m/x", "t", 1)
    members = eval_members(spec, [inspect_sample(0, 1, {"choice": "C"})])
    head = json.loads(members[-1][1])
    head["results"]["total_samples"] = 1.5
    members[-1] = ("header.json", json.dumps(head).encode())
    write_zip(tmp_path / "a.eval", members)
    if native:  # inspect_ai's own model refuses it first (an int field)
        with pytest.raises(ValueError, match=r"a\.eval could not be read"):
            read_inspect(tmp_path / "a.eval")
        return
    with pytest.raises(
        ValueError,
        match=r"a\.eval: the field `total_samples` in results is 1\.5 \(a number\), "
        "not a whole number",
    ):
        read_inspect(tmp_path / "a.eval")
