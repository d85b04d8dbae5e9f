"""The ``evalci`` command line (``python -m evalci``).

One room for every command: parsing arguments, reading the user's file and
printing a result. The statistics live in the library; a command only calls
the public functions.

* ``python -m evalci [--method ...] [--n-resamples ...]``: the bundled GPQA
  example (no subcommand, as before).
* ``python -m evalci simulate --paper [--trials T] [--n-resamples B]
  [--accuracy-only]``: seed 000's coverage tables, each cell beside the
  paper's number (:func:`evalci.coverage.reproduce_paper`).
"""

from __future__ import annotations

import argparse
import sys
import time

from . import cluster_ci, load_example


def _demo(argv) -> int:
    parser = argparse.ArgumentParser(
        prog="evalci",
        description="Cluster-bootstrap confidence intervals on the bundled GPQA "
        "Diamond example (198 inputs x 5 runs x 2 systems). Subcommand: "
        "'evalci simulate --paper' reproduces seed 000's coverage tables.",
    )
    parser.add_argument(
        "--method", default="bca", choices=["percentile", "basic", "bca", "normal"]
    )
    parser.add_argument("--n-resamples", type=int, default=10_000)
    parser.add_argument("--confidence-level", type=float, default=0.95)
    parser.add_argument("--rng", type=int, default=0)
    args = parser.parse_args(argv)
    df = load_example()
    res = cluster_ci(
        df,
        "correct",
        cluster="input_id",
        by="system",
        method=args.method,
        n_resamples=args.n_resamples,
        confidence_level=args.confidence_level,
        rng=args.rng,
    )
    print(
        "GPQA Diamond: 198 inputs x 5 runs per system (stephlinds/evalconfidence, Apache-2.0)"
    )
    print(res)
    return 0


def _simulate(argv) -> int:
    from .coverage import format_paper, reproduce_paper

    parser = argparse.ArgumentParser(
        prog="evalci simulate",
        description="Coverage studies on seed 000's confusion-matrix model.",
    )
    parser.add_argument(
        "--paper",
        action="store_true",
        required=True,
        help="reproduce the paper's accuracy and Cohen's kappa tables",
    )
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--n-resamples", type=int, default=5000)
    parser.add_argument("--accuracy-only", action="store_true")
    parser.add_argument("--rng", type=int, default=0)
    parser.add_argument(
        "--jobs", type=int, default=1, help="worker processes (same results)"
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar on stderr"
    )
    args = parser.parse_args(argv)
    metrics = ("accuracy",) if args.accuracy_only else ("accuracy", "kappa")
    print(
        f"Seed 000's coverage tables: {args.trials} trials x {args.n_resamples} "
        f"resamples per cell, 95% intervals, rng={args.rng}; the paper used "
        "2,000 x 5,000. Endpoints count as covered (low <= theta <= high)."
    )
    for metric in metrics:
        start = time.perf_counter()
        df = reproduce_paper(
            metric,
            trials=args.trials,
            n_resamples=args.n_resamples,
            rng=args.rng,
            progress=False if args.no_progress else None,
            n_jobs=args.jobs,
        )
        print()
        print(format_paper(df))
        worst = df.loc[df.note == "", "diff_se"].abs()
        print(
            f"({metric}: {time.perf_counter() - start:.1f} s; largest |diff| "
            f"outside the noted cells {worst.max():.1f} SE)"
        )
        sys.stdout.flush()
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "simulate":
        return _simulate(argv[1:])
    return _demo(argv)
