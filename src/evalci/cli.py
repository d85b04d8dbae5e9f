"""The ``evalci`` command line (``python -m evalci``).

One room for every command: parsing arguments, reading the user's file and
printing a result. The statistics live in the library; a command only calls
the public functions. Today it runs the bundled GPQA example.
"""

from __future__ import annotations

import argparse

from . import cluster_ci, load_example


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="evalci",
        description="Cluster-bootstrap confidence intervals on the bundled GPQA "
        "Diamond example (198 inputs x 5 runs x 2 systems).",
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
