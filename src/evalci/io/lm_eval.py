"""lm-evaluation-harness ``--log_samples`` output into the tidy table.

:func:`read_lm_eval` reads the ``samples_<task>_<date>.jsonl`` files (the
logged per-document metrics, or a ``score`` function on the raw responses)
and takes the system from the ``results_<date>.json`` written beside them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalci._base.text import plain
from evalci._base.warnings import EvalciWarning, warn
from evalci.io._shared import (
    KEYS,
    _files,
    _get,
    _json_lines,
    _kind_of,
    _load_json,
    _sample_record,
    _sha256,
    _tidy_by,
    _whole,
    _with_facets,
)

__all__ = ["read_lm_eval"]


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


def _lm_system(results: dict | None, file: Path, folder: Path) -> str:
    """The model a results file names, else the folder (model_name_sanitized)."""
    if not results:
        return folder.name
    name = results.get("model_name")
    if name:
        return str(_get(results, "model_name", file, kind="a string"))
    config = results.get("config") or {}
    if not isinstance(config, dict):
        _get(results, "config", file, kind="an object")  # raises, naming it
    args = config.get("model_args")
    if isinstance(args, dict):
        for key in _LM_MODEL_KEYS:
            if key in args:
                return str(args[key])
    elif isinstance(args, str):
        for key in _LM_MODEL_KEYS:
            if f"{key}=" in args:
                return args.split(f"{key}=")[1].split(",")[0]
    elif args is not None:
        raise ValueError(
            f"{file}: the field `config.model_args` is {_kind_of(args)}, not a "
            "string or an object."
        )
    for name in (results.get("model_name_sanitized"), config.get("model")):
        if name:
            return str(name)
    return folder.name


def _lm_results(sample_file: Path, date: str) -> tuple[dict | None, Path | None]:
    """The results JSON written beside a samples file in the same run."""
    hits = [
        f
        for f in sorted(sample_file.parent.glob(f"*_{date}.json"))
        if not f.name.startswith("samples_")
    ]
    if not hits:
        return None, None
    results = _load_json(hits[0].read_bytes(), hits[0])
    if not isinstance(results, dict):
        raise ValueError(
            f"{hits[0]}: an lm-eval results file holds a JSON object, not "
            f"{_kind_of(results)}; is it the right file?"
        )
    return results, hits[0]


def _lm_stated(results: dict | None, file: Path | None, task: str) -> int | None:
    """``n-samples.<task>.effective``: the documents the results say were scored."""
    counts = (results or {}).get("n-samples")
    if counts is None:
        return None
    _get(results, "n-samples", file, kind="an object")
    if task not in counts:
        return None
    n = _get(counts, f"{task}.effective", file, "`n-samples`", "a number")
    return _whole(n, file, f"{task}.effective", "`n-samples`")


#: the seeds simple_evaluate records in ``config`` (evaluator.py)
_LM_SEEDS = ("fewshot_seed", "random_seed", "numpy_seed", "torch_seed")


def _lm_scalar(holder: dict, key: str, file: Path, field: str):
    """A recorded setting: a string, number or boolean, None when absent."""
    v = holder.get(key)
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    raise ValueError(
        f"{file}: the field `{field}` is {_kind_of(v)}, not a string, a number "
        "or a boolean."
    )


def _lm_facets(results: dict | None, file: Path | None, task: str) -> dict:
    """The facets a results file records for ``task`` (none without one):
    ``num_fewshot`` (``configs.<task>.num_fewshot``), the seeds of
    ``config``, ``chat_template`` and ``system_instruction`` (their SHA-256:
    ``*_sha``, else the hash of the text) and ``fewshot_as_multiturn``."""
    if not results:
        return {}
    out: dict[str, Any] = {}
    configs = results.get("configs")
    if isinstance(configs, dict) and isinstance(configs.get(task), dict):
        shots = configs[task].get("num_fewshot")
        if shots is not None:
            field = f"configs.{task}.num_fewshot"
            out["num_fewshot"] = _whole(shots, file, field)
    config = results.get("config")
    for key in _LM_SEEDS if isinstance(config, dict) else ():
        if (v := _lm_scalar(config, key, file, f"config.{key}")) is not None:
            out[key] = v
    for key in ("chat_template", "system_instruction"):
        sha = _lm_scalar(results, f"{key}_sha", file, f"{key}_sha")
        text = _lm_scalar(results, key, file, key)
        if sha is None and text:
            sha = _sha256(str(text))
        if sha is not None:
            out[key] = sha
    multiturn = _lm_scalar(
        results, "fewshot_as_multiturn", file, "fewshot_as_multiturn"
    )
    if multiturn is not None:
        out["fewshot_as_multiturn"] = multiturn
    return out


def _lm_doc_id(d: dict, file: Path, n: int):
    doc = _get(d, "doc_id", file, f"line {n}")
    if isinstance(doc, bool) or not isinstance(doc, (int, str)):
        raise ValueError(
            f"{file}, line {n}: the field `doc_id` is {_kind_of(doc)}, not an "
            "integer or a string."
        )
    return doc


def _lm_names(d: dict, file: Path, n: int) -> list[str]:
    """The metric names of one line, type-checked."""
    if "metrics" not in d:  # older lm-eval: every other field is a metric
        return [k for k in d if k not in _LM_FIELDS]
    names = _get(d, "metrics", file, f"line {n}", "a list")
    for m in names:
        if not isinstance(m, str):
            raise ValueError(
                f"{file}, line {n}: the field `metrics` holds {_kind_of(m)}, "
                "where metric names (strings) belong."
            )
    return names


def _lm_lines(file: Path) -> list[tuple[int, dict]]:
    """``(line number, sample)`` of each line; a repeated (doc_id, filter,
    metric) raises, naming both lines."""
    lines, seen = [], {}
    for n, d in _json_lines(file):
        if not isinstance(d, dict):
            raise ValueError(
                f"{file}, line {n}: a sample line is a JSON object, not {_kind_of(d)}."
            )
        doc = _lm_doc_id(d, file, n)
        filt = d.get("filter", "none")
        if "filter" in d:
            _get(d, "filter", file, f"line {n}", "a string")
        if "resps" in d:
            for req in _get(d, "resps", file, f"line {n}", "a list"):
                if not isinstance(req, list):
                    raise ValueError(
                        f"{file}, line {n}: the field `resps` holds "
                        f"{_kind_of(req)}, where a list of responses per "
                        "request belongs."
                    )
        for m in _lm_names(d, file, n) or [None]:
            first = seen.setdefault((doc, filt, m), n)
            if first != n:
                what = f", metric {m!r}" if m is not None else ""
                raise ValueError(
                    f"{file}: lines {first} and {n} both hold doc_id {doc!r} "
                    f"under filter {filt!r}{what}; each document is logged "
                    "once per filter. Is the file two runs appended together?"
                )
        lines.append((n, d))
    if not lines:
        raise ValueError(f"{file} holds no sample line.")
    return lines


def _lm_logged(
    lines: list[tuple[int, dict]], file: Path, filter: str | None
) -> tuple[list[dict], list[str]]:
    """Rows with the logged metrics: one per (doc, filter) -> one per doc."""
    filters = list(dict.fromkeys(d.get("filter", "none") for _, d in lines))
    if filter is not None:
        if filter not in filters:
            raise ValueError(
                f"`filter`: {file} has no filter {filter!r}; it has {filters}."
            )
        lines = [(n, d) for n, d in lines if d.get("filter", "none") == filter]
    several = filter is None and len(filters) > 1
    rows: dict[Any, dict] = {}
    values: dict[str, None] = {}
    other: dict[str, tuple[int, Any]] = {}  # first value that is no number
    for n, d in lines:
        row = rows.setdefault(d["doc_id"], {"input": d["doc_id"], "run": 0})
        for m in _lm_names(d, file, n):
            v = _get(d, m, file, f"line {n}")
            # lm-eval names a metric under a filter "metric,filter" (results_*.json)
            col = f"{m},{d.get('filter', 'none')}" if several else m
            if isinstance(v, (bool, int, float)):
                row[col] = float(v)
                values[col] = None
            elif v is not None:  # corpus-level items (bleu: [refs, pred]), text
                other.setdefault(col, (n, v))
        row["target"] = d.get("target")
        row["n_resps"] = len((d.get("resps") or [[]])[0])
    for col, (n, v) in other.items():
        if col in values or isinstance(v, str):
            raise ValueError(
                f"{file}, line {n}: the metric `{col.split(',')[0]}` holds "
                f"{_kind_of(v)} ({str(v)[:40]!r}), "
                + (
                    "where the other lines hold numbers"
                    if col in values
                    else "where a number per document belongs"
                )
                + "; is the file edited or written by another tool?"
            )
    if other:
        warn(
            f"{file}: the metrics {sorted(other)} hold no number per "
            "document (corpus-level metrics); they are left out.",
            EvalciWarning,
        )
    return list(rows.values()), list(values)


def _lm_check_count(
    lines: list[tuple[int, dict]], file: Path, stated: int | None, res_file
) -> tuple[int, int | None]:
    """Warn when the samples file holds fewer (or more) documents than the
    results file's ``n-samples`` says were scored; ``(found, stated)``."""
    per_filter: dict[str, set] = {}
    for _, d in lines:
        per_filter.setdefault(d.get("filter", "none"), set()).add(d["doc_id"])
    found = min(len(docs) for docs in per_filter.values())
    if stated is not None and found != stated:
        which = min(per_filter, key=lambda f: len(per_filter[f]))
        under = f" (under filter {which!r})" if len(per_filter) > 1 else ""
        warn(
            f"{file} holds {found} documents{under}, but {res_file.name} says "
            f"{stated} were scored (`n-samples` `effective`): "
            + (
                "the file is cut short, or some documents were lost; the "
                "table holds only the documents found."
                if found < stated
                else "is the results file from another run?"
            ),
            EvalciWarning,
        )
    return found, stated


def _score_of(score: Callable, responses: list, d: dict, file: Path, n: int) -> float:
    """``score(responses, sample)`` as a float: a number or a boolean (text
    such as ``"1"`` is not silently read as one)."""
    v = score(responses, d)
    if isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_)):
        return float(v)
    raise TypeError(
        f"`score`: {file}, line {n} (doc_id {d['doc_id']!r}): the score function "
        f"returned {plain(v)!r} ({type(v).__name__}), not a number; return a "
        "float (or a bool)."
    )


def _lm_scored(
    lines: list[tuple[int, dict]], file: Path, score: Callable
) -> list[dict]:
    """One row per repeat: ``score(responses, sample)`` on the raw ``resps``."""
    seen, rows = set(), []
    for n, d in lines:
        if d["doc_id"] in seen:  # the same raw resps under every filter
            continue
        seen.add(d["doc_id"])
        resps = _get(d, "resps", file, f"line {n}", "a list")
        k = min(len(r) for r in resps) if resps else 0
        for r in range(k):
            rows.append(
                {
                    "input": d["doc_id"],
                    "run": r,
                    "score": _score_of(score, [req[r] for req in resps], d, file, n),
                    "target": d.get("target"),
                    "n_resps": k,
                }
            )
    return rows


def _lm_file(f: Path, task: str, date: str, filter, score) -> tuple:
    """One samples file: its rows, its record of ``attrs["evalci_samples"]``,
    and its old ``attrs["log_counts"]`` entry (found against stated)."""
    lines = _lm_lines(f)
    results, res_file = _lm_results(f, date)
    if score is not None:
        rows, values = _lm_scored(lines, f, score), ["score"]
    else:
        rows, values = _lm_logged(lines, f, filter)
        lines = [x for x in lines if filter in (None, x[1].get("filter", "none"))]
        k = max(r["n_resps"] for r in rows)
        if k > 1:
            warn(
                f"{f}: each request holds {k} responses (repeats={k}) but "
                "lm-eval records each metric once per document, from the "
                "filtered responses; the table has one run per document. "
                "Pass `score=` to score every response as a run.",
                EvalciWarning,
            )
    stated = _lm_stated(results, res_file, task)
    found, _ = _lm_check_count(lines, f, stated, res_file)
    frame = pd.DataFrame(rows)
    system = _lm_system(results, res_file, f.parent)
    frame["system"] = system
    frame["task"], frame["log_file"] = task, str(f)
    # documents with a number in every value column of each of their rows
    # (lm-eval logs no error, limit or early stop: a document is scored or not)
    full = frame[values].notna().all(axis=1).groupby(frame["input"]).all()
    record = _sample_record(
        f, system, task, None, stated, "samples_jsonl",
        scored=int(full.sum()), unscored=int((~full).sum()),
    )  # fmt: skip
    old = {"log_file": str(f), "task": task, "found": found, "stated": stated}
    return frame, record, old, _lm_facets(results, res_file, task)


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
        request, i.e. the task's ``repeats``) and ``log_file``. ``task`` is
        part of the key (tasks read together are rows side by side, sorted
        by (system, task, input, run)).

        Then the facets (sources of variance) the ``results_<date>.json``
        beside the samples file records, each a column only when some file
        read records it (a samples file whose results file does not, or that
        has no results file beside it, has missing values in it; with no
        results file at all the columns are absent): ``num_fewshot``
        (``configs.<task>.num_fewshot``, ``Int64``), ``fewshot_seed``,
        ``random_seed``, ``numpy_seed`` and ``torch_seed`` (``config``'s
        seeds, as simple_evaluate records them), ``chat_template`` (the
        template's SHA-256: ``chat_template_sha``, else the hash of
        ``chat_template``, as lm-eval's ``hash_string`` makes it; lm-eval
        records no template name, and null when none was applied),
        ``system_instruction`` (likewise, from ``system_instruction_sha``)
        and ``fewshot_as_multiturn`` (``boolean``).
        ``df.attrs["evalci_facets"]`` lists the facet columns.

        ``attrs["evalci_samples"]``: one record per samples file, with the
        keys every reader gives (:func:`evalci.sample_counts` makes
        it a table), counting documents: ``expected`` is the results file's
        ``n-samples`` ``effective`` (None without it), ``found`` the
        documents in the table, ``scored`` those with a number in every
        value column, ``unscored`` the rest, ``missing`` =
        ``expected - found``; ``errored``, ``hit_limit``, ``invalidated``
        and ``stopped_early`` are 0 (lm-eval logs none of them), ``split``
        is None and ``source`` ``"samples_jsonl"``. A difference between
        the documents found and ``effective`` warns. ``attrs["log_counts"]``
        is the old name: per samples file ``{"log_file", "task", "found",
        "stated"}`` (``found`` the fewest documents under any filter).

    Raises
    ------
    ValueError
        A repeated (``doc_id``, filter, metric), naming the file and both
        lines; a text value in a metric, or a field of the wrong JSON type,
        naming the file, the line and the field.

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
    >>> from evalci.io.readers import read_lm_eval
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
    frames, counts, old, facets = [], [], [], {}
    for f in files:
        m = _LM_SAMPLES.match(f.name)
        if m is None:
            raise ValueError(
                f"{f}: an lm-eval samples file is named "
                "samples_<task>_<date>.jsonl (--log_samples)."
            )
        if task is not None and m["task"] != task:
            continue
        frame, record, was, facets[str(f)] = _lm_file(
            f, m["task"], m["date"], filter, score
        )
        frames.append(frame)
        counts.append(record)
        old.append(was)
    if not frames:
        raise ValueError(f"`task`: no samples file of task {task!r} under {path}.")
    frame = pd.concat(frames, ignore_index=True)
    meta = ["task", "target", "n_resps", "log_file"]
    values = [c for c in frame.columns if c not in KEYS + meta]
    if not values:
        raise ValueError(f"{path}: no sample has a numeric metric.")
    out = _tidy_by(frame, values, meta, ["task"], ints=("n_resps",))
    out = _with_facets(out, facets)
    out.attrs["evalci_samples"] = counts
    out.attrs["log_counts"] = old  # the old name, and its old keys
    return out
