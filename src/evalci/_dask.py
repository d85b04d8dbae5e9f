"""Dask DataFrames: reduce to a small table with a Dask reduction, then resample.

Rows that agree on every column a bootstrap reads (input, groups, strata, the
value and the metric's columns) are interchangeable runs, so a Dask
``groupby(...).size()`` compresses the table exactly: each row of the result
stands for ``n`` identical runs. The engine then works on that small pandas
table (sufficient statistics times multiplicities), so the answer is the one
the pandas path gives on the full table, for the same seed.
"""

from __future__ import annotations

import pandas as pd

RUNS = "__evalci_runs__"


def is_dask_frame(obj) -> bool:
    """Whether ``obj`` is a Dask DataFrame (without importing Dask)."""
    return type(obj).__module__.startswith("dask") and hasattr(obj, "npartitions")


def compress(ddf, keys: list[str], sums: tuple[str, ...] = ()) -> pd.DataFrame:
    """The distinct rows of ``ddf[keys]`` with their multiplicity (or summed ``sums``).

    Computes one Dask reduction; the result is a pandas DataFrame.
    """
    missing = [c for c in [*keys, *sums] if c not in ddf.columns]
    if missing:
        shown = ", ".join(map(repr, list(ddf.columns)[:20]))
        raise ValueError(
            f"column {missing[0]!r} is not in the Dask DataFrame; available columns: "
            f"{shown}."
        )
    keys = list(dict.fromkeys(keys))
    grouped = ddf[keys + list(sums)].groupby(keys, dropna=False, observed=True)
    if sums:
        out = grouped[list(sums)].sum()
    else:
        out = grouped.size().rename(RUNS)
    return out.reset_index().compute()
