"""The command line's failures and warnings: one line each, never a traceback.

The contract (docs/cli.md, "Errors and exit codes"):

* A failure on the user's file or options is one line on stderr,
  ``evalci: error: <file>: <what>`` (``evalci: error: <what>`` for a
  command without a file), and exit code 2. Anything raised while the file
  is read counts as the file's fault, whatever its type: a hostile file can
  make a decompressor or a parser raise anything (``zipfile.BadZipFile``,
  ``zlib.error``, ``UnicodeDecodeError``, ``RecursionError``,
  ``MemoryError``...). After reading, the errors the library raises on bad
  input (``ValueError``, ``TypeError``, ``KeyError``, ``OSError``,
  ``ImportError``, ``NotImplementedError``, ``RecursionError``,
  ``MemoryError``, ``zipfile.BadZipFile``) are treated the same way.
* Any other exception is a bug in evalci: one line
  ``evalci: error: internal error (...)`` asking for a report, exit code 1.
* Ctrl-C: ``evalci: interrupted`` and exit code 130 (128 + SIGINT).
* ``EVALCI_DEBUG=1`` re-raises every one of them, with its traceback.

Warnings print as ``evalci: warning: <text>``, one line. In every line the
library's argument names become the options that set them (```value``` ->
```--value```, ``dropna=True`` -> ``--dropna``, ``input='q'`` ->
``--input q``, ``missing='drop'`` -> ``--missing drop``), and control
characters in names from the data are made visible (:func:`evalci._base.text.terminal`).
"""

from __future__ import annotations

import os
import re
import sys
import zipfile

from evalci._base import text as _text
from evalci._base.warnings import EvalciWarning

__all__ = ["FileFault", "INPUT_ERRORS", "one_line", "run_guarded"]

#: what the library raises on bad input: exit 2, not a bug
INPUT_ERRORS = (ValueError, TypeError, KeyError, OSError, ImportError,
                NotImplementedError, RecursionError, MemoryError,
                zipfile.BadZipFile, EOFError)  # fmt: skip

#: the library's argument names, as the options that set them
OPTIONS = {
    "value": "--value",
    "input": "--input",
    "cluster": "--cluster",
    "system": "--system",
    "run": "--run",
    "successes": "--successes",
    "trials": "--trials",
    "metric": "--metric",
    "method": "--method",
    "n_resamples": "--n-resamples",
    "confidence_level": "--confidence-level",
    "mme": "--mme",
    "by": "--by",
    "strata": "--strata",
    "baseline": "--baseline",
    "target_width": "--target-width",
    "budget": "--budget",
    "cost_input": "--cost-input",
    "cost_run": "--cost-run",
    "scorer": "--scorer",
    "stat": "--stat",
    "split": "--split",
    "task": "--task",
    "dropna": "--dropna",
    "missing": "--missing",
}
_DEBUG = "EVALCI_DEBUG"


class FileFault(Exception):
    """An exception raised while the command read ``file``."""

    def __init__(self, file, error: BaseException):
        super().__init__(str(error))
        self.file, self.error = file, error


def _text_of(e: BaseException) -> str:
    if isinstance(e, MemoryError):
        return "out of memory while reading or analysing it"
    if isinstance(e, RecursionError):
        return "nested too deeply to read (maximum recursion depth exceeded)"
    text = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    text = " ".join(str(text).split())
    if not text:
        return type(e).__name__
    if isinstance(e, KeyError) and " " not in text:
        return f"missing field {text}"
    if not isinstance(e, (ValueError, TypeError, OSError, KeyError, ImportError)):
        return f"{type(e).__name__}: {text}"
    return text


def one_line(e, options=None) -> str:
    """The message on one line, argument names as the options that set them."""
    options = OPTIONS if options is None else options
    text = _text_of(e) if isinstance(e, BaseException) else " ".join(str(e).split())
    text = re.sub(r"`(\w+)`", lambda m: f"`{options.get(m[1], m[1])}`", text)

    def option(m):
        if m[1] not in options:
            return m[0]
        return options[m[1]] if m[2] == "True" else f"{options[m[1]]} {m[3]}"

    text = re.sub(r"\b(\w+)=('([^']*)'|True\b)", option, text)
    return _text.terminal(text)


def _with_file(text: str, file) -> str:
    """``<file>: text`` unless the text names the file (or, of several
    files, one of them) already."""
    files = [] if file is None else file if isinstance(file, list) else [file]
    if len(files) == 1 and not text.startswith(str(files[0])):
        return f"{_text.terminal(files[0])}: {text}"
    if len(files) > 1 and not any(str(f) in text for f in files):
        return f"{_text.terminal(' '.join(map(str, files)))}: {text}"
    return text


def show_warning(options):
    """A ``warnings.showwarning`` printing one line ``evalci: warning: ...``."""

    def show(message, category, filename, lineno, file=None, line=None):
        name = "" if issubclass(category, EvalciWarning) else f"{category.__name__}: "
        sys.stderr.write(f"evalci: warning: {name}{one_line(str(message), options)}\n")

    return show


def run_guarded(func, args, options) -> int:
    """``func(args)`` under the contract above; returns the exit code."""
    file = getattr(args, "file", None)
    debug = bool(os.environ.get(_DEBUG))
    try:
        return func(args)
    except KeyboardInterrupt:
        if debug:
            raise
        sys.stderr.write("evalci: interrupted\n")
        return 130
    except FileFault as e:
        if debug:
            raise e.error from None
        sys.stderr.write(f"evalci: error: {_with_file(one_line(e.error, options), e.file)}\n")  # fmt: skip
        return 2
    except BrokenPipeError:  # `evalci ... | head`: the reader left; nothing to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except INPUT_ERRORS as e:
        if debug:
            raise
        sys.stderr.write(f"evalci: error: {_with_file(one_line(e, options), file)}\n")
        return 2
    except Exception as e:  # a bug in evalci, not in the input
        if debug:
            raise
        sys.stderr.write(
            f"evalci: error: internal error ({type(e).__name__}: "
            f"{one_line(str(e), options)}); this is a bug in evalci: please "
            f"report it with the traceback {_DEBUG}=1 shows.\n"
        )
        return 1
