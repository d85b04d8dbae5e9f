"""``evalci ci FILE --missing X`` end to end on an Inspect log with errored samples.

Issue 22. A ``.eval`` log of 12 inputs x 2 epochs where 4 samples errored
(one input in both epochs) runs through ``python -m evalci`` (a subprocess,
as users run it) under each policy; the numbers equal
``cluster_ci(read_inspect(FILE), ..., missing=X)``. ``--missing raise`` (and
no option) refuse in one line naming ``--missing``; ``compare``/``report``
take ``--missing drop`` as their ``dropna=True`` and refuse the others.
"""

from __future__ import annotations

import json
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.io.inspect import read_inspect

sys.path.insert(0, str(Path(__file__).parent))
from cli_calls import call, run  # noqa: E402

B = "300"
ERRORED = {("q2", 1), ("q5", 1), ("q5", 2), ("q9", 2)}


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    """The log as docs/missing.md builds it: a header and one member per sample."""
    rng = np.random.default_rng(22)
    spec = {
        "created": "2025-03-04T10:11:12+00:00",
        "task": "gpqa",
        "dataset": {"name": "gpqa"},
        "model": "openai/gpt-4o",
        "config": {},
    }
    path = tmp_path_factory.mktemp("logs") / "2025-03-04T10-11-12+00-00_gpqa_x1.eval"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("header.json", json.dumps({"version": 2, "status": "success",
                                               "eval": spec}))  # fmt: skip
        for epoch in (1, 2):
            for i in range(12):
                s = {
                    "id": f"q{i}",
                    "epoch": epoch,
                    "input": "...",
                    "target": "A",
                    "scores": {"choice": {"value": "CI"[rng.random() < 0.3]}},
                }
                if (f"q{i}", epoch) in ERRORED:
                    s |= {
                        "scores": {},
                        "error": {
                            "message": "RuntimeError: boom",
                            "traceback": "",
                            "traceback_ansi": "",
                        },
                    }
                z.writestr(f"samples/q{i}_epoch_{epoch}.json", json.dumps(s))
    return path


def _one_error(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if not x.startswith("evalci: read ")]
    assert len(lines) == 1 and lines[0].startswith("evalci: error: "), proc.stderr
    return lines[0]


def test_the_log_has_errored_samples(log):
    df = read_inspect(log)
    assert len(df) == 24 and int(df["choice"].isna().sum()) == len(ERRORED)
    assert df.loc[df["choice"].isna(), "error"].notna().all()


@pytest.mark.parametrize("missing", ["drop", "zero", "bounds"])
def test_each_policy_matches_the_api(log, missing):
    proc = run("ci", log, "--missing", missing, "--n-resamples", B, "--format", "json",
               "--no-progress")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    got = pd.DataFrame(json.loads(proc.stdout))
    df = read_inspect(log)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = evalci.cluster_ci(df, "choice", cluster="input", by="system",
                                missing=missing, n_resamples=int(B),
                                rng=0).to_frame()  # fmt: skip
    assert len(got) == len(ref) == 1
    for col in ("estimate", "low", "high", "standard_error"):
        np.testing.assert_allclose(got[col].astype(float), ref[col].astype(float),
                                   rtol=1e-12, err_msg=col)  # fmt: skip
    if missing == "drop":  # the warning, in the command's words
        assert "evalci: warning: --missing drop left out 4 of 24 runs" in proc.stderr
    if missing == "bounds":
        assert got.low[0] <= got.high[0]


def test_dropna_is_missing_drop(log, capsys):
    a = call("ci", log, "--missing", "drop", "--n-resamples", B, "--format", "json",
             capsys=capsys)  # fmt: skip
    b = call("ci", log, "--dropna", "--n-resamples", B, "--format", "json",
             capsys=capsys)  # fmt: skip
    assert a[0] == b[0] == 0 and a[1] == b[1]
    c = call("ci", log, "--dropna", "--missing", "drop", "--n-resamples", B,
             "--format", "json", capsys=capsys)  # fmt: skip
    assert c[0] == 0 and c[1] == a[1]


@pytest.mark.parametrize("extra", [["--missing", "raise"], []])
def test_raise_refuses_naming_the_option(log, extra):
    line = _one_error(run("ci", log, *extra, "--n-resamples", B))
    assert "`--missing`" in line and "4 missing values" in line, line
    assert "4 errored" in line and "--missing drop is the old --dropna" in line, line
    assert "missing=" not in line and "dropna=True" not in line, line


def test_dropna_and_another_policy_disagree(log):
    line = _one_error(run("ci", log, "--dropna", "--missing", "zero"))
    assert "--dropna is the old name of --missing drop" in line, line
    assert "--missing zero" in line, line


def test_an_unknown_policy_is_refused(log, capsys):
    code, out, err = call("ci", log, "--missing", "ignore", capsys=capsys)
    assert code == 2 and "--missing" in err and "invalid choice" in err, err


@pytest.mark.parametrize("missing", ["zero", "bounds"])
def test_plan_takes_drop_only(tmp_path, missing, capsys):
    f = _two_systems_with_holes(tmp_path)
    code, out, err = call("plan", f, "--missing", missing, capsys=capsys)
    assert code == 2 and out == "", err
    lines = [x for x in err.splitlines() if not x.startswith("evalci: read ")]
    assert len(lines) == 1, err
    assert f"--missing {missing} is not supported for plan" in lines[0]


def _two_systems_with_holes(tmp_path):
    df = evalci.load_example()
    df["correct"] = df["correct"].astype(float)
    df.loc[[3, 50, 700], "correct"] = np.nan
    f = tmp_path / "na.csv"
    df.to_csv(f, index=False)
    return f


@pytest.mark.parametrize("missing", ["zero", "bounds"])
def test_compare_and_report_take_every_policy(tmp_path, missing, capsys):
    f = _two_systems_with_holes(tmp_path)
    df = pd.read_csv(f)
    code, out, err = call("compare", f, "--missing", missing, "--n-resamples", B,
                          "--format", "json", capsys=capsys)  # fmt: skip
    assert code == 0, err
    ref = evalci.compare(df, "correct", "input_id", missing=missing,
                         n_resamples=int(B), rng=0).to_frame()  # fmt: skip
    got = json.loads(out)[0]
    for col in ("gap", "low", "high"):
        assert got[col] == pytest.approx(ref[col][0], rel=1e-12), col
    if missing == "bounds":
        assert got["gap_bound_low"] == pytest.approx(ref.gap_bound_low[0], rel=1e-12)
    code, out, err = call("report", f, "--missing", missing, "--n-resamples", B,
                          capsys=capsys)  # fmt: skip
    assert code == 0, err
    assert "missing samples: " in out and f"(missing='{missing}')" in out, out


def test_compare_takes_missing_drop_as_dropna(tmp_path, capsys):
    df = evalci.load_example()
    df["correct"] = df["correct"].astype(float)
    df.loc[[3, 50, 700], "correct"] = np.nan
    f = tmp_path / "na.csv"
    df.to_csv(f, index=False)
    code, out, err = call("compare", f, "--missing", "drop", "--n-resamples", B,
                          "--format", "json", capsys=capsys)  # fmt: skip
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = evalci.compare(df, "correct", "input_id", dropna=True,
                             n_resamples=int(B), rng=0).to_frame()  # fmt: skip
    assert json.loads(out)[0]["gap"] == pytest.approx(ref.gap[0], rel=1e-12)
    assert json.loads(out)[0]["low"] == pytest.approx(ref.low[0], rel=1e-12)
