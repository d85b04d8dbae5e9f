"""HELM ``per_instance_stats.json`` into the tidy table.

:func:`read_helm` reads one stat per (instance, train trial) of each run
directory, and the system and task from the ``run_spec.json`` beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalci._base.warnings import EvalciWarning, warn
from evalci.io._shared import (
    KEYS,
    _files,
    _get,
    _kind_of,
    _load_json,
    _sample_record,
    _sha256,
    _tidy_by,
    _whole,
    _with_facets,
)

__all__ = ["read_helm"]


# HELM's own split names (scenarios/scenario.py): it reports the test split
_REPORTED = "test"


def _helm_stats(entry: Any, i: int, file) -> list[dict]:
    """An entry's stats, type-checked: each field's path names the entry."""
    if not isinstance(entry, dict):
        raise ValueError(
            f"{file}: entry [{i}] is {_kind_of(entry)}, where a per-instance "
            "stats object belongs; is this a per_instance_stats.json?"
        )
    at = f"entry [{i}]"
    _get(entry, "instance_id", file, at, "a string")
    _whole(_get(entry, "train_trial_index", file, at), file, "train_trial_index", at)
    stats = _get(entry, "stats", file, at, "a list")
    for j, s in enumerate(stats):
        if not isinstance(s, dict):
            raise ValueError(
                f"{file}: the field `stats[{j}]` in {at} is {_kind_of(s)}, not "
                "an object."
            )
        _get(s, "name.name", file, f"{at}, stats[{j}]", "a string")
        if s["name"].get("split") is not None:
            _get(s, "name.split", file, f"{at}, stats[{j}]", "a string")
        for k in ("mean", "sum", "count"):
            if s.get(k) is not None:
                _get(s, k, file, f"{at}, stats[{j}]", "a number")
    pert = entry.get("perturbation")
    if pert is not None:
        _get(entry, "perturbation.name", file, at, "a string")
    return stats


def _helm_split(stats: list[dict]):
    """The split of an instance (its stats carry it; HELM adds the context)."""
    splits = {s["name"].get("split") for s in stats} - {None}
    return sorted(splits)[0] if len(splits) == 1 else None if not splits else splits


def _helm_spec(file: Path) -> dict:
    spec_file = file.parent / "run_spec.json"
    if not spec_file.exists():
        return {}
    spec = _load_json(spec_file.read_bytes(), spec_file)
    if not isinstance(spec, dict):
        raise ValueError(
            f"{spec_file}: a run spec is a JSON object, not {_kind_of(spec)}; "
            "is this HELM's run_spec.json?"
        )
    for field in ("name", "adapter_spec.model", "adapter_spec.model_deployment"):
        head, _, tail = field.partition(".")
        if tail and spec.get(head) is not None:
            _get(spec, head, spec_file, kind="an object")
        holder = spec.get(head) if tail else spec
        if isinstance(holder, dict) and holder.get(tail or head) is not None:
            _get(spec, field, spec_file, kind="a string")
    return spec


#: the settings of ``adapter_spec`` read as facets (AdapterSpec,
#: adaptation/adapter_spec.py): the prompt, the in-context examples, the
#: sampling and the deployment that served the model
_ADAPTER_FACETS = (
    "method",
    "instructions",
    "max_train_instances",
    "num_outputs",
    "temperature",
    "model_deployment",
    "random",
)


def _helm_facets(spec: dict) -> dict:
    """``adapter_<key>`` for each setting of :data:`_ADAPTER_FACETS` the run
    spec records as a scalar (a list, an object or null is left out);
    ``instructions`` as its SHA-256 (empty instructions stay empty)."""
    adapter = spec.get("adapter_spec")
    if not isinstance(adapter, dict):
        return {}
    out = {}
    for key in _ADAPTER_FACETS:
        v = adapter.get(key)
        if not isinstance(v, (str, int, float, bool)):
            continue
        if key == "instructions" and isinstance(v, str) and v:
            v = _sha256(v)
        out[f"adapter_{key}"] = v
    return out


def _helm_task(name: str) -> str:
    """The run spec name without its ``model=`` (and ``model_deployment=``)
    argument (run_expander.py adds it): one task, whichever model ran it."""
    head, colon, args = name.partition(":")
    if not colon:
        return name
    keep = [
        a
        for a in args.split(",")
        if a.split("=")[0] not in ("model", "model_deployment")
    ]
    return head + (":" + ",".join(keep) if keep else "")


def _helm_entries(file: Path, perturbation) -> list[tuple[dict, list, Any]]:
    """``(entry, stats, split)`` of the entries under ``perturbation``."""
    entries = _load_json(file.read_bytes(), file)
    if not isinstance(entries, list):
        raise ValueError(
            f"{file}: per_instance_stats.json holds a JSON list, not "
            f"{_kind_of(entries)}."
        )
    out = []
    for i, e in enumerate(entries):
        stats = _helm_stats(e, i, file)
        if (e.get("perturbation") or {}).get("name") == perturbation:
            out.append((e, stats, _helm_split(stats)))
    return out


def _helm_choose(file: Path, entries: list, split) -> Any:
    """The split to read: ``split``, else test when the run holds several."""
    present: dict[Any, set] = {}  # split -> its instance ids
    for e, _, sp in entries:
        for x in sp if isinstance(sp, set) else [sp]:
            present.setdefault(x, set()).add(e["instance_id"])
    names = sorted(str(x) for x in present)
    if split == "all" or not entries:
        return split
    if split is not None:
        if split not in present:
            raise ValueError(
                f"`split`: {file} holds no instance of split {split!r}; its "
                f"splits are {names} (or pass split='all')."
            )
        return split
    if len(present) == 1:
        return next(iter(present))
    if _REPORTED not in present:
        raise ValueError(
            f"{file} holds instances of the splits {names}; pass `split=` "
            "(one of them, or 'all')."
        )
    counts = ", ".join(f"{len(present[x])} {x}" for x in sorted(present, key=str))
    warn(
        f"{file}: the run holds {counts} instances; the table holds the "
        f"{_REPORTED!r} split, which HELM reports. Pass split='valid' (say) or "
        "split='all' for the others.",
        EvalciWarning,
    )
    return _REPORTED


def _helm_value(e: dict, stats: list, stat: str, split, file) -> dict | None:
    """The entry's Stat named ``stat`` in ``split`` (any with 'all')."""
    hits = [
        s
        for s in stats
        if s["name"]["name"] == stat and split in ("all", s["name"].get("split"))
    ]
    if len(hits) > 1:
        raise ValueError(
            f"{file}, instance {e['instance_id']!r}: {len(hits)} stats are named "
            f"{stat!r} (splits {sorted(str(h['name'].get('split')) for h in hits)}); "
            "HELM gives each instance one split: pass `split=`."
        )
    return hits[0] if hits else None


def _helm_run(file: Path, stat: str, split, perturbation) -> tuple:
    """One run: its rows, its record of ``attrs["evalci_samples"]`` and its
    old ``attrs["log_counts"]`` entry."""
    entries = _helm_entries(file, perturbation)
    chosen = _helm_choose(file, entries, split)
    spec = _helm_spec(file)
    adapter = spec.get("adapter_spec") or {}
    system = adapter.get("model") or adapter.get("model_deployment") or file.parent.name
    rows, names = [], set()
    for e, stats, sp in entries:
        names |= {x["name"]["name"] for x in stats}
        if chosen != "all" and chosen not in (sp if isinstance(sp, set) else {sp}):
            continue
        s = _helm_value(e, stats, stat, chosen, file)
        rows.append(
            {
                "input": e["instance_id"],
                "run": e["train_trial_index"],
                stat: np.nan if s is None else _num(s.get("mean")),
                f"{stat}_sum": np.nan if s is None else _num(s.get("sum")),
                f"{stat}_count": np.nan if s is None else _num(s.get("count")),
                "split": s["name"].get("split")
                if s
                else (chosen if chosen != "all" else None),
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
    frame["task"] = _helm_task(spec.get("name") or file.parent.name)
    frame["log_file"] = str(file)
    found = frame["input"].nunique()
    stated = _helm_stated(file, chosen) if perturbation is None else None
    _helm_check_count(file, found, stated, chosen)
    task = frame["task"].iloc[0] if len(frame) else None
    # instances with the stat in every train trial (HELM logs no error,
    # limit or early stop: an instance has its stat or not)
    full = frame[stat].notna().groupby(frame["input"]).all()
    record = _sample_record(
        file, system, task, chosen, stated, "per_instance_stats",
        scored=int(full.sum()), unscored=int((~full).sum()),
    )  # fmt: skip
    old = {"log_file": str(file), "task": task, "split": chosen}
    old |= {"found": found, "stated": stated}
    return frame, record, old, _helm_facets(spec)


def _num(v) -> float:
    return np.nan if v is None else float(v)


def _helm_stated(file: Path, split) -> int | None:
    """``num_instances`` of ``split`` in the ``stats.json`` beside the file
    (summed over sub-splits; all splits with 'all'), None when absent."""
    stats_file = file.parent / "stats.json"
    if not stats_file.exists():
        return None
    stats = _load_json(stats_file.read_bytes(), stats_file)
    if not isinstance(stats, list):
        raise ValueError(
            f"{stats_file}: HELM's stats.json holds a JSON list, not {_kind_of(stats)}."
        )
    total, seen = 0.0, False
    for j, s in enumerate(stats):
        name = _get(s, "name", stats_file, f"entry [{j}]", "an object")
        if name.get("name") != "num_instances" or "perturbation" in name:
            continue
        if split != "all" and name.get("split") != split:
            continue
        total += _get(s, "mean", stats_file, f"entry [{j}]", "a number")
        seen = True
    what = f"the num_instances of split {split!r} (summed)"
    return _whole(total, stats_file, "mean", what) if seen else None


def _helm_check_count(file: Path, found: int, stated, split) -> None:
    if stated is not None and found < stated:
        warn(
            f"{file} holds {found} instances of split {split!r}, but the "
            f"stats.json beside it says HELM evaluated {stated} "
            "(`num_instances`): the file is cut short, or instances were lost; "
            "the table holds only the instances found.",
            EvalciWarning,
        )


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
        The split to read (``"test"``, ``"valid"``, or ``"all"`` for every
        split). By default the only split a run holds, or ``"test"`` (the
        split HELM reports) when it holds several, with an
        :class:`~evalci.EvalciWarning` naming the file and each split's
        count. A split a run does not hold raises, listing its splits.
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
        ``task`` (the run spec's ``name``, else the directory name, without
        the ``model=`` argument HELM adds: one task for every model) and
        ``log_file``; then the adapter's settings (the facets: prompt,
        in-context examples, sampling, deployment) that ``adapter_spec``
        in ``run_spec.json`` records as scalars, each a column only when
        some run read records it (a run that does not, or has no
        ``run_spec.json``, has missing values in it): ``adapter_method``,
        ``adapter_instructions`` (the SHA-256 hex digest of the
        instructions' text; empty instructions stay empty),
        ``adapter_max_train_instances``, ``adapter_num_outputs``
        (``Int64``), ``adapter_temperature`` (``float64``),
        ``adapter_model_deployment`` and ``adapter_random`` (HELM's random
        seed string). ``df.attrs["evalci_facets"]`` lists them. An instance without the stat has NaN values. ``task``
        is part of the key: runs of several tasks are rows side by side,
        sorted by (system, task, input, run), never one score.

        ``attrs["evalci_samples"]``: one record per run, with the keys every
        reader gives (:func:`evalci.sample_counts` makes it a
        table), counting instances: ``expected`` is the ``num_instances`` of
        the split read in ``stats.json`` (None without it, or under a
        perturbation), ``found`` the instances in the table, ``scored``
        those with the stat in every train trial, ``unscored`` the rest,
        ``missing`` = ``expected - found``; ``errored``, ``hit_limit``,
        ``invalidated`` and ``stopped_early`` are 0 (HELM logs none of
        them), ``split`` is the split read and ``source``
        ``"per_instance_stats"``. Fewer found than expected warns.
        ``attrs["log_counts"]`` is the old name: per run ``{"log_file",
        "task", "split", "found", "stated"}``.

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
    >>> from evalci.io.readers import read_helm
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
    if split is not None and not isinstance(split, str):
        raise TypeError(
            f"`split` must be a string or None; got {type(split).__name__}."
        )
    runs = [_helm_run(f, stat, split, perturbation) for f in files]
    frame = pd.concat([r[0] for r in runs], ignore_index=True)
    if frame.empty:
        raise ValueError(
            f"{path}: no instance"
            + (f" under perturbation {perturbation!r}" if perturbation else "")
            + " in the per-instance stats."
        )
    values = [stat, f"{stat}_sum", f"{stat}_count"]
    out = _tidy_by(frame, values, ["split", "task", "log_file"], ["task"])
    out = _with_facets(out, {r[1]["log_file"]: r[3] for r in runs})
    out.attrs["evalci_samples"] = [r[1] for r in runs]
    out.attrs["log_counts"] = [r[2] for r in runs]  # the old name and keys
    return out
