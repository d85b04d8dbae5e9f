"""lm-evaluation-harness's aggregated ``results_<date>.json``: the scores and
standard errors the harness itself reports, one row per (task, metric,
filter), to set beside evalci's intervals on the same run."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from evalci.io._shared import _files, _get, _kind_of, _load_json
from evalci.io.lm_eval import _lm_system

__all__ = ["read_lm_eval_results"]

_RESULTS = re.compile(r"^results_.*\.json$")
_COLUMNS = ["system", "task", "metric", "filter", "value", "stderr", "n_samples",
            "log_file"]


def _number(value, file, where):
    if value is None or value == "N/A":
        return np.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{file}: `{where}` is {_kind_of(value)}, not a number.")
    return float(value)


def _task_rows(task: str, entry: dict, n: dict, file, system: str) -> list:
    rows = []
    for key, value in entry.items():
        if key == "alias" or "," not in key or key.split(",")[0].endswith("_stderr"):
            continue
        metric, filt = key.split(",", 1)
        stderr = entry.get(f"{metric}_stderr,{filt}")
        rows.append({
            "system": system, "task": task, "metric": metric, "filter": filt,
            "value": _number(value, file, f"results.{task}.{key}"),
            "stderr": _number(stderr, file, f"results.{task}.{metric}_stderr,{filt}"),
            "n_samples": (n.get(task) or {}).get("effective", np.nan),
            "log_file": str(file),
        })
    return rows


def read_lm_eval_results(path) -> pd.DataFrame:
    """Read lm-eval's aggregated results: what the harness reports.

    Parameters
    ----------
    path : path, list of paths, directory or glob
        ``results_<date>.json`` files (a directory is searched for them).

    Returns
    -------
    pandas.DataFrame
        One row per (system, task, metric, filter): ``value`` and ``stderr``
        as the harness wrote them (NaN where it wrote ``"N/A"``: a group's
        stderr it could not aggregate), ``n_samples`` (the samples scored,
        ``n-samples.<task>.effective``), ``log_file``. Groups and their
        subtasks are rows alike: nothing is pooled.

    See Also
    --------
    read_lm_eval : the per-sample files behind them, for evalci's intervals.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> res = {"results": {"arc_easy": {"alias": "arc_easy", "acc,none": 0.75,
    ...        "acc_stderr,none": 0.0125}}, "n-samples": {"arc_easy":
    ...        {"original": 2376, "effective": 2376}}, "model_name": "m/a"}
    >>> _ = (d / "results_2025-01-01T00-00-00.json").write_text(json.dumps(res))
    >>> read_lm_eval_results(d)[["system", "task", "metric", "value", "stderr"]]
      system      task metric  value  stderr
    0    m/a  arc_easy    acc   0.75  0.0125
    """
    files = _files(path, ("results_*.json",), "path", "lm-eval results files",
                   keep=lambda p: bool(_RESULTS.match(p.name)))
    rows = []
    for file in files:
        doc = _load_json(file.read_bytes(), file)
        if not isinstance(doc, dict):
            raise ValueError(f"{file}: an lm-eval results file holds a JSON object, "
                             f"not {_kind_of(doc)}; is it the right file?")
        results = _get(doc, "results", file, kind="an object")
        n = doc.get("n-samples") or {}
        system = _lm_system(doc, file, file.parent)
        for task, entry in results.items():
            if not isinstance(entry, dict):
                raise ValueError(f"{file}: `results.{task}` is {_kind_of(entry)}, "
                                 "not an object.")
            rows.extend(_task_rows(task, entry, n, file, system))
    return pd.DataFrame(rows, columns=_COLUMNS)
