"""The command line's input: from a path and column options to a tidy table.

One job: find the format (by extension, by the framework's file names, or
``--from``), read the file with :mod:`evalci.io.readers`, and settle which
columns are the value, the input, the system and the run, detecting the
ones not given. What was detected is said in :attr:`Loaded.detected` (the
command prints it on stderr), so a guess is never silent.

Detection rules (first hit wins)
--------------------------------
value
    ``correct``, ``is_correct``, ``score``, ``acc``, ``accuracy``,
    ``exact_match``, ``pass``, ``passed``, ``value``; else the only numeric
    column whose values are all 0/1; several or none is an error naming them.
input
    ``input_id``, ``question_id``, ``doc_id``, ``sample_id``,
    ``instance_id``, ``problem_id``, ``task_id``, ``id``, ``input`` (last:
    it often holds the prompt's text). With ``--cluster`` and no
    ``--input`` nothing is detected: as in the API, ``cluster=`` alone makes
    each cluster one input (and the library warns when rows of a cluster
    differ in an input-like column, which is kept for that check).
system
    ``system``, ``model``, ``model_name``; none: the whole file is one
    system, named after the file.
run
    ``run``, ``epoch``, ``run_id``, ``repeat``, ``trial``, ``seed``; none:
    runs are numbered in file order within each (system, input).

Tasks and splits are never pooled silently: a table with a ``task`` column
holding several tasks (several HELM runs, an lm-eval folder) is refused
unless ``--task NAME`` selects one or ``--by task`` reports each; a
``split`` column holding several splits likewise needs ``--split`` (or
``--by split``).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from evalci.io import readers

__all__ = ["Loaded", "load"]

VALUE_NAMES = (
    "correct",
    "is_correct",
    "score",
    "acc",
    "accuracy",
    "exact_match",
    "pass",
    "passed",
    "value",
)
# ids before "input", which often holds the prompt's text
INPUT_NAMES = (
    "input_id",
    "question_id",
    "doc_id",
    "sample_id",
    "instance_id",
    "problem_id",
    "task_id",
    "id",
    "input",
)
SYSTEM_NAMES = ("system", "model", "model_name")
RUN_NAMES = ("run", "epoch", "run_id", "repeat", "trial", "seed")
SOURCES = ("inspect", "lm-eval", "helm", "table")
#: columns the framework readers add that are never a value
_READER_META = {"task", "target", "log_file", "n_resps", "split", "error", "limit"}
_INSPECT_JSON = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")


@dataclass
class Loaded:
    """A tidy table and the names of its columns, as the commands use them."""

    frame: pd.DataFrame
    source: str
    value: str | None
    cluster: str
    system: str
    successes: str | None = None
    trials: str | None = None
    detected: list[str] = field(default_factory=list)
    #: the API's ``input=``: the input column when ``cluster`` is a larger unit
    input: str | None = None

    @property
    def n_systems(self) -> int:
        return int(self.frame[self.system].nunique())


def _source_of(path: Path) -> str:
    """The reader a path's name implies, or an error saying how to choose."""
    name = path.name
    if path.is_dir():
        return "dir"
    if path.suffix == ".eval" or _INSPECT_JSON.match(name):
        return "inspect"
    if name == "per_instance_stats.json":
        return "helm"
    if name.startswith("samples_") and name.endswith(".jsonl"):
        return "lm-eval"
    if path.suffix.lower() in readers._FORMATS:
        return "table"
    raise ValueError(
        f"cannot tell the format of {path} from its name (.csv, .parquet, "
        ".jsonl, .eval, samples_*.jsonl, per_instance_stats.json); pass "
        "--from inspect|lm-eval|helm|table."
    )


def _read_log(path: Path, source: str, opts) -> tuple[pd.DataFrame, str]:
    """A framework log through its reader; a directory tries each in turn."""
    split = getattr(opts, "split", None)
    helm = {} if split is None else {"split": _helm_split(split)}
    task = getattr(opts, "task", None)
    read = {
        "inspect": lambda: readers.read_inspect(path, scorer=opts.scorer, task=task),
        "lm-eval": lambda: readers.read_lm_eval(path, task=task),
        "helm": lambda: readers.read_helm(path, stat=opts.stat, **helm),
    }
    if split is not None and source not in ("helm", "dir"):
        raise ValueError(f"`--split` is for HELM runs; {path} is read as {source}.")
    if source != "dir":
        return read[source](), source
    for name in ("helm",) if split is not None else ("inspect", "lm-eval", "helm"):
        try:
            return read[name](), name
        except ValueError as e:
            if "holds no" not in str(e):  # found the files, but they are bad
                raise
    raise ValueError(
        f"{_shown(path)} holds no Inspect log (*.eval), lm-eval samples "
        "file (samples_*.jsonl) or HELM per_instance_stats.json; name a file, "
        "or pass --from."
    )


def _shown(paths) -> str:
    """One path, or several, as a message names them."""
    if isinstance(paths, (list, tuple)):
        return ", ".join(str(p) for p in paths)
    return f"the directory {paths}" if Path(paths).is_dir() else str(paths)


def _helm_split(split: str) -> str:
    """``--split``, once this evalci's read_helm is known to take ``split=``."""
    if "split" not in inspect.signature(readers.read_helm).parameters:
        raise ValueError("`--split`: this version of read_helm has no split option.")
    return split


def _binary(col: pd.Series) -> bool:
    v = pd.to_numeric(col.map(lambda x: float(x) if isinstance(x, bool) else x),
                      errors="coerce")  # fmt: skip
    if v.isna().all() or (v.isna() & col.notna()).any():
        return False
    return bool(np.isin(v.dropna().unique(), (0.0, 1.0)).all())


def _pick(columns, names, given, what, option, detected, required=True):
    """The given column, else the first of ``names`` present (said in detected)."""
    if given is not None:
        if given not in columns:
            raise ValueError(
                f"`{option}`: there is no column {given!r}; the file has "
                f"{list(columns)[:20]}."
            )
        return given
    for n in names:
        if n in columns:
            detected.append(f"{what} {n!r}")
            return n
    if required:
        raise ValueError(
            f"`{option}`: no {what} column found (looked for "
            f"{', '.join(names)}); name it with {option} COLUMN. The file has "
            f"{list(columns)[:20]}."
        )
    return None


def _pick_value(data: pd.DataFrame, skip: set, detected: list) -> str:
    """A preferred name, else the only 0/1 numeric column."""
    cols = [c for c in data.columns if c not in skip]
    for n in VALUE_NAMES:
        if n in cols:
            detected.append(f"value {n!r}")
            return n
    binary = [c for c in cols if _binary(data[c])]
    if len(binary) == 1:
        detected.append(f"value {binary[0]!r} (the only 0/1 column)")
        return binary[0]
    if binary:
        raise ValueError(
            f"`--value`: several 0/1 columns could be the outcome ({binary[:8]}); "
            "choose one with --value COLUMN."
        )
    raise ValueError(
        "`--value`: no outcome column found (no column named "
        f"{', '.join(VALUE_NAMES[:4])}, ... and no 0/1 column); name it with "
        f"--value COLUMN. The file has {cols[:20]}."
    )


def _from_log(frame: pd.DataFrame, source: str, opts, detected) -> Loaded:
    """A reader's table: its keys are input/run/system; settle the value."""
    for option, given, fixed in (("--input", opts.input, "input"),
                                 ("--system", opts.system, "system"),
                                 ("--run", opts.run, "run")):  # fmt: skip
        if given not in (None, fixed):
            raise ValueError(
                f"`{option}`: the {fixed} column of the {source} log is fixed "
                f"(the reader names it {fixed!r}); leave {option} out."
            )
    cluster, input_col = "input", None
    if opts.cluster not in (None, "input"):
        cluster = _pick(frame.columns, (), opts.cluster, "cluster", "--cluster", [])
        input_col = "input" if opts.input else None
    counts = opts.successes is not None
    # the facets a reader appends (issue 36) are settings, never the value
    skip = set(readers.KEYS) | _READER_META | set(frame.attrs.get("evalci_facets", ()))
    value = None
    if not counts:
        value = opts.value
        if value is None:
            value = _pick_value(frame, skip, detected)
        elif value not in frame.columns:
            raise ValueError(
                f"`--value`: the log has no column {value!r}; its value columns "
                f"are {[c for c in frame.columns if c not in skip]}."
            )
    return Loaded(frame, source, value, cluster, "system", opts.successes,
                  opts.trials, detected, input_col)  # fmt: skip


def _units_of(cols, opts, detected) -> tuple[str, str | None, list[str]]:
    """(the column read as ``input``, the cluster column or None, kept columns).

    ``--cluster`` alone is the API's ``cluster=`` alone: nothing is detected
    as the input, and the input-like columns are kept so the library can
    warn that each cluster counts as one input.
    """
    if opts.cluster is None or opts.cluster == opts.input:
        return _pick(cols, INPUT_NAMES, opts.input, "input", "--input", detected), None, []  # fmt: skip
    cluster = _pick(cols, (), opts.cluster, "cluster", "--cluster", detected)
    if opts.input is not None:
        return _pick(cols, (), opts.input, "input", "--input", detected), cluster, [cluster]  # fmt: skip
    return cluster, None, [n for n in INPUT_NAMES if n in cols and n != cluster]


def _from_table(path: Path, opts, detected) -> Loaded:
    """CSV / Parquet / JSON Lines: detect the columns, then read_jsonl."""
    fmt = readers._FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(
            f"{path}: a table ends in .csv, .parquet/.pq or .jsonl/.ndjson; got "
            f"{path.suffix!r}. Rename it, or pass --from for a framework log."
        )
    raw = readers._read_table(path, fmt)
    cols = raw.columns
    read_as, cluster, units = _units_of(cols, opts, detected)
    system = _pick(cols, SYSTEM_NAMES, opts.system, "system", "--system",
                   detected, required=False)  # fmt: skip
    run = _pick(cols, RUN_NAMES, opts.run, "run", "--run", detected, required=False)
    if opts.successes is not None or opts.trials is not None:
        if opts.successes is None or opts.trials is None:
            raise ValueError(
                "`--successes` and `--trials` go together: a counts table needs "
                "both columns (correct runs, runs)."
            )
        values = [opts.successes, opts.trials]
    else:
        value = opts.value
        if value is None:
            value = _pick_value(raw, {read_as, *units, system, run, *opts.extra}, detected)  # fmt: skip
        values = [value]
    roles = (read_as, system, run, *values)
    task = ["task"] if "task" in cols and "task" not in roles else []
    if task and raw["task"].nunique() > 1:
        # refused before reading unless chosen; rows of several tasks may
        # share (system, input, run), so the runs are checked per task here
        _several(Loaded(raw, "table", None, read_as, system), "task", opts, path)
        if run is not None:
            _unique_per_task(raw, [c for c in ("task", system, read_as, run) if c], path)  # fmt: skip
        run = None
    keep = [
        c for c in dict.fromkeys([*opts.extra, *units, *task]) if c and c not in values
    ]
    keep = [c for c in keep if c not in (read_as, system, run)]
    frame = readers.read_jsonl(path, input=read_as, value=values, run=run,
                               system=system, columns=keep, format=fmt)  # fmt: skip
    if system is None:
        detected.append(f"no system column: one system, {path.stem!r}")
    counts = opts.successes is not None
    unit, input_col = "input", None
    if opts.cluster is not None and read_as not in frame.columns:
        # the user's names, so the library's messages name their columns
        frame = frame.rename(columns={"input": read_as})
        unit, input_col = (cluster, read_as) if cluster else (read_as, None)
    return Loaded(frame, "table", None if counts else values[0], unit, "system",
                  opts.successes, opts.trials, detected, input_col)  # fmt: skip


def _unique_per_task(raw: pd.DataFrame, key: list[str], path) -> None:
    dup = raw.duplicated(key)
    if dup.any():
        row = raw.loc[dup.idxmax(), key]
        raise ValueError(
            f"{path}: ({', '.join(key)}) = {tuple(row.tolist())} occurs more than "
            f"once (row {int(dup.idxmax())}); each must be one row."
        )


def _several(data: Loaded, col: str, opts, path) -> None:
    """Refuse to pool the tasks (or splits) of ``col``; ``--task`` selects one."""
    frame, chosen = data.frame, getattr(opts, col, None)
    if col not in frame.columns:
        if col == "task" and chosen is not None:
            raise ValueError(f"`--task`: {path} has no task column (one task).")
        return
    roles = (data.value, data.cluster, data.input, data.system, data.successes,
             data.trials)  # fmt: skip
    if col in roles:
        return
    # rows without a value (a stat another split holds) pool nothing
    held = frame if data.value is None else frame[frame[data.value].notna()]
    names = sorted(pd.unique(held[col].dropna().astype(str)))
    shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
    if col == "task" and chosen is not None:
        if chosen not in names:
            raise ValueError(f"`--task`: {path} has no task {chosen!r}; its tasks are {shown}.")  # fmt: skip
        data.frame = frame[frame[col].astype(str) == chosen].reset_index(drop=True)
        return
    if len(names) > 1 and col not in opts.extra:
        option = "--task NAME" if col == "task" else "--split NAME"
        raise ValueError(
            f"{path} holds {len(names)} {col}s ({shown}); evalci does not pool "
            f"them into one score: choose one with {option}, or one result per "
            f"{col} with --by {col}."
        )


def load(path, opts) -> Loaded:
    """Read ``path`` (a path, or a list of them) as ``opts`` say (``--from``,
    the column options).

    ``opts`` carries ``source, value, input, cluster, system, run,
    successes, trials, scorer, stat, split, task`` and ``extra`` (columns
    the command needs kept: ``--by``, ``--strata``). Several paths are read
    as a folder holding them is: the logs of one framework by its reader,
    tables one by one, then joined.
    """
    paths = [Path(p) for p in (path if isinstance(path, (list, tuple)) else [path])]
    data = _load(paths, opts)
    shown = paths[0] if len(paths) == 1 else " ".join(map(str, paths))
    for col in ("task", "split"):
        _several(data, col, opts, shown)
    return data


def _kind(paths: list[Path]) -> str:
    """The one reader several paths imply (directories go with any)."""
    kinds = {p: _source_of(p) for p in paths}
    found = sorted(set(kinds.values()) - {"dir"})
    if len(found) > 1:
        shown = ", ".join(f"{p} ({k})" for p, k in kinds.items() if k != "dir")
        raise ValueError(
            f"the files are of different kinds: {shown}; give the files of one "
            "kind (one framework's logs, or tables), or --from to read all as one."
        )
    return found[0] if found else "dir"


def _load(paths: list[Path], opts) -> Loaded:
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist.")
    source = opts.source or _kind(paths)
    detected: list[str] = []
    if source == "table":
        for path in paths:
            if path.is_dir():
                raise ValueError(f"--from table needs a file; {path} is a directory.")
        if getattr(opts, "split", None) is not None:
            raise ValueError(
                f"`--split` is for HELM runs; {_shown(paths)} is read as a table."
            )
        if len(paths) == 1:
            return _from_table(paths[0], opts, detected)
        return _joined([_from_table(p, opts, []) for p in paths], paths)
    if source == "dir" or source in ("inspect", "lm-eval", "helm"):
        path = paths[0] if len(paths) == 1 else paths
        frame, source = _read_log(path, source, opts)
        for c in opts.extra:
            if c not in frame.columns:
                raise ValueError(
                    f"the {source} logs have no column {c!r} (for --by/--strata); "
                    f"it has {list(frame.columns)}."
                )
        return _from_log(frame, source, opts, detected)
    raise ValueError(f"`--from` must be one of {SOURCES}; got {source!r}.")


def _joined(parts: list[Loaded], paths: list[Path]) -> Loaded:
    """Tables read one by one, as one: the same columns in the same roles,
    and no row key (system, input, run, and task) in two files."""
    roles = ("value", "cluster", "system", "successes", "trials", "input")
    first = parts[0]
    for path, part in zip(paths[1:], parts[1:], strict=True):
        for r in roles:
            if getattr(part, r) != getattr(first, r):
                raise ValueError(
                    f"{path} reads its {r} from {getattr(part, r)!r} but "
                    f"{paths[0]} from {getattr(first, r)!r}; name the column "
                    f"with --{r} so every file is read alike."
                )
        if list(part.frame.columns) != list(first.frame.columns):
            raise ValueError(
                f"{path} has the columns {list(part.frame.columns)} but "
                f"{paths[0]} {list(first.frame.columns)}; the tables must match."
            )
    frames = [p.frame.assign(__file=str(f)) for p, f in zip(parts, paths, strict=True)]
    frame = pd.concat(frames, ignore_index=True)
    key = list(dict.fromkeys(
        c for c in ("system", "task", first.cluster, first.input, "input", "run")
        if c is not None and c in frame.columns
    ))  # fmt: skip
    dup = frame.duplicated(key, keep=False)
    if dup.any():
        rows = frame[dup]
        at = rows[key].iloc[0]
        clash = rows[(rows[key] == at).all(axis=1)]["__file"].unique()
        first_row = rows[key].iloc[[0]].to_dict("records")[0]  # Python values
        shown = ", ".join(f"{k} {v!r}" for k, v in first_row.items())
        raise ValueError(
            f"{shown} is in {' and '.join(clash)}; each row must be in one file "
            "(several files are read as one table). Number the runs with a run "
            "column (--run), or read the files apart."
        )
    frame = frame.drop(columns="__file")
    frame.attrs["evalci_samples"] = [
        r for p in parts for r in p.frame.attrs.get("evalci_samples", [])
    ]
    detected = [f"{d} (in each of {len(paths)} files)" for d in first.detected]
    return Loaded(frame, "table", first.value, first.cluster, first.system,
                  first.successes, first.trials, detected, first.input)  # fmt: skip
