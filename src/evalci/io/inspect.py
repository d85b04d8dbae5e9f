"""Inspect AI eval logs (``.eval`` archives and ``.json`` logs) into the tidy table.

:func:`read_inspect` reads each log with ``inspect_ai`` when it is
installed, else with :mod:`json` and :mod:`zipfile` (and zstd, through
:mod:`evalci.io._zip`) following Inspect's own layout
(:mod:`evalci.io.inspect_logs`); it reads the scores
from the sample summaries unless asked for the full samples, keeps every
sample as a row (errored, invalidated and stopped early ones with their
cause), counts them (``DataFrame.attrs["evalci_samples"]``), and maps score
values as Inspect's ``value_to_float`` does (:mod:`evalci.io.inspect_rows`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from evalci.io._shared import KEYS, _as_input, _files, _tidy_by, _with_facets
from evalci.io._zip import MAX_MEMBER_BYTES
from evalci.io.inspect_logs import _native, _plain_eval, _plain_json
from evalci.io.inspect_rows import _STOPS, _inspect_facets, _inspect_rows
from evalci.io.inspect_sets import (
    check_manifests,
    check_overlaps,
    choose_task,
    resolve_attempts,
)

__all__ = ["read_inspect"]


# inspect_ai log/_file.py is_log_file: every .eval file, and a .json file
# whose name starts with an ISO timestamp (not the logs.json manifest).
_INSPECT_JSON = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")


def _is_log(p: Path) -> bool:
    return p.suffix == ".eval" or _INSPECT_JSON.match(p.name) is not None


def _inspect_ai():
    """The inspect_ai package when installed, else None (tests patch this)."""
    try:
        import inspect_ai.log
    except ImportError:
        return None
    return inspect_ai


def _given(paths):
    """``paths`` as given, an iterator made a list (it is read twice)."""
    if isinstance(paths, (str, Path)):
        return [paths]
    return list(paths) if isinstance(paths, Iterable) else paths


def _with_stops(out: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``error``, ``limit``, ``invalidated`` and ``stopped_early`` before
    ``log_file``, each where a sample has one (a clean log's table keeps its
    columns); missing stays missing."""
    stops = [c for c in _STOPS if frame[c].notna().any()]
    if not stops:
        return out
    side = frame[[*KEYS, "task", *stops]].copy()
    side["input"] = _as_input(side["input"])
    side["run"] = side["run"].astype("int64")
    for c in ("system", "task"):
        side[c] = side[c].map(str).astype(str)
    for c in stops:
        text = side[c].map(str).astype(str)
        text[side[c].isna()] = None
        side[c] = text
    attrs = out.attrs
    out = out.merge(side, on=[*KEYS, "task"], how="left", validate="one_to_one")
    order = [c for c in out.columns if c != "log_file"] + ["log_file"]
    out = out[order]
    out.attrs = attrs
    return out


def read_inspect(
    paths,
    *,
    scorer: str | None = None,
    task: str | None = None,
    samples: bool = False,
    max_member_bytes: int = MAX_MEMBER_BYTES,
) -> pd.DataFrame:
    """Read Inspect AI eval logs (``.eval`` or ``.json``) into the tidy table.

    Parameters
    ----------
    paths : path, list of paths, directory or glob
        One or several logs; a directory is searched (recursively) for the
        files Inspect lists as logs: every ``*.eval``, and ``*.json`` whose
        name starts with a timestamp (so the ``logs.json`` manifest is not
        read). Each log's ``eval.model`` is its system, so several models'
        logs give several systems, and each log's ``eval.task`` its task, so
        an eval set's tasks give several tasks (rows side by side: ``task``
        is part of the key). Logs of one ``eval.task_id`` and model are
        attempts at one task (``eval_set`` and ``eval_retry`` write one per
        attempt, each seeded from the last): only the newest is read, with
        a warning naming the files set aside, whether or not the folder
        holds Inspect's ``eval-set.json``.
    scorer : str, optional
        Read only this scorer's values (default: every scorer).
    task : str, optional
        Read only the logs of this task (``eval.task``; default: every
        task found). A name no log holds raises, listing the tasks found.
    samples : bool, default False
        Read the scores of a ``.eval`` log from its full samples
        (``samples/{id}_epoch_{e}.json``, one member each, transcripts
        included) instead of its one ``summaries.json`` member (what
        Inspect's own ``samples_df`` reads). Both give the same table; the
        summaries are read unless the log is invalidated (summaries do not
        say which samples are) or does not summarise every sample it holds.
        A ``.json`` log always holds its full samples.
    max_member_bytes : int, default 256 MiB
        The largest member of a ``.eval`` archive (inflated, checked before
        it is read), or ``.json`` log, that is read; a larger one raises
        :class:`ValueError` naming it. Raise it for a trusted log with
        samples that large.

    Returns
    -------
    pandas.DataFrame
        ``input`` (sample ``id``), ``run`` (sample ``epoch``, from 1),
        ``system`` (``eval.model``), one ``float64`` column per scorer
        (named after it; a dict-valued score gives one column per key,
        ``<scorer>_<key>``), then ``task`` (``eval.task``), ``target`` (the
        sample's target; a list target as JSON), and, each only when some
        sample has one: ``error`` (the error that stopped the sample),
        ``limit`` (the limit that stopped it: ``"token"``, ``"time"``, ...),
        ``invalidated`` (the invalidation's ``reason``, else ``"invalidated
        by <author>"``) and ``stopped_early`` (the reason Inspect's
        EarlyStopping hook gave, else ``"stopped early"``); then
        ``log_file``; then the facets (sources of variance) the logs
        record, each a column only when some log read records it (a log
        that does not has missing values in it; nothing is filled in):
        ``role_<name>``, one per model role (``eval.model_roles``, role ->
        its ``model``; e.g. ``role_grader``); ``grader``, the grader model:
        each scorer's ``grader_model`` or ``model`` argument
        (``eval.scorers[].options``, or ``results.scores[].params`` in a
        log without ``eval.scorers``) or metadata, else the model of the
        role its ``model_role`` argument names, else the ``grader`` role's
        model (several graders joined by ``", "``; a model-graded scorer
        given none uses the eval's model, which is not filled in); ``seed``
        (``eval.model_generate_config.seed``, ``Int64``). The run is
        ``run``, the epoch. ``df.attrs["evalci_facets"]`` lists the facet
        columns. Every sample keeps its row: an errored one has NaN
        values (unless it was scored on error) and its message in
        ``error``; an invalidated one has NaN values (its score is not
        valid); a sample stopped early was never run, so it is in no sample
        of the log: its row, from ``results.early_stopping.early_stops``,
        has NaN values. So ``missing=`` (``"raise"`` by default) decides
        what they mean, and counts them by cause.

        ``df.attrs["evalci_samples"]`` accounts for every sample: a list of
        one record per log file, with the keys every reader gives
        (:func:`evalci.sample_counts` makes it a table): ``log_file``, ``system``,
        ``task``, ``split`` (None), ``expected`` (what the header says the
        log holds: ``results.total_samples``, or for a log still being
        written ``eval.dataset.samples`` x ``eval.config.epochs``; None if it
        says nothing), ``found`` (the (sample, epoch) pairs the log accounts
        for: its samples and its early stops, each a row), of which
        ``scored`` (a score and no error), ``errored``, ``invalidated``,
        ``stopped_early`` and ``unscored`` (neither a score nor an error),
        which add up to ``found``; ``hit_limit`` (those a limit stopped:
        they are counted under one of the others too), ``missing``
        (``expected - found``, None when ``expected`` is) and ``source``
        (``"summaries"`` or ``"samples"``). So ``scored + errored +
        invalidated + stopped_early + unscored + missing == expected``.
        (Until this release it was a dict keyed by file.)
        ``df.attrs["evalci_superseded"]`` lists the logs that a newer
        attempt at their task replaced. Rows are sorted by (system, task,
        input, run): select one task (or pass ``by="task"``) before taking
        one score.

    Raises
    ------
    ValueError
        A file that is not an Inspect log, a damaged, encrypted or
        oversized member, two members under one name (other than a re-run
        sample's, which Inspect writes), a missing field or one of the wrong
        JSON type (``scores`` as a list, say): one error naming the file and
        the member or field. Two logs of one task and model that are not
        attempts at one run (their ``eval.task_id`` differ) and hold the
        same sample (naming both files and the sample).

    Warns
    -----
    EvalciWarning
        A log whose status is not ``"success"`` (``"started"``, ``"error"``,
        ``"cancelled"``), or that holds fewer samples than its header says
        (naming both numbers); a task with several attempts (naming the
        file read and those superseded); a task of an eval set without a
        log, when the set's folder is read whole (logs named one by one, or
        ``task=``, choose which tasks are read).

    Notes
    -----
    Score values become numbers as Inspect's ``value_to_float()`` makes them
    (inspect_ai ``scorer/_metric.py``, default arguments): the letters
    ``"C"`` -> 1, ``"P"`` -> 0.5, ``"I"`` -> 0, ``"N"`` (no answer) -> 0,
    compared exactly (``"c"`` is not a letter); ``True``/``False`` and
    numbers -> their float; other strings lower-cased: ``"yes"``/``"true"``
    -> 1, ``"no"``/``"false"`` -> 0, numeric text such as ``"0.25"`` -> its
    number. Anything else, including ``"correct"`` and ``"incorrect"`` and
    list values, Inspect logs a warning for and counts 0; this reader raises
    :class:`ValueError` instead. ``None`` inside a dict score is NaN.

    Members compressed with Zstandard (zip method 93, what Inspect 0.3.285
    writes) are read through :mod:`compression.zstd` (Python 3.14+) or the
    ``backports.zstd`` package, so ``inspect_ai`` is not needed. When it is
    installed its ``read_eval_log`` reads the logs (after the same checks
    of the archive's members); otherwise a plain reader (``json``,
    ``zipfile``) does. Both give the same table. Inspect truncates a long
    target in a summary; read with ``samples=True`` for the whole of it.

    Examples
    --------
    >>> import json, tempfile, zipfile, pathlib
    >>> from evalci.io.readers import read_inspect
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> spec = {"created": "2025-01-01T00:00:00+00:00", "task": "gpqa",
    ...         "dataset": {}, "model": "openai/gpt-4o", "config": {}}
    >>> with zipfile.ZipFile(d / "gpqa.eval", "w") as z:
    ...     header = {"version": 2, "status": "success", "eval": spec}
    ...     z.writestr("header.json", json.dumps(header))
    ...     for i in range(4):
    ...         for epoch in (1, 2):
    ...             v = "C" if (i + epoch) % 3 else "I"
    ...             s = {"id": i, "epoch": epoch, "input": "?", "target": "A",
    ...                  "scores": {"choice": {"value": v}}}
    ...             z.writestr(f"samples/{i}_epoch_{epoch}.json", json.dumps(s))
    >>> df = read_inspect(d / "gpqa.eval")
    >>> df[["input", "run", "system", "choice"]].head(3)
       input  run         system  choice
    0      0    1  openai/gpt-4o     1.0
    1      0    2  openai/gpt-4o     1.0
    2      1    1  openai/gpt-4o     1.0
    >>> [(c["found"], c["scored"]) for c in df.attrs["evalci_samples"]]
    [(8, 8)]
    """
    paths = _given(paths)
    files = _files(paths, ("*.eval", "*.json"), "paths", "Inspect log", _is_log)
    if isinstance(max_member_bytes, bool) or not isinstance(max_member_bytes, int):
        raise TypeError(
            f"`max_member_bytes` must be an integer; got {max_member_bytes!r}."
        )
    lib = _inspect_ai()
    logs = []
    for f in files:
        if f.suffix not in (".eval", ".json"):
            raise ValueError(
                f"{f}: an Inspect log ends in .eval or .json; got {f.suffix!r}."
            )
        if lib:
            logs.append(_native(f, lib, samples, max_member_bytes))
        elif f.suffix == ".eval":
            logs.append(_plain_eval(f, samples, max_member_bytes))
        else:
            logs.append(_plain_json(f, max_member_bytes))
    logs = choose_task(logs, task)
    roots = [Path(str(p)) for p in paths if Path(str(p)).is_dir()]
    check_manifests(logs, roots, task, _is_log)
    logs, superseded = resolve_attempts(logs)
    check_overlaps(logs)
    frames, counts = [], []
    for log in logs:
        frame, record = _inspect_rows(log, scorer)
        frames.append(frame)
        counts.append(record)
    frame = pd.concat(frames, ignore_index=True)
    meta = ["task", "target", "log_file"]
    fixed = [*KEYS, "task", "target", *_STOPS, "log_file"]
    values = [c for c in frame.columns if c not in fixed]
    names = ", ".join(str(log.file) for log in logs)
    if scorer is not None and not values:
        raise ValueError(
            f"`scorer`: no sample in {names} has a score from {scorer!r}; use "
            "one the logs hold, or scorer=None for all."
        )
    if not values:
        raise ValueError(f"{names}: no sample has any score.")
    out = _with_stops(_tidy_by(frame, values, meta, ["task"]), frame)
    facets = {str(log.file): _inspect_facets(log.header, log.file) for log in logs}
    out = _with_facets(out, facets)
    out.attrs["evalci_samples"] = counts
    out.attrs["evalci_superseded"] = superseded
    return out
