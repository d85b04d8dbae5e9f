"""Names made safe to print: on a terminal, in Markdown, on one line.

Every renderer (the report, the leaderboard, the command line) shows names
that come from the user's data: systems, inputs, columns, metrics, file
names. One of them can hold an ANSI escape (``"\\x1b[2J"`` clears a
terminal), a newline (a fake table row), a pipe (a fake table cell) or HTML
(``<script>``). This module is the one place that decides what such a name
becomes; nothing here imports the rest of evalci.

Control characters are made *visible*, not deleted: ``"a\\x1b[31m"`` prints
as ``a\\x1b[31m`` (the four characters ``\\ x 1 b``), so two names that
differ only in a control character still print differently, and what the
data holds is seen. The characters treated so:

* C0 controls (U+0000-U+001F) and DEL (U+007F): ``\\n``, ``\\r``, ``\\t``
  by their short names, the others as ``\\xNN``;
* C1 controls (U+0080-U+009F; U+009B is a one-character escape on some
  terminals) as ``\\xNN``;
* line and paragraph separators (U+2028, U+2029) and the bidirectional
  embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069, which
  reorder what a reader sees) as ``\\uNNNN``.

:func:`terminal` treats a name or one line (everything above is escaped,
newline and tab included); :func:`terminal_block` treats a block of lines
(newline and tab kept, everything else escaped). :func:`markdown` escapes a
name for a Markdown table cell or a line of Markdown prose: control
characters as above, then Markdown's punctuation with a backslash, then
``<``, ``>`` and ``&`` as HTML entities (Markdown renderers pass raw HTML
through). :func:`plot_label` keeps a name out of matplotlib's mathtext: a
``$`` is escaped as ``\\$``, so ``$x$`` is drawn as those three characters,
not as an italic x, and ``$\\frac$`` does not stop the drawing with a
parse error.

Values shown in messages go through :func:`as_written`: numpy 2 prints a
scalar with its type (``np.str_('zzz')``, ``np.float64(3.0)``) and pandas'
``itertuples`` a key as ``Pandas(task='t1', item=0)``; a user wrote
``'zzz'``, ``3.0`` and ``('t1', 0)``.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd

__all__ = [
    "as_written",
    "markdown",
    "plain",
    "plot_label",
    "terminal",
    "terminal_block",
]

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_BLOCK = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Markdown's inline punctuation that can start emphasis, code, a link, a
#: table cell, a heading or strike-through, and the escape itself
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def _visible(m: re.Match) -> str:
    ch = m[0]
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal(text) -> str:
    """A name or one line, safe on a terminal: every control character visible.

    Examples
    --------
    >>> print(terminal("gpt\\x1b[31m-4o\\nrow"))
    gpt\\x1b[31m-4o\\nrow
    """
    return _CONTROL.sub(_visible, str(text))


def terminal_block(text) -> str:
    """Lines of output, safe on a terminal: newline and tab kept, others visible."""
    return _CONTROL_BLOCK.sub(_visible, str(text))


def for_html(text) -> str:
    """A name or phrase for HTML: control characters visible, then escaped.

    Examples
    --------
    >>> print(for_html("<b>gpt\x1b[31m</b>"))
    &lt;b&gt;gpt\x1b[31m&lt;/b&gt;
    """
    return html.escape(terminal(text))


def terminal_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of a table to print, every string in it (cells, column and
    index labels) made safe by :func:`terminal`; numbers untouched.

    ``DataFrame.to_string`` prints strings as they are, so a system named
    ``"a\x1b[2J"`` in a result's table would clear the terminal; ``to_html``
    escapes HTML but keeps control characters. Run a result's table through
    this before either.
    """

    def safe(v):  # pandas prints a tuple's strings as they are too
        if isinstance(v, tuple):
            return tuple(safe(x) for x in v)
        return terminal(v) if isinstance(v, str) else v

    out = frame.copy(deep=False)
    for i, col in enumerate(frame.columns):
        if not pd.api.types.is_numeric_dtype(frame[col].dtype):
            out.isetitem(i, frame[col].map(safe))
    return out.rename(columns=safe, index=safe)


def _g4(v) -> str:
    return f"{v:.4g}"


def table_text(frame: pd.DataFrame) -> str:
    """A result's table as a repr prints it: no index, 4 significant digits,
    every string safe on a terminal (:func:`terminal_frame`)."""
    return terminal_frame(frame).to_string(index=False, float_format=_g4)


def result_html(name: str, header: str, frame: pd.DataFrame, note: str = "") -> str:
    """A result's ``_repr_html_``: its name, header and table (and a note
    below it), every string from the data made safe for HTML."""
    table = terminal_frame(frame).to_html(index=False, float_format=_g4, escape=True)
    below = f"<p>{for_html(note)}</p>" if note else ""
    return f"<p><b>{name}</b>: {for_html(header)}</p>{table}{below}"


def markdown(text) -> str:
    """A name (or a phrase holding names) safe in a Markdown table cell or line.

    Examples
    --------
    >>> print(markdown("<script>x</script>|a\\nb"))
    &lt;script&gt;x&lt;/script&gt;\\|a\\\\nb
    """
    return html.escape(_MD_SPECIAL.sub(r"\\\1", terminal(text)), quote=False)


def plot_label(text) -> str:
    r"""A name as matplotlib text: drawn as it is, never parsed as mathtext.

    matplotlib reads a string with an even number of unescaped ``$`` as
    mathtext (``"$x$"`` is an italic x; ``"$\frac$"`` raises a parse error
    when the figure is drawn). With every ``$`` escaped as ``\$`` the string
    holds no unescaped ``$``, and matplotlib draws it with each ``\$``
    turned back into ``$``: the original characters, whatever they were.

    Examples
    --------
    >>> print(plot_label("$x$ and a$b"))
    \$x\$ and a\$b

    Control characters but newline and tab are made visible first
    (:func:`terminal_block`): a font has no glyph for them.
    """
    return terminal_block(text).replace("$", r"\$")


def plain(value):
    """The Python value that ``value`` stands for: a numpy scalar as a Python
    scalar, a tuple (a namedtuple too) or list element by element.

    Examples
    --------
    >>> import numpy as np
    >>> plain((np.str_("t1"), np.int64(0)))
    ('t1', 0)
    """
    if isinstance(value, tuple):  # namedtuples (itertuples) become plain tuples
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, np.datetime64):  # .item() would give nanoseconds or a date
        return pd.Timestamp(value)
    if isinstance(value, np.timedelta64):
        return pd.Timedelta(value)
    return value.item() if isinstance(value, np.generic) else value


def as_written(value) -> str:
    """``repr`` of a value as a user wrote it, for messages: ``'zzz'``, ``3.0``.

    Examples
    --------
    >>> import numpy as np
    >>> print(as_written(np.str_("zzz")), as_written(np.float64(3.0)))
    'zzz' 3.0
    """
    return repr(plain(value))
