"""Any JSON Lines, CSV or Parquet file, with a column mapping, into the tidy table.

:func:`read_jsonl` reads the file (the extension picks the format) and
names which columns are the input, run, system, values and metadata.
"""

from __future__ import annotations

import csv as _csv
import re
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

_WHOLE = re.compile(r"[+-]?\d+")


_FORMATS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def _read_table(file: Path, format: str, nested: bool = True, **csv) -> pd.DataFrame:
    """The file as a frame (``csv``: more options for ``pandas.read_csv``;
    ``nested``: a JSON line's objects become columns ``a.b``, else values);
    ``attrs["evalci_where"]`` says where its rows are (:func:`where`)."""
    if format == "jsonl":
        rows, lines = [], []
        for n, row in _json_lines(file):
            if not isinstance(row, dict):
                raise ValueError(
                    f"{file}, line {n}: the line is {_kind_of(row)}; every JSON "
                    "line must be an object (one row)."
                )
            rows.append(row)
            lines.append(n)
        out = pd.json_normalize(rows) if nested else pd.DataFrame(rows)
        out.attrs["evalci_where"] = ("jsonl", file, lines)
        return out
    try:
        if format == "csv":
            out = pd.read_csv(file, **csv)
        else:
            out = pd.read_parquet(file)
    except ImportError:
        raise
    except Exception as e:
        raise ValueError(f"{file} could not be read as {format}: {e}") from e
    out.attrs["evalci_where"] = (format, file, None)
    return out


def _csv_line(file: Path, i: int) -> int | None:
    """The line of a CSV file where data row ``i`` (from 0) starts, counting
    a cell's line breaks and skipping blank lines as pandas does."""
    try:
        with open(file, newline="", encoding="utf-8", errors="replace") as fh:
            reader = _csv.reader(fh)
            start, k = 1, -1  # the header is record -1
            for rec in reader:
                if rec:
                    if k == i:
                        return start
                    k += 1
                start = reader.line_num + 1
    except (OSError, _csv.Error):
        return None
    return None


def where(data: pd.DataFrame, i: int) -> str:
    """Where row ``i`` of a table :func:`_read_table` read is, for messages:
    its line in the file (JSON Lines, CSV: a cell's line breaks and blank
    lines counted) or its row (Parquet, from 0)."""
    kind, file, lines = data.attrs.get("evalci_where", (None, None, None))
    if kind == "jsonl":
        return f"line {lines[i]}"
    if kind == "csv" and (n := _csv_line(file, i)) is not None:
        return f"line {n}"
    return f"row {i} (from 0)"


def _whole_or_none(v) -> int | None:
    """``v`` as an int64's value: an integer, a float with no fraction, or
    the text of an integer; None for anything else (a bool, other text, a
    fraction, a number beyond int64)."""
    if isinstance(v, str) and _WHOLE.fullmatch(v.strip()):
        n = int(v)
    elif isinstance(v, (bool, np.bool_)):
        return None
    elif isinstance(v, (int, np.integer)):
        n = int(v)
    elif (
        isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer()
    ):
        n = int(v)
    else:
        return None
    return n if -(2**63) <= n < 2**63 else None


def whole_numbers(col: pd.Series, data: pd.DataFrame, arg: str, name) -> pd.Series:
    """A column of whole numbers as int64 (a CSV's text ``"2"`` is the number
    2); any other value (other text, a fraction, a boolean) raises, naming
    the file, the line and the column: never truncated."""
    out = []
    for i, v in enumerate(col.tolist()):
        n = _whole_or_none(v)
        if n is None:
            file = data.attrs.get("evalci_where", (None, "the table"))[1]
            raise ValueError(
                f"`{arg}`: column {name!r} of {file} holds {plain(v)!r} "
                f"({where(data, i)}), not a whole number (of int64); runs are numbered 0, "
                f"1, ... (leave `{arg}` out to number them in file order)."
            )
        out.append(n)
    return pd.Series(out, index=col.index, dtype="int64")


def _check_columns(data, file, roles: dict, values: list, meta: dict) -> None:
    """Every column named is in the file, no metadata column takes a key's
    name, and no key (input, system, run) is missing (naming its line)."""
    need = {**roles, "value": values, "columns": list(meta)}
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
    for arg, c in roles.items():
        if c is not None and data[c].isna().any():
            i = int(data[c].isna().to_numpy().argmax())
            raise ValueError(
                f"`{arg}`: column {c!r} of {file} has missing values ("
                f"{where(data, i)}); every row needs its {arg}."
            )


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
        every reader gives (:func:`evalci.sample_counts`), counting
        rows: ``found`` the system's rows, ``scored`` those with every value,
        ``unscored`` the rest; a table states no ``expected`` (None, and so
        ``missing``) nor any cause (0); ``source`` is the format.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from evalci.io.readers import read_jsonl
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
    roles = {"input": input, "system": system, "run": run}
    _check_columns(data, file, roles, values, meta)
    out = pd.DataFrame({"input": data[input]})
    out["system"] = data[system] if system is not None else file.stem
    if run is not None:
        out["run"] = whole_numbers(data[run], data, "run", run)
    else:  # file order within (system, input)
        out["run"] = out.groupby(["system", "input"], sort=False).cumcount()
    for c in values:
        col = data[c].map(lambda v: float(v) if isinstance(v, bool) else v)
        num = pd.to_numeric(col, errors="coerce")
        bad = num.isna() & col.notna()
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise ValueError(
                f"`value`: column {c!r} of {file} holds a non-numeric value "
                f"({plain(col.iloc[i])!r}, {where(data, i)}); map it to numbers "
                "first."
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
