"""Inspect AI eval logs (``.eval`` archives and ``.json`` logs) into the tidy table.

:func:`read_inspect` reads each log with ``inspect_ai`` when it is
installed, else with :mod:`json` and :mod:`zipfile` following Inspect's own
layout, and maps score values as Inspect's ``value_to_float`` does.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd

from evalci._base.warnings import EvalciWarning, warn
from evalci.io._shared import KEYS, _files, _get, _load_json, _tidy

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


def _inspect_plain(file: Path) -> tuple[dict, list[dict], str]:
    """(eval spec, samples, status) of a .eval or .json log, with json + zipfile.

    The .eval layout (inspect_ai ``log/_recorders/eval.py``): ``header.json``
    (the EvalLog without samples), ``samples/<id>_epoch_<n>.json`` (one
    EvalSample each), ``summaries.json``, ``reductions.json`` and a
    ``_journal/`` folder (``start.json`` holds the spec while a run is in
    progress and ``header.json`` is not yet written).
    """
    if file.suffix == ".json":
        log = _load_json(file.read_bytes(), file)
        spec = _get(log, "eval", file, "the log")
        samples = _get(log, "samples", file, "the log (a header-only log?)")
        return spec, samples, log.get("status", "started")
    try:
        with zipfile.ZipFile(file) as z:
            names = list(dict.fromkeys(z.namelist()))
            head = "header.json" if "header.json" in names else "_journal/start.json"
            if head not in names:
                raise ValueError(
                    f"{file}: the .eval archive has neither header.json nor "
                    "_journal/start.json; is it an Inspect log?"
                )
            log = _load_json(z.read(head), file, f"member {head}")
            spec = _get(log, "eval", file, head)
            status = (
                log.get("status", "started") if head == "header.json" else "started"
            )
            samples = [
                _load_json(z.read(n), file, f"member {n}")
                for n in names
                if n.startswith("samples/") and n.endswith(".json")
            ]
    except zipfile.BadZipFile:
        raise ValueError(
            f"{file} is not a zip archive; an Inspect .eval log is one "
            "(was it truncated?)."
        ) from None
    return spec, samples, status


def _inspect_native(file: Path, inspect_ai) -> tuple[dict, list[dict], str]:
    """The same (spec, samples, status) through ``inspect_ai.log.read_eval_log``."""
    # transcripts are most of a sample's bytes; skip them where inspect_ai can
    # (exclude_fields: .eval logs in recent inspect_ai; .json logs ignore it)
    skip = {"messages", "events", "store", "attachments"}
    try:
        try:
            log = inspect_ai.log.read_eval_log(str(file), exclude_fields=skip)
        except TypeError:  # an inspect_ai without exclude_fields
            log = inspect_ai.log.read_eval_log(str(file))
    except Exception as e:  # pydantic, zip and json errors alike
        raise ValueError(f"{file} could not be read as an Inspect log: {e}") from e
    spec = {"model": log.eval.model, "task": log.eval.task}
    samples = [
        {
            "id": s.id,
            "epoch": s.epoch,
            "target": s.target,
            "scores": None
            if s.scores is None
            else {k: {"value": sc.value} for k, sc in s.scores.items()},
        }
        for s in log.samples or []
    ]
    return spec, samples, log.status


def _inspect_rows(file: Path, spec: dict, samples: list[dict], scorer) -> pd.DataFrame:
    model = _get(spec, "model", file, "the eval spec")
    task = _get(spec, "task", file, "the eval spec")
    rows = []
    for s in samples:
        sid = _get(s, "id", file, "a sample")
        ep = _get(s, "epoch", file, f"sample {sid!r}")
        target = s.get("target")
        row = {"input": sid, "run": ep, "system": model, "task": task}
        row["target"] = target if isinstance(target, str) else json.dumps(target)
        for name, score in (s.get("scores") or {}).items():
            if scorer is not None and name != scorer:
                continue
            where = f"{file}, sample {sid!r} epoch {ep}, scorer {name!r}"
            v = _get(score, "value", file, f"scorer {name!r} of sample {sid!r}")
            if isinstance(v, dict):  # several metrics in one scorer
                row.update(
                    {f"{name}_{k}": _inspect_float(x, where) for k, x in v.items()}
                )
            else:
                row[name] = _inspect_float(v, where)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=None if rows else KEYS)
    frame["log_file"] = str(file)
    return frame


def read_inspect(paths, *, scorer: str | None = None) -> pd.DataFrame:
    """Read Inspect AI eval logs (``.eval`` or ``.json``) into the tidy table.

    Parameters
    ----------
    paths : path, list of paths, directory or glob
        One or several logs; a directory is searched (recursively) for the
        files Inspect lists as logs: every ``*.eval``, and ``*.json`` whose
        name starts with a timestamp (so the ``logs.json`` manifest is not
        read). Each log's ``eval.model`` is its system, so several models'
        logs give several systems.
    scorer : str, optional
        Read only this scorer's values (default: every scorer).

    Returns
    -------
    pandas.DataFrame
        ``input`` (sample ``id``), ``run`` (sample ``epoch``, from 1),
        ``system`` (``eval.model``), one ``float64`` column per scorer
        (named after it; a dict-valued score gives one column per key,
        ``<scorer>_<key>``), then ``task`` (``eval.task``), ``target`` (the
        sample's target; a list target as JSON) and ``log_file``. A sample
        without scores (an errored sample) has NaN values.

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

    A log whose status is not ``"success"`` (``"started"``, ``"error"``,
    ``"cancelled"``) draws an :class:`~evalci.EvalciWarning`: it may hold
    only some of the samples.

    When ``inspect_ai`` is installed its ``read_eval_log`` reads the logs;
    otherwise a plain reader (``json`` and ``zipfile``) does. Both give the
    same table.

    Examples
    --------
    >>> import json, tempfile, zipfile, pathlib
    >>> from evalci.readers import read_inspect
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
    """
    files = _files(paths, ("*.eval", "*.json"), "paths", "Inspect log", _is_log)
    lib = _inspect_ai()
    frames = []
    for f in files:
        if f.suffix not in (".eval", ".json"):
            raise ValueError(
                f"{f}: an Inspect log ends in .eval or .json; got {f.suffix!r}."
            )
        spec, samples, status = _inspect_native(f, lib) if lib else _inspect_plain(f)
        if status != "success":
            warn(
                f"{f}: the log's status is {status!r}, not 'success'; the table "
                f"holds the {len(samples)} samples it has, which may not be all.",
                EvalciWarning,
            )
        frames.append(_inspect_rows(f, spec, samples, scorer))
    frame = pd.concat(frames, ignore_index=True)
    meta = ["task", "target", "log_file"]
    values = [c for c in frame.columns if c not in KEYS + meta]
    if scorer is not None and not values:
        raise ValueError(
            f"`scorer`: no sample in {', '.join(map(str, files))} has a score "
            f"from {scorer!r}; use one the logs hold, or scorer=None for all."
        )
    if not values:
        raise ValueError(f"{', '.join(map(str, files))}: no sample has any score.")
    return _tidy(frame, values, meta)
