"""How the closed-form methods name inputs and groups, and refuse missing values.

Shared by :mod:`evalci.methods.analytic.intervals`, :mod:`evalci.methods.analytic.paired_binary` and
:mod:`evalci.methods.analytic.run_level`, so their errors and warnings read alike.
"""

from __future__ import annotations

import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_no_missing

#: how :func:`check_frame` tells analytic_ci and mcnemar callers to get a DataFrame
_FRAME_HINT = "for xarray objects convert first with da.evalci.to_frame()"


def _no_missing(frame: pd.DataFrame, col: str, name: str, hint: str) -> None:
    fix = f"drop those rows (data.dropna(subset=[{as_written(col)}])) or {hint}"
    check_no_missing(frame, col, name, fix)


def _where(groups, g) -> str:
    return "" if groups is None else f" in group {as_written(groups[g])}"
