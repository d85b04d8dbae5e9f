"""Readers of eval-framework logs, on small files in the real formats.

Every file is written here, field by field as the framework writes it (the
source each structure is copied from is named at its writer). The expected
tables are built from the arrays the files were written from, not by the
reader, so a reader that drops, reorders or mis-maps a value fails.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci import readers
from evalci.readers import read_inspect

LETTER = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def digest(folder: Path) -> dict:
    """Bytes and mtimes of every file below folder (to check nothing moved)."""
    return {
        p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --------------------------------------------------------------------------
# Inspect AI: inspect_ai 0.3.x, log/_log.py (EvalLog, EvalSpec, EvalSample),
# scorer/_metric.py (Score), log/_recorders/eval.py (the .eval zip layout)
# --------------------------------------------------------------------------


def inspect_spec(model: str, task: str, epochs: int) -> dict:
    return {
        "eval_id": "hG3bQ9uVw2",
        "run_id": "Zr8yL4kq1",
        "created": "2025-03-04T10:11:12+00:00",
        "task": task,
        "task_id": "T3sK1d",
        "task_version": 0,
        "task_file": "gpqa.py",
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "dataset": {
            "name": "gpqa_diamond",
            "location": "gpqa_diamond.csv",
            "samples": 5,
            "sample_ids": [0, 1, 2, 3, 4],
            "shuffled": False,
        },
        "model": model,
        "model_generate_config": {"temperature": 0.7},
        "model_args": {},
        "config": {"epochs": epochs, "epochs_reducer": ["mean"]},
        "packages": {"inspect_ai": "0.3.140"},
        "scorers": [{"name": "choice", "options": {}, "metrics": [], "metadata": {}}],
    }


def inspect_header(spec: dict, n: int, status: str = "success") -> dict:
    """EvalLog without samples: what header.json holds."""
    return {
        "version": 2,
        "status": status,
        "eval": spec,
        "plan": {
            "name": "plan",
            "steps": [{"solver": "multiple_choice", "params": {}}],
            "config": {},
        },
        "results": {
            "total_samples": n,
            "completed_samples": n,
            "scores": [
                {
                    "name": "choice",
                    "scorer": "choice",
                    "reducer": "mean",
                    "params": {},
                    "metrics": {
                        "accuracy": {"name": "accuracy", "value": 0.6, "params": {}}
                    },
                }
            ],
        },
        "stats": {
            "started_at": "2025-03-04T10:11:12+00:00",
            "completed_at": "2025-03-04T10:15:00+00:00",
            "model_usage": {},
        },
    }


def inspect_sample(sid, epoch: int, scores: dict | None, target="B") -> dict:
    """One EvalSample as the recorder writes it (samples/<id>_epoch_<n>.json)."""
    return {
        "id": sid,
        "epoch": epoch,
        "input": "Which of these is a noble gas? A) N B) Ar C) O D) H",
        "choices": ["N", "Ar", "O", "H"],
        "target": target,
        "messages": [
            {
                "id": "m1",
                "content": "Which of these is a noble gas?",
                "source": "input",
                "role": "user",
            },
            {
                "id": "m2",
                "content": "ANSWER: B",
                "source": "generate",
                "role": "assistant",
                "model": "gpt-4o",
            },
        ],
        "output": {
            "model": "gpt-4o",
            "choices": [
                {
                    "message": {
                        "id": "m2",
                        "content": "ANSWER: B",
                        "role": "assistant",
                    },
                    "stop_reason": "stop",
                }
            ],
            "usage": {"input_tokens": 40, "output_tokens": 3, "total_tokens": 43},
            "time": 0.8,
        },
        "scores": None
        if scores is None
        else {
            name: {
                "value": v,
                "answer": "B",
                "explanation": "ANSWER: B",
                "history": [],
            }
            for name, v in scores.items()
        },
        "metadata": {},
        "store": {},
        "events": [],
        "model_usage": {},
        "total_time": 1.2,
        "working_time": 1.1,
        "uuid": f"u-{sid}-{epoch}",
        "error": None if scores is not None else {"message": "boom", "traceback": ""},
        "attachments": {},
    }


def summary(s: dict) -> dict:
    return {k: s[k] for k in ("id", "epoch", "input", "target", "scores", "uuid")}


def write_eval(path: Path, spec: dict, samples: list[dict], header: bool = True):
    """A .eval zip with the members eval.py writes, in its order."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        start = {"version": 2, "eval": spec, "plan": inspect_header(spec, 0)["plan"]}
        z.writestr("_journal/start.json", json.dumps(start))
        for s in samples:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        z.writestr(
            "_journal/summaries/1.json", json.dumps([summary(s) for s in samples])
        )
        if header:
            z.writestr("summaries.json", json.dumps([summary(s) for s in samples]))
            reductions = [
                {
                    "scorer": "choice",
                    "reducer": "mean",
                    "samples": [{"value": 0.5, "sample_id": 0}],
                }
            ]
            z.writestr("reductions.json", json.dumps(reductions))
            z.writestr("header.json", json.dumps(inspect_header(spec, len(samples))))


def write_inspect_json(path: Path, spec: dict, samples: list[dict]):
    """The .json format: the whole EvalLog, samples included."""
    log = inspect_header(spec, len(samples)) | {"samples": samples}
    path.write_text(json.dumps(log, indent=2))


def letters(seed: int, n: int, k: int) -> np.ndarray:
    return np.random.default_rng(seed).choice(list("CIPN"), size=(n, k))


@pytest.fixture
def two_logs(tmp_path):
    """gpt-4o as .eval, claude as .json; 12 inputs x 3 epochs each."""
    grids = {
        "openai/gpt-4o": letters(1, 12, 3),
        "anthropic/claude-3-5": letters(2, 12, 3),
    }
    for (model, grid), ext in zip(grids.items(), (".eval", ".json"), strict=True):
        samples = [
            inspect_sample(i, e + 1, {"choice": grid[i, e]})
            for e in range(3)
            for i in range(12)
        ]
        spec = inspect_spec(model, "gpqa", 3)
        f = tmp_path / f"2025-03-04_gpqa_{model.split('/')[0]}{ext}"
        (write_eval if ext == ".eval" else write_inspect_json)(f, spec, samples)
    return tmp_path, grids


@pytest.fixture
def plain(monkeypatch):
    """Force the json + zipfile reader even where inspect_ai is installed."""
    monkeypatch.setattr(readers, "_inspect_ai", lambda: None)


def expected_inspect(grids: dict) -> pd.DataFrame:
    rows = [
        (i, e + 1, model, LETTER[str(g[i, e])])
        for model, g in grids.items()
        for i in range(g.shape[0])
        for e in range(g.shape[1])
    ]
    out = pd.DataFrame(rows, columns=["input", "run", "system", "choice"])
    return out.sort_values(["system", "input", "run"], ignore_index=True)


def test_inspect_two_formats_two_systems(two_logs, plain):
    folder, grids = two_logs
    df = read_inspect(folder)
    assert df.shape == (2 * 12 * 3, 7)
    assert list(df.columns) == [
        "input",
        "run",
        "system",
        "choice",
        "task",
        "target",
        "log_file",
    ]
    assert df["input"].dtype == "int64" and df["run"].dtype == "int64"
    assert df["choice"].dtype == "float64"
    pd.testing.assert_frame_equal(df.iloc[:, :4], expected_inspect(grids))
    assert set(df.task) == {"gpqa"} and set(df.target) == {"B"}
    assert sorted(df.run.unique()) == [1, 2, 3]  # epochs, from 1


def test_inspect_paths_list_and_glob(two_logs, plain):
    folder, grids = two_logs
    by_list = read_inspect(sorted(folder.iterdir()))
    by_glob = read_inspect(str(folder / "*gpqa*"))
    pd.testing.assert_frame_equal(by_list, by_glob)
    one = read_inspect(next(folder.glob("*.eval")))
    assert set(one.system) == {"openai/gpt-4o"} and len(one) == 36


def test_inspect_files_untouched(two_logs, plain):
    folder, _ = two_logs
    before = digest(folder)
    read_inspect(folder)
    assert digest(folder) == before


@pytest.mark.parametrize(
    "value, expected",
    [
        ("C", 1.0),
        ("I", 0.0),
        ("P", 0.5),
        ("N", 0.0),
        (True, 1.0),
        (False, 0.0),
        (1, 1.0),
        (0.25, 0.25),
        ("yes", 1.0),
        ("TRUE", 1.0),
        ("No", 0.0),
        ("false", 0.0),
        ("0.75", 0.75),
        ("-2", -2.0),
    ],
)
def test_inspect_value_mapping(tmp_path, plain, value, expected):
    # expected values: inspect_ai scorer/_metric.py value_to_float (read, and
    # checked against the function itself in test_value_mapping_is_inspects)
    samples = [inspect_sample(i, 1, {"s": value if i == 0 else "C"}) for i in range(2)]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples)
    assert read_inspect(tmp_path / "a.eval")["s"].tolist() == [expected, 1.0]


@pytest.mark.parametrize("value", ["correct", "incorrect", "c", "nan", [1, 0]])
def test_inspect_unmappable_value_raises(tmp_path, plain, value):
    # Inspect logs a warning and counts these 0; the reader refuses them.
    samples = [inspect_sample(7, 2, {"s": value})]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples)
    with pytest.raises(ValueError, match=r"a\.eval, sample 7 epoch 2, scorer 's'"):
        read_inspect(tmp_path / "a.eval")


def test_value_mapping_is_inspects():
    pytest.importorskip("inspect_ai")
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    for v in ["C", "I", "P", "N", True, False, 1, 0.25, "yes", "TRUE", "No", "0.75"]:
        assert readers._inspect_float(v, "x") == to_float(v), v


def test_inspect_dict_score_and_scorer(tmp_path, plain):
    samples = [
        inspect_sample(
            f"q{i}",
            1,
            {
                "match": {"acc": "C" if i else "I", "f1": 0.5 * i, "extra": None},
                "judge": "P",
            },
        )
        for i in range(3)
    ]
    write_inspect_json(tmp_path / "a.json", inspect_spec("m", "t", 1), samples)
    df = read_inspect(tmp_path / "a.json")
    assert pd.api.types.is_string_dtype(df["input"])  # string ids stay strings
    assert df["match_acc"].tolist() == [0.0, 1.0, 1.0]
    assert df["match_f1"].tolist() == [0.0, 0.5, 1.0]
    assert df["match_extra"].isna().all()
    assert df["judge"].tolist() == [0.5] * 3
    only = read_inspect(tmp_path / "a.json", scorer="judge")
    assert [c for c in only.columns if c not in ("task", "target", "log_file")] == [
        "input",
        "run",
        "system",
        "judge",
    ]
    with pytest.raises(ValueError, match="`scorer`: no sample .* 'nope'"):
        read_inspect(tmp_path / "a.json", scorer="nope")


def test_inspect_errored_sample_is_nan(tmp_path, plain):
    samples = [inspect_sample(0, 1, {"s": "C"}), inspect_sample(1, 1, None)]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples)
    assert read_inspect(tmp_path / "a.eval")["s"].tolist()[0] == 1.0
    assert np.isnan(read_inspect(tmp_path / "a.eval")["s"].tolist()[1])


def test_inspect_in_progress_eval_reads_journal(tmp_path, plain):
    samples = [inspect_sample(i, 1, {"s": "C"}) for i in range(3)]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples, header=False)
    df = read_inspect(tmp_path / "a.eval")
    assert df.shape[0] == 3 and set(df.system) == {"m"}


def test_inspect_errors(tmp_path, plain):
    samples = [inspect_sample(0, 1, {"s": "C"})]
    write_eval(tmp_path / "good.eval", inspect_spec("m", "t", 1), samples)
    raw = (tmp_path / "good.eval").read_bytes()
    (tmp_path / "cut.eval").write_bytes(raw[: len(raw) // 3])
    with pytest.raises(ValueError, match=r"cut\.eval is not a zip archive"):
        read_inspect(tmp_path / "cut.eval")
    (tmp_path / "bad.json").write_text('{"version": 2, "eval": {')
    with pytest.raises(ValueError, match=r"bad\.json is not valid JSON"):
        read_inspect(tmp_path / "bad.json")
    spec = inspect_spec("m", "t", 1)
    del spec["model"]
    write_inspect_json(tmp_path / "nomodel.json", spec, samples)
    with pytest.raises(ValueError, match=r"nomodel\.json: the required field `model`"):
        read_inspect(tmp_path / "nomodel.json")
    bad = inspect_sample(0, 1, {"s": "C"})
    del bad["epoch"]
    write_eval(tmp_path / "noepoch.eval", inspect_spec("m", "t", 1), [])
    with zipfile.ZipFile(tmp_path / "noepoch.eval", "a") as z:
        z.writestr("samples/0_epoch_1.json", json.dumps(bad))
    with pytest.raises(ValueError, match=r"noepoch\.eval: the required field `epoch`"):
        read_inspect(tmp_path / "noepoch.eval")
    with zipfile.ZipFile(tmp_path / "empty.eval", "w") as z:
        z.writestr("other.json", "{}")
    with pytest.raises(ValueError, match="neither header.json nor _journal"):
        read_inspect(tmp_path / "empty.eval")
    with pytest.raises(ValueError, match="does not exist"):
        read_inspect(tmp_path / "missing.eval")
    (tmp_path / "log.txt").write_text("x")
    with pytest.raises(ValueError, match=r"ends in \.eval or \.json"):
        read_inspect(tmp_path / "log.txt")
    with pytest.raises(ValueError, match="no file matches"):
        read_inspect(str(tmp_path / "nothing*.eval"))


def test_inspect_duplicate_rows_refused(tmp_path, plain):
    samples = [inspect_sample(0, 1, {"s": "C"})]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples)
    write_eval(tmp_path / "b.eval", inspect_spec("m", "t", 1), samples)
    with pytest.raises(ValueError, match=r"occurs more than once \(in .*a\.eval"):
        read_inspect(tmp_path)


def test_inspect_feeds_cluster_ci(two_logs, plain):
    folder, grids = two_logs
    got = evalci.cluster_ci(
        read_inspect(folder),
        "choice",
        cluster="input",
        by="system",
        rng=0,
        n_resamples=500,
    ).to_frame()
    # the same data typed in by hand, rows shuffled: the reader's table must
    # give the very same intervals as the caller's own table
    ref = expected_inspect(grids).sample(frac=1, random_state=3)
    want = evalci.cluster_ci(
        ref, "choice", cluster="input", by="system", rng=0, n_resamples=500
    ).to_frame()
    pd.testing.assert_frame_equal(got, want)


def test_inspect_plain_equals_inspect_ai(two_logs, monkeypatch):
    pytest.importorskip("inspect_ai")
    folder, _ = two_logs
    native = read_inspect(folder)
    monkeypatch.setattr(readers, "_inspect_ai", lambda: None)
    pd.testing.assert_frame_equal(read_inspect(folder), native)
