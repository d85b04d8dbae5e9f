"""Tests of :func:`evalci.simulate.coverage.coverage_study` (issue 11).

Three kinds of check, all fast:

1. **Paper bands.** A reduced study (``TRIALS = 640`` data sets, ``B = 1,000``
   resamples) of seed 000's N = 200, k = 5 accuracy table must land within a
   band around the paper's coverage. Each band's false-failure probability
   (the binomial chance that a method whose true coverage is the paper's --
   or the 20,000-trial value of docs/paper-notes.md where the paper is off by
   noise -- lands outside it with 640 trials) is recomputed by
   :func:`test_band_false_failure_rates` and is below 1e-4 for every band.
   Widths must be within 3% of the paper's (their Monte-Carlo SE at 640
   trials is about 0.3%; the strategies differ by 25% or more).
2. **Batching.** Processing 1 or 4 blocks of 64 trials per step gives the
   identical table, and fewer trials are a prefix of more.
3. **The public engine, in law.** On the *same* simulated data sets, the
   batched path and :func:`evalci.bootstrap` draw different resamples, so
   their endpoints differ trial by trial by resampling noise only. The mean
   over trials of the paired difference must be within 4.5 of its standard
   errors of zero (two-sided normal false-failure rate 7e-6 per check, about
   2e-4 over the ~25 checks); a wrong law moves the mean by tens of SEs
   (ours cluster against the engine's hierarchical: z = 43 / -51 for
   accuracy, 42 / -31 for kappa, on these trial counts).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci import simulate
from evalci.simulate import coverage, exact
from evalci.simulate.coverage import coverage_study

TRIALS = 640
B = 1000
N, K = 200, 5

# strategy: (true coverage assumed, low bound, high bound, paper width)
BANDS = {
    "cluster": (0.952, 0.915, 0.985, 0.0592),
    "hierarchical": (0.989, 0.97, 1.0, 0.0776),
    "single_draw": (0.999, 0.985, 1.0, 0.1267),
    "mode_aggregate": (0.002, 0.0, 0.02, 0.0893),
}


def _false_failure(p, lo, hi, n=TRIALS):
    k_lo = math.ceil(lo * n - 1e-9)
    k_hi = math.floor(hi * n + 1e-9)
    return float(stats.binom.cdf(k_lo - 1, n, p) + stats.binom.sf(k_hi, n, p))


@pytest.fixture(scope="module")
def accuracy_table():
    return coverage_study(
        "seed000",
        strategies=coverage.STRATEGIES,
        methods=("percentile", "bca"),
        n_inputs=N,
        n_runs=K,
        trials=TRIALS,
        n_resamples=B,
        rng=11,
    ).set_index(["strategy", "method"])


def test_band_false_failure_rates():
    for name, (p, lo, hi, _) in BANDS.items():
        assert _false_failure(p, lo, hi) < 1e-4, name
    # the cluster row 0.7 points below the paper (the paper's own noise)
    assert _false_failure(0.945, 0.915, 0.985) < 1e-3


@pytest.mark.parametrize("strategy", list(BANDS))
def test_accuracy_matches_paper(accuracy_table, strategy):
    _, lo, hi, width = BANDS[strategy]
    row = accuracy_table.loc[(strategy, "percentile")]
    assert lo <= row.coverage <= hi, (strategy, row.coverage)
    assert row.mean_width == pytest.approx(width, rel=0.03), strategy
    assert row.trials == TRIALS and row.n_failed == 0
    assert row.coverage_se == pytest.approx(
        math.sqrt(row.coverage * (1 - row.coverage) / TRIALS)
    )


def test_iid_rows_and_bca(accuracy_table):
    # iid on N x k rows ignores clustering: about as wide as cluster (the
    # intraclass correlation is only 0.025) -- narrower by sqrt(1 - rho)-ish
    iid = accuracy_table.loc[("iid", "percentile")]
    clu = accuracy_table.loc[("cluster", "percentile")]
    assert 0.93 < iid.mean_width / clu.mean_width < 0.99
    bca = accuracy_table.loc[("cluster", "bca")]
    assert bca.mean_width == pytest.approx(clu.mean_width, rel=0.01)
    assert 0.92 <= bca.coverage <= 0.98


def test_k1_iid_matches_paper():
    # docs/paper-notes.md: 95.3% at 20,000 trials (paper 96.0%, off by noise);
    # band [0.92, 0.985] at 640 trials: false failure 1.2e-4 at 95.3 or 96.0
    assert _false_failure(0.953, 0.92, 0.985) < 2e-4
    assert _false_failure(0.960, 0.92, 0.985) < 2e-4
    res = coverage_study(
        "seed000", strategies="iid", n_runs=1, trials=TRIALS, n_resamples=B, rng=3
    )
    row = res.iloc[0]
    assert 0.92 <= row.coverage <= 0.985
    assert row.mean_width == pytest.approx(0.1266, rel=0.03)


def test_kappa_small_study():
    res = coverage_study(
        "seed000",
        strategies=("cluster", "iid"),
        methods=("percentile", "bca", "clt"),
        metric="kappa",
        n_runs=[1, 5],
        trials=256,
        n_resamples=B,
        rng=5,
    ).set_index(["strategy", "method", "n_runs"])
    assert res.truth.iloc[0] == pytest.approx(
        simulate.true_kappa(simulate.SEED000_CONFUSION)
    )
    # paper widths: cluster k=5 0.0799 (BCa 0.0797); iid / FCE k=1 0.1702
    assert res.loc[("cluster", "percentile", 5)].mean_width == pytest.approx(
        0.0799, rel=0.04
    )
    assert res.loc[("cluster", "bca", 5)].mean_width == pytest.approx(0.0797, rel=0.04)
    assert res.loc[("iid", "percentile", 1)].mean_width == pytest.approx(
        0.1702, rel=0.04
    )
    assert res.loc[("iid", "clt", 1)].mean_width == pytest.approx(0.1702, rel=0.04)
    # coverage 94.3-95% with 256 trials: [0.88, 0.995] fails w.p. < 1e-4
    assert _false_failure(0.943, 0.88, 0.995, 256) < 1e-4
    assert _false_failure(0.950, 0.88, 0.995, 256) < 1e-4
    for key in [("cluster", "percentile", 5), ("cluster", "bca", 5), ("iid", "clt", 1)]:
        assert 0.88 <= res.loc[key].coverage <= 0.995, key


# ------------------------------------------------------------------ batching
@pytest.mark.parametrize("metric", ["accuracy", "kappa"])
def test_batching_does_not_change_results(metric):
    kw = dict(
        strategies=("cluster", "hierarchical", "mode_aggregate"),
        methods=("percentile", "bca", "normal"),
        metric=metric,
        n_inputs=[50, 80],
        n_runs=3,
        trials=200,  # 4 blocks, the last one partial
        n_resamples=300,
        rng=123,
    )
    a = coverage_study("seed000", _blocks_per_step=1, **kw)
    b = coverage_study("seed000", _blocks_per_step=4, **kw)
    c = coverage_study("seed000", _blocks_per_step=3, **kw)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)


def test_worker_processes_give_identical_results():
    kw = dict(strategies=("cluster", "single_draw"), methods=("percentile", "bca"),
              metric="kappa", n_inputs=40, n_runs=2, trials=130, n_resamples=200,
              rng=8)  # fmt: skip
    pd.testing.assert_frame_equal(
        coverage_study("seed000", **kw), coverage_study("seed000", n_jobs=2, **kw)
    )


def test_fewer_trials_are_a_prefix():
    kw = dict(strategies="cluster", methods="percentile", n_inputs=60, n_runs=2,
              n_resamples=200, rng=9)  # fmt: skip
    ends = {}
    orig = coverage._summary

    def spy(low, high, truth):
        ends[len(low)] = (np.asarray(low), np.asarray(high))
        return orig(low, high, truth)

    coverage._summary = spy
    try:
        coverage_study("seed000", trials=100, **kw)
        coverage_study("seed000", trials=200, **kw)
    finally:
        coverage._summary = orig
    np.testing.assert_array_equal(ends[100][0], ends[200][0][:100])
    np.testing.assert_array_equal(ends[100][1], ends[200][1][:100])


def test_rng_reproducible_and_validation():
    a = coverage_study("seed000", trials=64, n_resamples=200, n_inputs=40, rng=1)
    b = coverage_study(simulate.SEED000_CONFUSION, trials=64, n_resamples=200,
                       n_inputs=40, rng=np.random.SeedSequence(1))  # fmt: skip
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="strategy"):
        coverage_study("seed000", strategies=("bogus",))
    with pytest.raises(ValueError, match="method"):
        coverage_study("seed000", methods=("bogus",))
    with pytest.raises(ValueError, match="metric"):
        coverage_study("seed000", metric="f1")


# ------------------------------------------------------------------ engine
def _tidy(labels, preds):
    n, k = preds.shape
    return pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(n), k),
            "run": np.tile(np.arange(k), n),
            "label": np.repeat(labels, k),
            "pred": preds.ravel(),
            "correct": (preds == labels[:, None]).astype(np.int64).ravel(),
        }
    )


def _engine(df, strategy, metric, method, seed):
    value, met = "correct", "mean"
    if metric == "kappa":
        value, met = "pred", evalci.metrics.kappa(truth="label")
    elif strategy == "mode_aggregate":
        value, met = "pred", evalci.metrics.accuracy(truth="label")
    cluster = None if strategy == "iid" else "input_id"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        r = evalci.bootstrap(df, value, cluster, strategy=strategy, metric=met,
                             method=method, n_resamples=B, rng=seed)  # fmt: skip
    return r.low, r.high


def _paired(metric, strategy, methods, n_trials, n=N, k=K):
    labels, preds = simulate.confusion_model_arrays(n_trials, n, k, rng=77)
    fn = exact._accuracy_block if metric == "accuracy" else exact._kappa_block
    blk = fn(strategy, labels, preds, B, np.random.default_rng(78), 0.95, 4)
    ours = exact._intervals(blk, methods, 0.95)
    out = {}
    for m in methods:
        eng = np.array(
            [
                _engine(_tidy(labels[t], preds[t]), strategy, metric, m, 1000 + t)
                for t in range(n_trials)
            ]  # fmt: skip
        )
        out[m] = (np.stack(ours[m], axis=-1), eng)
    return out


def _check_law(ours, eng, name):
    d = ours - eng  # (T, 2): low and high
    for j, end in enumerate(("low", "high")):
        se = d[:, j].std(ddof=1) / math.sqrt(len(d))
        mean = d[:, j].mean()
        scale = np.mean(eng[:, 1] - eng[:, 0])
        # se can be tiny for exact-match cases; floor it at 1e-4 of the width
        assert abs(mean) <= 4.5 * max(se, 1e-4 * scale), (name, end, mean, se)


ACC_CASES = [
    ("cluster", ("percentile", "basic", "bca", "normal")),
    ("hierarchical", ("percentile", "bca")),
    ("single_draw", ("percentile",)),
    ("iid", ("percentile", "bca")),
    ("mode_aggregate", ("percentile", "bca")),
]


@pytest.mark.parametrize("strategy,methods", ACC_CASES)
def test_accuracy_agrees_with_engine(strategy, methods):
    for m, (ours, eng) in _paired("accuracy", strategy, methods, 120).items():
        _check_law(ours, eng, (strategy, m))


@pytest.mark.parametrize(
    "strategy,methods",
    [
        ("cluster", ("percentile", "bca")),
        ("hierarchical", ("percentile",)),
        ("single_draw", ("percentile",)),
        ("iid", ("percentile",)),
        ("mode_aggregate", ("percentile",)),
    ],
)
def test_kappa_agrees_with_engine(strategy, methods):
    for m, (ours, eng) in _paired("kappa", strategy, methods, 60, n=100).items():
        _check_law(ours, eng, (strategy, m))


def test_accuracy_clt_equals_analytic_ci():
    labels, preds = simulate.confusion_model_arrays(5, 100, 3, rng=4)
    blk = exact._accuracy_block("cluster", labels, preds, 50,
                                np.random.default_rng(0), 0.95, 4)  # fmt: skip
    low, high = exact._intervals(blk, ("clt",), 0.95)["clt"]
    for t in range(5):
        r = evalci.analytic_ci(_tidy(labels[t], preds[t]), "correct", "input_id",
                               method="clt")  # fmt: skip
        assert low[t] == pytest.approx(r.low, abs=1e-12)
        assert high[t] == pytest.approx(r.high, abs=1e-12)


class _TwoSystems:
    """A user model: two systems of seed 000's classifier (one relabelled)."""

    def sample(self, n_inputs, n_runs, rng):
        df = simulate.confusion_model(n_inputs, n_runs, rng=rng)
        return pd.concat([df.assign(system="a"), df.assign(system="b")])

    def truth(self, metric):
        v = simulate.true_accuracy(simulate.SEED000_CONFUSION)
        return {"a": v, "b": v}


def test_user_model_runs_through_engine():
    res = coverage_study(_TwoSystems(), strategies=("cluster",),
                         methods=("percentile", "clt"), n_inputs=100, n_runs=3,
                         trials=20, n_resamples=300, rng=2)  # fmt: skip
    assert set(res.system) == {"a", "b"}
    assert (res.trials == 20).all()
    a = res[res.system == "a"].reset_index(drop=True)
    b = res[res.system == "b"].reset_index(drop=True)
    pd.testing.assert_series_equal(a.coverage, b.coverage)  # paired, same data
    assert (res.coverage >= 0.7).all()


# ------------------------------------------------------------------ the CLI
def test_cli_simulate_paper_small(capsys):
    from evalci.reporting.cli import main

    assert main(["simulate", "--paper", "--trials", "64", "--n-resamples", "300",
                 "--accuracy-only", "--no-progress"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "Mode-aggregate" in out and "paper off by noise, see docs/paper-notes.md" in out
    assert out.count("\n") > 23  # 23 cells of the accuracy tables


def test_paper_table_lists_every_cell():
    from evalci.simulate.coverage import PAPER, PAPER_NOISE

    acc = [key for key in PAPER if key[0] == "accuracy"]
    kap = [key for key in PAPER if key[0] == "kappa"]
    assert len(acc) == 23 and len(kap) == 31
    assert set(PAPER_NOISE) <= set(PAPER)


def test_kappa_clt_only_for_one_row_per_unit():
    res = coverage_study("seed000", strategies=("cluster", "iid"), methods="clt",
                         metric="kappa", n_inputs=60, n_runs=[1, 3], trials=64,
                         n_resamples=100, rng=1).set_index(["strategy", "n_runs"])  # fmt: skip
    assert res.loc[("cluster", 1)].n_failed == 0
    assert res.loc[("cluster", 3)].n_failed == 64  # no FCE SE for k > 1
    assert res.loc[("iid", 3)].n_failed == 0  # rows as units
