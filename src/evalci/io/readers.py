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
are never written to. Every reader accounts for the samples it read in
``df.attrs["evalci_samples"]``, a list of records with the same keys for
every format (:data:`SAMPLE_KEYS`); :func:`sample_counts` gives them as a
table. A missing file, a file in the wrong format or a
missing field raises one :class:`ValueError` that names the file and what is
missing; two files holding the same (system, input, run) raise one too.
"""

from __future__ import annotations

import pandas as pd

from evalci.io._shared import (
    KEYS,  # noqa: F401  (re-exported: the key columns)
    OUTCOMES,
    SAMPLE_KEYS,
)
from evalci.io.arena import read_arena, read_arena_hard, read_arena_rank_json
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
    "read_arena_rank_json",
    "read_helm",
    "read_inspect",
    "read_jsonl",
    "read_lm_eval",
    "sample_counts",
]


def sample_counts(df: pd.DataFrame) -> pd.DataFrame:
    """The sample counts a reader left on its table, as a table.

    Parameters
    ----------
    df : pandas.DataFrame
        A table returned by :func:`read_inspect`, :func:`read_lm_eval`,
        :func:`read_helm` or :func:`read_jsonl` (or a slice of one: pandas
        carries ``attrs`` along).

    Returns
    -------
    pandas.DataFrame
        One row per log file (and task, and split; per system for
        :func:`read_jsonl`), the records of ``df.attrs["evalci_samples"]``:
        ``log_file``, ``system``, ``task``, ``split`` (None where the format
        has none), ``expected`` (what the log says it should hold; None if
        it says nothing), ``found`` (what it holds), of which ``scored``,
        ``errored``, ``invalidated``, ``stopped_early`` and ``unscored``
        (they add up to ``found``), ``hit_limit`` (those a limit stopped,
        counted under one of the others too), ``missing``
        (``expected - found``, None when ``expected`` is) and ``source``
        (``"summaries"``/``"samples"`` for Inspect, else the file kind). So
        ``scored + errored + invalidated + stopped_early + unscored +
        missing == expected``. A count is in the format's unit: samples (id
        x epoch) for Inspect, documents for lm-eval, instances for HELM,
        rows for :func:`read_jsonl`. The counts, ``expected`` and
        ``missing`` are nullable integers (``Int64``).

    Raises
    ------
    ValueError
        A table without the records (not from a reader, or from an
        operation that dropped its ``attrs``).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from evalci.io.readers import read_jsonl, sample_counts
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "model-a.jsonl"
    >>> rows = [{"q": 0, "ok": 1}, {"q": 1, "ok": None}, {"q": 2, "ok": 0}]
    >>> _ = f.write_text("\\n".join(json.dumps(r) for r in rows))
    >>> sample_counts(read_jsonl(f, input="q", value="ok"))[
    ...     ["system", "found", "scored", "unscored", "missing"]]
        system  found  scored  unscored  missing
    0  model-a      3       2         1     <NA>
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(
            f"`df` must be a pandas DataFrame a reader returned; got "
            f"{type(df).__name__}."
        )
    records = df.attrs.get("evalci_samples")
    if records is None:
        raise ValueError(
            "`df` holds no sample counts (df.attrs['evalci_samples']): it was "
            "not returned by an evalci reader (read_inspect, read_lm_eval, "
            "read_helm, read_jsonl), or an operation dropped its attrs (pd.concat "
            "of tables read apart, say). Read the logs together, or count the "
            "table's missing values yourself."
        )
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError(
            "`df.attrs['evalci_samples']` is not a list of records (an older "
            "evalci gave a dict keyed by file for Inspect logs); read the logs "
            "again with this version."
        )
    out = pd.DataFrame(records, columns=list(SAMPLE_KEYS))
    for c in ("expected", *OUTCOMES, "hit_limit", "missing", "found"):
        out[c] = out[c].astype("Int64")
    return out
