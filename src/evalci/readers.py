"""Readers: from the logs of evaluation frameworks to evalci's tidy table.

Each reader returns one row per (input, run, system) with the value columns
the log holds, plus metadata columns, so that every function of the library
takes its output as it is. Readers of Inspect AI, lm-evaluation-harness and
HELM logs, and of generic JSON Lines / CSV / Parquet files with a column
mapping, belong here (issue 13); nothing else in the library reads files
except :func:`evalci.load_example`.
"""

from __future__ import annotations

__all__: list[str] = []
