"""Hostile values in the files the readers read (issue 34), with hypothesis.

Each file holds arbitrary JSON values where a run number, a model's name or
a prompt's id belongs. Each read must end in one of:

* a table that holds exactly what the file said: runs equal to the whole
  numbers written (never truncated), model names equal to the text written
  (never ``'None'`` or ``"['a', 'b']"``);
* a ``ValueError`` raised by evalci's own code that names the file and the
  field (the column, or the JSON field).

Anything else fails: a ``TypeError`` from pandas ("unhashable type"), an
``AttributeError``, an ``int()`` error naming nothing. ``derandomize=True``:
the same examples on every run.
"""

from __future__ import annotations

import json
import re
import traceback
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalci
from evalci.io.readers import read_arena, read_arena_hard, read_jsonl

SRC = Path(evalci.__file__).resolve().parent
SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

#: any JSON value, small
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=2)
        | st.dictionaries(st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=4,
)

#: whole numbers beyond int64 (1e30 overflowed pandas' cast before)
BIG = [1e30, 2**63, -(2**63) - 1, "99999999999999999999", -(2**63)]


def _refused_by_evalci(e: BaseException, file: Path, field: str) -> None:
    assert type(e) is ValueError, f"{type(e).__name__}: {e}"
    last = traceback.extract_tb(e.__traceback__)[-1].filename
    assert Path(last).resolve().is_relative_to(SRC), f"raised in {last}: {e}"
    assert str(file) in str(e) and field in str(e), str(e)


def _whole(v) -> bool:
    """What a run column may hold: a whole number in int64, or its text."""
    if isinstance(v, str):
        if re.fullmatch(r"[+-]?\d+", v.strip()) is None:
            return False
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return float(v).is_integer() and -(2**63) <= int(v) < 2**63


@SETTINGS
@given(runs=st.lists(JSON | st.sampled_from(BIG), min_size=1, max_size=4))
def test_a_run_column_is_read_exactly_or_refused(tmp_path, runs):
    f = tmp_path / "r.jsonl"
    rows = [{"q": i, "run": r, "ok": 1} for i, r in enumerate(runs)]
    f.write_text("\n".join(json.dumps(r) for r in rows))
    try:
        df = read_jsonl(f, input="q", value="ok", run="run")
    except ValueError as e:
        _refused_by_evalci(e, f, "'run'")
        assert not all(_whole(r) for r in runs)
        return
    assert df.sort_values("input").run.tolist() == [int(r) for r in runs]


@SETTINGS
@given(a=JSON, b=JSON, qid=JSON)
def test_an_arena_battle_keeps_its_names_or_is_refused(tmp_path, a, b, qid):
    f = tmp_path / "b.json"
    battle = {"model_a": a, "model_b": b, "winner": "tie", "question_id": qid}
    f.write_text(
        json.dumps([{"model_a": "x", "model_b": "y", "winner": "tie"}, battle])
    )
    try:
        df = read_arena(f)
    except ValueError as e:
        _refused_by_evalci(e, f, "entry [1]")
        return
    assert df.model_a.tolist() == ["x", a] and df.model_b.tolist() == ["y", b]
    assert isinstance(a, str) and isinstance(b, str) and a != b


@SETTINGS
@given(model=JSON, qid=JSON, game=JSON)
def test_an_arena_hard_line_keeps_its_model_or_is_refused(tmp_path, model, qid, game):
    f = tmp_path / "m.jsonl"
    line = {"question_id": qid, "model": model, "games": [game, None]}
    f.write_text(json.dumps(line))
    try:
        with warnings.catch_warnings():  # a null game, or the baseline: said
            warnings.simplefilter("ignore", evalci.EvalciWarning)
            df = read_arena_hard(f, baseline="base")
    except ValueError as e:
        _refused_by_evalci(e, f, "line 1")
        return
    assert isinstance(model, str) and model not in ("", "base")
    assert set(df.model_a) | set(df.model_b) <= {model, "base"}
