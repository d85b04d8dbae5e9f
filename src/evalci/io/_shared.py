"""What the readers share: files from paths, JSON fields, and the tidy table.

:func:`_files` resolves a path, list, directory or glob into files;
:func:`_load_json`, :func:`_json_lines` and :func:`_get` load JSON (or JSON Lines) and read its fields with
errors that name the file and the field; :func:`_tidy` orders, types and
sorts the columns of the table every reader returns (described in
:mod:`evalci.io.readers`) and refuses duplicate (system, input, run) keys;
:func:`_sample_record` is one record of ``df.attrs["evalci_samples"]``, the
same keys for every reader; :func:`_with_facets` appends the facet columns
(prompt, few-shot set, grader, engine, seed) a log records.
"""

from __future__ import annotations

import glob as _glob
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalci._base.warnings import EvalciWarning, warn

KEYS = ["input", "run", "system"]

#: The keys of a record of ``df.attrs["evalci_samples"]``, in order.
SAMPLE_KEYS = (
    "log_file",
    "system",
    "task",
    "split",
    "expected",
    "found",
    "scored",
    "errored",
    "hit_limit",
    "invalidated",
    "stopped_early",
    "unscored",
    "missing",
    "source",
)
#: The counts of a record that add up to ``found`` (``hit_limit`` overlaps them).
OUTCOMES = ("scored", "errored", "invalidated", "stopped_early", "unscored")


def _sample_record(
    log_file, system, task, split, expected, source, **counts: int
) -> dict:
    """One record of ``df.attrs["evalci_samples"]``: one log file (and task,
    and split). ``counts`` are the outcomes (a format that records no such
    cause gives 0) and ``hit_limit``; ``found`` is their sum, and ``missing``
    what the log says it should hold beyond that (None if it says nothing).
    """
    unknown = set(counts) - set(OUTCOMES) - {"hit_limit"}
    if unknown:  # a reader's bug, not the user's
        raise TypeError(f"unknown sample counts {sorted(unknown)}")
    found = sum(int(counts.get(k, 0)) for k in OUTCOMES)
    rec = {
        "log_file": None if log_file is None else str(log_file),
        "system": None if system is None else str(system),
        "task": None if task is None else str(task),
        "split": None if split is None else str(split),
        "expected": None if expected is None else int(expected),
        "found": found,
    }
    rec |= {k: int(counts.get(k, 0)) for k in SAMPLE_KEYS[6:12]}
    rec["missing"] = None if expected is None else max(int(expected) - found, 0)
    rec["source"] = source
    return rec


def _files(
    paths, patterns: tuple[str, ...], arg: str, what: str, keep=lambda p: True
) -> list[Path]:
    """Resolve a path, a list of paths, a directory or a glob into files.

    ``keep`` filters what a directory search finds (files named are kept).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    elif not isinstance(paths, Iterable):
        raise TypeError(
            f"`{arg}` must be a path, a list of paths, a directory or a glob; "
            f"got {type(paths).__name__}."
        )
    found: list[Path] = []
    for p in paths:
        text = str(p)
        if any(c in text for c in "*?[") and not Path(text).exists():
            hits = sorted(Path(h) for h in _glob.glob(text, recursive=True))
            if not hits:
                raise ValueError(f"`{arg}`: no file matches {text!r}.")
            found += [h for h in hits if h.is_file()]
        elif Path(text).is_dir():
            hits = sorted(
                {h for pat in patterns for h in Path(text).rglob(pat) if keep(h)}
            )
            if not hits:
                raise ValueError(
                    f"`{arg}`: the directory {text} holds no {what} "
                    f"(looked for {', '.join(patterns)})."
                )
            found += hits
        elif Path(text).is_file():
            found.append(Path(text))
        else:
            raise ValueError(f"`{arg}`: {text} does not exist.")
    if not found:
        raise ValueError(f"`{arg}` names no file.")
    return list(dict.fromkeys(found))


def _load_json(text: str | bytes, file, part: str = "") -> Any:
    """Parse JSON; bytes that are not UTF-8, invalid JSON and nesting too deep
    to parse become one ValueError that names the file (and ``part``)."""
    where = f"{file}" + (f" ({part})" if part else "")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise ValueError(
                f"{where} is not UTF-8 text (byte {e.start}): not a log this "
                "reader knows; is it the right file?"
            ) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(
            f"{where}: the JSON is nested too deeply to read; not a log this "
            "reader knows."
        ) from None
    except ValueError as e:
        raise ValueError(f"{where} is not valid JSON: {e}.") from None


def _json_lines(file: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON)`` of each non-blank line, read lazily."""
    with open(file, "rb") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                yield n, _load_json(line, file, f"line {n}")


#: JSON types by the words an error uses for them
_KINDS = {
    "an object": dict,
    "a list": list,
    "a string": str,
    "a number": (int, float),
}


def _kind_of(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    for word, t in _KINDS.items():
        if isinstance(v, t):
            return word
    return "null" if v is None else type(v).__name__


def _get(d: Any, path: str, file, what: str = "", kind: str | None = None) -> Any:
    """``d['a']['b']`` for ``path='a.b'``; a missing field, or a field of the
    wrong JSON type (``kind``: 'an object', 'a list', 'a string', 'a number'),
    names the file, the field and what it holds."""
    where = f" in {what}" if what else ""
    cur = d
    walked = []
    for part in path.split("."):
        if not isinstance(cur, dict):
            at = ".".join(walked) or "the top level"
            raise ValueError(
                f"{file}: `{at}`{where} is {_kind_of(cur)}, where an object "
                f"holding `{part}` belongs; is this file in the format the "
                "reader expects?"
            )
        if part not in cur:
            raise ValueError(
                f"{file}: the required field `{path}` is missing{where}; "
                "is this file in the format the reader expects?"
            )
        cur = cur[part]
        walked.append(part)
    if kind is not None and (
        not isinstance(cur, _KINDS[kind]) or isinstance(cur, bool)
    ):
        raise ValueError(
            f"{file}: the field `{path}`{where} is {_kind_of(cur)}, not {kind}."
        )
    return cur


def _whole(v: Any, file, field: str, what: str = "") -> int:
    """A JSON field that counts something (``3``, or ``3.0``) as an int; a
    fraction, text, a boolean or null raises, naming the file, where and the
    field: never truncated."""
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or not np.isfinite(v)
        or not float(v).is_integer()
    ):
        where = f" in {what}" if what else ""
        raise ValueError(
            f"{file}: the field `{field}`{where} is {v!r} ({_kind_of(v)}), not "
            "a whole number."
        )
    return int(v)


def _text_or_missing(v):
    """A metadata value as text; missing (None, or the NaN pandas may put in
    its place) stays missing rather than becoming the string 'nan'."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    return str(v)


def _as_input(col: pd.Series) -> pd.Series:
    """int64 when every id is an integer, strings otherwise (stable dtypes)."""
    vals = col.tolist()
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals):
        return col.astype("int64")
    return col.map(str).astype(str)


def _tidy(
    frame: pd.DataFrame, values: list[str], meta: list[str], ints: tuple = ()
) -> pd.DataFrame:
    """Order, type and sort the columns; refuse duplicate keys.

    Metadata columns are strings (missing stays missing), those in ``ints``
    int64.
    """
    out = frame[KEYS + values + meta].copy()
    out["input"] = _as_input(out["input"])
    out["run"] = out["run"].astype("int64")
    out["system"] = out["system"].map(str).astype(str)
    for c in values:
        out[c] = out[c].astype("float64")
    for c in meta:
        if c in ints:
            out[c] = out[c].astype("int64")
            continue
        out[c] = out[c].map(_text_or_missing).astype(str)
    dup = out.duplicated(KEYS, keep=False)
    if dup.any():
        row = out.loc[dup, ["system", "input", "run"]].iloc[0]
        key = tuple(getattr(v, "item", lambda v=v: v)() for v in row)
        src = out.loc[dup, "log_file"].unique() if "log_file" in out else []
        raise ValueError(
            f"(system, input, run) = {key} occurs more than once"
            + (f" (in {', '.join(map(str, src))})" if len(src) else "")
            + "; each must be one row: read one task's logs at a time, or "
            "name the run and system that tell the rows apart."
        )
    out = out.sort_values(["system", "input", "run"], kind="stable")
    return out.reset_index(drop=True)


def _tidy_by(
    frame: pd.DataFrame,
    values: list[str],
    meta: list[str],
    by: list[str],
    ints: tuple = (),
) -> pd.DataFrame:
    """:func:`_tidy` with the metadata columns ``by`` (e.g. ``task``) in the key.

    Rows of different ``by`` values may share (system, input, run): two tasks
    read together are two tables side by side, never one key read twice.
    Sorted by (system, *by, input, run).
    """
    parts = [
        _tidy(g, values, meta, ints)
        for _, g in frame.groupby(by, sort=False, dropna=False)
    ]
    out = pd.concat(parts, ignore_index=True)
    out["input"] = _as_input(out["input"])  # one dtype across the groups
    out = out.sort_values(["system", *by, "input", "run"], kind="stable")
    return out.reset_index(drop=True)


def _sha256(text: str) -> str:
    """The SHA-256 hex digest of ``text`` (UTF-8): lm-eval's ``hash_string``,
    the form its ``chat_template_sha`` and ``system_instruction_sha`` take."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _facet_dtype(values: list) -> str | None:
    """``boolean``, ``Int64`` or ``float64`` when every value found is of that
    kind, else None (text)."""
    if values and all(isinstance(v, bool) for v in values):
        return "boolean"
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        return None
    return "Int64" if all(isinstance(v, int) for v in values) else "float64"


def _with_facets(out: pd.DataFrame, facets: dict[str, dict]) -> pd.DataFrame:
    """``out`` with one column per facet appended, each log's rows taking the
    values its log records (``facets``: log file -> {column: value}).

    A column is added only when some log records it; a log that does not has
    missing values in it. Whole numbers are ``Int64``, other numbers
    ``float64``, booleans ``boolean``, anything else text (missing stays
    missing). A facet named as a column the table already has (a scorer
    named ``grader``, say) is left out, with a warning.
    ``out.attrs["evalci_facets"]`` lists the columns added.
    """
    names: dict[str, None] = {}
    for found in facets.values():
        names.update(dict.fromkeys(found))
    taken = [c for c in names if c in out.columns]
    if taken:
        warn(
            f"the facets {taken} are not added as columns: the table already "
            "has columns of those names (from the scores).",
            EvalciWarning,
        )
    attrs = dict(out.attrs)
    out = out.copy()
    files = out["log_file"]
    added = []
    for c in (c for c in names if c not in taken):
        by_file = {f: found.get(c) for f, found in facets.items()}
        kind = _facet_dtype([v for v in by_file.values() if v is not None])
        col = files.map(lambda f, b=by_file: b.get(f))
        if kind is None:
            out[c] = col.map(_text_or_missing).astype(str)
        else:
            out[c] = pd.Series(col.tolist(), index=out.index, dtype=kind)
        added.append(c)
    out.attrs = attrs | {"evalci_facets": added}
    return out
