"""Answer extraction: from raw multiple-choice responses to a correctness table.

Seed 000's appendix ("Answer extraction") scores MMLU-Pro responses with two
regular expressions, permissive versions of Wang et al.'s (2024):

    ANSWER_RE_1 = re.compile(r"(?:T|t)he [a-z ]*answer is[a-z ]*[:\\s]*\\(?([A-Ja-j])\\)?")
    ANSWER_RE_2 = re.compile(r"(?:A|a)nswer:\\s+\\(?([A-Ja-j])\\)?")

"We first attempted to match the first pattern. We used the last match if
any was found (assuming the last match would be the 'final' answer). If no
match was found, we used the second pattern, again using the last match found
if any. If no match was found, the response is marked as wrong." A response
with no extractable answer is scored 0 here too (never a random guess, as in
the original benchmark code), and :func:`format_rate` reports how often that
happened, since a formatting failure can account for much of a gap in
accuracy (seed 000: 31% of one model's biology CoT responses).

The letter class of both patterns is built from ``choices``:
``choices="ABCDEFGHIJ"`` gives seed 000's patterns exactly; the default
``"ABCD"`` suits four-option benchmarks such as GPQA. Letters are matched in
either case and returned in upper case.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd

from evalci._base.validate import check_columns, check_frame, check_level, check_name

__all__ = ["choice_answer", "format_rate", "score_choices"]

#: seed 000's two patterns, with ``{letters}`` for the choice letters
PATTERNS: tuple[str, str] = (
    r"(?:T|t)he [a-z ]*answer is[a-z ]*[:\s]*\(?([{letters}])\)?",
    r"(?:A|a)nswer:\s+\(?([{letters}])\)?",
)


@lru_cache(maxsize=32)
def _compiled(letters: str) -> tuple[re.Pattern, re.Pattern]:
    both = "".join(sorted(set(letters.upper() + letters.lower())))
    return tuple(re.compile(p.format(letters=re.escape(both))) for p in PATTERNS)


def _choices_iv(choices) -> str:
    """``choices`` as a string of distinct upper-case letters."""
    if isinstance(choices, (list, tuple)):
        if not all(isinstance(c, str) and len(c) == 1 for c in choices):
            choices = None
        else:
            choices = "".join(choices)
    if not isinstance(choices, str) or not choices or not choices.isascii():
        raise ValueError(
            "`choices` must be the answer letters, e.g. 'ABCD' or "
            f"'ABCDEFGHIJ' (seed 000's MMLU-Pro); got {choices!r}."
        )
    up = choices.upper()
    if not up.isalpha() or len(set(up)) != len(up):
        raise ValueError(
            f"`choices` must be distinct ASCII letters, e.g. 'ABCD'; got {choices!r}."
        )
    return up


# --- the first pattern in linear time -----------------------------------------
# ``re`` runs the first pattern in time quadratic in a run of spaces after
# "answer is" (its two stars share the spaces, and every split is tried), and
# cubic with several "the"s before it: "The answer is" + 50,000 spaces took
# 136 s. What the backtracking finds can be read off a few per-position
# arrays instead, in one pass over the text (numpy, all texts at once):
#
# * A match from ``s`` ("The " or "the " at ``s``) reads the lower-case run
#   ``[s + 4, E)`` (letters a-z and spaces). Its first ``[a-z ]*`` backs off
#   from ``E``; the tail ``[a-z ]*[:\s]*\(?([L])`` from a point ``p <= E``
#   succeeds at the largest ``u`` in ``[p, E]`` from which ``[:\s]*`` (taken
#   whole: inside it no letter can follow) ends at a letter of ``L``, or at
#   "(" and a letter. So the letter is fixed by ``last_ok[E]``, the largest
#   such ``u <= E``, whichever "answer is" the head uses; the match exists
#   when the first "answer is" at or after ``s + 4`` ends by ``last_ok[E]``.
# * ``findall`` takes matches left to right without overlap: a candidate
#   ``s`` counts when it starts at or after the end of the match before.
#
# tests/io/test_extract.py checks this against seed 000's own regular
# expressions on random text.

#: code point of the separator between joined texts: no part of either
#: pattern matches it, so no match spans two texts
_SEP = "\x00"
#: characters per batch of joined texts (a few int64 arrays of this length)
_BATCH = 1 << 22


@lru_cache(maxsize=1)
def _space_codes() -> np.ndarray:
    """Code points of ``[:\\s]``: ":" and what ``re`` takes for ``\\s``.

    Unicode has no white space above U+3000 (tests/io/test_extract.py checks
    every code point against ``re``).
    """
    below = "".join(map(chr, range(0x3001)))
    spaces = [ord(ch) for ch in re.findall(r"\s", below)]
    return np.array(sorted([ord(":"), *spaces]), dtype=np.uint32)


def _next_false(mask: np.ndarray) -> np.ndarray:
    """For every position, the first position at or after it where ``mask`` is False."""
    idx = np.arange(len(mask))
    stop = np.where(mask, len(mask), idx)
    return np.minimum.accumulate(stop[::-1])[::-1]


def _codes(text: str, pad: int) -> np.ndarray:
    """Code points of ``text`` and ``pad`` zeros (no class of the patterns has 0)."""
    raw = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return np.concatenate([raw, np.zeros(pad, dtype=np.uint32)])


def _at(c: np.ndarray, word: str, n: int) -> np.ndarray:
    """Positions ``0 .. n - 1`` where ``word`` starts (``c`` padded past ``n``)."""
    hit = np.ones(n, dtype=bool)
    for k, ch in enumerate(word):
        hit &= c[k : k + n] == ord(ch)
    return hit


def _first_pattern(text: str, letters: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and letter position of each match of the first pattern (``findall``'s)."""
    n = len(text)
    c = _codes(text, 12)
    m = len(c)
    head = (c[:n] == ord("T")) | (c[:n] == ord("t"))
    starts = np.flatnonzero(head & _at(c[1:], "he ", n))
    if not len(starts):
        return starts, starts
    lower = ((c >= ord("a")) & (c <= ord("z"))) | (c == ord(" "))
    is_letter = np.isin(c, np.array([ord(x) for x in letters + letters.lower()]))
    paren = np.zeros(m, dtype=bool)
    paren[:-1] = (c[:-1] == ord("(")) & is_letter[1:]
    after_spaces = _next_false(np.isin(c, _space_codes()))  # end of [:\s]*
    ok = (is_letter | paren)[after_spaces]
    last_ok = np.maximum.accumulate(np.where(ok, np.arange(m), -1))
    run_end = _next_false(lower)
    answer_is = np.flatnonzero(_at(c, "answer is", n))
    j = np.searchsorted(answer_is, starts + 4)
    first = np.append(answer_is, m)[j]  # the first "answer is" after "The "
    last = last_ok[run_end[starts + 4]]
    valid = first + 9 <= last
    starts, last = starts[valid], last[valid]
    v = after_spaces[last]
    q = v + paren[v]  # "(" and a letter: the letter after it
    ends = q + 1 + (c[q + 1] == ord(")"))
    found, cur = [], 0
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        if s >= cur:  # findall: no overlap with the match before
            found.append(i)
            cur = e
    return starts[found], q[found]


_LOWER = re.compile(r"[a-z ]*")
_NOT_LOWER = re.compile(r"[^a-z ]")
_SPACES = re.compile(r"[:\s]*")


def _spans(text: str) -> list[tuple[int, int]]:
    """Disjoint spans of ``text``, in order, that hold every match of the first pattern.

    A match lies in the lower-case run of one "answer is" (from the character
    before the run, the "T" of "The"), the ``[:\\s]`` run after it and three
    characters more; spans that overlap are merged, so no match crosses the
    cut between two spans and ``findall`` on the spans finds what it finds on
    the text. Runs holding no "answer is" (most of a response) are skipped.
    Each character is read a bounded number of times: linear time. A text
    with many such runs is one span (the whole text): fewer steps in Python.
    """
    spans: list[tuple[int, int]] = []
    o, n, rev = text.find("answer is"), len(text), None
    for _ in range(16 + n // 256):
        if o < 0:
            return spans
        rev = text[::-1] if rev is None else rev
        back = _NOT_LOWER.search(rev, n - o)  # the first non-[a-z ] before o
        start = 0 if back is None else n - 1 - back.start()
        run_end = _LOWER.match(text, o).end()
        stop = min(_SPACES.match(text, run_end).end() + 3, n)
        if spans and start < spans[-1][1]:
            spans[-1] = (spans[-1][0], stop)
        else:
            spans.append((start, stop))
        o = text.find("answer is", run_end)  # the next run's
    return spans if o < 0 else [(0, n)]


def _first_pattern_last(texts: list[str], letters: str) -> list[str | None]:
    """The first pattern's last match in each text (None where none).

    The spans of every text (:func:`_spans`) are joined and searched at once,
    in batches of about ``_BATCH`` characters.
    """
    out: list[str | None] = [None] * len(texts)
    pieces, owner, size = [], [], 0

    def search():
        joined = _SEP.join(pieces)
        starts, at = _first_pattern(joined, letters)
        offsets = np.cumsum([0] + [len(p) + 1 for p in pieces])
        which = np.asarray(owner)[np.searchsorted(offsets, starts, side="right") - 1]
        last = np.append(which[1:] != which[:-1], True) if len(which) else which
        # matches come in order, so the last one of each text is kept
        for k, pos in zip(which[last].tolist(), at[last].tolist(), strict=True):
            out[k] = joined[pos]

    for k, text in enumerate(texts):
        for a, b in _spans(text):
            pieces.append(text[a:b])
            owner.append(k)
            size += b - a + 1
        if size >= _BATCH:
            search()
            pieces, owner, size = [], [], 0
    if pieces:
        search()
    return out


def _answers(texts: list[str], letters: str) -> list[str | None]:
    """Seed 000's rule on a list of strings: upper-case letters, None where none."""
    found = _first_pattern_last(texts, letters)
    second = _compiled(letters)[1]  # one star: ``re`` runs it in linear time
    for i, letter in enumerate(found):
        if letter is None:
            matches = second.findall(texts[i])
            found[i] = matches[-1] if matches else None
    return [None if v is None else v.upper() for v in found]


def _extract(texts: pd.Series, letters: str) -> pd.Series:
    """Seed 000's rule on an object Series of strings (everything else NaN)."""
    has_text = texts.notna().to_numpy()
    values = np.full(len(texts), None, dtype=object)
    where = np.flatnonzero(has_text)
    if len(where):
        values[where] = _answers(texts.iloc[where].tolist(), letters)
    return pd.Series(values, index=texts.index, dtype=object)


def choice_answer(text, choices="ABCD"):
    """The final answer letter of a response, or None when none can be extracted.

    Seed 000's rule: the last match of its first pattern (``"The answer is
    (B)"``, ``"the correct answer is: c"``, ...), else the last match of the
    second (``"Answer: B"``), else no answer (None).

    Parameters
    ----------
    text : str, pandas.Series, list or numpy array
        One response or many. Anything that is not a string (None, NaN, a
        number) has no answer.
    choices : str or sequence of str
        The answer letters, e.g. ``"ABCD"``; ``"ABCDEFGHIJ"`` reproduces seed
        000's patterns exactly. Matched in either case.

    Returns
    -------
    str or None, pandas.Series or numpy.ndarray
        Upper-case letters, None where there is no answer. A Series keeps its
        index (and is named ``"answer"``); a list or array gives an object
        array.

    Notes
    -----
    The first pattern is permissive by design (seed 000: "a bit more
    permissive" than Wang et al. 2024): any lower-case words may sit between
    "the" and "answer is" and after "is", so it also reads a letter out of
    prose. ``"The answer is a bit unclear"`` yields ``"A"`` (the "a" of
    "unclear": the greedy ``[a-z ]*`` backs off to the last choice letter).
    This is kept, to give seed 000's numbers. Upper-case "THE ANSWER IS" and
    "answer:B" (no space) are not matched.
    Formatting failures are counted by :func:`format_rate`; read its result
    before trusting an accuracy gap.

    References
    ----------
    Wang, Y., et al. (2024). MMLU-Pro: a more robust and challenging
    multi-task language understanding benchmark. NeurIPS Datasets and
    Benchmarks.

    Examples
    --------
    >>> from evalci.io.extract import choice_answer
    >>> choice_answer("Step 1 ... so the answer is (B).")
    'B'
    >>> choice_answer("I first thought the answer is (A), but the answer is (C).")
    'C'
    >>> choice_answer("Answer: d") is None, choice_answer("Answer: d", "ABCDE")
    (False, 'D')
    >>> print(choice_answer("The final value is 42."))
    None
    >>> choice_answer(["The answer is (A)", None, "Answer: B"]).tolist()
    ['A', None, 'B']
    """
    letters = _choices_iv(choices)
    if isinstance(text, pd.Series):
        texts = _as_texts(text)
        return _extract(texts, letters).rename("answer")
    if isinstance(text, (list, tuple, np.ndarray, pd.Index)):
        arr = np.asarray(text, dtype=object)
        if arr.ndim != 1:
            raise ValueError(
                f"`text` must be a string or a 1-D sequence of strings; got an "
                f"array of shape {arr.shape} (use .ravel() first)."
            )
        out = _extract(_as_texts(pd.Series(arr, dtype=object)), letters)
        return out.to_numpy(dtype=object)
    if not isinstance(text, str):
        return None
    return _answers([text], letters)[0]


def _as_texts(series: pd.Series) -> pd.Series:
    """An object Series with the strings kept and everything else NaN."""
    obj = series.astype(object)
    is_str = np.fromiter((isinstance(v, str) for v in obj), dtype=bool, count=len(obj))
    return obj.where(is_str, np.nan)


def score_choices(
    data: pd.DataFrame,
    response: str = "response",
    target: str = "target",
    *,
    choices="ABCD",
    answer: str = "answer",
    correct: str = "correct",
) -> pd.DataFrame:
    """A raw-response table becomes a correctness table in one step.

    Adds the extracted letter (column ``answer``, None where none) and
    ``correct``: 1 when the answer equals the target letter, 0 otherwise --
    including every response with no extractable answer (seed 000). The
    result is ready for :func:`evalci.cluster_ci` and the other entry points.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per (input, run[, system]) with the raw response. Never
        modified: a copy with two new columns is returned.
    response : str
        Column of raw responses (text; anything else has no answer).
    target : str
        Column of correct letters, e.g. ``"B"`` (case and surrounding spaces
        are ignored). Every target must be one of ``choices``.
    choices : str or sequence of str
        Answer letters, as in :func:`choice_answer`.
    answer, correct : str
        Names of the two new columns; they must not exist in ``data``.

    Returns
    -------
    pandas.DataFrame
        A copy of ``data`` with ``answer`` (object: letters or None) and
        ``correct`` (int 0/1).

    Raises
    ------
    ValueError
        Unknown columns, an output column that already exists, or a missing
        target or one that is not among ``choices``.

    See Also
    --------
    format_rate : share of responses with an extractable answer.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalci.io.extract import score_choices
    >>> raw = pd.DataFrame({
    ...     "input_id": ["q1", "q1", "q2", "q2"],
    ...     "run": [1, 2, 1, 2],
    ...     "response": ["The answer is (B)", "Answer: C", "the answer is (a)",
    ...                  "I cannot decide."],
    ...     "target": ["B", "B", "A", "A"],
    ... })
    >>> score_choices(raw)[["input_id", "run", "answer", "correct"]]
      input_id  run answer  correct
    0       q1    1      B        1
    1       q1    2      C        0
    2       q2    1      A        1
    3       q2    2   None        0
    """
    letters = _choices_iv(choices)
    check_frame(data, "for xarray objects convert first with da.evalci.to_frame()")
    check_name(response, "response")
    check_name(target, "target")
    check_columns(data, [response], "response")
    check_columns(data, [target], "target")
    for name, col in (("answer", answer), ("correct", correct)):
        check_name(col, name)
        if col in data.columns:
            raise ValueError(
                f"`{name}`: column {col!r} already exists in the DataFrame; pass "
                f"another name, e.g. {name}={col + '_extracted'!r}, or drop it first."
            )
    if answer == correct:
        raise ValueError(
            f"`answer` and `correct` must name different columns; both are {answer!r}."
        )
    truth = _targets(data[target], target, letters)
    out = data.copy()
    found = choice_answer(data[response], letters).to_numpy(dtype=object)
    # dtype=object keeps None (pandas would infer a string column with NaN)
    out[answer] = pd.Series(found, index=out.index, dtype=object)
    out[correct] = (found == truth).astype(np.int64)
    return out


def _targets(series: pd.Series, target: str, letters: str) -> np.ndarray:
    """The target letters, upper case; refuse missing ones and non-choices."""
    if series.isna().any():
        raise ValueError(
            f"`target` column {target!r} has {int(series.isna().sum())} missing "
            "values; every row needs its correct letter (drop those rows first)."
        )
    truth = series.astype(str).str.strip().str.upper()
    bad = ~truth.isin(list(letters))
    if bad.any():
        raise ValueError(
            f"`target` column {target!r} must hold one of the choices "
            f"{letters!r}; found {series[bad].iloc[0]!r} in {int(bad.sum())} rows. "
            "Pass choices=... with every letter used (e.g. 'ABCDEFGHIJ')."
        )
    return truth.to_numpy(dtype=object)


def format_rate(
    data: pd.DataFrame,
    response: str = "response",
    *,
    by="system",
    cluster=None,
    choices="ABCD",
    confidence_level: float = 0.95,
) -> pd.DataFrame:
    """Share of responses with an extractable answer, per group, with a Wilson interval.

    Seed 000's "Correct Format" column: a response whose answer cannot be
    extracted is scored wrong, so a model that misformats loses accuracy it
    may not deserve. Report this next to the accuracy.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per response. Never modified.
    response : str
        Column of raw responses.
    by : str, list of str or None
        Group column(s), ``"system"`` by default; None for one overall rate.
    cluster : str or list of str, optional
        Column(s) identifying the input. ``None``: responses are treated as
        independent (plain Wilson on all responses). With k > 1 runs per input
        formatting failures cluster on inputs, so pass the input column: the
        interval is then the clustered Wilson interval
        (``analytic_ci(method="clustered-wilson")``).
    choices : str or sequence of str
        Answer letters, as in :func:`choice_answer`.
    confidence_level : float
        Two-sided level.

    Returns
    -------
    pandas.DataFrame
        One row per group: the group columns, ``n_responses``,
        ``n_formatted``, ``rate``, ``low``, ``high``, ``method``
        (``"wilson"`` or ``"clustered-wilson"``) and ``confidence_level``.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalci.io.extract import format_rate
    >>> raw = pd.DataFrame({
    ...     "system": ["A"] * 4 + ["B"] * 4,
    ...     "response": ["The answer is (A)", "Answer: B", "The answer is C",
    ...                  "The answer is (D)", "The answer is (A)", "no idea",
    ...                  "\\\\boxed{42}", "Answer: (B)"],
    ... })
    >>> format_rate(raw).round(3)
      system  n_responses  n_formatted  rate   low  high  method  confidence_level
    0      A            4            4   1.0  0.51  1.00  wilson              0.95
    1      B            4            2   0.5  0.15  0.85  wilson              0.95
    """
    from evalci.methods.analytic import analytic_ci

    check_frame(data, "for xarray objects convert first with da.evalci.to_frame()")
    check_name(response, "response")
    check_columns(data, [response], "response")
    check_level(confidence_level)
    flag = "_evalci_formatted"
    answers = choice_answer(data[response], choices)
    table = data.assign(**{flag: answers.notna().to_numpy().astype(np.int64)})
    method = "wilson" if cluster is None else "clustered-wilson"
    # weight="run": the share of responses (runs pooled), also with unequal k
    result = analytic_ci(
        table,
        flag,
        cluster,
        method=method,
        by=by,
        confidence_level=confidence_level,
        weight="run",
    )
    n = np.atleast_1d(np.asarray(result.n_runs, dtype=np.int64))
    rate = np.atleast_1d(np.asarray(result.estimate, dtype=float))
    rates = pd.DataFrame(
        {
            "n_responses": n,
            "n_formatted": np.rint(rate * n).astype(np.int64),
            "rate": rate,
            "low": np.atleast_1d(np.asarray(result.low, dtype=float)),
            "high": np.atleast_1d(np.asarray(result.high, dtype=float)),
            "method": method,
            "confidence_level": result.confidence_level,
        }
    )
    if result.groups is None:
        return rates
    return pd.concat([result.groups.to_frame(index=False), rates], axis=1)
