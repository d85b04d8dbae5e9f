"""Progress on stderr for long work: a bar, or an elapsed-time line.

Dependency-free and silent unless it is wanted: nothing is written when the
stream is not a terminal, when ``EVALCI_NO_PROGRESS`` is set (to anything
but ``""`` or ``"0"``), or when the caller passes ``enabled=False`` (the
command line's ``--no-progress``). A bar redraws one line with ``\\r`` and
ends it with a newline; an elapsed-time line (:func:`working`, for a call
that reports nothing while it runs) is erased when the work ends, so a
finished command leaves only its output.

:func:`wanted` is the one rule the command line and
:func:`evalci.simulate.coverage.reproduce_paper` (``progress=None``) share.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

__all__ = ["Progress", "wanted", "working"]

#: Set to anything but "" or "0" to silence every progress line.
ENV = "EVALCI_NO_PROGRESS"
_WIDTH = 30  # characters of the bar


def wanted(enabled: bool | None = None, stream=None) -> bool:
    """Whether progress should be drawn on ``stream`` (default ``sys.stderr``).

    ``enabled=None`` decides for the caller: on only when the stream is a
    terminal and ``EVALCI_NO_PROGRESS`` is unset; ``True``/``False`` force it
    (``True`` still yields to the environment variable, which is how a user
    silences every bar at once).

    Examples
    --------
    >>> import io
    >>> from evalci._base.progress import wanted
    >>> wanted(None, io.StringIO())  # not a terminal
    False
    >>> wanted(False)
    False
    """
    if enabled is False:
        return False
    if os.environ.get(ENV, "") not in ("", "0"):
        return False
    if enabled:
        return True
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress:
    """A one-line progress bar: ``label [#####     ]  50.0%  1.2s, 1.2s left``.

    The arguments are those of ``evalci.simulate.coverage._Progress`` (total, enabled,
    label), so it can replace that class as it is.

        Parameters
        ----------
        total : int
            Units of work (trials, blocks); ``update(n)`` adds ``n`` done.
        enabled : bool or None
            As in :func:`wanted`.
        label : str
            Printed before the bar.
        stream : file, optional
            Default ``sys.stderr``.

        Examples
        --------
        >>> import io
        >>> from evalci._base.progress import Progress
        >>> out = io.StringIO()
        >>> with Progress(4, True, "trials", stream=out) as bar:
        ...     bar.update(2)
        >>> out.getvalue().startswith("\\rtrials [###############               ]  50.0%")
        True
    """

    def __init__(self, total: int, enabled=None, label: str = "", stream=None):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = wanted(enabled, self.stream) and total > 0
        self.total, self.done, self.label = total, 0, label
        self.start = time.perf_counter()

    def update(self, n: float = 1) -> None:
        """Count ``n`` more units done and redraw."""
        self.done += n
        if not self.enabled:
            return
        frac = min(self.done / self.total, 1.0)
        elapsed = time.perf_counter() - self.start
        left = elapsed / frac - elapsed if frac > 0 else 0.0
        bar = "#" * int(_WIDTH * frac)
        self.stream.write(
            f"\r{self.label} [{bar:<{_WIDTH}}] {100 * frac:5.1f}%  "
            f"{elapsed:.1f}s, {left:.1f}s left"
        )
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line (nothing when it was never drawn)."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextlib.contextmanager
def working(label: str, enabled=None, stream=None, delay: float = 0.5):
    """``label ... 3.2s`` on one line while the block runs, erased at its end.

    For a call that cannot report its own progress (one bootstrap): the
    line appears only after ``delay`` seconds, so quick work prints nothing.

    Examples
    --------
    >>> import io
    >>> from evalci._base.progress import working
    >>> out = io.StringIO()
    >>> with working("resampling", enabled=False, stream=out):
    ...     pass
    >>> out.getvalue()
    ''
    """
    stream = sys.stderr if stream is None else stream
    if not wanted(enabled, stream):
        yield
        return
    done = threading.Event()
    start = time.perf_counter()
    drawn = []

    def draw():
        # wait() returns True (stop) once the work is done
        while not done.wait(delay if not drawn else 0.2):
            text = f"\r{label} ... {time.perf_counter() - start:.1f}s"
            stream.write(text)
            stream.flush()
            drawn.append(len(text))

    thread = threading.Thread(target=draw, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if drawn:
            stream.write("\r" + " " * max(drawn) + "\r")
            stream.flush()
