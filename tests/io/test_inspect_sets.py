"""Inspect logs of several tasks and of several attempts at one task: eval
sets whose tasks share sample ids, ``eval_retry`` outside an eval set, and
the command line reading them (several tasks are never pooled).

The fixtures are archives written byte by byte (``test_read_inspect``'s zip
writer, Inspect 0.3.285's layout); tests/io/test_inspect_sets_written.py reads
logs inspect_ai writes itself.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.util import find_spec
from pathlib import Path

import pandas as pd
import pytest

import evalci
from evalci.io import inspect as inspect_reader
from evalci.io.readers import read_inspect

sys.path.insert(0, str(Path(__file__).parent))
from test_read_inspect import eval_members, write_zip  # noqa: E402

from cli_calls import call  # noqa: E402
from logs import inspect_sample, inspect_spec  # noqa: E402

#: The readers to try: json + zipfile always, inspect_ai's where it is
#: installed (where it is not, tests/io/test_inspect_ai.py reports the one skip)
READERS = ["plain"] + (["inspect_ai"] if find_spec("inspect_ai") else [])


@pytest.fixture(params=READERS)
def reader(request, monkeypatch):
    """Both readers: json + zipfile, and inspect_ai's (where installed)."""
    if request.param == "plain":
        monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: None)
    return request.param


def log(path, task, task_id, values, *, model="m/x", started="10:00", status="success"):
    """One log of ``task``: samples 1..len(values), one epoch, scorer ``choice``."""
    spec = inspect_spec(model, task, 1) | {"task_id": task_id}
    samples = [inspect_sample(i + 1, 1, {"choice": v}) for i, v in enumerate(values)]
    members = eval_members(spec, samples)
    head = json.loads(members[-1][1])
    head["status"] = status
    head["stats"]["started_at"] = f"2025-03-04T{started}:00+00:00"
    head["results"]["total_samples"] = len(values)
    members[-1] = ("header.json", json.dumps(head).encode())
    write_zip(path, members)
    return path


def manifest(folder, *tasks):
    entries = [
        {"name": name, "task_id": tid, "task_args": {}, "model": "m/x",
         "model_args": {}, "sequence": i}
        for i, (name, tid) in enumerate(tasks)
    ]  # fmt: skip
    (folder / "eval-set.json").write_text(
        json.dumps({"eval_set_id": "S", "tasks": entries})
    )


@pytest.fixture
def eval_set(tmp_path):
    """Two tasks of one model, sample ids 1..4 in both."""
    d = tmp_path / "set"
    d.mkdir()
    manifest(d, ("alpha", "TA"), ("beta", "TB"))
    log(d / "a.eval", "alpha", "TA", "CCCI")
    log(d / "b.eval", "beta", "TB", "IIIC")
    return d


def test_two_tasks_with_the_same_ids_are_two_tasks(eval_set, reader):
    df = read_inspect(eval_set)  # (no warning: an EvalciWarning would fail)
    assert df.shape[0] == 8
    assert df.groupby("task").choice.mean().to_dict() == {"alpha": 0.75, "beta": 0.25}
    assert df[["system", "task", "input", "run"]].duplicated().sum() == 0
    # each task alone is the same rows as its part of the whole
    for task in ("alpha", "beta"):
        one = read_inspect(eval_set, task=task)
        want = df[df.task == task].reset_index(drop=True)
        pd.testing.assert_frame_equal(one, want, check_like=False)
    # one task's file named alone: no word about the other task of the set
    alone = read_inspect(eval_set / "b.eval")
    assert set(alone.task) == {"beta"}


def test_a_task_no_log_holds_is_refused_naming_the_tasks(eval_set, reader):
    with pytest.raises(
        ValueError,
        match=r"`task`: none of the 2 logs read is of task 'gamma'; they hold "
        r"'alpha' \(1 log\), 'beta' \(1 log\)",
    ):
        read_inspect(eval_set, task="gamma")
    with pytest.raises(TypeError, match="`task` must be a task's name"):
        read_inspect(eval_set, task=3)


def test_a_set_task_without_a_log_warns_only_when_the_folder_is_read(eval_set):
    manifest(eval_set, ("alpha", "TA"), ("beta", "TB"), ("gamma", "TC"))
    said = r"task 'gamma' \(m/x, task_id TC\) has no log .*its logs hold 'alpha' \(1 log\), 'beta' \(1 log\)"
    with pytest.warns(evalci.EvalciWarning, match=said):
        read_inspect(eval_set)
    # every log of the folder named one by one: the folder read whole
    with pytest.warns(evalci.EvalciWarning, match=said):
        read_inspect([eval_set / "a.eval", eval_set / "b.eval"])
    read_inspect(eval_set / "a.eval")  # one task's log: no word of the others
    read_inspect(eval_set, task="alpha")  # likewise


@pytest.mark.parametrize("with_manifest", [True, False])
def test_retried_logs_keep_the_final_attempt(tmp_path, reader, with_manifest):
    """eval_retry outside an eval set (no eval-set.json) writes a second log
    with the same task_id: one task, read from its final attempt."""
    if with_manifest:
        manifest(tmp_path, ("alpha", "TA"))
    first = log(
        tmp_path / "z.eval", "alpha", "TA", "CI", started="10:00", status="error"
    )
    final = log(tmp_path / "a.eval", "alpha", "TA", "CICC", started="11:00")
    os.utime(first, ns=(10**18, 10**18))  # mtimes say nothing
    os.utime(final, ns=(10**18, 10**18))
    said = (
        r"task 'alpha' \(m/x, task_id TA\) has 2 attempts .* read the final one, "
        r".*a\.eval \(status 'success'\); superseded .*z\.eval \(status 'error'\)"
    )
    with pytest.warns(evalci.EvalciWarning, match=said):
        df = read_inspect(tmp_path)
    assert df.choice.tolist() == [1.0, 0.0, 1.0, 1.0]
    assert set(df.log_file) == {str(final)}
    assert df.attrs["evalci_superseded"] == [str(first)]
    assert [r["log_file"] for r in df.attrs["evalci_samples"]] == [str(final)]


def test_two_runs_of_one_task_that_are_not_attempts_are_refused(tmp_path, reader):
    log(tmp_path / "a.eval", "alpha", "T1", "CI")
    log(tmp_path / "b.eval", "alpha", "T2", "IC")
    with pytest.raises(
        ValueError,
        match=r"task 'alpha' of m/x is in 2 logs that are not attempts at one run "
        r"\(their eval\.task_id differ: T1 in .*a\.eval, T2 in .*b\.eval\), and "
        r"both hold sample 1 epoch 1; read one of them",
    ):
        read_inspect(tmp_path)
    # runs that split a task's samples between them read together
    log(tmp_path / "b.eval", "alpha", "T2", "")
    log(tmp_path / "c.eval", "beta", "T3", "C")
    assert read_inspect(tmp_path).shape[0] == 3


# --------------------------------------------------------------------------
# the command line: several tasks are never one score
# --------------------------------------------------------------------------


def test_cli_refuses_to_pool_tasks_and_reads_each(eval_set, capsys):
    code, out, err = call("ci", eval_set, "--n-resamples", 200, capsys=capsys)
    assert code == 2 and out == ""
    assert "holds 2 tasks ('alpha', 'beta'); evalci does not pool them" in err
    assert "--task NAME" in err and "--by task" in err
    code, out, err = call("ci", eval_set, "--task", "beta", "--format", "json",
                          "--n-resamples", 200, capsys=capsys)  # fmt: skip
    assert code == 0, err
    assert [r["estimate"] for r in json.loads(out)] == [0.25]
    code, out, err = call("ci", eval_set, "--by", "task", "--format", "json",
                          "--n-resamples", 200, capsys=capsys)  # fmt: skip
    assert code == 0, err
    rows = {r["task"]: r["estimate"] for r in json.loads(out)}
    assert rows == {"alpha": 0.75, "beta": 0.25}
    code, out, err = call("ci", eval_set, "--task", "gamma", capsys=capsys)
    assert code == 2 and "`--task`: none of the 2 logs read is of task 'gamma'" in err


def test_cli_reads_several_files_as_a_folder(eval_set, capsys):
    files = [eval_set / "a.eval", eval_set / "b.eval"]
    args = ("--by", "task", "--format", "json", "--n-resamples", 200)
    code, whole, err = call("ci", eval_set, *args, capsys=capsys)
    assert code == 0, err
    code, several, err = call("ci", *files, *args, capsys=capsys)
    assert code == 0, err
    assert several == whole
    assert f"read {files[0]} {files[1]} (inspect, 8 rows" in err


def test_cli_reads_several_tables(tmp_path, capsys):
    for name, values in (("gpt", [1, 1, 0, 1]), ("claude", [0, 1, 0, 0])):
        pd.DataFrame({"question_id": range(4), "correct": values}).to_csv(
            tmp_path / f"{name}.csv", index=False
        )
    code, out, err = call("ci", tmp_path / "gpt.csv", tmp_path / "claude.csv",
                          "--format", "json", "--n-resamples", 200, capsys=capsys)  # fmt: skip
    assert code == 0, err
    got = {r["system"]: r["estimate"] for r in json.loads(out)}
    assert got == {"gpt": 0.75, "claude": 0.25}  # each file's stem its system
    # the same system's rows in two files: refused, naming both
    pd.DataFrame({"question_id": range(4), "correct": [1] * 4, "model": "m"}).to_csv(
        tmp_path / "a.csv", index=False
    )
    (tmp_path / "b.csv").write_text((tmp_path / "a.csv").read_text())
    code, out, err = call("ci", tmp_path / "a.csv", tmp_path / "b.csv", capsys=capsys)
    assert code == 2
    assert "system 'm', input 0, run 0 is in" in err and "a.csv and" in err
    assert "b.csv; each row must be in one file" in err
    code, out, err = call(
        "ci", tmp_path / "a.csv", eval_set_file(tmp_path), capsys=capsys
    )
    assert code == 2 and "the files are of different kinds" in err
    assert "a.csv (table)" in err and "x.eval (inspect)" in err


def eval_set_file(folder):
    return log(folder / "x.eval", "alpha", "TA", "C")


def test_missing_help_names_every_policy(capsys):
    code, out, _ = call("ci", "--help", capsys=capsys)
    text = " ".join(out.split())
    assert code == 0
    for words in ("raise (the default", "drop (leave the missing runs out",
                  "zero (count each as a failure", "bounds (worst-case bounds",
                  "ci, compare and report take all four, plan and simulate "
                  "raise and drop"):  # fmt: skip
        assert words in text, words
