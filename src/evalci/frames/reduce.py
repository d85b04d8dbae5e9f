"""What the Dask DataFrame and the Dask-backed DataArray paths share: the
multiplicity column of a reduction, whether per-input statistics can be summed
on the workers, a partition's distinct rows, and compare's argument checks
made before anything computes."""

from __future__ import annotations

import pandas as pd

#: the column that counts how many original rows a distinct row stands for
RUNS = "__evalci_runs__"


def _cells_apply(args) -> bool:
    """Whether per-input statistics can be summed on the workers (exactly).

    Numeric metrics (means, ratios, pass@k): statistics are per-row functions
    of numbers. Label metrics (accuracy, kappa) may read the set of labels
    seen, and counts tables and nested inputs need their rows: those take the
    exact tree reduction of distinct rows instead.
    """
    from evalci.metrics import Metric

    return (
        isinstance(args.metric, Metric)
        and args.metric.numeric
        and args.trials is None
        and not args.input
        and args.strategy == "cluster"
    )


def _distinct(part: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """A partition's distinct rows and how many times each occurs (map step)."""
    out = part.groupby(cols, dropna=False, observed=True, sort=False).size()
    return out.rename(RUNS).reset_index()


def check_compare_args(a: dict) -> None:
    """The arguments :func:`evalci.compare` checks first, with its messages."""
    from evalci.methods.compare.decisions import check_options

    check_options(
        a.get("method", "percentile"),
        a.get("adjust"),
        a.get("alternative", "two-sided"),
        a.get("missing", "raise"),
        a.get("mme"),
        a.get("strategy"),
    )
