"""Memory at scale (issue 37): a 200-system leaderboard and a 1,000-model Arena.

Two cases, each in a fresh subprocess (so each peak is its own), printing
the wall time and the peak resident memory (``ru_maxrss``) before and
after the call:

* ``leaderboard``: ``evalci.leaderboard`` on a tidy table of 200 systems x
  2,000 inputs x 5 runs (2,000,000 rows of 0/1 scores; each input has a
  difficulty shared by the systems, so the draws are paired), max-t rank
  intervals, ``n_resamples`` 5,000 (the default 10,000 is refused up
  front: 19,900 pairs x 10,000 replicates pass the 10**8 pair-replicate
  cap, and the message says to use at most 5,025);
* ``arena``: ``evalci.preference.preference_ci`` (Bradley-Terry, prompts
  resampled, B = 1,000) on Arena-like battles among 1,000 models: each
  model meets about 100 opponents (a sparse graph: a ring for connectivity
  plus random pairs), 20 battles per pair, about 1,000,000 battles over
  480,000 prompts, 10% ties.

Run: ``python benchmarks/bench_preference_scale.py`` (``--quick``: 40
systems x 500 inputs and 200 models, B = 200; ``--case arena`` or
``--case leaderboard`` for one of them). Numbers in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd


def tidy(n_systems, n_inputs, n_runs, seed=0):
    """0/1 scores: system skill plus a shared input difficulty, logistic."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 0.5, n_systems)
    hard = rng.normal(0, 1.5, n_inputs)
    s = np.repeat(np.arange(n_systems), n_inputs * n_runs)
    i = np.tile(np.repeat(np.arange(n_inputs), n_runs), n_systems)
    p = 1 / (1 + np.exp(-(skill[s] - hard[i])))
    names = np.array([f"sys-{k:03d}" for k in range(n_systems)], dtype=object)
    return pd.DataFrame(
        {"system": names[s], "input": i, "correct": rng.random(len(s)) < p}
    )


def arena(n_models, degree=100, per_pair=20, seed=0):
    """Arena-like battles: a sparse pair graph, ``per_pair`` battles a pair."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_models)
    m = np.arange(n_models)
    i = np.repeat(m, min(degree, n_models - 1) // 2)
    j = (i + rng.integers(1, n_models, len(i))) % n_models
    ring = (m + 1) % n_models
    lo = np.r_[np.minimum(i, j), np.minimum(m, ring)]
    hi = np.r_[np.maximum(i, j), np.maximum(m, ring)]
    key = np.unique(lo * n_models + hi)
    a = np.repeat(key // n_models, per_pair)
    b = np.repeat(key % n_models, per_pair)
    n = len(a)
    q = rng.integers(0, n // 2, n)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    win = np.where(rng.random(n) < 0.1, 2, np.where(rng.random(n) < p, 0, 1))
    swap = rng.random(n) < 0.5
    win = np.where(swap & (win < 2), 1 - win, win)
    names = np.array([f"model-{k:05d}" for k in range(n_models)], dtype=object)
    return pd.DataFrame(
        {
            "question_id": q,
            "model_a": names[np.where(swap, b, a)],
            "model_b": names[np.where(swap, a, b)],
            "winner": np.array(["model_a", "model_b", "tie"], dtype=object)[win],
        }
    )


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def run(case: str, quick: bool) -> dict:
    """One case in this process: the data, then the timed call."""
    import evalci

    if case == "leaderboard":
        shape = (40, 500, 5) if quick else (200, 2_000, 5)
        data = tidy(*shape)
        what = (
            f"leaderboard: {shape[0]} systems x {shape[1]:,} inputs x {shape[2]} "
            "runs, B = 5,000"
        )
        call = lambda: evalci.leaderboard(  # noqa: E731
            data, "correct", cluster="input", n_resamples=5_000, rng=0
        )
    else:
        g, b = (200, 200) if quick else (1_000, 1_000)
        data = arena(g)
        what = f"preference_ci: {g:,} models, {len(data):,} battles, B = {b:,}"
        call = lambda: evalci.preference.preference_ci(  # noqa: E731
            data, n_resamples=b, rng=0
        )
    before = _peak_gib()
    t = time.perf_counter()
    call()
    return {
        "what": what,
        "seconds": time.perf_counter() - t,
        "data_gib": before,
        "peak_gib": _peak_gib(),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--case", choices=("leaderboard", "arena"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run(args.case, args.quick)))
        return
    print(f"numpy {np.__version__}  pandas {pd.__version__}  cpus {os.cpu_count()}")
    for case in [args.case] if args.case else ["leaderboard", "arena"]:
        cmd = [sys.executable, __file__, "--child", "--case", case]
        out = subprocess.run(
            cmd + ["--quick"] * args.quick, capture_output=True, text=True
        )
        if out.returncode:
            print(f"{case}: failed\n{out.stderr[-2000:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{r['what']}\n  {r['seconds']:7.1f} s   peak memory "
            f"{r['peak_gib']:.2f} GiB (data alone {r['data_gib']:.2f} GiB)"
        )


if __name__ == "__main__":
    main()
