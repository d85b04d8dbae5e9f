"""Opening one Inspect AI log: its header and one record per sample.

A ``.eval`` archive is read through :class:`evalci.io._zip.SafeZip` (its
members checked before any is read) from the sample summaries, or from the
full samples when asked or when the summaries cannot say everything; a
``.json`` log holds its full samples. With ``inspect_ai`` installed its
``read_eval_log`` reads the log after the same member checks. The rows are
built in :mod:`evalci.io.inspect_rows`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalci.io._shared import _get, _kind_of, _load_json
from evalci.io._zip import SafeZip

_OPTION = "read_inspect(..., max_member_bytes=)"
#: the fields of a sample (or summary) the table is built from
_FIELDS = {"id", "epoch", "target", "scores", "error", "limit", "invalidation"}


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
