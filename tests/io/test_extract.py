"""Answer extraction: seed 000's patterns, edge cases, scoring tables, format rates.

The reference is seed 000 itself: its appendix ("Answer extraction",
seed 000 lines 364-371) prints the two regular expressions and the rule
(first pattern's last match, else the second's, else no answer).
``tests/data/seed000_patterns.json`` holds those two expressions *as printed
in the seed* (lines 368-369, character for character, with the citation);
``seed_reference`` below compiles them and applies the rule with
``re.findall``, independently of ``evalci.io.extract``.
"""

import functools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from evalci.io.extract import PATTERNS, choice_answer, format_rate, score_choices
from evalci.methods.analytic import analytic_ci

from conftest import DATA  # noqa: E402

SEED000 = DATA / "seed000_patterns.json"
ALL10 = "ABCDEFGHIJ"  # MMLU-Pro's ten options: seed 000's patterns exactly


@functools.cache
def _seed_patterns():
    """ANSWER_RE_1 and ANSWER_RE_2 as printed in seed 000 (lines 368-369)."""
    seed = json.loads(SEED000.read_text(encoding="utf-8"))
    assert [seed[k]["line"] for k in ("ANSWER_RE_1", "ANSWER_RE_2")] == [368, 369]
    return tuple(re.compile(seed[k]["pattern"]) for k in ("ANSWER_RE_1", "ANSWER_RE_2"))


def seed_reference(text):
    """Seed 000, line 371: last match of pattern 1, else of pattern 2, else None."""
    if not isinstance(text, str):
        return None
    for pattern in _seed_patterns():
        matches = pattern.findall(text)
        if matches:
            return matches[-1].upper()
    return None


# ------------------------------------------------------------ the seed's text
def test_patterns_are_the_seeds():
    # lines 368-369, character for character, once the letter class is A-J
    re1, re2 = _seed_patterns()
    assert PATTERNS[0].format(letters="A-Ja-j") == re1.pattern
    assert PATTERNS[1].format(letters="A-Ja-j") == re2.pattern


@pytest.mark.parametrize("letter", list(ALL10))
def test_the_prompts_answer_format(letter):
    # lines 355-356: 'output the answer in the format of "The answer is (X)"
    # where X is the correct or best letter choice'
    text = f"Let's think step by step. ... The answer is ({letter})"
    assert choice_answer(text, ALL10) == letter == seed_reference(text)
    # without the parentheses, and as the second pattern's 'Answer: X'
    assert choice_answer(f"The answer is {letter}", ALL10) == letter
    assert choice_answer(f"Answer: {letter}", ALL10) == letter


SEED_EXAMPLES = [
    # line 355/356, the prompt's own instruction: X is no choice letter
    "Think step by step and then output the answer in the format of "
    "\u201cThe answer is (X)\u201d at the end.",
    "Reply with \u201cThe answer is (X)\u201d where X is the correct letter choice.",
    # line 371: the last match is the final answer
    "The answer is (A). Wait, let me re-check. The answer is (C).",
    # line 371: the first pattern wins over the second, whatever their order
    "Answer: B. On reflection the answer is (D).",
    "The answer is: A. Answer: B",
    # line 371: the second pattern only when the first finds nothing
    "Answer: (E)\nAnswer: (F)",
    # line 366: "a bit more permissive" -- words around "answer is"
    "the correct answer is: (G)",
    "The best answer is probably H",
    # line 393: a boxed numeric value, no letter -> no answer (marked wrong)
    "So the result is \\boxed{42}.",
    # line 393: a model that 'indicated it was ready for the question'
    "Understood! I am ready for the question. Please go ahead.",
    # line 391: a response cut off by the token limit before its answer
    "Let us compute the energy first. E = mc^2, so the answer",
]


@pytest.mark.parametrize("text", SEED_EXAMPLES)
def test_seed_examples_match_the_seeds_own_regexes(text):
    assert choice_answer(text, ALL10) == seed_reference(text)


def test_seed_examples_values():
    got = choice_answer(SEED_EXAMPLES, ALL10).tolist()
    assert got == [None, None, "C", "D", "A", "F", "G", "H", None, None, None]


# ------------------------------------------------------------- edge cases
@pytest.mark.parametrize(
    "text, expected",
    [
        ("the answer is (b)", "B"),  # lower case, returned upper case
        ("Answer: c", "C"),
        ("Answer:  (d)", "D"),  # several spaces
        ("THE ANSWER IS (B)", None),  # the seed's patterns are case-sensitive
        ("answer:B", None),  # pattern 2 needs a space after the colon
        ("The answer is (E)", None),  # E is not among 'ABCD'
        ("", None),
        ("no answer here", None),
        # permissive on purpose (seed line 366): the greedy [a-z ]* backs off
        # to the last choice letter of the prose, the 'a' of 'unclear'
        ("The answer is a bit unclear", "A"),
    ],
)
def test_edge_cases(text, expected):
    assert choice_answer(text) == expected
    assert choice_answer(text, "ABCD") == expected


@pytest.mark.parametrize("value", [None, np.nan, 3, 2.5, b"The answer is (A)", pd.NA])
def test_non_strings_have_no_answer(value):
    assert choice_answer(value) is None
    out = choice_answer(pd.Series(["The answer is (A)", value], dtype=object))
    assert out.tolist() == ["A", None]


def test_containers():
    texts = ["The answer is (A)", "Answer: b", None, "nothing"]
    expected = ["A", "B", None, None]
    # list, tuple, numpy array -> object array
    for container in (texts, tuple(texts), np.array(texts, dtype=object)):
        out = choice_answer(container)
        assert isinstance(out, np.ndarray) and out.dtype == object
        assert out.tolist() == expected
    # a Series keeps its index, is named 'answer', object dtype with None
    s = pd.Series(texts, index=[10, 3, 7, 1], name="response")
    out = choice_answer(s)
    assert out.index.equals(s.index) and out.name == "answer"
    assert out.dtype == object and out.tolist() == expected
    # pandas' string dtype, an all-numeric Series, empty inputs
    assert choice_answer(s.astype("string")).tolist() == expected
    assert choice_answer(pd.Series([1.0, 2.0])).tolist() == [None, None]
    empty = choice_answer(pd.Series([], dtype=object))
    assert len(empty) == 0 and empty.dtype == object
    assert choice_answer([]).tolist() == []
    assert choice_answer(pd.Series(["x", "y"])).tolist() == [None, None]


def test_choices_argument():
    assert choice_answer("Answer: e", "abcde") == "E"
    assert choice_answer("Answer: e", ["A", "B", "C", "D", "E"]) == "E"
    for bad in ["", "AB1", "AAB", 5, ["AB"], "\u00c5B"]:
        with pytest.raises(ValueError, match=r"`choices` must be"):
            choice_answer("Answer: A", bad)
    with pytest.raises(ValueError, match=r"`text` must be a string or a 1-D"):
        choice_answer(np.array([["a", "b"]], dtype=object))


_TOKENS = st.sampled_from(
    [
        "The",
        "the",
        "answer",
        "is",
        "Answer:",
        "correct",
        "final",
        " ",
        "  ",
        "\n",
        "(",
        ")",
        ":",
        ".",
        "A",
        "b",
        "C",
        "d",
        "E",
        "j",
        "K",
        "x",
        "is(B)",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS, max_size=14).map(" ".join))
def test_agrees_with_the_seed_rule_on_random_text(text):
    assert choice_answer(text, ALL10) == seed_reference(text)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(_TOKENS, max_size=10).map(" ".join), max_size=8))
def test_vectorised_equals_one_by_one(texts):
    out = choice_answer(pd.Series(texts, dtype=object), ALL10)
    assert out.tolist() == [choice_answer(t, ALL10) for t in texts]


# ---------------------------------------------------------- score_choices
def _raw_from_correctness(df, seed=0):
    """A raw-response table whose scoring must give back ``df.correct``."""
    rng = np.random.default_rng(seed)
    n = len(df)
    target = rng.choice(list("ABCD"), n)
    wrong = np.array([rng.choice([c for c in "ABCD" if c != t]) for t in target])
    templates = np.array(
        [
            "Reasoning... The answer is ({})",
            "the correct answer is: {}",
            "Answer: ({})",
            "First the answer is (A)? No: the answer is ({})",
        ]
    )
    pick = templates[rng.integers(0, len(templates), n)]
    letter = np.where(df.correct.to_numpy() == 1, target, wrong)
    response = [
        t.format(x.lower() if i % 5 == 0 else x)
        for i, (t, x) in enumerate(zip(pick, letter, strict=True))
    ]
    # a third of the wrong rows are unformatted instead: still scored 0
    unformatted = (df.correct.to_numpy() == 0) & (rng.random(n) < 1 / 3)
    response = np.where(unformatted, "I am ready for the question.", response)
    raw = df.drop(columns="correct").assign(response=response, target=target)
    return raw, letter, unformatted


def test_score_choices_round_trip(gpqa):
    raw, letter, unformatted = _raw_from_correctness(gpqa)
    before = raw.copy()
    scored = score_choices(raw)
    pd.testing.assert_frame_equal(raw, before)  # the input is not modified
    assert list(scored.columns) == [*raw.columns, "answer", "correct"]
    np.testing.assert_array_equal(scored.correct.to_numpy(), gpqa.correct.to_numpy())
    assert scored.correct.dtype == np.int64
    expected = np.where(unformatted, None, letter).astype(object)
    assert scored.answer.dtype == object
    assert scored.answer.tolist() == expected.tolist()
    # the scored table goes straight into the library, same numbers as the original
    a = analytic_ci(scored, "correct", "input_id", by="system")
    b = analytic_ci(gpqa, "correct", "input_id", by="system")
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_score_choices_targets_and_names():
    raw = pd.DataFrame(
        {"response": ["The answer is (B)", "Answer: c", "x"], "gold": [" b", "C", "A"]}
    )
    out = score_choices(raw, target="gold", answer="pred", correct="ok")
    assert out.ok.tolist() == [1, 1, 0] and out.pred.tolist() == ["B", "C", None]
    with pytest.raises(ValueError, match=r"`correct`: column 'gold' already exists"):
        score_choices(raw, target="gold", correct="gold")
    with pytest.raises(ValueError, match=r"`answer` and `correct` must name different"):
        score_choices(raw, target="gold", answer="x", correct="x")
    with pytest.raises(ValueError, match=r"`target`: column 'target' is not in"):
        score_choices(raw)
    with pytest.raises(ValueError, match=r"`response`: column 'text' is not in"):
        score_choices(raw, "text", "gold")
    bad = raw.assign(gold=["B", "E", "A"])
    with pytest.raises(ValueError, match=r"one of the choices 'ABCD'; found 'E' in 1"):
        score_choices(bad, target="gold")
    assert score_choices(bad, target="gold", choices="ABCDE").correct.tolist() == [
        1,
        0,
        0,
    ]
    missing = raw.assign(gold=["B", None, "A"])
    with pytest.raises(ValueError, match=r"`target` column 'gold' has 1 missing"):
        score_choices(missing, target="gold")
    with pytest.raises(TypeError, match=r"`data` must be a pandas DataFrame"):
        score_choices(raw.to_dict())


# ------------------------------------------------------------ format_rate
def _format_table():
    rng = np.random.default_rng(3)
    rows = []
    for system, p_ok in (("A", 0.95), ("B", 0.7)):
        for i in range(40):
            p_i = min(1.0, p_ok + rng.normal(0, 0.2))
            for r in range(3):
                ok = rng.random() < p_i
                text = "The answer is (C)" if ok else "\\boxed{7}"
                rows.append((system, f"q{i}", r, text))
    return pd.DataFrame(rows, columns=["system", "input_id", "run", "response"])


def test_format_rate_is_wilson_on_counts():
    df = _format_table()
    out = format_rate(df)
    assert out.system.tolist() == ["A", "B"]
    for _, row in out.iterrows():
        sub = df[df.system == row.system]
        x = int(sub.response.str.startswith("The answer").sum())
        assert (row.n_responses, row.n_formatted) == (len(sub), x)
        assert row.rate == pytest.approx(x / len(sub))
        ref = proportion_confint(x, len(sub), alpha=0.05, method="wilson")
        assert (row.low, row.high) == pytest.approx(ref, rel=1e-12)
        assert row.method == "wilson"
    # one overall rate
    overall = format_rate(df, by=None, confidence_level=0.9)
    x = int(df.response.str.startswith("The answer").sum())
    ref = proportion_confint(x, len(df), alpha=0.1, method="wilson")
    assert (overall.low[0], overall.high[0]) == pytest.approx(ref, rel=1e-12)
    assert list(overall.columns)[0] == "n_responses"


def test_format_rate_clustered():
    df = _format_table()
    out = format_rate(df, cluster="input_id")
    flags = df.assign(ok=df.response.str.startswith("The answer").astype(int))
    ref = analytic_ci(
        flags, "ok", "input_id", by="system", method="clustered-wilson", weight="run"
    )
    np.testing.assert_allclose(out.low, ref.low.to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.high, ref.high.to_numpy(), rtol=1e-12)
    assert (out.method == "clustered-wilson").all()
    # format failures cluster on inputs here: wider than treating responses as iid
    plain = format_rate(df)
    assert ((out.high - out.low) > (plain.high - plain.low)).all()


def test_format_rate_errors():
    df = _format_table()
    with pytest.raises(ValueError, match=r"`by`: column 'model' is not in"):
        format_rate(df, by="model")
    with pytest.raises(ValueError, match=r"`confidence_level`"):
        format_rate(df, confidence_level=95)
    with pytest.raises(ValueError, match=r"`response`: column 'text' is not in"):
        format_rate(df, "text")


# ------------------------------------------- linear time (issue 24, part B)
def _reference(text, letters):
    """Seed 000's rule with ``re`` on any letters (the patterns as printed)."""
    both = "".join(sorted(set(letters.upper() + letters.lower())))
    for p in PATTERNS:
        matches = re.findall(p.format(letters=re.escape(both)), text)
        if matches:
            return matches[-1].upper()
    return None


_HOSTILE = st.sampled_from(
    [
        "The ",
        "the ",
        "The",
        "t",
        "he ",
        "answer is",
        "answer",
        " is",
        "Answer:",
        "answer: ",
        " ",
        "     ",
        ":",
        "\n",
        "\t",
        "\u00a0",
        "\u3000",
        "\x00",
        "(",
        ")",
        "((",
        "A",
        "a",
        "b",
        "C",
        "d",
        "T",
        "e",
        "x",
        "z",
        ".",
        "1",
        "\u00e9",
    ]
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(_HOSTILE, max_size=24).map("".join),
    st.sampled_from(["ABCD", ALL10, "TEH", "S", "abz"]),
)
def test_linear_extraction_agrees_with_re_on_hostile_text(text, letters):
    # the tokens glued without spaces: runs of lower case and of white
    # space meet "The", "(", NUL and letters of the choices in every order
    assert choice_answer(text, letters) == _reference(text, letters)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.lists(_HOSTILE, max_size=16).map("".join), max_size=12))
def test_batches_of_texts_equal_one_by_one(texts):
    import evalci.io.extract as ex

    want = [_reference(t, "ABCD") for t in texts]
    assert choice_answer(pd.Series(texts, dtype=object)).tolist() == want
    old = ex._BATCH
    try:
        ex._BATCH = 7  # several batches, texts split across none of them
        assert choice_answer(pd.Series(texts, dtype=object)).tolist() == want
    finally:
        ex._BATCH = old


def test_many_answer_runs_in_one_text():
    # more runs holding "answer is" than _spans walks one by one: the whole
    # text is searched at once, with the same result as re
    parts = [f"the answer is {c}. The answer is ({c}) " for c in "ABCDxy" * 10]
    for text in ("".join(parts), "".join(parts) + "The answer is a bit unclear"):
        assert choice_answer(text) == _reference(text, "ABCD")


def test_white_space_is_res():
    from evalci.io.extract import _space_codes

    every = "".join(map(chr, range(0x110000)))
    want = sorted({ord(":"), *(ord(c) for c in re.findall(r"\s", every))})
    assert _space_codes().tolist() == want


_LONG = r"""
import json, sys
import pandas as pd
from evalci.io.extract import choice_answer, format_rate, score_choices
M = 1_000_000
texts = [
    "The answer is" + " " * M,
    "The answer is" + " " * M + "(B)",
    "the " * (M // 4) + "answer is (C)",
    "The answer is" + "\n" * M + "d",
    "Answer:" + " " * M + "(A)",
    "The answer is a " * (M // 16),
    "x" * M,
]
out = [choice_answer(t) for t in texts]
raw = pd.DataFrame({"response": texts[:2], "target": ["A", "B"], "system": "s"})
out.append(score_choices(raw).correct.tolist())
out.append(format_rate(raw).n_formatted.tolist())
json.dump(out, sys.stdout)
"""


@pytest.mark.slow  # a child process: importing evalci takes most of it
def test_megabyte_responses_finish():
    # 1 MB hostile responses (issue 24: "The answer is" + 50,000 spaces took
    # 136 s with re). Run in a child process so that a return to super-linear
    # time fails here (after a generous 120 s) instead of hanging the suite;
    # the timing itself is benchmarks/bench_extract.py's (~0.2 s a response).
    import subprocess
    import sys

    import evalci

    src = str(Path(evalci.__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", _LONG],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": src},
        check=True,
    )
    got = json.loads(done.stdout)
    assert got == [None, "B", "C", "D", "A", "A", None, [0, 1], [1]]
