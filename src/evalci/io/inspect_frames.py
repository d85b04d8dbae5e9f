"""Inspect's own data frames (``inspect_ai.analysis.samples_df`` and
``evals_df``) into evalci's tidy table: for users who already hold them.

``samples_df`` has a row per sample and epoch (``id``, ``epoch``,
``score_<scorer>``, ``error``, ``limit``, ``eval_id``); ``evals_df`` a row
per log (``eval_id``, ``model``, ``task_name``). The scores are mapped as
Inspect's ``value_to_float`` maps them (the letters C, P, I, N; booleans;
numeric text), as :func:`evalci.read_inspect` does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_frame
from evalci.io.inspect_rows import _inspect_float

__all__ = ["from_inspect_frames"]


def _system(samples: pd.DataFrame, evals: pd.DataFrame | None) -> pd.DataFrame:
    """``system`` and ``task`` per sample, from ``evals`` or the samples' own columns."""
    if evals is not None:
        check_frame(evals, name="evals")
        need = [c for c in ("eval_id", "model", "task_name") if c not in evals.columns]
        if need or "eval_id" not in samples.columns:
            raise ValueError(
                f"`evals` needs the columns eval_id, model and task_name (missing: "
                f"{', '.join(need) or 'eval_id in samples'}); pass evals_df() "
                "with its default columns.")
        info = evals.set_index("eval_id")[["model", "task_name"]]
        joined = info.reindex(samples["eval_id"])
        if joined["model"].isna().any():
            lost = samples["eval_id"][joined["model"].isna().to_numpy()].iloc[0]
            raise ValueError(f"`samples` eval {as_written(lost)} is not in `evals`; "
                             "pass the evals_df of the same logs.")
        return pd.DataFrame({"system": joined["model"].to_numpy(),
                             "task": joined["task_name"].to_numpy()})
    out = {}
    for col, key in (("model", "system"), ("task_name", "task")):
        if col in samples.columns:
            out[key] = samples[col].to_numpy()
    if "system" not in out:
        raise ValueError("`samples` has no model column; pass `evals=` (evals_df of "
                         "the same logs) to name each sample's system.")
    return pd.DataFrame(out)


def from_inspect_frames(samples: pd.DataFrame, evals: pd.DataFrame | None = None, *,
                        scorer: str | None = None) -> pd.DataFrame:
    """Inspect's ``samples_df`` (and ``evals_df``) as evalci's tidy table.

    Parameters
    ----------
    samples : pandas.DataFrame
        ``inspect_ai.analysis.samples_df(logs)``: ``id``, ``epoch`` and one
        ``score_<scorer>`` column per scorer at least.
    evals : pandas.DataFrame, optional
        ``inspect_ai.analysis.evals_df(logs)`` of the same logs, for each
        sample's model and task (joined on ``eval_id``); without it,
        ``samples`` must hold a ``model`` column.
    scorer : str, optional
        Keep this scorer's column only (default: every ``score_*`` column).

    Returns
    -------
    pandas.DataFrame
        ``input``, ``run``, ``system``, ``task`` (when known), one column per
        scorer (named after it, 0/1 or a number; NaN where the sample has no
        score), ``error`` and ``limit`` (when ``samples`` has them). Tasks are
        never pooled: ``evalci.cluster_ci`` refuses several without ``by``.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"id": [1, 1, 2, 2], "epoch": [1, 2, 1, 2],
    ...                   "score_match": ["C", "I", "C", "C"], "model": "m"})
    >>> from_inspect_frames(s)
       input  run system  match
    0      1    1      m    1.0
    1      1    2      m    0.0
    2      2    1      m    1.0
    3      2    2      m    1.0
    """
    check_frame(samples, name="samples", rows=True)
    for col in ("id", "epoch"):
        if col not in samples.columns:
            raise ValueError(f"`samples` has no {col!r} column; pass samples_df() "
                             "with its default columns.")
    scores = [c for c in samples.columns if c.startswith("score_")]
    if scorer is not None:
        scores = [c for c in scores if c == f"score_{scorer}"]
    if not scores:
        raise ValueError(
            f"`samples` has no {'score_' + scorer if scorer else 'score_*'} column; "
            f"score columns: {[c for c in samples.columns if c.startswith('score_')]}.")
    out = pd.DataFrame({"input": samples["id"].to_numpy(),
                        "run": samples["epoch"].to_numpy()})
    out = pd.concat([out, _system(samples, evals)], axis=1)
    for col in scores:
        values = samples[col].to_numpy(dtype=object)
        mapped = [np.nan if v is None or (isinstance(v, float) and np.isnan(v))
                  else _inspect_float(v, f"`samples` column {col!r}, row {i}")
                  for i, v in enumerate(values)]
        out[col[len("score_"):]] = np.asarray(mapped, dtype=float)
    for col in ("error", "limit"):
        if col in samples.columns:
            out[col] = samples[col].replace("", None).to_numpy()
    return out
