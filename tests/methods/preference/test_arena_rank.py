"""evalci's reproduction of arena-rank 0.1.1 (LMArena's ranking library)
against arena-rank's own output, recorded once on real battles.

``tests/data/arena_rank_recorded.json`` was written by
``tests/data/make_arena_rank_recorded.py`` (arena-rank 0.1.1, jax 0.8.1, in
a separate environment); these tests read it and need neither arena-rank
nor jax.

Tolerances. arena-rank stops its L-BFGS when the relative change of the
mean loss falls under 1e-9; evalci's Newton fit goes to the optimum. On
these battles the ratings differ by 8.4e-4 points at most (arena-rank's own
parameters leave a gradient of 1.4e-7); evaluated at arena-rank's
parameters, evalci's sandwich reproduces arena-rank's bounds to 1e-10.
The bootstrap: jax's 100 draws (recorded) refitted by evalci agree with
arena-rank's refits to 4.9e-3 points, except in the 2 draws where a model
never loses or never wins (no finite optimum: both optimisers stop at an
arbitrary large value, 55 points apart); 20 of the 22 bounds come from the
other draws and agree to 1.3e-3. numpy cannot replay jax's PRNG: with
numpy's draws the bounds agree within Monte Carlo error.
"""

import importlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import evalci

from conftest import shared_data

# the module (the package's attribute of that name is the function)
ar = importlib.import_module("evalci.methods.preference.arena_rank")
DATA = Path(__file__).resolve().parents[2] / "data"
RECORD = json.loads((DATA / "arena_rank_recorded.json").read_text())
BATTLES = shared_data("copilot_arena_battles_v1.csv")
ALPHA = 400 / np.log(10)

#: arena-rank's optimiser tolerance, in rating points (see the module
#: docstring): the full fit differs by 8e-4, the bootstrap refits by 5e-3
POINTS = 2e-3
REFIT = 1e-2


def _recorded(method: str) -> pd.DataFrame:
    rec = RECORD[method]
    return pd.DataFrame(
        {
            "rating": rec["ratings"],
            "rating_q025": rec["rating_lower"],
            "rating_q975": rec["rating_upper"],
            "variance": rec["variances"],
            "rank": rec["rank"],
        },
        index=rec["competitors"],
    )


@pytest.fixture(scope="module")
def covariance():
    return evalci.preference.arena_rank(BATTLES)


def test_rows_are_arena_ranks_unique_rows():
    models, pairs, y, n = ar.arena_rank_rows(BATTLES)
    data = RECORD["dataset"]
    assert models == RECORD["sandwich"]["competitors"]
    assert pairs.tolist() == data["pairs"]
    assert y.tolist() == data["outcomes"]
    assert n.tolist() == data["counts"]


def test_anchor_is_the_mean_of_the_ratings(covariance):
    # arena-rank's fitted parameters sum to zero: no reference model
    assert abs(sum(RECORD["sandwich"]["params"])) < 1e-9
    assert covariance["rating"].mean() == pytest.approx(1000.0, abs=1e-9)


def test_covariance_interval_equals_arena_ranks(covariance):
    rec = _recorded("sandwich")
    assert list(covariance.index) == list(rec.index)
    for col in ("rating", "rating_q025", "rating_q975"):
        np.testing.assert_allclose(covariance[col], rec[col], rtol=0, atol=POINTS)
    np.testing.assert_allclose(covariance["variance"], rec["variance"], rtol=1e-5)
    assert covariance["rank"].tolist() == rec["rank"].tolist()


def test_sandwich_is_exact_at_arena_ranks_parameters():
    # the remaining difference is the optimiser's: at arena-rank's own
    # parameters, the construction reproduces its bounds to rounding
    _, pairs, y, n = ar.arena_rank_rows(BATTLES)
    r = np.array(RECORD["sandwich"]["params"])
    var = ar._sandwich(r, pairs, y, n, 1e-5)
    half = 1.959963984540054 * np.sqrt(var)
    rec = _recorded("sandwich")
    np.testing.assert_allclose((r - half) * ALPHA + 1000, rec["rating_q025"], rtol=1e-10)
    np.testing.assert_allclose((r + half) * ALPHA + 1000, rec["rating_q975"], rtol=1e-10)
    np.testing.assert_allclose(var * ALPHA**2, rec["variance"], rtol=1e-9)


def _separated(pairs, y, counts, m) -> bool:
    """No finite maximum likelihood: the graph of wins (a tie both ways),
    over the models that play, is not strongly connected."""
    keep = counts > 0
    a, b, y = pairs[keep, 0], pairs[keep, 1], y[keep]
    src = np.concatenate([a[y > 0], b[y < 1]])  # winner -> loser
    dst = np.concatenate([b[y > 0], a[y < 1]])
    played = np.unique(np.concatenate([a, b]))
    graph = csr_matrix((np.ones(len(src)), (src, dst)), shape=(m, m))
    _, label = connected_components(graph, directed=True, connection="strong")
    return len(np.unique(label[played])) > 1


@pytest.fixture(scope="module")
def replicates():
    """arena-rank's recorded draws and refits, evalci's refits of the same
    draws, and which draws are separated."""
    models, pairs, y, _ = ar.arena_rank_rows(BATTLES)
    draws = np.array(RECORD["dataset"]["bootstrap_counts"], dtype=float)
    theirs = np.array(RECORD["bootstrap"]["replicate_params"]) * ALPHA + 1000
    ours = np.array([ar._fit(pairs, y, c, len(models)) for c in draws]) * ALPHA + 1000
    sep = np.array([_separated(pairs, y, c, len(models)) for c in draws])
    return draws, theirs, ours, sep


def test_bootstrap_refits_equal_arena_ranks_where_the_optimum_exists(replicates):
    # jax's multinomial draws, recorded, refitted by evalci: the same
    # ratings wherever a finite optimum exists. Where a model never loses
    # (or never wins) in a draw, both optimisers stop at an arbitrary,
    # large value, and the two differ.
    _, theirs, ours, sep = replicates
    assert 0 < sep.sum() < 10
    np.testing.assert_allclose(ours[~sep], theirs[~sep], rtol=0, atol=REFIT)
    assert np.abs(ours[sep] - theirs[sep]).max() > 1


def test_bootstrap_bounds_with_arena_ranks_draws(replicates):
    # end to end, with arena-rank's draws: every bound that the quantile
    # interpolates between refits with a finite optimum equals arena-rank's
    draws, theirs, _, sep = replicates
    got = evalci.preference.arena_rank(BATTLES, interval="bootstrap", counts=draws)
    rec = _recorded("bootstrap")
    np.testing.assert_allclose(got["rating"], rec["rating"], rtol=0, atol=POINTS)
    checked = 0
    for q, col in ((0.025, "rating_q025"), (0.975, "rating_q975")):
        pos = q * (len(draws) - 1)
        order = np.argsort(theirs, axis=0, kind="stable")
        used = order[[int(np.floor(pos)), int(np.ceil(pos))]]  # (2, models)
        regular = ~sep[used].any(axis=0)
        np.testing.assert_allclose(got[col][regular], rec[col][regular], rtol=0, atol=REFIT)
        checked += regular.sum()
    assert checked >= 11  # of 22 bounds


def test_bootstrap_with_numpy_draws_within_monte_carlo_error():
    # numpy cannot replay jax's PRNG: other draws, the same construction.
    # arena-rank's bound is the 2.5% (97.5%) quantile of B = 100 refits: its
    # rank in the bootstrap distribution is about Beta-distributed, mean
    # 0.025, SD sqrt(.025 * .975 / 100) = 0.016. Against 4,000 numpy draws
    # (the distribution itself, up to 0.0025), it must fall within 4 SD.
    # Distribution-free: the refits are heavy-tailed here (a few draws are
    # separated), so no normal approximation.
    models, pairs, y, n = ar.arena_rank_rows(BATTLES)
    draws = ar._boot_counts(n, 4000, 0, None)
    reps = np.array([ar._fit(pairs, y, c, len(models)) for c in draws]) * ALPHA + 1000
    rec = _recorded("bootstrap")
    below = (reps < rec["rating_q025"].to_numpy()).mean(axis=0)
    above = (reps > rec["rating_q975"].to_numpy()).mean(axis=0)
    assert np.all(np.abs(below - 0.025) < 4 * 0.016)
    assert np.all(np.abs(above - 0.025) < 4 * 0.016)
    # arena_rank's bootstrap is those refits' quantiles
    got = evalci.preference.arena_rank(
        BATTLES, interval="bootstrap", n_resamples=4000, seed=0
    )
    np.testing.assert_allclose(got["rating_q025"], np.quantile(reps, 0.025, axis=0))
    np.testing.assert_allclose(got["rating"], rec["rating"], rtol=0, atol=POINTS)


def test_json_equals_arena_ranks_key_for_key(covariance):
    got = evalci.preference.to_arena_json(covariance, category="full")
    want = RECORD["arena_json"]
    assert list(got) == list(want)
    assert list(got["full"]) == list(want["full"])
    for model, entry in want["full"].items():
        assert list(got["full"][model]) == list(entry)
        for key, value in entry.items():
            assert got["full"][model][key] == pytest.approx(value, abs=POINTS)


def test_published_json_file_reads_back(tmp_path, covariance):
    board = evalci.io.read_arena_rank_json(DATA / "arena_rank_leaderboard.json")
    assert board["category"].eq("full").all()
    rec = _recorded("sandwich").loc[board["model"]]
    assert board["rank"].tolist() == rec["rank"].tolist()
    np.testing.assert_allclose(board["rating"], rec["rating"], rtol=0, atol=1e-9)
    # evalci's own JSON, written and read back: the same table
    path = tmp_path / "board.json"
    path.write_text(json.dumps(evalci.preference.to_arena_json(covariance, "coding")))
    again = evalci.io.read_arena_rank_json(path)
    assert again["category"].eq("coding").all()
    got = covariance.loc[again["model"]]
    assert again["rank"].tolist() == got["rank"].tolist()
    np.testing.assert_allclose(again["rating_q975"], got["rating_q975"], rtol=0, atol=0)


def test_ties_are_half_wins_whatever_their_label():
    b = pd.DataFrame(
        {
            "model_a": ["x", "x", "x", "x"],
            "model_b": ["y", "y", "y", "y"],
            "winner": ["tie", "both_bad", "tie (bothbad)", "model_a"],
        }
    )
    _, pairs, y, n = ar.arena_rank_rows(b)
    assert y.tolist() == [0.5, 1.0] and n.tolist() == [3.0, 1.0]
    lb = evalci.preference.arena_rank(b)
    # 2.5 wins in 4: odds 2.5 / 1.5, split +-half around 1000
    assert lb.loc["x", "rating"] - lb.loc["y", "rating"] == pytest.approx(
        400 * np.log10(2.5 / 1.5)
    )


def test_rank_rule_counts_strictly_better_models():
    lower, upper = np.array([10.0, 5.0, 0.0]), np.array([20.0, 10.0, 4.0])
    # the first model's lower bound equals the second's upper bound: not above
    assert ar._rank(lower, upper).tolist() == [1, 1, 3]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"interval": "sandwich"}, "interval must be"),
        ({"level": 1.0}, "level must be"),
        ({"interval": "bootstrap", "counts": np.ones((3, 2))}, "counts: expected"),
        ({"winner": "verdict"}, "no column 'verdict'"),
    ],
)
def test_arena_rank_refuses(kwargs, match):
    with pytest.raises(ValueError, match=match):
        evalci.preference.arena_rank(BATTLES, **kwargs)


def test_to_arena_json_needs_the_bounds():
    with pytest.raises(ValueError, match="no column 'rating_q025'"):
        evalci.preference.to_arena_json(pd.DataFrame({"rating": [1.0]}, index=["a"]))
