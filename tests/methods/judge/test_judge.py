"""evalci.judge: PPI++ and Rogan-Gladen, against ppi_py, slow references and coverage."""

import math
import statistics
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import evalci
from evalci.judge import PPIResult, RoganGladenResult, ppi_mean, rogan_gladen

Z95 = stats.norm.ppf(0.975)

# ppi_mean warns below 60 gold labels with its measured coverage (issue 24;
# tests/house/test_silent_answers_2.py tests that warning); these tests use fewer
pytestmark = pytest.mark.filterwarnings(
    "ignore:only .* labeled inputs.*seeded simulation:evalci.FewClustersWarning"
)


# ------------------------------------------------------------------ data
def judged(n=600, n_lab=80, k=1, sens=0.9, spec=0.7, prev=0.6, icc=0.3, seed=0,
           continuous=False, gold_runs=None, unequal=False):  # fmt: skip
    """Inputs with an input effect, k runs, a judge with known error rates.

    ``p_i ~ Beta`` with mean ``prev`` and intraclass correlation ``icc``;
    true outcomes ``Y_ij ~ Bernoulli(p_i)``; the judge says 1 with
    probability ``sens`` if ``Y_ij = 1`` and ``1 - spec`` otherwise (or, if
    ``continuous``, a noisy score). The first ``n_lab`` inputs carry gold on
    all their runs (or on the first ``gold_runs``).
    """
    rng = np.random.default_rng(seed)
    s = 1 / icc - 1
    p = rng.beta(prev * s, (1 - prev) * s, n)
    ks = rng.integers(1, 2 * k + 1, n) if unequal else np.full(n, k)
    inp = np.repeat(np.arange(n), ks)
    run = np.concatenate([np.arange(m) for m in ks])
    y = (rng.random(len(inp)) < p[inp]).astype(int)
    if continuous:
        j = np.clip(0.2 + 0.6 * y + rng.normal(0, 0.25, len(y)), 0, 1)
    else:
        j = np.where(y == 1, rng.random(len(y)) < sens, rng.random(len(y)) < 1 - spec)
    has = (inp < n_lab) & (run < (gold_runs or 10**9))
    return pd.DataFrame(
        {
            "input_id": [f"q{i:04d}" for i in inp],
            "run": run,
            "judge": j.astype(float) if continuous else j.astype(int),
            "gold": np.where(has, y, np.nan),
            "truth": y,
        }
    )


# --------------------------------------------------------- slow references
def slow_inputs(df, judge="judge", gold="gold", cluster="input_id"):
    """Per-input (Y, f) of labeled inputs and f of unlabeled ones, by plain loops."""
    rows = defaultdict(list)
    for key, j, g in zip(df[cluster], df[judge], df[gold], strict=True):
        rows[key].append((float(j), float(g)))
    lab, unl = [], []
    for runs in rows.values():
        graded = [(j, g) for j, g in runs if not math.isnan(g)]
        if graded:
            lab.append((statistics.fmean(g for _, g in graded),
                        statistics.fmean(j for j, _ in graded)))  # fmt: skip
        else:
            unl.append(statistics.fmean(j for j, _ in runs))
    return lab, unl


def slow_ppi(df, lam=None, **kw):
    """PPI++ from explicit formulas (Angelopoulos, Duchi & Zrnic 2023, Example 6.1).

    ``lam = Cov_L(Y, f) / ((1 + n/N) Var(f))`` (Cov ddof=0 over labeled
    inputs, Var ddof=1 over all inputs' judge means, clipped to [0, 1]);
    ``theta = lam mean_U f + mean_L (Y - lam f)``;
    ``SE^2 = lam^2 pvar_U(f)/N + pvar_L(Y - lam f)/n``.
    """
    lab, unl = slow_inputs(df, **kw)
    n, N = len(lab), len(unl)
    ys, fs = [y for y, _ in lab], [f for _, f in lab]
    if lam is None:
        my, mf = statistics.fmean(ys), statistics.fmean(fs)
        cov = sum((y - my) * (f - mf) for y, f in lab) / n
        lam = cov / ((1 + n / N) * statistics.variance(fs + unl))
        lam = min(max(lam, 0.0), 1.0)
    rect = [y - lam * f for y, f in lab]
    theta = lam * statistics.fmean(unl) + statistics.fmean(rect)
    se = math.sqrt(lam**2 * statistics.pvariance(unl) / N
                   + statistics.pvariance(rect) / n)  # fmt: skip
    return theta, se, lam


def slow_rg(df, judge="judge", gold="gold", cluster="input_id"):
    """Rogan-Gladen with Greenland's (1988) delta variance, cluster-robust, by loops.

    Se, Sp pooled over gold rows; p the mean of per-input judge means over
    unlabeled inputs; ratio variances ``sum_i (tp_i - Se pos_i)^2 / P^2``.
    """
    rows = defaultdict(list)
    for key, j, g in zip(df[cluster], df[judge], df[gold], strict=True):
        rows[key].append((float(j), float(g)))
    per_lab, unl = [], []
    for runs in rows.values():
        graded = [(j, g) for j, g in runs if not math.isnan(g)]
        if graded:
            tp = sum(j * g for j, g in graded)
            pos = sum(g for _, g in graded)
            tn = sum((1 - j) * (1 - g) for j, g in graded)
            neg = sum(1 - g for _, g in graded)
            per_lab.append((tp, pos, tn, neg))
        else:
            unl.append(statistics.fmean(j for j, _ in runs))
    P = sum(r[1] for r in per_lab)
    Q = sum(r[3] for r in per_lab)
    se_ = sum(r[0] for r in per_lab) / P
    sp_ = sum(r[2] for r in per_lab) / Q
    p = statistics.fmean(unl)
    J = se_ + sp_ - 1
    theta = (p + sp_ - 1) / J
    v_p = statistics.pvariance(unl) / len(unl)
    v_se = sum((tp - se_ * pos) ** 2 for tp, pos, _, _ in per_lab) / P**2
    v_sp = sum((tn - sp_ * neg) ** 2 for _, _, tn, neg in per_lab) / Q**2
    cov = sum((tp - se_ * pos) * (tn - sp_ * neg) for tp, pos, tn, neg in per_lab)
    cov /= P * Q
    var = v_p + theta**2 * v_se + (1 - theta) ** 2 * v_sp
    var -= 2 * theta * (1 - theta) * cov
    return theta, math.sqrt(var / J**2), p, se_, sp_


# ----------------------------------------------------------------- ppi_py
@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("lam", [None, 0.0, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_ppi_matches_ppi_py(continuous, lam, seed):
    # Reference: ppi_py (the authors' implementation, pip package ppi-python),
    # ppi_mean_ci / ppi_mean_pointestimate at k=1, no clustering.
    ppi_py = pytest.importorskip("ppi_py")
    df = judged(n=500, n_lab=70, seed=seed, continuous=continuous)
    lab = df.gold.notna().to_numpy()
    Y, Yhat = df.gold[lab].to_numpy(), df.judge[lab].to_numpy(dtype=float)
    Yhat_u = df.judge[~lab].to_numpy(dtype=float)
    res = ppi_mean(df, "judge", "gold", lam="auto" if lam is None else lam)
    lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yhat_u, alpha=0.05, lam=lam)
    est = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yhat_u, lam=lam)
    assert res.estimate == pytest.approx(float(np.squeeze(est)), abs=1e-8)
    assert res.low == pytest.approx(float(np.squeeze(lo)), abs=1e-8)
    assert res.high == pytest.approx(float(np.squeeze(hi)), abs=1e-8)
    # the tuned lam is ppi_py's: plugging it back gives the same estimate
    again = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yhat_u, lam=res.lam)
    assert res.estimate == pytest.approx(float(np.squeeze(again)), abs=1e-8)
    if lam is not None:
        assert res.lam == lam


def test_ppi_matches_ppi_py_with_cluster_none_and_row_order():
    ppi_py = pytest.importorskip("ppi_py")
    df = judged(n=300, n_lab=40, seed=5).sample(frac=1, random_state=3)
    lab = df.gold.notna().to_numpy()
    lo, hi = ppi_py.ppi_mean_ci(
        df.gold[lab].to_numpy(), df.judge[lab].to_numpy(float),
        df.judge[~lab].to_numpy(float), alpha=0.1,
    )  # fmt: skip
    res = ppi_mean(df, "judge", "gold", confidence_level=0.9)
    assert (res.low, res.high) == pytest.approx((lo.item(), hi.item()), abs=1e-8)


# ------------------------------------------------------- clustered: slow ref
@pytest.mark.parametrize("gold_runs", [None, 1, 2])
@pytest.mark.parametrize("lam", [None, 0.7])
def test_ppi_clustered_matches_slow_reference(gold_runs, lam):
    df = judged(n=250, n_lab=40, k=3, unequal=True, gold_runs=gold_runs, seed=2)
    df = df.sample(frac=1, random_state=0)  # row order must not matter
    theta, se, lam_ref = slow_ppi(df, lam=lam)
    res = ppi_mean(df, "judge", "gold", "input_id", lam="auto" if lam is None else lam)
    assert res.estimate == pytest.approx(theta, abs=1e-12)
    assert res.standard_error == pytest.approx(se, abs=1e-12)
    assert res.lam == pytest.approx(lam_ref, abs=1e-12)
    assert res.low == pytest.approx(theta - Z95 * se, abs=1e-12)
    assert res.high == pytest.approx(theta + Z95 * se, abs=1e-12)
    assert (res.n_labeled, res.n_unlabeled) == (40, 210)


def test_ppi_by_group_equals_each_group_alone():
    a = judged(n=200, n_lab=30, k=2, seed=3).assign(system="a")
    b = judged(n=150, n_lab=25, k=2, seed=4, sens=0.8).assign(system="b")
    both = pd.concat([a, b], ignore_index=True)
    res = ppi_mean(both, "judge", "gold", "input_id", by="system")
    assert isinstance(res.estimate, pd.Series)
    for name, part in (("a", a), ("b", b)):
        theta, se, lam = slow_ppi(part)
        assert res.estimate[name] == pytest.approx(theta, abs=1e-12)
        assert res.standard_error[name] == pytest.approx(se, abs=1e-12)
        assert res.lam[name] == pytest.approx(lam, abs=1e-12)
    frame = res.to_frame()
    assert list(frame.columns[:3]) == ["system", "estimate", "low"]
    assert "PPI++" in repr(res)


def test_ppi_lam_zero_is_the_gold_only_interval():
    # lam=0: the classical mean of the labeled inputs' gold means, SE ddof=0
    df = judged(n=300, n_lab=50, k=3, seed=8)
    res = ppi_mean(df, "judge", "gold", "input_id", lam=0)
    ys = df[df.gold.notna()].groupby("input_id").gold.mean()
    assert res.estimate == pytest.approx(ys.mean(), abs=1e-12)
    assert res.standard_error == pytest.approx(
        ys.std(ddof=0) / math.sqrt(50), abs=1e-12
    )


def test_ppi_bootstrap_agrees_with_clt_and_is_seeded():
    # Large n: the percentile interval of the bootstrap and the CLT interval
    # estimate the same thing; 4000 replicates put their endpoints within
    # Monte Carlo error (about 0.03 SE) plus skewness, well under 0.2 SE.
    df = judged(n=1500, n_lab=300, k=3, seed=11)
    clt = ppi_mean(df, "judge", "gold", "input_id")
    boot = ppi_mean(df, "judge", "gold", "input_id", method="bootstrap",
                    n_resamples=4000, rng=1)  # fmt: skip
    assert boot.estimate == clt.estimate and boot.lam == clt.lam
    assert boot.standard_error == pytest.approx(clt.standard_error, rel=0.06)
    assert abs(boot.low - clt.low) < 0.2 * clt.standard_error
    assert abs(boot.high - clt.high) < 0.2 * clt.standard_error
    again = ppi_mean(df, "judge", "gold", "input_id", method="bootstrap",
                     n_resamples=4000, rng=1)  # fmt: skip
    assert (again.low, again.high) == (boot.low, boot.high)


# ------------------------------------------------------------ Rogan-Gladen
def test_rg_known_rates_k1_formula():
    # Rogan & Gladen (1978), eq. 1; SE = sqrt(p (1 - p) / N) / (Se + Sp - 1)
    df = judged(n=800, n_lab=0, seed=1)
    res = rogan_gladen(df, "judge", sensitivity=0.9, specificity=0.7)
    p = df.judge.mean()
    theta = (p + 0.7 - 1) / (0.9 + 0.7 - 1)
    se = math.sqrt(p * (1 - p) / 800) / 0.6
    assert res.estimate == pytest.approx(theta, abs=1e-12)
    assert res.standard_error == pytest.approx(se, abs=1e-12)
    assert res.low == pytest.approx(theta - Z95 * se, abs=1e-12)
    assert (res.n_labeled, res.n_unlabeled, res.observed) == (0, 800, p)


def test_rg_estimated_rates_k1_greenland():
    # Greenland (1988), Stat Med 7:745, the delta variance with estimated rates:
    # [p(1-p)/N + theta^2 Se(1-Se)/n1 + (1-theta)^2 Sp(1-Sp)/n0] / (Se+Sp-1)^2
    df = judged(n=900, n_lab=200, seed=4)
    res = rogan_gladen(df, "judge", gold="gold")
    lab = df[df.gold.notna()]
    unl = df[df.gold.isna()]
    n1, n0 = int((lab.gold == 1).sum()), int((lab.gold == 0).sum())
    se_ = lab.judge[lab.gold == 1].mean()
    sp_ = 1 - lab.judge[lab.gold == 0].mean()
    p, N = unl.judge.mean(), len(unl)
    J = se_ + sp_ - 1
    theta = (p + sp_ - 1) / J
    var = (p * (1 - p) / N + theta**2 * se_ * (1 - se_) / n1
           + (1 - theta) ** 2 * sp_ * (1 - sp_) / n0) / J**2  # fmt: skip
    assert res.estimate == pytest.approx(theta, abs=1e-12)
    assert res.standard_error == pytest.approx(math.sqrt(var), abs=1e-12)
    assert (res.sensitivity, res.specificity) == pytest.approx((se_, sp_), abs=1e-14)


@pytest.mark.parametrize("gold_runs", [None, 1])
def test_rg_clustered_matches_slow_reference(gold_runs):
    df = judged(n=400, n_lab=120, k=4, unequal=True, gold_runs=gold_runs, seed=6)
    df = df.sample(frac=1, random_state=1)
    theta, se, p, se_, sp_ = slow_rg(df)
    res = rogan_gladen(df, "judge", "input_id", gold="gold")
    assert res.estimate == pytest.approx(theta, abs=1e-12)
    assert res.standard_error == pytest.approx(se, abs=1e-12)
    assert (res.observed, res.sensitivity, res.specificity) == pytest.approx(
        (p, se_, sp_), abs=1e-12
    )
    # clustered SE exceeds the row-level (k=1) formula when inputs differ
    rows = df.assign(input_id=np.arange(len(df)))
    assert (
        res.standard_error
        > 1.05 * rogan_gladen(rows, "judge", gold="gold").standard_error
    )


def test_rg_bootstrap_agrees_with_delta():
    df = judged(n=1500, n_lab=400, k=2, seed=12)
    delta = rogan_gladen(df, "judge", "input_id", gold="gold")
    boot = rogan_gladen(df, "judge", "input_id", gold="gold", method="bootstrap",
                        n_resamples=4000, rng=2)  # fmt: skip
    assert boot.standard_error == pytest.approx(delta.standard_error, rel=0.08)
    assert abs(boot.low - delta.low) < 0.25 * delta.standard_error
    assert abs(boot.high - delta.high) < 0.25 * delta.standard_error
    known = rogan_gladen(df, "judge", "input_id", sensitivity=0.9, specificity=0.7,
                         method="bootstrap", n_resamples=2000, rng=0)  # fmt: skip
    d2 = rogan_gladen(df, "judge", "input_id", sensitivity=0.9, specificity=0.7)
    assert known.standard_error == pytest.approx(d2.standard_error, rel=0.08)


def test_rg_clips_and_warns():
    # judge rate below 1 - Sp: the correction is negative -> clipped to 0
    df = pd.DataFrame({"judge": [0] * 83 + [1] * 17})
    with pytest.warns(evalci.DegenerateDataWarning, match="clipped"):
        res = rogan_gladen(df, "judge", sensitivity=0.9, specificity=0.8)
    assert res.estimate == 0 and res.low == 0 and 0 < res.high < 1


def test_results_are_the_documented_types():
    df = judged(n=200, n_lab=40, seed=0)
    assert isinstance(ppi_mean(df, "judge", "gold"), PPIResult)
    rg = rogan_gladen(df, "judge", gold="gold")
    assert isinstance(rg, RoganGladenResult)
    assert rg.to_frame().shape == (1, 11)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"judge": "nope"}, "`judge`: column 'nope' is not in"),
        ({"gold": "judge"}, "`gold` and `judge` are the same column"),
        ({"method": "bca"}, "`method` must be one of"),
        ({"lam": "tuned"}, "`lam` must be 'auto'"),
        ({"lam": float("nan")}, "`lam` must be a finite number"),
        ({"confidence_level": 95}, "`confidence_level` must be a number in"),
        ({"n_resamples": 0}, "`n_resamples` must be a positive integer"),
        ({"by": "input_id"}, "`by` and `cluster` share column"),
    ],
)
def test_ppi_errors(kwargs, match):
    df = judged(n=50, n_lab=20, k=2)
    args = {"judge": "judge", "gold": "gold", "cluster": "input_id", **kwargs}
    with pytest.raises(ValueError, match=match):
        ppi_mean(df, **args)


def test_ppi_errors_on_data():
    df = judged(n=50, n_lab=20)
    with pytest.raises(ValueError, match="0 labeled .* at least 2 .* label more"):
        ppi_mean(df.assign(gold=np.nan), "judge", "gold")
    with pytest.raises(ValueError, match="0 unlabeled .* use evalci.analytic_ci"):
        ppi_mean(df.assign(gold=df.truth), "judge", "gold")
    with pytest.raises(ValueError, match="`judge` column 'judge' has 1 missing"):
        ppi_mean(df.assign(judge=df.judge.where(df.index > 0)), "judge", "gold")
    with pytest.raises(ValueError, match="`judge` column 'v' is not numeric"):
        ppi_mean(df.assign(v="yes"), "v", "gold")
    with pytest.raises(ValueError, match="`gold` column 'g' is not numeric"):
        ppi_mean(df.assign(g="yes"), "judge", "g")
    with pytest.raises(ValueError, match="`gold` is required"):
        ppi_mean(df, "judge", None)
    with pytest.raises(TypeError, match="`data` must be a pandas DataFrame"):
        ppi_mean(df.to_dict(), "judge", "gold")


def test_ppi_warns_on_few_labeled_inputs():
    df = judged(n=100, n_lab=5, seed=1)
    with pytest.warns(evalci.FewClustersWarning, match="only 5 labeled inputs"):
        ppi_mean(df, "judge", "gold")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "give either `gold` .* or both `sensitivity`"),
        ({"gold": "gold", "sensitivity": 0.9, "specificity": 0.8}, "not both"),
        ({"sensitivity": 0.9}, "give either"),
        (
            {"sensitivity": 0.5, "specificity": 0.5},
            r"sensitivity \+ specificity must be > 1",
        ),
        (
            {"sensitivity": 1.2, "specificity": 0.5},
            r"`sensitivity` must be in \[0, 1\]",
        ),
        ({"gold": "gold", "method": "clt"}, "`method` must be one of"),
    ],
)
def test_rg_errors(kwargs, match):
    df = judged(n=60, n_lab=30)
    with pytest.raises(ValueError, match=match):
        rogan_gladen(df, "judge", **kwargs)


def test_rg_errors_on_data():
    df = judged(n=60, n_lab=30)
    with pytest.raises(ValueError, match="`judge` column 'judge' must hold only 0/1"):
        rogan_gladen(df.assign(judge=df.judge * 0.5), "judge", gold="gold")
    with pytest.raises(ValueError, match="`gold` column 'gold' must hold only 0/1"):
        rogan_gladen(df.assign(gold=df.gold * 2), "judge", gold="gold")
    with pytest.raises(
        ValueError, match="no gold row is 0, so the judge.s specificity cannot"
    ):
        rogan_gladen(
            df.assign(gold=df.gold.where(df.gold.isna(), 1)), "judge", gold="gold"
        )
    with pytest.raises(ValueError, match="0 labeled"):
        rogan_gladen(df.assign(gold=np.nan), "judge", gold="gold")
    flipped = df.assign(judge=np.where(df.gold.notna(), 1 - df.truth, df.judge))
    with pytest.raises(ValueError, match="estimated on the gold rows"):
        rogan_gladen(flipped, "judge", gold="gold")


# ---------------------------------------------------------------- coverage
def _covers(res, truth):
    return res.low <= truth <= res.high


@pytest.mark.slow
@pytest.mark.parametrize("gold_runs", [None, 1])
def test_coverage_clustered(gold_runs):
    # 400 seeded trials: 1100 inputs x k=4 runs (ICC 0.3), 100 labeled, a judge
    # with Se 0.95, Sp 0.75 (its rate is 0.6 where the truth is 0.5). If a
    # method's true coverage is 0.95, P(<= 368/400 = 0.92) = binom.cdf(368,
    # 400, .95) = 0.0031 (0.0088 at a true 0.945): the false-failure rate. The
    # naive judge-only interval (bias 0.1, SE about 0.008) covers ~never.
    hits = defaultdict(int)
    n_trials, truth = 400, 0.5
    for t in range(n_trials):
        df = judged(n=1100, n_lab=100, k=4, sens=0.95, spec=0.75, prev=truth,
                    icc=0.3, seed=1000 + t, gold_runs=gold_runs)  # fmt: skip
        hits["ppi"] += _covers(ppi_mean(df, "judge", "gold", "input_id"), truth)
        hits["rg_known"] += _covers(
            rogan_gladen(df, "judge", "input_id", sensitivity=0.95, specificity=0.75),
            truth,
        )
        hits["rg_gold"] += _covers(
            rogan_gladen(df, "judge", "input_id", gold="gold"), truth
        )
        naive = evalci.analytic_ci(df, "judge", "input_id")
        hits["naive"] += naive.low <= truth <= naive.high
    rate = {k: v / n_trials for k, v in hits.items()}
    assert rate["ppi"] >= 0.92, rate
    assert rate["rg_known"] >= 0.92, rate
    assert rate["rg_gold"] >= 0.92, rate
    assert rate["naive"] <= 0.02, rate


@pytest.mark.slow
def test_coverage_bootstrap_and_efficiency():
    # 200 seeded trials with the bootstrap (999 replicates), a continuous
    # judge for PPI++. At a true 0.95, P(coverage <= 182/200 = 0.91) =
    # binom.cdf(182, 200, .95) = 0.0074. PPI++ is also narrower than the
    # gold-only interval (lam=0) on average: its lam minimises the variance.
    n_trials, hits, widths = 200, defaultdict(int), defaultdict(float)
    for t in range(n_trials):
        df = judged(n=800, n_lab=100, k=3, prev=0.5, icc=0.3, seed=5000 + t,
                    continuous=True)  # fmt: skip
        boot = ppi_mean(df, "judge", "gold", "input_id", method="bootstrap",
                        n_resamples=999, rng=t)  # fmt: skip
        gold_only = ppi_mean(df, "judge", "gold", "input_id", lam=0)
        hits["ppi_boot"] += _covers(boot, 0.5)
        widths["ppi"] += boot.high - boot.low
        widths["gold"] += gold_only.high - gold_only.low
        df2 = judged(n=800, n_lab=100, k=3, sens=0.9, spec=0.8, prev=0.5,
                     seed=9000 + t)  # fmt: skip
        rg = rogan_gladen(df2, "judge", "input_id", gold="gold", method="bootstrap",
                          n_resamples=999, rng=t)  # fmt: skip
        hits["rg_boot"] += _covers(rg, 0.5)
    rate = {k: v / n_trials for k, v in hits.items()}
    assert rate["ppi_boot"] >= 0.91, rate
    assert rate["rg_boot"] >= 0.91, rate
    assert widths["ppi"] < 0.8 * widths["gold"], widths


# -------------------------------------------------------------- properties
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.filterwarnings("ignore::evalci.DegenerateDataWarning")
def test_row_order_and_cluster_labels_do_not_matter(seed):
    # small samples may clip the Rogan-Gladen estimate (a warning): not the point here
    df = judged(n=60, n_lab=20, k=3, unequal=True, gold_runs=2, seed=seed % 1000)
    rng = np.random.default_rng(seed)
    shuffled = df.sample(frac=1, random_state=rng.integers(2**31))
    keys = df.input_id.unique()
    names = dict(zip(keys, rng.permutation(keys), strict=True))
    relabelled = df.assign(input_id=df.input_id.map(names))
    base = ppi_mean(df, "judge", "gold", "input_id").to_frame()
    pd.testing.assert_frame_equal(
        ppi_mean(shuffled, "judge", "gold", "input_id").to_frame(), base
    )
    pd.testing.assert_frame_equal(
        ppi_mean(relabelled, "judge", "gold", "input_id").to_frame(), base, atol=1e-12
    )
    rg = rogan_gladen(df, "judge", "input_id", gold="gold").to_frame()
    pd.testing.assert_frame_equal(
        rogan_gladen(shuffled, "judge", "input_id", gold="gold").to_frame(), rg
    )
