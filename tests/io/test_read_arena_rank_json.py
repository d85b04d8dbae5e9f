"""read_arena_rank_json: LMArena's leaderboard JSON
(``{category: {model: {rating, rating_q975, rating_q025}}}``)."""

import json

import pytest

import evalci


def _write(tmp_path, data, name="board.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_reads_categories_in_order_with_lmarena_ranks(tmp_path):
    data = {
        "full": {
            "a": {"rating": 1100.0, "rating_q975": 1110.0, "rating_q025": 1090.0},
            "b": {"rating": 1085.0, "rating_q975": 1095.0, "rating_q025": 1075.0},
            "c": {"rating": 1000, "rating_q975": 1080, "rating_q025": 990},
        },
        "coding": {"b": {"rating": 1.0, "rating_q975": 2.0, "rating_q025": 0.0}},
    }
    t = evalci.io.read_arena_rank_json(_write(tmp_path, data))
    assert t.columns.tolist() == [
        "category", "model", "rating", "rating_q025", "rating_q975", "rank",
    ]
    assert t["category"].tolist() == ["full", "full", "full", "coding"]
    assert t["model"].tolist() == ["a", "b", "c", "b"]
    # c's upper bound 1080 is below a's lower bound 1090 only
    assert t["rank"].tolist() == [1, 1, 2, 1]
    assert t["rating"].dtype == float


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ([], "expected an object"),
        ({}, "expected an object"),
        ({"full": []}, "category 'full' must map"),
        ({"full": {"a": 3}}, r"\['full'\]\['a'\]: expected an object"),
        ({"full": {"a": {"rating": 1.0, "rating_q975": 2.0}}}, "'rating_q025' must be"),
        (
            {"full": {"a": {"rating": "1", "rating_q975": 2.0, "rating_q025": 0.0}}},
            "'rating' must be a finite number",
        ),
        (
            {"full": {"a": {"rating": True, "rating_q975": 2.0, "rating_q025": 0.0}}},
            "'rating' must be a finite number",
        ),
        (
            {"full": {"a": {"rating": 3.0, "rating_q975": 2.0, "rating_q025": 0.0}}},
            "rating_q025 <= rating <= rating_q975",
        ),
    ],
)
def test_refuses_what_is_not_a_leaderboard(tmp_path, data, match):
    with pytest.raises(ValueError, match=match):
        evalci.io.read_arena_rank_json(_write(tmp_path, data))


def test_refuses_invalid_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json"):
        evalci.io.read_arena_rank_json(path)
