"""Leaderboards: simultaneous rank intervals, marginal rank intervals, tie groups.

References: slow loops over pairs written here (max-t, Romano-Wolf step-down,
marginal percentile ranks); ``evalci.compare``'s normal p-values with
statsmodels' Holm; a seeded coverage simulation with known true ranks; and
the invariants on two real leaderboards (CRUXEval, MMLU-Pro).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci.methods.ranks import ranking as R

from conftest import clustered, shared_data


# ----------------------------------------------------------------- helpers
def _four(seed=0, n=80):
    """Four systems on shared inputs: two close, one ahead, one behind."""
    return clustered(n=n, k=3, p_sys=(0.45, 0.6, 0.63, 0.8), seed=seed)


def _reference_max_t(est, reps, level):
    """Single-step max-t and the rank intervals, by explicit loops over pairs."""
    g, b = reps.shape
    pairs = [(i, j) for i in range(g) for j in range(i + 1, g)]
    se, gap = {}, {}
    for i, j in pairs:
        d = [reps[i, r] - reps[j, r] for r in range(b)]
        m = sum(d) / b
        se[i, j] = math.sqrt(sum((x - m) ** 2 for x in d) / (b - 1))
        gap[i, j] = est[i] - est[j]
    maxima = []
    for r in range(b):
        maxima.append(
            max(abs(reps[i, r] - reps[j, r] - gap[i, j]) / se[i, j] for i, j in pairs)
        )
    c = sorted(maxima)[math.ceil(level * (b - 1))]  # numpy's "higher" quantile
    n_better, n_worse = [0] * g, [0] * g
    for i, j in pairs:
        lo, hi = gap[i, j] - c * se[i, j], gap[i, j] + c * se[i, j]
        if lo > 0:  # i above j
            n_better[j] += 1
            n_worse[i] += 1
        elif hi < 0:
            n_better[i] += 1
            n_worse[j] += 1
    low = [1 + n_better[j] for j in range(g)]
    high = [g - n_worse[j] for j in range(g)]
    return c, low, high


def _reference_stepdown(est, reps, level):
    """Romano & Wolf (2005) step-down over ordered hypotheses, by loops."""
    g, b = reps.shape
    hyps = [(i, j) for i in range(g) for j in range(g) if i != j]  # "i better"
    se = {h: np.std(reps[h[0]] - reps[h[1]], ddof=1) for h in hyps}
    t = {h: (est[h[0]] - est[h[1]]) / se[h] for h in hyps}
    active, rejected = set(hyps), set()
    while True:
        maxima = []
        for r in range(b):
            maxima.append(
                max(
                    (reps[i, r] - reps[j, r] - (est[i] - est[j])) / se[i, j]
                    for i, j in active
                )
            )
        c = sorted(maxima)[math.ceil(level * (b - 1))]
        new = {h for h in active if t[h] > c}
        if not new:
            break
        rejected |= new
        active -= new
    low = [1 + sum((k, j) in rejected for k in range(g)) for j in range(g)]
    high = [g - sum((j, k) in rejected for k in range(g)) for j in range(g)]
    return low, high


def _by_groups(board):
    """The board's per-system columns in the order of ``board.scores.groups``."""
    return board.table.set_index("system").loc[list(board.scores.groups)]


# ------------------------------------------------------- against references
def test_max_t_matches_slow_loops():
    df = _four()
    board = R.leaderboard(df, "correct", "input_id", n_resamples=400, rng=3)
    reps = board.scores.bootstrap_distribution
    est = np.asarray(board.scores.estimate)
    c, low, high = _reference_max_t(est, reps, 0.95)
    assert board.critical_value == pytest.approx(c, rel=1e-12)
    t = _by_groups(board)
    assert t.rank_low.tolist() == low
    assert t.rank_high.tolist() == high
    # the pairs' simultaneous intervals are gap +- c se
    p = board.pairs
    assert np.allclose(p.high - p.low, 2 * c * p.standard_error)
    # not trivial: some pair separated, some not
    assert 0 < p.separated.sum() < len(p)


def test_draws_are_those_of_bootstrap_by_system():
    df = _four(seed=1)
    board = R.leaderboard(df, "correct", "input_id", n_resamples=300, rng=7)
    res = evalci.bootstrap(
        df, "correct", "input_id", by="system", n_resamples=300, rng=7
    )
    np.testing.assert_array_equal(
        board.scores.bootstrap_distribution, res.bootstrap_distribution
    )
    t = _by_groups(board)
    np.testing.assert_allclose(t.low, res.low)
    np.testing.assert_allclose(t.high, res.high)


def test_stepdown_matches_slow_loops_and_refines_max_t():
    df = _four(seed=2)
    kw = dict(n_resamples=300, rng=5)
    step = R.leaderboard(df, "correct", "input_id", method="stepdown", **kw)
    single = R.leaderboard(df, "correct", "input_id", method="max-t", **kw)
    est = np.asarray(step.scores.estimate)
    low, high = _reference_stepdown(est, step.scores.bootstrap_distribution, 0.95)
    t = _by_groups(step)
    assert t.rank_low.tolist() == low
    assert t.rank_high.tolist() == high
    # step-down rejects at least what the single step does
    assert (single.pairs.separated <= step.pairs.separated).all()
    assert step.critical_value == single.critical_value


def test_holm_matches_compare_normal_pvalues_and_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    df = _four(seed=4, n=60)
    board = R.leaderboard(
        df, "correct", "input_id", method="holm", n_resamples=500, rng=11
    )
    systems = sorted(df.system.unique())
    pairs = [(b, a) for i, a in enumerate(systems) for b in systems[i + 1 :]]
    kw = dict(pairs=pairs, method="normal", n_resamples=500, rng=11)
    # gap of pair (b, a) is a - b; "greater": H1 a better, "less": b better
    up = evalci.compare(df, "correct", "input_id", alternative="greater", **kw).table
    down = evalci.compare(df, "correct", "input_id", alternative="less", **kw).table
    # compare floors its p-values at 1 / n_resamples; recompute them unfloored
    # from its gaps and standard errors, and check them where not at the floor
    p_up = stats.norm.sf(up.gap / up.standard_error)
    p_down = stats.norm.cdf(down.gap / down.standard_error)
    floor = up.pvalue_at_floor.to_numpy()
    np.testing.assert_allclose(up.pvalue[~floor], p_up[~floor])
    floor = down.pvalue_at_floor.to_numpy()
    np.testing.assert_allclose(down.pvalue[~floor], p_down[~floor])
    p = np.concatenate([p_up, p_down])
    reject, corrected, _, _ = multitest.multipletests(p, alpha=0.05, method="holm")
    m = len(pairs)
    expected = {
        frozenset((b, a)): bool(reject[k] or reject[k + m])
        for k, (b, a) in enumerate(pairs)
    }
    got = {frozenset((r.a, r.b)): bool(r.separated) for r in board.pairs.itertuples()}
    assert got == expected
    # the reported adjusted p-value is that of the direction of the gap
    adj = {
        frozenset((b, a)): min(corrected[k], corrected[k + m])
        for k, (b, a) in enumerate(pairs)
    }
    for r in board.pairs.itertuples():
        assert r.pvalue_adjusted == pytest.approx(adj[frozenset((r.a, r.b))])
    assert 0 < sum(expected.values()) < m  # the data separate some pairs only


def test_marginal_rank_interval_matches_sorted_ranks():
    df = _four(seed=5)
    board = R.leaderboard(df, "correct", "input_id", n_resamples=200, rng=2)
    reps = board.scores.bootstrap_distribution
    g, b = reps.shape
    names = list(board.scores.groups)
    for j, name in enumerate(names):
        ranks = sorted(
            1 + sum(reps[k, r] > reps[j, r] for k in range(g)) for r in range(b)
        )
        row = board.table.set_index("system").loc[name]
        # inverted CDF: the smallest rank whose CDF reaches q
        assert row.marginal_rank_low == ranks[math.ceil(0.025 * b) - 1]
        assert row.marginal_rank_high == ranks[math.ceil(0.975 * b) - 1]
    probs = board.rank_probabilities()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    top = board.table.system[0]
    assert probs.loc[top, 1] == pytest.approx(np.mean(board.rank_distribution[0] == 1))


# --------------------------------------------------------- small exposed parts
def test_rank_intervals_and_tie_groups_by_hand():
    # 0 > 2 and 1 > 3 and 0 > 3 are significant; nothing else
    better = np.zeros((4, 4), bool)
    better[0, 2] = better[1, 3] = better[0, 3] = True
    low, high = R.rank_intervals(better)
    assert low.tolist() == [1, 1, 2, 3]
    assert high.tolist() == [2, 3, 4, 4]
    sep = better | better.T
    # walk 0, 1, 2, 3: 2 is separated from 0 -> new group; 3 from nothing in {2}
    assert R.tie_groups(np.arange(4), sep).tolist() == [1, 1, 2, 2]
    assert R.tie_groups(np.arange(4), np.zeros((4, 4), bool)).tolist() == [1] * 4


def _check_invariants(board):
    t = board.table
    g = len(t)
    assert (t.rank_low <= t["rank"]).all() and (t["rank"] <= t.rank_high).all()
    assert (t.rank_low >= 1).all() and (t.rank_high <= g).all()
    assert (np.diff(t.estimate) <= 0).all()  # best first
    # tie groups: 1..K, consecutive blocks in table order
    groups = t.tie_group.to_numpy()
    assert groups[0] == 1 and set(np.diff(groups)) <= {0, 1}
    sep = (board.better | board.better.T).to_numpy()
    for k in np.unique(groups):
        members = np.flatnonzero(groups == k)
        assert not sep[np.ix_(members, members)].any()  # no pair split inside
        if k > 1:  # the group's first system is split from the group above
            above = np.flatnonzero(groups == k - 1)
            assert sep[members[0], above].any()
    # `better` agrees with the separated pairs and the sign of the gap
    for r in board.pairs.itertuples():
        assert board.better.loc[r.a, r.b] == (r.separated and r.gap > 0)


@pytest.mark.parametrize("method", R.METHODS)
def test_cruxeval_31_systems(method):
    df = shared_data("cruxeval_output_T0.2_counts.csv")
    board = R.leaderboard(
        df,
        cluster="input_id",
        successes="n_correct",
        trials="n_runs",
        method=method,
        n_resamples=2000,
        rng=0,
    )
    t = board.table
    assert len(t) == 31 and len(board.pairs) == 465
    _check_invariants(board)
    # gpt-4-0613+cot is 8 points above the next: alone at rank 1 and in group 1
    assert t.system[0] == "gpt-4-0613+cot"
    assert (t.rank_low[0], t.rank_high[0]) == (1, 1)
    assert (t.tie_group == 1).sum() == 1
    # a crowded middle: some system's interval spans at least 10 ranks
    assert (t.rank_high - t.rank_low).max() >= 10


def test_mmlu_pro_4_systems():
    df = shared_data("mmlu_pro_4sys_k1.csv")
    board = R.leaderboard(df, "correct", "input_id", n_resamples=2000, rng=0)
    _check_invariants(board)
    assert len(board.table) == 4
    # 12,032 inputs: every gap of these four systems is separated
    assert board.pairs.separated.all()
    assert board.table.rank_low.tolist() == [1, 2, 3, 4]
    assert board.table.rank_high.tolist() == [1, 2, 3, 4]


# --------------------------------------------------------------- coverage
def _simulate(rng, a, n=300, k=2):
    """Probit-normal inputs: p_ij = Phi(a_j + z_i), z_i ~ N(0, 1), k runs each.

    The true accuracy is E Phi(a_j + Z) = Phi(a_j / sqrt(2)) exactly, so equal
    ``a_j`` are exactly tied systems; the shared z_i pairs the systems.
    """
    z = rng.normal(size=n)
    p = stats.norm.cdf(np.add.outer(z, a))  # (n, G)
    y = (rng.random((k, *p.shape)) < p).astype(int)  # (k, n, G)
    g = len(a)
    return pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(np.arange(n), g), k),
            "run": np.repeat(np.arange(k), n * g),
            "system": np.tile([f"s{j}" for j in range(g)], n * k),
            "correct": y.reshape(-1),
        }
    )


def _naive_rank_intervals(res):
    """The wrong recipe, as a mutant the coverage test must catch: each pair
    tested alone at 95% (|gap / se| > 1.96), no multiplicity control."""
    est = np.asarray(res.estimate)
    g = len(est)
    a, b, gap, _, se, _ = R.pair_gaps(est, res.bootstrap_distribution)
    sep = np.abs(gap / se) > stats.norm.ppf(0.975)
    better = np.zeros((g, g), bool)
    better[a, b] = sep & (gap > 0)
    better[b, a] = sep & (gap < 0)
    return R.rank_intervals(better)


@pytest.mark.slow
def test_simultaneous_rank_intervals_cover_all_true_ranks():
    # one leader, then two tied blocks of three: true accuracies 0.714, 0.611 x3,
    # 0.5 x3; 6 of the 21 pairs are exact ties
    a = np.array([0.8, 0.4, 0.4, 0.4, 0.0, 0.0, 0.0])
    theta = stats.norm.cdf(a / np.sqrt(2))
    g = len(a)
    # the true rank set of a tied block is every rank in [1 + #better, G - #worse];
    # a system counts as covered only if its interval holds the whole block
    true_low = 1 + (theta[None, :] > theta[:, None]).sum(axis=1)
    true_high = g - (theta[None, :] < theta[:, None]).sum(axis=1)
    rng = np.random.default_rng(20261201)
    trials = 300
    covered = {m: 0 for m in R.METHODS}
    covered_naive = top_alone = 0
    for trial in range(trials):
        res = evalci.bootstrap(
            _simulate(rng, a), "correct", "input_id", by="system",
            n_resamples=1000, rng=trial,
        )  # fmt: skip
        for m in R.METHODS:
            board = R.leaderboard_from_bootstrap(res, method=m)
            t = _by_groups(board)  # s0..s6 in order
            lo, hi = t.rank_low.to_numpy(), t.rank_high.to_numpy()
            covered[m] += bool(((lo <= true_low) & (hi >= true_high)).all())
            if m == "max-t":
                top_alone += (lo[0], hi[0]) == (1, 1)
        lo, hi = _naive_rank_intervals(res)
        covered_naive += bool(((lo <= true_low) & (hi >= true_high)).all())
    # Measured (this seed): max-t 295, stepdown 294, holm 295 of 300 (98%).
    # At a true joint coverage of 0.95, P(Binomial(300, 0.95) < 270) = 1.3e-4
    # (stats.binom.cdf(269, 300, 0.95)); the three methods are strongly
    # correlated, so the false-failure rate of the three asserts is < 4e-4.
    for m in ("max-t", "stepdown", "holm"):
        assert covered[m] / trials >= 0.90, (m, covered[m])
    # The false-discovery-rate methods promise no joint coverage, and have
    # none: BH covers every rank in 248 of 300 (83%); they separate more.
    assert covered["bh"] < covered["holm"], (covered["bh"], covered["holm"])
    # The check can fail: unadjusted pairwise tests cover all ranks jointly in
    # 228 of 300 (76%); at 0.76, P(Binomial(300, 0.76) >= 255) = 9e-5.
    assert covered_naive / trials < 0.85, covered_naive
    # and the intervals are informative: s0 (0.10 ahead) is alone at rank 1 in
    # 257 of 300; at 0.86, P(Binomial(300, 0.86) <= 150) = 1e-49.
    assert top_alone / trials > 0.5, top_alone


# ------------------------------------------------------------ orientation
def test_lower_is_better_mirrors_higher_is_better():
    df = _four(seed=6)
    err = df.assign(wrong=1 - df.correct)
    up = R.leaderboard(df, "correct", "input_id", n_resamples=300, rng=1)
    down = R.leaderboard(
        err, "wrong", "input_id", n_resamples=300, rng=1, higher_is_better=False
    )
    cols = ["system", "rank", "rank_low", "rank_high", "tie_group"]
    pd.testing.assert_frame_equal(up.table[cols], down.table[cols])
    np.testing.assert_allclose(down.table.estimate, 1 - up.table.estimate)
    # gaps a - b on the metric's own scale: an error rate lower for a
    np.testing.assert_allclose(down.pairs.gap, -up.pairs.gap)
    assert (down.pairs.low <= down.pairs.gap).all()
    assert (down.pairs.gap <= down.pairs.high).all()


def test_row_order_does_not_matter():
    df = _four(seed=7)
    shuffled = df.sample(frac=1.0, random_state=3).reset_index(drop=True)
    a = R.leaderboard(df, "correct", "input_id", n_resamples=200, rng=4)
    b = R.leaderboard(shuffled, "correct", "input_id", n_resamples=200, rng=4)
    pd.testing.assert_frame_equal(a.table, b.table)


# -------------------------------------------------------- degenerate pairs
def test_identical_systems_are_tied_with_a_warning():
    df = _four(seed=8)
    twin = df[df.system == "sys1"].assign(system="sys1-copy")
    both = pd.concat([df, twin], ignore_index=True)
    with pytest.warns(evalci.DegenerateDataWarning, match="no bootstrap spread"):
        board = R.leaderboard(both, "correct", "input_id", n_resamples=300, rng=0)
    t = board.table.set_index("system")
    assert t.tie_group["sys1"] == t.tie_group["sys1-copy"]
    assert not board.better.loc["sys1", "sys1-copy"]
    assert not board.better.loc["sys1-copy", "sys1"]


# ---------------------------------------------------------- output formats
def test_repr_markdown_frame_and_plot():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    df = _four(seed=9)
    board = R.leaderboard(df, "correct", "input_id", n_resamples=300, rng=0)
    text = repr(board)
    assert text.startswith("Leaderboard: 4 systems, higher is better, 95%")
    assert "max-t" in text and "rank_interval" in text
    md = board.to_markdown()
    lines = md.splitlines()
    assert len(lines) == 2 + 4 and lines[1].startswith("|---|")
    assert f"| 1 | {board.table.system[0]} |" in lines[2]
    frame = board.to_frame()
    frame.loc[0, "rank"] = 99  # a copy
    assert board.table.loc[0, "rank"] == 1
    assert "<table" in board._repr_html_()
    ax = board.plot()
    labels = [x.get_text() for x in ax.get_yticklabels()]
    assert labels == board.table.system.tolist()  # best first, top down
    notes = [x.get_text() for x in ax.texts]
    assert notes[0] == f"rank [{board.table.rank_low[0]}, {board.table.rank_high[0]}]"
    import matplotlib.pyplot as plt

    plt.close("all")


# ------------------------------------------------------------- validation
def test_errors_name_the_argument():
    df = _four()
    with pytest.raises(ValueError, match="`method` must be 'max-t'"):
        R.leaderboard(df, "correct", "input_id", method="bonferroni")
    with pytest.raises(TypeError, match="`higher_is_better` must be True"):
        R.leaderboard(df, "correct", "input_id", higher_is_better="yes")
    with pytest.raises(ValueError, match="`n_resamples`: 4 systems make 6 pairs"):
        R.leaderboard(df, "correct", "input_id", n_resamples=10**9)
    with pytest.raises(ValueError, match="needs at least 2"):
        R.leaderboard(df[df.system == "sys0"], "correct", "input_id")
    one = evalci.bootstrap(
        df[df.system == "sys0"], "correct", "input_id", n_resamples=100, rng=0
    )
    with pytest.raises(ValueError, match="`result` must be a bootstrap with one"):
        R.leaderboard_from_bootstrap(one)
    res = evalci.bootstrap(df, "correct", "input_id", by="system", n_resamples=100)
    with pytest.raises(ValueError, match="`confidence_level` must be a number"):
        R.leaderboard_from_bootstrap(res, confidence_level=1.5)


def test_missing_inputs_raise_or_drop():
    df = _four(seed=10)
    gappy = df[~((df.system == "sys2") & (df.input_id == "q000"))]
    with pytest.raises(ValueError, match="missing='drop'"):
        R.leaderboard(gappy, "correct", "input_id", n_resamples=100, rng=0)
    with pytest.warns(evalci.MissingInputsWarning, match="dropped 1 of 80"):
        board = R.leaderboard(
            gappy, "correct", "input_id", n_resamples=100, rng=0, missing="drop"
        )
    assert (board.scores.n_inputs == 79).all()
    unpaired = evalci.bootstrap(
        gappy, "correct", "input_id", by="system", n_resamples=100, rng=0
    )
    assert not unpaired.paired
    with pytest.raises(ValueError, match="not drawn together"):
        R.leaderboard_from_bootstrap(unpaired)


def test_level_rereads_the_same_replicates():
    df = _four(seed=11)
    res = evalci.bootstrap(df, "correct", "input_id", by="system", n_resamples=400)
    at90 = R.leaderboard_from_bootstrap(res, confidence_level=0.90)
    at95 = R.leaderboard_from_bootstrap(res)
    ref = res.interval(confidence_level=0.90)
    t = _by_groups(at90)
    np.testing.assert_allclose(t.low, ref.low)
    np.testing.assert_allclose(t.high, ref.high)
    assert at90.confidence_level == 0.90
    assert at90.critical_value < at95.critical_value
    assert (at90.pairs.separated >= at95.pairs.separated).all()
    direct = R.leaderboard(
        df, "correct", "input_id", n_resamples=400, rng=0, confidence_level=0.9
    )
    via = R.leaderboard_from_bootstrap(
        evalci.bootstrap(
            df,
            "correct",
            "input_id",
            by="system",
            n_resamples=400,
            rng=0,
            confidence_level=0.9,
        )  # fmt: skip
    )
    pd.testing.assert_frame_equal(direct.table, via.table)


def test_dask_frame_gives_the_pandas_board():
    dd = pytest.importorskip("dask.dataframe")
    df = _four(seed=12)
    lazy = dd.from_pandas(df, npartitions=3)
    a = R.leaderboard(df, "correct", "input_id", n_resamples=200, rng=1)
    b = evalci.leaderboard(lazy, "correct", "input_id", n_resamples=200, rng=1)
    pd.testing.assert_frame_equal(a.table, b.table)


def test_constant_nonzero_gap_is_separated_by_the_sign_test():
    # Y is right on exactly two more of its 3 runs than X on every input:
    # per-input scores x in {0, 1/3}, y = x + 2/3, so the gap never varies
    rng = np.random.default_rng(0)
    n = 40
    base = rng.integers(0, 2, n)  # X right on 0 or 1 of its 3 runs
    rows = []
    for i in range(n):
        for r in range(3):
            rows.append((i, r, "X", int(r < base[i])))
            rows.append((i, r, "Y", int(r < base[i] + 2)))
    df = pd.DataFrame(rows, columns=["input_id", "run", "system", "correct"])
    with pytest.warns(evalci.DegenerateDataWarning, match="exact sign test"):
        board = R.leaderboard(df, "correct", "input_id", n_resamples=200, rng=0)
    assert board.table.system.tolist() == ["Y", "X"]
    assert board.pairs.separated.tolist() == [True]  # 2^(1 - 40) < 0.05
    few_inputs = df[df.input_id < 4]
    with (
        pytest.warns(evalci.FewClustersWarning),
        pytest.warns(evalci.DegenerateDataWarning, match="exact sign test"),
    ):
        few = R.leaderboard(few_inputs, "correct", "input_id", n_resamples=200, rng=0)
    assert few.pairs.separated.tolist() == [False]  # 2^(1 - 4) = 0.125


def test_max_t_critical_value_matches_the_parametric_bootstrap():
    # csranks (Mogstad, Romano, Shaikh & Wilhelm's R package, R/diffmeans.R)
    # draws Z ~ N(0, Sigma) and takes the quantile of max |Z_i - Z_j| / sd_ij;
    # with Sigma the covariance of our replicates, it must give the same
    # critical value in large samples. Measured over seeds 0-4: within 0.7%.
    a = np.array([0.8, 0.4, 0.4, 0.4, 0.0, 0.0, 0.0])
    df = _simulate(np.random.default_rng(3), a)
    board = R.leaderboard(df, "correct", "input_id", n_resamples=4000, rng=3)
    cov = np.cov(board.scores.bootstrap_distribution)
    z = np.random.default_rng(103).multivariate_normal(np.zeros(7), cov, size=20000)
    i, j = np.triu_indices(7, 1)
    sd = np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j])
    parametric = np.quantile(np.abs((z[:, i] - z[:, j]) / sd).max(axis=1), 0.95)
    assert board.critical_value == pytest.approx(parametric, rel=0.03)
    # and both well above the one-pair 1.96: the multiplicity is accounted for
    assert parametric > 2.5


def test_relabelled_systems_give_the_same_board():
    # names sort in another order, so the engine's group order changes too
    df = _four(seed=13)
    names = {"sys0": "d", "sys1": "a", "sys2": "c", "sys3": "b"}
    renamed = df.assign(system=df.system.map(names))
    a = R.leaderboard(df, "correct", "input_id", n_resamples=300, rng=2)
    b = R.leaderboard(renamed, "correct", "input_id", n_resamples=300, rng=2)
    expected = a.table.assign(system=a.table.system.map(names))
    pd.testing.assert_frame_equal(expected, b.table)
