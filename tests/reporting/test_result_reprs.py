"""Every result prints, under every ``missing`` policy (issue 34).

``repr()`` of a comparison whose systems lack some inputs raised
``KeyError: 'n_scored'``: a notebook showed a traceback instead of the
result. Here every public result type is built and printed the four ways a
user meets it (``repr``, ``_repr_html_``, ``to_frame()`` and, for the
report, its text, Markdown and HTML), under each policy its entry point
takes, on complete tables, tables with missing values, tables where a system
lacks some inputs (one-sided) and both. What was missing must be said, and
names from the data must reach no terminal with a control character in them.
Messages show values as a user wrote them (``'zzz'``, ``3.0``, ``('t1', 0)``),
not numpy's or pandas' reprs.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci import preference as pref

SYSTEMS = ("alpha", "beta", "gamma")
ESC = "red\x1b[31m"  # an ANSI escape: turns a terminal red


def _table(nan=False, one_sided=False, systems=SYSTEMS, runs=3, n=40):
    """Three systems, ``n`` inputs, ``runs`` runs; ``nan``: alpha misses 6
    runs (one input entirely); ``one_sided``: the second system lacks inputs
    0-3."""
    rng = np.random.default_rng(0)
    rows = []
    for j, s in enumerate(systems):
        for i in range(n):
            if one_sided and j == 1 and i < 4:
                continue
            for r in range(runs):
                rows.append((s, i, r, float(rng.random() < 0.45 + 0.1 * j)))
    df = pd.DataFrame(rows, columns=["system", "input", "run", "correct"])
    if nan:
        first = df.system == systems[0]
        df.loc[first & (df.input < 3) & (df.run == 0), "correct"] = np.nan
        df.loc[first & (df.input == 7), "correct"] = np.nan
    return df


TABLES = {
    "complete": _table(),
    "nan": _table(nan=True),
    "one_sided": _table(one_sided=True),
    "both": _table(nan=True, one_sided=True),
}
CASES = [("raise", "complete")] + [
    (policy, t)
    for policy in ("drop", "zero", "bounds")
    for t in ("nan", "one_sided", "both")
]
KW = dict(n_resamples=200, rng=0)


def _quiet(fn, *args, **kwargs):
    """Call ``fn``; the warnings a policy brings (MissingDataWarning...) are
    not what these tests are about."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        return fn(*args, **kwargs)


def _prints(res) -> str:
    """repr, HTML and the table of ``res``; returns the repr."""
    text = repr(res)
    assert text and "Traceback" not in text
    assert "\x1b" not in text
    if hasattr(res, "_repr_html_"):
        page = res._repr_html_()
        assert page.startswith("<") and "\x1b" not in page
    if hasattr(res, "to_frame"):
        frame = res.to_frame()
        assert isinstance(frame, pd.DataFrame) and len(frame)
    return text


ENTRIES = {
    "bootstrap by": lambda d, m: evalci.bootstrap(
        d, "correct", "input", by="system", missing=m, **KW
    ),
    "cluster_ci one system": lambda d, m: evalci.cluster_ci(
        d[d.system == "alpha"], "correct", cluster="input", missing=m, **KW
    ),
    "analytic_ci by": lambda d, m: evalci.analytic_ci(
        d, "correct", cluster="input", by="system", missing=m
    ),
    "compare": lambda d, m: evalci.compare(
        d, "correct", cluster="input", missing=m, **KW
    ),
    "compare baseline": lambda d, m: evalci.compare(
        d,
        "correct",
        cluster="input",
        baseline="alpha",
        adjust="holm",
        mme=0.05,
        missing=m,
        **KW,
    ),
    "leaderboard": lambda d, m: evalci.leaderboard(
        d, "correct", cluster="input", missing=m, **KW
    ),
    "report": lambda d, m: evalci.report(
        d, "correct", cluster="input", missing=m, **KW
    ),
}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize(("policy", "table"), CASES, ids=[f"{p}-{t}" for p, t in CASES])
def test_every_result_prints_under_every_policy(entry, policy, table):
    if entry == "leaderboard" and policy == "bounds":
        with pytest.raises(ValueError, match="not supported by leaderboard"):
            ENTRIES[entry](TABLES[table], policy)
        return
    res = _quiet(ENTRIES[entry], TABLES[table], policy)
    text = _prints(res)
    if isinstance(res, evalci.Report):
        for out in (res.to_text(), res.to_markdown(), res.to_html()):
            assert out and "\x1b" not in out
        text = res.to_text()
    if isinstance(res, evalci.ComparisonResult) and policy != "bounds":
        table_ = _quiet(res.fragility)
        assert len(table_) == len(res.table)
    if isinstance(res, evalci.Leaderboard):
        assert res.to_markdown().startswith("|")
        _quiet(res.fragility)
    counted = getattr(res, "counts", None)
    if isinstance(res, evalci.Report):
        counted = res.comparison.counts
    if isinstance(res, evalci.Leaderboard):
        counted = res.scores.counts
    if counted is not None:  # what was missing is said
        assert f"'{policy}'" in text or f"missing={policy}" in text, text
    one_sided = table in ("one_sided", "both")
    if one_sided and isinstance(res, evalci.ComparisonResult | evalci.Report):
        assert "beta: " in text and "4 inputs with no row" in text, text


def test_one_sided_comparison_repr_was_a_key_error():
    """The issue's case: a system lacks some inputs, missing='drop'."""
    res = _quiet(
        evalci.compare,
        TABLES["one_sided"],
        "correct",
        cluster="input",
        missing="drop",
        **KW,
    )
    text = repr(res)
    assert "missing (missing='drop'):" in text
    assert "  alpha: nothing missing" in text
    assert "  beta: 4 inputs with no row" in text
    assert "4 inputs with no row" in res._repr_html_()


def test_note_words_of_each_count():
    from evalci.engine.missing import note

    assert note(pd.Series({"n_inputs_missing": 4})) == "4 inputs with no row"
    assert note(pd.Series({"n_inputs_missing": 0})) == "nothing missing"
    row = pd.Series(
        {"n_attempted": 90, "n_scored": 84, "n_errored": 6, "n_inputs_unscored": 1}
    )
    assert note(row) == "scored 84 of 90 runs; 6 errored; 1 input with no scored run"


# ------------------------------------------------------ the other result types
def _battles(names=("x", "y", "z"), n=400):
    rng = np.random.default_rng(1)
    a = rng.choice(names, n)
    b = rng.choice(names, n)
    keep = a != b
    strength = {m: i for i, m in enumerate(names)}
    p = 1 / (
        1
        + np.exp(
            -(np.vectorize(strength.get)(a[keep]) - np.vectorize(strength.get)(b[keep]))
            * 0.5
        )
    )
    u = rng.random(keep.sum())
    winner = np.where(u < p * 0.9, "model_a", np.where(u < 0.9, "model_b", "tie"))
    return pd.DataFrame(
        {
            "model_a": a[keep],
            "model_b": b[keep],
            "winner": winner,
            "question_id": rng.integers(0, 60, keep.sum()),
        }
    )


def _others(names=SYSTEMS):
    """Every other public result, built on small tables."""
    df = _table(systems=names)
    k1 = df[df.run == 0]
    two = k1[k1.system.isin(names[:2])]
    judged = k1.assign(
        judge=k1.correct, gold=np.where(k1.input < 25, k1.correct, np.nan)
    )
    suite = df.assign(task=np.where(df.input % 2 == 0, "t1", "t2"))
    suite_hole = suite[~((suite.system == names[1]) & (suite.task == "t2"))]
    battles = _battles(names)
    fit = pref.bradley_terry(battles)
    ci = pref.preference_ci(battles, n_resamples=100, rng=0)
    comp = evalci.compare(df, "correct", cluster="input", **KW)
    board = evalci.leaderboard(df, "correct", cluster="input", **KW)
    return {
        "bayes_ci": evalci.bayes_ci(k1, "correct", cluster="input", by="system"),
        "bayes_compare": evalci.bayes_compare(
            two, "correct", cluster="input", a=names[0], b=names[1]
        ),
        "mcnemar": evalci.mcnemar(k1, "correct", "input", "system", names[0], names[1]),
        "run_level_ci": evalci.run_level_ci(df, "correct", "input", by="system"),
        "plan": evalci.plan(0.04, 0.1, target_width=0.1, n_inputs=200, max_k=5),
        "pair_fragility": evalci.pair_fragility(
            two[two.system == names[0]].correct, two[two.system == names[1]].correct
        ),
        "comparison fragility": comp.fragility(),
        "leaderboard fragility": board.fragility(),
        "ppi_mean": evalci.judge.ppi_mean(
            judged, "judge", "gold", cluster="input", by="system"
        ),
        "ppi_compare": evalci.judge.ppi_compare(
            judged[judged.system.isin(names[:2])], "judge", "gold", "input"
        ),
        "rogan_gladen": evalci.judge.rogan_gladen(
            judged, "judge", cluster="input", gold="gold", by="system"
        ),
        "sequential_gap": evalci.testing.sequential_gap(
            k1, "correct", "input", "system", names[0], names[1]
        ),
        "suite_ci": evalci.suite_ci(
            suite, "correct", task="task", cluster="input", **KW
        ),
        "suite_ci common": evalci.suite_ci(
            suite_hole, "correct", task="task", cluster="input", missing="common", **KW
        ),
        "suite_ci available": evalci.suite_ci(
            suite_hole,
            "correct",
            task="task",
            cluster="input",
            missing="available",
            **KW,
        ),
        "bradley_terry": fit,
        "preference_ci": ci,
        "preference leaderboard": ci.leaderboard(),
        "preference_fragility": fit.fragility(battles),
        "arena_leaderboard": pref.arena_leaderboard(battles, n_resamples=100, rng=0),
    }


def test_every_other_result_type_prints():
    results = _quiet(_others)
    for name, res in results.items():
        if isinstance(res, pd.DataFrame):  # fragility tables
            assert len(res), name
            continue
        _prints(res)


def test_no_control_character_reaches_a_repr():
    """A system named with an ANSI escape prints it visibly (``\\x1b``) in
    every repr and HTML table, as the leaderboard's repr already did."""
    names = ("alpha", ESC, "gamma")
    df = _table(nan=True, systems=names)
    results = _quiet(_others, names)
    policies = {
        "bootstrap by": "drop",
        "analytic_ci by": "zero",
        "compare": "bounds",
        "leaderboard": "drop",
        "report": "drop",
    }
    results |= {k: _quiet(ENTRIES[k], df, m) for k, m in policies.items()}
    seen = 0
    for name, res in results.items():
        if isinstance(res, pd.DataFrame):
            continue
        texts = [repr(res), str(res)]
        if hasattr(res, "_repr_html_"):
            texts.append(res._repr_html_())
        for t in texts:
            assert "\x1b" not in t, name
        seen += any("red\\x1b[31m" in t for t in texts)
    assert seen >= 15  # the name is shown, made visible, not dropped


# ------------------------------------------------------------------ messages
F = np.float64


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        (
            lambda d: evalci.compare(
                d, "correct", cluster="input", baseline=np.str_("zzz")
            ),
            "`baseline`: 'zzz' is not a system",
        ),
        (
            lambda d: evalci.cluster_ci(
                d, "correct", cluster="input", confidence_level=F(1.5)
            ),
            "got 1.5.",
        ),
        (
            lambda d: evalci.compare(d, "correct", cluster="input", mme=F(-1)),
            "got -1.0.",
        ),
        (
            lambda d: evalci.cluster_ci(
                d, "correct", cluster="input", method=np.str_("zzz")
            ),
            "not 'zzz'.",
        ),
        (
            lambda d: evalci.cluster_ci(d, np.str_("zzz"), cluster="input"),
            "column 'zzz' is not in the DataFrame",
        ),
        (
            lambda d: evalci.testing.confidence_sequence(
                F(1.0), np.array([1.0, -2.0]), 1.0
            ),
            "got -2.0.",
        ),
        (
            lambda d: evalci.bayes_ci(
                d[d.run == 0], "correct", cluster="input", threshold=F(3.0)
            ),
            "got 3.0.",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_messages_show_values_as_written(call, shown):
    """numpy 2's reprs (np.str_('zzz'), np.float64(1.5)) never reach a message."""
    df = _table(systems=("a", "b"))
    with pytest.raises(ValueError) as err:
        call(df)
    msg = str(err.value)
    assert shown in msg, msg
    assert "np." not in msg, msg


def test_missing_value_message_names_composite_inputs_as_tuples():
    df = _table(systems=("a", "b")).assign(task="t1")
    df.loc[3, "correct"] = np.nan
    for fn in (evalci.cluster_ci, evalci.compare, evalci.analytic_ci):
        kw = (
            {}
            if fn is evalci.analytic_ci
            else {"by": "system"}
            if fn is evalci.cluster_ci
            else {}
        )
        with pytest.raises(ValueError, match="missing values") as err:
            fn(df, "correct", cluster=["task", "input"], **kw)
        msg = str(err.value)
        assert "('t1', 1)" in msg and "Pandas(" not in msg, msg


def test_as_written():
    from evalci._base.text import as_written

    key = next(pd.DataFrame({"task": ["t1"], "item": [0]}).itertuples(index=False))
    assert as_written(key) == "('t1', 0)"
    assert as_written(np.str_("zzz")) == "'zzz'"
    assert as_written(np.float64(3.0)) == "3.0"
    assert as_written([np.int64(1), (np.str_("a"),)]) == "[1, ('a',)]"
    assert as_written(np.datetime64("2020-01-02")) == "Timestamp('2020-01-02 00:00:00')"
    assert as_written("a\x1b") == "'a\\x1b'"
