"""The pattern kernel (issue 10): exact pattern finding, same law as the index
kernel, jackknife / acceleration over patterns, reproducibility.

Statistical tests and their false-failure rates (for a random seed; the seeds
here are fixed, so each test is deterministic):

* mean / variance comparisons allow 4.5 standard errors: 6.8e-6 per
  comparison (two-sided normal); ``test_law_matches_index_path`` makes 50
  cases x at most 14 comparisons = 700 in all, so a family-wise rate of at
  most 0.5% for a random seed (Bonferroni);
* chi-square / KS two-sample tests reject at p < 1e-4 (KS on discrete data is
  conservative, so at most 1e-4); 9 such tests, at most 0.09%.

Run-level strategies have three pattern forms (``patterns.DrawPlan``): the
mixture (default for 0/1 data), the conditional binomials (forced with
``form="conditional"``, and the default for runs with more than two values)
and patterns built from counts (``binary_run_patterns``); each is checked
against the index path.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalci import metrics
from evalci.engine import args as _args
from evalci.engine import intervals, patterns, resampling, tiles
from evalci.engine import passes as engine

Z = 4.5  # standard errors allowed in mean / variance comparisons
P_MIN = 1e-4  # rejection level of the two-sample tests


def tidy(n=120, k=5, n_systems=2, unequal=False, seed=0, n_strata=3, levels=2):
    """0/1 runs: per-input difficulty shared by the systems (correlated pairs).

    Strata of unequal sizes (20%, 30%, 50% for 3) differ strongly in accuracy,
    so stratifying changes the bootstrap variance (ignoring strata is caught).
    ``levels=3`` gives scores in {0, 0.5, 1} (three distinct runs per input).
    """
    gen = np.random.default_rng(seed)
    stratum = np.array([0, 0, 1, 1, 1, 2, 2, 2, 2, 2])[np.arange(n) * 10 // n]
    stratum = np.minimum(stratum, n_strata - 1)
    base = 0.3 * gen.beta(2, 2, n) + np.array([0.05, 0.35, 0.65])[stratum]
    ks = gen.integers(1, 2 * k, n) if unequal else np.full(n, k)
    inp = np.repeat(np.arange(n), ks)
    frames = []
    for s in range(n_systems):
        p = np.clip(base + 0.1 * s - 0.05, 0.02, 0.98)
        frames.append(
            pd.DataFrame(
                {
                    "input_id": inp,
                    "run": np.concatenate([np.arange(kk) for kk in ks]),
                    "system": f"s{s}",
                    "correct": (
                        (gen.random(len(inp)) < p[inp]).astype(int)
                        if levels == 2
                        else (gen.random((2, len(inp))) < p[inp]).sum(0) / 2
                    ),
                    "subject": stratum[inp],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def make_pass(df, strategy, weight="input", strata=True, metric="mean", by="system"):
    args = _args.bootstrap_iv(
        df,
        "correct",
        "input_id",
        strategy,
        metric,
        by,
        "subject" if strata else None,
        "percentile",
        0.95,
        1000,
        weight,
        True,
    )
    root = np.random.SeedSequence(2024)
    # the units with their run rows (the index kernel's), whichever kernel runs
    return engine.start_pass(df, args, root).with_run_rows(), root


def unit_patterns(unit, strategy):
    if strategy == "cluster":
        return patterns.find_patterns(unit.T, unit.strata_bounds)
    return patterns.run_level_patterns(unit)


def binary_inputs(p, df, strategy, weight):
    """What Cube.units would pass to binary_run_patterns: (c, k), values, scale.

    Built as the lead would (raw rows -> two_values, cell sums ->
    binary_counts) and checked against pandas counts of the table.
    """
    unit, groups, clusters = p.units[0]
    cube = p.cube
    k = cube.cell_counts()[np.ix_(clusters, groups)].astype(np.int64)
    pairs = [patterns.two_values(cube.stats[cube.row_group == g]) for g in groups]
    low = np.array([lo for lo, _ in pairs])
    high = np.array([hi for _, hi in pairs])
    c = patterns.binary_counts(cube.cell_sums()[np.ix_(clusters, groups)], k, low, high)
    keys = cube.cluster_keys[clusters]
    systems = ["s0"] if cube.groups is None else list(cube.groups[groups])
    ref = df.groupby(["input_id", "system"])["correct"].sum().unstack()
    np.testing.assert_array_equal(c, ref[systems].loc[keys].to_numpy())
    const = (k == k[:1]).all(axis=0)  # equal k: Cube.units skips reweighting
    scale = np.ones(k.shape)
    if strategy == "hierarchical" and weight == "input":
        scale = np.where(const, 1.0, 1.0 / k)
    elif strategy == "single_draw" and weight == "run":
        scale = np.where(const, 1.0, k.astype(float))
    return unit, c, k, low, high, scale


def test_two_values():
    lo, hi = patterns.two_values(np.array([[1.0, 1], [0, 1], [1, 1]]))
    np.testing.assert_array_equal(lo, [0, 1])
    np.testing.assert_array_equal(hi, [1, 1])
    lo, hi = patterns.two_values(np.ones((4, 2)))
    np.testing.assert_array_equal(lo, hi)
    assert patterns.two_values(np.array([[0.0, 1], [0.5, 1], [1, 1]])) is None


def draw(unit, strategy, form, root, b, df=None, p=None, weight=None):
    """Replicate sums on the pattern path, in one of its forms."""
    if form == "binary":
        unit, c, k, low, high, scale = binary_inputs(p, df, strategy, weight)
        pat = patterns.binary_run_patterns(
            unit.T, c, k, low, high, unit.strata_bounds, scale
        )
    else:
        pat = unit_patterns(unit, strategy)
    plan = patterns.draw_plan(
        pat, strategy, "conditional" if form == "conditional" else None
    )
    return patterns.replicate_sums(pat, root, 0, strategy, b, plan=plan), plan


def permute_unit(unit, seed):
    """The same unit with inputs shuffled within strata (rows untouched)."""
    gen = np.random.default_rng(seed)
    b = unit.strata_bounds
    perm = np.concatenate(
        [lo + gen.permutation(hi - lo) for lo, hi in zip(b[:-1], b[1:], strict=True)]
    )
    return (
        resampling.Unit(
            index=unit.index,
            T=unit.T[perm],
            strata_bounds=b,
            starts=tuple(s[perm] for s in unit.starts),
            counts=tuple(c[perm] for c in unit.counts),
            rows=unit.rows,
        ),
        perm,
    )


# ------------------------------------------------------------- (a) finding
def reference_patterns(T, bounds):
    """Obviously-correct: np.unique over rows (stratum, flattened stats)."""
    n = T.shape[0]
    stratum = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    key = np.column_stack([stratum, T.reshape(n, -1)])
    uniq, inverse, counts = np.unique(
        key, axis=0, return_inverse=True, return_counts=True
    )
    return uniq, inverse.reshape(-1), counts


@pytest.mark.parametrize(
    "kind", ["binary", "fractions", "continuous_many_columns", "one_pattern"]
)
def test_find_patterns_exact_and_canonical(kind):
    gen = np.random.default_rng(1)
    n, bounds = 400, np.array([0, 150, 151, 400])
    if kind == "binary":  # (c, k) with k = 5
        c = gen.integers(0, 6, (n, 2)).astype(float)
        T = np.stack([c, np.full((n, 2), 5.0)], axis=2)
    elif kind == "fractions":  # (c / k, 1), unequal k
        k = gen.integers(1, 8, (n, 3))
        T = np.stack([gen.integers(0, 8, (n, 3)) % (k + 1) / k, np.ones((n, 3))], 2)
    elif kind == "continuous_many_columns":  # radix overflows int64: renumbering
        T = gen.normal(size=(n, 4, 3)).round(2)
        T[: n // 2] = T[n // 2 :]  # every row twice (also across strata)
    else:
        T = np.ones((n, 1, 2))
    pat = patterns.find_patterns(T, bounds)
    uniq, inverse, counts = reference_patterns(T, bounds)
    flat = pat.stats.reshape(pat.n_patterns, -1)
    # canonical order is (stratum, lexicographic values): np.unique's order
    np.testing.assert_array_equal(np.column_stack([pat.stratum, flat]), uniq)
    np.testing.assert_array_equal(pat.inverse, inverse)
    np.testing.assert_array_equal(pat.multiplicity, counts)
    np.testing.assert_array_equal(pat.stats[pat.inverse], T)  # bit for bit
    np.testing.assert_array_equal(pat.input_bounds, bounds)
    np.testing.assert_array_equal(
        pat.bounds, np.searchsorted(pat.stratum, np.arange(len(bounds)))
    )
    # order invariance: inputs shuffled within strata give the same patterns
    perm = np.concatenate(
        [
            lo + gen.permutation(hi - lo)
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
        ]
    )
    again = patterns.find_patterns(T[perm], bounds)
    np.testing.assert_array_equal(again.stats, pat.stats)
    np.testing.assert_array_equal(again.multiplicity, pat.multiplicity)
    np.testing.assert_array_equal(again.bounds, pat.bounds)
    np.testing.assert_array_equal(again.inverse, pat.inverse[perm])


@pytest.mark.parametrize("strategy", ["hierarchical", "single_draw"])
@pytest.mark.parametrize("weight", ["input", "run"])
def test_run_level_patterns_describe_the_runs(strategy, weight):
    p, _ = make_pass(tidy(n=80, n_systems=3, unequal=True), strategy, weight)
    unit = p.units[0][0]
    pat = patterns.run_level_patterns(unit)
    assert pat.values.shape[2] == 2  # 0/1 data: at most two distinct runs
    np.testing.assert_array_equal(pat.stats[pat.inverse], unit.T)
    for i in range(unit.n_clusters):
        q = pat.inverse[i]
        for j in range(unit.T.shape[1]):
            lo = unit.starts[j][i]
            runs = unit.rows[j][lo : lo + unit.counts[j][i]]
            got = np.repeat(pat.values[q, j], pat.value_counts[q, j], axis=0)
            ref = runs[np.lexsort(runs.T[::-1])]
            np.testing.assert_array_equal(got, ref)
    shuffled, perm = permute_unit(unit, 3)
    again = patterns.run_level_patterns(shuffled)
    np.testing.assert_array_equal(again.values, pat.values)
    np.testing.assert_array_equal(again.value_counts, pat.value_counts)
    np.testing.assert_array_equal(again.inverse, pat.inverse[perm])


def test_run_level_patterns_need_rows():
    p, _ = make_pass(tidy(n=20), "cluster")
    unit = p.units[0][0]
    assert not patterns.run_level_exact(unit)
    with pytest.raises(ValueError, match="run rows"):
        patterns.run_level_patterns(unit)
    pat = patterns.find_patterns(unit.T, unit.strata_bounds)
    root = np.random.SeedSequence(0)
    with pytest.raises(ValueError, match="run_level_patterns"):
        patterns.pattern_replicate_sums(pat, root, 0, "hierarchical", 0, 1)


def test_should_use_patterns():
    assert patterns.should_use_patterns(1_000, 6, 2)  # one 0/1 system, k = 5
    assert patterns.should_use_patterns(1_000_000, 36, 4)  # two systems
    assert not patterns.should_use_patterns(1_000, 36, 4)  # P/N = 1/28
    assert not patterns.should_use_patterns(1_000, 990, 20)  # 10 systems: P ~ N
    assert not patterns.should_use_patterns(1, 1, 2)
    # run level: the index path's run draws count too (two systems, k = 5)
    assert patterns.should_use_patterns(1_000, 36, 4, n_runs=1_000 * 2 * 5)
    assert not patterns.should_use_patterns(1_000, 8_874, 20, n_runs=1_000 * 10 * 5)
    # the plan's draws per replicate are what the rule is given
    p, _ = make_pass(tidy(n=400, k=5, n_systems=1), "hierarchical", by=None)
    pat = patterns.run_level_patterns(p.units[0][0])
    plan = patterns.draw_plan(pat, "hierarchical")
    assert plan.form == "mixture" and plan.n_draws <= 3 * 6  # 3 strata, y = 0..5
    cond = patterns.draw_plan(pat, "hierarchical", "conditional")
    assert cond.n_draws > pat.n_patterns


# ------------------------------------------------------------- (b) the law
def _moments_close(a, b, label):
    """Means and variances of the columns of a, b (B, c) within Z standard errors."""
    se = np.sqrt(a.var(0, ddof=1) / len(a) + b.var(0, ddof=1) / len(b))
    diff = np.abs(a.mean(0) - b.mean(0))
    assert (diff <= Z * se + 1e-12).all(), (label, "mean", diff / se)

    def var_se(x):  # variance and its large-sample standard error
        centred = x - x.mean(0)
        v = (centred**2).mean(0)
        return v, np.sqrt(np.maximum((centred**4).mean(0) - v**2, 0) / len(x))

    (va, sa), (vb, sb) = var_se(a), var_se(b)
    diff = np.abs(va - vb)
    assert (diff <= Z * np.hypot(sa, sb) + 1e-15).all(), (label, "var", diff)


CASES = (
    [
        (strategy, weight, strata, unequal, form, 2)
        for strategy in ("cluster", "hierarchical", "single_draw")
        for form in (("auto",) if strategy == "cluster" else ("auto", "conditional"))
        for weight in ("input", "run")
        for strata in (False, True)
        for unequal in (False, True)
    ]
    + [
        (strategy, weight, True, unequal, "binary", 2)
        for strategy in ("hierarchical", "single_draw")
        for weight in ("input", "run")
        for unequal in (False, True)
    ]
    + [
        (strategy, "input", True, True, "auto", 3)  # three distinct runs per input
        for strategy in ("cluster", "hierarchical", "single_draw")
    ]
)


@pytest.mark.parametrize("strategy,weight,strata,unequal,form,levels", CASES)
def test_law_matches_index_path(strategy, weight, strata, unequal, form, levels):
    # 2-3 systems jointly: per-system values, paired differences and raw sums
    n_sys = 3 if strategy == "cluster" or unequal else 2
    seed = CASES.index((strategy, weight, strata, unequal, form, levels))
    df = tidy(n=90, k=4, n_systems=n_sys, unequal=unequal, seed=seed, levels=levels)
    p, root = make_pass(df, strategy, weight, strata)
    unit = p.units[0][0]
    b = 3_000
    idx = tiles.replicate_sums(unit, root, strategy, b)
    pat, plan = draw(unit, strategy, form, np.random.SeedSequence(7), b, df, p, weight)
    if strategy == "cluster":
        assert plan.form == "cluster"
    elif form == "conditional" or (levels == 3 and strategy == "hierarchical"):
        assert plan.form == "conditional"
    else:
        assert plan.form == "mixture"
    vi, vp = metrics._ratio(idx), metrics._ratio(pat)  # (B, G)
    di, dp = np.diff(vi, axis=1), np.diff(vp, axis=1)  # paired differences
    label = (strategy, weight, strata, unequal, form, levels)
    _moments_close(
        np.column_stack([vi, di, idx.reshape(b, -1)]),
        np.column_stack([vp, dp, pat.reshape(b, -1)]),
        label,
    )
    # the estimand: the index path's estimate is the centre of both
    est = metrics._ratio(unit.T.sum(0))
    assert np.abs(vp.mean(0) - est).max() < Z * vp.std(0).max() / np.sqrt(b) + 0.01


@pytest.mark.parametrize("strategy", ["hierarchical", "single_draw"])
@pytest.mark.parametrize("weight", ["input", "run"])
@pytest.mark.parametrize("unequal", [False, True])
def test_binary_run_patterns_equal_row_patterns(strategy, weight, unequal):
    df = tidy(n=70, k=4, n_systems=2, unequal=unequal, seed=12)
    p, root = make_pass(df, strategy, weight)
    unit, c, k, low, high, scale = binary_inputs(p, df, strategy, weight)
    got = patterns.binary_run_patterns(
        unit.T, c, k, low, high, unit.strata_bounds, scale
    )
    ref = patterns.run_level_patterns(unit)
    # the same partition of the inputs (patterns ordered by (c, k) here)
    pairs = np.unique(np.column_stack([got.inverse, ref.inverse]), axis=0)
    assert len(pairs) == got.n_patterns == ref.n_patterns
    to_ref = dict(pairs.tolist())
    np.testing.assert_array_equal(got.stats[got.inverse], unit.T)
    for q in range(got.n_patterns):
        r = to_ref[q]
        assert got.multiplicity[q] == ref.multiplicity[r]
        for j in range(2):
            a = np.repeat(got.values[q, j], got.value_counts[q, j], axis=0)
            b = np.repeat(ref.values[r, j], ref.value_counts[r, j], axis=0)
            np.testing.assert_allclose(a, b, rtol=1e-15, atol=0)
    if not unequal:  # T = (c, k), no reweighting: same order, same replicates
        np.testing.assert_array_equal(
            patterns.replicate_sums(got, root, 0, strategy, 300),
            patterns.replicate_sums(ref, root, 0, strategy, 300),
        )


def test_mixture_and_conditional_forms_agree():
    # the two exact run-level forms, against each other, with more power
    df = tidy(n=150, k=5, n_systems=2, unequal=True, seed=21)
    for strategy in ("hierarchical", "single_draw"):
        p, _ = make_pass(df, strategy, "input")
        unit = p.units[0][0]
        mix, plan_m = draw(unit, strategy, "auto", np.random.SeedSequence(1), 8000)
        con, plan_c = draw(
            unit, strategy, "conditional", np.random.SeedSequence(2), 8000
        )
        assert (plan_m.form, plan_c.form) == ("mixture", "conditional")
        vm, vc = metrics._ratio(mix), metrics._ratio(con)
        assert stats.ks_2samp(vm[:, 1] - vm[:, 0], vc[:, 1] - vc[:, 0]).pvalue > P_MIN
        _moments_close(vm, vc, strategy)


def test_law_ks_two_sample():
    # A larger single-system case: the whole distribution, not just 2 moments.
    df = tidy(n=200, k=5, n_systems=1, unequal=True, seed=9)
    for strategy in ("cluster", "hierarchical", "single_draw"):
        p, root = make_pass(df, strategy, "input", strata=True, by=None)
        unit = p.units[0][0]
        idx = metrics._ratio(tiles.replicate_sums(unit, root, strategy, 5000))
        pat = metrics._ratio(
            patterns.replicate_sums(
                unit_patterns(unit, strategy),
                np.random.SeedSequence(3),
                0,
                strategy,
                5000,
            )
        )
        assert stats.ks_2samp(idx[:, 0], pat[:, 0]).pvalue > P_MIN, strategy


# ---- against an obviously-correct slow loop, from the raw runs
RAW_RUNS = [[1], [0, 1], [1, 1, 0], [0, 0, 0], [1, 0, 1, 1], [1, 1], [0, 1, 0]]
RAW_STRATA = [0, 0, 0, 1, 1, 1, 1]


def slow_loop(strategy, weight, strata, n_rep, seed):
    """Draw N indices (within strata) with numpy, then the runs, and sum."""
    gen = np.random.default_rng(seed)
    groups = (
        [np.flatnonzero(np.array(RAW_STRATA) == h) for h in (0, 1)]
        if strata
        else [np.arange(len(RAW_RUNS))]
    )
    out = np.empty(n_rep)
    for b in range(n_rep):
        drawn = np.concatenate([gen.choice(g, size=len(g)) for g in groups])
        num = den = 0.0
        for i in drawn:
            x = np.array(RAW_RUNS[i], dtype=float)
            k = len(x)
            if strategy == "hierarchical":
                x = gen.choice(x, size=k)
            elif strategy == "single_draw":
                x = gen.choice(x, size=1)
            if weight == "input":  # each input counts once: its mean
                num, den = num + x.mean(), den + 1
            elif strategy == "single_draw":  # weight="run": one run stands for k
                num, den = num + k * x.sum(), den + k
            else:
                num, den = num + x.sum(), den + len(x)
        out[b] = num / den
    return out


def _chi2_same(a, b):
    """Two-sample chi-square on the values (rare ones pooled): p-value."""
    a, b = np.round(a, 9), np.round(b, 9)
    vals = np.union1d(a, b)
    ta = np.array([(a == v).sum() for v in vals])
    tb = np.array([(b == v).sum() for v in vals])
    rare = (ta + tb) < 20
    table = np.array(
        [np.append(ta[~rare], ta[rare].sum()), np.append(tb[~rare], tb[rare].sum())]
    )
    table = table[:, table.sum(0) > 0]
    return stats.chi2_contingency(table)[1]


@pytest.mark.parametrize(
    "strategy,weight,strata",
    [
        ("cluster", "input", False),
        ("hierarchical", "input", True),
        ("single_draw", "input", False),
        ("hierarchical", "run", False),
        ("single_draw", "run", True),
    ],
)
@pytest.mark.filterwarnings("ignore::evalci.FewClustersWarning")  # a tiny case
def test_law_matches_slow_loop(strategy, weight, strata):
    rows = [
        (i, r, x, RAW_STRATA[i])
        for i, runs in enumerate(RAW_RUNS)
        for r, x in enumerate(runs)
    ]
    df = pd.DataFrame(rows, columns=["input_id", "run", "correct", "subject"])
    p, root = make_pass(df, strategy, weight, strata, by=None)
    unit = p.units[0][0]
    b = 6_000
    ours = metrics._ratio(
        patterns.replicate_sums(unit_patterns(unit, strategy), root, 0, strategy, b)
    )[:, 0]
    ref = slow_loop(strategy, weight, strata, b, seed=5)
    assert _chi2_same(ours, ref) > P_MIN


# ------------------------------------------------------ (c) jackknife / BCa
@pytest.mark.parametrize("strategy", ["cluster", "hierarchical"])
@pytest.mark.parametrize("strata", [False, True])
def test_jackknife_and_acceleration_equal_index_path(strategy, strata):
    df = tidy(n=150, k=3, n_systems=3, unequal=strategy == "cluster", seed=4)
    p, _ = make_pass(df, strategy, "input", strata)
    unit = p.units[0][0]
    pat = unit_patterns(unit, strategy)
    metric = p.args.metric
    # the index kernel's O(N) jackknife from sufficient statistics
    jack_full = metric.finalize(unit.T.sum(axis=0)[None] - unit.T)
    jack_p = patterns.pattern_jackknife(pat, metric.finalize, unit.T.sum(axis=0))
    np.testing.assert_array_equal(patterns.expand_jackknife(jack_p, pat), jack_full)
    # default total (multiplicity-weighted): equal up to rounding
    np.testing.assert_allclose(
        patterns.pattern_jackknife(pat, metric.finalize), jack_p, rtol=0, atol=1e-13
    )
    ref = intervals.acceleration(jack_full.T, unit.strata_bounds)
    got = patterns.pattern_acceleration(jack_p.T, pat)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    assert np.abs(ref).max() > 1e-4  # a real skewness, not 0 == 0
    # paired differences, as compare.py forms them
    ref_d = intervals.acceleration(
        (jack_full[:, 1] - jack_full[:, 0]), unit.strata_bounds
    )
    got_d = patterns.pattern_acceleration(jack_p[:, 1] - jack_p[:, 0], pat)
    np.testing.assert_allclose(got_d, ref_d, rtol=1e-12, atol=1e-12)


def test_acceleration_homogeneous_stratum_and_singleton():
    # stratum 0 all equal (contributes nothing), stratum 1 a single input
    jack_full = np.array([0.5, 0.5, 0.5, 0.1, 0.3, 0.3, 0.9, 0.2])
    bounds = np.array([0, 3, 4, 8])
    T = np.stack([jack_full, np.ones(8)], axis=1)[:, None, :]
    pat = patterns.find_patterns(T, bounds)
    jack_p = pat.stats[:, 0, 0]
    ref = intervals.acceleration(jack_full, bounds)
    assert patterns.pattern_acceleration(jack_p, pat) == pytest.approx(ref, abs=1e-12)
    one = patterns.find_patterns(np.ones((5, 1, 2)), np.array([0, 5]))
    assert patterns.pattern_acceleration(np.array([0.3]), one) == 0.0


# ------------------------------------------------------ (d) reproducibility
@pytest.mark.parametrize(
    "strategy,form",
    [
        ("cluster", None),
        ("hierarchical", None),
        ("single_draw", None),
        ("hierarchical", "conditional"),
        ("single_draw", "conditional"),
    ],
)
def test_blocks_and_input_order_do_not_change_replicates(strategy, form):
    df = tidy(n=60, k=3, n_systems=2, unequal=True, seed=8)
    p, root = make_pass(df, strategy, "input", strata=True)
    unit = p.units[0][0]
    pat = unit_patterns(unit, strategy)

    def block(pat, first, n, index=0):
        plan = patterns.draw_plan(pat, strategy, form)
        return patterns.pattern_replicate_sums(
            pat, root, index, strategy, first, n, plan=plan
        )

    whole = block(pat, 0, 10)
    split = np.concatenate(
        [block(pat, lo, hi - lo) for lo, hi in ((0, 3), (3, 4), (4, 10))]
    )
    np.testing.assert_array_equal(split, whole)
    if form is None:
        np.testing.assert_array_equal(
            patterns.replicate_sums(pat, root, 0, strategy, 600), whole[:600]
        )
    # the stream keying is by unit index: another unit draws other numbers
    assert not np.array_equal(block(pat, 0, 1, index=1), whole[:64])
    # shuffled inputs: canonical patterns, hence bit-identical replicates
    shuffled, _ = permute_unit(unit, 11)
    np.testing.assert_array_equal(
        block(unit_patterns(shuffled, strategy), 0, 10), whole
    )


def test_equal_k_sums_stay_integers():
    # scale-invariant metric, equal k: T holds (c, k) and sums are exact integers
    p, root = make_pass(tidy(n=50, k=5, n_systems=1), "cluster", strata=False, by=None)
    unit = p.units[0][0]
    pat = patterns.find_patterns(unit.T, unit.strata_bounds)
    assert pat.n_patterns <= 6
    sums = patterns.replicate_sums(pat, root, 0, "cluster", 500)
    np.testing.assert_array_equal(sums, np.round(sums))
    np.testing.assert_array_equal(sums[:, 0, 1], 250.0)


def test_binary_run_patterns_checks_its_inputs():
    gen = np.random.default_rng(2)
    c = gen.integers(0, 4, (50, 1))
    k = np.full((50, 1), 3)
    low, high = np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])
    # a T that is not a function of (c, k): patterns split on T as well
    T = np.stack([c + gen.integers(0, 2, c.shape) * 0.5, k * 1.0], axis=2)
    pat = patterns.binary_run_patterns(T, c, k, low, high, np.array([0, 50]))
    np.testing.assert_array_equal(pat.stats[pat.inverse], T)
    np.testing.assert_array_equal(pat.value_counts[pat.inverse][:, 0, 1], c[:, 0])
    with pytest.raises(ValueError, match="successes <= runs"):
        patterns.binary_run_patterns(T, c + 5, k, low, high, np.array([0, 50]))
