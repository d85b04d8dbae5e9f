"""Time evalci on its bundled real example (GPQA Diamond, 198 inputs x 5 runs x 2 systems).

Run from the repository root::

    python benchmarks/bench_realdata.py            # B=10,000 (evalci's default)
    python benchmarks/bench_realdata.py --quick    # B=1,000

Times are the median of a few repeats (``time.perf_counter``) after one
warm-up call; the two cases run round-robin. There is no target here: the
numbers show what a user of the example would wait.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np
import pandas as pd
import scipy

import evalci


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="B=1,000 instead of 10,000"
    )
    parser.add_argument(
        "--repeat", type=int, default=7, help="timed repeats (default 7)"
    )
    args = parser.parse_args(argv)
    b = 1_000 if args.quick else 10_000
    repeat = max(1, args.repeat)

    print(
        f"python {platform.python_version()}  numpy {np.__version__}  "
        f"scipy {scipy.__version__}  pandas {pd.__version__}  "
        f"evalci {evalci.__version__}  cpus {os.cpu_count()}"
    )
    if hasattr(os, "getloadavg"):
        print(f"1-min load average at start: {os.getloadavg()[0]:.2f}")

    t0 = time.perf_counter()
    df = evalci.load_example()
    t_load = time.perf_counter() - t0
    n_inputs = df["input_id"].nunique()
    n_systems = df["system"].nunique()
    runs = df.groupby(["system", "input_id"]).size()
    print(
        f"data: evalci.load_example() -> {len(df):,} rows, {n_inputs} inputs x "
        f"{runs.min()}-{runs.max()} runs x {n_systems} systems "
        f"(loaded in {t_load * 1e3:.1f} ms, first call)"
    )

    def call(method):
        return lambda: evalci.cluster_ci(
            df,
            "correct",
            cluster="input_id",
            by="system",
            method=method,
            n_resamples=b,
            rng=0,
        )

    cases = [("BCa", call("bca")), ("percentile", call("percentile"))]
    for _, fn in cases:
        fn()  # warm-up
    times = {name: [] for name, _ in cases}
    for _ in range(repeat):
        for name, fn in cases:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)

    print()
    print(
        f"cluster_ci(df, 'correct', cluster='input_id', by='system', B={b:,}), "
        f"median of {repeat}"
    )
    print(f"  {'method':<12} {'median':>10} {'min':>10} {'max':>10}")
    for name, ts in times.items():
        print(
            f"  {name:<12} {np.median(ts) * 1e3:>7.1f} ms {min(ts) * 1e3:>7.1f} ms "
            f"{max(ts) * 1e3:>7.1f} ms"
        )
    ratio = np.median(times["BCa"]) / np.median(times["percentile"])
    print(f"  BCa / percentile: {ratio:.2f}x")

    res = call("bca")()
    print()
    print("BCa intervals (rng=0):")
    frame = res.to_frame()
    cols = [
        c
        for c in (
            "system",
            "estimate",
            "low",
            "high",
            "standard_error",
            "n_inputs",
            "n_runs",
        )
        if c in frame.columns
    ]
    with pd.option_context("display.width", 120, "display.precision", 4):
        print(frame[cols].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
