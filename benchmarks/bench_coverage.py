"""Coverage studies (issue 11): seed 000's tables, batched against the engine.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_coverage.py          # full (~5 min)
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_coverage.py --quick  # seconds

Section 1 times :func:`evalci.simulate.coverage.reproduce_paper` for the accuracy
tables (23 cells, 2,000 trials x 5,000 resamples; target < 60 s) and the
Cohen's kappa tables (31 cells; target < 5 min). ``--quick`` runs 128 trials
x 1,000 resamples and prints its times only (per-block overheads dominate
there, so they say nothing about the full size).

Section 2 times a few cells trial by trial through the public engine
(``evalci.bootstrap`` on each simulated data set, ``TRIALS_ENGINE`` trials,
scaled to 2,000) and prints the ratio to the batched path on the same cell.
Targets are printed with PASS/MISS; the exit code is always 0.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


import evalci  # noqa: E402
from evalci import simulate  # noqa: E402
from evalci.simulate.coverage import coverage_study, reproduce_paper  # noqa: E402

TRIALS_ENGINE = 20


def _engine_cell(metric, strategy, method, n, k, b, trials):
    labels, preds = simulate.confusion_model_arrays(trials, n, k, rng=0)
    met = evalci.metrics.kappa(truth="label") if metric == "kappa" else None
    start = time.perf_counter()
    for t in range(trials):
        df = simulate.confusion_model(n, k, rng=t)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evalci.EvalciWarning)
            if metric == "kappa":
                evalci.bootstrap(df, "pred", "input_id", strategy=strategy,
                                 metric=met, method=method, n_resamples=b, rng=t)  # fmt: skip
            else:
                evalci.bootstrap(df, "correct", "input_id", strategy=strategy,
                                 method=method, n_resamples=b, rng=t)  # fmt: skip
    del labels, preds
    return (time.perf_counter() - start) / trials


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--ratios-only", action="store_true", help="section 2 only (full size: ~3 min)"
    )
    args = parser.parse_args(argv)
    trials, b = (128, 1000) if args.quick else (2000, 5000)
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"{trials} trials x {b} resamples per cell")  # fmt: skip

    print("\n1. seed 000's tables through reproduce_paper")
    for metric, target in (
        () if args.ratios_only else (("accuracy", 60.0), ("kappa", 300.0))
    ):
        start = time.perf_counter()
        df = reproduce_paper(
            metric, trials=trials, n_resamples=b, rng=0, progress=False
        )
        el = time.perf_counter() - start
        if args.quick:  # per-block overheads dominate: no full-size claim
            print(f"   {metric:8s} {len(df):3d} cells: {el:7.1f} s (quick size)")
        else:
            ok = "PASS" if el < target else "MISS"
            print(f"   {metric:8s} {len(df):3d} cells: {el:7.1f} s "
                  f"(target < {target:.0f} s) {ok}")  # fmt: skip

    print(f"\n2. per cell: batched vs evalci.bootstrap trial by trial "
          f"({TRIALS_ENGINE} trials, scaled to 2,000; B={b})")  # fmt: skip
    cells = [
        ("accuracy", "cluster", "percentile", 200, 5),
        ("accuracy", "hierarchical", "percentile", 200, 5),
        ("accuracy", "mode_aggregate", "percentile", 200, 5),
        ("kappa", "cluster", "bca", 200, 5),
        ("kappa", "hierarchical", "percentile", 200, 5),
    ]
    for metric, s, m, n, k in cells:
        start = time.perf_counter()
        coverage_study("seed000", s, m, metric, n, k, trials, b, rng=0, progress=False)
        ours = (time.perf_counter() - start) / trials
        eng = _engine_cell(metric, s, m, n, k, b, TRIALS_ENGINE)
        print(f"   {metric:8s} {s:14s} {m:10s} N={n} k={k}: batched "
              f"{2000 * ours:6.1f} s, engine ~{2000 * eng:7.1f} s per 2,000 trials; "
              f"ratio {eng / ours:6.1f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
