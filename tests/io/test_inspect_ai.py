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


@pytest.fixture(autouse=True)
def offline_tokens(monkeypatch):
    """Count tokens without tiktoken's o200k_base, which inspect_ai fetches
    from the network on first use (offline, every sample would error with a
    ConnectionError): mockllm counts an output's tokens with the model's
    ``count_text_tokens``, which reads this module-level function."""
    import inspect_ai.model._model as model_module

    monkeypatch.setattr(
        model_module, "count_text_tokens", lambda text: max(1, len(text.split()))
    )


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


# -- evalci inside the run: evalci.inspect -----------------------------------


def test_mockllm_runs_offline_without_usage(tmp_path):
    # mockllm's default output has no usage, so its tokens are counted
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes

    task = inspect_ai.Task(
        dataset=[Sample(id=i, input=f"q{i}", target="Default") for i in range(3)],
        scorer=includes(),
    )
    (log,) = inspect_ai.eval(
        task, model="mockllm/model", log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def _coin_task(p, seed, n, stopping=None, metrics=None, name="coin"):
    """n samples whose answer is right with probability p, drawn from a
    generator seeded by (seed, sample, epoch): the truth is p, whatever the
    order the samples run in. The solver sets mockllm's output itself."""
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import includes
    from inspect_ai.solver import solver

    @solver
    def coin(p: float, seed: int):
        async def solve(state, generate):
            u = np.random.default_rng([seed, int(state.sample_id), state.epoch])
            answer = "yes" if u.random() < p else "no"
            state.output = ModelOutput.from_content("mockllm/model", answer)
            state.output.usage = ModelUsage(input_tokens=1, output_tokens=1)
            return state

        return solve

    return inspect_ai.Task(
        dataset=[Sample(id=i, input=f"q{i}", target="yes") for i in range(n)],
        solver=coin(p, seed),
        scorer=includes(),
        metrics=metrics,
        early_stopping=stopping,
        name=name,
    )


def test_the_metric_is_read_inspect_and_analytic_ci(tmp_path):
    from inspect_ai.scorer import accuracy, stderr

    from evalci.inspect import SequentialStopping, evalci_interval

    stop = SequentialStopping(threshold=0.5)
    task = _coin_task(0.8, 1, 60, stop, [accuracy(), stderr(), evalci_interval(0.9)])
    (log,) = inspect_ai.eval(
        task, model="mockllm/model", epochs=3, log_dir=str(tmp_path),
        display="none", max_samples=1,
    )  # fmt: skip
    assert log.status == "success", log.error
    m = log.results.scores[0].metrics
    df = read_inspect(log.location)
    # the analytic interval: clt, clustered on the sample, weight="input"
    # (the mean of per-sample means, as Inspect's mean reducer gives them)
    with pytest.warns(evalci.MissingDataWarning, match="left out 27 of 180"):
        r = evalci.analytic_ci(
            df, "includes", cluster="input", missing="drop", confidence_level=0.9
        )
    assert m["estimate"].group == "evalci_interval"
    assert m["estimate"].value == pytest.approx(r.estimate, abs=1e-12)
    assert m["low"].value == pytest.approx(r.low, abs=1e-12)
    assert m["high"].value == pytest.approx(r.high, abs=1e-12)
    assert m["estimate"].value == pytest.approx(m["accuracy"].value, abs=1e-12)
    assert r.standard_error == pytest.approx(m["stderr"].value, abs=1e-12)
    # the samples the manager stopped are read as stopped early, with why
    summary = log.results.early_stopping
    assert summary.manager == "evalci.SequentialStopping"
    assert summary.metadata["decision"] == "above"
    stopped = df[df.stopped_early.notna()]
    assert len(stopped) == len(summary.early_stops) == summary.metadata["stopped"] > 0
    assert set(stopped.stopped_early) == {stop.reason}
    assert stopped.includes.isna().all()
    (record,) = df.attrs["evalci_samples"]
    assert record["stopped_early"] == len(stopped)
    assert record["scored"] + record["stopped_early"] == record["expected"] == 180


def _study(p, trials, n, alpha, tmp_path):
    from evalci.inspect import SequentialStopping

    tasks = [
        _coin_task(
            p, k, n, SequentialStopping(threshold=0.5, alpha=alpha), name=f"t{k}"
        )
        for k in range(trials)
    ]
    logs = inspect_ai.eval(
        tasks, model="mockllm/model", log_dir=str(tmp_path), display="none",
        max_tasks=trials, max_samples=1,
    )  # fmt: skip
    assert all(log.status == "success" for log in logs)
    meta = [log.results.early_stopping.metadata for log in logs]
    ran = [
        log.results.total_samples - m["stopped"]
        for log, m in zip(logs, meta, strict=True)
    ]
    return [m["decision"] for m in meta], np.array(ran)


@pytest.mark.slow
def test_a_study_of_stopped_runs(tmp_path):
    # 100 runs of 40 samples whose true accuracy is the threshold (every
    # decision is wrong), alpha 0.2: the share deciding is at most alpha
    # + 3 Monte Carlo SEs (0.12; a false failure chance below 0.2% were
    # the rate exactly alpha). Then 20 runs of 100 samples at accuracy 0.8:
    # each decides "above", and most samples are saved. Measured (inspect-ai
    # 0.3.285): 3 of 100 decided (0.030); at 0.8, 30.0 of 100 samples run
    # on average (22 to 43), 70% saved; about 3 minutes.
    decisions, _ = _study(0.5, 100, 40, 0.2, tmp_path / "null")
    wrong = np.mean([d is not None for d in decisions])
    assert wrong <= 0.2 + 3 * np.sqrt(0.2 * 0.8 / 100)
    decisions, ran = _study(0.8, 20, 100, 0.05, tmp_path / "true")
    assert decisions == ["above"] * 20
    assert ran.mean() < 50
    print(
        f"wrong decisions {wrong:.3f} (100 runs, alpha 0.2); at 0.8 run "
        f"{ran.mean():.1f} of 100 samples (min {ran.min()}, max {ran.max()})"
    )


def test_the_bootstrap_metric_is_read_inspect_and_cluster_ci(tmp_path):
    """evalci_interval(method="bootstrap") in the log header equals
    read_inspect + cluster_ci on the log's rows (3 epochs a sample) to 1e-12."""
    from inspect_ai.scorer import accuracy

    from evalci.inspect import evalci_interval

    metric = evalci_interval(0.9, method="bootstrap", n_resamples=1000, rng=7)
    task = _coin_task(0.7, 1, 40, None, [accuracy(), metric])
    (log,) = inspect_ai.eval(task, model="mockllm/model", epochs=3,
                             log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    m = log.results.scores[0].metrics
    df = read_inspect(log.location)
    r = evalci.cluster_ci(df, "includes", "input", confidence_level=0.9,
                          n_resamples=1000, rng=7)
    assert m["estimate"].value == pytest.approx(r.estimate, abs=1e-12)
    assert m["low"].value == pytest.approx(r.low, abs=1e-12)
    assert m["high"].value == pytest.approx(r.high, abs=1e-12)
