"""Seeded coverage study on seed 000's confusion-matrix model (N = 200, k = 5).

One simulation (``N_TRIALS`` data sets from :func:`evalci.simulate.confusion_model`,
``B = 1,000`` resamples per interval) is shared by every test; each test
checks one row of seed 000's N = 200, k = 5 tables:

=====================  =========  ========================  ===============
strategy               paper      bound (share of trials)   false failure
=====================  =========  ========================  ===============
cluster (accuracy)     95.2%      [0.91, 0.985]             3e-7 (2e-5)
hierarchical           98.9%      >= 0.965                  5e-8 (6e-5)
single_draw            100.0%     >= 0.97                   1e-12
mode_aggregate         0.0%       <= 0.05                   7e-17
cluster BCa (kappa)    94.8%      [0.91, 0.985]             4e-6 (2e-4)
cluster pct. (kappa)   94.3%      [0.90, 0.985]             6e-7 (4e-5)
=====================  =========  ========================  ===============

"False failure" is the binomial probability, with ``N_TRIALS = 800`` trials,
that a library with the paper's coverage lands outside the bound; in brackets
the same at a coverage 0.7 points lower (0.5 for hierarchical), a margin for
the paper's own Monte Carlo error (0.5 points at 2,000 trials): a 5,000-trial
run of this engine gave 94.7% for the cluster row. B = 1,000 instead of
the paper's 5,000 costs nothing measurable: on the same 5,000 data sets, B =
1,000 / 5,000 / 20,000 covered 94.7 / 94.8 / 94.8%. For single_draw and
mode_aggregate the paper's 100.0% / 0.0% are taken as 99.5% / 1%.
:func:`test_bounds_have_small_false_failure_rates` recomputes every entry
with ``scipy.stats.binom``. The seeds are fixed, so the test is
deterministic; the rates say how robust it is to the choice of seed.

Endpoint convention (docs/paper-notes.md): 0.70 is a lattice point of accuracy on
N x k runs, so an endpoint can equal it; such trials count as covered
(``low <= theta <= high``). evalci forms input-weighted accuracy from sums of
``c_i / k`` and so can land a few ulp off the lattice (0.6999999999999995
for 0.7); the comparison allows 1e-9 for that.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import evalci
from evalci import simulate

N_TRIALS = 800
N_INPUTS = 200
K = 5
B = 1_000
SEED = 20_000  # data stream; trial t's bootstrap uses rng=SEED + 1 + t
ENDPOINT_TOL = 1e-9

THETA_ACCURACY = simulate.true_accuracy(simulate.SEED000_CONFUSION)  # 0.70
THETA_KAPPA = simulate.true_kappa(simulate.SEED000_CONFUSION)  # 0.59688

# name: (paper coverage, slower-case coverage, low bound, high bound, paper width)
BOUNDS = {
    "cluster": (0.952, 0.945, 0.91, 0.985, 0.0592),
    "hierarchical": (0.989, 0.984, 0.965, 1.0, 0.0776),
    "single_draw": (0.995, 0.995, 0.97, 1.0, 0.1267),
    "mode_aggregate": (0.01, 0.01, 0.0, 0.05, 0.0893),
    "kappa_bca": (0.948, 0.941, 0.91, 0.985, 0.0797),
    "kappa_percentile": (0.943, 0.936, 0.90, 0.985, 0.0799),
}


def _false_failure(p: float, lo: float, hi: float, n: int = N_TRIALS) -> float:
    """P(covered share outside [lo, hi]) for Binomial(n, p) covered trials."""
    k_lo = math.ceil(lo * n - 1e-9)
    k_hi = math.floor(hi * n + 1e-9)
    return float(stats.binom.cdf(k_lo - 1, n, p) + stats.binom.sf(k_hi, n, p))


@pytest.fixture(scope="module")
def study():
    """Endpoints ``(N_TRIALS, 2)`` of every interval, one simulation for all tests."""
    data_rng = np.random.default_rng(SEED)
    accuracy = evalci.metrics.accuracy(truth="label")
    kappa = evalci.metrics.kappa(truth="label")
    ends = {name: np.empty((N_TRIALS, 2)) for name in BOUNDS}
    for t in range(N_TRIALS):
        df = simulate.confusion_model(N_INPUTS, K, rng=data_rng)
        seed = SEED + 1 + t
        for strategy in ("cluster", "hierarchical", "single_draw"):
            r = evalci.bootstrap(
                df, "correct", "input_id", strategy=strategy, n_resamples=B, rng=seed
            )
            ends[strategy][t] = r.low, r.high
        # seed 000's mode-aggregate: mode of the predicted labels, random ties
        with pytest.warns(evalci.EstimandWarning):
            r = evalci.bootstrap(
                df,
                "pred",
                "input_id",
                strategy="mode_aggregate",
                metric=accuracy,
                n_resamples=B,
                rng=seed,
            )
        ends["mode_aggregate"][t] = r.low, r.high
        r = evalci.cluster_ci(
            df, "pred", "input_id", metric=kappa, method="bca", n_resamples=B, rng=seed
        )
        ends["kappa_bca"][t] = r.low, r.high
        pct = r.interval(method="percentile")  # same replicates
        ends["kappa_percentile"][t] = pct.low, pct.high
    return ends


def _coverage(ends: np.ndarray, theta: float) -> float:
    covered = (ends[:, 0] <= theta + ENDPOINT_TOL) & (
        theta - ENDPOINT_TOL <= ends[:, 1]
    )
    return float(covered.mean())


def _check(study, name: str) -> None:
    _, _, lo, hi, _ = BOUNDS[name]
    theta = THETA_KAPPA if name.startswith("kappa") else THETA_ACCURACY
    cov = _coverage(study[name], theta)
    assert lo <= cov <= hi, (
        f"{name}: coverage {cov:.4f} of {theta:.5f} over {N_TRIALS} trials is "
        f"outside [{lo}, {hi}]"
    )


@pytest.mark.slow
def test_bounds_have_small_false_failure_rates():
    for name, (p, p_slow, lo, hi, _) in BOUNDS.items():
        assert _false_failure(p, lo, hi) < 1e-4, name
        assert _false_failure(p_slow, lo, hi) < 1e-3, name


@pytest.mark.slow
def test_cluster_covers_nominal(study):
    _check(study, "cluster")


@pytest.mark.slow
def test_hierarchical_is_conservative(study):
    _check(study, "hierarchical")


@pytest.mark.slow
def test_single_draw_is_conservative(study):
    _check(study, "single_draw")


@pytest.mark.slow
def test_mode_aggregate_misses_single_run_accuracy(study):
    # the mode of 5 runs is right far more often than one run (seed 000)
    _check(study, "mode_aggregate")
    centre = study["mode_aggregate"].mean()
    assert centre > THETA_ACCURACY + 0.05


@pytest.mark.slow
def test_kappa_cluster_bca_covers_nominal(study):
    _check(study, "kappa_bca")


@pytest.mark.slow
def test_kappa_cluster_percentile_covers_nominal(study):
    _check(study, "kappa_percentile")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BOUNDS))
def test_mean_width_matches_paper(study, name):
    # Mean widths over 800 trials have a Monte Carlo SE of about 0.2-0.3% of
    # their value (trial-to-trial SD ~6-8%); docs/paper-notes.md reproduced the
    # paper's widths within 0.2%. A 3% band is > 10 SE: it fails only if the
    # interval's scale is wrong (e.g. hierarchical vs cluster differ by 31%).
    width = float(np.mean(study[name][:, 1] - study[name][:, 0]))
    paper = BOUNDS[name][4]
    assert width == pytest.approx(paper, rel=0.03), (name, width, paper)
