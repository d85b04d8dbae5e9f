"""One Inspect AI log's rows: score values as Inspect maps them, why a
sample has no valid score, and the count of its samples.

:func:`_inspect_rows` turns a log opened by :mod:`evalci.io.inspect_logs`
into rows (every sample one, and each early stop one) and the log's record
of ``DataFrame.attrs["evalci_samples"]``, warning when the log holds fewer
samples than its header says or did not end in success.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from evalci._base.warnings import EvalciWarning, warn
from evalci.io._shared import KEYS, _get, _kind_of, _sample_record, _whole
from evalci.io.inspect_logs import _Log, _record_key

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


#: the columns that say why a sample has no valid score (where one does)
_STOPS = ("error", "limit", "invalidated", "stopped_early")


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


def _model_name(v: Any, file: Path, field: str) -> list[str]:
    """The model(s) a role or a scorer argument names: a string, a model as
    the log records it (``ModelConfig``, or the ``ModelDict`` of a scorer's
    argument: its ``model``), or a list of them; None names none."""
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict) and isinstance(v.get("model"), str):
        return [v["model"]]
    if isinstance(v, list):
        return [
            m for i, x in enumerate(v) for m in _model_name(x, file, f"{field}[{i}]")
        ]
    raise ValueError(
        f"{file}: the field `{field}` is {_kind_of(v)}, where a model (its name, "
        "or an object holding `model`) belongs."
    )


def _roles(spec: dict, file: Path) -> dict[str, str]:
    """``eval.model_roles``: role name -> its model (inspect_ai
    ``EvalSpec.model_roles``, ``dict[str, ModelConfig]``, since 0.3.87)."""
    roles = spec.get("model_roles")
    if roles is None:
        return {}
    _get(spec, "model_roles", file, "the eval spec", kind="an object")
    out = {}
    for name, role in roles.items():
        models = _model_name(role, file, f"eval.model_roles.{name}")
        if len(models) == 1:
            out[str(name)] = models[0]
    return out


def _scorer_list(header: dict) -> tuple[list, str, str]:
    """The scorers as the log records them, where, and their arguments' key:
    ``eval.scorers`` (``options``), else ``results.scores`` (``params``)."""
    scorers = header["eval"].get("scorers")
    if scorers is not None:
        return (scorers if isinstance(scorers, list) else []), "eval.scorers", "options"
    res = header.get("results")
    scores = res.get("scores") if isinstance(res, dict) else None
    return (scores if isinstance(scores, list) else []), "results.scores", "params"


def _graders(header: dict, roles: dict[str, str], file: Path) -> list[str]:
    """The grader models the log records: each scorer's ``grader_model`` or
    ``model`` argument or metadata, else the role its ``model_role`` argument
    names (``model_graded_qa``'s default is ``"grader"``); with none, the
    ``grader`` role."""
    scorers, where, args = _scorer_list(header)
    found: dict[str, None] = {}
    for i, sc in enumerate(scorers):
        if not isinstance(sc, dict):
            continue
        mine: dict[str, None] = {}
        for part in (args, "metadata"):
            given = sc.get(part)
            for key in ("grader_model", "model") if isinstance(given, dict) else ():
                field = f"{where}[{i}].{part}.{key}"
                mine.update(dict.fromkeys(_model_name(given.get(key), file, field)))
        given = sc.get(args)
        role = given.get("model_role") if isinstance(given, dict) else None
        if not mine and isinstance(role, str) and role in roles:
            mine[roles[role]] = None
        found.update(mine)
    if not found and "grader" in roles:
        found[roles["grader"]] = None
    return list(found)


def _inspect_facets(header: dict, file: Path) -> dict[str, Any]:
    """The facets one log records: ``role_<name>`` per model role, ``grader``
    (several graders joined by ", "), and the eval's ``seed``
    (``eval.model_generate_config.seed``); none of them when not recorded."""
    spec = header["eval"]
    roles = _roles(spec, file)
    out: dict[str, Any] = {f"role_{k}": v for k, v in roles.items()}
    graders = _graders(header, roles, file)
    if graders:
        out["grader"] = ", ".join(graders)
    config = spec.get("model_generate_config")
    if isinstance(config, dict) and config.get("seed") is not None:
        out["seed"] = config["seed"]
    return out
