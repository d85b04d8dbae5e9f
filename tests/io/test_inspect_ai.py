"""Agreement with inspect_ai itself, where it is installed (the optional
extra ``inspect``): its value mapping, its reader on the same logs, its
errors, and a log it writes itself (mockllm). One module, so a machine
without inspect_ai reports one skip, naming the package.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

inspect_ai = pytest.importorskip(
    "inspect_ai", reason="inspect_ai is not installed (the optional extra 'inspect')"
)

from test_readers import two_logs  # noqa: E402, F401 - a fixture

import evalci  # noqa: E402
from evalci.io import inspect as inspect_reader  # noqa: E402
from evalci.io.inspect_rows import _inspect_float  # noqa: E402
from evalci.io.readers import read_inspect  # noqa: E402


def test_value_mapping_is_inspects():
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    for v in ["C", "I", "P", "N", True, False, 1, 0.25, "yes", "TRUE", "No", "0.75"]:
        assert _inspect_float(v, "x") == to_float(v), v


def test_inspect_plain_equals_inspect_ai(two_logs, monkeypatch):  # noqa: F811
    folder, _ = two_logs
    native = read_inspect(folder)
    monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: None)
    pd.testing.assert_frame_equal(read_inspect(folder), native)


def test_inspect_ai_errors_name_the_file(tmp_path):
    (tmp_path / "cut.eval").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ValueError, match=r"cut\.eval could not be read as an Inspect"):
        read_inspect(tmp_path / "cut.eval")


def _inspect_written_log(tmp_path) -> Path:
    """A log inspect_ai writes itself: mockllm, 12 samples x 3 epochs (the
    outputs carry their usage, so no tokenizer is fetched)."""
    ia = inspect_ai
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes

    rng = np.random.default_rng(5)
    outs = []
    for _ in range(72):
        o = ModelOutput.from_content(
            "mockllm/model", "yes" if rng.random() < 0.6 else "no"
        )
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        outs.append(o)
    model = get_model("mockllm/model", custom_outputs=outs)
    task = ia.Task(
        dataset=[Sample(id=i, input=f"q{i}", target="yes") for i in range(12)],
        scorer=includes(),
    )
    (log,) = ia.eval(task, model=model, epochs=3, log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    return Path(log.location)


def test_matches_inspect_ai_on_its_own_log(tmp_path, monkeypatch):
    f = _inspect_written_log(tmp_path)
    import inspect_ai.log

    head = inspect_ai.log.read_eval_log(str(f), header_only=True)
    metrics = head.results.scores[0].metrics
    plain = read_inspect(f)
    r = evalci.analytic_ci(plain, "includes", cluster="input")
    assert r.estimate == pytest.approx(metrics["accuracy"].value, abs=1e-12)
    assert r.standard_error == pytest.approx(metrics["stderr"].value, abs=1e-12)
    monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: inspect_ai)
    for kw in ({}, {"samples": True}):
        pd.testing.assert_frame_equal(read_inspect(f, **kw), plain)


def test_an_eval_set_of_two_tasks_written_by_inspect_ai(tmp_path):
    # inspect_ai's own eval_set, two tasks whose sample ids are both 0..5:
    # read as two tasks (before: "(system, input, run) occurs more than
    # once"), each matching the accuracy inspect_ai reports in its header
    ia = inspect_ai
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes

    outs = []
    for i in range(24):
        o = ModelOutput.from_content("mockllm/model", "yes" if i % 3 else "no")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        outs.append(o)
    model = get_model("mockllm/model", custom_outputs=outs)
    tasks = [
        ia.Task(
            dataset=[Sample(id=i, input=f"q{i}", target="yes") for i in range(6)],
            scorer=includes(),
            name=name,
        )
        for name in ("first", "second")
    ]
    ok, logs = ia.eval_set(
        tasks, log_dir=str(tmp_path), model=model, epochs=2, display="none"
    )
    assert ok and (tmp_path / "eval-set.json").is_file()
    df = read_inspect(tmp_path)
    assert sorted(df.task.unique()) == ["first", "second"] and len(df) == 24
    for log in logs:
        own = log.results.scores[0].metrics["accuracy"].value
        part = df[df.task == log.eval.task]
        assert part.includes.mean() == pytest.approx(own, abs=1e-12)
    one = read_inspect(tmp_path, task="second")
    assert set(one.task) == {"second"} and len(one) == 12


def test_inspect_frames_equal_read_inspect(tmp_path):
    """samples_df + evals_df of a log inspect_ai wrote give read_inspect's numbers."""
    from inspect_ai.analysis import evals_df, samples_df

    log = _inspect_written_log(tmp_path)
    samples, evals = samples_df(log), evals_df(log)
    got = evalci.io.from_inspect_frames(samples, evals)
    want = read_inspect(log)
    scorer = [c for c in got.columns if c not in ("input", "run", "system", "task",
                                                   "error", "limit")][0]
    key = ["input", "run"]
    a = got.assign(input=got.input.astype(str)).sort_values(key).reset_index(drop=True)
    b = want.assign(input=want.input.astype(str)).sort_values(key).reset_index(drop=True)
    np.testing.assert_array_equal(a[scorer].to_numpy(), b[scorer].to_numpy())
    assert (a.system == b.system).all() and (a.task == b.task).all()
    r1 = evalci.cluster_ci(a, scorer, "input", n_resamples=500, rng=0)
    r2 = evalci.cluster_ci(b, scorer, "input", n_resamples=500, rng=0)
    assert (r1.estimate, r1.low, r1.high) == (r2.estimate, r2.low, r2.high)
