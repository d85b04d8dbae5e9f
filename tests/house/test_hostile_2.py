"""Hostile arguments to the entry points added since round 2 (issue 34).

Round 2 (issue 24, ``tests/house/test_hostile.py``) threw bad values at the
sequential gates and the judge estimators. The entry points added after it
get the same treatment here: :func:`evalci.preference.preference_ci` (and
with it ``bradley_terry`` / ``davidson``),
:func:`~evalci.preference.preference_fragility`, :func:`evalci.suite_ci`,
:func:`evalci.pair_fragility`, :func:`evalci.bayes_ci`,
:func:`evalci.bayes_compare`, :func:`evalci.judge.ppi_compare` and
:func:`evalci.leaderboard` (the readers are tested apart).

Each example is a call with every argument valid but (usually) one, drawn
from hostile values: wrong types, NaN, inf, strings, empty tables,
MultiIndex columns, out-of-range counts, a column of bad values. The
property: the call

* returns a result whose numbers are finite with ``low <= high``, or that
  an :class:`evalci.EvalciWarning` announced otherwise; or
* raises exactly ``ValueError`` or ``TypeError`` from evalci's own code
  (not numpy's or pandas' on the way), whose message names the hostile
  argument (or, for a table, the argument or one of its columns).

Anything else fails: another exception type, a numpy ``RuntimeWarning``
(made an error), a NaN that no warning announced, or a refusal that does
not say which argument is wrong. ``derandomize=True``: the same examples on
every run. About 2-6 s per entry point.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile import (
    COLUMN_ARG,
    DATA_ARG,
    LEVEL,
    NUMBER,
    NUMBER_ARG,
    RESAMPLES_BAD,
    RNG_BAD,
    _finite_result,
    _own_refusal,
    _pick,
    calls,
)

import evalci
from evalci import judge, preference

pytestmark = pytest.mark.filterwarnings(
    "ignore:only .* labeled inputs:evalci.FewClustersWarning"
)

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: values a column may be spoiled with (one cell, or the whole column)
SPOILS = [
    math.nan, math.inf, -math.inf, None, "", "x", "1", 1e308, -1.5, 2.5, True,
    (1,), [1, 2], b"a", 2**70, pd.NA, pd.Timestamp(0),
]  # fmt: skip


@st.composite
def _spoiled(draw, frame: pd.DataFrame, col: str | None):
    """``frame`` with column ``col`` spoiled: one cell, or every cell, or a
    column of mixed hostile values; or the frame made empty or MultiIndexed."""
    if col is None:
        return frame
    if col == "<empty>":
        return frame.iloc[:0]
    if col == "<multiindex>":
        out = frame.copy()
        out.columns = pd.MultiIndex.from_tuples([(c, "x") for c in frame.columns])
        return out
    out = frame.copy()
    out[col] = out[col].astype(object)
    how = draw(st.sampled_from(["cell", "column", "mixed"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if how == "cell":
        out.iloc[draw(st.integers(0, len(out) - 1)), out.columns.get_loc(col)] = draw(
            st.one_of(st.sampled_from(SPOILS), NUMBER)
        )
    elif how == "column":
        value = draw(st.sampled_from(SPOILS))
        out[col] = pd.Series([value] * len(out), index=out.index, dtype=object)
    else:
        out[col] = pd.Series(
            _pick(rng, len(out), SPOILS), index=out.index, dtype=object
        )
    return out.infer_objects() if draw(st.booleans()) else out


def _tables(make, columns):
    """A valid table (``make(draw)``) or one spoiled in one of ``columns``."""

    @st.composite
    def strategy(draw, hostile=False):
        frame = make(draw)
        if not hostile:
            return frame
        col = draw(st.sampled_from([*columns, "<empty>", "<multiindex>"]))
        return draw(_spoiled(frame, col))

    return strategy


def _names_the_argument(e: Exception, which, kw) -> None:
    """The refusal names an argument of the call (or a column of the table).

    Usually the hostile one; another when the refusal is about the data or
    an interaction (a valid ``anchor_score`` with battles Davidson cannot
    fit is refused naming ``model``).
    """
    msg = str(e)
    table = kw.get("data", kw.get("battles"))
    cols = [str(c) for c in getattr(table, "columns", [])]
    named = [f"`{k}" for k in kw] + [f"{k}=" for k in kw]
    named += [f"'{c}'" for c in cols] + [f"`{c}`" for c in cols]
    assert any(n in msg for n in named), f"{which!r} hostile, message: {msg}"


def _check(fn, which, kw, finite):
    """Call ``fn(**kw)``: a finite result (``finite(result, warned)``) or a
    refusal of the right type, from evalci, naming the hostile argument."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("error")  # RuntimeWarning & co. become errors
        warnings.simplefilter("always", evalci.EvalciWarning)
        try:
            res = fn(**kw)
        except (ValueError, TypeError) as e:
            _own_refusal(e)
            _names_the_argument(e, which, kw)
            return
    finite(res, any(issubclass(w.category, evalci.EvalciWarning) for w in seen))


#: a bootstrap's level, replicates and seed: valid, and hostile
RESAMPLED = {
    "confidence_level": LEVEL,
    "n_resamples": st.sampled_from([30, 2]),
    "rng": st.sampled_from([0, None]),
}
RESAMPLED_BAD = {
    "confidence_level": NUMBER_ARG,
    "n_resamples": RESAMPLES_BAD,
    "rng": RNG_BAD,
}


# ---------------------------------------------------------------- preferences
def _battles(draw):
    return preference.simulate_battles(
        {"a": 0.4, "b": 0.0, "c": -0.4},
        n_prompts=draw(st.integers(3, 12)),
        tie=draw(st.sampled_from([0.0, 0.4])),
        rng=draw(st.integers(0, 1000)),
    )


BATTLES = _tables(_battles, ["model_a", "model_b", "winner", "question_id", "verdict"])
STRENGTH_BAD = st.sampled_from(
    [{"A>B": "3"}, {"A>B": math.nan}, {"A>B": math.inf}, {"A>B": -1}, {"X": 1}]
    + [{"A>B": None}, {"A>B": [3]}, "3", [1], 3, {"A>B": True}, {("A>B",): 1}]
)
PREF_VALID = {
    "battles": BATTLES(),
    "model": st.sampled_from(["bradley-terry", "davidson"]),
    "ties": st.sampled_from(["half", "drop"]),
    "cluster": st.sampled_from(["question_id", None]),
    "n_resamples": st.sampled_from([20, 2]),
    "confidence_level": LEVEL,
    "method": st.sampled_from(["percentile", "basic", "normal"]),
    "rng": st.sampled_from([0, None]),
    "anchor": st.sampled_from([None, "a"]),
    "strength": st.sampled_from([None, {"A>>B": 3}, {"A>B": 0.5}]),
    "prior": st.sampled_from([None, 0.5, 0]),
    "models": st.sampled_from([None, ["a", "b", "c"]]),
}
PREF_HOSTILE = {
    "battles": st.one_of(DATA_ARG, BATTLES(hostile=True)),
    "model": st.sampled_from(["elo", None, ["davidson"], 1, "Davidson"]),
    "ties": st.sampled_from(["count", None, 0.5]),
    "cluster": st.one_of(COLUMN_ARG, st.just([])),
    "n_resamples": RESAMPLES_BAD,
    "confidence_level": NUMBER_ARG,
    "method": st.sampled_from(["bca", None, ["basic"], 1]),
    "rng": RNG_BAD,
    "anchor": st.sampled_from(["zz", 3, ["a"], math.nan, b"a"]),
    "anchor_score": NUMBER_ARG,
    "scale": NUMBER_ARG,
    "base": NUMBER_ARG,
    "strength": STRENGTH_BAD,
    "prior": NUMBER_ARG,
    "models": st.sampled_from([["a"], "a", 3, ["a", "b", "c", "zz"], [None], {}]),
    "model_a": COLUMN_ARG,
}
PREF_VALID |= {k: st.just(v) for k, v in dict(anchor_score=1000.0, scale=400.0, base=10.0, model_a="model_a").items()}  # fmt: skip


def _preference_finite(res, warned):
    _finite_result(res.scores.to_frame(), warned)


FRAG_KEYS = ("battles", "model", "ties", "strength", "prior", "scale", "base")
FRAG_VALID = {k: PREF_VALID[k] for k in FRAG_KEYS} | {
    "max_remove": st.sampled_from([None, 3, 1]),
}
FRAG_HOSTILE = {k: PREF_HOSTILE[k] for k in FRAG_KEYS} | {
    "max_remove": st.one_of(NUMBER_ARG, st.just(0)),
}


def _fragility_finite(res, warned):
    t = res.to_frame()
    assert np.isfinite(t[["gap", "theta_gap"]].to_numpy(float)).all(), t
    assert (t.fragility.dropna() >= 0).all()


# ---------------------------------------------------------------------- suites
def _suite(draw):
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    rows = []
    for t in range(draw(st.integers(1, 4))):
        for s in ("a", "b"):
            for i in range(int(rng.integers(2, 8))):
                rows.append((s, f"t{t}", i, float(rng.random() < 0.6)))
    frame = pd.DataFrame(rows, columns=["system", "task", "item", "correct"])
    # every system has every item of its task (items numbered per task)
    return frame.drop_duplicates(["system", "task", "item"]).pipe(
        lambda f: f[f.groupby(["task", "item"]).system.transform("size") == 2]
    )


SUITES = _tables(_suite, ["system", "task", "item", "correct"])
SUITE_VALID = {
    "data": SUITES(),
    "value": st.just("correct"),
    "task": st.just("task"),
    "cluster": st.just("item"),
    "system": st.just("system"),
    "weighting": st.sampled_from(["macro", "micro"]),
    "tasks": st.sampled_from(["fixed", "random"]),
    "metric": st.sampled_from(["mean", "win_rate"]),
    "missing": st.sampled_from([None, "common", "available"]),
} | RESAMPLED
SUITE_HOSTILE = {
    "data": st.one_of(DATA_ARG, SUITES(hostile=True)),
    "value": COLUMN_ARG,
    "task": COLUMN_ARG,
    "cluster": COLUMN_ARG,
    "system": COLUMN_ARG,
    "weighting": st.sampled_from(["mean", None, 1]),
    "tasks": st.sampled_from(["sampled", None]),
    "metric": st.sampled_from(["accuracy", None, ["mean"]]),
    "missing": st.sampled_from(["drop", 0, "all"]),
} | RESAMPLED_BAD


def _suite_finite(res, warned):
    if res.metric == "win_rate" and res.weighting == "micro":
        raise AssertionError("micro win rate accepted")
    _finite_result(res.table, warned)


# ------------------------------------------------------------ pair fragility
SCORES = st.lists(st.sampled_from([0.0, 1.0, 0.5, 0.25]), min_size=6, max_size=30)
SCORES_BAD = st.one_of(
    st.lists(st.one_of(NUMBER, st.sampled_from(SPOILS)), max_size=8),
    st.sampled_from([None, "0101", 3, [[0, 1]], np.array([[0.0]]), {"a": 1}]),
    st.sampled_from([pd.Series([0, 1, None], dtype="Int64"), np.array([], float)]),
)
PAIR_VALID = {
    "score_a": SCORES,
    "score_b": SCORES,
    "ids": st.sampled_from([None]),
    "confidence_level": LEVEL,
    "alternative": st.sampled_from(["two-sided", "less", "greater"]),
    "flip": st.sampled_from(["decision", "order"]),
    "max_remove": st.sampled_from([None, 2]),
}
PAIR_HOSTILE = {
    "score_a": SCORES_BAD,
    "score_b": SCORES_BAD,
    "ids": st.sampled_from(["abc", 3, [1], [[1, 2]], {1, 2}]),
    "confidence_level": NUMBER_ARG,
    "alternative": st.sampled_from(["up", None, 1]),
    "flip": st.sampled_from(["rank", None]),
    "max_remove": st.one_of(NUMBER_ARG, st.just(0)),
}


def _pair_finite(res, warned):
    assert res.n_removed is None or res.n_removed >= 0
    assert res.n_removed is None or len(res.inputs) <= res.n_removed


# ------------------------------------------------------------ Bayes, PPI, ranks
def _runs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    n, k = draw(st.integers(2, 12)), draw(st.integers(1, 3))
    frame = pd.DataFrame(
        {
            "input": np.tile(np.repeat(np.arange(n), k), 2),
            "sys": np.repeat(["a", "b"], n * k),
            "correct": (rng.random(2 * n * k) < 0.6).astype(int),
        }
    )
    return frame


RUNS = _tables(_runs, ["input", "sys", "correct"])
PRIOR_BAD = st.sampled_from(["flat", None, 3, ["uniform-icc"], (1, 1), (-1, 2)])
BAYES_VALID = {
    "data": RUNS(),
    "value": st.just("correct"),
    "cluster": st.sampled_from(["input", None]),
    "by": st.sampled_from(["sys", None]),
    "prior": st.just("uniform-icc"),
    "confidence_level": LEVEL,
    "threshold": st.sampled_from([None, 0.5]),
    "estimand": st.sampled_from(["population", "inputs"]),
}
BAYES_HOSTILE = {
    "data": st.one_of(DATA_ARG, RUNS(hostile=True)),
    "value": COLUMN_ARG,
    "cluster": st.one_of(COLUMN_ARG, st.just([])),
    "by": st.sampled_from(["nope", ["sys", "sys"], 3, "input", "correct"]),
    "prior": PRIOR_BAD,
    "confidence_level": NUMBER_ARG,
    "threshold": NUMBER_ARG,
    "estimand": st.sampled_from(["mean", None, 1]),
}


def _frame_finite(res, warned):
    _finite_result(res.to_frame(), warned)


BCMP_VALID = {k: BAYES_VALID[k] for k in ("data", "value", "prior", "threshold")} | {
    "cluster": st.just("input"),
    "system": st.just("sys"),
    "a": st.just(None),  # both None (the two systems, sorted); named ones are
    "b": st.just(None),  # tried as the hostile values "a" and "b" below
    "confidence_level": LEVEL,
    "estimand": st.sampled_from(["population", "inputs"]),
}
BCMP_HOSTILE = {k: BAYES_HOSTILE[k] for k in BCMP_VALID if k in BAYES_HOSTILE} | {
    "system": COLUMN_ARG,
    "a": st.sampled_from(["zz", 3, ["a"], math.nan, "b"]),
    "b": st.sampled_from(["zz", 3, ["b"], "a", "b"]),
}


def _judged(draw):
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    n = draw(st.integers(20, 40))
    rows = []
    for s, skill in (("a", 0.7), ("b", 0.5)):
        truth = rng.random(n) < skill
        verdict = np.where(rng.random(n) < 0.85, truth, ~truth)
        gold = np.where(np.arange(n) < n // 2, truth, np.nan)
        rows.append(
            pd.DataFrame(
                {
                    "input": np.arange(n),
                    "sys": s,
                    "judge": verdict.astype(float),
                    "gold": gold,
                }
            )  # fmt: skip
        )
    return pd.concat(rows, ignore_index=True)


JUDGED = _tables(_judged, ["input", "sys", "judge", "gold"])
PPI_VALID = {
    "data": JUDGED(),
    "judge": st.just("judge"),
    "gold": st.just("gold"),
    "cluster": st.just("input"),
    "system": st.just("sys"),
    "baseline": st.sampled_from([None, "a"]),
    "confidence_level": LEVEL,
    "lam": st.sampled_from(["auto", 0, 1]),
}
PPI_HOSTILE = {
    "data": st.one_of(DATA_ARG, JUDGED(hostile=True)),
    "judge": COLUMN_ARG,
    "gold": COLUMN_ARG,
    "cluster": st.one_of(COLUMN_ARG, st.just([])),
    "system": COLUMN_ARG,
    "baseline": st.sampled_from(["zz", 3, ["a"], math.nan]),
    "confidence_level": NUMBER_ARG,
    "lam": st.one_of(st.just("AUTO"), NUMBER_ARG),
}


BOARD_VALID = {
    "data": RUNS(),
    "value": st.just("correct"),
    "cluster": st.just("input"),
    "system": st.just("sys"),
    "method": st.sampled_from(["max-t", "stepdown", "holm"]),
    "higher_is_better": st.booleans(),
} | RESAMPLED
BOARD_HOSTILE = {
    "data": st.one_of(DATA_ARG, RUNS(hostile=True)),
    "value": COLUMN_ARG,
    "cluster": st.one_of(COLUMN_ARG, st.just([])),
    "system": COLUMN_ARG,
    "method": st.sampled_from(["bonferroni", None, 1]),
    "higher_is_better": st.sampled_from(["yes", None, 2, math.nan]),
} | RESAMPLED_BAD


def _board_finite(res, warned):
    _finite_result(res.table, warned)


# ------------------------------------------------------------- the property
def _macro_win_rate(which, kw):
    if kw["metric"] == "win_rate" and which != "weighting":
        kw["weighting"] = "macro"  # micro win rates are refused by design


def _paired_lengths(which, kw):
    if which not in ("score_a", "score_b"):  # valid scores: one per input each
        n = min(len(kw["score_a"]), len(kw["score_b"]))
        kw["score_a"], kw["score_b"] = kw["score_a"][:n], kw["score_b"][:n]


#: entry point: (function, valid arguments, hostile ones, result check, fix-up)
DOORS = {
    "preference_ci": (
        preference.preference_ci, PREF_VALID, PREF_HOSTILE, _preference_finite, None
    ),
    "preference_fragility": (
        preference.preference_fragility, FRAG_VALID, FRAG_HOSTILE,
        _fragility_finite, None,
    ),
    "suite_ci": (
        evalci.suite_ci, SUITE_VALID, SUITE_HOSTILE, _suite_finite, _macro_win_rate
    ),
    "pair_fragility": (
        evalci.pair_fragility, PAIR_VALID, PAIR_HOSTILE, _pair_finite,
        _paired_lengths,
    ),
    "bayes_ci": (evalci.bayes_ci, BAYES_VALID, BAYES_HOSTILE, _frame_finite, None),
    "bayes_compare": (
        evalci.bayes_compare, BCMP_VALID, BCMP_HOSTILE, _frame_finite, None
    ),
    "ppi_compare": (judge.ppi_compare, PPI_VALID, PPI_HOSTILE, _frame_finite, None),
    "leaderboard": (
        evalci.leaderboard, BOARD_VALID, BOARD_HOSTILE, _board_finite, None
    ),
}  # fmt: skip


@pytest.mark.parametrize("door", list(DOORS))
@SETTINGS
@given(data=st.data())
def test_hostile_arguments(door, data):
    fn, valid, hostile, finite, fix = DOORS[door]
    which, kw = data.draw(calls(valid, hostile), label="call")
    if fix is not None:
        fix(which, kw)
    _check(fn, which, kw, finite)


# ------------------------------------------------------- every table, by hand
def _example(name):
    """One valid table and call of each table-taking entry point."""
    from hypothesis import find

    def fn_kw(frame):
        return {
            "preference_ci": (preference.preference_ci, {"battles": frame}),
            "preference_fragility": (
                preference.preference_fragility,
                {"battles": frame},
            ),
            "suite_ci": (
                evalci.suite_ci,
                dict(data=frame, value="correct", task="task", cluster="item"),
            ),
            "bayes_ci": (evalci.bayes_ci, dict(data=frame, value="correct")),
            "bayes_compare": (
                evalci.bayes_compare,
                dict(data=frame, value="correct", cluster="input", system="sys"),
            ),
            "ppi_compare": (
                judge.ppi_compare,
                dict(
                    data=frame,
                    judge="judge",
                    gold="gold",
                    cluster="input",
                    system="sys",
                ),
            ),  # fmt: skip
            "leaderboard": (
                evalci.leaderboard,
                dict(data=frame, value="correct", cluster="input", system="sys"),
            ),
        }[name]

    make = {
        "preference_ci": BATTLES,
        "preference_fragility": BATTLES,
        "suite_ci": SUITES,
        "bayes_ci": RUNS,
        "bayes_compare": RUNS,
        "ppi_compare": JUDGED,
        "leaderboard": RUNS,
    }[name]
    frame = find(make(), lambda f: len(f) > 0, settings=settings(database=None))
    return fn_kw, frame


TABLE_DOORS = [
    "preference_ci", "preference_fragility", "suite_ci", "bayes_ci",
    "bayes_compare", "ppi_compare", "leaderboard",
]  # fmt: skip


@pytest.mark.parametrize("name", TABLE_DOORS)
def test_empty_and_multiindex_tables_are_refused_by_name(name):
    # suite_ci's empty table raised "zip() argument 2 is longer than
    # argument 1", preference_ci's numpy's "zero-size array to reduction";
    # MultiIndex columns were read by their first level ("v" in df.columns)
    fn_kw, frame = _example(name)
    arg = "battles" if name.startswith("preference") else "data"
    fn, kw = fn_kw(frame.iloc[:0])
    with pytest.raises(ValueError, match=rf"`{arg}` has no rows"):
        fn(**kw)
    wide = frame.copy()
    wide.columns = pd.MultiIndex.from_tuples([(c, "x") for c in frame.columns])
    fn, kw = fn_kw(wide)
    with pytest.raises(ValueError, match=rf"`{arg}` has MultiIndex columns"):
        fn(**kw)
