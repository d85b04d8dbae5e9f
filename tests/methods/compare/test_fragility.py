"""Fragility: the fewest inputs whose removal flips a paired decision.

References: brute force over every subset of up to 4 inputs, with the
decision recomputed from scratch by scipy (``binomtest`` for the sign
test) or by numpy (the paired z) -- independent of the fast paths.
"""

import warnings
from functools import cache
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci.methods.compare.fragility import fragility_table, pair_fragility

from conftest import DATA  # noqa: E402

ALPHA = 0.05


@cache
def _binom_significant(w, n_loss, alternative):
    if w + n_loss == 0:
        return False
    return stats.binomtest(w, w + n_loss, 0.5, alternative=alternative).pvalue < ALPHA


def _sign_decision(a, b, alternative):
    d = b - a
    return _binom_significant(int((d > 0).sum()), int((d < 0).sum()), alternative)


def _clt_decision(a, b, alternative):
    d = b - a
    n = len(d)
    sd = d.std(ddof=1)
    if sd == 0:
        z = 0.0 if d.mean() == 0 else np.sign(d.mean()) * np.inf
    else:
        z = d.mean() / (sd / np.sqrt(n))
    if alternative == "greater":
        return z > stats.norm.isf(ALPHA)
    if alternative == "less":
        return z < -stats.norm.isf(ALPHA)
    return abs(z) > stats.norm.isf(ALPHA / 2)


def _brute(a, b, decide, alternative, up_to=4):
    """Smallest subset size (<= up_to) whose removal flips ``decide``, else None."""
    base = decide(a, b, alternative)
    n = len(a)
    for r in range(1, up_to + 1):
        for drop in combinations(range(n), r):
            keep = np.ones(n, bool)
            keep[list(drop)] = False
            if decide(a[keep], b[keep], alternative) != base:
                return r
    return None


def _flips(a, b, ids_removed, decide, alternative):
    keep = ~np.isin(np.arange(len(a)), ids_removed)
    return decide(a[keep], b[keep], alternative) != decide(a, b, alternative)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_sign_test_fragility_equals_brute_force(alternative):
    # 0/1 paired data, small: every subset of up to 4 inputs is tried
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(60):
        n = int(rng.integers(8, 15))
        a = rng.integers(0, 2, n).astype(float)
        b = (rng.random(n) < rng.uniform(0.2, 0.95)).astype(float)
        f = pair_fragility(a, b, alternative=alternative)
        brute = _brute(a, b, _sign_decision, alternative)
        assert f.exact and f.test == "sign test"
        assert f.significant == _sign_decision(a, b, alternative)
        if brute is not None:  # flips within 4 removals: the same count
            assert f.n_removed == brute, (a, b)
            checked += 1
        else:
            assert f.n_removed is None or f.n_removed > 4
        if f.n_removed is not None:  # the named inputs do flip it
            assert len(f.inputs) == f.n_removed
            assert _flips(a, b, list(f.inputs), _sign_decision, alternative)
    assert checked >= 10  # the comparison is not vacuous


def test_greedy_clt_fragility_is_an_upper_bound():
    # float scores: the greedy count flips the decision and is never below
    # the true smallest number (brute force up to 4)
    rng = np.random.default_rng(2)
    equal = checked = 0
    for _ in range(30):
        n = int(rng.integers(8, 13))
        a = rng.normal(size=n)
        b = a + rng.uniform(0.0, 1.2) + rng.normal(size=n)
        f = pair_fragility(a, b)
        assert not f.exact and f.test == "paired CLT"
        assert f.significant == _clt_decision(a, b, "two-sided")
        brute = _brute(a, b, _clt_decision, "two-sided")
        if f.n_removed is not None:  # what it names does flip the decision
            assert _flips(a, b, list(f.inputs), _clt_decision, "two-sided")
        if brute is not None:
            assert f.n_removed is not None
            assert f.n_removed >= brute
            equal += f.n_removed == brute
            checked += 1
    assert checked >= 15
    assert equal >= 0.8 * checked  # the greedy is usually the smallest too


def test_order_fragility_equals_brute_force():
    rng = np.random.default_rng(3)

    def ahead(a, b, _alt):
        return bool(np.mean(b - a) < 0)  # a strictly ahead

    for _ in range(30):
        n = int(rng.integers(6, 11))
        a = rng.normal(0.3, 1, n)
        b = rng.normal(0.0, 1, n)
        if np.mean(b - a) >= 0:
            continue
        f = pair_fragility(a, b, flip="order")

        # flipped = b strictly ahead: mean(b - a) > 0
        def behind(a, b, _alt):
            return bool(np.mean(b - a) > 0)

        base = behind(a, b, None)
        best = None
        for r in range(1, 5):
            for drop in combinations(range(n), r):
                keep = np.ones(n, bool)
                keep[list(drop)] = False
                if behind(a[keep], b[keep], None) != base:
                    best = r
                    break
            if best:
                break
        assert ahead(a, b, None)
        if best is not None:
            assert f.n_removed == best
        else:
            assert f.n_removed is None or f.n_removed > 4


def test_sign_fragility_hand_case():
    # b wins 10 inputs, loses 0, 20 ties: the two-sided exact p of 10-0 is
    # 2 / 2**10; significance at 5% needs w-0 with 2 / 2**w < 0.05, w >= 6,
    # so removing 5 wins leaves 5-0 (p = 0.0625): 5 removals
    a = np.array([0.0] * 10 + [1.0] * 20)
    b = np.ones(30)
    f = pair_fragility(a, b, ids=[f"q{i:02d}" for i in range(30)])
    assert f.n_removed == 5
    assert f.inputs == ("q00", "q01", "q02", "q03", "q04")  # wins, input order
    assert stats.binomtest(5, 5).pvalue >= 0.05 > stats.binomtest(6, 6).pvalue


def test_no_flip_possible():
    # identical systems: the sign test can never become significant
    f = pair_fragility(np.ones(5), np.ones(5))
    assert f.n_removed is None and f.inputs == () and not f.significant


@pytest.mark.parametrize("runs", [1, 3], ids=["sign test", "paired CLT"])
def test_identical_systems_no_runtime_warning(runs):
    """Two identical systems (issue 34): 149 RuntimeWarnings came out of the
    greedy search's 0/0. Now none; the count is NA (no gap to overturn),
    exact, and the comparison's own DegenerateDataWarning says why, once."""
    import warnings

    rng = np.random.default_rng(0)
    one = pd.DataFrame(
        {
            "input": np.repeat(np.arange(50), runs),
            "run": np.tile(np.arange(runs), 50),
            "correct": (rng.random(50 * runs) < 0.6).astype(float),
        }
    )
    df = pd.concat([one.assign(system="x"), one.assign(system="y")])
    kw = dict(cluster="input", n_resamples=200, rng=0)
    with pytest.warns(evalci.DegenerateDataWarning, match="no spread") as seen:
        res = evalci.compare(df, "correct", **kw)
    assert len(seen) == 1
    with pytest.warns(evalci.DegenerateDataWarning, match="no bootstrap spread"):
        board = evalci.leaderboard(df, "correct", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning at all fails the test
        tables = [res.fragility(), res.fragility(flip="order"), board.fragility()]
    for t in tables:
        assert t["fragility"].isna().all() and t["fragility_exact"].all()
    assert not tables[0]["fragility_significant"].any()
    f = pair_fragility(np.full(9, 0.5), np.full(9, 0.5))
    assert (f.n_removed, f.test, f.exact, f.significant) == (
        None,
        "paired CLT",
        True,
        False,
    )


def test_fragility_bad_input():
    with pytest.raises(ValueError, match="`flip` must be one of"):
        pair_fragility([0, 1], [1, 1], flip="rank")
    with pytest.raises(ValueError, match="same length"):
        pair_fragility([0, 1], [1, 1, 0])
    with pytest.raises(ValueError, match="`ids` must name every input"):
        pair_fragility([0, 1], [1, 1], ids=[1])
    with pytest.raises(ValueError, match="`alternative` must be one of"):
        pair_fragility([0, 1], [1, 1], alternative="up")


def test_comparison_fragility_method_on_example():
    df = evalci.load_example()  # 0/1 correct, 5 runs: per-input means not 0/1
    gaps = evalci.compare(df, "correct", cluster="input_id", n_resamples=500, rng=0)
    t = gaps.fragility()
    assert {"fragility", "fragility_inputs", "fragility_test"} <= set(t.columns)
    assert "fragility" not in gaps.table.columns  # only when asked
    row = t.iloc[0]
    assert row.fragility_test == "paired CLT" and not row.fragility_exact
    # the named inputs flip the test (recomputed here, apart from the module)
    wide = df.groupby(["input_id", "system"])["correct"].mean().unstack()
    a, b = wide[row.a].to_numpy(), wide[row.b].to_numpy()
    drop = wide.index.isin(row.fragility_inputs)
    assert len(row.fragility_inputs) == row.fragility
    assert _clt_decision(a, b, "two-sided") == row.fragility_significant
    assert _clt_decision(a[~drop], b[~drop], "two-sided") != row.fragility_significant


def test_comparison_fragility_exact_on_mmlu_pro(mmlu_pro_two):
    gaps = evalci.compare(
        mmlu_pro_two, "correct", cluster="input_id", n_resamples=200, rng=0
    )
    t = gaps.fragility()
    row = t.iloc[0]
    assert row.fragility_test == "sign test" and row.fragility_exact
    wide = mmlu_pro_two.pivot(index="input_id", columns="system", values="correct")
    d = wide[row.b] - wide[row.a]
    w, n_loss = int((d > 0).sum()), int((d < 0).sum())
    r = int(row.fragility)
    big, small = max(w, n_loss), min(w, n_loss)
    base = stats.binomtest(small, big + small).pvalue < 0.05
    assert base == row.fragility_significant
    # significant: remove r of the majority side; else r of the minority
    # (the majority then wins significantly); r - 1 is not enough

    def sig(x):
        b2, s2 = (big - x, small) if base else (big, small - x)
        return stats.binomtest(s2, b2 + s2).pvalue < 0.05

    assert sig(r) != base and sig(r - 1) == base


def test_leaderboard_fragility_adjacent_pairs(mmlu_pro_two):
    board = evalci.leaderboard(
        mmlu_pro_two, "correct", "input_id", n_resamples=300, rng=0
    )
    t = board.fragility()
    assert len(t) == len(board.table) - 1
    assert list(t.a) == list(board.table.system[:-1])
    order = board.fragility(flip="order")
    wide = mmlu_pro_two.pivot(index="input_id", columns="system", values="correct")
    d = (wide[order.a[0]] - wide[order.b[0]]).to_numpy()
    # strict reversal after removing r wins of the leader: w - r < l
    w, n_loss = int((d > 0).sum()), int((d < 0).sum())
    assert order.fragility[0] == w - n_loss + 1


def test_fragility_table_columns():
    scores = pd.DataFrame(
        {"x": [0, 1, 1, 1.0], "y": [1, 1, 1, 1.0]}, index=list("abcd")
    )
    t = fragility_table(scores, [("x", "y")], confidence_level=0.95)
    assert t.fragility.dtype == "Int64"
    assert t.fragility_inputs[0] == ()  # 1 win: significance is out of reach
    assert pd.isna(t.fragility[0])


@pytest.fixture(scope="module")
def mmlu_pro_two():

    path = DATA / "mmlu_pro_4sys_k1.csv"
    df = pd.read_csv(path)
    keep = ["llama-3.1-8b", "mistral-7b-instruct-v0.2"]
    df = df[df.system.isin(keep)]
    return df[df.category == "law"].reset_index(drop=True)


def test_leaderboard_fragility_lower_is_better(mmlu_pro_two):
    # an error rate: the same pair, the same counts, the order reversed
    # (Holm: the level is Bonferroni's, not a bootstrap critical value)
    errors = mmlu_pro_two.assign(correct=1 - mmlu_pro_two.correct)
    kw = dict(n_resamples=300, rng=0, method="holm")
    up = evalci.leaderboard(mmlu_pro_two, "correct", "input_id", **kw).fragility()
    down = evalci.leaderboard(
        errors, "correct", "input_id", higher_is_better=False, **kw
    ).fragility()
    assert down.fragility_test[0] == "sign test"  # still 0/1 scores
    assert down.fragility[0] == up.fragility[0]
    assert down.fragility_inputs[0] == up.fragility_inputs[0]


def test_report_names_each_gaps_fragility(mmlu_pro_two):
    kw = dict(n_resamples=300, rng=0)
    rep = evalci.report(mmlu_pro_two, "correct", cluster="input_id", **kw)
    f = rep.comparison.fragility()
    n = int(f.fragility[0])
    assert f"(flips if {n} inputs are removed: sign test)" in rep.to_text()


# ------------------------------------------------ issue 34: checked like the rest
@pytest.mark.parametrize(
    "a, b, kw, match",
    [
        ([0, np.nan, 1], [1, 1, 1], {}, r"`score_a` holds 1 non-finite values "
         r"\(first: nan at position 1\).*drop the inputs"),
        ([0, 1, 1], [1, np.inf, 1], {}, r"`score_b` holds 1 non-finite values "
         r"\(first: inf"),
        (["1", "0", "0"], [1, 1, 1], {}, r"`score_a` must be a 1-D array of numbers"),
        ([0, 1, None], [1, 1, 1], {}, r"`score_a` must be a 1-D array.*dtype object"),
        ([[0, 1]], [[1, 1]], {}, r"`score_a` must be a 1-D array.*2-D"),
        ([], [], {}, r"same length, at least 1.*got 0 and 0"),
        ([0.1, 0.5, 0.3], [1, 0.3, 1], {"max_remove": -1}, r"`max_remove` must be "
         r"an integer >= 1 or None; got -1"),
        ([0.1, 0.5], [1, 0.3], {"max_remove": 2.5}, r"`max_remove`"),
        ([1e300, 0.5], [1, 0.3], {}, r"reach 1e\+300.*rescale both"),
        ([0, 1], [1, 1], {"ids": "ab"}, r"`ids` must be a 1-D sequence"),
    ],
)  # fmt: skip
def test_pair_fragility_checks_its_arguments(a, b, kw, match):
    # each used to be accepted: NaN dropped, inf and strings compared, an
    # empty input "not significant", max_remove=-1 a search of no steps
    with pytest.raises(ValueError, match=match):
        pair_fragility(a, b, **kw)


def test_boolean_scores_are_zero_one():
    a = np.array([False] * 10 + [True] * 20)
    b = np.ones(30, bool)
    assert pair_fragility(a, b) == pair_fragility(a.astype(int), b.astype(int))


def test_identical_systems_raise_no_numpy_warnings():
    # the paired z of a zero difference computed sign(0) * inf on the
    # discarded branch: 149 RuntimeWarnings from one fragility() call
    rng = np.random.default_rng(0)
    v = rng.random(60)
    df = pd.DataFrame(
        {"input": np.tile(np.arange(60), 2), "system": np.repeat(["a", "b"], 60),
         "v": np.tile(v, 2)}
    )  # fmt: skip
    with pytest.warns(evalci.DegenerateDataWarning, match="no spread"):
        res = evalci.compare(df, "v", "input", rng=0, n_resamples=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = res.fragility()
    assert not bool(table.fragility_significant.iloc[0])
