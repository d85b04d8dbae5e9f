"""The command line's output: one result as a table, Markdown, JSON or HTML.

One job: turn a result frame (and its title and notes) into the text the
command prints, safe wherever it lands.

* ``table``: an aligned table; names from the data go through
  :func:`evalci._base.text.terminal` (control characters, ANSI escapes
  among them, are made visible, so nothing in a name drives the terminal).
* ``markdown``: every cell, the title and the notes through
  :func:`evalci._base.text.markdown` (pipes, HTML and newlines escaped).
* ``json``: strict JSON (RFC 8259): no ``NaN`` or ``Infinity`` tokens.
  Missing and not-applicable values (NaN, None) are ``null``; an infinite
  value is ``null`` too, and its record gets a ``"note"`` naming each such
  field and what it held (``"not finite, written as null: high = inf"``).
* ``html``: every cell escaped by pandas, title and notes by
  :func:`html.escape`.

Whatever the format, the text written passes
:func:`evalci._base.text.terminal_block` last: no control character but
newline and tab leaves the command.
"""

from __future__ import annotations

import html
import json
import math
import sys

import numpy as np
import pandas as pd

from evalci._base import text as _text

__all__ = ["emit", "fmt_cell", "render", "to_json"]

#: the key of a JSON record's note on values that were not finite
NOTE = "note"


def fmt_cell(v) -> str:
    """A cell as text: floats to 4 significant digits, missing as ''."""
    if v is None or v is pd.NA:
        return ""
    if isinstance(v, (float, np.floating)):
        return "" if np.isnan(v) else f"{v:.4g}"
    return str(v)


def _plain(v, path: str, bad: list):
    """A JSON value: numpy as Python, NaN and NA as null, inf as null (noted)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, np.generic):
        return _plain(v.item(), path, bad)
    if isinstance(v, float):
        if math.isnan(v):
            return None
        if math.isinf(v):
            bad.append(f"{path} = {'inf' if v > 0 else '-inf'}")
            return None
        return v
    if isinstance(v, dict):
        return {str(k): _plain(x, f"{path}.{k}", bad) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_plain(x, f"{path}[{i}]", bad) for i, x in enumerate(v)]
    return v


def to_json(frame: pd.DataFrame) -> str:
    """Records (a list of objects), keys in column order; strict JSON."""
    rows = []
    note = NOTE if NOTE not in frame.columns else f"evalci_{NOTE}"
    for r in frame.itertuples(index=False):
        bad: list[str] = []
        row = {
            str(c): _plain(v, str(c), bad)
            for c, v in zip(frame.columns, r, strict=True)
        }
        if bad:
            row[note] = "not finite, written as null: " + ", ".join(bad)
        rows.append(row)
    return json.dumps(rows, indent=2, default=str, allow_nan=False)


def _markdown(frame: pd.DataFrame) -> str:
    def esc(v):
        return _text.markdown(fmt_cell(v))

    head = "| " + " | ".join(esc(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(esc(v) for v in r) + " |" for r in frame.itertuples(index=False)]  # fmt: skip
    return "\n".join([head, rule, *rows])


def render(frame: pd.DataFrame, fmt: str, title: str, notes=(), full=None) -> str:
    """One result in the chosen format; ``full`` is what JSON gets (all columns)."""
    if fmt == "json":
        return to_json(full if full is not None else frame)
    if fmt == "markdown":
        md = _text.markdown
        parts = [f"**{md(title)}**", "", _markdown(frame)]
        return "\n".join(parts + ([""] + [f"- {md(n)}" for n in notes] if notes else []))  # fmt: skip
    if fmt == "html":
        table = frame.to_html(index=False, float_format=fmt_cell, na_rep="")
        notes_html = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
        return (f"<div><p>{html.escape(title)}</p>{table}"
                + (f"<ul>{notes_html}</ul>" if notes else "") + "</div>")  # fmt: skip
    shown = frame.copy()
    shown.columns = [_text.terminal(c) for c in shown.columns]
    for c in shown.columns:
        shown[c] = shown[c].map(lambda v: _text.terminal(fmt_cell(v)))
    lines = [title, shown.to_string(index=False), *notes]
    return "\n".join(_text.terminal(x) if i != 1 else x for i, x in enumerate(lines))


def emit(text: str, output: str | None, say) -> None:
    """Write ``text`` to ``output`` (a path) or stdout; control characters visible."""
    text = _text.terminal_block(text.rstrip("\n")) + "\n"
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
        say(f"wrote {output}")
    else:
        sys.stdout.write(text)
