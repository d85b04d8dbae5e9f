"""Calling the ``evalci`` command in the tests: in a subprocess (:func:`run`,
with the checkout's ``src`` first on the path) or in-process with its output
captured (:func:`call`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalci.reporting import cli

SRC = str(Path(__file__).resolve().parents[1] / "src")


def run(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": SRC, **(env or {})}
    full.pop("EVALCI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "evalci", *map(str, args)],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd,
        timeout=600,
    )


def call(*args, capsys) -> tuple[int, str, str]:
    """The command in this process (fast: no import): (exit code, stdout, stderr)."""
    capsys.readouterr()
    try:
        code = cli.main([str(a) for a in args])
    except SystemExit as e:  # argparse: --help, --version, bad options
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err
