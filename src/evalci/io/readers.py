"""Readers: from the logs of evaluation frameworks to evalci's tidy table.

Each reader returns one row per (input, run, system) with the value columns
the log holds, plus metadata columns, so that every function of the library
takes its output as it is: :func:`read_inspect` (Inspect AI ``.eval`` and
``.json`` logs), :func:`read_lm_eval` (lm-evaluation-harness
``--log_samples`` output), :func:`read_helm` (HELM
``per_instance_stats.json``) and :func:`read_jsonl` (any JSON Lines, CSV or
Parquet file, with a column mapping). Each reader has its own module
(:mod:`evalci.io.inspect`, :mod:`evalci.io.lm_eval`, :mod:`evalci.io.helm`,
:mod:`evalci.io.tables`; what they share is in ``evalci.io._shared``); this
module is their public home. Nothing else in the library reads files except
:func:`evalci.load_example`. Each format is read as its framework's source
writes it (the module and class are named where it is read); see
``docs/reading-logs.md`` for the field-to-column tables.

Pairwise preferences are not scores of one system: :func:`read_arena`
(Chatbot Arena battles) and :func:`read_arena_hard` (arena-hard-auto
judgments) return one row per battle (``model_a``, ``model_b``, ``winner``,
...) for :mod:`evalci.preference` (:mod:`evalci.io.arena`; ``docs/arena.md``).

The table every reader returns
------------------------------
``input``
    The framework's input id: ``int64`` when every id read is an integer,
    strings otherwise (pandas' default string dtype).
``run``
    ``int64``: the framework's own run number (Inspect's ``epoch`` counts
    from 1; lm-eval's repeats and HELM's ``train_trial_index`` from 0).
``system``
    Strings: the model the framework names.
value columns
    ``float64``, one per score or metric, named after it.
metadata columns
    Strings, missing values as NaN (``task``, ``log_file``, and whatever else
    the reader states; lm-eval's ``n_resps`` is ``int64``).

Rows are sorted by (system, input, run) and numbered from 0. The files read
are never written to. A missing file, a file in the wrong format or a
missing field raises one :class:`ValueError` that names the file and what is
missing; two files holding the same (system, input, run) raise one too.
"""

from evalci.io._shared import KEYS  # noqa: F401  (re-exported: the key columns)
from evalci.io.arena import read_arena, read_arena_hard
from evalci.io.helm import read_helm
from evalci.io.inspect import read_inspect
from evalci.io.lm_eval import read_lm_eval
from evalci.io.tables import (  # noqa: F401  (_FORMATS, _read_table: the CLI)
    _FORMATS,
    _read_table,
    read_jsonl,
)

__all__ = [
    "read_arena",
    "read_arena_hard",
    "read_helm",
    "read_inspect",
    "read_jsonl",
    "read_lm_eval",
]
