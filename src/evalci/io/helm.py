"""HELM ``per_instance_stats.json`` into the tidy table.

:func:`read_helm` reads one stat per (instance, train trial) of each run
directory, and the system and task from the ``run_spec.json`` beside it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from evalci.io._shared import KEYS, _files, _get, _load_json, _tidy

__all__ = ["read_helm"]


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
