"""Regenerate ``tests/data/arena_rank_recorded.json`` (and
``arena_rank_leaderboard.json``, its LMArena JSON alone): arena-rank's own output
on ``tests/data/copilot_arena_battles_v1.csv``.

Run it in a separate environment, never in the project's (arena-rank pins
jax==0.8.1 and numpy==2.3.3)::

    python3 -m venv /work/arenavenv
    /work/arenavenv/bin/pip install arena-rank==0.1.1
    /work/arenavenv/bin/python tests/data/make_arena_rank_recorded.py

Recorded with Python 3.11.7, arena-rank 0.1.1, jax/jaxlib 0.8.1, optax
0.2.8, numpy 2.3.3, pandas 3.1.1 (CPU, float64). The test suite reads the
JSON only; it needs neither arena-rank nor jax.

What is recorded, per interval method (``sandwich``, ``bootstrap``):
``BradleyTerry(n_competitors).compute_ratings_and_cis(dataset, ci_method=...)``
with the package defaults (scale 400, base 10, init_rating 1000,
hessian_reg 1e-5, L-BFGS ftol = gtol = 1e-9, max_iter 1000; bootstrap: 100
resamples, seed 42, significance 0.05). Besides the returned ratings,
bounds and variances: the unscaled fitted parameters (their sum shows the
anchor), the dataset's unique (model_a, model_b, outcome) rows with their
counts, and the bootstrap's multinomial counts (jax's draws) with arena-rank's refit of
each (``replicate_params``, unscaled), so that the bootstrap can be checked
draw for draw. ``arena_json`` is the leaderboard
JSON that LMArena publishes (lmarena/arena-catalog,
``data/leaderboard-text.json``: ``{category: {model: {"rating",
"rating_q975", "rating_q025"}}}``) built from the sandwich result, and
``rank`` the published rank rule (arena-catalog's
``recompute_final_ranking``: 1 + the number of models whose lower bound
exceeds this model's upper bound).
"""

import json
import platform
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

# arena-rank and jax are imported where used: pytest's --doctest-modules
# imports this file in the project's environment, which has neither

HERE = Path(__file__).parent
DATA = HERE / "copilot_arena_battles_v1.csv"
OUT = HERE / "arena_rank_recorded.json"
#: the LMArena-format JSON alone, written as arena-catalog writes it (indent 4)
BOARD = HERE / "arena_rank_leaderboard.json"


def _run(df, ci_method, counts_out):
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    dataset = PairDataset.from_pandas(df)
    model = BradleyTerry(n_competitors=len(dataset.competitors))
    res = model.compute_ratings_and_cis(dataset, ci_method=ci_method, n_jobs=-1)
    out = {k: np.asarray(res[k]).tolist() for k in ("ratings", "rating_lower", "rating_upper", "variances")}
    out["competitors"] = list(res["competitors"])
    out["params"] = np.asarray(model.params["ratings"]).tolist()
    counts_out["pairs"] = np.asarray(dataset.pairs).tolist()
    counts_out["outcomes"] = np.asarray(dataset.outcomes).tolist()
    counts_out["counts"] = np.asarray(dataset.counts).tolist()
    if ci_method == "bootstrap":
        _replicates(model, dataset, out, counts_out)
    return out


def _replicates(model, dataset, out, counts_out):
    """The bootstrap's draws and refits one by one: the draws
    compute_ratings_and_cis makes (seed 42, 100 resamples) and its own
    worker, fit_single_bootstrap_sample, on each, in this process; checked
    against the quantiles compute_ratings_and_cis returned."""
    import jax
    import jax.numpy as jnp
    from arena_rank.models.bradley_terry import fit_single_bootstrap_sample

    total = jnp.sum(dataset.counts)
    draws = jax.random.multinomial(
        key=jax.random.PRNGKey(42),
        n=int(total),
        p=dataset.counts / total,
        shape=(100, dataset.counts.shape[0]),
        dtype=jnp.float64,
    )
    params = np.array([np.asarray(fit_single_bootstrap_sample(c, model, dataset)["ratings"]) for c in draws])
    scaled = params * model.alpha + model.init_rating
    assert np.allclose(np.quantile(scaled, 0.025, axis=0), out["rating_lower"], rtol=0, atol=1e-9)
    assert np.allclose(np.quantile(scaled, 0.975, axis=0), out["rating_upper"], rtol=0, atol=1e-9)
    counts_out["bootstrap_counts"] = np.asarray(draws).astype(int).tolist()
    out["replicate_params"] = params.tolist()


def _rank(lower, upper):
    lower, upper = np.asarray(lower), np.asarray(upper)
    return [int(1 + np.sum(lower > u)) for u in upper]


def main():
    df = pd.read_csv(DATA, keep_default_na=False)
    data = {}
    sandwich = _run(df, "sandwich", data)
    boot = _run(df, "bootstrap", data)
    for res in (sandwich, boot):
        res["rank"] = _rank(res["rating_lower"], res["rating_upper"])
    order = np.argsort(-np.asarray(sandwich["ratings"]), kind="stable")
    names = sandwich["competitors"]
    arena_json = {
        "full": {
            names[i]: {
                "rating": sandwich["ratings"][i],
                "rating_q975": sandwich["rating_upper"][i],
                "rating_q025": sandwich["rating_lower"][i],
            }
            for i in order
        }
    }
    record = {
        "source": "tests/data/copilot_arena_battles_v1.csv",
        "versions": {
            "python": platform.python_version(),
            **{p: version(p) for p in ("arena-rank", "jax", "jaxlib", "optax", "numpy", "pandas")},
        },
        "call": "BradleyTerry(n_competitors).compute_ratings_and_cis(PairDataset.from_pandas(df), "
        "ci_method=..., n_jobs=-1); defaults otherwise",
        "dataset": data,
        "sandwich": sandwich,
        "bootstrap": boot,
        "arena_json": arena_json,
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    BOARD.write_text(json.dumps(arena_json, indent=4))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    import multiprocessing

    # arena-rank's bootstrap runs its refits in a multiprocessing pool; a
    # forked child of a (multithreaded) jax process deadlocks, so spawn
    multiprocessing.set_start_method("spawn")
    main()
