"""Readers of Arena battles and Arena-Hard judgments, on small files in their formats.

The formats: FastChat's ``clean_battle_*.json`` (a JSON list of battle
objects with ``model_a``, ``model_b``, ``winner``, ``question_id``,
``judge``), and arena-hard-auto's ``gen_judgment.py`` output (one JSON line
per prompt and model: ``question_id``/``uid``, ``model``, ``judge``,
``games``: two games, game 1 with the baseline as A, ``score`` a label).
The expected battles are Arena-Hard's own reading (``show_result.py``):
game 1 ``A>B`` is a baseline win, game 2 ``A>B`` a win of the model.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci import preference as P


def _write_battles(path, rows):
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


BATTLES = [
    {
        "question_id": "q1",
        "model_a": "x",
        "model_b": "y",
        "winner": "model_a",
        "judge": "u1",
        "language": "English",
        "conversation_a": [{"role": "user"}],
    },
    {
        "question_id": "q1",
        "model_a": "y",
        "model_b": "z",
        "winner": "tie (bothbad)",
        "judge": "u2",
        "language": "English",
        "conversation_a": [],
    },
    {
        "question_id": "q2",
        "model_a": "z",
        "model_b": "x",
        "winner": "tie",
        "judge": "u1",
        "language": "German",
        "conversation_a": [],
    },
]


def test_read_arena_json_list(tmp_path):
    df = evalci.read_arena(_write_battles(tmp_path / "clean_battle_1.json", BATTLES))
    assert list(df.columns) == [
        "model_a",
        "model_b",
        "winner",
        "question_id",
        "judge",
        "language",
    ]
    assert df.winner.tolist() == ["model_a", "tie (bothbad)", "tie"]
    # the same records as JSON Lines and CSV
    lines = tmp_path / "b.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in BATTLES), encoding="utf-8")
    pd.testing.assert_frame_equal(evalci.read_arena(lines), df)
    df.to_csv(tmp_path / "b.csv", index=False)
    assert evalci.read_arena(tmp_path / "b.csv").shape == df.shape


def test_read_arena_bad_winner_names_file_and_value(tmp_path):
    bad = [dict(BATTLES[0], winner="model_c")]
    path = _write_battles(tmp_path / "bad.json", bad)
    with pytest.raises(
        ValueError, match=r"bad\.json: 1 battles name an unknown winner \('model_c'\)"
    ):
        evalci.read_arena(path)
    nocol = _write_battles(tmp_path / "nocol.json", [{"model_a": "x", "model_b": "y"}])
    with pytest.raises(ValueError, match=r"nocol\.json.*missing winner"):
        evalci.read_arena(nocol)
    obj = tmp_path / "obj.json"
    obj.write_text('{"model_a": "x"}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"must be a list of objects"):
        evalci.read_arena(obj)


def _judgment(qid, model, s1, s2, key="question_id"):
    return {
        key: qid,
        "model": model,
        "judge": "gpt-4-1106-preview",
        "games": [
            {"user_prompt": "...", "judgment": "...", "score": s1},
            {"user_prompt": "...", "judgment": "...", "score": s2},
        ],
    }


def test_read_arena_hard_orients_the_games(tmp_path):
    folder = tmp_path / "model_judgment" / "gpt-4-1106-preview"
    folder.mkdir(parents=True)
    rows = [_judgment("q1", "m", "A>>B", "A>B"), _judgment("q2", "m", "B>A", "A=B")]
    (folder / "m.jsonl").write_text("\n".join(map(json.dumps, rows)), encoding="utf-8")
    df = evalci.read_arena_hard(tmp_path, baseline="gpt-4-0314")
    # game 1: the baseline is A; game 2: the model is A
    assert df.model_a.tolist() == ["gpt-4-0314", "m", "gpt-4-0314", "m"]
    assert df.winner.tolist() == ["model_a", "model_a", "model_b", "tie"]
    assert df.verdict.tolist() == ["A>>B", "A>B", "B>A", "A=B"]
    assert df.game.tolist() == [1, 2, 1, 2]
    # Arena-Hard's scores for m (show_result: 1 = m wins): q1 -> 0,0,0 and 1
    m_wins = np.where(df.model_a == "m", df.winner == "model_a", df.winner == "model_b")
    assert m_wins.tolist() == [False, True, True, False]
    # strength weighs the strong verdict 3 times, as Arena-Hard's WEIGHT=3
    fit = P.bradley_terry(df, strength={"A>>B": 3}, anchor="gpt-4-0314")
    dup = df.loc[df.index.repeat(np.where(df.verdict == "A>>B", 3, 1))]
    assert fit.table.score.tolist() == pytest.approx(
        P.bradley_terry(dup, anchor="gpt-4-0314").table.score.tolist()
    )


def test_read_arena_hard_v2_and_null_games(tmp_path):
    rows = [
        _judgment("u1", "m", "B>>A", None, key="uid"),
        dict(_judgment("u2", "m", "A<<B", "B<A", key="uid"), category="hard_prompt"),
    ]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(map(json.dumps, rows)), encoding="utf-8")
    with pytest.warns(
        evalci.MissingDataWarning, match="1 Arena-Hard games have no verdict"
    ):
        df = evalci.read_arena_hard(path, baseline="base")
    assert df.question_id.tolist() == ["u1", "u2", "u2"]
    assert df.winner.tolist() == ["model_b", "model_b", "model_a"]
    assert "category" in df


def test_read_arena_hard_bad_label(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(_judgment("q1", "m", "A>>>B", "A>B")), encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"m\.jsonl, line 1: question 'q1', game 1.*'A>>>B'"
    ):
        evalci.read_arena_hard(path, baseline="base")
    one = tmp_path / "one.jsonl"
    rec = _judgment("q1", "m", "A>B", "A>B")
    rec["games"] = rec["games"][:1]
    one.write_text(json.dumps(rec), encoding="utf-8")
    with pytest.raises(ValueError, match=r"holds 1 games"):
        evalci.read_arena_hard(one, baseline="base")


# --------------------------------------------------------------------------
# hostile files: every error names the file, the line and the field
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, said",
    [
        ({"model_a": None}, r"entry \[1\]: the field `model_a` is empty, not a model's name"),
        ({"model_a": ["a", "b"]}, r"entry \[1\]: the field `model_a` is a list \(\['a', 'b'\]\)"),
        ({"model_b": {"n": "a"}}, r"entry \[1\]: the field `model_b` is an object"),
        ({"model_b": 3}, r"entry \[1\]: the field `model_b` is a number \(3\)"),
        ({"model_b": "y"}, r"entry \[1\]: a battle of 'y' against itself"),
        ({"question_id": {"a": 1}}, r"entry \[1\]: the field `question_id` is an object"),
        ({"question_id": [1]}, r"entry \[1\]: the field `question_id` is a list"),
    ],
)  # fmt: skip
def test_read_arena_refuses_what_is_no_name(tmp_path, change, said):
    # before: "['a', 'b']" and 'None' became models, an object id "unhashable"
    rows = [dict(BATTLES[0]), dict(BATTLES[1], **change)]
    path = _write_battles(tmp_path / "b.json", rows)
    with pytest.raises(ValueError, match=r"b\.json, " + said):
        evalci.read_arena(path)
    lines = tmp_path / "b.jsonl"
    lines.write_text("\n\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"b\.jsonl, line 3: " + said.split(": ", 1)[1]
    ):
        evalci.read_arena(lines)


def test_read_arena_csv_model_named_na_is_a_model(tmp_path):
    # before: pandas read NA (and null, None) as missing: the model was lost
    path = tmp_path / "b.csv"
    path.write_text(
        "model_a,model_b,winner\nNA,x,model_a\nnull,NA,tie\nNone,x,model_b\n"
    )
    df = evalci.read_arena(path)
    assert df.model_a.tolist() == ["NA", "null", "None"]
    assert df.model_b.tolist() == ["x", "NA", "x"]
    # an empty cell is missing: refused, naming the line and the field
    path.write_text("model_a,model_b,winner\nx,y,tie\n,y,model_a\n")
    with pytest.raises(
        ValueError, match=r"b\.csv, line 3: the field `model_a` is empty"
    ):
        evalci.read_arena(path)


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda r: r | {"model": None}, r"line 2: the field `model` is null, not a model's name"),
        (lambda r: r | {"model": ""}, r"line 2: the field `model` is empty"),
        (lambda r: r | {"model": ["m"]}, r"line 2: the field `model` is a list \(\['m'\]\)"),
        (lambda r: r | {"question_id": {"a": 1}}, r"line 2: the field `question_id` is an object"),
        (lambda r: r | {"games": ["A>B", None]}, r"line 2: the field `games\[0\]` is a string, not an object"),
        (lambda r: r | {"games": [{"score": ["A>B"]}, None]}, r"line 2: question 'q2', game 1: the score \['A>B'\]"),
    ],
)  # fmt: skip
def test_read_arena_hard_refuses_hostile_lines(tmp_path, edit, said):
    # before: a null model became a ranked model 'None'; a string game raised
    # AttributeError and an object question_id "unhashable type"
    rows = [
        _judgment("q1", "m", "A>B", "B>A"),
        edit(_judgment("q2", "m", "A>B", "B>A")),
    ]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(map(json.dumps, rows)), encoding="utf-8")
    with pytest.raises(ValueError, match=r"m\.jsonl, " + said):
        evalci.read_arena_hard(path, baseline="base")


def test_read_arena_hard_leaves_out_the_baseline_against_itself(tmp_path):
    # before: battles of 'base' against 'base' were returned
    rows = [_judgment("q1", "m", "A>B", "B>A"), _judgment("q1", "base", "A=B", "A=B")]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(map(json.dumps, rows)), encoding="utf-8")
    with pytest.warns(
        evalci.EvalciWarning,
        match=r"1 judgments are of the baseline 'base' against itself \(.*m\.jsonl, line 2\)",
    ):
        df = evalci.read_arena_hard(path, baseline="base")
    assert not (df.model_a == df.model_b).any() and len(df) == 2
    path.write_text(json.dumps(rows[1]), encoding="utf-8")
    with pytest.warns(evalci.EvalciWarning, match="against itself"):
        with pytest.raises(ValueError, match="every judgment read is of the baseline"):
            evalci.read_arena_hard(path, baseline="base")
