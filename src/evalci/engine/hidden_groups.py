"""Groups hidden in a cluster: columns whose names say they identify a system
or an input, left out of ``by``/``cluster``, and the warning when the rows of
one cluster differ in them (the scores of several systems pooled as one).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.warnings import (
    EstimandWarning,
    PooledGroupsWarning,
)
from evalci._base.warnings import warn as _warn

# Column names that look like a system, or an input, by their first or last word
_SYSTEM_WORDS = {"system", "model", "llm", "agent", "policy", "checkpoint", "variant"}
_INPUT_WORDS = {"input", "item", "question", "problem", "task", "instance", "doc"}
_INPUT_WORDS |= {"example", "sample", "query", "id"}
_NOT_AN_ID = {"answer", "output", "response", "pred", "prediction", "score", "text"}
_NOT_AN_ID |= {"completion", "run", "trial", "epoch", "seed", "repeat", "attempt"}


def _identifier_columns(columns, used) -> dict:
    """Unused columns whose names look like a system or an input identifier."""
    out = {}
    for col in columns:
        if col in used or not isinstance(col, str):
            continue
        tokens = [t for t in re.split(r"[^0-9a-z]+", col.lower()) if t]
        if not tokens or set(tokens) & _NOT_AN_ID:
            continue
        ends = {tokens[0], tokens[-1]}
        if ends & _SYSTEM_WORDS:
            out[col] = "system"
        elif ends & _INPUT_WORDS:
            out[col] = "input"
    return out


def _warn_hidden_groups(frame, suspects, cluster_codes, group_codes, args) -> None:
    """Warn when an input's rows differ in a system-like (or input-like) column.

    Rows that share a ``cluster`` key are taken as runs of one input. If they
    differ in a column named like a system (``system``, ``model_name``...),
    several systems are being pooled as if they were runs; if they differ in
    one named like an input (``input_id``, ``task``...) while ``input`` is not
    given, every cluster counts as one input. Both are silent estimand changes.
    """
    if not suspects:
        return
    n_groups = int(group_codes.max()) + 1
    cell = cluster_codes if n_groups == 1 else cluster_codes * n_groups + group_codes
    if np.bincount(cell).max() <= 1:
        return  # one row per cell (a counts table): nothing can differ in a cell
    for col, kind in suspects.items():
        if kind == "input" and (args.input or args.strategy != "cluster"):
            continue
        codes = pd.factorize(frame[col])[0]
        # O(R): each cell's first code (reversed assignment keeps the first)
        first = np.empty(int(cell.max()) + 1, dtype=codes.dtype)
        first[cell[::-1]] = codes[::-1]
        if (codes == first[cell]).all():
            continue  # constant within every input
        if kind == "system":
            _warn(
                f"rows of one input (`cluster` {args.cluster}) differ in {as_written(col)}, "
                "which looks like a system identifier: they are pooled as extra "
                f"runs of the same input. Pass by={as_written(col)} for one interval per "
                "system, or select one system first.",
                PooledGroupsWarning,
            )
        else:
            _warn(
                f"rows of one cluster (`cluster` {args.cluster}) differ in {as_written(col)}, "
                "which looks like an input identifier: with `input` left out, each "
                "cluster counts as one input (the score is a mean of cluster "
                f"means). If a cluster holds several inputs, pass input={as_written(col)}: "
                "whole clusters are then resampled and inputs count equally.",
                EstimandWarning,
            )
