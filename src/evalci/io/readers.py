"""Readers: from the logs of evaluation frameworks to evalci's tidy table.

Each reader returns one row per (input, run, system) with the value columns
the log holds, plus metadata columns, so that every function of the library
takes its output as it is: :func:`read_inspect` (Inspect AI ``.eval`` and
``.json`` logs), :func:`read_lm_eval` (lm-evaluation-harness
``--log_samples`` output), :func:`read_helm` (HELM
``per_instance_stats.json``) and :func:`read_jsonl` (any JSON Lines, CSV or
Parquet file, with a column mapping). Nothing else in the library reads
files except :func:`evalci.load_example`. Each format is read as its
framework's source writes it (the module and class are named where it is
read); see ``docs/reading-logs.md`` for the field-to-column tables.

The table every reader returns
------------------------------
``input``
    The framework's input id: ``int64`` when every id read is an integer,
    strings otherwise (pandas' default string dtype).
``run``
    ``int64``: the framework's own run number (Inspect's ``epoch`` counts
    from 1; lm-eval's repeats and HELM's ``train_trial_index`` from 0).
``system``
    Strings: the model the framework names.
value columns
    ``float64``, one per score or metric, named after it.
metadata columns
    Strings, missing values as NaN (``task``, ``log_file``, and whatever else
    the reader states; lm-eval's ``n_resps`` is ``int64``).

Rows are sorted by (system, input, run) and numbered from 0. The files read
are never written to. A missing file, a file in the wrong format or a
missing field raises one :class:`ValueError` that names the file and what is
missing; two files holding the same (system, input, run) raise one too.
"""

from __future__ import annotations

import glob as _glob
import json
import math
import re
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalci._base.warnings import EvalciWarning, warn

__all__ = ["read_helm", "read_inspect", "read_jsonl", "read_lm_eval"]

KEYS = ["input", "run", "system"]


# --------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------


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
    where = f"{file}" + (f" ({part})" if part else "")
    try:
        return json.loads(text)
    except ValueError as e:
        raise ValueError(f"{where} is not valid JSON: {e}.") from None


def _get(d: Any, path: str, file, what: str = "") -> Any:
    """``d['a']['b']`` for ``path='a.b'``; a missing field names file and field."""
    cur = d
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            where = f" in {what}" if what else ""
            raise ValueError(
                f"{file}: the required field `{path}` is missing{where}; "
                "is this file in the format the reader expects?"
            )
    return cur


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
        out[c] = out[c].map(lambda v: v if v is None else str(v)).astype(str)
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


# --------------------------------------------------------------------------
# Inspect AI
# --------------------------------------------------------------------------

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


# --------------------------------------------------------------------------
# lm-evaluation-harness
# --------------------------------------------------------------------------

# lm_eval/loggers/evaluation_tracker.py: samples_<task>_<date_id>.jsonl and
# results_<date_id>.json, date_id = datetime.now().isoformat() with ':' -> '-'.
_LM_SAMPLES = re.compile(
    r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$"
)
# The fields of a logged sample other than its metrics (evaluator.py); older
# lm-eval versions write no "metrics" list, so the rest are the metrics.
_LM_FIELDS = frozenset(
    "doc_id doc target arguments resps filtered_resps filter metrics doc_hash "
    "prompt_hash target_hash".split()
)
# GeneralConfigTracker._get_model_name: the first of these keys in model_args.
_LM_MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def _lm_system(results: dict | None, folder: Path) -> str:
    """The model a results file names, else the folder (model_name_sanitized)."""
    if not results:
        return folder.name
    if results.get("model_name"):
        return str(results["model_name"])
    args = (results.get("config") or {}).get("model_args")
    if isinstance(args, dict):
        for key in _LM_MODEL_KEYS:
            if key in args:
                return str(args[key])
    elif isinstance(args, str):
        for key in _LM_MODEL_KEYS:
            if f"{key}=" in args:
                return args.split(f"{key}=")[1].split(",")[0]
    for name in (
        results.get("model_name_sanitized"),
        (results.get("config") or {}).get("model"),
    ):
        if name:
            return str(name)
    return folder.name


def _lm_results(sample_file: Path, date: str) -> dict | None:
    """The results JSON written beside a samples file in the same run."""
    hits = [
        f
        for f in sorted(sample_file.parent.glob(f"*_{date}.json"))
        if not f.name.startswith("samples_")
    ]
    return _load_json(hits[0].read_bytes(), hits[0]) if hits else None


def _lm_lines(file: Path) -> list[dict]:
    lines = []
    with open(file, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                d = _load_json(line, file, f"line {n}")
                if not isinstance(d, dict):
                    raise ValueError(
                        f"{file}, line {n}: a sample line is a JSON object."
                    )
                _get(d, "doc_id", file, f"line {n}")
                lines.append(d)
    if not lines:
        raise ValueError(f"{file} holds no sample line.")
    return lines


def _lm_number(v) -> float | None:
    return float(v) if isinstance(v, (bool, int, float)) else None


def _lm_logged(
    lines: list[dict], file: Path, filter: str | None
) -> tuple[list[dict], list[str]]:
    """Rows with the logged metrics: one per (doc, filter) -> one per doc."""
    filters = list(dict.fromkeys(d.get("filter", "none") for d in lines))
    if filter is not None:
        if filter not in filters:
            raise ValueError(
                f"`filter`: {file} has no filter {filter!r}; it has {filters}."
            )
        lines = [d for d in lines if d.get("filter", "none") == filter]
    several = filter is None and len(filters) > 1
    rows: dict[Any, dict] = {}
    values: dict[str, None] = {}
    corpus: set[str] = set()
    for d in lines:
        row = rows.setdefault(d["doc_id"], {"input": d["doc_id"], "run": 0})
        names = d.get("metrics", [k for k in d if k not in _LM_FIELDS])
        for m in names:
            x = _lm_number(_get(d, m, file, f"doc_id {d['doc_id']}"))
            # lm-eval names a metric under a filter "metric,filter" (results_*.json)
            col = f"{m},{d.get('filter', 'none')}" if several else m
            if x is None:  # a corpus-level metric (bleu, ...): no per-doc value
                corpus.add(col)
                continue
            row[col] = x
            values[col] = None
        row["target"] = d.get("target")
        row["n_resps"] = len((d.get("resps") or [[]])[0])
    if corpus - set(values):
        warn(
            f"{file}: the metrics {sorted(corpus - set(values))} hold no number per "
            "document (corpus-level metrics); they are left out.",
            EvalciWarning,
        )
    return list(rows.values()), list(values)


def _lm_scored(lines: list[dict], file: Path, score: Callable) -> list[dict]:
    """One row per repeat: ``score(responses, sample)`` on the raw ``resps``."""
    seen, rows = set(), []
    for d in lines:
        if d["doc_id"] in seen:  # the same raw resps under every filter
            continue
        seen.add(d["doc_id"])
        resps = _get(d, "resps", file, f"doc_id {d['doc_id']}")
        k = min(len(r) for r in resps) if resps else 0
        for r in range(k):
            rows.append(
                {
                    "input": d["doc_id"],
                    "run": r,
                    "score": float(score([req[r] for req in resps], d)),
                    "target": d.get("target"),
                    "n_resps": k,
                }
            )
    return rows


def read_lm_eval(
    path,
    *,
    task: str | None = None,
    filter: str | None = None,
    score: Callable[[list, dict], float] | None = None,
) -> pd.DataFrame:
    """Read lm-evaluation-harness ``--log_samples`` output into the tidy table.

    Parameters
    ----------
    path : path
        A ``samples_<task>_<date>.jsonl`` file, or a folder searched
        recursively for them (an ``--output_path`` with one sub-folder per
        model gives one system per model). The ``results_<date>.json``
        written beside each samples file in the same run names the model.
    task : str, optional
        Read only this task's samples files (default: every task found).
    filter : str, optional
        Read only this filter's metrics (e.g. ``"strict-match"``). By
        default a task logged under one filter (``"none"`` for most
        multiple-choice tasks) gives columns named after the metrics
        (``acc``, ``exact_match``); under several filters, the columns are
        named ``"<metric>,<filter>"`` as in ``results_*.json``.
    score : callable, optional
        ``score(responses, sample) -> float``, to score every repeat as its
        own run: ``responses`` is the list of that repeat's raw responses,
        one per request of the document (one for a generation task), as
        strings; ``sample`` is the sample's JSON line (``doc``, ``target``,
        ...). The table then has one ``score`` column instead of the logged
        metrics.

    Returns
    -------
    pandas.DataFrame
        ``input`` (``doc_id``), ``run``, ``system``, the value columns, then
        ``task`` (from the file name), ``target``, ``n_resps`` (responses per
        request, i.e. the task's ``repeats``) and ``log_file``.

    Notes
    -----
    What is recorded per repeat (lm_eval 0.4, ``evaluator.py``): with
    ``repeats: K`` each request is sent K times and the K responses are
    logged in ``resps`` (as strings); the task's filter (``take_first`` by
    default, or ``majority_vote``, ``take_first_k``, ...) then turns them
    into ``filtered_resps`` and ``process_results`` computes each metric
    **once per document** from those. The per-repeat metrics are never
    computed, so they cannot be read back: without ``score=`` the table has
    one run per document (``run = 0``) holding the logged metric, and warns
    when K > 1. With ``score=``, all K runs are recovered, scored by your
    function from the raw responses (lm-eval's own answer extraction and
    metric are not re-run).

    System: the results file's ``model_name``, else the model named in
    ``config.model_args`` (``pretrained=``, ``model=``, ... as lm-eval reads
    it), else ``model_name_sanitized`` or ``config.model``; with no results
    file, the samples file's folder (lm-eval names it after the model).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from evalci.readers import read_lm_eval
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "EleutherAI__pythia-160m"
    >>> d.mkdir()
    >>> date = "2024-05-01T12-30-45.123456"
    >>> res = {"results": {"arc_easy": {"acc,none": 0.5}},
    ...        "config": {"model": "hf",
    ...                   "model_args": "pretrained=EleutherAI/pythia-160m"},
    ...        "model_name": "EleutherAI/pythia-160m"}
    >>> _ = (d / f"results_{date}.json").write_text(json.dumps(res))
    >>> lines = [{"doc_id": i, "target": "0", "resps": [[["-1.0", "False"]]],
    ...           "filtered_resps": [["-1.0", "False"]], "filter": "none",
    ...           "metrics": ["acc"], "acc": float(i % 2)} for i in range(4)]
    >>> _ = (d / f"samples_arc_easy_{date}.jsonl").write_text(
    ...     "\\n".join(json.dumps(x) for x in lines))
    >>> read_lm_eval(d)[["input", "run", "system", "acc", "task"]]
       input  run                  system  acc      task
    0      0    0  EleutherAI/pythia-160m  0.0  arc_easy
    1      1    0  EleutherAI/pythia-160m  1.0  arc_easy
    2      2    0  EleutherAI/pythia-160m  0.0  arc_easy
    3      3    0  EleutherAI/pythia-160m  1.0  arc_easy
    """
    files = _files(path, ("samples_*.jsonl",), "path", "lm-eval samples file")
    frames = []
    for f in files:
        m = _LM_SAMPLES.match(f.name)
        if m is None:
            raise ValueError(
                f"{f}: an lm-eval samples file is named "
                "samples_<task>_<date>.jsonl (--log_samples)."
            )
        if task is not None and m["task"] != task:
            continue
        lines = _lm_lines(f)
        if score is not None:
            rows, values = _lm_scored(lines, f, score), ["score"]
        else:
            rows, values = _lm_logged(lines, f, filter)
            k = max(r["n_resps"] for r in rows)
            if k > 1:
                warn(
                    f"{f}: each request holds {k} responses (repeats={k}) but "
                    "lm-eval records each metric once per document, from the "
                    "filtered responses; the table has one run per document. "
                    "Pass `score=` to score every response as a run.",
                    EvalciWarning,
                )
        frame = pd.DataFrame(rows)
        frame["system"] = _lm_system(_lm_results(f, m["date"]), f.parent)
        frame["task"], frame["log_file"] = m["task"], str(f)
        frames.append(frame)
    if not frames:
        raise ValueError(f"`task`: no samples file of task {task!r} under {path}.")
    frame = pd.concat(frames, ignore_index=True)
    meta = ["task", "target", "n_resps", "log_file"]
    values = [c for c in frame.columns if c not in KEYS + meta]
    if not values:
        raise ValueError(f"{path}: no sample has a numeric metric.")
    return _tidy(frame, values, meta, ints=("n_resps",))


# --------------------------------------------------------------------------
# HELM
# --------------------------------------------------------------------------


def _helm_stat(entry: dict, stat: str, split, file) -> dict | None:
    """The entry's Stat named ``stat`` (and ``split``), None when absent."""
    hits = [
        s
        for s in _get(entry, "stats", file, f"instance {entry.get('instance_id')!r}")
        if _get(s, "name.name", file, "a stat") == stat
        and (split is None or s["name"].get("split") == split)
    ]
    if len(hits) > 1:
        where = f"{file}, instance {entry['instance_id']!r}"
        raise ValueError(
            f"{where}: {len(hits)} stats are named {stat!r} (splits "
            f"{sorted({str(h['name'].get('split')) for h in hits})}); pass `split=`."
        )
    return hits[0] if hits else None


def _helm_run(file: Path, stat: str, split, perturbation) -> pd.DataFrame:
    entries = _load_json(file.read_bytes(), file)
    if not isinstance(entries, list):
        raise ValueError(f"{file}: per_instance_stats.json holds a JSON list.")
    spec_file = file.parent / "run_spec.json"
    spec = _load_json(spec_file.read_bytes(), spec_file) if spec_file.exists() else {}
    adapter = spec.get("adapter_spec") or {}
    system = adapter.get("model") or adapter.get("model_deployment") or file.parent.name
    rows, names = [], set()
    for e in entries:
        pert = (e.get("perturbation") or {}).get("name")
        if pert != perturbation:
            continue
        s = _helm_stat(e, stat, split, file)
        names |= {x["name"]["name"] for x in e["stats"]}
        rows.append(
            {
                "input": _get(e, "instance_id", file, "an instance"),
                "run": _get(e, "train_trial_index", file, "an instance"),
                stat: np.nan if s is None else s.get("mean", np.nan),
                f"{stat}_sum": np.nan if s is None else s.get("sum", np.nan),
                f"{stat}_count": np.nan if s is None else s.get("count", np.nan),
                "split": None if s is None else s["name"].get("split"),
            }
        )
    if rows and stat not in names:
        raise ValueError(
            f"`stat`: {file} has no stat named {stat!r}; it has "
            f"{sorted(names)[:12]}{' ...' if len(names) > 12 else ''}."
        )
    frame = pd.DataFrame(
        rows, columns=KEYS[:2] + [stat, f"{stat}_sum", f"{stat}_count", "split"]
    )
    frame["system"] = system
    frame["task"] = spec.get("name") or file.parent.name
    frame["log_file"] = str(file)
    return frame


def read_helm(
    path,
    *,
    stat: str = "exact_match",
    split: str | None = None,
    perturbation: str | None = None,
) -> pd.DataFrame:
    """Read HELM ``per_instance_stats.json`` into the tidy table.

    Parameters
    ----------
    path : path
        A ``per_instance_stats.json``, a run directory holding one, or a
        directory searched recursively for them (a suite's ``runs/`` folder:
        one system per model).
    stat : str
        The stat to read (a ``MetricName.name``: ``"exact_match"``,
        ``"quasi_exact_match"``, ``"f1_score"``, ...).
    split : str, optional
        Keep only stats of this split (``"test"``, ``"valid"``); needed only
        when one instance holds the stat for several splits.
    perturbation : str, optional
        Read the instances under this perturbation (its
        ``PerturbationDescription.name``, e.g. ``"typo"``); by default the
        unperturbed instances only.

    Returns
    -------
    pandas.DataFrame
        ``input`` (``instance_id``), ``run`` (``train_trial_index``, from 0),
        ``system`` (``adapter_spec.model`` from ``run_spec.json`` beside the
        file, else ``adapter_spec.model_deployment``, else the directory
        name), ``<stat>`` (the Stat's ``mean``), ``<stat>_sum`` and
        ``<stat>_count`` (its ``sum`` and ``count``), then ``split``,
        ``task`` (the run spec's ``name``, else the directory name) and
        ``log_file``. An instance without the stat has NaN values.

    Notes
    -----
    HELM (crfm-helm 0.5, ``benchmark/metrics/metric.py``) writes one
    ``PerInstanceStats`` per (instance, perturbation, train trial): each
    ``train_trial_index`` draws its own in-context examples, so it is a run.
    A Stat's ``count`` is how many values HELM averaged into it; when it is
    above 1 (e.g. several sampled completions per request), ``mean`` is
    their average and ``sum``/``count`` can be used as successes/trials.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from evalci.readers import read_helm
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "mmlu:subject=anatomy,model=openai_gpt2"
    >>> d.mkdir()
    >>> def stat(x):
    ...     return {"name": {"name": "exact_match", "split": "test"}, "count": 1,
    ...             "sum": x, "sum_squared": x, "min": x, "max": x, "mean": x}
    >>> stats = [{"instance_id": f"id{i}", "train_trial_index": t,
    ...           "stats": [stat(float((i + t) % 2))]}
    ...          for i in range(3) for t in range(2)]
    >>> _ = (d / "per_instance_stats.json").write_text(json.dumps(stats))
    >>> spec = {"name": d.name, "adapter_spec": {"model": "openai/gpt2"}}
    >>> _ = (d / "run_spec.json").write_text(json.dumps(spec))
    >>> read_helm(d)[["input", "run", "system", "exact_match"]]
      input  run       system  exact_match
    0   id0    0  openai/gpt2          0.0
    1   id0    1  openai/gpt2          1.0
    2   id1    0  openai/gpt2          1.0
    3   id1    1  openai/gpt2          0.0
    4   id2    0  openai/gpt2          0.0
    5   id2    1  openai/gpt2          1.0
    """
    files = _files(
        path, ("per_instance_stats.json",), "path", "per_instance_stats.json"
    )
    frames = [_helm_run(f, stat, split, perturbation) for f in files]
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        raise ValueError(
            f"{path}: no instance"
            + (f" under perturbation {perturbation!r}" if perturbation else "")
            + " in the per-instance stats."
        )
    values = [stat, f"{stat}_sum", f"{stat}_count"]
    return _tidy(frame, values, ["split", "task", "log_file"])


# --------------------------------------------------------------------------
# generic JSON Lines / CSV / Parquet
# --------------------------------------------------------------------------

_FORMATS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def _read_table(file: Path, format: str) -> pd.DataFrame:
    if format == "jsonl":
        rows = []
        with open(file, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    rows.append(_load_json(line, file, f"line {n}"))
        if not all(isinstance(r, dict) for r in rows):
            raise ValueError(f"{file}: every JSON line must be an object.")
        return pd.json_normalize(rows)  # nested fields as "a.b"
    try:
        return pd.read_csv(file) if format == "csv" else pd.read_parquet(file)
    except ImportError:
        raise
    except Exception as e:
        raise ValueError(f"{file} could not be read as {format}: {e}") from e


def read_jsonl(
    path,
    *,
    input: str,
    value: str | list[str],
    run: str | None = None,
    system: str | None = None,
    columns: list[str] | dict[str, str] | None = None,
    format: str | None = None,
) -> pd.DataFrame:
    """Read a JSON Lines, CSV or Parquet file into the tidy table.

    Parameters
    ----------
    path : path
        The file; its extension (``.jsonl``/``.ndjson``, ``.csv``,
        ``.parquet``/``.pq``) picks the format unless ``format`` is given.
    input : str
        The column holding the input id. Nested JSON fields are named with
        dots (``"doc.id"``).
    value : str or list of str
        The value column(s); kept under their names, as ``float64``
        (booleans become 1/0).
    run : str, optional
        The column numbering runs. By default runs are numbered 0, 1, ...
        within each (system, input) in file order.
    system : str, optional
        The column naming the system; by default every row's system is the
        file's stem.
    columns : list of str or dict, optional
        Metadata columns to keep (a dict renames them: ``{old: new}``).
    format : {'jsonl', 'csv', 'parquet'}, optional
        Override the format the extension implies.

    Returns
    -------
    pandas.DataFrame
        ``input``, ``run``, ``system``, the value columns, the metadata
        columns (as strings), sorted by (system, input, run).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from evalci.readers import read_jsonl
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
    >>> rows = [{"q": f"q{i}", "model": m, "correct": (i + j) % 2 == 0}
    ...         for m in ("a", "b") for i in range(2) for j in range(2)]
    >>> _ = f.write_text("\\n".join(json.dumps(r) for r in rows))
    >>> read_jsonl(f, input="q", value="correct", system="model")
      input  run system  correct
    0    q0    0      a      1.0
    1    q0    1      a      0.0
    2    q1    0      a      0.0
    3    q1    1      a      1.0
    4    q0    0      b      1.0
    5    q0    1      b      0.0
    6    q1    0      b      0.0
    7    q1    1      b      1.0
    """
    file = _files(path, (), "path", "file")[0]
    if format is None:
        format = _FORMATS.get(file.suffix.lower())
        if format is None:
            raise ValueError(
                f"{file}: cannot tell the format from {file.suffix!r}; pass "
                "format='jsonl', 'csv' or 'parquet'."
            )
    elif format not in ("jsonl", "csv", "parquet"):
        raise ValueError(
            f"`format` must be 'jsonl', 'csv' or 'parquet'; got {format!r}."
        )
    data = _read_table(file, format)
    values = [value] if isinstance(value, str) else list(value)
    meta = columns if isinstance(columns, dict) else {c: c for c in columns or []}
    need = {
        "input": input,
        "value": values,
        "run": run,
        "system": system,
        "columns": list(meta),
    }
    for arg, cols in need.items():
        for c in [cols] if isinstance(cols, str) else cols or []:
            if c not in data.columns:
                raise ValueError(
                    f"`{arg}`: {file} has no column {c!r}; it has {list(data.columns)[:20]}."
                )
    clash = set(meta.values()) & set(KEYS + values)
    if clash:
        c = sorted(clash)[0]
        raise ValueError(
            f"`columns`: a metadata column named {c!r} would overwrite the "
            f"table's {c!r} column; rename it with a dict ({{{c!r}: "
            f"'{c}_label'}}) or pass it as `{c}=` if it is one."
        )
    for arg, c in (("input", input), ("system", system), ("run", run)):
        if c is not None and data[c].isna().any():
            raise ValueError(
                f"`{arg}`: column {c!r} of {file} has missing values (row "
                f"{int(data[c].isna().idxmax())}); every row needs its {arg}."
            )
    out = pd.DataFrame({"input": data[input]})
    out["system"] = data[system] if system is not None else file.stem
    if run is not None:
        out["run"] = data[run]
    else:  # file order within (system, input)
        out["run"] = out.groupby(["system", "input"], sort=False).cumcount()
    for c in values:
        col = data[c].map(lambda v: float(v) if isinstance(v, bool) else v)
        num = pd.to_numeric(col, errors="coerce")
        bad = num.isna() & col.notna()
        if bad.any():
            raise ValueError(
                f"`value`: column {c!r} of {file} holds a non-numeric value "
                f"({col[bad].iloc[0]!r}, row {int(bad.idxmax())}); map it to numbers first."
            )
        out[c] = num
    for old, new in meta.items():
        out[new] = data[old]
    out["input"] = list(data[input])  # keep Python ints for the dtype rule
    return _tidy(out, values, list(meta.values()))
