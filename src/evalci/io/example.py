"""The bundled example data."""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_example"]


def load_example(name: str = "gpqa") -> pd.DataFrame:
    """Load a bundled evaluation result as a tidy DataFrame.

    Parameters
    ----------
    name : {'gpqa', 'metaprompting'}
        ``"gpqa"``: GPQA Diamond, 198 inputs x 5 runs x 2 systems, columns
        ``input_id, run, system, correct``. Source: stephlinds/evalconfidence
        @ ba5613a, ``examples/data/gpqa_diamond_scores.csv`` (Apache-2.0).
        ``"metaprompting"``: GPT-4 on 3,600 inputs of 15 tasks under 7 prompt
        templates, one answer each (prompt template as a facet), columns
        ``input_id, task, template, system, correct``. Source:
        suzgunmirac/meta-prompting @ 4042256, ``outputs/`` (MIT), scored as
        ``tests/data/PROVENANCE.md`` says.

    Examples
    --------
    >>> import evalci
    >>> evalci.load_example().shape
    (1980, 4)
    >>> evalci.load_example("metaprompting").shape
    (25200, 5)
    """
    files = {"gpqa": "gpqa_diamond_2sys_5runs.csv",
             "metaprompting": "metaprompting_gpt4_7templates.csv.gz"}
    if name not in files:
        raise ValueError(f"`name` must be one of {sorted(files)}, not {name!r}.")
    with resources.files("evalci").joinpath("data", files[name]).open("rb") as fh:
        return pd.read_csv(fh, compression="gzip" if files[name].endswith(".gz") else None)
