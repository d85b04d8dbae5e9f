"""Planning tools: variance components, width predictions, N vs k, sample size.

Reference values carry their provenance in a comment: seed 000 (simulation
model, rho = 0.025065, width factors), docs/paper-notes.md (exact components,
clamping bias), seed 004 (80% vs 83% needs about 2,600 items per system).
The ANOVA is checked against a slow loop and statsmodels; the planner
against a brute-force grid; the power formulas against simulated tests.
All seeds are fixed; the stated false-failure rates say how unlikely a
failure would be for a correct implementation under another seed.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci import simulate
from evalci.methods.planning import observed_widths
from evalci.methods.variance import Source

from conftest import clustered, shared_data

RHO_SEED000 = 0.025065  # docs/paper-notes.md: sigma2_B 0.0052637, sigma2_W 0.2047363
SB_SEED000, SW_SEED000 = 0.0052637, 0.2047363
COLS = [
    "msb",
    "msw",
    "sigma2_between",
    "sigma2_within",
    "rho_raw",
    "rho",
    "n_inputs",
    "mean_k",
    "k0",
    "sigma2_between_raw",
    "mean",
]


# ------------------------------------------------------------------ references
def anova_loop(values_by_input):
    """One-way random-effects ANOVA the obvious way (a loop over inputs).

    ``values_by_input`` is a list of 1-D arrays, one per input.
    """
    N = len(values_by_input)
    ks = np.array([len(v) for v in values_by_input], dtype=float)
    n = ks.sum()
    grand = sum(v.sum() for v in values_by_input) / n
    ssb = sum(len(v) * (v.mean() - grand) ** 2 for v in values_by_input)
    ssw = sum(((v - v.mean()) ** 2).sum() for v in values_by_input)
    msb, msw = ssb / (N - 1), ssw / (n - N)
    k0 = (n - (ks**2).sum() / n) / (N - 1)
    sb = (msb - msw) / k0
    return dict(
        msb=msb,
        msw=msw,
        k0=k0,
        sigma2_between_raw=sb,
        sigma2_within=msw,
        rho_raw=sb / (sb + msw),
        rho=max(sb, 0) / (max(sb, 0) + msw),
        n_inputs=N,
        mean_k=n / N,
        mean=np.mean([v.mean() for v in values_by_input]),
    )


def unequal_scores(seed=0, n=40):
    """Numeric scores with input effects and 1-7 runs per input."""
    rng = np.random.default_rng(seed)
    ks = rng.integers(1, 8, n)
    ks[0] = 3  # at least one input with replication
    effect = rng.normal(0, 1.0, n)
    rows = [
        (f"q{i}", r, 50 + effect[i] + rng.normal(0, 2.0))
        for i in range(n)
        for r in range(ks[i])
    ]
    return pd.DataFrame(rows, columns=["input_id", "run", "score"])


def to_counts(df, keys=("input_id", "system"), value="correct"):
    return df.groupby(list(keys), as_index=False).agg(
        n_correct=(value, "sum"), n_runs=(value, "size")
    )


def expand_counts(counts, keys=("input_id", "system")):
    """0/1 rows from a counts table (c ones and n - c zeros per row)."""
    n = counts["n_runs"].to_numpy()
    c = counts["n_correct"].to_numpy()
    rep = counts.loc[counts.index.repeat(n), list(keys)].reset_index(drop=True)
    rank = np.concatenate([np.arange(k) for k in n])
    rep["correct"] = (rank < np.repeat(c, n)).astype(int)
    return rep


def two_system_model(
    n_inputs,
    k,
    seed,
    p_a=(0.9, 0.7, 0.5, 0.2),
    p_b=(0.95, 0.6, 0.7, 0.5),
    w=(0.3, 0.3, 0.2, 0.2),
):
    """Inputs of 4 types; system s is right with prob p_s[type], runs independent.

    Returns the tidy frame and the true components of the per-run difference
    b - a: sigma2_B = Var_type(p_b - p_a), sigma2_W = E[p_a q_a + p_b q_b].
    """
    rng = np.random.default_rng(seed)
    w, pa, pb = map(np.asarray, (w, p_a, p_b))
    t = rng.choice(4, size=n_inputs, p=w)
    ya = rng.random((n_inputs, k)) < pa[t][:, None]
    yb = rng.random((n_inputs, k)) < pb[t][:, None]
    frame = pd.concat(
        [
            pd.DataFrame(
                {
                    "input_id": np.repeat(np.arange(n_inputs), k),
                    "run": np.tile(np.arange(k), n_inputs),
                    "system": s,
                    "correct": y.reshape(-1).astype(int),
                }
            )
            for s, y in (("a", ya), ("b", yb))
        ],
        ignore_index=True,
    )
    d = pb - pa
    sb = float(w @ (d - w @ d) ** 2)
    sw = float(w @ (pa * (1 - pa) + pb * (1 - pb)))
    return frame, sb, sw


# ============================================================ seed 000 model
def test_seed000_components_and_width_factors():
    # docs/paper-notes.md: rho = 0.025065 exactly; factors 0.716, 0.592, 0.469 for
    # k = 2, 3, 5; seed 000's table rounds them to 0.72 / 0.59 / 0.47.
    sb, sw = simulate.variance_components(simulate.SEED000_CONFUSION)
    assert (sb, sw) == pytest.approx((SB_SEED000, SW_SEED000), abs=5e-8)
    rho = simulate.intraclass_correlation(simulate.SEED000_CONFUSION)
    assert rho == pytest.approx(RHO_SEED000, abs=5e-7)
    f = evalci.width_factor(rho, [2, 3, 5])
    np.testing.assert_allclose(f, [0.716, 0.592, 0.469], atol=5e-4)
    np.testing.assert_allclose(np.round(f, 2), [0.72, 0.59, 0.47])
    assert evalci.width_factor(rho, 1) == 1.0
    assert evalci.width_factor(rho, 1e12) == pytest.approx(math.sqrt(rho), rel=1e-6)
    # predicted width at N = 200: seed 000's IID bootstrap at k=1 is 0.1266 and
    # the cluster bootstrap at k=5 0.0592 (normal approximation 0.0594)
    w1, w5 = evalci.predict_width(sb, sw, 200, [1, 5])
    assert w1 == pytest.approx(0.1266, rel=0.01)
    assert w5 == pytest.approx(0.0594, rel=0.01)
    assert w5 / w1 == pytest.approx(f[2], rel=1e-12)


def test_seed000_large_simulation_recovers_rho():
    # N = 20,000 inputs x k = 5. The large-sample SD of the ANOVA estimator
    # of rho is sqrt(2 (1-rho)^2 (1+(k-1) rho)^2 / (k (k-1) (N-1))) = 0.0024
    # (Fisher); 0.008 is 3.3 SD (false-failure rate about 1e-3).
    df = simulate.confusion_model(20_000, 5, rng=3)
    est = evalci.icc(df, "correct", "input_id").iloc[0]
    assert est["rho"] == pytest.approx(RHO_SEED000, abs=0.008)
    assert est["sigma2_between"] == pytest.approx(SB_SEED000, abs=0.002)
    assert est["sigma2_within"] == pytest.approx(SW_SEED000, abs=0.002)
    assert est["n_inputs"] == 20_000 and est["mean_k"] == 5 and est["k0"] == 5


@pytest.mark.slow
def test_clamping_bias_matches_paper_notes():
    # docs/paper-notes.md: at N = 200, k = 2 the clamped ANOVA estimate averages
    # 0.043 against the true 0.025, and 38% of data sets clamp. 2,000 seeded
    # data sets: SD of the clamped share is 0.011 (we allow 0.04) and of the
    # mean clamped rho about 0.0011 (we allow 0.005); the raw estimate is
    # nearly unbiased (mean within 0.006 = 4 SD of 0.025).
    labels, preds = simulate.confusion_model_arrays(2000, 200, 2, rng=1)
    T, N, K = preds.shape
    correct = (preds == labels[..., None]).astype(np.int64)
    df = pd.DataFrame(
        {
            "trial": np.repeat(np.arange(T), N * K),
            "input_id": np.tile(np.repeat(np.arange(N), K), T),
            "correct": correct.reshape(-1),
        }
    )
    est = evalci.icc(df, "correct", "input_id", by="trial")
    assert len(est) == T
    assert est["rho"].mean() == pytest.approx(0.043, abs=0.005)
    assert (est["rho_raw"] < 0).mean() == pytest.approx(0.38, abs=0.04)
    assert est["rho_raw"].mean() == pytest.approx(RHO_SEED000, abs=0.006)
    assert (est["rho"] == np.maximum(est["rho_raw"], 0)).all()


# ======================================================= ANOVA vs references
def test_anova_matches_slow_loop_unequal_k():
    df = unequal_scores(seed=1)
    ours = evalci.icc(df, "score", "input_id").iloc[0]
    groups = [g["score"].to_numpy() for _, g in df.groupby("input_id")]
    ref = anova_loop(groups)
    for key, val in ref.items():
        assert ours[key] == pytest.approx(val, rel=1e-9, abs=1e-12), key
    # k0 differs from the mean k when k is unequal
    assert ours["k0"] < ours["mean_k"]


def test_anova_matches_statsmodels_one_way():
    smf = pytest.importorskip("statsmodels.formula.api")
    anova_lm = pytest.importorskip("statsmodels.stats.anova").anova_lm
    df = unequal_scores(seed=2)
    fit = smf.ols("score ~ C(input_id)", data=df).fit()
    table = anova_lm(fit, typ=1)
    ours = evalci.icc(df, "score", "input_id").iloc[0]
    assert ours["msb"] == pytest.approx(table.loc["C(input_id)", "mean_sq"], rel=1e-9)
    assert ours["msw"] == pytest.approx(table.loc["Residual", "mean_sq"], rel=1e-9)
    assert ours["n_inputs"] - 1 == table.loc["C(input_id)", "df"]


def test_anova_by_groups_and_row_order():
    df = clustered(n=50, k=4, unequal=True, seed=3)
    est = evalci.icc(df, "correct", "input_id", by="subject", system="system")
    assert list(est.columns[:2]) == ["subject", "system"]
    for (subj, sys_), g in df.groupby(["subject", "system"]):
        ref = anova_loop(
            [x["correct"].to_numpy(float) for _, x in g.groupby("input_id")]
        )
        row = est[(est.subject == subj) & (est.system == sys_)].iloc[0]
        assert row["msb"] == pytest.approx(ref["msb"], rel=1e-9)
        assert row["rho_raw"] == pytest.approx(ref["rho_raw"], rel=1e-9)
    shuffled = df.sample(frac=1, random_state=0)
    again = evalci.icc(shuffled, "correct", "input_id", by="subject", system="system")
    pd.testing.assert_frame_equal(est, again, rtol=1e-12)


def test_shift_invariance_large_scores():
    # the ANOVA is invariant to adding a constant; centring keeps it exact
    df = unequal_scores(seed=15)
    df = pd.concat(
        [df.assign(system="a"), df.assign(system="b", score=df.score * 1.5)],
        ignore_index=True,
    )
    df["subject"] = df["input_id"].str[-1].astype(int) % 2
    for run in ("run", None):
        kw = dict(by=["subject"], system="system", pairs="all", run=run)
        base = evalci.icc(df, "score", "input_id", **kw)
        moved = evalci.icc(df.assign(score=df.score + 1e6), "score", "input_id", **kw)
        for col in ("msb", "msw", "sigma2_between_raw", "rho_raw"):
            np.testing.assert_allclose(moved[col], base[col], rtol=1e-7, err_msg=col)
        diff = base["kind"] == "difference"
        np.testing.assert_allclose(
            moved.loc[~diff, "mean"], base.loc[~diff, "mean"] + 1e6
        )
        np.testing.assert_allclose(
            moved.loc[diff, "mean"], base.loc[diff, "mean"], atol=1e-8
        )


def test_counts_table_equals_expanded_rows():
    df = clustered(n=80, k=6, unequal=True, seed=4)
    counts = to_counts(df)
    rows = evalci.icc(df, "correct", "input_id", system="system")
    cnt = evalci.icc(
        counts,
        cluster="input_id",
        system="system",
        successes="n_correct",
        trials="n_runs",
    )
    pd.testing.assert_frame_equal(rows[COLS], cnt[COLS], rtol=1e-10)


def test_real_counts_equal_expanded_rows():
    crux = shared_data("cruxeval_output_T0.2_counts.csv")
    sub = crux[crux.system.isin(sorted(crux.system.unique())[:3])]
    rows = expand_counts(sub)
    a = evalci.icc(
        sub,
        cluster="input_id",
        system="system",
        successes="n_correct",
        trials="n_runs",
        pairs="all",
    )
    b = evalci.icc(
        rows, "correct", "input_id", system="system", pairs="all", run=None
    )
    assert (a["method"].iloc[3:] == "mean_difference").all()
    pd.testing.assert_frame_equal(a[COLS], b[COLS], rtol=1e-9)


# ============================================================ paired difference
def test_pairs_matched_runs_equal_anova_of_differences():
    df, _, _ = two_system_model(300, 4, seed=5)
    est = evalci.icc(df, "correct", "input_id", system="system", pairs=[("a", "b")])
    assert list(est["kind"]) == ["system", "system", "difference"]
    diff = est.iloc[2]
    assert diff["system"] == "b - a" and diff["method"] == "matched_runs"
    wide = df.pivot_table(index=["input_id", "run"], columns="system", values="correct")
    d = (wide["b"] - wide["a"]).reset_index()
    ref = anova_loop([g[0].to_numpy(float) for _, g in d.groupby("input_id")])
    for key in ("msb", "msw", "sigma2_between_raw", "rho_raw", "mean"):
        assert diff[key] == pytest.approx(ref[key], rel=1e-9, abs=1e-12), key


def test_pairs_fall_back_to_mean_difference():
    df, _, _ = two_system_model(200, 4, seed=6)
    # drop one run of system b: run sets differ, runs cannot be matched
    drop = df.index[(df.system == "b") & (df.input_id == 0) & (df.run == 3)]
    est = evalci.icc(
        df.drop(drop), "correct", "input_id", system="system", pairs=[("a", "b")]
    )
    assert est["method"].iloc[2] == "mean_difference"
    # balanced data, run=None: sigma2_B = s_D^2 - (MSW_a + MSW_b) / k exactly
    est = evalci.icc(
        df, "correct", "input_id", system="system", pairs=[("a", "b")], run=None
    )
    diff = est.iloc[2]
    assert diff["method"] == "mean_difference"
    means = df.groupby(["input_id", "system"])["correct"].mean().unstack()
    s2d = (means["b"] - means["a"]).var(ddof=1)
    sw = est["msw"].iloc[0] + est["msw"].iloc[1]
    assert diff["sigma2_within"] == pytest.approx(sw, rel=1e-12)
    assert diff["sigma2_between_raw"] == pytest.approx(s2d - sw / 4, rel=1e-9)
    assert diff["k0"] == pytest.approx(4)
    assert diff["msb"] == pytest.approx(4 * s2d, rel=1e-9)


def test_pair_methods_estimate_the_truth():
    # 20,000 inputs x 3 runs: both estimators of the difference's components
    # land near the truth. sigma2_B,d = 0.0299, sigma2_W,d = 0.3955 here; the
    # SD of either estimate of sigma2_B is about 0.002 (we allow 0.008).
    df, sb, sw = two_system_model(20_000, 3, seed=7)
    for run in ("run", None):
        d = evalci.icc(
            df, "correct", "input_id", system="system", pairs=[("a", "b")], run=run
        ).iloc[2]
        assert d["sigma2_between"] == pytest.approx(sb, abs=0.008), run
        assert d["sigma2_within"] == pytest.approx(sw, abs=0.008), run


def test_pairs_all_order_and_labels():
    df = clustered(n=30, k=3, p_sys=(0.5, 0.6, 0.7), seed=8)
    est = evalci.icc(df, "correct", "input_id", system="system", pairs="all")
    assert list(est["system"]) == [
        "sys0",
        "sys1",
        "sys2",
        "sys1 - sys0",
        "sys2 - sys0",
        "sys2 - sys1",
    ]
    by = evalci.icc(
        df,
        "correct",
        "input_id",
        by="subject",
        system="system",
        pairs=[("sys0", "sys2")],
    )
    assert list(by["subject"]) == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    assert list(by["kind"][:4]) == ["system"] * 3 + ["difference"]


# ================================================================ real data
@pytest.mark.parametrize(
    "name",
    [
        "cruxeval_output_T0.2_counts.csv",
        "math500_cot_highk_counts.csv",
        "aime2024_cot_highk_counts.csv",
    ],
)
def test_real_data_noise_split(name):
    """Data noise (between) and run noise (within) per system on real counts.

    Exact identity for 0/1 outcomes, with pbar the pooled accuracy and n the
    number of runs: the pooled variance pbar (1 - pbar) = SST / n, and
    SST = (N - 1) MSB + (n - N) MSW, so
        sigma2_B + sigma2_W = pbar (1 - pbar)
                              + MSB (1/k0 - (N-1)/n) + MSW (N/n - 1/k0),
    which for equal k is pbar (1 - pbar) + MSB / (N k): the components add up
    to the total variance up to an O(1/N) term.
    """
    data = shared_data(name)
    with warnings.catch_warnings():
        # AIME: one system never solves anything (no variance): rho is NaN
        warnings.simplefilter("ignore", evalci.DegenerateDataWarning)
        est = evalci.icc(
            data,
            cluster="input_id",
            system="system",
            successes="n_correct",
            trials="n_runs",
        )
    assert len(est) == data["system"].nunique()
    pooled = data.groupby("system")[["n_correct", "n_runs"]].sum()
    pbar = (pooled.n_correct / pooled.n_runs).reindex(est["system"]).to_numpy()
    N, n = est["n_inputs"].to_numpy(float), est["n_runs"].to_numpy()
    msb, msw, k0 = est["msb"].to_numpy(), est["msw"].to_numpy(), est["k0"].to_numpy()
    total = est["sigma2_between_raw"] + est["sigma2_within"]
    expected = pbar * (1 - pbar) + msb * (1 / k0 - (N - 1) / n) + msw * (N / n - 1 / k0)
    np.testing.assert_allclose(total, expected, rtol=1e-9, atol=1e-12)
    # the O(1/N) term is small: total within 2/N (relative) of pbar (1 - pbar)
    ok = pbar * (1 - pbar) > 0
    np.testing.assert_allclose(total[ok], (pbar * (1 - pbar))[ok], rtol=2 / N[0])
    # sane ranges: variances of 0/1 outcomes lie in [0, 1/4]; rho in [0, 1]
    fin = est["rho"].notna()
    assert est.loc[fin, "rho"].between(0, 1).all()
    assert (est["sigma2_within"] <= 0.25 + 1e-12).all()
    assert (est["sigma2_between"] <= 0.25 + 1e-12).all()
    assert (est["sigma2_between"] >= 0).all() and (est["sigma2_within"] >= 0).all()
    if name.startswith("cruxeval"):
        # 31 systems x 800 inputs x 10 runs at T = 0.2: mostly data noise
        assert est["rho"].median() == pytest.approx(0.89, abs=0.02)
        assert (est["rho"] > 0.5).all()
        assert (est["mean_k"] == 10).all() and (est["k0"] == 10).all()
    if name.startswith("math500"):
        assert (est["n_inputs"] == 500).all()
        assert est["rho"].between(0.02, 0.8).all()


def test_real_data_k_matters_little_when_rho_is_high():
    # CRUXEval at T = 0.2: rho about 0.9, so 10 runs barely narrow the
    # interval (factor >= sqrt(rho) ~ 0.94 vs 1 run) -- seed 000's "high end".
    data = shared_data("cruxeval_output_T0.2_counts.csv")
    one = data[data.system == "gpt-4-0613"]
    if one.empty:
        pytest.skip("system gpt-4-0613 not in this copy of the data")
    t = evalci.width_table(
        one, cluster="input_id", successes="n_correct", trials="n_runs"
    )
    assert list(t["k"]) == list(range(1, 11))
    assert t["predicted_factor"].iloc[-1] > 0.9


# ================================================================ width table
def test_width_table_predicted_columns():
    df = simulate.confusion_model(300, 4, rng=9)
    t = evalci.width_table(df, "correct", "input_id", ks=[2, 8])
    assert list(t["k"]) == [1, 2, 8]  # 1 is always added
    est = evalci.icc(df, "correct", "input_id").iloc[0]
    np.testing.assert_allclose(
        t["predicted_factor"], evalci.width_factor(est["rho"], [1, 2, 8])
    )
    np.testing.assert_allclose(
        t["predicted_width"],
        evalci.predict_width(
            est["sigma2_between"], est["sigma2_within"], 300, [1, 2, 8]
        ),
    )
    assert "observed_width" not in t


@pytest.mark.slow
def test_width_table_observed_matches_predicted_seed000():
    # Seed 000's table (N = 200, k up to 5): observed factors 0.71 / 0.59 /
    # 0.47 against predicted 0.72 / 0.59 / 0.47. We average the observed
    # factor over 64 seeded data sets (by="trial"): the SD of one data set's
    # factor is up to 0.04 (Monte Carlo error of a percentile width at
    # B = 2000, the 1/N grid of the k'=1 widths, data noise), so of the mean
    # 0.005; we allow 0.02 (4 SD).
    T, N, K = 64, 200, 5
    labels, preds = simulate.confusion_model_arrays(T, N, K, rng=10)
    df = pd.DataFrame(
        {
            "trial": np.repeat(np.arange(T), N * K),
            "input_id": np.tile(np.repeat(np.arange(N), K), T),
            "correct": (preds == labels[..., None]).astype(int).reshape(-1),
        }
    )
    t = evalci.width_table(
        df,
        "correct",
        "input_id",
        by="trial",
        ks=[1, 2, 3, 5],
        observed=True,
        n_resamples=2000,
        rng=0,
    )
    mean = t.groupby("k")["observed_factor"].mean()
    np.testing.assert_allclose(mean.loc[[2, 3, 5]], [0.716, 0.592, 0.469], atol=0.02)
    # observed widths near the predicted widths (normal approximation)
    ratio = (t["observed_width"] / t["predicted_width"]).groupby(t["k"]).mean()
    np.testing.assert_allclose(ratio, 1.0, atol=0.03)


def test_width_table_observed_counts_subsampling():
    # Counts: runs are drawn one by one without replacement from the urn of
    # successes. At k' = k all runs are kept, so the observed width equals the
    # cluster bootstrap of the full (expanded) data with the same seed.
    df = clustered(n=120, k=5, seed=11)
    one = df[df.system == "sys0"]
    counts = to_counts(one, keys=("input_id",))
    t = evalci.width_table(
        counts,
        cluster="input_id",
        successes="n_correct",
        trials="n_runs",
        observed=True,
        n_resamples=500,
        rng=4,
    )
    from evalci.engine.resampling import seed_sequence

    boot = int(seed_sequence(4).spawn(2)[1].generate_state(1)[0])
    full = evalci.cluster_ci(
        expand_counts(counts, keys=("input_id",)),
        "correct",
        "input_id",
        n_resamples=500,
        rng=boot,
    )
    assert t["observed_width"].iloc[-1] == pytest.approx(
        full.high - full.low, rel=1e-12
    )
    # rows: the k'-run subsample of each input is nested in the (k'+1)-run one
    t2 = evalci.width_table(
        one, "correct", "input_id", observed=True, n_resamples=500, rng=4
    )
    assert t2["observed_width"].iloc[-1] == pytest.approx(
        full.high - full.low, rel=1e-12
    )
    assert t2["observed_factor"].iloc[0] == 1.0


def test_subsample_counts_is_hypergeometric():
    # mean successes among k' draws without replacement is k' c / n
    n = np.full(20_000, 10)
    c = np.tile(np.arange(11), 20_000 // 11 + 1)[:20_000]
    data = pd.DataFrame({"i": np.arange(20_000), "c": c, "n": n})
    src = Source(None, ["i"], [], None, "c", "n")
    gb, gc, rank, y = observed_widths._subsample(
        data, src, np.zeros(20_000, np.int64), np.arange(20_000), 4, 0
    )
    got = np.bincount(gc, weights=y, minlength=20_000)
    # SD of the mean of 20,000 hypergeometric(4 of 10) counts <= 0.007
    assert got.mean() == pytest.approx((4 * c / 10).mean(), abs=0.03)
    assert got.max() <= 4 and (got <= c).all() and (4 - got <= 10 - c).all()


# ===================================================================== plan()
def brute_force(
    sb,
    sw,
    ci,
    cr,
    *,
    budget=None,
    target=None,
    max_k,
    n_max=20_000,
    z=1.959963984540054,
):
    """Best (N, k) over a full grid N = 2..n_max, k = 1..max_k."""
    N = np.arange(2, n_max + 1)[:, None]
    k = np.arange(1, max_k + 1)[None, :]
    width = 2 * z * np.sqrt((sb + sw / k) / N)
    cost = N * (ci + k * cr)
    if budget is not None:
        w = np.where(cost <= budget + 1e-9, width, np.inf)
        i, j = np.unravel_index(np.argmin(w), w.shape)
    else:
        c = np.where(width <= target + 1e-12, cost, np.inf)
        best = c.min()
        cand = np.argwhere(c == best)
        i, j = min(cand, key=lambda ij: width[ij[0], ij[1]])
    return int(N[i, 0]), int(k[0, j]), float(width[i, j]), float(cost[i, j])


CASES = [  # sigma2_B, sigma2_W, cost_input, cost_run
    (SB_SEED000, SW_SEED000, 20, 1),  # seed 000's model, inputs expensive
    (0.13, 0.086, 10, 1),  # GPQA-like rho 0.6
    (0.1, 0.1, 1, 1),
    (0.02, 0.2, 0, 1),  # new inputs free: k = 1
    (0.2, 0.03, 3, 0.5),  # CRUXEval-like rho 0.87
]


@pytest.mark.parametrize("sb, sw, ci, cr", CASES)
@pytest.mark.parametrize("budget", [777, 5000])
def test_plan_budget_against_grid(sb, sw, ci, cr, budget):
    p = evalci.plan(sb, sw, cost_input=ci, cost_run=cr, budget=budget)
    N, k, w, c = brute_force(sb, sw, ci, cr, budget=budget, max_k=len(p.alternatives))
    assert (p.n_inputs, p.k) == (N, k)
    assert p.width == pytest.approx(w, rel=1e-12) and p.cost <= budget
    assert p.alternatives["best"].sum() == 1


@pytest.mark.parametrize("sb, sw, ci, cr", CASES)
@pytest.mark.parametrize("target", [0.03, 0.08])
def test_plan_target_against_grid(sb, sw, ci, cr, target):
    p = evalci.plan(sb, sw, cost_input=ci, cost_run=cr, target_width=target)
    N, k, w, c = brute_force(sb, sw, ci, cr, target=target, max_k=len(p.alternatives))
    assert p.cost == pytest.approx(c, rel=1e-12)
    assert (p.n_inputs, p.k) == (N, k)
    assert p.width <= target


def test_plan_k_star_is_the_optimum_for_large_budgets():
    # with a large budget, rounding N is negligible: k is floor or ceil of k*
    for sb, sw, ci, cr in CASES:
        p = evalci.plan(sb, sw, cost_input=ci, cost_run=cr, budget=1e8)
        ks = math.sqrt(sw * ci / (sb * cr))
        assert p.k_star == pytest.approx(ks)
        assert p.k in {max(1, math.floor(ks)), max(1, math.ceil(ks))}


def test_plan_fixed_inputs_and_the_floor():
    # N fixed at 200 (seed 000's N): floor 2 z sqrt(sigma2_B / N) = 0.0201
    p = evalci.plan(
        SB_SEED000, SW_SEED000, n_inputs=200, target_width=0.05, cost_run=1
    )
    assert p.fixed_n_inputs and p.n_inputs == 200
    assert p.floor_width == pytest.approx(
        2 * 1.959964 * math.sqrt(SB_SEED000 / 200), rel=1e-6
    )
    widths = evalci.predict_width(SB_SEED000, SW_SEED000, 200, np.arange(1, 50))
    assert p.k == int(np.argmax(widths <= 0.05)) + 1  # smallest k that reaches it
    assert p.width <= 0.05 and p.cost == 200 * p.k
    low = evalci.plan(SB_SEED000, SW_SEED000, n_inputs=200, target_width=0.02)
    assert not low.feasible and low.k is None
    assert "below the floor" in low.note and "below the floor" in repr(low)
    # a budget with fixed N buys the largest affordable k
    b = evalci.plan(
        SB_SEED000, SW_SEED000, n_inputs=200, budget=1000, cost_run=1, cost_input=0
    )
    assert b.k == 5 and b.cost == 1000
    assert b.width == pytest.approx(
        evalci.predict_width(SB_SEED000, SW_SEED000, 200, 5)
    )
    poor = evalci.plan(SB_SEED000, SW_SEED000, n_inputs=200, budget=100, cost_run=1)
    assert not poor.feasible and "does not pay for one run" in poor.note
    # a target just above the floor needs many runs; near the floor note
    near = evalci.plan(0.13, 0.086, n_inputs=198, target_width=0.104)
    assert near.feasible and near.k > 5 and "within 5% of the floor" in near.note


def test_plan_from_data_uses_icc():
    df = evalci.load_example()
    one = df[df.system == df.system.iloc[0]]
    est = evalci.icc(one, "correct", "input_id").iloc[0]
    p = evalci.plan_from_data(
        one, "correct", "input_id", cost_input=10, cost_run=1, budget=3000
    )
    q = evalci.plan(
        est["sigma2_between"],
        est["sigma2_within"],
        cost_input=10,
        cost_run=1,
        budget=3000,
    )
    assert (p.n_inputs, p.k, p.width) == (q.n_inputs, q.k, q.width)
    by = evalci.plan_from_data(
        df, "correct", "input_id", by="system", n_inputs="data", target_width=0.12
    )
    assert list(by.columns[:3]) == ["system", "n_inputs", "k"]
    assert (by["n_inputs"] == 198).all() and by["feasible"].all()


def test_plan_repr_and_frame():
    p = evalci.plan(0.13, 0.086, cost_input=10, cost_run=1, budget=5000)
    text = repr(p)
    assert text.startswith("Plan: narrowest 95% interval for a budget of 5000")
    assert f"N = {p.n_inputs} inputs x k = {p.k} runs" in text
    frame = p.to_frame()
    assert list(frame.columns) == [
        "k",
        "n_inputs",
        "runs",
        "width",
        "cost",
        "feasible",
        "best",
    ]
    assert frame.loc[frame.best, "k"].item() == p.k


# ============================================================ sample size
def test_sample_size_seed004_worked_example():
    # Seed 004: "To detect 80% vs 83% (Delta = 3 points): 7.84 x (0.16 +
    # 0.141) / 0.0009 ~ 2,600 items per system" (z rounded to 1.96 + 0.84;
    # their arithmetic gives 2,622). Exact z quantiles give 2,626.
    assert 7.84 * (0.16 + 0.141) / 0.0009 == pytest.approx(2622, abs=1)
    n = evalci.sample_size(0.80, 0.83)
    assert n == 2626
    assert n == pytest.approx(2600, rel=0.02)
    # rule of thumb: "a 200-item eval can reliably detect differences of around
    # 10 points"
    assert evalci.minimum_detectable_effect(200, p=0.80) == pytest.approx(
        0.10, abs=0.01
    )


def test_sample_size_paired_connor_with_runs():
    # Connor (1987): n = (z_a sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2;
    # by hand: (1.959964 sqrt(0.1) + 0.841621 sqrt(0.0991))^2 / 0.0009 = 869.8.
    # It sizes the *uncorrected* McNemar test; evalci uses it only with k > 1
    # runs (where mcnemar does not apply), times the design effect.
    za, zb = 1.959963985, 0.841621234
    by_hand = (za * math.sqrt(0.1) + zb * math.sqrt(0.1 - 0.0009)) ** 2 / 0.0009
    assert by_hand == pytest.approx(869.8, abs=0.1)
    deff = 0.5 + 0.5 / 3
    n = evalci.sample_size(0.80, 0.83, paired=True, discordance=0.10, k=3, rho=0.5)
    assert n == math.ceil(by_hand * deff)
    # sd_diff form with the same variance as the independent design: same n
    sd = math.sqrt(0.8 * 0.2 + 0.83 * 0.17)
    assert evalci.sample_size(0.80, 0.83, paired=True, sd_diff=sd) == 2626
    # paired with few disagreements needs far fewer inputs (seed 004)
    assert evalci.sample_size(0.80, 0.83, paired=True, discordance=0.05) < 500


# McNemar as evalci.mcnemar runs it (exact=None), written independently:
# scipy's binomial test below 25 discordant inputs, else the
# continuity-corrected chi-squared (Edwards 1948); reject when p <= alpha.
@functools.cache
def mcnemar_p(n01, n10):
    m = n01 + n10
    if m == 0:
        return 1.0
    if m < 25:
        return stats.binomtest(n10, m, 0.5).pvalue
    return stats.chi2.sf((abs(n01 - n10) - 1) ** 2 / m, 1)


def mcnemar_power_reference(n, psi, delta, alpha=0.05, alternative="two-sided"):
    """Exact power: m ~ Binomial(n, psi) discordant, n01 | m ~ Binomial(m, q).

    One-sided: mcnemar's p-value halved when the gap has the planned sign.
    """
    q = (psi + delta) / (2 * psi)
    total = 0.0
    for m in range(n + 1):
        pm = stats.binom.pmf(m, n, psi)
        if pm < 1e-16:
            continue
        x = np.arange(m + 1)
        if m < 25:
            p = np.array([mcnemar_p(int(a), m - int(a)) for a in x])
        else:
            p = stats.chi2.sf((np.abs(2 * x - m) - 1) ** 2 / m, 1)
        if alternative == "two-sided":
            rej = p <= alpha
        else:
            sign = 1 if alternative == "greater" else -1
            rej = (sign * (2 * x - m) > 0) & (p <= 2 * alpha)
        total += pm * stats.binom.pmf(x, m, q)[rej].sum()
    return total


def test_mcnemar_reference_rule_is_evalcis_rule():
    # the reference above decides as evalci.mcnemar does, on both sides of the
    # exact / chi-squared switch at 25 discordant inputs
    for m in (0, 5, 6, 17, 24, 25, 26, 40):
        for n01 in range(m + 1):
            n10 = m - n01
            a = np.r_[np.zeros(n01), np.ones(n10), np.ones(3), np.zeros(2)]
            b = np.r_[np.ones(n01), np.zeros(n10), np.ones(3), np.zeros(2)]
            n = len(a)
            df = pd.DataFrame(
                {
                    "input_id": np.tile(np.arange(n), 2),
                    "system": np.repeat(["A", "B"], n),
                    "correct": np.r_[a, b].astype(int),
                }
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", evalci.DegenerateDataWarning)
                r = evalci.mcnemar(df, "correct", "input_id", "system", "A", "B")
            assert r.pvalue == pytest.approx(mcnemar_p(n01, n10), rel=1e-9)


@pytest.mark.parametrize(
    "p1, p2, psi, alternative",
    [
        (0.80, 0.83, 0.10, "two-sided"),  # the docstring example: 925 (Connor 870)
        (0.70, 0.75, 0.12, "two-sided"),
        (0.50, 0.80, 0.40, "two-sided"),  # n ~ 30: mostly the exact test
        (0.70, 0.74, 0.15, "greater"),
        (0.74, 0.70, 0.15, "less"),
    ],
)
def test_paired_sample_size_reaches_the_power_of_mcnemar(p1, p2, psi, alternative):
    kw = dict(paired=True, discordance=psi, alternative=alternative)
    n = evalci.sample_size(p1, p2, **kw)
    delta = p2 - p1
    at_n = mcnemar_power_reference(n, psi, delta, alternative=alternative)
    assert at_n >= 0.8
    assert mcnemar_power_reference(n - 1, psi, delta, alternative=alternative) < 0.8
    # power() gives the same exact power; the MDE at n inverts it
    assert evalci.power(p1, p2, n, **kw) == pytest.approx(at_n, abs=1e-10)
    d = evalci.minimum_detectable_effect(n, **kw)
    assert d <= abs(delta) + 1e-12
    sign = 1 if delta > 0 else -1
    assert mcnemar_power_reference(
        n, psi, sign * d, alternative=alternative
    ) == pytest.approx(0.8, abs=1e-8)
    # Connor's formula sizes the uncorrected test: mcnemar falls short there
    za = stats.norm.ppf(0.975 if alternative == "two-sided" else 0.95)
    zb = stats.norm.ppf(0.8)
    connor = math.ceil(
        (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2
    )
    if connor > 50:
        assert connor < n
        assert (
            mcnemar_power_reference(connor, psi, delta, alternative=alternative) < 0.79
        )


def test_paired_sample_size_is_the_smallest_n():
    # brute force over every smaller n (small case, exact test below 25 pairs)
    n = evalci.sample_size(0.50, 0.80, paired=True, discordance=0.40)
    powers = [mcnemar_power_reference(m, 0.40, 0.30) for m in range(1, n)]
    assert max(powers) < 0.8 <= mcnemar_power_reference(n, 0.40, 0.30)
    with pytest.raises(ValueError, match=r"`n_inputs` must be an integer >= 1"):
        evalci.power(0.5, 0.8, 30.5, paired=True, discordance=0.4)


def test_sample_size_design_effect():
    # the variance is multiplied by rho + (1 - rho) / k
    base = (1.959963985 + 0.841621234) ** 2 * (0.16 + 0.83 * 0.17) / 0.0009
    for k, rho in [(1, None), (5, 0.6), (3, 0.0), (10, 1.0)]:
        deff = 1.0 if k == 1 else rho + (1 - rho) / k
        assert evalci.sample_size(0.80, 0.83, k=k, rho=rho) == math.ceil(
            base * deff - 1e-9
        )
    # one-sided: z_(1 - alpha)
    one = (1.644853627 + 0.841621234) ** 2 * (0.16 + 0.83 * 0.17) / 0.0009
    assert evalci.sample_size(0.80, 0.83, alternative="greater") == math.ceil(one)
    assert evalci.sample_size(0.83, 0.80, alternative="less") == math.ceil(one)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(k=5, rho=0.3),
        dict(paired=True, discordance=0.12),
        dict(paired=True, sd_diff=0.4, k=3, rho=0.5),
    ],
)
def test_power_mde_and_sample_size_are_inverses(kwargs):
    n = evalci.sample_size(0.70, 0.75, **kwargs)
    assert evalci.power(0.70, 0.75, n, **kwargs) >= 0.8
    assert evalci.power(0.70, 0.75, n - 1, **kwargs) < 0.8 + 1e-3
    mde_kw = {k: v for k, v in kwargs.items()}
    if not kwargs.get("paired"):
        mde_kw["p"] = 0.70
    d = evalci.minimum_detectable_effect(n, **mde_kw)
    assert d <= 0.05 + 1e-9
    assert d == pytest.approx(0.05, rel=0.01)  # n was rounded up
    # at the MDE the sample size is n again (continuous inverse)
    assert evalci.sample_size(0.70, 0.70 + d, **kwargs) == n


def test_mde_sigma2_and_nan():
    d = evalci.minimum_detectable_effect(500, sigma2=0.21)
    assert d == pytest.approx((1.959963985 + 0.841621234) * math.sqrt(2 * 0.21 / 500))
    assert np.isnan(evalci.minimum_detectable_effect(3, p=0.99))


def _simulated_power(rng, n, k, rho_beta, p1, p2, trials=4000):
    """Share of z-tests on input means (k runs, beta-binomial inputs) rejecting."""

    def draw(p):
        if rho_beta == 0:
            q = np.full((trials, n), p)
        else:  # beta(a, b) with mean p and ICC rho: a + b = 1/rho - 1
            s = 1 / rho_beta - 1
            q = rng.beta(p * s, (1 - p) * s, (trials, n))
        return rng.binomial(k, q) / k

    a, b = draw(p1), draw(p2)
    se = np.sqrt(a.var(axis=1, ddof=1) / n + b.var(axis=1, ddof=1) / n)
    return np.mean(np.abs(b.mean(1) - a.mean(1)) / se > 1.959964)


@pytest.mark.slow
def test_power_calibration_by_simulation():
    # Simulated power of the tests the formulas describe, at the computed n.
    # 4,000 seeded trials: SD of a power near 0.8 is 0.0063; we allow 0.03
    # (4.7 SD) -- it also absorbs the normal approximation.
    rng = np.random.default_rng(12)
    n = evalci.sample_size(0.70, 0.76)
    assert _simulated_power(rng, n, 1, 0, 0.70, 0.76) == pytest.approx(0.8, abs=0.03)
    n = evalci.sample_size(0.70, 0.76, k=4, rho=0.4)
    assert _simulated_power(rng, n, 4, 0.4, 0.70, 0.76) == pytest.approx(0.8, abs=0.03)
    # paired: evalci.mcnemar itself on simulated tables at the n sized for it
    # (the first 300 trials; SD of a power near 0.8 is 0.023, we allow 0.07,
    # 3 SD: false-failure rate about 0.3%), then its rule on all 4,000
    psi, delta = 0.15, 0.04
    n = evalci.sample_size(0.70, 0.74, paired=True, discordance=psi)
    probs = [(psi + delta) / 2, (psi - delta) / 2, 1 - psi]  # only b, only a, agree
    counts = rng.multinomial(n, probs, size=4000)
    n01, n10 = counts[:, 0], counts[:, 1]
    exact = evalci.power(0.70, 0.74, n, paired=True, discordance=psi)
    decided = []
    for b_only, a_only, agree in counts[:300]:
        a = np.r_[np.zeros(b_only), np.ones(a_only), np.ones(agree)]
        b = np.r_[np.ones(b_only), np.zeros(a_only), np.ones(agree)]
        df = pd.DataFrame(
            {
                "input_id": np.tile(np.arange(n), 2),
                "system": np.repeat(["A", "B"], n),
                "correct": np.r_[a, b].astype(int),
            }
        )
        r = evalci.mcnemar(df, "correct", "input_id", "system", "A", "B")
        decided.append(r.pvalue <= 0.05)
    assert np.mean(decided) == pytest.approx(exact, abs=0.07)
    m = n01 + n10
    assert m.min() >= 25  # E m = 116: mcnemar's corrected chi-squared throughout
    rejected = stats.chi2.sf((np.abs(n01 - n10) - 1) ** 2 / m, 1) <= 0.05
    assert np.array_equal(rejected[:300], decided)
    assert rejected.mean() == pytest.approx(exact, abs=0.03)
    assert exact >= 0.8


def test_from_data_functions():
    df = evalci.load_example()
    a, b = sorted(df.system.unique())
    est = evalci.icc(df, "correct", "input_id", system="system", pairs=[(a, b)])
    d = est.iloc[2]
    sd = math.sqrt(d["sigma2_between"] + d["sigma2_within"])
    n = evalci.sample_size_from_data(
        df, "correct", "input_id", system="system", pair=(a, b), effect=-0.05
    )
    assert n["n_inputs"].item() == evalci.sample_size(
        est["mean"].iloc[0],
        est["mean"].iloc[0] - 0.05,
        paired=True,
        sd_diff=sd,
        k=5,
        rho=d["rho"],
    )
    m = evalci.mde_from_data(df, "correct", "input_id", system="system", pair=(a, b))
    assert m["mde"].item() == pytest.approx(
        evalci.minimum_detectable_effect(
            198, paired=True, sd_diff=sd, k=5, rho=d["rho"]
        )
    )
    ind = evalci.mde_from_data(
        df, "correct", "input_id", system="system", n_inputs=1000, k=1
    )
    assert list(ind["system"]) == [a, b] and (ind["k"] == 1).all()
    assert ind["mde"].iloc[0] == pytest.approx(
        evalci.minimum_detectable_effect(1000, p=est["mean"].iloc[0])
    )
    counts = to_counts(df)
    via_counts = evalci.sample_size_from_data(
        counts,
        cluster="input_id",
        system="system",
        successes="n_correct",
        trials="n_runs",
        effect=0.03,
    )
    via_rows = evalci.sample_size_from_data(
        df, "correct", "input_id", system="system", effect=0.03
    )
    pd.testing.assert_frame_equal(via_counts, via_rows)


# ===================================================================== errors
@pytest.fixture
def small():
    return clustered(n=12, k=3, seed=13)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            dict(value="corect", cluster="input_id"),
            r"`value`: column 'corect' is not in",
        ),
        (dict(value="correct", cluster="qid"), r"`cluster`: column 'qid' is not in"),
        (dict(value="correct"), r"`cluster` is required"),
        (dict(cluster="input_id"), r"`value` is required"),
        (
            dict(value="correct", cluster="input_id", successes="correct"),
            r"`successes` and `trials` go together",
        ),
        (
            dict(
                value="correct", cluster="input_id", successes="correct", trials="run"
            ),
            r"either `value` .* or `successes`/`trials`",
        ),
        (
            dict(value="correct", cluster="input_id", by="input_id"),
            r"`cluster` column 'input_id' is also a group",
        ),
        (
            dict(value="correct", cluster="input_id", pairs="all"),
            r"`pairs` needs `system=`",
        ),
        (
            dict(
                value="correct",
                cluster="input_id",
                system="system",
                pairs=[("sys0", "x")],
            ),
            r"`pairs`: system 'x' is not in column 'system'",
        ),
        (
            dict(value="correct", cluster="input_id", system="system", pairs="some"),
            r"`pairs` must be 'all' or a list",
        ),
        (
            dict(value="input_id", cluster="run"),
            r"`value` column 'input_id' is not numeric",
        ),
        (
            dict(cluster="input_id", successes="run", trials="correct"),
            r"`trials` column 'correct' has \d+ rows with no runs",
        ),
    ],
)
def test_icc_argument_errors(small, kwargs, match):
    with pytest.raises(ValueError, match=match):
        evalci.icc(small, **kwargs)


def test_icc_degenerate_data():
    k1 = pd.DataFrame({"input_id": range(10), "correct": [0, 1] * 5})
    with pytest.raises(ValueError, match=r"no group has 2\+ inputs with 2\+ runs"):
        evalci.icc(k1, "correct", "input_id")
    df = clustered(n=20, k=3, seed=14)
    df.loc[df.system == "sys1", "correct"] = 1
    with pytest.warns(evalci.DegenerateDataWarning, match=r"'sys1': every outcome"):
        est = evalci.icc(df, "correct", "input_id", system="system")
    assert np.isnan(est["rho"].iloc[1]) and est["rho"].notna().iloc[0]
    with pytest.raises(TypeError, match=r"`data` must be a pandas DataFrame"):
        evalci.icc(df.to_numpy(), "correct", "input_id")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: evalci.width_factor(1.5, 2), r"`rho` must be in \[0, 1\]"),
        (lambda: evalci.width_factor(0.2, 0), r"`k` must be in \[1, inf\)"),
        (lambda: evalci.predict_width(0.1, 0.1, 0, 2), r"`n_inputs` must be in \(0"),
        (
            lambda: evalci.predict_width(0.1, 0.1, 10, 2, confidence_level=95),
            r"`confidence_level` must be in \(0, 1\)",
        ),
        (
            lambda: evalci.plan(0.1, 0.1, cost_input=1, cost_run=1),
            r"exactly one of `budget` .* or `target_width`",
        ),
        (
            lambda: evalci.plan(0.1, 0.1, budget=100),
            r"`cost_input` and `cost_run` are required",
        ),
        (lambda: evalci.plan(0, 0, cost_input=1, cost_run=1, budget=10), r"both 0"),
        (
            lambda: evalci.plan(-0.1, 0.1, cost_input=1, cost_run=1, budget=10),
            r"`sigma2_between` must be in \[0",
        ),
        (
            lambda: evalci.plan(0.1, 0.1, cost_input=1, cost_run=0, budget=10),
            r"`cost_run` must be in \(0",
        ),
        (
            lambda: evalci.plan(0.1, 0.1, n_inputs=1, target_width=0.1),
            r"`n_inputs` must be an integer >= 2",
        ),
        (
            lambda: evalci.plan(0.1, 0.1, n_inputs=100, budget=1000),
            r"`cost_run` is required",
        ),
        (
            lambda: evalci.plan(
                0.1, 0.1, cost_input=1, cost_run=1, budget=10, max_k=0
            ),
            r"`max_k` must be an integer >= 1",
        ),
        (lambda: evalci.sample_size(0.8, 0.8), r"`p1` and `p2` are equal"),
        (lambda: evalci.sample_size(0.8, 1.2), r"`p2` must be in \(0, 1\)"),
        (lambda: evalci.sample_size(0.8, 0.83, k=5), r"`rho` is required with k = 5"),
        (
            lambda: evalci.sample_size(0.8, 0.83, discordance=0.1),
            r"describe a paired design .* paired=True",
        ),
        (
            lambda: evalci.sample_size(0.8, 0.83, paired=True),
            r"paired=True needs exactly one of `discordance`",
        ),
        (
            lambda: evalci.sample_size(0.8, 0.83, paired=True, discordance=0.01),
            r"`discordance` = 0.01 is smaller than \|p2 - p1\|",
        ),
        (
            lambda: evalci.sample_size(0.8, 0.83, paired=True, discordance=0.6),
            r"`discordance` = 0.6 is impossible",
        ),
        (
            lambda: evalci.sample_size(0.8, 0.83, alternative="less"),
            r"alternative='less' tests p2 < p1",
        ),
        (
            lambda: evalci.sample_size(0.8, 0.83, alternative="bigger"),
            r"`alternative` must be one of",
        ),
        (
            lambda: evalci.sample_size(0.8, 0.83, power=80),
            r"`power` must be in \(0, 1\)",
        ),
        (
            lambda: evalci.sample_size(0.8, 0.83, alpha=0),
            r"`alpha` must be in \(0, 1\)",
        ),
        (
            lambda: evalci.minimum_detectable_effect(100),
            r"exactly one of `p` .* `sigma2`",
        ),
        (
            lambda: evalci.minimum_detectable_effect(
                100, p=0.5, paired=True, sd_diff=0.3
            ),
            r"`p` and `sigma2` describe the independent design",
        ),
    ],
)
def test_planning_argument_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_from_data_argument_errors(small):
    with pytest.raises(ValueError, match=r"`pair` needs `system=`"):
        evalci.mde_from_data(small, "correct", "input_id", pair=("sys0", "sys1"))
    with pytest.raises(ValueError, match=r"`effect`: p1 \+ effect = "):
        evalci.sample_size_from_data(small, "correct", "input_id", effect=0.9)
    with pytest.raises(
        ValueError, match=r"`n_inputs` must be an integer, None .* 'data'"
    ):
        evalci.plan_from_data(
            small, "correct", "input_id", n_inputs="all", target_width=0.1
        )
    with pytest.raises(ValueError, match=r"`ks` must be a sequence of integers >= 1"):
        evalci.width_table(small, "correct", "input_id", ks=[0, 2])
    with pytest.raises(ValueError, match=r"`n_resamples` must be a positive integer"):
        evalci.width_table(small, "correct", "input_id", observed=True, n_resamples=0)


# ================================================================= accessors
@pytest.mark.parametrize(
    "method, args, kwargs",
    [
        ("icc", ("correct", "input_id"), dict(system="system", pairs="all")),
        ("width_table", ("correct", "input_id"), dict(by="system")),
        (
            "plan",
            ("correct", "input_id"),
            dict(by="system", n_inputs="data", target_width=0.12),
        ),
        ("sample_size", ("correct", "input_id"), dict(system="system", effect=0.03)),
        ("mde", ("correct", "input_id"), dict(system="system")),
    ],
)
def test_accessor_forwards(gpqa, method, args, kwargs):
    acc = gpqa.evalci
    func = {
        "icc": evalci.icc,
        "width_table": evalci.width_table,
        "plan": evalci.plan_from_data,
        "sample_size": evalci.sample_size_from_data,
        "mde": evalci.mde_from_data,
    }[method]
    pd.testing.assert_frame_equal(
        getattr(acc, method)(*args, **kwargs), func(gpqa, *args, **kwargs)
    )


def test_dataarray_accessor_matches_dataframe(gpqa):
    da = gpqa.evalci.to_xarray("correct")
    from_da = da.evalci.icc(system="system")
    from_df = gpqa.evalci.icc("correct", "input_id", system="system")
    np.testing.assert_allclose(
        from_da[["msb", "msw", "rho_raw"]].to_numpy(),
        from_df[["msb", "msw", "rho_raw"]].to_numpy(),
    )


def test_top_level_power_functions():
    # seed 004: 80% vs 83% needs about 2,600 inputs per system
    n = evalci.sample_size(0.80, 0.83)
    assert 2500 <= n <= 2700
    mde = evalci.minimum_detectable_effect(n, p=0.80)
    assert mde == pytest.approx(0.03, abs=0.002)


# ===================================================== inf and bad numbers
def _counts(df):
    return df.groupby(["input_id", "system"], as_index=False).agg(
        n_correct=("correct", "sum"), n_runs=("correct", "size")
    )


PILOT_CALLS = {
    "icc": lambda d, **kw: evalci.icc(d, **kw),
    "width_table": lambda d, **kw: evalci.width_table(d, **kw),
    "plan_from_data": lambda d, **kw: evalci.plan_from_data(
        d, target_width=0.1, n_inputs="data", **kw
    ),
    "sample_size_from_data": lambda d, **kw: evalci.sample_size_from_data(
        d, effect=0.05, **kw
    ),
    "mde_from_data": lambda d, **kw: evalci.mde_from_data(d, **kw),
}


@pytest.mark.parametrize("entry", sorted(PILOT_CALLS))
@pytest.mark.parametrize("column", ["correct", "n_correct", "n_runs"])
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_pilot_entry_points_refuse_inf(small, entry, column, bad):
    one = small[small.system == "sys0"]
    if column == "correct":
        data = one.assign(correct=one.correct.astype(float))
        kw = dict(value="correct", cluster="input_id")
        name = "value"
    else:
        data = _counts(one).astype({column: float})
        kw = dict(cluster="input_id", successes="n_correct", trials="n_runs")
        name = "successes" if column == "n_correct" else "trials"
    data.loc[data.index[2], column] = bad
    before = data.copy()
    with pytest.raises(
        ValueError, match=rf"`{name}` column '{column}' has 1 infinite values"
    ):
        PILOT_CALLS[entry](data, **kw)
    pd.testing.assert_frame_equal(data, before)  # never modified


@pytest.mark.parametrize("bad", ["0.05", np.inf, np.nan, True])
@pytest.mark.parametrize(
    "call, name",
    [
        (
            lambda v: evalci.plan(0.1, 0.1, cost_input=1, cost_run=1, budget=v),
            "budget",
        ),
        (
            lambda v: evalci.plan(0.1, 0.1, n_inputs=100, target_width=v),
            "target_width",
        ),
        (
            lambda v: evalci.plan(0.1, 0.1, cost_input=v, cost_run=1, budget=99),
            "cost_input",
        ),
        (
            lambda v: evalci.plan(0.1, 0.1, cost_input=1, cost_run=v, budget=99),
            "cost_run",
        ),
        (lambda v: evalci.plan(0.1, 0.1, n_inputs=v, target_width=0.1), "n_inputs"),
        (
            lambda v: evalci.plan(v, 0.1, n_inputs=100, target_width=0.1),
            "sigma2_between",
        ),
        (lambda v: evalci.sample_size(0.8, 0.83, alpha=v), "alpha"),
        (lambda v: evalci.sample_size(0.8, 0.83, power=v), "power"),
        (lambda v: evalci.sample_size(v, 0.83), "p1"),
        (
            lambda v: evalci.sample_size(0.8, 0.83, paired=True, discordance=v),
            "discordance",
        ),
        (lambda v: evalci.sample_size(0.8, 0.83, paired=True, sd_diff=v), "sd_diff"),
        (lambda v: evalci.sample_size(0.8, 0.83, k=v, rho=0.5), "k"),
        (lambda v: evalci.sample_size(0.8, 0.83, k=5, rho=v), "rho"),
        (lambda v: evalci.power(0.8, 0.83, v), "n_inputs"),
        (
            lambda v: evalci.power(0.8, 0.83, v, paired=True, discordance=0.1),
            "n_inputs",
        ),
        (lambda v: evalci.minimum_detectable_effect(v, p=0.8), "n_inputs"),
        (lambda v: evalci.minimum_detectable_effect(100, p=v), "p"),
        (lambda v: evalci.minimum_detectable_effect(100, sigma2=v), "sigma2"),
        (lambda v: evalci.width_factor(v, 3), "rho"),
        (lambda v: evalci.width_factor(0.3, v), "k"),
        (lambda v: evalci.predict_width(0.1, 0.1, v, 3), "n_inputs"),
        (lambda v: evalci.predict_width(0.1, v, 100, 3), "sigma2_within"),
    ],
)
def test_numeric_arguments_refuse_strings_inf_nan(call, name, bad):
    with pytest.raises(ValueError, match=rf"`{name}` must be"):
        call(bad)


@pytest.mark.parametrize("bad", ["0.05", np.inf, np.nan])
@pytest.mark.parametrize(
    "entry, arg",
    [
        ("sample_size_from_data", "effect"),
        ("sample_size_from_data", "alpha"),
        ("sample_size_from_data", "power"),
        ("sample_size_from_data", "k"),
        ("mde_from_data", "n_inputs"),
        ("mde_from_data", "alpha"),
        ("mde_from_data", "power"),
        ("plan_from_data", "budget"),
        ("plan_from_data", "max_k"),
        ("plan_from_data", "confidence_level"),
        ("width_table", "confidence_level"),
        ("width_table", "n_resamples"),
    ],
)
def test_from_data_numbers_checked_before_the_pilot(entry, arg, bad):
    # a pilot where no group has a usable rho (every outcome 1): the
    # arguments used to be checked per usable group only, i.e. never here
    df = clustered(n=12, k=3, seed=13).assign(correct=1)
    kw = dict(value="correct", cluster="input_id", by="system")
    if entry == "plan_from_data":
        kw.update(cost_input=1, cost_run=1)
        kw.setdefault("budget", 100)
    if entry == "sample_size_from_data":
        kw["effect"] = 0.05
    if entry == "width_table":
        kw["observed"] = True
    kw[arg] = bad
    with pytest.raises(ValueError, match=rf"`{arg}` must be"):
        getattr(evalci, entry)(df, **kw)


@pytest.mark.parametrize("ks", [[1, np.inf], [1, np.nan], ["2"], [1.5]])
def test_width_table_refuses_non_integer_ks(small, ks):
    with pytest.raises(ValueError, match=r"`ks` must be a sequence of integers >= 1"):
        evalci.width_table(small, "correct", "input_id", ks=ks)


@pytest.mark.parametrize("ks", [[2, "3"], [2, np.inf], [2, np.nan]])
def test_array_arguments_refuse_strings_inf_nan(ks):
    # np.asarray([2, "3"], dtype=float) would quietly read the string as 3.0
    with pytest.raises(ValueError, match=r"`k` must be"):
        evalci.predict_width(0.1, 0.1, [100, 200], ks)
    with pytest.raises(ValueError, match=r"`k` must be"):
        evalci.width_factor(0.3, ks)


def test_plan_itself_refuses_n_inputs_data():
    # "data" means the pilot's N, so only plan_from_data accepts it
    with pytest.raises(ValueError, match=r"`n_inputs` must be an integer >= 2"):
        evalci.plan(0.1, 0.1, n_inputs="data", target_width=0.1)
