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
``strength={"A>>B": 3}`` weighs it (:mod:`evalci.methods.preference`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evalci._base.warnings import MissingDataWarning
from evalci._base.warnings import warn as _warn
from evalci.io._shared import _files, _get, _json_lines, _kind_of, _load_json
from evalci.io.tables import _FORMATS, _read_table
from evalci.methods.preference_data import _VERDICTS, WINNERS

__all__ = ["read_arena", "read_arena_hard"]

#: Columns kept from Arena battles when present (besides the three required).
ARENA_COLUMNS = ("question_id", "judge", "language", "turn", "anony", "tstamp")


def _battle_file(file: Path) -> pd.DataFrame:
    if file.suffix.lower() == ".json":
        rows = _load_json(file.read_bytes(), file)
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ValueError(
                f"{file}: a battles .json file must be a list of objects (one per "
                f"battle), as FastChat's clean_battle_*.json; it holds {_kind_of(rows)}."
            )
        return pd.DataFrame(rows)
    fmt = _FORMATS.get(file.suffix.lower())
    if fmt is None:
        raise ValueError(
            f"{file}: unknown extension; battles are read from .json, .jsonl, "
            ".csv or .parquet."
        )
    return _read_table(file, fmt)


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
        the values are named).
    """
    files = _files(path, ("*.json", "*.jsonl", "*.csv", "*.parquet"), "path", "battles")
    parts = []
    for file in files:
        frame = _battle_file(file)
        missing = [c for c in ("model_a", "model_b", "winner") if c not in frame]
        if missing:
            raise ValueError(
                f"{file}: battles need the columns model_a, model_b and winner; "
                f"missing {', '.join(missing)}."
            )
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


def _game_row(game, n: int, file: Path, qid, model: str, baseline: str):
    """One battle from game ``n`` (1: baseline is A; 2: swapped), or None."""
    if game is None or game.get("score") is None:
        return None
    label = str(game["score"]).replace(" ", "")
    if label not in _VERDICTS:
        raise ValueError(
            f"{file}: question {qid!r}, game {n}: the score {game['score']!r} is not "
            f"an Arena-Hard label ({', '.join(_VERDICTS)})."
        )
    a, b = (baseline, model) if n == 1 else (model, baseline)
    outcome = _VERDICTS[label][0]
    winner = ("model_a", "model_b", "tie")[outcome]
    return {"model_a": a, "model_b": b, "winner": winner, "verdict": label, "game": n}


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
    """
    if not isinstance(baseline, str) or not baseline:
        raise TypeError(
            "`baseline` must be the baseline model's name, e.g. 'gpt-4-0314'."
        )
    files = _files(path, ("*.jsonl",), "path", "judgment files")
    rows, dropped = [], 0
    for file in files:
        for line, rec in _json_lines(file):
            what = f"line {line}"
            key = "uid" if isinstance(rec, dict) and "uid" in rec else "question_id"
            qid = _get(rec, key, file, what)
            model = str(_get(rec, "model", file, what))
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
                row = _game_row(game, n, file, qid, model, baseline)
                if row is None:
                    dropped += 1
                    continue
                rows.append({**meta, **row})
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
