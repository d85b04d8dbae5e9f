"""Intervals over random facets beside one cluster_ci of the same rows
(issue 36's goal: within 3x of it).

10,000 inputs x 10 templates x 3 judges x 5 runs = 1.5 M rows, B = 10,000,
0/1 scores (cluster_ci's pattern kernel applies) and the same scores plus
noise (it does not). Run: ``PYTHONPATH=src python benchmarks/bench_facets.py``.
Prints the median of three calls after a warm-up, and the peak memory.
"""

from __future__ import annotations

import resource
import time

import numpy as np
import pandas as pd

import evalci


def table(seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    n, t, j, r = 10_000, 10, 3, 5
    latent = (gen.normal(0, 1, n)[:, None, None, None]
              + gen.normal(0, 0.3, t)[None, :, None, None]
              + gen.normal(0, 0.2, j)[None, None, :, None]
              + gen.normal(0, 1, (n, t, j, r)))
    idx = np.indices((n, t, j, r)).reshape(4, -1)
    df = pd.DataFrame({"input_id": idx[0], "template": idx[1], "judge": idx[2],
                       "run": idx[3], "correct": (latent > 0).ravel().astype(np.int8)})
    df["score"] = df.correct + gen.normal(0, 0.1, len(df))
    return df


def _median(fn, repeat: int = 3) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main() -> None:
    df = table()
    print(f"{len(df):,} rows; B = 10,000; seconds (ratio to cluster_ci)")
    for value in ("correct", "score"):
        base = _median(lambda v=value: evalci.cluster_ci(
            df, v, "input_id", n_resamples=10_000, rng=0))
        print(f"{value:8s} cluster_ci           {base:6.2f}")
        for method in ("components", "multiway", "pigeonhole"):
            took = _median(lambda v=value, m=method: evalci.facet_ci(
                df, v, "input_id", ["template", "judge"], method=m,
                n_resamples=10_000, rng=0))
            print(f"{value:8s} facet_ci {method:11s} {took:6.2f} ({took / base:.2f}x)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak memory {peak:.2f} GiB")


if __name__ == "__main__":
    main()
