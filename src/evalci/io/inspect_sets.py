"""Inspect logs of several tasks, and of several attempts at one task.

An Inspect log is one task run by one model. Read together, logs fall into
three cases, each resolved here before any row is built:

- **Several tasks** (an ``eval_set`` of two tasks, or any folder of logs):
  their sample ids usually overlap (ids 1..N in every task), so ``task``
  (``eval.task``) is part of the table's key; ``task=`` reads one of them.
- **Attempts at one task**: ``eval_set`` and ``eval_retry`` write a new log
  for each attempt and keep the task's ``eval.task_id`` (inspect_ai
  ``_eval/eval.py``, ``eval_retry_async``: ``task_id=eval_log.eval.task_id``);
  each attempt is seeded with the samples the last one completed, so the
  newest holds all the older ones have. Inspect itself reads the newest
  (``_eval/evalset.py``, ``latest_completed_task_eval_logs``); so does this
  reader, whether or not ``eval-set.json`` is there, and says which files
  it set aside.
- **Two runs of one task that are not attempts** (two ``eval()`` calls: two
  ``task_id``) that hold the same sample: refused, naming both files, since
  neither is the other's retry.

An ``eval-set.json`` beside the logs lists the set's tasks; when a folder
holding one is read whole, a task of the set without a log draws a warning.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import Any

from evalci._base.warnings import EvalciWarning, warn
from evalci.io._shared import _get, _load_json

__all__ = ["check_manifests", "check_overlaps", "choose_task", "resolve_attempts"]


def _when(text: Any) -> float:
    """An ISO time as seconds since the epoch (-inf when absent or unreadable)."""
    if not isinstance(text, str) or not text:
        return -math.inf
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return -math.inf


def _stats(log) -> dict:
    stats = log.header.get("stats")
    return stats if isinstance(stats, dict) else {}


def attempt_order(log) -> tuple:
    """When a log's attempt ran (newest last): ``stats.started_at``, then
    ``eval.created``, ``stats.completed_at`` (times are kept to the second,
    and a retry may start in the second its first attempt did), then the
    file's mtime (what Inspect itself sorts by)."""
    stats = _stats(log)
    return (
        _when(stats.get("started_at")),
        _when(log.header["eval"].get("created")),
        _when(stats.get("completed_at")),
        log.file.stat().st_mtime_ns,
    )


def _task(log) -> str:
    return str(log.header["eval"].get("task"))


def _model(log) -> str:
    return str(log.header["eval"].get("model"))


def _status(log) -> str:
    return str(log.header.get("status", "started"))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _tasks_found(logs) -> str:
    """'alpha' (2 logs), 'beta' (1 log): what the logs hold, for messages."""
    by: dict[str, int] = {}
    for log in logs:
        by[_task(log)] = by.get(_task(log), 0) + 1
    return ", ".join(f"{t!r} ({_plural(n, 'log')})" for t, n in sorted(by.items()))


def choose_task(logs: list, task: str | None) -> list:
    """The logs of ``task`` (``eval.task``); all of them for None."""
    if task is None:
        return logs
    if not isinstance(task, str):
        raise TypeError(f"`task` must be a task's name (a string); got {task!r}.")
    kept = [log for log in logs if _task(log) == task]
    if not kept:
        raise ValueError(
            f"`task`: none of the {_plural(len(logs), 'log')} read is of task "
            f"{task!r}; they hold {_tasks_found(logs)}."
        )
    return kept


def resolve_attempts(logs: list) -> tuple[list, list[str]]:
    """Keep the newest log of each attempted task; name the ones set aside.

    Logs with one ``eval.task_id`` (and one model) are attempts at one task.
    Returns the logs kept (in the order given) and the files superseded;
    each task with several attempts draws an :class:`EvalciWarning` that
    names the file kept and those set aside, with their status.
    """
    groups: dict[tuple, list] = {}
    for log in logs:
        tid = log.header["eval"].get("task_id")
        if isinstance(tid, str) and tid:
            groups.setdefault((tid, _model(log)), []).append(log)
    dropped: set[Path] = set()
    for (tid, model), attempts in groups.items():
        if len(attempts) < 2:
            continue
        attempts = sorted(attempts, key=attempt_order)
        final, older = attempts[-1], attempts[:-1]
        dropped |= {a.file for a in older}
        warn(
            f"task {_task(final)!r} ({model}, task_id {tid}) has "
            f"{len(attempts)} attempts (retries by eval_set or eval_retry): "
            f"read the final one, {final.file} (status {_status(final)!r}); "
            "superseded "
            + ", ".join(f"{a.file} (status {_status(a)!r})" for a in older)
            + ". Inspect starts each attempt from the samples the last one "
            "completed, so the final log holds them all; the files set aside "
            "are in df.attrs['evalci_superseded'].",
            EvalciWarning,
        )
    kept = [log for log in logs if log.file not in dropped]
    return kept, sorted(str(f) for f in dropped)


def _under(folder: Path, roots: list[Path]) -> bool:
    folder = folder.resolve()
    return any(folder == r or r in folder.parents for r in roots)


def check_manifests(logs: list, roots: list[Path], task: str | None, is_log) -> None:
    """Warn of an eval set's task without a log, where the set's folder was
    read whole (it, or a folder above it, is in ``roots``, the directories
    passed; or every log in it, by ``is_log``, was read): reading one task's
    files says nothing of the others', and ``task=`` chooses one task."""
    roots = [r.resolve() for r in roots]
    read = {log.file.resolve() for log in logs}
    folders = {log.file.parent for log in logs}
    ids = {log.header["eval"].get("task_id") for log in logs}
    for folder in sorted(folders):
        mf = folder / "eval-set.json"
        if not mf.is_file():
            continue
        manifest = _load_json(mf.read_bytes(), mf)
        tasks = _get(manifest, "tasks", mf, "", kind="a list")
        whole = _under(folder, roots) or all(
            f.resolve() in read for f in folder.iterdir() if is_log(f)
        )
        for t in tasks:
            tid = _get(t, "task_id", mf, "an entry of `tasks`", kind="a string")
            if tid in ids or not whole:
                continue
            if task is not None and t.get("name") != task:
                continue
            warn(
                f"{mf}: the eval set's task {t.get('name')!r} "
                f"({t.get('model')}, task_id {tid}) has no log in {folder} "
                f"(its logs hold {_tasks_found(logs)}); its samples are "
                "missing from the table.",
                EvalciWarning,
            )


def check_overlaps(logs: list) -> None:
    """Refuse two logs of one task and model, not attempts at one run, that
    hold the same sample: neither is the other's retry, so which to read is
    the user's choice (logs that split a task's samples between them are
    read together)."""
    groups: dict[tuple, list] = {}
    for log in logs:
        groups.setdefault((_task(log), _model(log)), []).append(log)
    for (task, model), group in groups.items():
        seen: dict[tuple, Any] = {}
        for log in group:
            for r in log.records:
                key = (str(r["id"]), r["epoch"])
                other = seen.setdefault(key, log)
                if other is log:
                    continue
                tids = [x.header["eval"].get("task_id") for x in (other, log)]
                raise ValueError(
                    f"task {task!r} of {model} is in {_plural(len(group), 'log')} "
                    f"that are not attempts at one run (their eval.task_id "
                    f"differ: {tids[0]} in {other.file}, {tids[1]} in "
                    f"{log.file}), and both hold sample {r['id']!r} epoch "
                    f"{r['epoch']}; read one of them (name its file), or each "
                    "apart."
                )
