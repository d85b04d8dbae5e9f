"""Every sample accounted for (issue 22): the rows and counts the readers
give for each kind of sample a log holds (or says it should), and the causes
``missing=`` reads from their columns.

An Inspect log can hold a sample that scored, errored, hit a limit (and was
scored anyway), was invalidated afterwards (inspect_ai ``log/_edit.py``
``invalidate_samples``: ``EvalSample.invalidation`` is a ``ProvenanceData``
with ``timestamp``, ``author``, ``reason``, ``metadata``) or was never
scored; the EarlyStopping hook (inspect_ai ``util/_early_stopping.py``)
stops samples before they run, listing each ``EarlyStop`` (``id``,
``epoch``, ``reason``, ``metadata``) in ``results.early_stopping`` and in
no sample, while ``results.total_samples`` counts them
(``_eval/task/run.py``: ``total_samples = len(dataset) * epochs``). The logs
here are written member by member in Inspect's layout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.io import inspect as inspect_reader
from evalci.io.readers import read_inspect, read_jsonl, sample_counts

sys.path.insert(0, str(Path(__file__).parent))
from test_read_inspect import (  # noqa: E402
    eval_members,
    grid_samples,
    inspect_metrics,
    write_zip,
)

from logs import inspect_sample, inspect_spec  # noqa: E402

OUTCOMES = ["scored", "errored", "invalidated", "stopped_early", "unscored"]
STOPS = [
    {"id": 5, "epoch": 2, "reason": "confident", "metadata": {"p": 0.99}},
    {"id": 6, "epoch": 1, "reason": None, "metadata": None},
    {"id": 6, "epoch": 2, "reason": "confident", "metadata": None},
]


@pytest.fixture(autouse=True)
def plain(monkeypatch):
    """The json + zipfile + zstd reader, whether or not inspect_ai is here."""
    monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: None)


def every_kind(path: Path, invalid: bool = True) -> tuple[Path, list[dict]]:
    """A log of 13 samples x 2 epochs planned (26): sample 1 epoch 1
    errored, 2/2 hit a limit and was scored, 4/1 and 4/2 invalidated, 5/2,
    6/1 and 6/2 stopped early, 7/1 never scored, and sample 12 not in the
    file; the other 14 scored."""
    stopped = {(s["id"], s["epoch"]) for s in STOPS}
    samples = [
        s
        for s in grid_samples(
            seed=3, n=12, epochs=2, errored={(1, 1)}, limited={(2, 2)}
        )
        if (s["id"], s["epoch"]) not in stopped
    ]
    for s in samples:
        if (s["id"], s["epoch"]) == (7, 1):
            s["scores"] = None
        if invalid and s["id"] == 4:  # ProvenanceData, one with a reason
            why = "grader misconfigured" if s["epoch"] == 1 else None
            s["invalidation"] = {"timestamp": "2025-03-05T00:00:00+00:00",
                                 "author": "jd", "reason": why, "metadata": {}}  # fmt: skip
    members = eval_members(inspect_spec("openai/gpt-4o", "gpqa", 2), samples,
                           n=26, stops=STOPS)  # fmt: skip
    write_zip(path, members)
    return path, samples


@pytest.mark.parametrize("kw", [{}, {"samples": True}])
def test_every_kind_of_sample_is_a_row_and_counted(tmp_path, kw):
    f, _ = every_kind(tmp_path / "a.eval")
    with pytest.warns(evalci.EvalciWarning, match=r"holds 26 samples .* has 24 \(3 of them stopped early\)"):  # fmt: skip
        df = read_inspect(f, **kw)
    assert len(df) == 24  # every sample the log accounts for, sample 12 not
    at = df.set_index(["input", "run"])
    assert at.loc[(4, 1), "invalidated"] == "grader misconfigured"
    assert at.loc[(4, 2), "invalidated"] == "invalidated by jd"
    assert at.loc[(5, 2), "stopped_early"] == "confident"
    assert at.loc[(6, 1), "stopped_early"] == "stopped early"  # no reason given
    for key in [(1, 1), (4, 1), (4, 2), (5, 2), (6, 1), (6, 2), (7, 1)]:
        assert np.isnan(at.loc[key, "choice"]), key
    assert at.choice.notna().sum() == 17 and at.loc[(2, 2), "limit"] == "token"
    assert list(df.columns[-5:]) == [
        "error", "limit", "invalidated", "stopped_early", "log_file"
    ]  # fmt: skip
    (c,) = df.attrs["evalci_samples"]
    assert c == {
        "log_file": str(f), "system": "openai/gpt-4o", "task": "gpqa",
        "split": None, "expected": 26, "found": 24, "scored": 17, "errored": 1,
        "hit_limit": 1, "invalidated": 2, "stopped_early": 3, "unscored": 1,
        "missing": 2, "source": "samples",  # invalidated: read whole
    }  # fmt: skip
    assert sum(c[k] for k in OUTCOMES) + c["missing"] == c["expected"]
    assert sum(c[k] for k in OUTCOMES) == c["found"] == len(df)


def test_early_stops_read_from_the_summaries_path(tmp_path):
    f, _ = every_kind(tmp_path / "a.eval", invalid=False)
    with pytest.warns(evalci.EvalciWarning, match="holds 26 samples"):
        by_summary = read_inspect(f)
    with pytest.warns(evalci.EvalciWarning, match="holds 26 samples"):
        by_sample = read_inspect(f, samples=True)
    pd.testing.assert_frame_equal(by_summary, by_sample)
    counts = sample_counts(by_summary)
    assert counts.source.tolist() == ["summaries"] and "invalidated" not in by_summary
    assert counts[OUTCOMES + ["missing"]].iloc[0].tolist() == [19, 1, 0, 3, 1, 2]
    assert (counts[OUTCOMES].sum(axis=1) + counts.missing == counts.expected).all()


def test_refusal_names_each_cause(tmp_path):
    f, _ = every_kind(tmp_path / "a.eval")
    with pytest.warns(evalci.EvalciWarning, match="holds 26 samples"):
        df = read_inspect(f)
    # missing: 1/1 errored, 4/1 4/2 invalidated, 5/2 6/1 6/2 stopped, 7/1
    with pytest.raises(
        ValueError,
        match=r"has 7 missing values \(of 24 rows\) in 5 inputs \(1, 4, 5, \.\.\.\); "
        r"1 errored, 2 invalidated, 3 stopped early\. ",
    ):
        evalci.cluster_ci(df, "choice", cluster="input")


def test_counts_on_the_result_by_cause(tmp_path):
    f, _ = every_kind(tmp_path / "a.eval")
    with pytest.warns(evalci.EvalciWarning, match="holds 26 samples"):
        df = read_inspect(f)
    with pytest.warns(evalci.MissingDataWarning, match="left out 7 of 24 runs"):
        r = evalci.analytic_ci(df, "choice", cluster="input", missing="drop")
    row = r.counts.iloc[0]
    assert (row.n_attempted, row.n_scored, row.n_missing) == (24, 17, 7)
    assert (row.n_errored, row.n_hit_limit) == (1, 0)  # 2/2 was scored
    assert (row.n_invalidated, row.n_stopped_early) == (2, 3)
    with pytest.warns(evalci.MissingDataWarning):
        b = evalci.cluster_ci(df, "choice", cluster="input", missing="drop",
                              n_resamples=199, rng=0)  # fmt: skip
    assert "scored 17 of 24 runs; 1 errored; 2 invalidated; 3 stopped early" in repr(b)
    assert b.to_frame().n_stopped_early.tolist() == [3]


def test_drop_matches_inspects_own_score(tmp_path):
    # Inspect's metrics leave out what was never scored: errored samples
    # (no score), samples stopped early (never run) and unscored ones
    # (`completed_scores` holds only the samples with scores)
    # (inspect_metrics is Inspect's accuracy and stderr over the scored
    # samples, after the epoch reducer; against inspect_ai itself below)
    f, samples = every_kind(tmp_path / "a.eval", invalid=False)
    want = inspect_metrics(samples)
    for kw in ({}, {"samples": True}):
        with pytest.warns(evalci.EvalciWarning, match="holds 26 samples"):
            df = read_inspect(f, **kw)
        with pytest.warns(evalci.MissingDataWarning):
            r = evalci.analytic_ci(df, "choice", cluster="input", missing="drop")
        assert r.estimate == pytest.approx(want["accuracy"]["value"], abs=1e-12)
        assert r.standard_error == pytest.approx(want["stderr"]["value"], abs=1e-12)


def test_early_stop_of_a_logged_sample_is_the_sample(tmp_path):
    # a stop whose sample is in the log anyway (a re-run) is not counted twice
    samples = [inspect_sample(i, 1, {"choice": "C"}) for i in range(3)]
    stops = [{"id": 2, "epoch": 1, "reason": "x"}, {"id": "q", "epoch": 1}]
    members = eval_members(inspect_spec("m", "t", 1), samples, n=4, stops=stops)
    write_zip(tmp_path / "a.eval", members)
    df = read_inspect(tmp_path / "a.eval")
    assert df.input.tolist() == ["0", "1", "2", "q"]  # ids: strings once mixed
    assert df.stopped_early.isna().tolist() == [True] * 3 + [False]
    assert df.stopped_early.iloc[3] == "stopped early"
    (c,) = df.attrs["evalci_samples"]
    assert (c["scored"], c["stopped_early"], c["found"], c["missing"]) == (3, 1, 4, 0)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda r: r | {"early_stopping": [1]}, r"`early_stopping` in results is a list, not an object"),
        (lambda r: r | {"early_stopping": {"early_stops": {}}}, r"`early_stops` in results\.early_stopping is an object, not a list"),
        (lambda r: r | {"early_stopping": {"early_stops": [{"id": 1}]}}, r"required field `epoch` is missing in `results\.early_stopping\.early_stops`, sample 1"),
    ],
)  # fmt: skip
def test_wrong_early_stops_name_the_field(tmp_path, edit, match):
    samples = [inspect_sample(i, 1, {"choice": "C"}) for i in range(2)]
    members = eval_members(inspect_spec("m", "t", 1), samples)
    head = json.loads(members[-1][1])
    head["results"] = edit(head["results"])
    members[-1] = ("header.json", json.dumps(head).encode())
    write_zip(tmp_path / "a.eval", members)
    with pytest.raises(ValueError, match=match):
        read_inspect(tmp_path / "a.eval")


def test_sample_counts_of_a_table_and_its_errors(tmp_path):
    f = tmp_path / "m.jsonl"
    rows = [{"q": i, "ok": None if i == 3 else i % 2, "sys": s}
            for s in ("a", "b") for i in range(4 if s == "a" else 2)]  # fmt: skip
    f.write_text("\n".join(json.dumps(r) for r in rows))
    df = read_jsonl(f, input="q", value="ok", system="sys")
    counts = sample_counts(df)
    assert counts.columns.tolist() == list(evalci.io.readers.SAMPLE_KEYS)
    assert counts[["system", "found", "scored", "unscored"]].values.tolist() == [
        ["a", 4, 3, 1],
        ["b", 2, 2, 0],
    ]
    assert counts.expected.isna().all() and counts.source.tolist() == ["jsonl"] * 2
    assert str(counts.found.dtype) == "Int64"
    assert sample_counts(df[df.system == "a"]).equals(counts)  # a slice keeps them
    with pytest.raises(ValueError, match=r"holds no sample counts .*evalci_samples"):
        sample_counts(pd.DataFrame({"x": [1]}))
    with pytest.raises(TypeError, match="`df` must be a pandas DataFrame"):
        sample_counts(df.attrs["evalci_samples"])
    old = df.copy()
    old.attrs["evalci_samples"] = {str(f): {"found": 6}}
    with pytest.raises(ValueError, match="not a list of records"):
        sample_counts(old)
    assert evalci.sample_counts is sample_counts


class _StopEvery:
    """An EarlyStopping manager (inspect_ai ``util/_early_stopping.py``'s
    protocol) that stops epoch 3 of every third sample, and records why."""

    async def start_task(self, task, samples, epochs):
        return "every_third"

    async def schedule_sample(self, id, epoch):
        from inspect_ai.util import EarlyStop

        if epoch == 3 and id % 3 == 0:
            return EarlyStop(id=id, epoch=epoch, reason="enough epochs")
        return None

    async def complete_sample(self, id, epoch, scores):
        return None

    async def complete_task(self):
        return {}


def test_inspect_ai_log_with_early_stops_and_invalidation(tmp_path, monkeypatch):
    ia = pytest.importorskip(
        "inspect_ai",
        reason="inspect_ai is not installed (the optional extra 'inspect')",
    )
    from inspect_ai.dataset import Sample
    from inspect_ai.log import ProvenanceData, invalidate_samples, write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes

    rng = np.random.default_rng(8)
    outs = []
    for _ in range(36):
        o = ModelOutput.from_content(
            "mockllm/model", "yes" if rng.random() < 0.6 else "no"
        )
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        outs.append(o)
    task = ia.Task(
        dataset=[Sample(id=i, input=f"q{i}", target="yes") for i in range(12)],
        scorer=includes(),
        early_stopping=_StopEvery(),
    )
    (log,) = ia.eval(task, model=get_model("mockllm/model", custom_outputs=outs),
                     epochs=3, log_dir=str(tmp_path / "run"), display="none")  # fmt: skip
    assert log.status == "success" and len(log.results.early_stopping.early_stops) == 4
    f = Path(log.location)
    df = read_inspect(f)  # the plain reader
    (c,) = df.attrs["evalci_samples"]
    assert (c["expected"], c["found"], c["stopped_early"], c["missing"]) == (
        36,
        36,
        4,
        0,
    )
    assert df.stopped_early.notna().sum() == 4 and df.includes.isna().sum() == 4
    metrics = log.results.scores[0].metrics
    with pytest.warns(evalci.MissingDataWarning, match="left out 4 of 36 runs"):
        r = evalci.analytic_ci(df, "includes", cluster="input", missing="drop")
    assert r.estimate == pytest.approx(metrics["accuracy"].value, abs=1e-12)
    assert r.standard_error == pytest.approx(metrics["stderr"].value, abs=1e-12)
    # invalidate two samples and write the log again: inspect_ai's reader
    # and the plain one give the same table
    uuids = [s.uuid for s in log.samples if s.id in (1, 2) and s.epoch == 1]
    why = ProvenanceData(author="jd", reason="leaked answer")
    bad = invalidate_samples(log, uuids, why)
    g = tmp_path / "2025-03-04T10-11-12+00-00_invalid.eval"
    write_eval_log(bad, str(g))
    plain_table = read_inspect(g)
    assert plain_table.invalidated.dropna().tolist() == ["leaked answer"] * 2
    monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: ia)
    for kw in ({}, {"samples": True}):
        native = read_inspect(g, **kw)
        pd.testing.assert_frame_equal(native, plain_table)
        assert native.attrs["evalci_samples"] == plain_table.attrs["evalci_samples"]
