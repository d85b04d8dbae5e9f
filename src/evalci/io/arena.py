"""Pairwise-preference logs: Chatbot Arena battles and Arena-Hard judgments.

:func:`read_arena` reads battles as Chatbot Arena publishes them (FastChat's
``clean_battle_*.json``, a JSON list of objects, or the same records as JSON
Lines, CSV or Parquet): one row per battle with ``model_a``, ``model_b``,
``winner`` (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``) and, where
present, ``question_id`` and ``judge`` (the voter).

:func:`read_arena_hard` reads arena-hard-auto's judgment files
(``data/<bench>/model_judgment/<judge>/<model>.jsonl``, written by its
``gen_judgment.py``): one JSON line per prompt and model,
``{"question_id" (v2: "uid"), "model", "judge", "games": [game1, game2]}``,
each game ``{"user_prompt", "judgment", "score"}`` with ``score`` a label
such as ``"A>>B"``. Game 1 shows the baseline's answer as A, game 2 swaps
the positions (as ``show_result.py`` reads them). Each game becomes one
battle row; ``verdict`` keeps the label with A = ``model_a``, so that
``strength={"A>>B": 3}`` weighs it (:mod:`evalci.methods.preference.leaderboard`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from evalci._base.text import plain
from evalci._base.warnings import EvalciWarning, MissingDataWarning
from evalci._base.warnings import warn as _warn
from evalci.io._shared import _files, _get, _json_lines, _kind_of, _load_json
from evalci.io.tables import _FORMATS, _read_table, where
from evalci.methods.preference.data import _VERDICTS, WINNERS

__all__ = ["read_arena", "read_arena_hard", "read_arena_rank_json"]

#: Columns kept from Arena battles when present (besides the three required).
ARENA_COLUMNS = ("question_id", "judge", "language", "turn", "anony", "tstamp")


#: the columns a battle needs, as text (a CSV's "NA" is a model's name)
_NAMES = ("model_a", "model_b", "winner")


#: Records parsed into Python objects at a time (then reduced to a frame of
#: the kept fields): memory is a small multiple of the frame, not of the file.
CHUNK_ROWS = 50_000


def _battle_file(file: Path, fields) -> pd.DataFrame:
    """The file's battles; JSON and JSON Lines keep only ``fields`` (read in chunks)."""
    suffix = file.suffix.lower()
    if suffix == ".json":
        frame = _json_array(file, fields)
        # not a plain list of objects: the whole-file reader names the error
        return _json_file(file) if frame is None else frame
    fmt = _FORMATS.get(suffix)
    if fmt is None:
        raise ValueError(
            f"{file}: unknown extension; battles are read from .json, .jsonl, "
            ".csv or .parquet."
        )
    if fmt == "jsonl":  # a JSON line's values as they are (an object too)
        return _json_lines_frame(file, fields)
    if fmt != "csv":
        return _read_table(file, fmt, nested=False)
    # pandas reads "NA", "null", "None", "NaN" ... as missing: here they are
    # names; only an empty cell is missing (and refused below)
    text = {c: str for c in _NAMES}
    return _read_table(file, fmt, keep_default_na=False, na_values=[""], dtype=text)


def _json_file(file: Path) -> pd.DataFrame:
    """A ``.json`` list of battle objects, parsed whole (its errors named)."""
    rows = _load_json(file.read_bytes(), file)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(
            f"{file}: a battles .json file must be a list of objects (one per "
            f"battle), as FastChat's clean_battle_*.json; it holds {_kind_of(rows)}."
        )
    out = pd.DataFrame(rows)
    out.attrs["evalci_where"] = ("json", file, None)
    return out


def _json_array(file: Path, fields) -> pd.DataFrame | None:
    """A JSON list of objects as a frame of ``fields``, parsed entry by entry.

    None when the file is not UTF-8, not a list, or an entry is not an
    object or not valid JSON: :func:`_json_file` then reads it whole and
    names the error. Only the text and the kept fields are held.
    """
    try:
        text = file.read_bytes().decode("utf-8-sig")
        dec = json.JSONDecoder()
        frames, pos, end = _Frames(fields), _skip(text, 0), len(text)
        if text[pos : pos + 1] != "[":
            return None
        pos = _skip(text, pos + 1)
        while pos < end and text[pos] != "]":
            obj, pos = dec.raw_decode(text, pos)
            if not isinstance(obj, dict):
                return None
            frames.add(obj, None)
            pos = _skip(text, pos)
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
                if text[pos : pos + 1] == "]":
                    return None
            elif text[pos : pos + 1] != "]":
                return None
        if pos >= end or _skip(text, pos + 1) != end:
            return None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return frames.frame("json", file)


def _skip(text: str, pos: int) -> int:
    """The first position at or after ``pos`` that is not JSON whitespace."""
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


class _Frames:
    """Records reduced to ``fields``, made a frame every :data:`CHUNK_ROWS`."""

    def __init__(self, fields):
        self.fields, self.parts, self.chunk, self.lines = fields, [], [], []

    def add(self, rec: dict, line) -> None:
        self.chunk.append({k: rec[k] for k in self.fields if k in rec})
        self.lines.append(line)
        if len(self.chunk) == CHUNK_ROWS:
            self.parts.append(pd.DataFrame(self.chunk))
            self.chunk = []

    def frame(self, kind: str, file: Path) -> pd.DataFrame:
        if self.chunk or not self.parts:
            self.parts.append(pd.DataFrame(self.chunk))
        parts = self.parts
        out = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
        out.attrs["evalci_where"] = (kind, file, self.lines if kind == "jsonl" else None)
        return out


def _json_lines_frame(file: Path, fields) -> pd.DataFrame:
    """A JSON Lines file as a frame of ``fields`` (values as they are)."""
    frames = _Frames(fields)
    for n, rec in _json_lines(file):
        if not isinstance(rec, dict):
            raise ValueError(
                f"{file}, line {n}: the line is {_kind_of(rec)}; every JSON "
                "line must be an object (one row)."
            )
        frames.add(rec, n)
    return frames.frame("jsonl", file)


def _at(frame: pd.DataFrame, i: int) -> str:
    """Where battle ``i`` is: a JSON list's entry, else the file's line (row)."""
    kind, file, _ = frame.attrs.get("evalci_where", (None, None, None))
    return f"{file}, entry [{i}]" if kind == "json" else f"{file}, {where(frame, i)}"


def _check_battles(frame: pd.DataFrame) -> None:
    """Model names are text (not missing, a number, a list or an object),
    two models per battle, and a ``question_id`` a string or an integer."""
    for c in ("model_a", "model_b"):
        for i, v in enumerate(frame[c].tolist()):
            if not isinstance(v, str) or not v.strip():
                shown = (
                    "empty" if isinstance(v, str) or _missing(v) else _kind_of(plain(v))
                )
                raise ValueError(
                    f"{_at(frame, i)}: the field `{c}` is {shown}"
                    + ("" if _missing(v) or isinstance(v, str) else f" ({plain(v)!r})")
                    + ", not a model's name; every battle names its two models."
                )
    same = (frame["model_a"] == frame["model_b"]).to_numpy()
    if same.any():
        i = int(same.argmax())
        raise ValueError(
            f"{_at(frame, i)}: a battle of {frame['model_a'].iloc[i]!r} against "
            "itself; each battle is between two models."
        )
    if "question_id" in frame:
        for i, v in enumerate(frame["question_id"].tolist()):
            if not _missing(v) and not _is_id(v):
                raise ValueError(
                    f"{_at(frame, i)}: the field `question_id` is "
                    f"{_kind_of(plain(v))} ({plain(v)!r}), not a string or an integer."
                )


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _is_id(v) -> bool:
    """A prompt's id: text or an integer (never an object, a list or a bool)."""
    if isinstance(v, (bool, np.bool_)):
        return False
    return isinstance(v, (str, int, np.integer))


def read_arena(path, *, columns: list[str] | None = None) -> pd.DataFrame:
    """Read Chatbot Arena battles.

    Parameters
    ----------
    path : path, list of paths, directory or glob
        ``.json`` (a list of battle objects, FastChat's ``clean_battle``
        files), ``.jsonl``, ``.csv`` or ``.parquet``.
    columns : list of str, optional
        More columns to keep besides ``model_a, model_b, winner`` and those
        of :data:`ARENA_COLUMNS` that are present.

    Returns
    -------
    pandas.DataFrame
        One row per battle, in file order; ``model_a``, ``model_b``,
        ``winner`` as strings.

    Raises
    ------
    ValueError
        A file without a required column, or a winner that is not one of
        ``model_a``, ``model_b``, ``tie``, ``tie (bothbad)`` (the file and
        the values are named); a model name that is missing (a CSV's empty
        cell, a JSON null), not text (a number, a list, an object) or the
        same on both sides, a ``question_id`` that is neither a string nor
        an integer (each naming the file, the entry or line, and the field).
        A CSV's ``NA``, ``null`` or ``None`` is a model's name, not missing.
    """
    files = _files(path, ("*.json", "*.jsonl", "*.csv", "*.parquet"), "path", "battles")
    fields = ["model_a", "model_b", "winner", *ARENA_COLUMNS, *(columns or [])]
    parts = []
    for file in files:
        frame = _battle_file(file, fields)
        missing = [c for c in ("model_a", "model_b", "winner") if c not in frame]
        if missing:
            raise ValueError(
                f"{file}: battles need the columns model_a, model_b and winner; "
                f"missing {', '.join(missing)}."
            )
        _check_battles(frame)
        bad = ~frame["winner"].isin(list(WINNERS))
        if bad.any():
            shown = ", ".join(repr(v) for v in pd.unique(frame.loc[bad, "winner"])[:5])
            raise ValueError(
                f"{file}: {int(bad.sum())} battles name an unknown winner ({shown}); "
                f"a winner is one of {', '.join(map(repr, WINNERS))}."
            )
        keep = ["model_a", "model_b", "winner"]
        keep += [c for c in ARENA_COLUMNS if c in frame]
        for c in columns or []:
            if c not in frame:
                raise ValueError(f"{file}: `columns` names {c!r}, which it lacks.")
            if c not in keep:
                keep.append(c)
        parts.append(frame[keep])
    out = pd.concat(parts, ignore_index=True)
    for c in ("model_a", "model_b", "winner"):
        out[c] = out[c].astype(str)
    return out


def _game_row(game, n: int, file: Path, qid, model: str, baseline: str, line: int):
    """One battle from game ``n`` (1: baseline is A; 2: swapped), or None."""
    if game is None:
        return None
    if not isinstance(game, dict):
        raise ValueError(
            f"{file}, line {line}: the field `games[{n - 1}]` is {_kind_of(game)}, "
            "not an object (a game: user_prompt, judgment, score)."
        )
    score = game.get("score")
    if score is None:
        return None
    label = score.replace(" ", "") if isinstance(score, str) else None
    if label not in _VERDICTS:
        raise ValueError(
            f"{file}, line {line}: question {qid!r}, game {n}: the score "
            f"{score!r} is not an Arena-Hard label ({', '.join(_VERDICTS)})."
        )
    a, b = (baseline, model) if n == 1 else (model, baseline)
    outcome = _VERDICTS[label][0]
    winner = ("model_a", "model_b", "tie")[outcome]
    return {"model_a": a, "model_b": b, "winner": winner, "verdict": label, "game": n}


def _judgment_key(rec, file: Path, what: str) -> tuple:
    """A judgment's ``(question_id, model)``, checked: the id (``uid`` where
    the record has one) a string or an integer, the model a name."""
    key = "uid" if isinstance(rec, dict) and "uid" in rec else "question_id"
    qid = _get(rec, key, file, what)
    if not _is_id(qid):
        shown = "" if qid is None else f" ({qid!r})"
        raise ValueError(
            f"{file}, {what}: the field `{key}` is {_kind_of(qid)}"
            f"{shown}, not a string or an integer."
        )
    model = _get(rec, "model", file, what)
    if not isinstance(model, str) or not model.strip():
        raise ValueError(
            f"{file}, {what}: the field `model` is "
            f"{'empty' if model == '' else _kind_of(model)}"
            f"{'' if model in (None, '') else f' ({model!r})'}, not a "
            "model's name."
        )
    return qid, model


def read_arena_hard(path, *, baseline: str) -> pd.DataFrame:
    """Read arena-hard-auto judgment files into battles.

    Parameters
    ----------
    path : path, list of paths, directory or glob
        Judgment ``.jsonl`` files (a directory is searched for them).
    baseline : str
        The baseline model every judgment compares against (arena-hard-auto
        keeps it in its config, not in the files), e.g. ``"gpt-4-0314"``.

    Returns
    -------
    pandas.DataFrame
        One row per game: ``question_id``, ``model_a``, ``model_b``,
        ``winner``, ``verdict`` (the judge's label, A = ``model_a``),
        ``game`` (1 or 2), ``judge``, ``category`` (when the files have
        it) and ``log_file``. Games without a verdict (``score`` null) are
        left out with a :class:`~evalci.MissingDataWarning`.

    Raises
    ------
    ValueError
        A ``model`` that is null, empty or not text, a ``question_id``
        (``uid``) that is neither a string nor an integer, a game that is
        not an object, a ``score`` that is not an Arena-Hard label: each
        naming the file, the line and the field.

    Warns
    -----
    EvalciWarning
        Judgments of the baseline itself (``model == baseline``) are left
        out, naming where they are: a battle of a model against itself
        says nothing (all of them: an error).
    """
    if not isinstance(baseline, str) or not baseline:
        raise TypeError(
            "`baseline` must be the baseline model's name, e.g. 'gpt-4-0314'."
        )
    files = _files(path, ("*.jsonl",), "path", "judgment files")
    rows, dropped, itself = [], 0, []
    for file in files:
        for line, rec in _json_lines(file):
            what = f"line {line}"
            qid, model = _judgment_key(rec, file, what)
            if model == baseline:  # the baseline judged against itself
                itself.append(f"{file}, {what}")
                continue
            games = _get(rec, "games", file, what, kind="a list")
            if len(games) != 2:
                raise ValueError(
                    f"{file}, {what}: `games` holds {len(games)} games; Arena-Hard "
                    "pairwise judgments have 2 (positions swapped)."
                )
            meta = {
                "question_id": qid,
                "judge": rec.get("judge"),
                "category": rec.get("category"),
                "log_file": str(file),
            }
            for n, game in enumerate(games, 1):
                row = _game_row(game, n, file, qid, model, baseline, line)
                if row is None:
                    dropped += 1
                    continue
                rows.append({**meta, **row})
    if itself:
        _warn(
            f"{len(itself)} judgments are of the baseline {baseline!r} against "
            f"itself ({', '.join(itself[:3])}{', ...' if len(itself) > 3 else ''}) "
            "and were left out: a model's battle against itself says nothing "
            "of its strength. Is `baseline` the model the judge compared with?",
            EvalciWarning,
        )
    if not rows and itself:
        raise ValueError(
            f"every judgment read is of the baseline {baseline!r} against itself; "
            "pass as `baseline` the model the judge compared the others with."
        )
    if dropped:
        _warn(
            f"{dropped} Arena-Hard games have no verdict (score null) and were left "
            "out; the others of the same prompts are kept.",
            MissingDataWarning,
        )
    cols = ["question_id", "model_a", "model_b", "winner", "verdict", "game"]
    cols += ["judge", "category", "log_file"]
    out = pd.DataFrame(rows, columns=cols)
    if out["category"].isna().all():
        out = out.drop(columns="category")
    return out


def _bounds(rec, where: str) -> dict:
    """One model's entry of an LMArena leaderboard JSON, checked."""
    if not isinstance(rec, dict):
        raise ValueError(
            f"{where}: expected an object with rating, rating_q025, rating_q975, got {_kind_of(rec)}."
        )
    out = {}
    for key in ("rating", "rating_q025", "rating_q975"):
        v = rec.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
            raise ValueError(f"{where}: {key!r} must be a finite number, got {v!r}.")
        out[key] = float(v)
    if not out["rating_q025"] <= out["rating"] <= out["rating_q975"]:
        raise ValueError(
            f"{where}: expected rating_q025 <= rating <= rating_q975, got "
            f"{out['rating_q025']}, {out['rating']}, {out['rating_q975']}."
        )
    return out


def read_arena_rank_json(path) -> pd.DataFrame:
    """Read a leaderboard JSON as LMArena publishes it (arena-rank's ratings).

    The format of ``lmarena/arena-catalog``'s ``data/leaderboard-*.json``
    and of :func:`evalci.preference.to_arena_json`:
    ``{category: {model: {"rating", "rating_q975", "rating_q025"}}}``.

    Parameters
    ----------
    path : path
        The ``.json`` file.

    Returns
    -------
    pandas.DataFrame
        One row per category and model (in the file's order): ``category``,
        ``model``, ``rating``, ``rating_q025``, ``rating_q975`` and
        ``rank``, LMArena's rank within the category (1 + the number of
        models whose ``rating_q025`` exceeds this model's ``rating_q975``).

    Examples
    --------
    >>> import evalci
    >>> t = evalci.io.read_arena_rank_json("tests/data/arena_rank_leaderboard.json")
    >>> t[["model", "rank"]].head(2).to_dict("list")
    {'model': ['deepseek-coder-fim', 'llama-3.1-405b-instruct'], 'rank': [1, 1]}
    """
    file = Path(path)
    data = _load_json(file.read_bytes(), file)
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{file}: expected an object {{category: {{model: {{rating, rating_q975, "
            f"rating_q025}}}}}} (LMArena's leaderboard JSON), got {_kind_of(data)}."
        )
    rows = []
    for category, models in data.items():
        if not isinstance(models, dict) or not models:
            raise ValueError(
                f"{file}: category {category!r} must map model names to entries, got {_kind_of(models)}."
            )
        block = [
            {
                "category": category,
                "model": model,
                **_bounds(rec, f"{file}, [{category!r}][{model!r}]"),
            }
            for model, rec in models.items()
        ]
        lower = np.array([r["rating_q025"] for r in block])
        for r in block:
            r["rank"] = int(1 + np.sum(lower > r["rating_q975"]))
        rows.extend(block)
    return pd.DataFrame(
        rows,
        columns=["category", "model", "rating", "rating_q025", "rating_q975", "rank"],
    )
