"""Every figure of issue 39 as a ratio to its floor, in one run.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_floors.py           # full (~5 min)
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_floors.py --quick   # smoke test

A figure and its floor are timed in turn in the same process (round-robin,
the median of the repeats after a warm-up), so the machine's load falls on
both; the ratio is what is compared with the target. The floors:

* **O(N) pattern floor** (one accuracy interval): ``floor_ci`` of
  ``bench_engine.py``, an exact pattern bootstrap in a few numpy calls, no
  checks, no jackknife.
* **bare paired draws** (many systems): the index draws of the same
  streams, and nothing else -- what a paired bootstrap of inputs must make
  when the systems' joint per-input patterns are about as many as the
  inputs (0/1 scores of 10 systems, k = 5: ~6^10 possible patterns).
* **ten single-system calls**: ``cluster_ci`` on each system's rows alone,
  each on its own pattern kernel (6 patterns at k = 5), with the groupby.
  Paired draws cannot reach it when the joint patterns are many: the draws
  alone cost more (the table says by how much).
* **cluster**: the cluster strategy on the same table, for run-level
  strategies and kappa.

Dask's figures need a cluster and a 10^7-row Parquet file: see
``bench_scaleout.py``. ``RESULTS.md`` keeps the table.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import evalci
from bench_engine import floor_ci, kappa_table
from evalci._base.streams import streams
from evalci.engine import resampling

B = 10_000


def median_times(fns: dict, repeat: int) -> dict:
    """Median time of each callable, called in turn ``repeat`` times after a warm-up."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: float(np.median(t)) for name, t in times.items()}


def fmt(t: float) -> str:
    return f"{t * 1e3:8.1f} ms" if t < 1 else f"{t:8.2f} s "


class Table:
    def __init__(self):
        self.rows = []

    def add(self, figure, t, floor_name, t_floor, target=None):
        ratio = t / t_floor
        ok = "" if target is None else ("PASS" if ratio <= target else "MISS")
        goal = "" if target is None else f"<= {target:g}x"
        self.rows.append((figure, fmt(t), floor_name, fmt(t_floor), ratio, goal, ok))
        print(
            f"  {figure:<44} {fmt(t)}  / {floor_name:<26} {fmt(t_floor)}"
            f" = {ratio:6.2f}x {goal:>7} {ok}",
            flush=True,
        )


def systems_table(n: int, k: int = 5, systems: int = 10, seed: int = 0) -> pd.DataFrame:
    """Tidy 0/1 table of ``systems`` systems; each (input, system) its own rate."""
    gen = np.random.default_rng(seed)
    p = gen.beta(2.0, 2.0, size=(systems, n))
    correct = (gen.random((systems, n, k)) < p[:, :, None]).astype(np.int8)
    return pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(np.arange(n), k), systems),
            "system": np.repeat([f"s{s:02d}" for s in range(systems)], n * k),
            "correct": correct.ravel(),
        }
    )


def bare_draws(n: int, b: int) -> None:
    """The index draws of ``b`` replicates of ``n`` inputs, as the kernel makes them."""
    unit = resampling.Unit(0, np.zeros((n, 1, 1)), np.array([0, n]))
    rows = resampling.draw_rows(n)
    n_streams = resampling.n_streams_for(b)
    root = np.random.SeedSequence(0)
    for gen in streams(root, (resampling._BOOT, 0), 0, n_streams):
        for _ in resampling._draw_chunks(gen, unit, rows):
            pass


def call(df, b, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.EvalciWarning)
        return evalci.bootstrap(df, n_resamples=b, rng=0, **kw)


def section_one(table: Table, n: int, b: int, repeat: int) -> None:
    df = systems_table(n, systems=1).drop(columns="system")
    kw = dict(value="correct", cluster="input_id")
    t = median_times(
        {
            "ci": lambda: call(df, b, **kw),
            "floor": lambda: floor_ci(df["input_id"].to_numpy(), df["correct"], b=b),
        },
        repeat,
    )
    table.add(
        f"one accuracy CI, N={n:,} x 5 (tidy)",
        t["ci"],
        "O(N) pattern floor",
        t["floor"],
        2,
    )


def section_systems(table: Table, n: int, b: int, repeat: int) -> None:
    df = systems_table(n)
    kw = dict(cluster="input_id", n_resamples=b, rng=0)

    def singles():
        for _, rows in df.groupby("system"):
            call(rows, b, value="correct", cluster="input_id")

    t = median_times(
        {
            "draws": lambda: bare_draws(n, b),
            "by": lambda: call(df, b, value="correct", cluster="input_id", by="system"),
            "apart": lambda: call(
                df, b, value="correct", cluster="input_id", by="system", paired=False
            ),
            "compare": lambda: evalci.compare(df, "correct", system="system", **kw),
            "board": lambda: evalci.leaderboard(df, "correct", system="system", **kw),
            "singles": singles,
        },
        repeat,
    )
    what = f"10 systems x {n:,} x 5"
    table.add(f"{what}: cluster_ci(by=)", t["by"], "bare paired draws", t["draws"], 2)
    table.add(f"{what}: compare", t["compare"], "bare paired draws", t["draws"], 2)
    table.add(f"{what}: leaderboard", t["board"], "bare paired draws", t["draws"], 2)
    table.add(
        f"{what}: cluster_ci(by=)", t["by"], "ten single-system calls", t["singles"], 3
    )
    table.add(
        f"{what}: cluster_ci(by=, paired=False)",
        t["apart"],
        "ten single-system calls",
        t["singles"],
        3,
    )


def section_strategies(table: Table, n: int, b: int, repeat: int) -> None:
    df = systems_table(n, systems=1).drop(columns="system")
    kw = dict(value="correct", cluster="input_id")
    fns = {
        s: (lambda s=s: call(df, b, strategy=s, **kw))
        for s in ("cluster", "hierarchical", "single_draw", "iid")
    }
    t = median_times(fns, repeat)
    for s in ("hierarchical", "single_draw", "iid"):
        table.add(f"{s}, N={n:,} x 5 (tidy)", t[s], "cluster", t["cluster"], 1.3)


def kappa_draws(df: pd.DataFrame, b: int):
    """The bare draws of kappa's pattern kernel: one multinomial over the
    distinct per-input confusion rows (P of them), for ``b`` replicates in
    streams of 64, as the engine draws them."""
    codes = pd.factorize(df["pred"])[0] * 4 + pd.factorize(df["label"])[0]
    ids = df["input_id"].to_numpy()
    n = int(ids.max()) + 1
    rows = np.zeros((n, 16), dtype=np.int64)
    np.add.at(rows, (ids, codes), 1)
    _, mult = np.unique(rows, axis=0, return_counts=True)
    p = mult / n

    def draw():
        root = np.random.SeedSequence(0)
        for gen in streams(root, (resampling._BOOT, 0), 0, resampling.n_streams_for(b)):
            gen.multinomial(n, p, size=resampling.STREAM_SIZE)

    return draw, len(mult)


def section_kappa(table: Table, n: int, b: int, repeat: int) -> None:
    df = kappa_table(n)
    acc = systems_table(n, systems=1).drop(columns="system")
    kappa = evalci.metrics.kappa(truth="label")
    draws, n_patterns = kappa_draws(df, b)
    t = median_times(
        {
            "kappa": lambda: call(
                df, b, value="pred", cluster="input_id", metric=kappa, method="bca"
            ),
            "cluster": lambda: call(
                acc, b, value="correct", cluster="input_id", method="bca"
            ),
            "draws": draws,
        },
        repeat,
    )
    what = f"kappa, 4 classes, N={n:,} x 5, BCa"
    table.add(what, t["kappa"], "accuracy cluster", t["cluster"], 4)
    table.add(what, t["kappa"], f"its draws ({n_patterns} patterns)", t["draws"])


def section_bayes(table: Table, repeat: int) -> None:
    gen = np.random.default_rng(5)
    n, k = 1_000, 10
    df = pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(n), k),
            "correct": (gen.random(n * k) < np.repeat(gen.beta(2, 2, n), k)).astype(
                int
            ),
        }
    )
    fifty = 0.05
    t = median_times(
        {
            "bayes": lambda: evalci.bayes_ci(
                df, "correct", cluster="input_id", estimand="inputs"
            )
        },
        repeat,
    )
    table.add(
        "bayes_ci(estimand='inputs'), N=1,000, k=10",
        t["bayes"],
        "the 50 ms goal",
        fifty,
        1,
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    args = p.parse_args(argv)
    n, b, repeat = (5_000, 2_000, 2) if args.quick else (100_000, B, 3)
    print(f"Issue 39 figures against their floors: B={b:,}, {repeat} repeats, medians")
    table = Table()
    section_one(table, n, b, repeat)
    section_systems(table, n, b, repeat)
    section_strategies(table, n, b, repeat)
    section_kappa(table, n, b, repeat)
    section_bayes(table, repeat)


if __name__ == "__main__":
    main()
