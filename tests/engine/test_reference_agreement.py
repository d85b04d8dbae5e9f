"""The fast engine agrees with slow reference loops (tests/reference.py).

The library and the reference use different random streams, so their
bootstrap distributions are compared *in distribution*: both are Monte Carlo
samples of the same bootstrap distribution (the data set is fixed), and
their mean, standard deviation and 2.5%/97.5% quantiles must agree within
``Z = 4`` Monte Carlo standard errors (see :func:`assert_same_distribution`).
Point estimates involve no randomness (except mode ties, avoided here and
tested separately) and must agree to rounding.

All seeds are fixed, so the tests are deterministic; the stated
false-failure rates say how unlikely a failure would be for a correct engine
under another seed.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pandas as pd
import pytest
from scipy import special

import evalci
from evalci import simulate

from reference import mode_with_ties, reference_bootstrap, weighted_metric

B_LIB = 8_000  # library replicates (cheap)
B_REF = 4_000  # reference replicates (slow loops)
Z = 4.0
EPS = 1e-9  # the two engines add the same fractions in different orders

# Easy and hard variants of seed 000's model, so that strata and unequal k
# change the answer a lot (a bug that ignores them moves the mean or the SD
# far beyond the tolerances).
EASY = np.array([[90, 5, 3, 2], [4, 90, 4, 2], [2, 4, 90, 4], [2, 3, 5, 90]])
HARD = np.array(
    [[40, 30, 20, 10], [25, 40, 25, 10], [10, 25, 40, 25], [10, 20, 30, 40]]
)


# -- data ----------------------------------------------------------------------
def _untie(df: pd.DataFrame, keys=("input_id",)) -> pd.DataFrame:
    """Make every input's modal prediction unique (mode ties are random).

    Where labels tie for the mode, one run predicting the second tied label is
    switched to the first; ``correct`` is recomputed. With an odd number of
    runs the 0/1 majority never ties either, so mode_aggregate is
    deterministic and its bootstrap can be compared in distribution.
    """
    df = df.copy()
    grouper = keys[0] if len(keys) == 1 else list(keys)
    for idx in df.groupby(grouper).groups.values():
        counts = df.loc[idx, "pred"].value_counts()
        tied = sorted(counts.index[counts == counts.max()])
        if len(tied) > 1:
            row = df.loc[idx].index[df.loc[idx, "pred"] == tied[1]][0]
            df.loc[row, "pred"] = tied[0]
    df["correct"] = (df["pred"] == df["label"]).astype(np.int64)
    return df


def _mixture(parts, rng) -> pd.DataFrame:
    """Concatenate ``(n_inputs, k, confusion, domain)`` populations, new input ids."""
    gen = np.random.default_rng(rng)
    frames, offset = [], 0
    for n, k, conf, domain in parts:
        part = simulate.confusion_model(n, k, confusion=conf, rng=gen)
        part["input_id"] += offset
        part["domain"] = domain
        frames.append(part)
        offset += n
    return _untie(pd.concat(frames, ignore_index=True))


PLAIN = _untie(simulate.confusion_model(40, 3, rng=20250101))
K1 = simulate.confusion_model(60, 1, rng=7)
STRATA = _mixture(
    [
        (12, 3, EASY, "easy"),
        (18, 3, simulate.SEED000_CONFUSION, "mid"),
        (20, 3, HARD, "hard"),
    ],
    rng=11,
)
# Easy inputs have 1 run, hard ones 5: input-weighted and run-pooled
# accuracy differ by ~0.2, about 5 bootstrap SDs.
UNEQUAL = _mixture(
    [
        (20, 1, EASY, "easy"),
        (15, 3, simulate.SEED000_CONFUSION, "mid"),
        (15, 5, HARD, "hard"),
    ],
    rng=12,
)

SCENARIOS = {
    "plain": (PLAIN, {}),
    "strata": (STRATA, {"strata": "domain"}),
    "unequal_k_input": (UNEQUAL, {"weight": "input"}),
    "unequal_k_run": (UNEQUAL, {"weight": "run"}),
}
STRATEGIES = ["cluster", "iid", "single_draw", "hierarchical", "mode_aggregate"]


def _two_systems(df: pd.DataFrame, copy_prob: float, rng) -> pd.DataFrame:
    """System A = ``df``; system B copies A's prediction with ``copy_prob``,
    else draws afresh from the seed model given the true label, so the two
    systems' outcomes are correlated per input and per run."""
    gen = np.random.default_rng(rng)
    conf = simulate.SEED000_CONFUSION
    rows = conf / conf.sum(axis=1, keepdims=True)
    fresh = np.array([gen.choice(4, p=rows[lab]) for lab in df["label"]])
    b = df.copy()
    b["pred"] = np.where(gen.random(len(df)) < copy_prob, df["pred"], fresh)
    both = pd.concat([df.assign(system="A"), b.assign(system="B")], ignore_index=True)
    return _untie(both, keys=("input_id", "system"))


BY_DATA = _two_systems(PLAIN, 0.6, rng=13)


# -- helpers -------------------------------------------------------------------
def _max_k(df: pd.DataFrame, by=None) -> int:
    keys = ["input_id"] + ([by] if by else [])
    return int(df.groupby(keys).size().max())


def library(df, value, *, strategy, metric="mean", by=None, cluster="input_id", **kw):
    """``evalci.bootstrap`` with the warnings this call must emit asserted."""
    if strategy == "mode_aggregate":
        ctx = pytest.warns(evalci.EstimandWarning)
    elif strategy == "iid" and cluster is not None and _max_k(df, by) > 1:
        ctx = pytest.warns(evalci.ClusteringIgnoredWarning)
    else:
        ctx = contextlib.nullcontext()
    with ctx:
        return evalci.bootstrap(
            df, value, cluster, strategy=strategy, metric=metric, by=by, **kw
        )


def _metric_args(kind: str):
    """(value column, library metric, reference metric, truth column)."""
    if kind == "mean":
        return "correct", "mean", "mean", None
    if kind == "accuracy":
        return "pred", evalci.metrics.accuracy(truth="label"), "accuracy", "label"
    if kind == "kappa":
        return "pred", evalci.metrics.kappa(truth="label"), "kappa", "label"
    raise ValueError(kind)


def assert_same_distribution(lib, ref, what: str = "") -> None:
    """Two independent Monte Carlo samples of one bootstrap distribution agree.

    Tolerances are ``Z = 4`` standard errors of the difference, from the
    sample sizes ``n1, n2``:

    * mean: SE = sqrt(s1^2/n1 + s2^2/n2);
    * SD: delta method, var(s) ~ (mu4 - sigma^4) / (4 sigma^2 n) (uses the
      kurtosis of the pooled, centred samples, so skewed or lumpy kappa
      distributions get their own, larger, tolerance);
    * 2.5% and 97.5% quantiles, in probability space, which is robust to the
      atoms of accuracy's lattice distribution: the share of the other sample
      below (at or below) one sample's p-quantile must bracket p up to
      Z * sqrt(p (1 - p) (1/n1 + 1/n2)) -- the SD of F(q_hat) - F_hat(q).
      Atoms only widen the bracket [F(<q), F(<=q)], so this is conservative.

    Each of these is asymptotically normal, so a correct engine fails one
    assertion with probability 2 * Phi(-4) = 6.3e-5 (quantiles: at most
    that); allowing for estimated SEs and n = 4,000-8,000 the rate stays far
    below 1e-3 per assertion. Power: the mean check resolves shifts of
    ~0.11 bootstrap SD, the SD check ~7% changes of spread, e.g. cluster vs
    hierarchical (+25% SD here) or ignored strata (-30% SD).
    """
    a = np.asarray(lib, dtype=float)
    b = np.asarray(ref, dtype=float)
    n1, n2 = a.size, b.size
    assert np.isfinite(a).all() and np.isfinite(b).all(), what

    se_mean = math.sqrt(a.var(ddof=1) / n1 + b.var(ddof=1) / n2)
    diff = a.mean() - b.mean()
    assert abs(diff) <= Z * se_mean + EPS, (
        f"{what}: means differ by {diff:.5f} > {Z} x SE {se_mean:.5f} "
        f"(library {a.mean():.5f}, reference {b.mean():.5f})"
    )

    pooled = np.concatenate([a - a.mean(), b - b.mean()])
    s2 = pooled.var()
    mu4 = (pooled**4).mean()
    se_sd = math.sqrt((mu4 - s2**2) / (4 * s2) * (1 / n1 + 1 / n2))
    diff = a.std(ddof=1) - b.std(ddof=1)
    assert abs(diff) <= Z * se_sd + EPS, (
        f"{what}: SDs differ by {diff:.5f} > {Z} x SE {se_sd:.5f} "
        f"(library {a.std(ddof=1):.5f}, reference {b.std(ddof=1):.5f})"
    )

    for p in (0.025, 0.975):
        tol = Z * math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
        for name, x, y in (("library", a, b), ("reference", b, a)):
            q = np.quantile(x, p)
            below, at_or_below = np.mean(y < q - EPS), np.mean(y <= q + EPS)
            assert below - tol <= p <= at_or_below + tol, (
                f"{what}: the {name}'s {p:.1%} quantile {q:.5f} sits at "
                f"[{below:.4f}, {at_or_below:.4f}] of the other sample, not at "
                f"{p} +- {tol:.4f}"
            )


def _compare(df, kind, strategy, *, seed, by=None, cluster="input_id", **kw):
    value, lib_metric, ref_metric, truth = _metric_args(kind)
    res = library(
        df,
        value,
        strategy=strategy,
        metric=lib_metric,
        by=by,
        cluster=cluster,
        n_resamples=B_LIB,
        rng=seed,
        **kw,
    )
    ref = reference_bootstrap(
        df,
        value,
        cluster,
        strategy=strategy,
        metric=ref_metric,
        truth=truth,
        by=by,
        n_resamples=B_REF,
        rng=seed + 1,
        **kw,
    )
    lib_est = np.atleast_1d(np.asarray(res.estimate, dtype=float))
    lib_reps = np.atleast_2d(res.bootstrap_distribution)
    # exact: the point estimate is a deterministic function of the data
    np.testing.assert_allclose(lib_est, ref.estimate, rtol=1e-12, atol=1e-12)
    for j in range(len(ref.groups)):
        assert_same_distribution(
            lib_reps[j], ref.replicates[j], f"{kind}/{strategy}/{kw}/group {j}"
        )
    return res, ref


# -- agreement in distribution ------------------------------------------------------
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_mean_agrees_with_reference(scenario, strategy):
    df, kw = SCENARIOS[scenario]
    _compare(df, "mean", strategy, seed=100, **kw)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_kappa_agrees_with_reference(strategy):
    _compare(PLAIN, "kappa", strategy, seed=200)


@pytest.mark.parametrize("strategy", ["cluster", "single_draw", "hierarchical"])
@pytest.mark.parametrize("scenario", ["strata", "unequal_k_input", "unequal_k_run"])
def test_kappa_agrees_with_reference_strata_unequal_k(scenario, strategy):
    df, kw = SCENARIOS[scenario]
    _compare(df, "kappa", strategy, seed=300, **kw)


@pytest.mark.parametrize("scenario", ["plain", "unequal_k_input", "strata"])
def test_mode_of_labels_accuracy_agrees_with_reference(scenario):
    # mode of the predicted *labels*, scored against the truth (seed 000's
    # mode-aggregate), not the 0/1 majority of correctness
    df, kw = SCENARIOS[scenario]
    _compare(df, "accuracy", "mode_aggregate", seed=400, **kw)


@pytest.mark.parametrize("cluster", ["input_id", None])
@pytest.mark.parametrize("kind", ["mean", "kappa"])
def test_iid_k1_agrees_with_reference(kind, cluster):
    _compare(K1, kind, "iid", seed=500, cluster=cluster)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_by_system_agrees_with_reference(strategy):
    res, ref = _compare(BY_DATA, "mean", strategy, seed=600, by="system")
    assert list(res.estimate.index) == ref.groups == ["A", "B"]
    # the paired gap: its spread depends on the draws being shared
    lib_gap = res.bootstrap_distribution[1] - res.bootstrap_distribution[0]
    ref_gap = ref.replicates[1] - ref.replicates[0]
    assert_same_distribution(lib_gap, ref_gap, f"gap B - A, {strategy}")


# -- exact point estimates ---------------------------------------------------------
def _direct_estimates(df: pd.DataFrame) -> dict:
    """Accuracy and kappa by hand: no bootstrap, no reference module."""
    per_input = df.groupby("input_id")["correct"].mean()
    t = df["label"].to_numpy()
    p = df["pred"].to_numpy()
    conf = np.zeros((4, 4))
    np.add.at(conf, (t, p), 1.0)
    conf /= conf.sum()
    p_e = conf.sum(axis=1) @ conf.sum(axis=0)
    return {
        "input": per_input.mean(),
        "run": df["correct"].mean(),
        "kappa": (np.trace(conf) - p_e) / (1 - p_e),
    }


@pytest.mark.parametrize("strategy", ["cluster", "single_draw", "hierarchical"])
def test_point_estimate_equals_direct_computation(strategy):
    # seed 000: "the point estimate is accuracy computed on all N x k runs"
    # for every strategy but mode-aggregate
    direct = _direct_estimates(UNEQUAL)
    for weight in ("input", "run"):
        res = library(
            UNEQUAL, "correct", strategy=strategy, weight=weight, n_resamples=100, rng=0
        )
        assert res.estimate == pytest.approx(direct[weight], rel=1e-12, abs=1e-12)
    assert direct["input"] - direct["run"] > 0.1  # the weights matter here
    res = library(
        UNEQUAL,
        "pred",
        strategy=strategy,
        weight="run",
        metric=evalci.metrics.kappa(truth="label"),
        n_resamples=100,
        rng=0,
    )
    assert res.estimate == pytest.approx(direct["kappa"], rel=1e-12, abs=1e-12)


def test_mode_aggregate_point_estimate_is_majority_accuracy():
    # tie-free data: the mode of each input's labels, scored once per input
    modes = PLAIN.groupby("input_id").agg(
        pred=("pred", lambda s: s.mode().iloc[0]), label=("label", "first")
    )
    expected = (modes["pred"] == modes["label"]).mean()
    res = library(
        PLAIN,
        "pred",
        strategy="mode_aggregate",
        metric=evalci.metrics.accuracy(truth="label"),
        n_resamples=100,
        rng=0,
    )
    assert res.estimate == pytest.approx(expected, abs=1e-12)
    majority = PLAIN.groupby("input_id")["correct"].mean().gt(0.5).mean()
    res = library(PLAIN, "correct", strategy="mode_aggregate", n_resamples=100, rng=0)
    assert res.estimate == pytest.approx(majority, abs=1e-12)


# -- mode ties are broken at random --------------------------------------------------
def _tied_data() -> pd.DataFrame:
    """Inputs whose 4 runs often tie for the mode (2-2 and 1-1-1-1 splits)."""
    gen = np.random.default_rng(31)
    df = simulate.confusion_model(60, 4, confusion=HARD, rng=gen)
    df["correct"] = (df["pred"] == df["label"]).astype(np.int64)
    return df


@pytest.mark.parametrize("kind", ["labels", "majority01"])
def test_mode_ties_are_broken_uniformly_at_random(kind):
    """Over seeds, the mode-aggregate estimate has the mean and variance of
    uniform tie-breaks.

    An input is scored 1 with probability P_i = (truth among the tied modal
    labels) / (number of tied labels) (0/1 majority: the 2-2 ties score 1/2),
    independently across inputs, so over S seeds the estimate has mean
    sum(P_i)/N and variance sum(P_i (1 - P_i))/N^2. Tolerances: mean within
    Z = 4 SE (false failure 6e-5); variance ratio within 1 +- 4 sqrt(2/(S-1))
    (normal approximation to the chi-square of a near-normal sum, S = 400;
    false failure ~1e-4). Lowest/highest-label tie-breaking gives variance 0
    and, for 0/1 data, a mean shifted by half the number of ties.
    """
    df = _tied_data()
    if kind == "labels":
        value, metric = "pred", evalci.metrics.accuracy(truth="label")
        probs = []
        for _, g in df.groupby("input_id"):
            counts = g["pred"].value_counts()
            tied = set(counts.index[counts == counts.max()])
            probs.append((g["label"].iloc[0] in tied) / len(tied))
    else:
        value, metric = "correct", "mean"
        share = df.groupby("input_id")["correct"].mean()
        probs = np.where(share > 0.5, 1.0, np.where(share == 0.5, 0.5, 0.0))
    probs = np.asarray(probs, dtype=float)
    n = len(probs)
    n_ties = int(((probs > 0) & (probs < 1)).sum())
    assert n_ties >= 8  # the test is about ties
    mean = probs.mean()
    var = (probs * (1 - probs)).sum() / n**2

    n_seeds = 400
    est = np.empty(n_seeds)
    for s in range(n_seeds):
        res = library(
            df, value, strategy="mode_aggregate", metric=metric, n_resamples=64, rng=s
        )
        est[s] = res.estimate
    assert abs(est.mean() - mean) <= Z * math.sqrt(var / n_seeds)
    ratio = est.var(ddof=1) / var
    assert abs(ratio - 1) <= Z * math.sqrt(2 / (n_seeds - 1)), ratio

    # the reference's tie-breaking passes the same check (sanity of the oracle)
    gen = np.random.default_rng(0)
    ref = np.empty(n_seeds)
    for s in range(n_seeds):
        if kind == "labels":
            hits = [
                mode_with_ties(list(g["pred"]), gen) == g["label"].iloc[0]
                for _, g in df.groupby("input_id")
            ]
        else:
            hits = [
                mode_with_ties(list(g["correct"]), gen)
                for _, g in df.groupby("input_id")
            ]
        ref[s] = np.mean(hits)
    assert abs(ref.mean() - mean) <= Z * math.sqrt(var / n_seeds)


# -- pairing across systems -----------------------------------------------------------
@pytest.mark.parametrize(
    ("strategy", "k"),
    [
        ("cluster", 3),
        ("mode_aggregate", 3),
        ("cluster", 1),
        ("iid", 1),
        ("single_draw", 1),
        ("hierarchical", 1),
        ("mode_aggregate", 1),
    ],
)
def test_identical_systems_have_zero_gap(strategy, k):
    """Shared-draw identity: two copies of one system get the same draws of
    inputs, so every replicate gap is exactly 0 (run-level draws are
    separate per system, hence k = 1 for single_draw and hierarchical)."""
    one = PLAIN if k == 3 else K1
    two = pd.concat([one.assign(system="A"), one.assign(system="B")], ignore_index=True)
    res = library(
        two, "correct", strategy=strategy, by="system", n_resamples=2000, rng=5
    )
    assert res.paired
    dist = res.bootstrap_distribution
    assert dist.shape == (2, 2000)
    assert dist[0].std() > 0
    np.testing.assert_array_equal(dist[0], dist[1])
    assert res.estimate["A"] == res.estimate["B"]


@pytest.mark.parametrize("strategy", ["cluster", "single_draw", "hierarchical"])
def test_paired_replicates_are_correlated(strategy):
    """With per-input correlated systems the replicates of A and B are
    strongly correlated, as in the reference; with independent draws they
    would be uncorrelated. Tolerance on Fisher's z: Z = 4 SE of the
    difference, SE = sqrt(1/(n1 - 3) + 1/(n2 - 3)) (false failure 6e-5)."""
    res = library(
        BY_DATA, "correct", strategy=strategy, by="system", n_resamples=B_LIB, rng=7
    )
    r_lib = np.corrcoef(res.bootstrap_distribution)[0, 1]
    ref = reference_bootstrap(
        BY_DATA,
        "correct",
        "input_id",
        strategy=strategy,
        by="system",
        n_resamples=B_REF,
        rng=8,
    )
    r_ref = np.corrcoef(ref.replicates)[0, 1]
    # the data make pairing visible (single_draw and hierarchical draw runs
    # separately per system, so only the shared inputs correlate them)
    assert r_ref > 0.2
    se = math.sqrt(1 / (B_LIB - 3) + 1 / (B_REF - 3))
    assert abs(np.arctanh(r_lib) - np.arctanh(r_ref)) <= Z * se, (r_lib, r_ref)
    if strategy == "cluster":
        assert r_lib > 0.6


# -- strata and groups together ---------------------------------------------------------
def _strata_two_systems() -> pd.DataFrame:
    domains = STRATA[["input_id", "domain"]].drop_duplicates()
    both = _two_systems(STRATA.drop(columns="domain"), 0.6, rng=14)
    return both.merge(domains, on="input_id")


@pytest.mark.parametrize("strategy", ["cluster", "hierarchical"])
def test_strata_with_by_system_agrees_with_reference(strategy):
    df = _strata_two_systems()
    res, ref = _compare(df, "mean", strategy, seed=700, by="system", strata="domain")
    lib_gap = res.bootstrap_distribution[1] - res.bootstrap_distribution[0]
    ref_gap = ref.replicates[1] - ref.replicates[0]
    assert_same_distribution(lib_gap, ref_gap, f"stratified gap B - A, {strategy}")


# -- the general path: a callable metric ------------------------------------------------
B_CALLABLE = 3_000  # the callable is called once per replicate: slower


@pytest.mark.parametrize(
    ("scenario", "strategy"),
    [
        ("plain", "cluster"),
        ("plain", "single_draw"),
        ("plain", "hierarchical"),
        ("unequal_k_run", "hierarchical"),
    ],
)
@pytest.mark.filterwarnings("ignore::evalci.SlowMetricWarning")  # a mean, on purpose
def test_callable_metric_agrees_with_reference(scenario, strategy):
    df, kw = SCENARIOS[scenario]
    kw = {"weight": "run", **kw}  # a callable sees pooled rows
    res = library(
        df,
        "correct",
        strategy=strategy,
        metric=lambda d: d["correct"].mean(),
        n_resamples=B_CALLABLE,
        rng=800,
        **kw,
    )
    ref = reference_bootstrap(
        df, "correct", "input_id", strategy=strategy, n_resamples=B_REF, rng=801, **kw
    )
    assert res.estimate == pytest.approx(ref.estimate[0], abs=1e-12)
    assert_same_distribution(res.bootstrap_distribution, ref.replicates[0], scenario)


def test_callable_single_draw_with_pooled_runs_is_refused():
    # One drawn run per input cannot be weighted by k_i through a callable
    # (the fast path multiplies the drawn row by k_i): refuse, do not mislead.
    df, kw = SCENARIOS["unequal_k_run"]
    with pytest.raises(ValueError, match=r"single_draw.*weight='run'"):
        library(
            df,
            "correct",
            strategy="single_draw",
            weight="run",
            metric=lambda d: d["correct"].mean(),
            n_resamples=10,
            rng=0,
            **{k: v for k, v in kw.items() if k != "weight"},
        )


# -- BCa pieces against the textbook ------------------------------------------------------
def test_bca_kappa_matches_textbook():
    """z0, the acceleration and the BCa endpoints of kappa, recomputed by hand
    from the library's own replicates and a leave-one-input-out jackknife
    done with the reference metric (Efron & Tibshirani 1993, eqs. 14.14-14.15;
    ties with the estimate count one half)."""
    res = library(
        PLAIN,
        "pred",
        strategy="cluster",
        method="bca",
        metric=evalci.metrics.kappa(truth="label"),
        n_resamples=4000,
        rng=9,
    )
    reps, est = res.bootstrap_distribution, res.estimate
    share = (
        np.sum(reps < est - EPS) + 0.5 * np.sum(np.abs(reps - est) <= EPS)
    ) / reps.size
    z0 = special.ndtri(share)
    labels = sorted(set(PLAIN["pred"]) | set(PLAIN["label"]))
    jack = np.array(
        [
            _kappa_of(PLAIN[PLAIN["input_id"] != i], labels)
            for i in sorted(PLAIN["input_id"].unique())
        ]
    )
    u = jack.mean() - jack
    a = (u**3).sum() / (6 * (u**2).sum() ** 1.5)
    z = special.ndtri([0.025, 0.975])
    adj = special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))
    low, high = np.quantile(reps, adj)
    assert res.z0 == pytest.approx(z0, abs=1e-12)
    assert res.acceleration == pytest.approx(a, rel=1e-9, abs=1e-12)
    assert (res.low, res.high) == pytest.approx((low, high), abs=1e-12)


def _kappa_of(df: pd.DataFrame, labels) -> float:
    rows = list(zip(df["pred"], df["label"], np.ones(len(df)), strict=True))
    return weighted_metric(rows, "kappa", labels)
