"""Analytic intervals and McNemar: reference values, cross-checks, rule of three, errors."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

import evalci
from evalci import simulate
from evalci.methods.analytic import (
    AnalyticResult,
    McNemarResult,
    analytic_ci,
    mcnemar,
)
from evalci.methods.analytic import closed_form as closed_form

from conftest import clustered, shared_data

SM_METHOD = {
    "wilson": "wilson",
    "clopper-pearson": "beta",
    "jeffreys": "jeffreys",
    "wald": "normal",
}


def binary_frame(x, n, **extra):
    """k=1 table with x ones out of n (one row per input)."""
    return pd.DataFrame(
        {"input_id": np.arange(n), "correct": [1] * x + [0] * (n - x), **extra}
    )


def paired_frame(n01, n10, n11, n00):
    """Two systems A, B on the same inputs with the given discordant counts."""
    a = np.r_[np.zeros(n01), np.ones(n10), np.ones(n11), np.zeros(n00)]
    b = np.r_[np.ones(n01), np.zeros(n10), np.ones(n11), np.zeros(n00)]
    n = len(a)
    return pd.DataFrame(
        {
            "input_id": np.tile(np.arange(n), 2),
            "system": np.repeat(["A", "B"], n),
            "correct": np.r_[a, b].astype(int),
        }
    )


def kappa_frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 3, n)
    pred = np.where(rng.random(n) < 0.6, label, rng.integers(0, 3, n))
    return pd.DataFrame(
        {
            "input_id": np.arange(n),
            "label": label,
            "pred": pred,
            "subject": np.arange(n) % 2,
        }
    )


def sm_kappa(label, pred):
    """statsmodels' kappa and FCE SE from a crosstab (independent code)."""
    table = pd.crosstab(label, pred, dropna=False).to_numpy()
    res = cohens_kappa(table)
    return res.kappa, res.std_kappa


# ------------------------------------------------------- seed 004 references
def test_wilson_seed004_160_of_200():
    # Seed 004: "The Wilson score interval ... for 160/200 gives [73.9%, 85.0%]".
    r = analytic_ci(binary_frame(160, 200), "correct", method="wilson")
    assert r.estimate == pytest.approx(0.8)
    assert round(r.low, 3) == 0.739
    assert round(r.high, 3) == 0.850
    # and seed 004's SE: sqrt(0.8 * 0.2 / 200) = 0.028
    assert r.standard_error == pytest.approx(np.sqrt(0.8 * 0.2 / 200))
    assert r.n_inputs == r.n_runs == 200 and not r.rule_of_three


def test_wald_seed004_plus_minus_5_5_points():
    # Seed 004: 160/200 -> "80% +/- 5.5 points" with p +/- 1.96 SE.
    r = analytic_ci(binary_frame(160, 200), "correct", method="wald")
    assert (r.high - r.low) / 2 == pytest.approx(0.0554, abs=5e-4)


def test_mcnemar_seed004_30_vs_15():
    # Seed 004: "B alone is right on 30, A alone on 15. chi2 = (15 - 1)^2 / 45
    # = 4.36, p = 0.037" (500 items).
    df = paired_frame(30, 15, 300, 155)
    r = mcnemar(df, "correct", "input_id", "system", "A", "B")
    assert (r.n01, r.n10, r.n_inputs, r.method) == (30, 15, 500, "chi-squared")
    assert r.statistic == pytest.approx(14**2 / 45)  # 4.356
    assert round(r.statistic, 2) == 4.36
    assert round(r.pvalue, 3) == 0.037
    assert r.difference == pytest.approx(15 / 500)


# ----------------------------------------------- statsmodels / scipy agreement
@pytest.mark.parametrize("method", ["wilson", "clopper-pearson", "jeffreys", "wald"])
@pytest.mark.parametrize(
    "x, n", [(1, 10), (7, 20), (160, 200), (199, 200), (3893, 12032)]
)
@pytest.mark.parametrize("level", [0.95, 0.8])
def test_proportions_agree_with_statsmodels(method, x, n, level):
    r = analytic_ci(
        binary_frame(x, n), "correct", method=method, confidence_level=level
    )
    low, high = proportion_confint(x, n, alpha=1 - level, method=SM_METHOD[method])
    assert r.estimate == pytest.approx(x / n)
    assert r.low == pytest.approx(low, rel=1e-9, abs=1e-12)
    assert r.high == pytest.approx(high, rel=1e-9, abs=1e-12)


def test_exact_and_fce_aliases():
    df = binary_frame(13, 40)
    assert analytic_ci(df, "correct", method="exact") == analytic_ci(
        df, "correct", method="clopper-pearson"
    )
    assert analytic_ci(df, "correct", method="exact").method == "clopper-pearson"
    kf = kappa_frame()
    assert analytic_ci(kf, "pred", method="fce", truth="label").method == (
        "fleiss-cohen-everitt"
    )


@pytest.mark.parametrize("x, n", [(7, 25), (0, 25), (25, 25), (1, 3)])
def test_clopper_pearson_is_scipy_exact(x, n):
    # scipy finds the endpoints by root-finding on the binomial cdf; we use
    # Beta quantiles: the same numbers to rounding.
    ci = stats.binomtest(x, n).proportion_ci(0.9, method="exact")
    r = analytic_ci(
        binary_frame(x, n), "correct", method="clopper-pearson", confidence_level=0.9
    )
    assert (r.low, r.high) == pytest.approx((ci.low, ci.high), rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("x, n", [(2, 9), (0, 40), (40, 40), (3, 3)])
def test_wilson_is_scipy_wilson(x, n):
    ci = stats.binomtest(x, n).proportion_ci(0.95, method="wilson")
    r = analytic_ci(binary_frame(x, n), "correct", method="wilson")
    assert (r.low, r.high) == pytest.approx((ci.low, ci.high), rel=1e-12, abs=1e-15)


def test_jeffreys_endpoint_conventions():
    # Brown, Cai & DasGupta (2001, 4.1.2): lower end 0 at x = 0, upper end 1
    # at x = n; the other end is the Beta(x + 1/2, n - x + 1/2) quantile.
    low, high = closed_form._jeffreys([0, 20, 5], [20, 20, 20], 0.95)
    assert low[0] == 0.0 and high[1] == 1.0
    assert high[0] == pytest.approx(stats.beta.ppf(0.975, 0.5, 20.5))
    assert low[1] == pytest.approx(stats.beta.ppf(0.025, 20.5, 0.5))
    assert low[2] == pytest.approx(stats.beta.ppf(0.025, 5.5, 15.5))


def test_wald_is_clipped_to_unit_interval():
    # p = 1/10: 0.1 - 1.96 * 0.095 < 0; statsmodels clips too.
    r = analytic_ci(binary_frame(1, 10), "correct", method="wald")
    assert r.low == 0.0


# ------------------------------------------------------------------- CLT
def test_clt_equal_k_against_numpy(gpqa):
    # Seed 000's normal approximation: mean of per-input means +/- z s/sqrt(N).
    r = analytic_ci(gpqa, "correct", cluster="input_id", by="system")
    for system, rows in gpqa.groupby("system"):
        m = rows.groupby("input_id").correct.mean().to_numpy()
        se = m.std(ddof=1) / np.sqrt(len(m))
        z = stats.norm.ppf(0.975)
        assert r.estimate[system] == pytest.approx(m.mean(), rel=1e-12)
        assert r.standard_error[system] == pytest.approx(se, rel=1e-12)
        assert r.low[system] == pytest.approx(m.mean() - z * se, rel=1e-12)
        assert r.high[system] == pytest.approx(m.mean() + z * se, rel=1e-12)
        assert r.n_inputs[system] == 198 and r.n_runs[system] == 990
    # constant k: pooling runs gives the same estimate and SE (N/(N-1) factor)
    run = analytic_ci(gpqa, "correct", cluster="input_id", by="system", weight="run")
    pd.testing.assert_series_equal(run.estimate, r.estimate, rtol=1e-12)
    pd.testing.assert_series_equal(run.standard_error, r.standard_error, rtol=1e-12)


def test_clt_close_to_cluster_bootstrap_se(gpqa):
    # The cluster bootstrap SE estimates s * sqrt((N-1)/N) / sqrt(N) (plug-in
    # variance); its Monte Carlo relative SD is about 1/sqrt(2B) = 0.5% at
    # B = 20,000. We allow 2% (4 SD) around the plug-in-corrected value.
    r = analytic_ci(gpqa, "correct", cluster="input_id", by="system")
    boot = evalci.cluster_ci(
        gpqa, "correct", cluster="input_id", by="system", n_resamples=20_000, rng=7
    )
    plug_in = r.standard_error * np.sqrt(197 / 198)
    np.testing.assert_allclose(boot.standard_error, plug_in, rtol=0.02)
    np.testing.assert_allclose(boot.estimate, r.estimate, rtol=1e-12)


def test_clt_k1_without_cluster():
    # cluster=None: each row is an input; SE = s / sqrt(N) with ddof=1.
    y = np.random.default_rng(3).normal(0.5, 0.2, 80)
    r = analytic_ci(pd.DataFrame({"score": y}), "score")
    assert r.estimate == pytest.approx(y.mean())
    assert r.standard_error == pytest.approx(y.std(ddof=1) / np.sqrt(80))
    assert r.n_inputs == r.n_runs == 80


def test_clt_unequal_k_weight_input():
    df = clustered(n=50, k=3, unequal=True, seed=4)
    r = analytic_ci(df, "correct", cluster="input_id", by="system")
    for system, rows in df.groupby("system"):
        m = rows.groupby("input_id").correct.mean().to_numpy()
        assert r.estimate[system] == pytest.approx(m.mean())
        assert r.standard_error[system] == pytest.approx(
            m.std(ddof=1) / np.sqrt(len(m))
        )


def test_clt_unequal_k_weight_run_ratio_estimator():
    # Miller (2024) clustered SE for the pooled mean, written out as a loop:
    # est = sum y / sum k; SE^2 = N/(N-1) sum_i (sum_j y_ij - est k_i)^2 / K^2.
    df = clustered(n=50, k=3, unequal=True, seed=5)
    r = analytic_ci(df, "correct", cluster="input_id", by="system", weight="run")
    for system, rows in df.groupby("system"):
        sums = rows.groupby("input_id").correct.sum().to_numpy()
        ks = rows.groupby("input_id").size().to_numpy()
        assert len(set(ks)) > 1  # really unequal
        est = rows.correct.sum() / len(rows)
        n = len(ks)
        resid2 = sum((s - est * k) ** 2 for s, k in zip(sums, ks, strict=True))
        se = np.sqrt(n / (n - 1) * resid2) / ks.sum()
        assert r.estimate[system] == pytest.approx(est)
        assert r.standard_error[system] == pytest.approx(se)
        assert r.n_runs[system] == len(rows)
    assert r.weight == "run"


def test_clt_ratio_se_matches_statsmodels_cluster_ols():
    # Independent check: OLS of y on a constant estimates the pooled mean, and
    # statsmodels' cluster-robust (CR1) variance for it carries the factor
    # G/(G-1) * (R-1)/(R-p); with p = 1 parameter that is our N/(N-1).
    import statsmodels.api as sm

    df = clustered(n=40, k=4, unequal=True, seed=6)
    one = df[df.system == "sys0"]
    fit = sm.OLS(one.correct.to_numpy(float), np.ones((len(one), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(one.input_id)[0]}
    )
    r = analytic_ci(one, "correct", cluster="input_id", weight="run")
    assert r.estimate == pytest.approx(fit.params[0])
    assert r.standard_error == pytest.approx(fit.bse[0], rel=1e-10)


def test_row_order_and_cluster_labels_do_not_matter():
    df = clustered(n=30, k=3, unequal=True, seed=8)
    shuffled = df.sample(frac=1, random_state=1)
    shuffled = shuffled.assign(input_id="x" + shuffled.input_id)
    for weight in ("input", "run"):
        a = analytic_ci(df, "correct", cluster="input_id", by="system", weight=weight)
        b = analytic_ci(
            shuffled, "correct", cluster="input_id", by="system", weight=weight
        )
        pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_level_changes_width_only():
    df = clustered(n=60, k=2, seed=9)
    r95 = analytic_ci(df, "correct", cluster="input_id", by="system")
    r80 = analytic_ci(
        df, "correct", cluster="input_id", by="system", confidence_level=0.8
    )
    ratio = (r80.high - r80.low) / (r95.high - r95.low)
    np.testing.assert_allclose(ratio, stats.norm.ppf(0.9) / stats.norm.ppf(0.975))


# ------------------------------------------- 0/N and N/N: two-sided vs one-sided
def _all_x_intervals(n, method, level=0.95):
    """analytic_ci for every x = 0..n at once: group x has x ones out of n."""
    x = np.repeat(np.arange(n + 1), n)
    y = (np.tile(np.arange(n), n + 1) < x).astype(int)
    r = analytic_ci(
        pd.DataFrame({"x": x, "correct": y}),
        "correct",
        method=method,
        by="x",
        confidence_level=level,
    )
    return r.low.to_numpy(), r.high.to_numpy()


def exact_coverage(n, low, high, p):
    """P(low(X) <= p <= high(X)) for X ~ Binomial(n, p): sum of the pmf over covering x.

    Endpoints increase with x, so the x covering p form a run [x_lo, x_hi].
    """
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0)
    x_lo = np.searchsorted(high, p, side="left")  # first x with high(x) >= p
    x_hi = np.searchsorted(low, p, side="right") - 1  # last x with low(x) <= p
    return stats.binom.cdf(x_hi, n, p) - stats.binom.cdf(x_lo - 1, n, p)


def p_grid(low, high):
    """20,001 equispaced p plus each side of every endpoint (where coverage jumps)."""
    ends = np.r_[low, high]
    p = np.r_[np.linspace(0, 1, 20_001), ends - 1e-10, ends + 1e-10]
    return np.unique(np.clip(p, 1e-12, 1 - 1e-12))


def test_exact_coverage_helper_against_brute_force():
    # the searchsorted shortcut equals the literal sum over x of pmf * [covers]
    n = 15
    low, high = _all_x_intervals(n, "clopper-pearson")
    p = np.linspace(0.001, 0.999, 301)
    covers = (low[:, None] <= p) & (p <= high[:, None])
    brute = (stats.binom.pmf(np.arange(n + 1)[:, None], n, p) * covers).sum(axis=0)
    np.testing.assert_allclose(exact_coverage(n, low, high, p), brute, atol=1e-12)


@pytest.mark.parametrize("n", [20, 100, 1000])
def test_clopper_pearson_exact_coverage_never_below_nominal(n):
    # Clopper & Pearson (1934): each tail has probability <= alpha/2 for every
    # p, so the exact coverage is >= 95% everywhere, including next to the
    # 0/n and n/n endpoints. Evalci used to return the one-sided rule of three
    # there, which gave 93.9-94.2% near p = 3/n (checked below).
    low, high = _all_x_intervals(n, "clopper-pearson")
    p = p_grid(low, high)
    cov = exact_coverage(n, low, high, p)
    assert cov.min() >= 0.95 - 1e-12
    # the old construction (rule of three at x = 0 and x = n) fails this test
    old_high, old_low = high.copy(), low.copy()
    old_high[0] = -np.log(0.05) / n
    old_low[-1] = 1 + np.log(0.05) / n
    old = exact_coverage(n, old_low, old_high, p_grid(old_low, old_high))
    assert 0.935 < old.min() < 0.945


@pytest.mark.parametrize("n", [1, 5, 20, 150])
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_clopper_pearson_two_sided_at_the_boundary(n, level):
    # x = 0: the exact two-sided upper end solves (1 - p)^n = alpha/2, i.e.
    # Beta(1, n).ppf(1 - alpha/2) = 1 - (alpha/2)^(1/n) (3.689/n at 95%).
    alpha = 1 - level
    r0 = analytic_ci(
        binary_frame(0, n), "correct", method="exact", confidence_level=level
    )
    r1 = analytic_ci(
        binary_frame(n, n), "correct", method="exact", confidence_level=level
    )
    upper = stats.beta.ppf(1 - alpha / 2, 1, n)
    assert upper == pytest.approx(1 - (alpha / 2) ** (1 / n), rel=1e-12)
    assert (r0.low, r0.high) == pytest.approx((0.0, upper), rel=1e-10)
    assert (r1.low, r1.high) == pytest.approx((1 - upper, 1.0), rel=1e-10)
    for x, r in ((0, r0), (n, r1)):
        ref = proportion_confint(x, n, alpha=alpha, method="beta")
        assert (r.low, r.high) == pytest.approx(ref, rel=1e-10, abs=1e-15)
        assert r.rule_of_three is False and r.one_sided is False


@pytest.mark.parametrize("method", ["wilson", "jeffreys"])
@pytest.mark.parametrize("n", [1, 7, 40, 1000])
def test_score_and_jeffreys_use_their_own_formula_at_the_boundary(method, n):
    # Wilson at x = 0 is [0, z^2 / (n + z^2)] (3.84/n at 95%), statsmodels'
    # values. Jeffreys: the Beta(1/2, n + 1/2) quantile as in statsmodels,
    # with Brown, Cai & DasGupta's (2001, p. 108) low = 0 at x = 0 and high = 1
    # at x = n (statsmodels 0.15 keeps the Beta quantile at the fixed end).
    for x in (0, n):
        r = analytic_ci(binary_frame(x, n), "correct", method=method)
        ref = list(proportion_confint(x, n, alpha=0.05, method=SM_METHOD[method]))
        if method == "jeffreys":
            ref[0 if x == 0 else 1] = float(x == n)
        assert (r.low, r.high) == pytest.approx(ref, rel=1e-10, abs=1e-15)
        assert r.rule_of_three is False
    if method == "wilson":
        z2 = stats.norm.ppf(0.975) ** 2
        high = analytic_ci(binary_frame(0, n), "correct", method=method).high
        assert high == pytest.approx(z2 / (n + z2))


@pytest.mark.parametrize("method", ["clt", "wald"])
@pytest.mark.parametrize("outcome", [0, 1])
def test_collapsing_intervals_use_exact_two_sided_at_the_boundary(method, outcome):
    # clt and Wald have zero width when every outcome is equal; the exact
    # two-sided Clopper-Pearson interval for N inputs replaces them.
    n = 150
    with pytest.warns(
        evalci.DegenerateDataWarning,
        match=f"every outcome is {outcome}.*exact two-sided 95% Clopper-Pearson",
    ):
        r = analytic_ci(binary_frame(n * outcome, n), "correct", method=method)
    ref = proportion_confint(n * outcome, n, alpha=0.05, method="beta")
    assert (r.low, r.high) == pytest.approx(ref, rel=1e-10, abs=1e-15)
    assert r.estimate == outcome and r.standard_error == 0.0
    assert r.rule_of_three is False


def test_clt_boundary_k_gt_1_counts_inputs_and_flags_groups():
    # 40 inputs x 3 runs, all correct in sys1: N = 40 inputs (not 120 runs)
    df = clustered(n=40, k=3, seed=10)
    df.loc[df.system == "sys1", "correct"] = 1
    with pytest.warns(evalci.DegenerateDataWarning, match=r"1 group\(s\), e.g. 'sys1'"):
        r = analytic_ci(df, "correct", cluster="input_id", by="system")
    assert r.low["sys1"] == pytest.approx(0.025 ** (1 / 40))
    assert r.high["sys1"] == 1.0
    assert r.rule_of_three.tolist() == [False, False]


@pytest.mark.parametrize("outcome", [0, 1])
@pytest.mark.parametrize("n", [2, 40, 150])
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_rule_of_three_is_a_one_sided_bound(outcome, n, level):
    # Hanley & Lippman-Hand (1983): 0 events in N -> one-sided 95% upper bound
    # -ln(0.05)/N = 2.996/N ("3/N"); capped at 1 (N = 2).
    alpha = 1 - level
    r = analytic_ci(
        binary_frame(n * outcome, n),
        "correct",
        method="rule-of-three",
        confidence_level=level,
    )
    b = min(-np.log(alpha) / n, 1.0)
    expected = (0.0, b) if outcome == 0 else (1 - b, 1.0)
    assert (r.low, r.high) == pytest.approx(expected)
    assert r.one_sided is True and r.rule_of_three is True
    assert r.method == "rule-of-three" and r.estimate == outcome
    # one-sided validity: at p = b (the bound), 0 events in N has
    # probability (1 - b)^N <= alpha; the exact one-sided bound 1 - alpha^(1/N)
    # is never larger (the rule is conservative)
    assert (1 - b) ** n <= alpha + 1e-15
    assert 1 - alpha ** (1 / n) <= b + 1e-15
    assert "one_sided=True" in repr(r)


def test_rule_of_three_label_k_gt_1_and_errors():
    df = clustered(n=40, k=3, seed=10)
    df["correct"] = 1
    r = analytic_ci(
        df, "correct", cluster="input_id", by="system", method="rule-of-three"
    )
    assert repr(r).splitlines()[0] == (
        "AnalyticResult: 95% one-sided rule-of-three bound"
    )
    np.testing.assert_allclose(r.low, 1 + np.log(0.05) / 40)  # N inputs, not runs
    assert r.to_frame().rule_of_three.tolist() == [True, True]
    with pytest.raises(
        ValueError,
        match=r"method='rule-of-three' is a one-sided bound .* outcomes vary in "
        r"group 'sys0'; .*method='clopper-pearson'",
    ):
        analytic_ci(
            clustered(n=40, k=1, seed=3), "correct", by="system", method="rule-of-three"
        )
    with pytest.raises(
        ValueError, match=r"must hold only 0/1 for method='rule-of-three'"
    ):
        analytic_ci(pd.DataFrame({"s": [0.5] * 10}), "s", method="rule-of-three")


def test_constant_non_binary_scores_do_not_use_rule_of_three():
    df = pd.DataFrame({"input_id": np.repeat(np.arange(10), 2), "score": 0.5})
    with pytest.warns(evalci.DegenerateDataWarning, match="standard error is zero"):
        r = analytic_ci(df, "score", cluster="input_id")
    assert not r.rule_of_three and r.low == r.high == 0.5


def test_identical_input_means_warn():
    # every input 1 of 2 right: s = 0 although outcomes vary
    df = pd.DataFrame({"input_id": np.repeat(np.arange(10), 2), "correct": [0, 1] * 10})
    with pytest.warns(evalci.DegenerateDataWarning, match="standard error is zero"):
        r = analytic_ci(df, "correct", cluster="input_id")
    assert r.standard_error == 0.0 and not r.rule_of_three


# ---------------------------------------------------------------- kappa
def test_kappa_fce_matches_statsmodels():
    kf = kappa_frame(n=300, seed=1)
    r = analytic_ci(kf, "pred", method="fleiss-cohen-everitt", truth="label")
    kappa, se = sm_kappa(kf.label, kf.pred)
    assert r.estimate == pytest.approx(kappa, rel=1e-12)
    assert r.standard_error == pytest.approx(se, rel=1e-12)
    z = stats.norm.ppf(0.975)
    assert (r.low, r.high) == pytest.approx((kappa - z * se, kappa + z * se))
    assert not r.rule_of_three


def test_kappa_fce_by_group_and_missing_labels():
    # groups where a label never occurs still match statsmodels on their own table
    kf = kappa_frame(n=400, seed=2)
    kf.loc[(kf.subject == 1) & (kf.label == 2), "label"] = 0
    kf.loc[(kf.subject == 1) & (kf.pred == 2), "pred"] = 1
    r = analytic_ci(kf, "pred", method="fce", truth="label", by="subject")
    for s, rows in kf.groupby("subject"):
        kappa, se = sm_kappa(rows.label, rows.pred)
        assert r.estimate[s] == pytest.approx(kappa, rel=1e-12)
        assert r.standard_error[s] == pytest.approx(se, rel=1e-12)


def test_kappa_fce_string_labels_and_transpose_symmetry():
    kf = kappa_frame(n=200, seed=3)
    names = np.array(["cat", "dog", "eel"])
    kf = kf.assign(label=names[kf.label], pred=names[kf.pred])
    r = analytic_ci(kf, "pred", method="fce", truth="label")
    swapped = analytic_ci(kf, "label", method="fce", truth="pred")
    assert r.estimate == pytest.approx(swapped.estimate)
    assert r.standard_error == pytest.approx(swapped.standard_error)


def test_kappa_fce_simulation_seed000():
    # docs/paper-notes.md: at N=200, k=1 on seed 000's confusion model the FCE SE
    # averages 0.0434 against an empirical SD of kappa of 0.0433. Over 4,000
    # seeded trials the mean SE has Monte Carlo SD about 2e-5 and the SD of
    # kappa about 5e-4 (0.0434 / sqrt(2 * 4000)); we allow 3e-4 and 2e-3.
    trials = 4000
    labels, preds = simulate.confusion_model_arrays(trials, 200, 1, rng=2024)
    df = pd.DataFrame(
        {
            "trial": np.repeat(np.arange(trials), 200),
            "label": labels.ravel(),
            "pred": preds[..., 0].ravel(),
        }
    )
    r = analytic_ci(df, "pred", method="fce", truth="label", by="trial")
    assert r.standard_error.mean() == pytest.approx(0.0434, abs=3e-4)
    assert r.estimate.std(ddof=1) == pytest.approx(0.0433, abs=2e-3)
    assert r.estimate.mean() == pytest.approx(
        simulate.true_kappa(simulate.SEED000_CONFUSION), abs=2e-3
    )
    # one tidy data set from the same model, against statsmodels
    one = simulate.confusion_model(200, 1, rng=2024)
    r0 = analytic_ci(one, "pred", cluster="input_id", method="fce", truth="label")
    assert (r0.estimate, r0.standard_error) == pytest.approx(
        sm_kappa(one.label, one.pred)
    )


def test_kappa_exposed_kernel_hand_table():
    # 2x2 table [[40, 10], [5, 45]] (N = 100): p_o = 0.85, p_e = 0.5*0.45 +
    # 0.5*0.55 = 0.5, kappa = 0.7 (seed 004's worked example, 85% vs 50%).
    kappa, se = closed_form._kappa_fce(np.array([[40, 10], [5, 45]]))
    assert kappa == pytest.approx(0.7)
    _, ref = sm_kappa(
        np.repeat([0, 0, 1, 1], [40, 10, 5, 45]),
        np.repeat([0, 1, 0, 1], [40, 10, 5, 45]),
    )
    assert se == pytest.approx(ref)


def test_kappa_degenerate_cases_warn():
    perfect = pd.DataFrame({"label": [0, 1, 2] * 10, "pred": [0, 1, 2] * 10})
    with pytest.warns(evalci.DegenerateDataWarning, match="standard error is zero"):
        r = analytic_ci(perfect, "pred", method="fce", truth="label")
    assert r.estimate == pytest.approx(1.0) and r.standard_error == 0.0
    single = pd.DataFrame({"label": ["a"] * 10, "pred": ["a"] * 10})
    with pytest.warns(evalci.DegenerateDataWarning, match="kappa is undefined"):
        r = analytic_ci(single, "pred", method="fce", truth="label")
    assert np.isnan(r.estimate) and np.isnan(r.low)


# -------------------------------------------------------------- McNemar
@pytest.mark.parametrize(
    "counts", [(3, 9, 50, 20), (40, 22, 300, 100), (12, 13, 5, 5), (0, 6, 10, 10)]
)
@pytest.mark.parametrize("exact", [True, False])
def test_mcnemar_agrees_with_statsmodels(counts, exact):
    n01, n10, n11, n00 = counts
    df = paired_frame(n01, n10, n11, n00)
    r = mcnemar(df, "correct", "input_id", "system", "A", "B", exact=exact)
    # statsmodels' table: rows = A (0, 1), columns = B (0, 1)
    ref = sm_mcnemar([[n00, n01], [n10, n11]], exact=exact, correction=True)
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.pvalue == pytest.approx(ref.pvalue)
    assert r.method == ("exact" if exact else "chi-squared")
    assert (r.n01, r.n10) == (n01, n10)


def test_mcnemar_exact_binomial_reference():
    r = mcnemar(
        paired_frame(3, 9, 50, 20),
        "correct",
        "input_id",
        "system",
        "A",
        "B",
        exact=True,
    )
    assert r.pvalue == pytest.approx(stats.binomtest(9, 12, 0.5).pvalue)
    assert r.statistic == 3


def test_mcnemar_default_switches_at_25_discordant():
    below = mcnemar(
        paired_frame(10, 14, 30, 30), "correct", "input_id", "system", "A", "B"
    )
    at = mcnemar(
        paired_frame(10, 15, 30, 30), "correct", "input_id", "system", "A", "B"
    )
    assert below.method == "exact" and at.method == "chi-squared"


def test_mcnemar_swapping_systems():
    df = paired_frame(30, 15, 300, 155)
    ab = mcnemar(df, "correct", "input_id", "system", "A", "B")
    ba = mcnemar(df, "correct", "input_id", "system", "B", "A")
    assert (ba.n01, ba.n10) == (ab.n10, ab.n01)
    assert ba.pvalue == pytest.approx(ab.pvalue)
    assert ba.difference == -ab.difference


def test_mcnemar_ignores_other_systems_and_row_order():
    df = paired_frame(30, 15, 300, 155)
    extra = df[df.system == "A"].assign(system="C", correct=1)
    mixed = pd.concat([df, extra]).sample(frac=1, random_state=0)
    assert mcnemar(mixed, "correct", "input_id", "system", "A", "B") == mcnemar(
        df, "correct", "input_id", "system", "A", "B"
    )


def test_mcnemar_no_discordant_warns():
    df = paired_frame(0, 0, 20, 5)
    with pytest.warns(
        evalci.DegenerateDataWarning, match="agree on every one of the 25"
    ):
        r = mcnemar(df, "correct", "input_id", "system", "A", "B")
    assert r.pvalue == 1.0 and r.n01 == r.n10 == 0


# ----------------------------------------------------- real data, k = 1
def test_mmlu_pro_mcnemar_against_statsmodels():
    df = shared_data("mmlu_pro_4sys_k1.csv")
    a, b = "llama-3.1-8b", "llama-3.1-8b-instruct"
    r = mcnemar(df, "correct", "input_id", "system", a, b)
    wide = df.pivot(index="input_id", columns="system", values="correct")
    table = pd.crosstab(wide[a], wide[b]).to_numpy()  # rows a, columns b
    ref = sm_mcnemar(table, exact=False, correction=True)
    assert r.method == "chi-squared" and r.n_inputs == 12_032
    assert (r.n01, r.n10) == (table[0, 1], table[1, 0])
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.pvalue == pytest.approx(ref.pvalue)
    assert r.difference == pytest.approx(wide[b].mean() - wide[a].mean())
    exact = mcnemar(df, "correct", "input_id", "system", a, b, exact=True)
    assert exact.pvalue == pytest.approx(sm_mcnemar(table, exact=True).pvalue)


def test_mmlu_pro_wilson_per_system():
    df = shared_data("mmlu_pro_4sys_k1.csv")
    r = analytic_ci(df, "correct", cluster="input_id", method="wilson", by="system")
    counts = df.groupby("system").correct.agg(["sum", "count"])
    low, high = proportion_confint(counts["sum"], counts["count"], method="wilson")
    np.testing.assert_allclose(r.low.to_numpy(), low.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(r.high.to_numpy(), high.to_numpy(), rtol=1e-10)
    assert (r.n_inputs == 12_032).all()
    # k=1: the cluster-robust CLT interval is Wald with ddof=1, nearly the same
    clt = analytic_ci(df, "correct", cluster="input_id", by="system")
    np.testing.assert_allclose(clt.low, r.low, atol=2e-4)


def test_mmlu_pro_by_two_columns():
    df = shared_data("mmlu_pro_4sys_k1.csv")
    r = analytic_ci(
        df, "correct", cluster="input_id", method="jeffreys", by=["system", "category"]
    )
    frame = r.to_frame()
    assert list(frame.columns[:2]) == ["system", "category"]
    assert len(frame) == 4 * df.category.nunique()
    assert frame.n_inputs.sum() == len(df)


# --------------------------------------------------------------- results
def test_result_is_frozen_and_prints():
    r = analytic_ci(binary_frame(160, 200), "correct", method="wilson")
    assert isinstance(r, AnalyticResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.low = 0.0
    text = repr(r)
    assert text.startswith("AnalyticResult(estimate=0.8, low=0.739")
    assert "method='wilson'" in text and "rule_of_three=False" in text
    assert isinstance(r.n_inputs, int) and isinstance(r.rule_of_three, bool)


def test_grouped_result_table(gpqa):
    r = analytic_ci(gpqa, "correct", cluster="input_id", by="system")
    assert isinstance(r.estimate, pd.Series) and r.estimate.index.name == "system"
    text = repr(r)
    assert text.splitlines()[0] == "AnalyticResult: 95% clt interval, weight=input"
    assert "openai/gpt-5-nano-2025-08-07" in text
    assert "<table" in r._repr_html_()
    frame = r.to_frame()
    assert list(frame.columns) == [
        "system",
        "estimate",
        "low",
        "high",
        "standard_error",
        "n_inputs",
        "n_runs",
        "rule_of_three",
        "confidence_level",
        "method",
        "weight",
    ]


def test_mcnemar_result_frozen():
    r = mcnemar(paired_frame(3, 9, 50, 20), "correct", "input_id", "system", "A", "B")
    assert isinstance(r, McNemarResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.pvalue = 0.0
    assert repr(r).startswith("McNemarResult(statistic=3, pvalue=0.146")


# ---------------------------------------------------------------- errors
@pytest.fixture
def edf():
    return pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(10), 2),
            "run": np.tile([0, 1], 10),
            "correct": [0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1],
            "label": "a",
            "pred": np.tile(["a", "b"], 10),
            "score": np.linspace(0, 1, 20),
            "subject": np.repeat(np.arange(10) % 2, 2),
            "group": np.repeat(["solo"] + ["rest"] * 9, 2),
        }
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            dict(value="corect", cluster="input_id"),
            r"`value`: column 'corect' is not in",
        ),
        (dict(value="correct", cluster="qid"), r"`cluster`: column 'qid' is not in"),
        (
            dict(value="correct", cluster="input_id", by="model"),
            r"`by`: column 'model'",
        ),
        (
            dict(value="correct", cluster="input_id", method="normal"),
            r"`method` must be one of .*aliases: 'exact'",
        ),
        (dict(value="correct", cluster="input_id", weight="item"), r"`weight` must be"),
        (
            dict(value="correct", cluster="input_id", confidence_level=95),
            r"`confidence_level` must be a number in \(0, 1\)",
        ),
        (
            dict(value="correct", cluster="input_id", confidence_level=True),
            r"`confidence_level`",
        ),
        (
            dict(value="correct", cluster="input_id", by="input_id"),
            r"`by` and `cluster` share column 'input_id'",
        ),
        (
            dict(value="correct", cluster="input_id", method="wilson"),
            r"method='wilson' needs one row per input \(k=1\), but input 0 .*has 2 rows.*"
            r"method='clt'.*evalci.cluster_ci",
        ),
        (
            dict(value="correct", cluster="input_id", method="wald", by="subject"),
            r"input 0 .* in group 0 has 2 rows",
        ),
        (
            dict(value="score", method="wilson"),
            r"`value` column 'score' must hold only 0/1 for method='wilson'.*method='clt'",
        ),
        (
            dict(value="pred", cluster="input_id"),
            r"`value` column 'pred' is not numeric.*fleiss-cohen-everitt",
        ),
        (dict(value="pred", method="fce"), r"`truth` is required for method="),
        (dict(value="pred", method="fce", truth="gold"), r"`truth`: column 'gold'"),
        (
            dict(value="correct", method="wilson", truth="label"),
            r"`truth` is only used by method='fleiss-cohen-everitt'",
        ),
        (
            dict(value="pred", cluster="input_id", method="fce", truth="label"),
            r"needs one row per input.*metric=evalci.metrics.kappa",
        ),
        (
            dict(value="correct", cluster="input_id", by="group"),
            r"method='clt' needs at least 2 inputs .* in group 'solo'; found 1",
        ),
    ],
)
def test_analytic_errors(edf, kwargs, match):
    with pytest.raises(ValueError, match=match):
        analytic_ci(edf, **kwargs)


def test_analytic_type_and_missing_errors(edf):
    with pytest.raises(TypeError, match=r"`data` must be a pandas DataFrame"):
        analytic_ci(edf.to_numpy(), "correct")
    with pytest.raises(TypeError, match=r"`value` must be a column name"):
        analytic_ci(edf, ["correct"])
    with pytest.raises(TypeError, match=r"`truth` must be a column name"):
        analytic_ci(edf, "pred", method="fce", truth=["label"])
    with pytest.raises(ValueError, match=r"`data` has no rows"):
        analytic_ci(edf.iloc[:0], "correct")
    bad = edf.assign(correct=edf.correct.astype(float))
    bad.loc[3, "correct"] = np.nan
    with pytest.raises(
        ValueError, match=r"`value` column 'correct' has 1 missing .*dropna"
    ):
        analytic_ci(bad, "correct", cluster="input_id")
    bad = edf.astype({"label": object})
    bad.loc[0, "label"] = None
    with pytest.raises(ValueError, match=r"`truth` column 'label' has 1 missing"):
        analytic_ci(bad.iloc[::2], "pred", method="fce", truth="label")
    bad = edf.astype({"input_id": float})
    bad.loc[0, "input_id"] = np.nan
    with pytest.raises(ValueError, match=r"`cluster` column 'input_id' has 1 missing"):
        analytic_ci(bad, "correct", cluster="input_id")


@pytest.fixture
def pdf():
    return paired_frame(3, 9, 50, 20)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(value="corect"), r"`value`: column 'corect' is not in"),
        (dict(cluster="qid"), r"`cluster`: column 'qid' is not in"),
        (dict(cluster=None), r"`cluster` is required"),
        (dict(system="model"), r"`system`: column 'model' is not in"),
        (
            dict(a="C"),
            r"`a`: 'C' is not a value of the `system` column 'system'; "
            r"values: 'A', 'B'",
        ),
        (dict(b="C"), r"`b`: 'C' is not a value"),
        (dict(b="A"), r"`a` and `b` are the same system"),
        (dict(exact="yes"), r"`exact` must be True .*False .*or None"),
        (dict(cluster=["input_id", "system"]), r"`system` column 'system' is also in"),
    ],
)
def test_mcnemar_argument_errors(pdf, kwargs, match):
    args = dict(value="correct", cluster="input_id", system="system", a="A", b="B")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        mcnemar(pdf, **args)


def test_mcnemar_k_gt_1_points_to_the_paired_cluster_bootstrap(gpqa):
    systems = sorted(gpqa.system.unique())
    with pytest.raises(
        ValueError,
        match=(
            r"assumes one outcome per input and system \(k=1\).*has 5 rows.*"
            r"paired cluster bootstrap: df.evalci.compare\(...\) or "
            r"evalci.cluster_ci\(..., by='system'\)"
        ),
    ):
        mcnemar(gpqa, "correct", "input_id", "system", *systems)


def test_mcnemar_unmatched_inputs_are_listed(pdf):
    drop = pdf.drop(index=pdf.index[(pdf.system == "B") & pdf.input_id.isin(range(7))])
    drop = drop.drop(index=drop.index[(drop.system == "A") & (drop.input_id == 80)])
    with pytest.raises(
        ValueError,
        match=(
            r"same inputs; inputs scored by one system only .*: 7 only for 'A': "
            r"0, 1, 2, 3, 4 \(and 2 more\); 1 only for 'B': 80"
        ),
    ):
        mcnemar(drop, "correct", "input_id", "system", "A", "B")


def test_mcnemar_value_errors(pdf):
    bad = pdf.assign(correct=pdf.correct * 2)
    with pytest.raises(
        ValueError, match=r"must hold only 0/1 for McNemar's test; found 2"
    ):
        mcnemar(bad, "correct", "input_id", "system", "A", "B")
    bad = pdf.assign(correct=pdf.correct.astype(float))
    bad.loc[0, "correct"] = np.nan
    with pytest.raises(ValueError, match=r"`value` column 'correct' has 1 missing"):
        mcnemar(bad, "correct", "input_id", "system", "A", "B")
    with pytest.raises(TypeError, match=r"`data` must be a pandas DataFrame"):
        mcnemar(pdf.to_numpy(), "correct", "input_id", "system", "A", "B")
    with pytest.raises(TypeError, match=r"`value` must be a column name"):
        mcnemar(pdf, 1, "input_id", "system", "A", "B")
    with pytest.raises(TypeError, match=r"`system` must be a column name"):
        mcnemar(pdf, "correct", "input_id", ["system"], "A", "B")


def test_accessors_equal_functions(gpqa):
    a = gpqa.evalci.analytic_ci("correct", "input_id", by="system")
    b = evalci.analytic_ci(gpqa, "correct", "input_id", by="system")
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    mm = gpqa[gpqa.run == 1]
    systems = sorted(mm.system.unique())
    m1 = mm.evalci.mcnemar("correct", "input_id", "system", systems[0], systems[1])
    m2 = evalci.mcnemar(mm, "correct", "input_id", "system", systems[0], systems[1])
    assert (m1.statistic, m1.pvalue) == (m2.statistic, m2.pvalue)


# ------------------------------------------------------- few inputs, inf
def test_few_inputs_warn_for_normal_intervals_and_keep_their_values():
    # CLT on 5 inputs: the textbook mean +/- z s / sqrt(N), with a warning
    y = np.array([0.2, 0.9, 0.4, 0.7, 0.5])
    with pytest.warns(
        evalci.FewClustersWarning,
        match=r"only 5 inputs: the clt interval is a large-sample .* fewer than 10",
    ):
        r = analytic_ci(pd.DataFrame({"score": y}), "score")
    half = stats.norm.ppf(0.975) * y.std(ddof=1) / np.sqrt(5)
    assert (r.low, r.high) == pytest.approx((y.mean() - half, y.mean() + half))
    # kappa on 4 inputs: statsmodels' kappa and FCE SE, with a warning
    kf = pd.DataFrame({"label": [0, 1, 1, 0], "pred": [0, 1, 0, 0]})
    with pytest.warns(
        evalci.FewClustersWarning, match=r"only 4 inputs: the fleiss-cohen-everitt"
    ):
        r = analytic_ci(kf, "pred", method="fce", truth="label")
    assert (r.estimate, r.standard_error) == pytest.approx(sm_kappa(kf.label, kf.pred))
    # Wald on 6 inputs, per group: the group is named
    df = binary_frame(3, 6, g="small")
    df = pd.concat([df, binary_frame(20, 40, g="big")], ignore_index=True)
    with pytest.warns(
        evalci.FewClustersWarning, match=r"only 6 inputs in group 'small'"
    ):
        r = analytic_ci(df, "correct", method="wald", by="g")
    assert r.low["small"] == pytest.approx(
        0.5 - stats.norm.ppf(0.975) * np.sqrt(0.25 / 6)
    )


@pytest.mark.parametrize("method", ["clopper-pearson", "wilson", "jeffreys"])
def test_few_inputs_exact_and_score_intervals_do_not_warn(method):
    # built for small N: no warning (pytest turns any EvalciWarning into an error)
    r = analytic_ci(binary_frame(2, 5), "correct", method=method)
    ref = proportion_confint(2, 5, method=SM_METHOD[method])
    assert (r.low, r.high) == pytest.approx(ref)
    # ten inputs is enough for the normal intervals
    analytic_ci(binary_frame(4, 10), "correct", method="clt")


def test_kappa_nan_on_few_inputs_is_never_silent():
    # one label on both sides: kappa = 0/0. NaN, with both warnings saying why
    single = pd.DataFrame({"label": ["a"] * 4, "pred": ["a"] * 4})
    with pytest.warns(evalci.FewClustersWarning, match=r"only 4 inputs"):
        with pytest.warns(
            evalci.DegenerateDataWarning,
            match=r"Cohen's kappa is undefined: .*chance agreement is 1 .* NaN",
        ):
            r = analytic_ci(single, "pred", method="fce", truth="label")
    assert np.isnan(r.estimate) and np.isnan(r.standard_error) and np.isnan(r.low)


@pytest.mark.parametrize("method", ["clt", "wilson", "rule-of-three"])
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_analytic_ci_refuses_inf(edf, method, bad):
    df = edf.assign(correct=edf.correct.astype(float))
    df.loc[3, "correct"] = bad
    cluster = "input_id" if method == "clt" else None
    with pytest.raises(
        ValueError, match=r"`value` column 'correct' has 1 infinite values.*finite"
    ):
        analytic_ci(df, "correct", cluster, method=method)
    assert np.isinf(df.loc[3, "correct"])  # the user's frame is untouched


def test_analytic_ci_refuses_inf_labels_for_kappa():
    kf = kappa_frame(n=50).astype({"label": float, "pred": float})
    kf.loc[0, "label"] = np.inf
    with pytest.raises(ValueError, match=r"`truth` column 'label' has 1 infinite"):
        analytic_ci(kf, "pred", method="fce", truth="label")
    kf = kappa_frame(n=50).astype({"pred": float})
    kf.loc[1, "pred"] = -np.inf
    with pytest.raises(ValueError, match=r"`value` column 'pred' has 1 infinite"):
        analytic_ci(kf, "pred", method="fce", truth="label")


def test_mcnemar_refuses_inf(pdf):
    df = pdf.assign(correct=pdf.correct.astype(float))
    df.loc[df.index[df.system == "B"][0], "correct"] = np.inf
    with pytest.raises(ValueError, match=r"`value` column 'correct' has 1 infinite"):
        mcnemar(df, "correct", "input_id", "system", "A", "B")
    # rows of other systems are not read
    other = pd.concat([pdf, pdf[pdf.system == "A"].assign(system="C", correct=np.inf)])
    assert mcnemar(other, "correct", "input_id", "system", "A", "B") == mcnemar(
        pdf, "correct", "input_id", "system", "A", "B"
    )


# ============================================== clustered Wilson (Korn-Graubard)
def _sums_frame(sums, k):
    """0/1 table with ``k`` runs per input and ``sums[i]`` of them correct."""
    rows = [
        (i, r, int(r < t)) for i, t in enumerate(np.asarray(sums)) for r in range(k)
    ]
    return pd.DataFrame(rows, columns=["input_id", "run", "correct"])


def _wilson_at(x, n, crit):
    """statsmodels' Wilson interval with the critical value ``crit`` instead of z.

    ``proportion_confint`` takes ``alpha``; the level whose z equals ``crit``
    is ``1 - 2 * norm.sf(crit)``. ``x`` may be fractional (x_eff = p n_eff).
    """
    return proportion_confint(x, n, alpha=2 * stats.norm.sf(crit), method="wilson")


def test_clustered_wilson_is_wilson_when_deff_is_one():
    # N = 21 inputs, k = 2: five inputs 0/2, five 2/2, eleven 1/2 right. Then
    # p = 1/2 and sum_i (T_i - k p)^2 = 10 = (N - 1) k p (1 - p), so the
    # clustered variance N/(N-1) sum (T_i - k p)^2 / (N k)^2 equals the binomial
    # p (1 - p) / (N k): deff = 1 exactly and n_eff = n = 42 rows.
    df = _sums_frame([0] * 5 + [2] * 5 + [1] * 11, k=2)
    r = analytic_ci(df, "correct", "input_id", method="clustered-wilson")
    assert r.estimate == 0.5 and r.n_runs == 42 and r.n_inputs == 21
    assert r.standard_error**2 == pytest.approx(0.25 / 42, rel=1e-14)
    t20 = stats.t.ppf(0.975, 20)
    assert (r.low, r.high) == pytest.approx(_wilson_at(21, 42, t20), rel=1e-12)
    # the t critical value (Inspect AI's convention) makes it a little wider
    # than plain Wilson on the 42 rows
    plain = proportion_confint(21, 42, alpha=0.05, method="wilson")
    assert r.low < plain[0] and r.high > plain[1]
    assert r.method == "clustered-wilson" and r.weight == "input"


def test_clustered_wilson_alias_and_repr():
    df = _sums_frame([0] * 5 + [2] * 5 + [1] * 11, k=2)
    a = analytic_ci(df, "correct", "input_id", method="wilson-clustered")
    b = analytic_ci(df, "correct", "input_id", method="clustered-wilson")
    assert a == b
    g = analytic_ci(
        df.assign(s="x"), "correct", "input_id", by="s", method="clustered-wilson"
    )
    assert "95% clustered-wilson interval, weight=input" in repr(g)


def _inspect_ci_wilson(clusters, level=0.95):
    """Inspect AI's ``ci_wilson(cluster=...)``, transcribed line by line.

    Source: inspect_ai 0.3.285 (pip download inspect-ai), file
    ``inspect_ai/scorer/_metrics/std.py``, functions ``ci_wilson`` (its inner
    ``metric_fn``) and ``_clustered_stderr``. ``_t_inv_cdf`` is their
    dependency-free Student-t quantile; scipy's is used here.
    """
    values = np.concatenate([np.asarray(c, float) for c in clusters])
    n = float(len(values))
    p_hat = values.sum() / n
    # _clustered_stderr: sum over clusters of the squared deviation sums,
    # times C / (C - 1), square-rooted, over the number of values
    c = len(clusters)
    ss = sum(((np.asarray(cl, float) - p_hat).sum()) ** 2 for cl in clusters)
    clustered_variance = (np.sqrt(ss * c / (c - 1)) / n) ** 2
    numerator = p_hat * (1 - p_hat)
    if numerator > 0 and clustered_variance > 0:
        n = min(numerator / clustered_variance, n)
    critical = stats.t.ppf(1 - (1 - level) / 2, c - 1)
    denominator = 1 + critical * critical / n
    center = (p_hat + critical * critical / (2 * n)) / denominator
    half = (
        critical
        * np.sqrt(p_hat * (1 - p_hat) / n + critical * critical / (4 * n * n))
        / denominator
    )
    return max(center - half, 0.0), min(center + half, 1.0)


def test_clustered_wilson_matches_inspect_ai_by_hand():
    # four inputs with unequal k: [1,1,0], [1,0], [0,0,0], [1,1,1,1]
    clusters = [[1, 1, 0], [1, 0], [0, 0, 0], [1, 1, 1, 1]]
    rows = [(i, j, y) for i, cl in enumerate(clusters) for j, y in enumerate(cl)]
    df = pd.DataFrame(rows, columns=["input_id", "run", "correct"])
    # Inspect pools runs (p_hat = 7/12): our weight="run"
    r = analytic_ci(df, "correct", "input_id", method="clustered-wilson", weight="run")
    # by hand: p = 7/12 (7 of 12 rows); deviation sums T_i - p k_i are
    # 3/12, -2/12, -21/12, 20/12, whose squares sum to 854/144; with C = 4
    # clusters V = C/(C-1) * (854/144) / 12^2 = 0.054913, n_eff = p (1 - p) / V
    # = (35/144) / 0.054913 = 4.4262 (< 12 rows), t_3 = 3.18245, c2 = t^2 =
    # 10.128; center = (p + c2/(2 n_eff)) / (1 + c2/n_eff) = 0.52534,
    # half = t sqrt(p(1-p)/n_eff + c2/(4 n_eff^2)) / (1 + c2/n_eff) = 0.41533
    assert r.estimate == pytest.approx(7 / 12)
    n_eff = r.estimate * (1 - r.estimate) / r.standard_error**2
    assert n_eff == pytest.approx(15120 / 3416, rel=1e-12)
    ref = _inspect_ci_wilson(clusters)
    assert (r.low, r.high) == pytest.approx(ref, rel=1e-12)
    assert (r.low, r.high) == pytest.approx((0.11001, 0.94067), abs=5e-6)
    # and on real data, where weight="input" and "run" agree (k = 5 throughout)
    gpqa = evalci.load_example()
    for _system, sub in gpqa.groupby("system"):
        cl = [g.correct.to_numpy() for _, g in sub.groupby("input_id")]
        mine = analytic_ci(sub, "correct", "input_id", method="clustered-wilson")
        assert (mine.low, mine.high) == pytest.approx(_inspect_ci_wilson(cl), rel=1e-10)


def test_clustered_wilson_k1_and_cap():
    # k = 1: the cluster-robust variance has the N/(N-1) factor, so
    # n_eff = N - 1 (Inspect AI gives the same): Wilson at (p (N-1), N-1), t_{N-1}
    df = binary_frame(30, 50)
    r = analytic_ci(df, "correct", "input_id", method="clustered-wilson")
    ref = _wilson_at(0.6 * 49, 49, stats.t.ppf(0.975, 49))
    assert (r.low, r.high) == pytest.approx(ref, rel=1e-12)
    # negative within-input correlation (deff < 1): capped at n, never narrower
    # than Wilson on the pooled rows (with the same t critical value)
    df = _sums_frame([0, 2] + [1] * 19, k=2)
    r = analytic_ci(df, "correct", "input_id", method="clustered-wilson")
    assert r.estimate * (1 - r.estimate) / r.standard_error**2 > 42
    ref = _wilson_at(21, 42, stats.t.ppf(0.975, 20))
    assert (r.low, r.high) == pytest.approx(ref, rel=1e-12)
    # every input exactly 1 of 2 right: V = 0 -> n_eff = n (as Inspect AI)
    df = _sums_frame([1] * 20, k=2)
    r = analytic_ci(df, "correct", "input_id", method="clustered-wilson")
    assert r.standard_error == 0
    ref = _wilson_at(20, 40, stats.t.ppf(0.975, 19))
    assert (r.low, r.high) == pytest.approx(ref, rel=1e-12)


def test_clustered_wilson_kernel_directly():
    low, high, n_eff = closed_form._korn_graubard_wilson(
        np.array([0.5, 0.0, 1.0, 0.3]),
        np.array([0.25 / 40, 0.0, 0.0, 0.21 / 10]),
        np.array([40, 100, 100, 50]),
        np.array([20, 20, 20, 10]),
        0.95,
    )
    # deff 1 -> n; p = 0 or 1 -> N inputs (not Inspect AI's n rows); deff 5 -> n / 5
    np.testing.assert_allclose(n_eff, [40, 20, 20, 10], rtol=1e-12)
    assert low[1] == 0.0 and high[2] == 1.0
    t19 = stats.t.ppf(0.975, 19)
    assert high[1] == pytest.approx(_wilson_at(0, 20, t19)[1], rel=1e-12)
    assert low[2] == pytest.approx(_wilson_at(20, 20, t19)[0], rel=1e-12)
    ref = _wilson_at(3, 10, stats.t.ppf(0.975, 9))
    assert (low[3], high[3]) == pytest.approx(ref, rel=1e-12)


def test_clustered_wilson_all_correct_uses_inputs():
    # 30 inputs x 5 runs, all right: deff is 0/0. n_eff = 30 inputs (the first
    # run of each input alone is 30 independent outcomes), not 150 rows
    df = _sums_frame([5] * 30, k=5)
    r = analytic_ci(df, "correct", "input_id", method="clustered-wilson")
    assert r.high == 1.0 and r.estimate == 1.0
    assert r.low == pytest.approx(_wilson_at(30, 30, stats.t.ppf(0.975, 29))[0])
    assert r.low < _wilson_at(150, 150, stats.t.ppf(0.975, 29))[0]


@pytest.mark.parametrize(
    "frame, kwargs, match",
    [
        (
            pd.DataFrame({"i": [0, 0, 1, 1], "s": [0.5, 1, 0, 1]}),
            {},
            r"must hold only 0/1 for method='clustered-wilson'.*found 0.5",
        ),
        (
            pd.DataFrame({"i": [0, 0], "s": [0, 1]}),
            {},
            r"method='clustered-wilson' needs at least 2 inputs .*found 1",
        ),
        (
            pd.DataFrame({"i": [0, 0, 1, 1], "s": [0, 1, 0, 1]}),
            {"method": "wilson"},
            r"method='wilson' needs one row per input.*method='clustered-wilson'",
        ),
    ],
)
def test_clustered_wilson_errors(frame, kwargs, match):
    with pytest.raises(ValueError, match=match):
        analytic_ci(frame, "s", "i", **{"method": "clustered-wilson", **kwargs})


def _beta_binomial_trials(trials, n_inputs, k, a, b, seed):
    """Long table of ``trials`` seeded data sets: p_i ~ Beta(a, b), k runs each."""
    rng = np.random.default_rng(seed)
    p = rng.beta(a, b, size=(trials, n_inputs, 1))
    y = (rng.random((trials, n_inputs, k)) < p).astype(np.int8)
    t, i, r = np.indices(y.shape)
    return pd.DataFrame(
        {"trial": t.ravel(), "input_id": i.ravel(), "correct": y.ravel()}
    )


@pytest.mark.slow
def test_clustered_wilson_coverage_where_pooled_wilson_undercovers():
    # 2,000 seeded trials of N = 100 inputs x k = 5 runs, p_i ~ Beta(2, 1):
    # mean 2/3, ICC 1/(a+b+1) = 1/4, design effect 1 + (k-1)/4 = 2. Plain
    # Wilson on the 500 pooled rows treats them as independent: its SE is
    # too small by sqrt(2) (expected coverage about P(|Z| < 1.96/1.41) = 83%).
    # Criterion: coverage within 2.5 Monte Carlo SEs (sqrt(.95 .05 / 2000) =
    # 0.0049) of 0.95. The seed is fixed, so the test is deterministic; with
    # a random seed and true coverage exactly 95% it would fail 1.2% of the
    # time (two-sided normal tail beyond 2.5).
    trials, truth = 2000, 2 / 3
    df = _beta_binomial_trials(trials, 100, 5, 2.0, 1.0, seed=20260)
    clustered = analytic_ci(
        df, "correct", "input_id", by="trial", method="clustered-wilson"
    )
    cover = ((clustered.low <= truth) & (truth <= clustered.high)).mean()
    # plain Wilson on pooled runs: x successes out of 500 rows per trial
    x = df.groupby("trial").correct.sum().to_numpy()
    low, high = proportion_confint(x, 500, alpha=0.05, method="wilson")
    pooled = ((low <= truth) & (truth <= high)).mean()
    mc_se = np.sqrt(0.95 * 0.05 / trials)
    assert abs(cover - 0.95) < 2.5 * mc_se, cover
    assert pooled < 0.95 - 2.5 * mc_se, pooled
    assert pooled < 0.88  # far below, as the design effect of 2 predicts
