"""``evalci simulate``: seed 000's coverage tables, or coverage at your N and k.

``simulate --paper`` reproduces seed 000's tables
(:func:`evalci.simulate.coverage.reproduce_paper`); ``simulate FILE`` draws
new data sets from the user's own inputs' pass rates (:class:`_FromData`)
and counts how often the cluster and the naive interval cover the
population score (:func:`evalci.simulate.coverage.coverage_study`).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from evalci._base import progress as _progress
from evalci.reporting import cli_input as _cli_input
from evalci.reporting.cli_commands import (
    _emit,
    _files_text,
    _inputs_only,
    _load,
    _progress_flag,
    _render,
    _say,
)


class _FromData:
    """A population of inputs like the user's: each (input, system) a pass rate.

    ``sample`` draws N inputs with replacement from the file's inputs (the
    same inputs for every system, so systems stay paired) and k runs per
    input, each correct with that input's observed pass rate; ``truth`` is the
    mean pass rate over the file's inputs (each input counts equally).
    """

    def __init__(self, frame, value, cluster, system):
        rates = frame.pivot_table(index=cluster, columns=system, values=value,
                                  aggfunc="mean")  # fmt: skip
        self.dropped = int(rates.isna().any(axis=1).sum())
        rates = rates.dropna()
        self.systems = [str(s) for s in rates.columns]
        self.p = rates.to_numpy(dtype=float)

    def truth(self, metric):
        return dict(zip(self.systems, self.p.mean(axis=0), strict=True))

    def sample(self, n, k, rng):
        idx = rng.integers(0, len(self.p), n)
        u = rng.random((len(self.systems), n, k))
        correct = (u < self.p[idx].T[:, :, None]).astype(np.int64)
        s, i, r = np.indices(correct.shape).reshape(3, -1)
        return pd.DataFrame({"input_id": i, "run": r,
                             "system": np.asarray(self.systems)[s],
                             "correct": correct.ravel()})  # fmt: skip


def _simulate_file(args) -> int:
    from evalci.simulate.coverage import coverage_study

    args.trials, args.n_resamples = args.trials or 200, args.n_resamples or 1000
    data = _load(args)
    _inputs_only(args, data, "simulate")
    if data.value is None or not _cli_input._binary(data.frame[data.value]):
        raise ValueError(
            "`--value`: simulate FILE needs a 0/1 value column (one row per run); "
            f"{data.value!r} holds other values."
        )
    model = _FromData(data.frame, data.value, data.cluster, data.system)
    if model.dropped:
        _say(f"{model.dropped} inputs miss a system and are left out")
    k_now = int(round(data.frame.groupby([data.system, data.cluster]).size().mean()))
    res = coverage_study(
        model, strategies=("cluster", "iid"), methods=(args.method,),
        n_inputs=args.n_inputs or len(model.p), n_runs=args.runs or k_now,
        trials=args.trials, n_resamples=args.n_resamples,
        confidence_level=args.confidence_level, rng=args.rng,
        progress=_progress.wanted(_progress_flag(args)),
    )  # fmt: skip
    cols = ["system", "strategy", "n_inputs", "n_runs", "truth", "coverage",
            "coverage_se", "mean_width"]  # fmt: skip
    title = (
        f"Coverage of {args.confidence_level:.0%} {args.method} intervals over "
        f"{args.trials} data sets drawn from {_files_text(args)} ({args.n_resamples} "
        f"resamples each, rng {args.rng})"
    )
    notes = [
        "cluster: resample inputs with their runs (evalci's default); iid: rows "
        "as independent (the naive interval). Coverage near the level is honest."
    ]
    _emit(_render(res[cols], args.format, title, notes, full=res), args)
    return 0


def _cmd_simulate(args) -> int:
    if args.paper and args.file:
        raise ValueError("give FILE or --paper, not both.")
    if args.file:
        return _simulate_file(args)
    if not args.paper:
        raise ValueError(
            "simulate needs FILE (a coverage check on your data) or --paper "
            "(seed 000's tables); see 'evalci simulate --help'."
        )
    return _simulate_paper(args)


def _simulate_paper(args) -> int:
    from evalci.simulate.coverage import format_paper, reproduce_paper

    trials, b = args.trials or 2000, args.n_resamples or 5000
    metrics = ("accuracy",) if args.accuracy_only else ("accuracy", "kappa")
    print(
        f"Seed 000's coverage tables: {trials} trials x {b} resamples per cell, "
        f"95% intervals, rng={args.rng}; the paper used 2,000 x 5,000. "
        "Endpoints count as covered (low <= theta <= high)."
    )
    for metric in metrics:
        start = time.perf_counter()
        df = reproduce_paper(metric, trials=trials, n_resamples=b, rng=args.rng,
                             progress=_progress.wanted(_progress_flag(args)),
                             n_jobs=args.jobs)  # fmt: skip
        print()
        print(format_paper(df))
        worst = df.loc[df.note == "", "diff_se"].abs()
        print(
            f"({metric}: {time.perf_counter() - start:.1f} s; largest |diff| "
            f"outside the noted cells {worst.max():.1f} SE)"
        )
        sys.stdout.flush()
    return 0
