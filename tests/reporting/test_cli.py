"""The ``evalci`` command, run as users run it: in a subprocess.

Every command runs ``python -m evalci`` with this worktree's ``src`` first on
the path; one test runs the installed console script. The reference for
each number a command prints is the library function it wraps, called here
on the same table with the same seed (the command must add nothing and lose
nothing on the way: reading, detecting columns, formatting).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci._base import progress as _progress
from evalci.reporting import cli, cli_simulate

sys.path.insert(0, str(Path(__file__).parent))
from cli_calls import SRC, call, run  # noqa: E402
from logs import (  # noqa: E402  (the readers' own log writers)
    inspect_sample,
    inspect_spec,
    lm_mc_line,
    lm_results,
    write_eval,
    write_lm,
)

B = "300"  # resamples: enough for the equalities below (they are exact)


def ok_here(*args, capsys) -> subprocess.CompletedProcess:
    """:func:`ok` in this process."""
    code, out, err = call(*args, capsys=capsys)
    assert code == 0, err
    return subprocess.CompletedProcess(args, code, out, err)


def ok(*args, **kw) -> subprocess.CompletedProcess:
    res = run(*args, **kw)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res


# --------------------------------------------------------------------------
# files in every input format, from the bundled example
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example() -> pd.DataFrame:
    """GPQA with other column names, so detection has work to do."""
    return evalci.load_example().rename(
        columns={"input_id": "question_id", "system": "model"}
    )


@pytest.fixture(scope="module")
def files(example, tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("cli")
    out = {"csv": d / "r.csv", "parquet": d / "r.parquet", "jsonl": d / "r.jsonl"}
    example.to_csv(out["csv"], index=False)
    example.to_parquet(out["parquet"])
    example.to_json(out["jsonl"], orient="records", lines=True)
    # the same runs as two Inspect .eval logs (one per model, epochs from 1)
    (d / "logs").mkdir()
    for m, (model, part) in enumerate(example.groupby("model")):
        samples = [
            inspect_sample(r.question_id, int(r.run) + 1, {"choice": float(r.correct)})
            for r in part.itertuples()
        ]
        write_eval(d / "logs" / f"m{m}.eval", inspect_spec(model, "gpqa", 5), samples)
    out["eval"] = d / "logs" / "m0.eval"
    out["logs"] = d / "logs"
    return out


def tidy(example) -> pd.DataFrame:
    """The table every reader returns: input, run, system, the value."""
    return example.rename(columns={"question_id": "input", "model": "system"})


def records(res) -> list[dict]:
    return json.loads(res.stdout)


# --------------------------------------------------------------------------
# version, help, demo
# --------------------------------------------------------------------------


def test_version():
    res = ok("--version")
    assert res.stdout.strip() == f"evalci {evalci.__version__}"


def test_help_shows_an_example(capsys):
    assert "Example" in ok("--help").stdout
    for command in cli.COMMANDS:
        code, out, _ = call(command, "--help", capsys=capsys)
        assert code == 0 and "Example" in out, command


def test_installed_console_script():
    # the venv's bin is not always on PATH: look beside this Python too
    exe = shutil.which("evalci") or shutil.which("evalci", path=str(Path(sys.executable).parent))  # fmt: skip
    if exe is None:
        pytest.skip("no evalci console script on PATH")
    env = {**os.environ, "PYTHONPATH": SRC}  # the entry point, with this code
    res = subprocess.run([exe, "--version"], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("evalci ")


def test_demo_intervals_gap_verdict():
    # no command and the old flags: the demo, as .ci/run calls it
    res = ok("--n-resamples", B, "--method", "percentile")
    df = evalci.load_example()
    kw = dict(n_resamples=int(B), rng=0)
    ref = evalci.cluster_ci(df, "correct", "input_id", by="system", **kw)
    gap = evalci.compare(df, "correct", "input_id", mme=0.02, **kw).to_frame()
    assert repr(ref) in res.stdout  # the intervals, as the result prints them
    g = gap.iloc[0]
    assert f"gap {g.gap:+.3f} [{g.low:+.3f}, {g.high:+.3f}]" in res.stdout
    assert "Verdict" in res.stdout and g.explanation in res.stdout
    assert "Flaky inputs" in res.stdout and "What to try next" in res.stdout


def test_demo_command_is_the_default(capsys):
    _, old, _ = call("--n-resamples", "100", capsys=capsys)
    code, new, _ = call("demo", "--n-resamples", "100", capsys=capsys)
    assert code == 0 and new == old and "95% bca interval" in new


# --------------------------------------------------------------------------
# the commands on every input format, against the library
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl", "eval"])
def test_ci_matches_cluster_ci(files, example, fmt, capsys):
    res = (ok if fmt in ("csv", "eval") else partial(ok_here, capsys=capsys))(
        "ci", files[fmt], "--n-resamples", B, "--format", "json"
    )
    data = tidy(example)
    if fmt == "eval":
        data = data[data.system == sorted(data.system.unique())[0]]
    ref = evalci.cluster_ci(data, "correct", "input", by="system",
                            n_resamples=int(B), rng=0).to_frame()  # fmt: skip
    got = pd.DataFrame(records(res))
    assert list(got.system) == list(ref.system)
    for c in ("estimate", "low", "high", "standard_error", "n_inputs"):
        np.testing.assert_allclose(got[c], ref[c], rtol=1e-12)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl", "logs"])
def test_compare_matches_compare(files, example, fmt, capsys):
    res = (ok if fmt == "logs" else partial(ok_here, capsys=capsys))("compare", files[fmt], "--n-resamples", B, "--mme", "0.02",
             "--format", "json")  # fmt: skip
    ref = evalci.compare(tidy(example), "correct", "input", mme=0.02,
                         n_resamples=int(B), rng=0).to_frame()  # fmt: skip
    got = records(res)[0]
    for c in ("gap", "low", "high", "pvalue"):
        assert got[c] == pytest.approx(ref[c].iloc[0], rel=1e-12)
    assert got["decision"] == ref["decision"].iloc[0]


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl", "logs"])
def test_report_and_plan_on_every_format(files, example, fmt, capsys):
    def ok(*args):  # a subprocess for two formats, this process for the others
        if fmt in ("csv", "logs"):
            return globals()["ok"](*args)
        return ok_here(*args, capsys=capsys)

    rep = ok("report", files[fmt], "--n-resamples", B, "--mme", "0.02")
    ref = evalci.report(tidy(example), "correct", "input", mme=0.02,
                        n_resamples=int(B), rng=0)  # fmt: skip
    # the value column is 'choice' in the Inspect logs: the rest is the same
    want = ref.to_text().replace("'correct'", "'choice'" if fmt == "logs" else "'correct'")  # fmt: skip
    assert rep.stdout.strip() == want
    plan = ok("plan", files[fmt], "--target-width", "0.12", "--format", "json")
    want = evalci.plan_from_data(tidy(example), "correct", "input",
                                          by="system", n_inputs="data",
                                          target_width=0.12)  # fmt: skip
    got = pd.DataFrame(records(plan))
    np.testing.assert_allclose(got.floor_width, want.floor_width, rtol=1e-12)
    assert list(got.k_needed) == list(want.k)


def test_report_formats_are_the_reports(files, example, capsys):
    args = ("report", files["csv"], "--n-resamples", B, "--mme", "0.02")
    ref = evalci.report(tidy(example), "correct", "input", mme=0.02,
                        n_resamples=int(B), rng=0)  # fmt: skip
    html = ok_here(*args, "--format", "html", capsys=capsys).stdout
    assert html.strip() == ref.to_html().strip()
    md = ok_here(*args, "--format", "markdown", capsys=capsys).stdout
    assert md.strip() == ref.to_markdown()
    rows = records(ok_here(*args, "--format", "json", capsys=capsys))
    assert [r["kind"] for r in rows] == list(ref.to_frame().kind)
    assert rows[2]["estimate"] == pytest.approx(ref.to_frame().estimate[2], rel=1e-12)


def test_plan_paired_sample_size(files, example, capsys):
    res = ok_here("plan", files["csv"], "--mme", "0.02", capsys=capsys)
    a, b = sorted(example.model.unique())
    n = evalci.sample_size_from_data(
        tidy(example), "correct", "input", system="system", pair=(a, b), effect=0.02
    )
    assert f"about {n.n_inputs.iloc[0]} shared inputs" in res.stdout
    assert "floor_width" in res.stdout


def test_counts_table_and_pass_at_k(example, tmp_path, capsys):
    counts = (
        example.groupby(["question_id", "model"])["correct"]
        .agg(n_correct="sum", n_runs="size")
        .reset_index()
    )
    path = tmp_path / "counts.csv"
    counts.to_csv(path, index=False)
    res = ok_here("ci", path, "--successes", "n_correct", "--trials", "n_runs",
             "--metric", "pass@2", "--n-resamples", B, "--format", "json", capsys=capsys)  # fmt: skip
    ref = evalci.cluster_ci(tidy(example), "correct", "input", by="system",
                            metric=evalci.metrics.pass_at_k(2),
                            n_resamples=int(B), rng=0).to_frame()  # fmt: skip
    got = pd.DataFrame(records(res))
    np.testing.assert_allclose(got.estimate, ref.estimate, rtol=1e-12)
    assert set(got.metric) == {"pass@2"}


def test_by_and_strata(example, tmp_path, capsys):
    df = example.assign(subject=example.question_id.str[-1].isin(list("ABCDEFG")))
    path = tmp_path / "sub.csv"
    df.to_csv(path, index=False)
    res = ok_here("compare", path, "--by", "subject", "--n-resamples", B, "--format", "json", capsys=capsys)  # fmt: skip
    got = pd.DataFrame(records(res))
    assert list(got.subject) == ["False", "True"]  # metadata columns are strings
    part = tidy(df)[tidy(df).subject]
    ref = evalci.compare(part, "correct", "input", n_resamples=int(B), rng=0)
    assert got.gap.iloc[1] == pytest.approx(ref.to_frame().gap.iloc[0], rel=1e-12)
    res = ok_here("ci", path, "--strata", "subject", "--n-resamples", B,
                  "--format", "json", capsys=capsys)  # fmt: skip
    ref = evalci.cluster_ci(tidy(df).astype({"subject": str}), "correct", "input",
                            by="system", strata="subject", n_resamples=int(B),
                            rng=0).to_frame()  # fmt: skip
    np.testing.assert_allclose(pd.DataFrame(records(res)).low, ref.low, rtol=1e-12)


def test_lm_eval_and_helm_are_detected(tmp_path, capsys):
    rng = np.random.default_rng(5)
    lines = [lm_mc_line(i, list(rng.normal(size=3)), int(i % 3)) for i in range(12)]
    res = lm_results("arc_easy", "EleutherAI/pythia-160m", "pretrained=x")
    f = write_lm(tmp_path / "lm", "arc_easy", lines, res)
    out = ok_here("ci", f, "--n-resamples", B, capsys=capsys)
    assert "(lm-eval, 12 rows" in out.stderr and "detected value 'acc'" in out.stderr
    d = tmp_path / "helm" / "run"
    d.mkdir(parents=True)
    stats = [{"instance_id": f"id{i}", "train_trial_index": t,
              "stats": [{"name": {"name": "exact_match", "split": "test"},
                         "count": 1, "sum": float((i * t) % 2),
                         "mean": float((i * t) % 2)}]}
             for i in range(12) for t in range(2)]  # fmt: skip
    (d / "per_instance_stats.json").write_text(json.dumps(stats))
    out = ok_here(
        "ci", d / "per_instance_stats.json", "--n-resamples", B, capsys=capsys
    )
    assert "(helm, 24 rows" in out.stderr
    assert (
        "(helm, 24 rows"
        in ok_here("ci", tmp_path / "helm", "--n-resamples", B, capsys=capsys).stderr
    )


# --------------------------------------------------------------------------
# formats, detection, output file
# --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["ci", "compare", "report", "plan"])
def test_formats(files, command, capsys):
    def out(*extra):
        code, text, err = call(command, files["csv"], "--n-resamples", B, *extra,
                               capsys=capsys)  # fmt: skip
        assert code == 0, err
        return text

    rows = json.loads(out("--format", "json"))
    assert isinstance(rows, list) and rows and isinstance(rows[0], dict)
    md = out("--format", "markdown")
    assert "|---|" in md and "| openai/gpt-5" in md
    assert "<table" in out("--format", "html")
    table = out()
    assert "openai/gpt-5-nano-2025-08-07" in table and "|" not in table


def test_json_keys_are_stable(files, capsys):
    code, text, _ = call("ci", files["csv"], "--n-resamples", "50", "--format",
                         "json", capsys=capsys)  # fmt: skip
    assert list(json.loads(text)[0]) == [
        "system", "estimate", "low", "high", "standard_error", "n_inputs",
        "n_runs", "confidence_level", "method", "metric",
    ]  # fmt: skip


def test_detection_is_said_on_stderr(files):
    res = ok("ci", files["csv"], "--n-resamples", B)
    for part in ("detected", "input 'question_id'", "system 'model'", "value 'correct'"):  # fmt: skip
        assert part in res.stderr


def test_named_columns_detect_nothing(files, capsys):
    args = ("ci", files["csv"], "--n-resamples", B)
    _, detected, _ = call(*args, capsys=capsys)
    code, out, err = call(*args, "--value", "correct", "--input", "question_id",
                          "--system", "model", "--run", "run", capsys=capsys)  # fmt: skip
    assert code == 0 and "detected" not in err and "read " in err
    assert out == detected


def test_output_file(files, tmp_path, capsys):
    out = tmp_path / "ci.json"
    code, text, err = call("ci", files["csv"], "--n-resamples", B, "--format",
                           "json", "-o", out, capsys=capsys)  # fmt: skip
    assert code == 0 and text == "" and f"wrote {out}" in err
    assert len(json.loads(out.read_text())) == 2


def test_warning_is_one_line(tmp_path):
    # 6 inputs: the library warns that so few clusters give a rough interval
    df = pd.DataFrame({"id": np.repeat(np.arange(6), 2), "correct": [0, 1] * 6})
    path = tmp_path / "few.csv"
    df.to_csv(path, index=False)
    res = ok("ci", path, "--n-resamples", B)
    lines = res.stderr.splitlines()
    assert any(x.startswith("evalci: warning: ") for x in lines), res.stderr
    assert all(x.startswith("evalci: ") for x in lines), res.stderr


# --------------------------------------------------------------------------
# errors: one line, exit 2, no traceback
# --------------------------------------------------------------------------


def _bad_files(tmp_path, example):
    text = example.assign(correct=example.correct.map({1: "yes!", 0: "no"}))
    text.to_csv(tmp_path / "text.csv", index=False)
    example.assign(correct=example.correct * 0.5).to_csv(tmp_path / "half.csv", index=False)  # fmt: skip
    two = example.assign(other=1 - example.correct).rename(columns={"correct": "x"})
    two.to_csv(tmp_path / "two.csv", index=False)
    (tmp_path / "notes.txt").write_text("a,b\n")
    (tmp_path / "broken.eval").write_bytes(b"not a zip")
    (tmp_path / "empty").mkdir()
    one = [inspect_sample(i, e, {"choice": "C"}) for i in range(12) for e in (1, 2)]
    write_eval(tmp_path / "one.eval", inspect_spec("openai/gpt-4o", "gpqa", 2), one)


@pytest.mark.parametrize(
    "args, match",
    [
        (["ci", "missing.csv"], "missing.csv does not exist"),
        (["ci", "two.csv", "--value", "nope"], "`--value`: .* has no column 'nope'"),
        (["ci", "two.csv", "--input", "nope"], "`--input`: there is no column 'nope'"),
        (["ci", "two.csv"], "several 0/1 columns could be the outcome"),
        (["ci", "text.csv", "--value", "correct"], "non-numeric value"),
        (["ci", "half.csv", "--metric", "pass@2"], "must hold only 0/1"),
        (["simulate", "half.csv"], "simulate FILE needs a 0/1 value"),
        (["ci", "notes.txt"], "cannot tell the format"),
        (["ci", "broken.eval"], "is not a zip archive"),
        (["ci", "empty"], "holds no Inspect log"),
        (
            ["ci", "two.csv", "--value", "x", "--metric", "nope"],
            "`--metric` 'nope' is not registered",
        ),  # fmt: skip
        (["compare", "two.csv", "--value", "x", "--mme", "-1"], "`--mme`"),
        (["report", "two.csv", "--by", "model"], "`--by` is not a report option"),
        (["simulate"], "simulate needs FILE"),
        (
            ["ci", "one.eval", "--input", "id"],
            "`--input`: the input column of the inspect log is fixed",
        ),  # fmt: skip
        (["compare", "one.eval"], "a comparison needs at least 2"),
        (
            ["plan", "two.csv", "--value", "x", "--target-width", "0"],
            "`--target-width`",
        ),  # fmt: skip
    ],
)
def test_errors_are_one_line(tmp_path, example, args, match, capsys, monkeypatch):
    import re

    _bad_files(tmp_path, example)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALCI_DEBUG", raising=False)
    code, out, err = call(*args, "--n-resamples", "50", capsys=capsys)
    assert code == 2, err
    assert out == "" and "Traceback" not in err
    lines = [x for x in err.splitlines() if not x.startswith("evalci: read ")]
    assert len(lines) == 1 and lines[0].startswith("evalci: error: "), err
    assert re.search(match, lines[0]), lines[0]


def test_error_in_a_subprocess(tmp_path, example):
    _bad_files(tmp_path, example)
    for args in (["ci", "two.csv", "--value", "nope"], ["ci", "broken.eval"]):
        res = run(*args, cwd=tmp_path)
        assert res.returncode == 2 and res.stdout == ""
        assert res.stderr.count("\n") <= 2 and "Traceback" not in res.stderr
        assert res.stderr.splitlines()[-1].startswith("evalci: error: ")
    res = run("ci", "x.csv", "--format", "pdf")  # argparse's own errors
    assert res.returncode == 2 and "invalid choice" in res.stderr


# --------------------------------------------------------------------------
# simulate FILE and progress
# --------------------------------------------------------------------------


def test_simulate_file_cluster_covers_iid_does_not(files):
    # 40 trials: cluster coverage ~0.95, iid ~0.62 at rho 0.6, k = 5 (seed
    # 000's pattern). A false failure needs the two counts of 40 to cross:
    # P(Binomial(40, 0.95) <= 30) + P(Binomial(40, 0.62) >= 31) < 1e-3.
    res = ok("simulate", files["csv"], "--trials", "40", "--n-resamples", "200",
             "--format", "json")  # fmt: skip
    got = pd.DataFrame(records(res))
    assert set(got.strategy) == {"cluster", "iid"}
    cov = got.groupby("strategy").coverage.mean()
    assert cov["cluster"] > 0.75 > cov["iid"]
    assert "\r" not in res.stderr  # stderr is a pipe: no progress


def test_from_data_model_truth_and_draws(example):
    model = cli_simulate._FromData(tidy(example), "correct", "input", "system")
    truth = model.truth("accuracy")
    ref = tidy(example).groupby("system").correct.mean()
    for s, v in truth.items():
        assert v == pytest.approx(ref[s], rel=1e-12)  # k = 5 everywhere
    draw = model.sample(4000, 3, np.random.default_rng(0))
    assert len(draw) == 2 * 4000 * 3
    # 12,000 Bernoulli draws per system: SE <= 0.005; 5 SE never fails in practice
    means = draw.groupby("system").correct.mean()
    for s, v in truth.items():
        assert abs(means[s] - v) < 0.025


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_tty_only(monkeypatch):
    monkeypatch.delenv(_progress.ENV, raising=False)
    out = _Tty()
    with _progress.Progress(4, label="trials", stream=out) as bar:
        bar.update(2)
        bar.update(2)
    assert "\rtrials [" in out.getvalue() and "100.0%" in out.getvalue()
    assert out.getvalue().endswith("\n")
    pipe = io.StringIO()
    with _progress.Progress(4, label="trials", stream=pipe) as bar:
        bar.update(4)
    assert pipe.getvalue() == ""
    monkeypatch.setenv(_progress.ENV, "1")
    out = _Tty()
    with _progress.Progress(4, True, "trials", stream=out) as bar:
        bar.update(4)
    assert out.getvalue() == ""


def test_working_line_is_erased(monkeypatch):
    import time

    monkeypatch.delenv(_progress.ENV, raising=False)
    out = _Tty()
    with _progress.working("resampling", stream=out, delay=0.01):
        # wait for the line to be drawn (the event), not a fixed time
        deadline = time.monotonic() + 60
        while "resampling" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    text = out.getvalue()
    assert "\rresampling ... " in text
    assert text.endswith("\r")  # the line is blanked and the cursor back at 0
    quick = _Tty()
    with _progress.working("resampling", stream=quick, delay=5):
        pass
    assert quick.getvalue() == ""
