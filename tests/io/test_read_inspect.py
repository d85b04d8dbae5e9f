"""read_inspect on today's Inspect AI logs: zstd members, summaries, chunked
samples, invalidation, errors and limits, counts, eval sets, hostile archives.

Layouts from inspect_ai 0.3.285: ``log/_recorders/eval.py`` (the members and
the order ``log_finish`` writes them), ``log/_recorders/chunked/format.py``
(the chunked sample), ``_util/zipfile.py`` (zstd, method 93, frames of at
most 200 MiB input), ``log/_log.py`` (``EvalSample.summary()``),
``_eval/evalset.py`` (``eval-set.json``, the newest log per task),
``scorer/_metrics/std.py`` (``stderr`` = SD / sqrt(n) of the scores after
the epoch reducer). The archives are written byte by byte here, so the
reader is checked against the zip format itself, not against zipfile.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.io import _zip
from evalci.io import inspect as inspect_reader
from evalci.io.readers import read_inspect

sys.path.insert(0, str(Path(__file__).parent))
from logs import inspect_header, inspect_sample, inspect_spec  # noqa: E402

LETTER = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


@pytest.fixture(autouse=True)
def plain(monkeypatch):
    """The json + zipfile + zstd reader, whether or not inspect_ai is here."""
    monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: None)


# --------------------------------------------------------------------------
# a zip writer: APPNOTE 4.3.7 (local header), 4.3.12 (central directory),
# 4.3.16 (end of central directory); method 93 = Zstandard
# --------------------------------------------------------------------------


def _compress(data: bytes, method: int, frames: int) -> bytes:
    if method == 0:
        return data
    if method == 8:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    step = max(1, -(-len(data) // frames))
    parts = [data[i : i + step] for i in range(0, len(data), step)] or [b""]
    return b"".join(_zip._zstd().compress(p) for p in parts)


def write_zip(
    path: Path, members, method=93, frames=1, crc=None, size=None, flags=None
):
    """A zip of (name, bytes) members; ``crc``/``size``/``flags`` override
    what a member's headers say (hostile archives)."""
    crc, size, flags = crc or {}, size or {}, flags or {}
    out, central = bytearray(), bytearray()
    for name, data in members:
        nb, comp = name.encode(), _compress(data, method, frames)
        c = crc.get(name, zlib.crc32(data))
        n = size.get(name, len(data))
        fl = 0x800 | flags.get(name, 0)
        ver = 63 if method == 93 else 20
        offset = len(out)
        out += struct.pack(
            "<4s5H3I2H", b"PK\x03\x04", ver, fl, method, 0, 0x21, c, len(comp), n,
            len(nb), 0,
        )  # fmt: skip
        out += nb + comp
        central += struct.pack(
            "<4s6H3I5H2I", b"PK\x01\x02", ver, ver, fl, method, 0, 0x21, c,
            len(comp), n, len(nb), 0, 0, 0, 0, 0, offset,
        )  # fmt: skip
        central += nb
    k = len(members)
    eocd = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, k, k, len(central), len(out), 0)
    path.write_bytes(bytes(out + central + eocd))


# --------------------------------------------------------------------------
# Inspect's layout
# --------------------------------------------------------------------------


def summary_of(s: dict) -> dict:
    """EvalSample.summary(): error as its message, limit as its type."""
    out = {k: s[k] for k in ("id", "epoch", "input", "target", "scores", "uuid")}
    out["error"] = s["error"]["message"] if s.get("error") else None
    out["limit"] = s["limit"]["type"] if s.get("limit") else None
    return out | {"completed": True, "model_usage": {}, "metadata": {}}


def inspect_metrics(samples: list[dict], scorer: str = "choice") -> dict:
    """accuracy and stderr as Inspect computes them: each sample's epochs
    reduced by the mean, then the mean and SD (ddof=1) / sqrt(n)."""
    by_id: dict = {}
    for s in samples:
        if s.get("scores") and s.get("invalidation") is None:
            v = s["scores"][scorer]["value"]
            by_id.setdefault(s["id"], []).append(LETTER.get(v, v))
    reduced = np.array([np.mean(v) for v in by_id.values()], dtype=float)
    n = len(reduced)  # stderr() is 0 for n < 2
    se = np.std(reduced, ddof=1) / np.sqrt(n) if n > 1 else 0.0
    return {
        "accuracy": {"name": "accuracy", "value": float(reduced.mean()), "params": {}},
        "stderr": {"name": "stderr", "value": float(se), "params": {}},
    }


def eval_members(
    spec, samples, *, n=None, chunked=False, summaries=True, header=True, stops=()
):
    # (invalidate_samples() sets the header's `invalidated` with the samples')
    """The members eval.py writes, in its order: the journal's start.json,
    the samples (one member, or the chunked folder), the journal's summaries,
    then at the finish summaries.json, reductions.json and header.json;
    ``stops`` are EarlyStop records (id, epoch, reason, metadata) for the
    header's ``results.early_stopping`` (inspect_ai ``_eval/task/run.py``:
    those samples never ran, and ``total_samples`` counts them)."""
    js = lambda x: json.dumps(x).encode()  # noqa: E731
    plan = inspect_header(spec, 0)["plan"]
    out = [("_journal/start.json", js({"version": 2, "eval": spec, "plan": plan}))]
    for s in samples:
        key = f"samples/{s['id']}_epoch_{s['epoch']}"
        if not chunked:
            out.append((f"{key}.json", js(s)))
            continue
        shell = {k: v for k, v in s.items() if k not in ("messages", "events")}
        shell["message_refs"] = [[0, len(s["messages"])]]
        out += [
            (f"{key}/sample.json", js(shell)),
            (f"{key}/skeleton.json", js({"spans": []})),
            (f"{key}/messages/0.json", js(s["messages"])),
            (f"{key}/events/0.json", js([])),
            (f"{key}/events/stats.json", js({"chunks": []})),
            (f"{key}/events/uuids.json", js([])),
        ]
    out.append(("_journal/summaries/1.json", js([summary_of(s) for s in samples])))
    if header:
        if summaries:
            out.append(("summaries.json", js([summary_of(s) for s in samples])))
        out.append(("reductions.json", js([])))
        head = inspect_header(spec, len(samples) + len(stops) if n is None else n)
        head["results"]["scores"][0]["metrics"] = inspect_metrics(samples)
        if stops:
            head["results"]["early_stopping"] = {
                "manager": "confident_sampler",
                "early_stops": list(stops),
                "metadata": {},
            }
        if any(s.get("invalidation") for s in samples):
            head["invalidated"] = True
        out.append(("header.json", js(head)))
    return out


def grid_samples(seed=4, n=15, epochs=3, errored=(), limited=(), invalid=()):
    g = np.random.default_rng(seed).choice(list("CIPN"), size=(n, epochs))
    out = []
    for i in range(n):
        for e in range(epochs):
            s = inspect_sample(i, e + 1, {"choice": str(g[i, e])})
            if (i, e + 1) in errored:
                s |= {
                    "scores": None,
                    "error": {"message": f"boom {i}", "traceback": ""},
                }
            if (i, e + 1) in limited:
                s["limit"] = {"type": "token", "limit": 100, "reason": None}
            if (i, e + 1) in invalid:
                s["invalidation"] = {"timestamp": "2025-03-05T00:00:00+00:00"}
            out.append(s)
    return out


def write_log(path, samples, epochs=3, method=93, **kw):
    spec = inspect_spec("openai/gpt-4o", "gpqa", epochs)
    write_zip(path, eval_members(spec, samples, **kw), method=method)
    return path


# --------------------------------------------------------------------------
# zstd, summaries, samples, chunked: one table, Inspect's own numbers
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method", [93, 8, 0])
def test_zstd_and_other_methods_read_alike(tmp_path, method):
    samples = grid_samples()
    f = write_log(tmp_path / "a.eval", samples, method=method)
    df = read_inspect(f)
    assert df.shape[0] == 45
    want = [LETTER[s["scores"]["choice"]["value"]] for s in samples]
    got = df.set_index(["input", "run"])["choice"]
    assert [got[(s["id"], s["epoch"])] for s in samples] == want


def test_multi_frame_zstd_member(tmp_path):
    # Inspect caps a zstd frame at 200 MiB input; a member of several frames
    # must read whole (a one-frame reader stops at the first and fails CRC)
    samples = grid_samples()
    members = eval_members(inspect_spec("openai/gpt-4o", "gpqa", 3), samples)
    write_zip(tmp_path / "a.eval", members, frames=5)
    raw = (tmp_path / "a.eval").read_bytes()
    assert raw.count(b"\x28\xb5\x2f\xfd") > len(members)  # zstd frame magic
    pd.testing.assert_frame_equal(
        read_inspect(tmp_path / "a.eval"),
        read_inspect(write_log(tmp_path / "b.eval", samples, method=0)).assign(
            log_file=str(tmp_path / "a.eval")
        ),
        check_like=False,
    )


def _same(a: pd.DataFrame, b: pd.DataFrame):
    pd.testing.assert_frame_equal(a, b)
    drop = lambda df: [  # noqa: E731 - the counts but where they were read from
        {k: v for k, v in r.items() if k != "source"}
        for r in df.attrs["evalci_samples"]
    ]
    assert drop(a) == drop(b)


@pytest.mark.parametrize("chunked", [False, True])
def test_summaries_and_samples_give_one_table(tmp_path, chunked):
    samples = grid_samples(errored={(2, 1)}, limited={(5, 3)})
    f = write_log(tmp_path / "a.eval", samples, chunked=chunked)
    by_summary = read_inspect(f)
    by_sample = read_inspect(f, samples=True)
    _same(by_summary, by_sample)
    (one,) = by_summary.attrs["evalci_samples"]
    assert one["source"] == "summaries" and one["log_file"] == str(f)
    assert [c["source"] for c in by_sample.attrs["evalci_samples"]] == ["samples"]


def test_summaries_are_what_is_read(tmp_path):
    # summaries.json alone decides the default table: a sample member that
    # cannot be parsed is not touched unless samples=True
    samples = grid_samples(n=4, epochs=1)
    members = eval_members(inspect_spec("m", "t", 1), samples)
    members = [(n, b"{not json" if n.startswith("samples/") else b) for n, b in members]
    write_zip(tmp_path / "a.eval", members)
    assert read_inspect(tmp_path / "a.eval").shape[0] == 4
    with pytest.raises(ValueError, match=r"member samples/0_epoch_1\.json"):
        read_inspect(tmp_path / "a.eval", samples=True)


def test_chunked_layout_reads_only_the_shell(tmp_path):
    samples = grid_samples(n=3, epochs=2)
    f = write_log(tmp_path / "a.eval", samples, epochs=2, chunked=True)
    df = read_inspect(f, samples=True)
    assert df.shape[0] == 6 and set(df.run) == {1, 2}
    (counts,) = df.attrs["evalci_samples"]
    assert counts["found"] == 6 and counts["expected"] == 6


def test_mean_and_stderr_match_inspects_header(tmp_path):
    samples = grid_samples(seed=11, n=40, epochs=3)
    f = write_log(tmp_path / "a.eval", samples)
    metrics = inspect_metrics(samples)
    for kw in ({}, {"samples": True}):
        r = evalci.analytic_ci(read_inspect(f, **kw), "choice", cluster="input")
        assert r.estimate == pytest.approx(metrics["accuracy"]["value"], abs=1e-12)
        assert r.standard_error == pytest.approx(metrics["stderr"]["value"], abs=1e-12)


# --------------------------------------------------------------------------
# errors, limits, invalidation, counts, cut-short logs
# --------------------------------------------------------------------------


def test_errored_sample_keeps_its_row_and_the_counts_add_up(tmp_path):
    samples = grid_samples(
        n=6, epochs=2, errored={(1, 1)}, limited={(3, 2)}, invalid={(4, 1), (4, 2)}
    )
    f = write_log(tmp_path / "a.eval", samples, epochs=2)
    for kw in ({}, {"samples": True}):
        df = read_inspect(f, **kw)  # no warning: every sample is a row
        assert df.shape[0] == 12
        row = df[(df.input == 1) & (df.run == 1)].iloc[0]
        assert np.isnan(row.choice) and row.error == "boom 1"
        assert df[(df.input == 3) & (df.run == 2)].iloc[0].limit == "token"
        assert df.error.isna().sum() == 11 and df.limit.isna().sum() == 11
        # an invalidated sample keeps its row, its score NaN (it is not valid)
        inv = df[df.input == 4]
        assert inv.choice.isna().all() and set(inv.invalidated) == {"invalidated"}
        assert df.invalidated.notna().sum() == 2 and "stopped_early" not in df
        assert df.attrs["evalci_samples"] == [
            {
                "log_file": str(f),
                "system": "openai/gpt-4o",
                "task": "gpqa",
                "split": None,
                "expected": 12,
                "found": 12,
                "scored": 9,
                "errored": 1,
                "hit_limit": 1,
                "invalidated": 2,
                "stopped_early": 0,
                "unscored": 0,
                "missing": 0,
                "source": "samples",  # an invalidated log is read whole
            }
        ]


def test_clean_log_has_no_error_columns(tmp_path):
    df = read_inspect(write_log(tmp_path / "a.eval", grid_samples(n=3)))
    assert "error" not in df and "limit" not in df
    assert [c["scored"] for c in df.attrs["evalci_samples"]] == [9]


def test_log_cut_short_warns_with_both_numbers(tmp_path):
    f = write_log(tmp_path / "a.eval", grid_samples(n=1, epochs=1), epochs=1, n=79)
    with pytest.warns(evalci.EvalciWarning, match=r"a\.eval: its header says it holds 79 samples \(results\.total_samples\) but the file has 1"):  # fmt: skip
        df = read_inspect(f)
    assert [c["missing"] for c in df.attrs["evalci_samples"]] == [78]


def test_running_log_counts_from_the_dataset(tmp_path):
    # no header.json yet: the spec's dataset.samples (5) x epochs (2) = 10
    samples = grid_samples(n=2, epochs=2)
    f = write_log(tmp_path / "a.eval", samples, epochs=2, header=False)
    with pytest.warns(
        evalci.EvalciWarning,
        match=r"status is 'started'.*holds 10 samples \(eval\.dataset\.samples x ",
    ):
        df = read_inspect(f)
    assert df.shape[0] == 4
    (counts,) = df.attrs["evalci_samples"]
    assert counts["source"] == "summaries" and counts["missing"] == 6


def test_journal_summaries_last_row_wins(tmp_path):
    # a requeued sample's re-run is journalled again; the last row counts
    spec = inspect_spec("m", "t", 1)
    first = inspect_sample(0, 1, {"choice": "I"})
    rerun = inspect_sample(0, 1, {"choice": "C"})
    js = lambda x: json.dumps(x).encode()  # noqa: E731
    members = [
        ("_journal/start.json", js({"version": 2, "eval": spec, "plan": {}})),
        ("_journal/summaries/1.json", js([summary_of(first)])),
        ("samples/0_epoch_1.json", js(rerun)),
        ("_journal/summaries/2.json", js([summary_of(rerun)])),
    ]
    write_zip(tmp_path / "a.eval", members)
    with pytest.warns(evalci.EvalciWarning, match="status is 'started'"):
        assert read_inspect(tmp_path / "a.eval").choice.tolist() == [1.0]


def test_summaries_missing_a_sample_fall_back_to_the_samples(tmp_path):
    samples = grid_samples(n=3, epochs=1)
    members = eval_members(inspect_spec("m", "t", 1), samples)
    members = [
        (n, json.dumps([summary_of(s) for s in samples[:2]]).encode())
        if n == "summaries.json"
        else (n, b)
        for n, b in members
    ]
    write_zip(tmp_path / "a.eval", members)
    df = read_inspect(tmp_path / "a.eval")
    assert df.shape[0] == 3
    assert [c["source"] for c in df.attrs["evalci_samples"]] == ["samples"]


def test_relogged_sample_member_last_copy_with_a_warning(tmp_path):
    samples = grid_samples(n=2, epochs=1)
    members = eval_members(inspect_spec("m", "t", 1), samples)
    rerun = json.dumps(inspect_sample(0, 1, {"choice": "C"})).encode()
    members.insert(3, ("samples/0_epoch_1.json", rerun))
    write_zip(tmp_path / "a.eval", members)
    with pytest.warns(evalci.EvalciWarning, match=r"re-run .* last copy"):
        df = read_inspect(tmp_path / "a.eval", samples=True)
    assert df.set_index("input").choice[0] == 1.0


# --------------------------------------------------------------------------
# eval sets
# --------------------------------------------------------------------------


def _attempt(path, model, task_id, started, samples, status="success"):
    spec = inspect_spec(model, "gpqa", 1) | {"task_id": task_id}
    members = eval_members(spec, samples)
    head = json.loads(members[-1][1])
    head["status"] = status
    head["stats"]["started_at"] = started
    members[-1] = ("header.json", json.dumps(head).encode())
    write_zip(path, members)


def test_eval_set_retries_resolve_to_the_final_log(tmp_path):
    d = tmp_path / "set"
    d.mkdir()
    tasks = [
        {"name": "gpqa", "task_id": "T1", "task_args": {}, "model": "a/m",
         "model_args": {}, "sequence": 0},
        {"name": "gpqa", "task_id": "T2", "task_args": {}, "model": "b/m",
         "model_args": {}, "sequence": 1},
    ]  # fmt: skip
    (d / "eval-set.json").write_text(json.dumps({"eval_set_id": "S", "tasks": tasks}))
    one = [inspect_sample(i, 1, {"choice": "I"}) for i in range(4)]
    two = [inspect_sample(i, 1, {"choice": "C"}) for i in range(4)]
    # the first attempt errored part-way, the retry (started later) finished;
    # file names sort the other way round, and mtimes are equal
    _attempt(d / "z1.eval", "a/m", "T1", "2025-03-04T10:00:00+00:00", one[:2], "error")
    _attempt(d / "a1.eval", "a/m", "T1", "2025-03-04T11:00:00+00:00", two)
    _attempt(d / "b2.eval", "b/m", "T2", "2025-03-04T10:00:00+00:00", one)
    for p in d.glob("*.eval"):
        os.utime(p, ns=(10**18, 10**18))
    said = r"task 'gpqa' \(a/m, task_id T1\) has 2 attempts.*a1\.eval \(status 'success'\); superseded .*z1\.eval \(status 'error'\)"
    # without the manifest the two attempts are still attempts at one task
    for manifest in (True, False):
        if not manifest:
            (d / "eval-set.json").unlink()
        with pytest.warns(evalci.EvalciWarning, match=said):
            df = read_inspect(d)
        assert df.shape[0] == 8 and set(df.log_file) == {
            str(d / "a1.eval"),
            str(d / "b2.eval"),
        }
        assert df[df.system == "a/m"].choice.tolist() == [1.0] * 4
        assert df.attrs["evalci_superseded"] == [str(d / "z1.eval")]


def _two_task_set(d):
    """An eval set of two tasks on one model, sample ids 0..3 in each."""
    d.mkdir()
    tasks = [
        {"name": name, "task_id": tid, "task_args": {}, "model": "a/m",
         "model_args": {}, "sequence": i}
        for i, (name, tid) in enumerate([("gpqa", "T1"), ("arc", "T2")])
    ]  # fmt: skip
    (d / "eval-set.json").write_text(json.dumps({"eval_set_id": "S", "tasks": tasks}))
    for name, tid, mark in (("gpqa", "T1", "C"), ("arc", "T2", "I")):
        spec = inspect_spec("a/m", name, 1) | {"task_id": tid}
        samples = [inspect_sample(i, 1, {"choice": mark}) for i in range(4)]
        write_zip(d / f"{name}.eval", eval_members(spec, samples))


def test_an_eval_set_of_two_tasks_reads_as_two_tasks(tmp_path):
    # before: "(system, input, run) occurs more than once" (ids overlap)
    d = tmp_path / "set"
    _two_task_set(d)
    df = read_inspect(d)
    assert df.shape[0] == 8 and sorted(df.task.unique()) == ["arc", "gpqa"]
    assert not df.duplicated(["system", "task", "input", "run"]).any()
    by = df.groupby("task").choice.mean()
    assert by["gpqa"] == 1.0 and by["arc"] == 0.0
    # task= chooses one, and reading one task says nothing of the other's log
    # (before: a warning that the other task had no log)
    one = read_inspect(d, task="arc")
    assert set(one.task) == {"arc"} and one.shape[0] == 4
    alone = read_inspect(d / "gpqa.eval")
    assert set(alone.task) == {"gpqa"}
    with pytest.raises(
        ValueError,
        match=r"`task`: none of the 2 logs read is of task 'mmlu'; "
        r"they hold 'arc' \(1 log\), 'gpqa' \(1 log\)",
    ):
        read_inspect(d, task="mmlu")


def test_the_command_line_does_not_pool_an_eval_sets_tasks(tmp_path, capsys):
    from evalci.reporting import cli

    d = tmp_path / "set"
    _two_task_set(d)
    code = cli.main(["ci", str(d), "--n-resamples", "200", "--no-progress"])
    out, err = capsys.readouterr()
    assert code != 0 and "task" in err and "--task" in err
    code = cli.main(
        ["ci", str(d), "--task", "arc", "--n-resamples", "200", "--no-progress"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err


def test_eval_set_task_without_a_log_warns(tmp_path):
    tasks = [{"name": "arc", "task_id": "T9", "model": "c/m"}]
    (tmp_path / "eval-set.json").write_text(json.dumps({"tasks": tasks}))
    write_log(tmp_path / "a.eval", grid_samples(n=2, epochs=1), epochs=1)
    with pytest.warns(evalci.EvalciWarning, match=r"task 'arc' \(c/m, task_id T9\) has no log"):  # fmt: skip
        read_inspect(tmp_path)
    (tmp_path / "eval-set.json").write_text(json.dumps({"tasks": {"T9": 1}}))
    with pytest.raises(ValueError, match=r"eval-set\.json: the field `tasks` is an object, not a list"):  # fmt: skip
        read_inspect(tmp_path)


# --------------------------------------------------------------------------
# hostile archives and fields
# --------------------------------------------------------------------------


def _good(tmp_path, **kw):
    samples = grid_samples(n=2, epochs=1)
    return eval_members(inspect_spec("m", "t", 1), samples, **kw)


def test_member_size_checked_before_reading(tmp_path):
    members = _good(tmp_path)
    # a 2 GiB member declared in a tiny archive: refused from its header
    write_zip(tmp_path / "big.eval", members, size={"summaries.json": 2 * 2**30})
    with pytest.raises(
        ValueError,
        match=r"big\.eval: member 'summaries\.json' is 2,147,483,648 bytes, over "
        r"the limit of 268,435,456 .*max_member_bytes=",
    ):
        read_inspect(tmp_path / "big.eval")
    # 300 MiB declared in a tiny archive: over the default limit, refused from
    # its header (the hostile case: read whole it took 1 GB of memory)
    write_zip(tmp_path / "bomb.eval", members, size={"summaries.json": 300 * 2**20})
    with pytest.raises(ValueError, match=r"bomb\.eval: member 'summaries\.json' is 314,572,800 bytes, over"):  # fmt: skip
        read_inspect(tmp_path / "bomb.eval")
    # the same declared size, allowed, but holding 600 bytes: a lie, refused
    # after at most the declared size is inflated
    with pytest.raises(ValueError, match=r"bomb\.eval: member 'summaries\.json' declares 314,572,800 bytes but holds \d+;"):  # fmt: skip
        read_inspect(tmp_path / "bomb.eval", max_member_bytes=2**30)
    # a real member over a lowered limit; raising the limit reads it
    write_zip(tmp_path / "ok.eval", members)
    with pytest.raises(ValueError, match=r"member 'header\.json' is .* limit of 100 "):
        read_inspect(tmp_path / "ok.eval", max_member_bytes=100)
    assert read_inspect(tmp_path / "ok.eval", max_member_bytes=10**6).shape[0] == 2
    with pytest.raises(TypeError, match="max_member_bytes"):
        read_inspect(tmp_path / "ok.eval", max_member_bytes="1G")


def test_json_log_size_checked(tmp_path):
    spec = inspect_spec("m", "t", 1)
    log = inspect_header(spec, 1) | {"samples": [inspect_sample(0, 1, {"s": "C"})]}
    (tmp_path / "a.json").write_text(json.dumps(log))
    with pytest.raises(ValueError, match=r"a\.json is .* bytes, over the limit of 50"):
        read_inspect(tmp_path / "a.json", max_member_bytes=50)


def test_size_that_lies_is_refused(tmp_path):
    members = _good(tmp_path)
    n = len(dict(members)["header.json"])
    write_zip(tmp_path / "a.eval", members, size={"header.json": n - 7})
    with pytest.raises(ValueError, match=r"a\.eval: member 'header\.json' .*(declares|damaged)"):  # fmt: skip
        read_inspect(tmp_path / "a.eval")


@pytest.mark.parametrize("name", ["header.json", "summaries.json"])
def test_two_members_with_one_name_refused(tmp_path, name):
    members = _good(tmp_path)
    members.insert(
        1, (name, json.dumps({"eval": {"model": "x", "task": "y"}}).encode())
    )
    write_zip(tmp_path / "a.eval", members)
    with pytest.raises(ValueError, match=rf"a\.eval: member '{name}' occurs 2 times"):
        read_inspect(tmp_path / "a.eval")


@pytest.mark.parametrize("method", [93, 8])
def test_bad_crc_is_one_error(tmp_path, method):
    write_zip(
        tmp_path / "a.eval", _good(tmp_path), method=method, crc={"header.json": 1}
    )
    with pytest.raises(ValueError, match=r"a\.eval: member 'header\.json' is damaged .*CRC"):  # fmt: skip
        read_inspect(tmp_path / "a.eval")


def test_encrypted_member_is_one_error(tmp_path):
    write_zip(tmp_path / "a.eval", _good(tmp_path), flags={"header.json": 1})
    with pytest.raises(
        ValueError, match=r"a\.eval: member 'header\.json' is encrypted"
    ):
        read_inspect(tmp_path / "a.eval")


def test_corrupt_zstd_data_is_one_error(tmp_path):
    write_zip(tmp_path / "a.eval", _good(tmp_path))
    raw = bytearray((tmp_path / "a.eval").read_bytes())
    at = raw.index(b"header.json") + len("header.json") + 8  # inside its frame
    raw[at : at + 16] = b"\xff" * 16
    (tmp_path / "a.eval").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"a\.eval: member 'header\.json' is damaged"):
        read_inspect(tmp_path / "a.eval")


def test_truncated_archive_is_one_error(tmp_path):
    write_zip(tmp_path / "a.eval", _good(tmp_path))
    raw = (tmp_path / "a.eval").read_bytes()
    (tmp_path / "cut.eval").write_bytes(raw[: len(raw) - 30])
    with pytest.raises(ValueError, match=r"cut\.eval is not a zip archive"):
        read_inspect(tmp_path / "cut.eval")


def test_unknown_method_is_one_error(tmp_path):
    write_zip(tmp_path / "a.eval", _good(tmp_path), method=0)
    raw = bytearray((tmp_path / "a.eval").read_bytes())
    # method field of every local and central header -> 99 (AE-x)
    for sig, off in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        i = raw.find(sig)
        while i != -1:
            raw[i + off : i + off + 2] = struct.pack("<H", 99)
            i = raw.find(sig, i + 4)
    (tmp_path / "a.eval").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"a\.eval: member '.*' is (compressed with a method|damaged)"):  # fmt: skip
        read_inspect(tmp_path / "a.eval")


def _with(members, name, edit):
    out = []
    for n, b in members:
        if n == name:
            b = json.dumps(edit(json.loads(b))).encode()
        out.append((n, b))
    return out


def _first_scores(v):
    def edit(data):
        data[0]["scores"] = v
        return data

    return edit


@pytest.mark.parametrize(
    "name, edit, match",
    [
        ("summaries.json", _first_scores([1]), r"field `scores` in sample 0 epoch 1 is a list, not an object"),
        ("summaries.json", _first_scores("C"), r"field `scores` in sample 0 epoch 1 is a string, not an object"),
        ("summaries.json", _first_scores({"choice": 1}), r"field `scores\.choice` in sample 0 epoch 1 is a number, not an object"),
        ("summaries.json", lambda d: {"rows": d}, r"member summaries\.json is an object, not a list"),
        ("summaries.json", lambda d: [1] + d, r"an entry of member summaries\.json is a number"),
        ("summaries.json", lambda d: [d[0] | {"epoch": "1"}], r"field `epoch` .* is a string, not an integer"),
        ("summaries.json", lambda d: [d[0] | {"id": [0]}], r"field `id` .* is a list, not a string or an integer"),
        ("header.json", lambda h: h | {"eval": [1]}, r"field `eval` in member header\.json is a list, not an object"),
        ("header.json", lambda h: h | {"eval": h["eval"] | {"model": 3}}, r"field `model` in the eval spec is a number, not a string"),
        ("header.json", lambda h: h | {"results": "x"}, r"field `results` in the log is a string, not an object"),
        ("header.json", lambda h: h | {"results": {"total_samples": "2"}}, r"field `total_samples` in results is a string, not a number"),
    ],
)  # fmt: skip
def test_wrong_typed_fields_name_file_and_field(tmp_path, name, edit, match):
    write_zip(tmp_path / "a.eval", _with(_good(tmp_path), name, edit))
    with pytest.raises(ValueError, match=r"a\.eval.*" + match):
        read_inspect(tmp_path / "a.eval")


def test_wrong_typed_samples_in_json_log(tmp_path):
    log = inspect_header(inspect_spec("m", "t", 1), 1) | {"samples": {"0": {}}}
    (tmp_path / "2025-01-01T00-00-00_t.json").write_text(json.dumps(log))
    with pytest.raises(
        ValueError, match=r"field `samples` .* is an object, not a list"
    ):
        read_inspect(tmp_path)


def test_non_utf8_and_deep_member(tmp_path):
    members = _good(tmp_path)
    bad = [(n, b"\xff\xfe{" if n == "header.json" else b) for n, b in members]
    write_zip(tmp_path / "a.eval", bad)
    with pytest.raises(
        ValueError, match=r"a\.eval \(member header\.json\) is not UTF-8"
    ):
        read_inspect(tmp_path / "a.eval")
    deep = [(n, b"[" * 100_000 if n == "summaries.json" else b) for n, b in members]
    write_zip(tmp_path / "b.eval", deep)
    with pytest.raises(ValueError, match=r"b\.eval \(member summaries\.json\)"):
        read_inspect(tmp_path / "b.eval")
