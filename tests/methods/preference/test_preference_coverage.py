"""Coverage of the prompt-clustered preference bootstrap, by simulation.

Battles from :func:`evalci.preference.simulate_battles`: 4 models
(log-strengths 0, 0.3, 0.5, -0.4), 80 prompts, every pair twice per prompt
(960 battles), each model's log-strength shifted by a per-prompt effect of
SD 1. The truth is the population Bradley-Terry score
(:func:`evalci.preference.population_fit`: the fit on the expected matchup
counts over the prompt effects, by quadrature), anchored at ``m0``.

Measured with these seeds (95% percentile intervals, B = 200, the three
non-anchor scores pooled): prompt-clustered 94.0% over 300 trials (93.3,
93.3 and 95.3% per model);
battle-level (FastChat's construction) 83.0% over 100 trials.

False-failure rate: the pooled coverage of 900 intervals (300 trials x 3,
positively correlated within a trial) has a Monte-Carlo SE of about 0.9
points at 95%, so the 2-point band is about 2.2 SE: a false failure in
about 3% of seed sets if the true coverage is exactly 95%. The battle-level
check (below 90%) sits about 5 SE (of 100 trials) from its measured 83%.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalci import preference as P

STRENGTHS = {"m0": 0.0, "m1": 0.3, "m2": 0.5, "m3": -0.4}


def _covered(battles, truth, cluster, seed):
    res = P.preference_ci(
        battles, anchor="m0", cluster=cluster, n_resamples=200, rng=seed
    )
    s = res.scores
    inside = (s.low <= truth) & (truth <= s.high)
    return inside.drop("m0").to_numpy()


@pytest.mark.slow
def test_prompt_clustered_interval_covers_where_the_battle_bootstrap_does_not():
    pop = P.population_fit(STRENGTHS, prompt_sd=1.0)
    truth = 1000 + 400 / np.log(10) * (pop - pop["m0"])
    clustered, battle = [], []
    for k in range(300):
        battles = P.simulate_battles(
            STRENGTHS, n_prompts=80, repeats=2, prompt_sd=1.0, rng=1000 + k
        )
        clustered.append(_covered(battles, truth, "question_id", k))
        if k < 100:
            battle.append(_covered(battles, truth, None, k))
    cov_clustered, cov_battle = np.mean(clustered), np.mean(battle)
    assert abs(cov_clustered - 0.95) <= 0.02, cov_clustered
    assert cov_battle < 0.90, cov_battle


def test_population_fit_is_the_limit_of_the_fit():
    # 20,000 prompts: the fit is within ~0.02 of its limit (SE ~ 0.006)
    battles = P.simulate_battles(STRENGTHS, n_prompts=20_000, prompt_sd=1.0, rng=5)
    fit = P.bradley_terry(battles, anchor="m0").table.set_index("system").theta
    pop = P.population_fit(STRENGTHS, prompt_sd=1.0)
    np.testing.assert_allclose(fit[pop.index], pop - pop["m0"], atol=0.025)
    # prompt effects flatten the strengths: the limit is not the strengths
    assert abs(pop["m2"] - pop["m0"]) < 0.5 - 0.05
