"""Inspect AI eval logs (``.eval`` archives and ``.json`` logs) into the tidy table.

:func:`read_inspect` reads each log with ``inspect_ai`` when it is
installed, else with :mod:`json` and :mod:`zipfile` (and zstd, through
:mod:`evalci.io._zip`) following Inspect's own layout; it reads the scores
from the sample summaries unless asked for the full samples, keeps every
sample as a row (errored, invalidated and stopped early ones with their
cause), counts them (``DataFrame.attrs["evalci_samples"]``), and maps score
values as Inspect's ``value_to_float`` does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evalci._base.warnings import EvalciWarning, warn
from evalci.io._shared import (
    KEYS,
    _as_input,
    _files,
    _get,
    _kind_of,
    _load_json,
    _sample_record,
    _tidy_by,
    _whole,
)
from evalci.io._zip import MAX_MEMBER_BYTES, SafeZip
from evalci.io.inspect_sets import (
    check_manifests,
    check_overlaps,
    choose_task,
    resolve_attempts,
)

__all__ = ["read_inspect"]


# inspect_ai.scorer._metric: CORRECT = "C", INCORRECT = "I", PARTIAL = "P",
# NOANSWER = "N"; value_to_float compares these with == before anything else.
_INSPECT_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


def _inspect_float(v: Any, where: str) -> float:
    """Inspect's ``value_to_float()`` (defaults), refusing what it cannot map.

    inspect_ai 0.3.x, ``scorer/_metric.py``: the letters first (exact, case
    sensitive), then numbers and booleans cast to float, then strings
    lower-cased: "yes"/"true" -> 1, "no"/"false" -> 0, finite numeric text ->
    its number. Anything else Inspect logs a warning for and counts 0; we
    raise instead. ``None`` (a missing key of a dict score) becomes NaN.
    """
    if v is None:
        return math.nan
    if isinstance(v, str) and v in _INSPECT_LETTERS:
        return _INSPECT_LETTERS[v]
    if isinstance(v, (bool, int, float)):
        return float(v)
    if isinstance(v, str):
        low = v.lower()
        if low in ("yes", "true"):
            return 1.0
        if low in ("no", "false"):
            return 0.0
        try:
            x = float(low)
        except ValueError:
            x = math.nan
        if math.isfinite(x):
            return x
    raise ValueError(
        f"{where}: the score value {v!r} is not one Inspect's value_to_float "
        "maps to a number (it would log a warning and count it 0); map it "
        "yourself, or pass `scorer=` to read another scorer."
    )


# inspect_ai log/_file.py is_log_file: every .eval file, and a .json file
# whose name starts with an ISO timestamp (not the logs.json manifest).
_INSPECT_JSON = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")


def _is_log(p: Path) -> bool:
    return p.suffix == ".eval" or _INSPECT_JSON.match(p.name) is not None


def _inspect_ai():
    """The inspect_ai package when installed, else None (tests patch this)."""
    try:
        import inspect_ai.log
    except ImportError:
        return None
    return inspect_ai


_OPTION = "read_inspect(..., max_member_bytes=)"
#: the fields of a sample (or summary) the table is built from
_FIELDS = {"id", "epoch", "target", "scores", "error", "limit", "invalidation"}
#: the columns that say why a sample has no valid score (where one does)
_STOPS = ("error", "limit", "invalidated", "stopped_early")


@dataclass
class _Log:
    """One log as read: its header, and one record per (sample id, epoch)."""

    file: Path
    header: dict  # header.json, _journal/start.json, or a .json log
    records: list[dict]  # sample summaries or full samples
    source: str  # "summaries" or "samples"
    doubled: list[str] = field(default_factory=list)  # re-logged sample members


def _record_key(r: Any, file: Path, what: str) -> tuple[Any, int]:
    """A sample's (id, epoch), type-checked: id a string or an integer,
    epoch an integer."""
    if not isinstance(r, dict):
        raise ValueError(f"{file}: an entry of {what} is {_kind_of(r)}, not an object.")
    sid = _get(r, "id", file, what)
    if isinstance(sid, bool) or not isinstance(sid, (int, str)):
        raise ValueError(
            f"{file}: the field `id` in {what} is {_kind_of(sid)}, not a string "
            "or an integer."
        )
    ep = _get(r, "epoch", file, f"{what}, sample {sid!r}")
    if isinstance(ep, bool) or not isinstance(ep, int):
        raise ValueError(
            f"{file}: the field `epoch` in {what}, sample {sid!r} is "
            f"{_kind_of(ep)}, not an integer."
        )
    return sid, ep


def _sample_key(name: str) -> str | None:
    """``samples/{id}_epoch_{e}`` for a sample's member, else None.

    A sample is one member ``samples/{id}_epoch_{e}.json``, or (the chunked
    layout, inspect_ai ``log/_recorders/chunked/format.py``) a folder
    ``samples/{id}_epoch_{e}/`` whose ``sample.json`` is the sample without
    its transcript (``messages/``, ``events/``, ``calls/``, ``attachments/``
    and ``metadata.json`` beside it are not read).
    """
    if not name.startswith("samples/"):
        return None
    rest = name[len("samples/") :]
    if "/" not in rest:
        return name[: -len(".json")] if rest.endswith(".json") else None
    head, _, tail = rest.partition("/")
    return f"samples/{head}" if tail == "sample.json" else None


def _sample_members(z: SafeZip) -> dict[str, str]:
    """Sample key -> member; a sample in both shapes is read as Inspect's
    ``classify_sample_shape`` does (the single member first)."""
    out: dict[str, str] = {}
    for n in z.names:
        key = _sample_key(n)
        if key is not None and (key not in out or not n.endswith("/sample.json")):
            out[key] = n
    return out


_JOURNAL_SUMMARY = re.compile(r"_journal/summaries/(\d+)\.json")


def _summaries(z: SafeZip, file: Path) -> list[dict] | None:
    """The sample summaries: ``summaries.json``, or in a log still being
    written the ``_journal/summaries/{n}.json`` members in order; the last
    row per (id, epoch) counts, as in inspect_ai ``_dedupe_summaries``.
    None when the log has neither."""
    if "summaries.json" in z.info:
        names = ["summaries.json"]
    else:
        found = [(_JOURNAL_SUMMARY.fullmatch(n), n) for n in z.names]
        names = [n for m, n in sorted((int(m[1]), n) for m, n in found if m)]
        if not names:
            return None
    rows: dict[tuple, dict] = {}
    for name in names:
        data = _load_json(z.read(name), file, f"member {name}")
        if not isinstance(data, list):
            raise ValueError(
                f"{file}: member {name} is {_kind_of(data)}, not a list of "
                "sample summaries."
            )
        for r in data:
            sid, ep = _record_key(r, file, f"member {name}")
            rows[(str(sid), ep)] = r
    return list(rows.values())


def _covers(records: list[dict], members: dict[str, str]) -> bool:
    """Whether the summaries name every sample the archive holds."""
    keys = {f"samples/{r['id']}_epoch_{r['epoch']}" for r in records}
    return set(members) <= keys


def _eval_records(z: SafeZip, file: Path, header: dict, samples: bool):
    """(records, source, re-logged members) of a .eval archive."""
    members = _sample_members(z)
    # summaries lack `invalidation` (inspect_ai: "the body carries the error /
    # invalidation state the summary lacks"): an invalidated log is read whole
    if not samples and header.get("invalidated") is not True:
        summ = _summaries(z, file)
        if summ is not None and _covers(summ, members):
            return summ, "summaries", []
    records = []
    for name in members.values():
        # a requeued sample's re-run is written again under its name; Inspect
        # reads the last copy (inspect_ai _read_log), and so does this reader
        r = _load_json(z.read(name, last_wins=True), file, f"member {name}")
        _record_key(r, file, f"member {name}")
        records.append(r)
    return records, "samples", [n for n in members.values() if n in z.duplicates]


def _plain_eval(file: Path, samples: bool, limit: int) -> _Log:
    """A .eval archive read with :class:`SafeZip` (json + zipfile + zstd).

    The layout (inspect_ai ``log/_recorders/eval.py``): ``header.json`` (the
    EvalLog without samples, written last), ``summaries.json``,
    ``reductions.json``, ``samples/{id}_epoch_{e}.json`` (or the chunked
    ``samples/{id}_epoch_{e}/sample.json``), and ``_journal/`` (``start.json``
    and ``summaries/{n}.json``, all a log has while it is being written).
    """
    with SafeZip(file, limit, _OPTION) as z:
        head = "header.json" if "header.json" in z.info else "_journal/start.json"
        if head not in z.info:
            raise ValueError(
                f"{file}: the .eval archive has neither header.json nor "
                "_journal/start.json; is it an Inspect log?"
            )
        header = _load_json(z.read(head), file, f"member {head}")
        _get(header, "eval", file, f"member {head}", kind="an object")
        if head != "header.json":
            header = {"eval": header["eval"], "status": "started"}
        records, source, doubled = _eval_records(z, file, header, samples)
    return _Log(file, header, records, source, doubled)


def _check_size(file: Path, limit: int) -> None:
    size = file.stat().st_size
    if size > limit:
        raise ValueError(
            f"{file} is {size:,} bytes, over the limit of {limit:,} bytes read "
            f"from one log; if the file is trusted, raise it with {_OPTION}."
        )


def _json_log(file: Path, limit: int) -> dict:
    _check_size(file, limit)
    return _load_json(file.read_bytes(), file)


def _plain_json(file: Path, limit: int) -> _Log:
    """A .json log: the whole EvalLog, ``samples`` included."""
    log = _json_log(file, limit)
    _get(log, "eval", file, "the log", kind="an object")
    records = _get(log, "samples", file, "the log (a header-only log?)", kind="a list")
    for r in records:
        _record_key(r, file, "`samples`")
    return _Log(file, log, records, "samples")


def _native(file: Path, lib, samples: bool, limit: int) -> _Log:
    """The same log through ``inspect_ai.log``, after the same member checks.

    inspect_ai 0.3.285 reads every ``samples/*.json`` member as a sample, so
    a log in the chunked layout is read by the plain reader instead.
    """
    doubled: list[str] = []
    members: dict[str, str] = {}
    if file.suffix == ".json":
        _check_size(file, limit)
    else:
        try:
            opened = SafeZip(file, limit, _OPTION)
        except ValueError as e:  # the words inspect_ai's own errors come in
            raise ValueError(
                f"{file} could not be read as an Inspect log: {e}"
            ) from None
        with opened as z:
            members = _sample_members(z)
            if any(n.endswith("/sample.json") for n in members.values()):
                return _plain_eval(file, samples, limit)
            for n in z.names:
                z.check(n, last_wins=_sample_key(n) is not None)
            doubled = [n for n in members.values() if n in z.duplicates]
    try:
        header, records, source = _native_read(file, lib, samples, members)
    except Exception as e:  # pydantic, zip and json errors alike
        raise ValueError(f"{file} could not be read as an Inspect log: {e}") from e
    return _Log(file, header, records, source, doubled if source == "samples" else [])


def _native_read(file: Path, lib, samples: bool, members: dict) -> tuple:
    read = lib.log.read_eval_log
    if file.suffix == ".eval" and not samples:
        header = read(str(file), header_only=True).model_dump(
            mode="json", exclude={"samples"}
        )
        if header.get("invalidated") is not True:
            summ = lib.log.read_eval_log_sample_summaries(str(file))
            records = [s.model_dump(mode="json", include=_FIELDS) for s in summ]
            if _covers(records, members):
                return header, records, "summaries"
    # transcripts are most of a sample's bytes; skip them where inspect_ai can
    skip = {"messages", "events", "store", "attachments"}
    try:
        log = read(str(file), exclude_fields=skip)
    except TypeError:  # an inspect_ai without exclude_fields
        log = read(str(file))
    header = log.model_dump(mode="json", exclude={"samples"})
    records = [s.model_dump(mode="json", include=_FIELDS) for s in log.samples or []]
    return header, records, "samples"


def _text(v: Any, key: str) -> str | None:
    """A sample's `error` / `limit` as text: summaries hold the text, full
    samples an object (``error.message``, ``limit.type``)."""
    if isinstance(v, dict):
        v = v.get(key)
    return None if v is None else str(v)


def _scores(s: dict, file: Path, what: str, scorer) -> dict[str, float]:
    """The sample's score values as numbers, one per column."""
    scores = s.get("scores")
    if scores is None:
        return {}
    _get(s, "scores", file, what, kind="an object")
    out = {}
    for name, score in scores.items():
        if scorer is not None and name != scorer:
            continue
        if not isinstance(score, dict):
            raise ValueError(
                f"{file}: the field `scores.{name}` in {what} is "
                f"{_kind_of(score)}, not an object."
            )
        where = f"{file}, {what}, scorer {name!r}"
        v = _get(score, "value", file, f"scorer {name!r} of {what}")
        if isinstance(v, dict):  # several metrics in one scorer
            out.update({f"{name}_{k}": _inspect_float(x, where) for k, x in v.items()})
        else:
            out[name] = _inspect_float(v, where)
    return out


def _invalidation(v: Any) -> str:
    """An invalidation's words for the ``invalidated`` column: its
    ``ProvenanceData`` (inspect_ai ``log/_edit.py``: timestamp, author,
    reason, metadata) gives its reason, else who invalidated it."""
    if isinstance(v, dict):
        if v.get("reason"):
            return str(v["reason"])
        return f"invalidated by {v['author']}" if v.get("author") else "invalidated"
    return str(v).strip() or "invalidated"


def _early_stops(header: dict, file: Path) -> list[dict]:
    """``results.early_stopping.early_stops``: the samples Inspect's
    EarlyStopping manager never ran (inspect_ai ``util/_early_stopping.py``,
    ``EarlyStop``: id, epoch, reason, metadata); they are in no sample."""
    res = header.get("results")
    if not isinstance(res, dict) or res.get("early_stopping") is None:
        return []
    _get(res, "early_stopping", file, "results", kind="an object")
    what = "results.early_stopping"
    stops = _get(res["early_stopping"], "early_stops", file, what, kind="a list")
    for s in stops:
        _record_key(s, file, f"`{what}.early_stops`")
    return stops


def _outcome(row: dict, values: dict) -> str:
    """Which count a sample goes to: invalidated, errored, scored, unscored."""
    if row["invalidated"] is not None:
        return "invalidated"
    if row["error"] is not None:
        return "errored"
    return "scored" if values else "unscored"


def _inspect_rows(log: _Log, scorer) -> tuple[pd.DataFrame, dict]:
    """The log's rows and its record of ``attrs["evalci_samples"]``.

    Every sample is a row; an invalidated one keeps its row with its values
    NaN (its score is not valid) and ``invalidated`` saying why, and each
    sample the EarlyStopping hook stopped before it ran is a row too, its
    values NaN and ``stopped_early`` holding the stop's reason.
    """
    file = log.file
    spec = _get(log.header, "eval", file, "the log", kind="an object")
    model = _get(spec, "model", file, "the eval spec", kind="a string")
    task = _get(spec, "task", file, "the eval spec", kind="a string")
    counts = dict.fromkeys(("scored", "errored", "unscored", "invalidated"), 0)
    counts["hit_limit"] = 0
    rows, seen = [], set()
    for s in log.records:
        sid, ep = s["id"], s["epoch"]
        seen.add((str(sid), ep))
        what = f"sample {sid!r} epoch {ep}"
        target = s.get("target")
        row = {"input": sid, "run": ep, "system": model, "task": task}
        row["target"] = target if isinstance(target, str) else json.dumps(target)
        row["error"] = _text(s.get("error"), "message")
        row["limit"] = _text(s.get("limit"), "type")
        inv = s.get("invalidation")
        row["invalidated"] = None if inv is None else _invalidation(inv)
        row["stopped_early"] = None
        values = _scores(s, file, what, scorer)
        counts[_outcome(row, values)] += 1
        counts["hit_limit"] += row["limit"] is not None
        if row["invalidated"] is not None:  # the score is not valid: NaN
            values = dict.fromkeys(values, math.nan)
        row.update(values)
        rows.append(row)
    # a stop whose sample was logged anyway (a re-run) is the sample's row
    stops = [
        x
        for x in _early_stops(log.header, file)
        if (str(x["id"]), x["epoch"]) not in seen
    ]
    for x in stops:
        row = dict.fromkeys(_STOPS + ("target",))
        row |= {"input": x["id"], "run": x["epoch"], "system": model, "task": task}
        row["stopped_early"] = str(x.get("reason") or "").strip() or "stopped early"
        rows.append(row)
    empty = [*KEYS, "task", "target", *_STOPS]
    frame = pd.DataFrame(rows, columns=None if rows else empty)
    frame["log_file"] = str(file)
    expected, said = _expected(log.header, file)
    record = _sample_record(
        file, model, task, None, expected, log.source,
        stopped_early=len(stops), **counts,
    )  # fmt: skip
    _warn_counts(log, record, said)
    return frame, record


def _expected(header: dict, file: Path) -> tuple[int | None, str]:
    """How many samples (id x epoch) the header says the log holds."""
    if header.get("results") is not None:
        res = _get(header, "results", file, "the log", kind="an object")
        if res.get("total_samples") is not None:
            n = _get(res, "total_samples", file, "results", kind="a number")
            return _whole(n, file, "total_samples", "results"), "results.total_samples"
    spec = header["eval"]
    ds = spec.get("dataset")
    n = ds.get("samples") if isinstance(ds, dict) else None
    config = spec.get("config")
    epochs = config.get("epochs") if isinstance(config, dict) else None
    if isinstance(n, int) and not isinstance(n, bool):
        e = epochs if isinstance(epochs, int) and epochs > 0 else 1
        return n * e, "eval.dataset.samples x eval.config.epochs"
    return None, ""


def _warn_counts(log: _Log, counts: dict, said: str) -> None:
    file, found, expected = log.file, counts["found"], counts["expected"]
    status = log.header.get("status", "started")
    parts = []
    if status != "success":
        parts.append(f"the log's status is {status!r}, not 'success'")
    if expected is not None and found < expected:
        parts.append(
            f"its header says it holds {expected} samples ({said}) but the file "
            f"has {found}"
            + (
                f" ({k} of them stopped early)"
                if (k := counts["stopped_early"])
                else ""
            )
        )
    if parts:
        warn(
            f"{file}: " + "; ".join(parts) + f"; the table holds the {found} "
            "samples it has, which may not be all.",
            EvalciWarning,
        )
    if log.doubled:
        warn(
            f"{file}: {len(log.doubled)} sample members occur more than once "
            f"({', '.join(log.doubled[:3])}); Inspect writes a requeued "
            "sample's re-run again under its name, and the last copy is read, "
            "as inspect_ai reads it.",
            EvalciWarning,
        )


def _given(paths):
    """``paths`` as given, an iterator made a list (it is read twice)."""
    if isinstance(paths, (str, Path)):
        return [paths]
    return list(paths) if isinstance(paths, Iterable) else paths


def _with_stops(out: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``error``, ``limit``, ``invalidated`` and ``stopped_early`` before
    ``log_file``, each where a sample has one (a clean log's table keeps its
    columns); missing stays missing."""
    stops = [c for c in _STOPS if frame[c].notna().any()]
    if not stops:
        return out
    side = frame[[*KEYS, "task", *stops]].copy()
    side["input"] = _as_input(side["input"])
    side["run"] = side["run"].astype("int64")
    for c in ("system", "task"):
        side[c] = side[c].map(str).astype(str)
    for c in stops:
        text = side[c].map(str).astype(str)
        text[side[c].isna()] = None
        side[c] = text
    attrs = out.attrs
    out = out.merge(side, on=[*KEYS, "task"], how="left", validate="one_to_one")
    order = [c for c in out.columns if c != "log_file"] + ["log_file"]
    out = out[order]
    out.attrs = attrs
    return out


def read_inspect(
    paths,
    *,
    scorer: str | None = None,
    task: str | None = None,
    samples: bool = False,
    max_member_bytes: int = MAX_MEMBER_BYTES,
) -> pd.DataFrame:
    """Read Inspect AI eval logs (``.eval`` or ``.json``) into the tidy table.

    Parameters
    ----------
    paths : path, list of paths, directory or glob
        One or several logs; a directory is searched (recursively) for the
        files Inspect lists as logs: every ``*.eval``, and ``*.json`` whose
        name starts with a timestamp (so the ``logs.json`` manifest is not
        read). Each log's ``eval.model`` is its system, so several models'
        logs give several systems, and each log's ``eval.task`` its task, so
        an eval set's tasks give several tasks (rows side by side: ``task``
        is part of the key). Logs of one ``eval.task_id`` and model are
        attempts at one task (``eval_set`` and ``eval_retry`` write one per
        attempt, each seeded from the last): only the newest is read, with
        a warning naming the files set aside, whether or not the folder
        holds Inspect's ``eval-set.json``.
    scorer : str, optional
        Read only this scorer's values (default: every scorer).
    task : str, optional
        Read only the logs of this task (``eval.task``; default: every
        task found). A name no log holds raises, listing the tasks found.
    samples : bool, default False
        Read the scores of a ``.eval`` log from its full samples
        (``samples/{id}_epoch_{e}.json``, one member each, transcripts
        included) instead of its one ``summaries.json`` member (what
        Inspect's own ``samples_df`` reads). Both give the same table; the
        summaries are read unless the log is invalidated (summaries do not
        say which samples are) or does not summarise every sample it holds.
        A ``.json`` log always holds its full samples.
    max_member_bytes : int, default 256 MiB
        The largest member of a ``.eval`` archive (inflated, checked before
        it is read), or ``.json`` log, that is read; a larger one raises
        :class:`ValueError` naming it. Raise it for a trusted log with
        samples that large.

    Returns
    -------
    pandas.DataFrame
        ``input`` (sample ``id``), ``run`` (sample ``epoch``, from 1),
        ``system`` (``eval.model``), one ``float64`` column per scorer
        (named after it; a dict-valued score gives one column per key,
        ``<scorer>_<key>``), then ``task`` (``eval.task``), ``target`` (the
        sample's target; a list target as JSON), and, each only when some
        sample has one: ``error`` (the error that stopped the sample),
        ``limit`` (the limit that stopped it: ``"token"``, ``"time"``, ...),
        ``invalidated`` (the invalidation's ``reason``, else ``"invalidated
        by <author>"``) and ``stopped_early`` (the reason Inspect's
        EarlyStopping hook gave, else ``"stopped early"``); then
        ``log_file``. Every sample keeps its row: an errored one has NaN
        values (unless it was scored on error) and its message in
        ``error``; an invalidated one has NaN values (its score is not
        valid); a sample stopped early was never run, so it is in no sample
        of the log: its row, from ``results.early_stopping.early_stops``,
        has NaN values. So ``missing=`` (``"raise"`` by default) decides
        what they mean, and counts them by cause.

        ``df.attrs["evalci_samples"]`` accounts for every sample: a list of
        one record per log file, with the keys every reader gives
        (:func:`evalci.sample_counts` makes it a table): ``log_file``, ``system``,
        ``task``, ``split`` (None), ``expected`` (what the header says the
        log holds: ``results.total_samples``, or for a log still being
        written ``eval.dataset.samples`` x ``eval.config.epochs``; None if it
        says nothing), ``found`` (the (sample, epoch) pairs the log accounts
        for: its samples and its early stops, each a row), of which
        ``scored`` (a score and no error), ``errored``, ``invalidated``,
        ``stopped_early`` and ``unscored`` (neither a score nor an error),
        which add up to ``found``; ``hit_limit`` (those a limit stopped:
        they are counted under one of the others too), ``missing``
        (``expected - found``, None when ``expected`` is) and ``source``
        (``"summaries"`` or ``"samples"``). So ``scored + errored +
        invalidated + stopped_early + unscored + missing == expected``.
        (Until this release it was a dict keyed by file.)
        ``df.attrs["evalci_superseded"]`` lists the logs that a newer
        attempt at their task replaced. Rows are sorted by (system, task,
        input, run): select one task (or pass ``by="task"``) before taking
        one score.

    Raises
    ------
    ValueError
        A file that is not an Inspect log, a damaged, encrypted or
        oversized member, two members under one name (other than a re-run
        sample's, which Inspect writes), a missing field or one of the wrong
        JSON type (``scores`` as a list, say): one error naming the file and
        the member or field. Two logs of one task and model that are not
        attempts at one run (their ``eval.task_id`` differ) and hold the
        same sample (naming both files and the sample).

    Warns
    -----
    EvalciWarning
        A log whose status is not ``"success"`` (``"started"``, ``"error"``,
        ``"cancelled"``), or that holds fewer samples than its header says
        (naming both numbers); a task with several attempts (naming the
        file read and those superseded); a task of an eval set without a
        log, when the set's folder is read whole (logs named one by one, or
        ``task=``, choose which tasks are read).

    Notes
    -----
    Score values become numbers as Inspect's ``value_to_float()`` makes them
    (inspect_ai ``scorer/_metric.py``, default arguments): the letters
    ``"C"`` -> 1, ``"P"`` -> 0.5, ``"I"`` -> 0, ``"N"`` (no answer) -> 0,
    compared exactly (``"c"`` is not a letter); ``True``/``False`` and
    numbers -> their float; other strings lower-cased: ``"yes"``/``"true"``
    -> 1, ``"no"``/``"false"`` -> 0, numeric text such as ``"0.25"`` -> its
    number. Anything else, including ``"correct"`` and ``"incorrect"`` and
    list values, Inspect logs a warning for and counts 0; this reader raises
    :class:`ValueError` instead. ``None`` inside a dict score is NaN.

    Members compressed with Zstandard (zip method 93, what Inspect 0.3.285
    writes) are read through :mod:`compression.zstd` (Python 3.14+) or the
    ``backports.zstd`` package, so ``inspect_ai`` is not needed. When it is
    installed its ``read_eval_log`` reads the logs (after the same checks
    of the archive's members); otherwise a plain reader (``json``,
    ``zipfile``) does. Both give the same table. Inspect truncates a long
    target in a summary; read with ``samples=True`` for the whole of it.

    Examples
    --------
    >>> import json, tempfile, zipfile, pathlib
    >>> from evalci.io.readers import read_inspect
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> spec = {"created": "2025-01-01T00:00:00+00:00", "task": "gpqa",
    ...         "dataset": {}, "model": "openai/gpt-4o", "config": {}}
    >>> with zipfile.ZipFile(d / "gpqa.eval", "w") as z:
    ...     header = {"version": 2, "status": "success", "eval": spec}
    ...     z.writestr("header.json", json.dumps(header))
    ...     for i in range(4):
    ...         for epoch in (1, 2):
    ...             v = "C" if (i + epoch) % 3 else "I"
    ...             s = {"id": i, "epoch": epoch, "input": "?", "target": "A",
    ...                  "scores": {"choice": {"value": v}}}
    ...             z.writestr(f"samples/{i}_epoch_{epoch}.json", json.dumps(s))
    >>> df = read_inspect(d / "gpqa.eval")
    >>> df[["input", "run", "system", "choice"]].head(3)
       input  run         system  choice
    0      0    1  openai/gpt-4o     1.0
    1      0    2  openai/gpt-4o     1.0
    2      1    1  openai/gpt-4o     1.0
    >>> [(c["found"], c["scored"]) for c in df.attrs["evalci_samples"]]
    [(8, 8)]
    """
    paths = _given(paths)
    files = _files(paths, ("*.eval", "*.json"), "paths", "Inspect log", _is_log)
    if isinstance(max_member_bytes, bool) or not isinstance(max_member_bytes, int):
        raise TypeError(
            f"`max_member_bytes` must be an integer; got {max_member_bytes!r}."
        )
    lib = _inspect_ai()
    logs = []
    for f in files:
        if f.suffix not in (".eval", ".json"):
            raise ValueError(
                f"{f}: an Inspect log ends in .eval or .json; got {f.suffix!r}."
            )
        if lib:
            logs.append(_native(f, lib, samples, max_member_bytes))
        elif f.suffix == ".eval":
            logs.append(_plain_eval(f, samples, max_member_bytes))
        else:
            logs.append(_plain_json(f, max_member_bytes))
    logs = choose_task(logs, task)
    roots = [Path(str(p)) for p in paths if Path(str(p)).is_dir()]
    check_manifests(logs, roots, task, _is_log)
    logs, superseded = resolve_attempts(logs)
    check_overlaps(logs)
    frames, counts = [], []
    for log in logs:
        frame, record = _inspect_rows(log, scorer)
        frames.append(frame)
        counts.append(record)
    frame = pd.concat(frames, ignore_index=True)
    meta = ["task", "target", "log_file"]
    fixed = [*KEYS, "task", "target", *_STOPS, "log_file"]
    values = [c for c in frame.columns if c not in fixed]
    names = ", ".join(str(log.file) for log in logs)
    if scorer is not None and not values:
        raise ValueError(
            f"`scorer`: no sample in {names} has a score from {scorer!r}; use "
            "one the logs hold, or scorer=None for all."
        )
    if not values:
        raise ValueError(f"{names}: no sample has any score.")
    out = _with_stops(_tidy_by(frame, values, meta, ["task"]), frame)
    out.attrs["evalci_samples"] = counts
    out.attrs["evalci_superseded"] = superseded
    return out
