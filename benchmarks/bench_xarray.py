"""All 31 CRUXEval systems in one call vs a loop of single-system calls.

Shape of CRUXEval-output at T=0.2 (800 inputs x 10 runs x 31 systems), B=10,000.
Uses the real counts table from tests/data (tests-only data, not shipped:
tests/data/PROVENANCE.md) at that shape, simulated data at other shapes.

    python benchmarks/bench_xarray.py [--quick]
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np
import pandas as pd
import xarray as xr

import evalci  # noqa: F401  (registers the .evalci accessor)

DATA = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data"


def cube(n_inputs: int, n_runs: int, n_systems: int) -> xr.DataArray:
    path = DATA / "cruxeval_output_T0.2_counts.csv"
    if (n_inputs, n_runs, n_systems) == (800, 10, 31):
        counts = pd.read_csv(path)
        wide = counts.pivot(index="input_id", columns="system", values="n_correct")
        runs = np.arange(n_runs)[None, :, None] < wide.to_numpy()[:, None, :]
        return xr.DataArray(
            runs.astype(float),
            dims=("input", "run", "system"),
            coords={"input": wide.index.to_numpy(), "system": wide.columns.to_numpy()},
        )
    rng = np.random.default_rng(0)
    p = rng.beta(1, 1, (n_inputs, 1, n_systems))
    y = rng.random((n_inputs, n_runs, n_systems)) < p
    return xr.DataArray(
        y.astype(float),
        dims=("input", "run", "system"),
        coords={
            "input": np.arange(n_inputs),
            "system": [f"s{i}" for i in range(n_systems)],
        },
    )


def timed(fn, repeat: int) -> float:
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best.append(time.perf_counter() - t)
    return float(np.median(best))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    n, k, s, b = (200, 5, 8, 1000) if args.quick else (800, 10, 31, 10_000)
    da = cube(n, k, s)
    repeat = 1 if args.quick else 3
    one_call = timed(lambda: da.evalci.cluster_ci(n_resamples=b, rng=0), repeat)
    loop = timed(
        lambda: [
            da.isel(system=[j]).evalci.cluster_ci(n_resamples=b, rng=0)
            for j in range(s)
        ],
        1,
    )
    print(f"evalci xarray: {s} systems x {n} inputs x {k} runs, B={b}")
    print(f"  all systems in one call      {one_call:8.3f} s")
    print(f"  loop of {s} single calls     {loop:8.3f} s")
    print(f"  ratio loop / one call        {loop / one_call:8.1f}x")


if __name__ == "__main__":
    main()
