"""Arena-scale preference bootstrap: 1,000,000 battles, 100 models, 50,000 prompts.

Goal (issue 25): ``evalci.preference.preference_ci`` with B = 1,000
prompt-level resamples in under 30 s on 2 cores. Each prompt hosts 20
battles between random pairs of models; every model has a per-prompt
effect (SD 0.5) on its log-strength, 10% of battles are ties.

Run: ``python benchmarks/bench_preference.py`` (``--small`` for a smoke run
of 20,000 battles). Prints the stages (encode + point fit, the whole call)
and the prompt-level and battle-level bootstraps' times.

Then fragility (``evalci.preference.preference_fragility``, the greedy
search for the fewest battles whose removal flips the top place and each
adjacent pair, every count verified by a refit): 100,000 battles over 20
models (``--small``: 20,000), Bradley-Terry and Davidson; ``--fragility``
runs only this part.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd

import evalci
from evalci import preference as P


def battles(n_battles, n_models, n_prompts, seed=0):
    """Random pairs on random prompts, Bradley-Terry with prompt effects, ties."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_models)
    u = rng.normal(0, 0.5, (n_prompts, n_models))
    q = np.repeat(np.arange(n_prompts), n_battles // n_prompts)
    a = rng.integers(0, n_models, len(q))
    b = (a + rng.integers(1, n_models, len(q))) % n_models
    d = theta[a] + u[q, a] - theta[b] - u[q, b]
    x = rng.random(len(q))
    p_a = 0.9 / (1 + np.exp(-d))
    winner = np.where(x < p_a, "model_a", np.where(x < 0.9, "model_b", "tie"))
    names = np.array([f"model-{k:03d}" for k in range(n_models)], dtype=object)
    return pd.DataFrame(
        {"question_id": q, "model_a": names[a], "model_b": names[b], "winner": winner}
    )


def timed(f, *args, **kw):
    t = time.perf_counter()
    out = f(*args, **kw)
    return time.perf_counter() - t, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    parser.add_argument(
        "--fragility", action="store_true", help="only the fragility benchmark"
    )
    args = parser.parse_args()
    if args.fragility:
        fragility(20_000 if args.small else 100_000, 20, 5_000)
        return
    n, g, c, b = (
        (20_000, 20, 1_000, 200) if args.small else (1_000_000, 100, 50_000, 1_000)
    )
    print(
        f"python {platform.python_version()}  numpy {np.__version__}  pandas "
        f"{pd.__version__}  evalci {evalci.__version__}  cpus {os.cpu_count()}  "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}"
    )
    t_gen, df = timed(battles, n, g, c)
    print(
        f"{len(df):,} battles, {g} models, {c:,} prompts (generated in {t_gen:.1f} s)"
    )
    t_fit, fit = timed(P.bradley_terry, df, anchor="model-000")
    print(f"  encode + point fit (Bradley-Terry)            {t_fit:7.2f} s")
    t_cl, res = timed(P.preference_ci, df, anchor="model-000", n_resamples=b, rng=0)
    print(
        f"  preference_ci, prompts resampled, B={b:,}     {t_cl:7.2f} s"
        f"   goal < 30 s: {'PASS' if t_cl < 30 else 'FAIL'}"
    )
    t_iid, iid = timed(
        P.preference_ci, df, anchor="model-000", n_resamples=b, rng=0, cluster=None
    )
    print(f"  preference_ci, battles resampled, B={b:,}     {t_iid:7.2f} s")
    t_lb, board = timed(res.leaderboard)
    print(f"  leaderboard (max-t over {g * (g - 1) // 2:,} pairs)      {t_lb:7.2f} s")
    ratio = (res.scores.standard_error / iid.scores.standard_error).drop("model-000")
    print(
        f"  SE ratio prompt / battle bootstrap: median {ratio.median():.2f} "
        f"(prompt effects SD 0.5)"
    )
    print(f"  top of the board: {list(board.table.system[:3])}")
    fragility(20_000 if args.small else 100_000, 20, 5_000)


def fragility(n, g, c) -> None:
    """Greedy fragility of the top place and the adjacent pairs, both models."""
    df = battles(n, g, c, seed=0)
    print(f"{len(df):,} battles, {g} models: fragility (top + {g - 1} adjacent pairs)")
    for model in ("bradley-terry", "davidson"):
        t, frag = timed(P.preference_fragility, df, model=model)
        top = frag.top
        print(
            f"  preference_fragility, {model:<13}          {t:7.2f} s   top "
            f"{top.a} over {top.b}: {top.fragility} of {frag.n_battles:,} battles; "
            f"adjacent median {frag.table.fragility[1:].median():.0f}"
        )


if __name__ == "__main__":
    main()
