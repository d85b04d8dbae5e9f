"""Any JSON Lines, CSV or Parquet file, with a column mapping, into the tidy table.

:func:`read_jsonl` reads the file (the extension picks the format) and
names which columns are the input, run, system, values and metadata.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from evalci._base.text import plain
from evalci.io._shared import (
    KEYS,
    _files,
    _json_lines,
    _kind_of,
    _sample_record,
    _tidy,
)

__all__ = ["read_jsonl"]


_FORMATS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def _read_table(file: Path, format: str) -> pd.DataFrame:
    if format == "jsonl":
        rows = []
        for n, row in _json_lines(file):
            if not isinstance(row, dict):
                raise ValueError(
                    f"{file}, line {n}: the line is {_kind_of(row)}; every JSON "
                    "line must be an object (one row)."
                )
            rows.append(row)
        return pd.json_normalize(rows)  # nested fields as "a.b"
    try:
        return pd.read_csv(file) if format == "csv" else pd.read_parquet(file)
    except ImportError:
        raise
    except Exception as e:
        raise ValueError(f"{file} could not be read as {format}: {e}") from e


def read_jsonl(
    path,
    *,
    input: str,
    value: str | list[str],
    run: str | None = None,
    system: str | None = None,
    columns: list[str] | dict[str, str] | None = None,
    format: str | None = None,
) -> pd.DataFrame:
    """Read a JSON Lines, CSV or Parquet file into the tidy table.

    Parameters
    ----------
    path : path
        The file; its extension (``.jsonl``/``.ndjson``, ``.csv``,
        ``.parquet``/``.pq``) picks the format unless ``format`` is given.
    input : str
        The column holding the input id. Nested JSON fields are named with
        dots (``"doc.id"``).
    value : str or list of str
        The value column(s); kept under their names, as ``float64``
        (booleans become 1/0).
    run : str, optional
        The column numbering runs. By default runs are numbered 0, 1, ...
        within each (system, input) in file order.
    system : str, optional
        The column naming the system; by default every row's system is the
        file's stem.
    columns : list of str or dict, optional
        Metadata columns to keep (a dict renames them: ``{old: new}``).
    format : {'jsonl', 'csv', 'parquet'}, optional
        Override the format the extension implies.

    Returns
    -------
    pandas.DataFrame
        ``input``, ``run``, ``system``, the value columns, the metadata
        columns (as strings), sorted by (system, input, run).
        ``attrs["evalci_samples"]``: one record per system, with the keys
        every reader gives (:func:`evalci.readers.sample_counts`), counting
        rows: ``found`` the system's rows, ``scored`` those with every value,
        ``unscored`` the rest; a table states no ``expected`` (None, and so
        ``missing``) nor any cause (0); ``source`` is the format.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from evalci.readers import read_jsonl
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
    >>> rows = [{"q": f"q{i}", "model": m, "correct": (i + j) % 2 == 0}
    ...         for m in ("a", "b") for i in range(2) for j in range(2)]
    >>> _ = f.write_text("\\n".join(json.dumps(r) for r in rows))
    >>> read_jsonl(f, input="q", value="correct", system="model")
      input  run system  correct
    0    q0    0      a      1.0
    1    q0    1      a      0.0
    2    q1    0      a      0.0
    3    q1    1      a      1.0
    4    q0    0      b      1.0
    5    q0    1      b      0.0
    6    q1    0      b      0.0
    7    q1    1      b      1.0
    """
    file = _files(path, (), "path", "file")[0]
    if format is None:
        format = _FORMATS.get(file.suffix.lower())
        if format is None:
            raise ValueError(
                f"{file}: cannot tell the format from {file.suffix!r}; pass "
                "format='jsonl', 'csv' or 'parquet'."
            )
    elif format not in ("jsonl", "csv", "parquet"):
        raise ValueError(
            f"`format` must be 'jsonl', 'csv' or 'parquet'; got {format!r}."
        )
    data = _read_table(file, format)
    values = [value] if isinstance(value, str) else list(value)
    meta = columns if isinstance(columns, dict) else {c: c for c in columns or []}
    need = {
        "input": input,
        "value": values,
        "run": run,
        "system": system,
        "columns": list(meta),
    }
    for arg, cols in need.items():
        for c in [cols] if isinstance(cols, str) else cols or []:
            if c not in data.columns:
                raise ValueError(
                    f"`{arg}`: {file} has no column {c!r}; it has {list(data.columns)[:20]}."
                )
    clash = set(meta.values()) & set(KEYS + values)
    if clash:
        c = sorted(clash)[0]
        raise ValueError(
            f"`columns`: a metadata column named {c!r} would overwrite the "
            f"table's {c!r} column; rename it with a dict ({{{c!r}: "
            f"'{c}_label'}}) or pass it as `{c}=` if it is one."
        )
    for arg, c in (("input", input), ("system", system), ("run", run)):
        if c is not None and data[c].isna().any():
            raise ValueError(
                f"`{arg}`: column {c!r} of {file} has missing values (row "
                f"{int(data[c].isna().idxmax())}); every row needs its {arg}."
            )
    out = pd.DataFrame({"input": data[input]})
    out["system"] = data[system] if system is not None else file.stem
    if run is not None:
        out["run"] = _whole_numbers(data[run], run, file, format)
    else:  # file order within (system, input)
        out["run"] = out.groupby(["system", "input"], sort=False).cumcount()
    for c in values:
        col = data[c].map(lambda v: float(v) if isinstance(v, bool) else v)
        num = pd.to_numeric(col, errors="coerce")
        bad = num.isna() & col.notna()
        if bad.any():
            raise ValueError(
                f"`value`: column {c!r} of {file} holds a non-numeric value "
                f"({plain(col[bad].iloc[0])!r}, {_where(bad, format)}); map it to "
                "numbers first."
            )
        out[c] = num
    for old, new in meta.items():
        out[new] = data[old]
    out["input"] = list(data[input])  # keep Python ints for the dtype rule
    out = _tidy(out, values, list(meta.values()))
    # a plain table says nothing of what it should hold, nor why a value is
    # missing: per system, the rows with every value and the rest
    full = out[values].notna().all(axis=1)
    out.attrs["evalci_samples"] = [
        _sample_record(
            file,
            name,
            None,
            None,
            None,
            format,
            scored=int(ok.sum()),
            unscored=int((~ok).sum()),
        )  # fmt: skip
        for name, ok in full.groupby(out["system"], sort=False)
    ]
    return out


def _where(bad: pd.Series, format: str) -> str:
    """The first bad row, as a reader of the file finds it: the line of a CSV
    (its header is line 1) or JSON-lines file, the row of a Parquet file."""
    i = int(np.flatnonzero(bad.to_numpy())[0])
    if format == "csv":
        return f"line {i + 2}"
    return f"line {i + 1}" if format == "jsonl" else f"row {i}"


def _whole_numbers(col: pd.Series, name: str, file, format: str) -> pd.Series:
    """A run column as int64, refusing text and fractions (never truncated)."""
    num = pd.to_numeric(col.map(lambda v: None if isinstance(v, bool) else v),
                        errors="coerce")  # fmt: skip
    bad = num.isna() | (num != np.floor(num))
    if bad.any():
        raise ValueError(
            f"`run`: column {name!r} of {file} holds {plain(col[bad].iloc[0])!r} "
            f"({_where(bad, format)}), not a whole number; runs are numbered "
            "0, 1, ... (leave `run` out to number them in file order)."
        )
    return num.astype("int64")
