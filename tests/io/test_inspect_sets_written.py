"""Inspect eval sets and retries in logs inspect_ai writes itself
(``eval_set`` with a retried task, ``eval_retry``): one module, skipped as one
where inspect_ai is not installed (the optional extra ``inspect``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "inspect_ai", reason="inspect_ai is not installed (the optional extra 'inspect')"
)

sys.path.insert(0, str(Path(__file__).parent))
from test_inspect_sets import reader  # noqa: E402, F401 - a fixture

import evalci  # noqa: E402
from cli_calls import call  # noqa: E402
from evalci.io.readers import read_inspect  # noqa: E402

# --------------------------------------------------------------------------
# logs inspect_ai writes itself
# --------------------------------------------------------------------------

TASKS = """
from pathlib import Path
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import match
from inspect_ai.solver import solver

FLAG = Path(__file__).with_name("fail.flag")

@solver
def answer():
    # no model call (so no tokenizer is fetched): sample 2 fails while the
    # flag file is there, the others answer by their id's parity
    async def solve(state, generate):
        if FLAG.exists() and state.sample_id == 2:
            raise RuntimeError("the first attempt fails")
        said = "yes" if state.sample_id % 2 else "no"
        state.output = ModelOutput.from_content("mockllm/model", said)
        return state
    return solve

def _task(target):
    samples = [Sample(id=i, input=f"q{i}", target=target) for i in range(1, 5)]
    return Task(dataset=samples, solver=answer(), scorer=match())

@task
def alpha():
    return _task("yes")

@task
def beta():
    return _task("no")
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """An eval set of two tasks whose first attempt errored (both attempts
    kept), and a task retried by eval_retry outside an eval set."""
    ia = pytest.importorskip(
        "inspect_ai",
        reason="inspect_ai is not installed (the optional extra 'inspect')",
    )
    d = tmp_path_factory.mktemp("inspect_written")
    (d / "tasks.py").write_text(TASKS)
    flag = d / "fail.flag"
    tasks = [f"{d}/tasks.py@alpha", f"{d}/tasks.py@beta"]
    kw = dict(model="mockllm/model", display="none")
    flag.touch()
    ok, _ = ia.eval_set(tasks, log_dir=str(d / "set"), retry_attempts=0,
                        retry_cleanup=False, **kw)  # fmt: skip
    assert not ok
    flag.unlink()
    ok, _ = ia.eval_set(tasks, log_dir=str(d / "set"), retry_cleanup=False, **kw)
    assert ok
    flag.touch()
    (first,) = ia.eval(tasks[0], log_dir=str(d / "retry"), **kw)
    flag.unlink()
    (final,) = ia.eval_retry(first.location, log_dir=str(d / "retry"), display="none")
    assert (first.status, final.status) == ("error", "success")
    return d


def test_inspect_ai_eval_set_of_two_tasks(written, reader):  # noqa: F811
    with pytest.warns(evalci.EvalciWarning, match="has 2 attempts") as said:
        df = read_inspect(written / "set")
    ours = [
        str(w.message) for w in said if issubclass(w.category, evalci.EvalciWarning)
    ]
    assert sorted(m.split("'")[1] for m in ours) == ["alpha", "beta"]
    assert len(df.attrs["evalci_superseded"]) == 2
    # sample ids 1..4 in both tasks, sample 2 errored in the first attempts
    assert df.groupby("task").match.apply(list).to_dict() == {
        "alpha": [1.0, 0.0, 1.0, 0.0],
        "beta": [0.0, 1.0, 0.0, 1.0],
    }
    assert "error" not in df  # the final attempts hold every sample, scored
    # one task's files named alone: that task, no word about the other
    files = sorted((written / "set").glob("*_beta_*.eval"))
    with pytest.warns(evalci.EvalciWarning, match=r"task 'beta' .* has 2 attempts"):
        beta = read_inspect(files)
    assert set(beta.task) == {"beta"} and beta.shape[0] == 4


def test_inspect_ai_eval_retry_outside_a_set(written, reader):  # noqa: F811
    files = sorted((written / "retry").glob("*.eval"))
    assert len(files) == 2 and not (written / "retry" / "eval-set.json").exists()
    with pytest.warns(evalci.EvalciWarning, match=r"superseded .* \(status 'error'\)"):
        df = read_inspect(written / "retry")
    assert df.match.tolist() == [1.0, 0.0, 1.0, 0.0] and "error" not in df


def test_inspect_ai_eval_set_on_the_command_line(written, capsys):
    code, out, err = call("ci", written / "set", capsys=capsys)
    assert code == 2 and "holds 2 tasks ('alpha', 'beta')" in err
    code, out, err = call("ci", written / "set", "--by", "task", "--format", "json",
                          "--n-resamples", 200, capsys=capsys)  # fmt: skip
    assert code == 0, err
    assert {r["task"]: r["estimate"] for r in json.loads(out)} == {
        "alpha": 0.5,
        "beta": 0.5,
    }
    assert err.count("has 2 attempts") == 2
