"""The bundled example data."""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_example"]


def load_example(name: str = "gpqa") -> pd.DataFrame:
    """Load a bundled evaluation result as a tidy DataFrame.

    Parameters
    ----------
    name : {'gpqa'}
        ``"gpqa"``: GPQA Diamond, 198 inputs x 5 runs x 2 systems, columns
        ``input_id, run, system, correct``. Source: stephlinds/evalconfidence
        @ ba5613a, ``examples/data/gpqa_diamond_scores.csv`` (Apache-2.0).

    Examples
    --------
    >>> import evalci
    >>> evalci.load_example().shape
    (1980, 4)
    """
    files = {"gpqa": "gpqa_diamond_2sys_5runs.csv"}
    if name not in files:
        raise ValueError(f"`name` must be one of {sorted(files)}, not {name!r}.")
    with resources.files("evalci").joinpath("data", files[name]).open("rb") as fh:
        return pd.read_csv(fh)
