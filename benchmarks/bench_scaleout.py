"""Scale out (issue 12): evalci on a ``distributed.LocalCluster`` against pandas.

Six cases (``--case a|b|c|d|e|f`` runs one; all by default):

a. a tidy table from Parquet, k=5, B=10,000: a 2-worker LocalCluster
   (``dd.read_parquet`` then ``ddf.evalci.cluster_ci``) against pandas
   (``pd.read_parquet`` then ``evalci.cluster_ci``), for 0/1 outcomes at
   N=10**6 x 1 system and N=200,000 x 10 systems, and continuous scores at
   N=200,000 x 1 and x 10 systems (:data:`CASE_A`; the N=200,000 times are
   also extrapolated to 10**6, linearly, and printed as such);
   ``--kind binary|continuous`` runs one half;
b. B=1,000,000 resamples at N=1,000 against B=10,000: peak memory stays
   bounded by the block (1,024 replicates per task);
c. strong scaling, 1 -> 2 workers, where resampling dominates; and
   ``backend="dask"`` on a pandas frame;
d. 10,000,000 rows (2,000,000 inputs x 5 runs, continuous) from Parquet: the
   unit is cut into tiles of 2**20 inputs (``evalci-tile`` tasks), B=1,000;
e. (issue 23) 10 systems x 1,000,000 inputs x 5 runs, B=2,048: first on 2
   workers with ``memory_limit="300MB"`` each (``--memory-limit``; refused
   before any task: the reduction's shuffle does not fit; ``--skip-limit``
   skips it), then on 1 and 2 workers at
   ``--fit-limit`` (default 1GB) with the tile size the memory check names
   when it names one (phases, speed-up, each worker's peak resident set),
   then 10,000,000 inputs x 1 run x 1 system;
f. (issue 39) 10**7 inputs x 5 runs of 0/1 outcomes from Parquet (5 x 10**7
   rows, 50 files), B=10,000: pandas against 1, 2 and 4 workers, each
   ``--repeats`` times round-robin; medians, ratios and the load. The
   reduction sums each partition's cells and adds them by input block (no
   shuffle: ``evalci-cells``, ``evalci-sum``).

Times are wall-clock seconds of one call (data read included); memory is the
peak above the level before the call: the client's resident set sampled every
20 ms by a thread, and each worker's the same way (a sampling thread started
on every worker with ``client.run``; the largest worker is printed). Every
Dask case starts a fresh cluster. ``--quick`` uses tiny sizes and in-process
workers (no worker meter; the tile size lowered to 4,096 inputs in case d so
the tile tasks run), under a minute. The script only prints; targets are never
asserted.

    python benchmarks/bench_scaleout.py [--quick] [--case a|...|f] [--kind ...] [--repeats R] [--paths]
"""

from __future__ import annotations

import os

# before numpy: one BLAS thread per process (workers inherit the environment)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import logging  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from dask.utils import key_split  # noqa: E402

import evalci  # noqa: E402
from evalci.engine import resampling  # noqa: E402

MB = 2**20
PAGE = os.sysconf("SC_PAGE_SIZE")
ROWS_PER_FILE = 1_000_000
#: Rows per Parquet file (partition) of case e, for 300 MB workers.
PART_E = 250_000
FIELDS = ("estimate", "low", "high")
#: Worker processes (``--quick`` runs in-process workers: faster to start, no
#: worker memory meter).
PROCESSES = True
#: Of the last :func:`on_cluster` call, per task name: (first start, last
#: stop, compute seconds summed over tasks), from the task stream.
PHASES: dict[str, tuple[float, float, float]] = {}
#: Of the last :func:`on_cluster` call: each worker's peak resident set, MB.
PEAKS: list[float] = []


# ------------------------------------------------------------------ data
def frame(n: int, k: int, systems: int, kind: str, seed: int = 0) -> pd.DataFrame:
    """``n`` inputs x ``k`` runs x ``systems``: 0/1 outcomes or continuous scores.

    Each input has a difficulty ``p ~ Beta(2, 2)``; a 0/1 outcome is
    Bernoulli(p), a score is Normal(p, 0.3) (no two alike: nothing compresses).
    Rows are ordered by system, input, run.
    """
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, n)
    inputs = np.tile(np.repeat(np.arange(n, dtype=np.int32), k), systems)
    rows = n * k * systems
    if kind == "binary":
        value = (rng.random(rows) < p[inputs]).astype(np.int8)
    else:
        value = rng.normal(p[inputs], 0.3)
    return pd.DataFrame(
        {
            "input_id": inputs,
            "run": np.tile(np.arange(k, dtype=np.int8), n * systems),
            "system": np.repeat(np.arange(systems, dtype=np.int8), n * k),
            "value": value,
        }
    )


def to_parquet(df: pd.DataFrame, where: str, rows: int = ROWS_PER_FILE) -> str:
    """``df`` written as files of ``rows`` rows (one partition each)."""
    os.makedirs(where)
    for i, lo in enumerate(range(0, len(df), rows)):
        part = df.iloc[lo : lo + rows]
        part.to_parquet(f"{where}/part-{i:04d}.parquet", index=False)
    return where


# ------------------------------------------------------------------ meters
def rss() -> int:
    """This process's resident set, bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class PeakRSS:
    """The peak resident set of this process while the block runs (20 ms samples)."""

    def __enter__(self):
        self.start = self.peak = rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss())

    @property
    def above(self) -> float:
        return (self.peak - self.start) / MB


def cpu_seconds() -> float:
    """CPU time (user + system) of this process so far, seconds."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _start_meter(dask_worker) -> None:
    """On a worker: sample its resident set every 20 ms until stopped."""
    meter = PeakRSS()
    meter.__enter__()
    dask_worker._evalci_meter = (meter, cpu_seconds())


def _stop_meter(dask_worker) -> tuple[float, float, float]:
    """On a worker: (peak MB above the start, CPU seconds, peak MB) since the
    meter started (NaN for a worker restarted since)."""
    if not hasattr(dask_worker, "_evalci_meter"):
        return float("nan"), 0.0, float("nan")
    meter, cpu = dask_worker._evalci_meter
    meter.__exit__(None, None, None)
    del dask_worker._evalci_meter
    return meter.above, cpu_seconds() - cpu, meter.peak / MB


@contextlib.contextmanager
def cluster(workers: int, memory_limit="auto", mmap: bool = True):
    """A fresh ``LocalCluster`` of single-threaded workers and its Client.

    ``mmap=True`` keeps numpy's temporaries off ``mmap`` (faster); under a
    memory limit it keeps freed memory from going back to the system, so
    the memory-limited case turns it off."""
    import distributed

    env = {"distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": 2**28}
    with (
        dask.config.set(env if mmap else {}),
        distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=PROCESSES,
            dashboard_address=":0",
            memory_limit=memory_limit,
        ) as lc,
        distributed.Client(lc) as client,
    ):
        yield client


def on_cluster(client, call):
    """Run ``call()`` on ``client``: (result, seconds, client MB, worker MB, tasks).

    ``tasks`` counts the task names seen; its ``"cpu"`` entry is the workers'
    CPU seconds (all workers) over the wall time: 2.0 means two busy workers.
    """
    import distributed

    client.run(_start_meter)
    with PeakRSS() as peak, distributed.get_task_stream(client) as ts:
        t = time.perf_counter()
        out = call()
        seconds = time.perf_counter() - t
    meters = client.run(_stop_meter).values()
    worker_mb = max(mb for mb, _, _ in meters)
    PEAKS[:] = [peak for _, _, peak in meters]
    if not PROCESSES:  # threads share the client's process: no separate meter
        worker_mb = float("nan")
    tasks = Counter(key_split(r["key"]) for r in ts.data)
    tasks["cpu"] = sum(cpu for _, cpu, _ in meters) / seconds
    PHASES.clear()
    for r in ts.data:
        for ss in r["startstops"]:
            if ss["action"] == "compute":
                lo, hi, busy = PHASES.get(key_split(r["key"]), (np.inf, -np.inf, 0.0))
                PHASES[key_split(r["key"])] = (
                    min(lo, ss["start"]),
                    max(hi, ss["stop"]),
                    busy + ss["stop"] - ss["start"],
                )
    return out, seconds, peak.above, worker_mb, tasks


def on_parquet(client, path: str, value: str, kw: dict):
    """:func:`on_cluster` of ``dd.read_parquet(path).evalci.cluster_ci``."""
    return on_cluster(
        client,
        lambda: dd.read_parquet(path).evalci.cluster_ci(value, "input_id", **kw),
    )


def on_pandas(call):
    """Run ``call()`` here: (result, seconds, client MB)."""
    with PeakRSS() as peak:
        t = time.perf_counter()
        out = call()
        seconds = time.perf_counter() - t
    return out, seconds, peak.above


def same(a, b) -> bool:
    """Whether two results have the same estimates and intervals, bit for bit."""
    return all(
        np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)))
        for f in FIELDS
    )


# ------------------------------------------------------------------ printing
HEADER = f"  {'case':<52}{'time':>10}{'client MB':>11}{'worker MB':>11}  evalci tasks"


def row(label, seconds, client_mb, worker_mb=float("nan"), tasks=None) -> None:
    shown = ""
    if tasks:
        shown = f"worker cpu/wall {tasks['cpu']:.2f}  " if PROCESSES else ""
        shown += " ".join(
            f"{k.removeprefix('evalci-')}={v}"
            for k, v in sorted(tasks.items())
            if k.startswith("evalci-")
        )
    worker = "-" if np.isnan(worker_mb) else f"{worker_mb:.0f}"
    print(f"  {label:<52}{seconds:>8.2f} s{client_mb:>11.0f}{worker:>11}  {shown}")


def section(title: str) -> None:
    load = os.getloadavg()[0]
    print(f"\n{title}\n{'-' * len(title)}")
    print(f"  (1-min load average before this section: {load:.2f} on {os.cpu_count()})")
    print(HEADER)


# ------------------------------------------------------------------ cases
def compare_parquet(tmp, label, df, b, workers=2, by="system"):
    """pandas vs a LocalCluster on the same Parquet files; returns (pandas, dask) s."""
    path = to_parquet(df, f"{tmp}/{label.replace(' ', '_').replace('/', '')}")
    kw = dict(by=by, n_resamples=b, rng=0)
    ref, t_pd, c_pd = on_pandas(
        lambda: evalci.cluster_ci(pd.read_parquet(path), "value", "input_id", **kw)
    )
    row(f"pandas   {label} ({ref.kernel})", t_pd, c_pd)
    with cluster(workers) as client:
        res, t_dk, c_dk, w_dk, tasks = on_cluster(
            client,
            lambda: dd.read_parquet(path).evalci.cluster_ci("value", "input_id", **kw),
        )
    row(f"dask {workers}x1 {label}", t_dk, c_dk, w_dk, tasks)
    print(f"  {'':<52}pandas/dask {t_pd / t_dk:5.2f}x  same numbers: {same(ref, res)}")
    print_phases()
    return t_pd, t_dk


def print_phases() -> None:
    """The reduction's and the resampling's spans, and the client's pass between."""
    red, rs = PHASES.get("evalci-reduce"), PHASES.get("evalci-resample")
    rs = rs or PHASES.get("evalci-tile")
    if red and rs:
        print(
            f"  {'':<52}phases: reduce {red[1] - red[0]:.1f} s, "
            f"client pass {rs[0] - red[1]:.1f} s, resample {rs[1] - rs[0]:.1f} s"
        )


#: Case a's tables: (outcome, inputs, systems). Where N < 10**6 (the index
#: kernel's time is linear in N) the times are also extrapolated to 10**6.
CASE_A = [
    ("binary", 1_000_000, 1),
    ("binary", 200_000, 10),
    ("continuous", 200_000, 1),
    ("continuous", 200_000, 10),
]


def case_a(tmp, quick: bool, kinds=("binary", "continuous")) -> None:
    b = 1_000 if quick else 10_000
    section(f"a. From Parquet, pandas vs 2-worker LocalCluster, k=5, B={b:,}")
    extrapolated = []
    for kind, n, systems in CASE_A:
        if kind not in kinds:
            continue
        n = 2_000 if quick else n
        name = "0/1" if kind == "binary" else "scores"
        label = f"{name} N={n:,} x {systems} sys"
        df = frame(n, 5, systems, kind)
        t_pd, t_dk = compare_parquet(tmp, label, df, b)
        del df
        if n < 1_000_000 and not quick:
            extrapolated.append((label, 1_000_000 / n, t_pd, t_dk))
    if extrapolated:
        print("  extrapolated to N=1,000,000 (linear in N; not measured):")
    for label, scale, t_pd, t_dk in extrapolated:
        print(
            f"    {label} x{scale:g}: pandas ~{t_pd * scale:.0f} s, "
            f"dask 2x1 ~{t_dk * scale:.0f} s"
        )


def case_b(quick: bool) -> None:
    n, big = (200, 100_000) if quick else (1_000, 1_000_000)
    section(f"b. B={big:,} against B=10,000 at N={n:,} (continuous, k=5): memory")
    ddf = dd.from_pandas(frame(n, 5, 1, "continuous"), npartitions=2)
    peaks = {}
    for b in (10_000, big):
        with cluster(2) as client:
            res, t, c, w, tasks = on_cluster(
                client,
                lambda b=b: ddf.evalci.cluster_ci(
                    "value", "input_id", n_resamples=b, rng=0
                ),
            )
        row(f"dask 2x1 B={b:,}", t, c, w, tasks)
        peaks[b] = (c, w)
    print(
        f"  ratio B={big:,} / B=10,000: client MB {peaks[big][0] / peaks[10_000][0]:.1f}x, "
        f"worker MB {peaks[big][1] / peaks[10_000][1]:.1f}x "
        f"(the final (B,) replicates: {8 * big / MB:.1f} MB)"
    )


def case_c(tmp, quick: bool) -> None:
    # B = 10 tasks of 1,024 replicates: 5 rounds on each of 2 workers
    n, b = (5_000, 2_048) if quick else (200_000, 10_240)
    section(f"c. Strong scaling, continuous scores, N={n:,} x 5, B={b:,}")
    df = frame(n, 5, 1, "continuous")
    path = to_parquet(df, f"{tmp}/c")
    kw = dict(n_resamples=b, rng=0)
    ref, t_pd, c_pd = on_pandas(
        lambda: evalci.cluster_ci(df, "value", "input_id", **kw)
    )
    row("pandas, numpy backend (one process)", t_pd, c_pd)
    times, spans = {}, {}
    for workers in (1, 2):
        with cluster(workers) as client:
            res, t, c, w, tasks = on_parquet(client, path, "value", kw)
            row(f"dask DataFrame (Parquet), {workers}x1", t, c, w, tasks)
            times[workers] = t
            lo, hi, busy = PHASES.get("evalci-resample", (0.0, 0.0, 0.0))
            spans[workers] = hi - lo
            print(
                f"  {'':<52}evalci-resample phase {hi - lo:.2f} s wall, "
                f"{busy:.2f} task-s"
            )
            if workers == 2:
                res2, t2, c2, w2, tasks2 = on_cluster(
                    client,
                    lambda: evalci.cluster_ci(
                        df, "value", "input_id", backend="dask", **kw
                    ),
                )
                row("pandas frame, backend='dask', 2x1", t2, c2, w2, tasks2)
                print(f"  {'':<52}same numbers: {same(ref, res) and same(ref, res2)}")
    print(
        f"  speed-up 1 -> 2 workers: {times[1] / times[2]:.2f}x   target >= 1.7x   "
        f"{'PASS' if times[1] / times[2] >= 1.7 else 'MISS'}"
    )
    if spans[2] > 0:
        print(
            f"  speed-up of the evalci-resample phase alone: {spans[1] / spans[2]:.2f}x"
        )


def case_d(tmp, quick: bool) -> None:
    n, b = (20_000, 1_000) if quick else (2_000_000, 1_000)
    if quick:  # tiny data: lower the tile size (in-process workers see it) for tiles
        resampling.TILE_SIZE = 2**12
    tile = resampling.TILE_SIZE
    section(
        f"d. {5 * n:,} rows ({n:,} inputs x 5 runs, continuous) from Parquet, "
        f"B={b:,}, tiles of {tile:,} inputs"
    )
    path = to_parquet(frame(n, 5, 1, "continuous"), f"{tmp}/d")
    kw = dict(n_resamples=b, rng=0)
    ref, t_pd, c_pd = on_pandas(
        lambda: evalci.cluster_ci(pd.read_parquet(path), "value", "input_id", **kw)
    )
    row("pandas (pd.read_parquet + cluster_ci)", t_pd, c_pd)
    with cluster(2) as client:
        res, t, c, w, tasks = on_cluster(
            client,
            lambda: dd.read_parquet(path).evalci.cluster_ci("value", "input_id", **kw),
        )
    row("dask 2x1 (dd.read_parquet)", t, c, w, tasks)
    print(
        f"  {'':<52}pandas/dask {t_pd / t:5.2f}x  same numbers: {same(ref, res)}  "
        f"evalci-tile tasks seen: {tasks.get('evalci-tile', 0)}"
    )


#: Case f: (inputs, runs, rows per Parquet file); ``--quick`` divides by 1,000.
CASE_F = (10_000_000, 5, 1_000_000)
#: Case f: timed rounds (pandas, then 1, 2 and 4 workers, each round).
REPEATS_F = 3


def write_binary(where: str, n: int, k: int, rows: int) -> str:
    """``n`` inputs x ``k`` runs of 0/1 outcomes (input_id, run, correct) as
    Parquet files of ``rows`` rows, written one file at a time, inputs in order."""
    os.makedirs(where)
    per = max(rows // k, 1)
    for i, lo in enumerate(range(0, n, per)):
        rng = np.random.default_rng([0, i])
        ids = np.arange(lo, min(lo + per, n), dtype=np.int32)
        p = rng.beta(2, 2, len(ids))
        pd.DataFrame(
            {
                "input_id": np.repeat(ids, k),
                "run": np.tile(np.arange(k, dtype=np.int8), len(ids)),
                "correct": (rng.random((len(ids), k)) < p[:, None])
                .astype(np.int8)
                .ravel(),
            }
        ).to_parquet(f"{where}/part-{i:04d}.parquet", index=False)
    return where


def case_f(tmp, quick: bool) -> None:
    """Issue 39: 0/1 outcomes reduced without a shuffle, 1 -> 2 -> 4 workers."""
    n, k, rows = CASE_F
    if quick:
        n, rows = n // 1000, rows // 1000
    b = 1_000 if quick else 10_000
    section(
        f"f. {n * k:,} rows ({n:,} inputs x {k} runs, 0/1) from Parquet, "
        f"{rows:,} rows a file, B={b:,}, {REPEATS_F} rounds"
    )
    path = write_binary(f"{tmp}/f", n, k, rows)
    kw = dict(n_resamples=b, rng=0)
    times: dict[str, list[float]] = {}
    loads, same_numbers = [], True
    for r in range(REPEATS_F):
        loads.append(os.getloadavg()[0])
        ref, t, c = on_pandas(
            lambda: evalci.cluster_ci(
                pd.read_parquet(path), "correct", "input_id", **kw
            )
        )
        row(f"round {r + 1}: pandas (pd.read_parquet + cluster_ci)", t, c)
        times.setdefault("pandas", []).append(t)
        for workers in (1, 2, 4):
            with cluster(workers) as client:
                res, t, c, w, tasks = on_parquet(client, path, "correct", kw)
            row(f"round {r + 1}: dask {workers}x1 (dd.read_parquet)", t, c, w, tasks)
            print_spans(
                ("evalci-cells", "evalci-sum", "evalci-summary", "evalci-resample")
            )
            times.setdefault(workers, []).append(t)
            same_numbers &= same(ref, res)
    med = {key: float(np.median(v)) for key, v in times.items()}
    print(
        f"  medians: pandas {med['pandas']:.2f} s, 1 worker {med[1]:.2f} s, "
        f"2 workers {med[2]:.2f} s, 4 workers {med[4]:.2f} s; 1-min load before "
        f"the rounds: {', '.join(f'{x:.1f}' for x in loads)} on {os.cpu_count()}"
    )
    print(
        f"  pandas / 2 workers {med['pandas'] / med[2]:.2f}x (target > 1)   "
        f"1 -> 2 workers {med[1] / med[2]:.2f}x (target >= 1.7)   "
        f"1 -> 4 workers {med[1] / med[4]:.2f}x   same numbers: {same_numbers}"
    )


def case_f_paths(tmp, quick: bool) -> None:
    """Case f's table on warm clusters of 1 and 2 workers: the pass built from
    the blocks' summaries against the blocks' cells gathered (the fallback,
    forced: the summaries are computed too), alternated in one process."""
    from evalci.engine import cell_patterns

    n, k, rows = CASE_F
    if quick:
        n, rows = n // 1000, rows // 1000
    path = (
        f"{tmp}/f"
        if os.path.exists(f"{tmp}/f")
        else write_binary(f"{tmp}/f", n, k, rows)
    )
    kw = dict(n_resamples=1_000 if quick else 10_000, rng=0)
    build = cell_patterns.pass_of_signatures
    paths = {"summaries": build, "cells": lambda *a, **k: None}
    times: dict = {}
    section(f"f, warm clusters: summaries vs cells gathered, {REPEATS_F} rounds")
    for workers in (1, 2):
        with cluster(workers) as client:
            on_parquet(client, path, "correct", kw)  # warm
            for r in range(REPEATS_F):
                for name, fn in paths.items():
                    cell_patterns.pass_of_signatures = fn
                    try:
                        _, t, c, w, tasks = on_parquet(client, path, "correct", kw)
                    finally:
                        cell_patterns.pass_of_signatures = build
                    row(f"round {r + 1}: {workers} worker(s), {name}", t, c, w, tasks)
                    times.setdefault((workers, name), []).append(t)
    med = {key: float(np.median(v)) for key, v in times.items()}
    for name in paths:
        print(
            f"  {name}: 1 worker {med[1, name]:.2f} s, 2 workers {med[2, name]:.2f} s"
            f" (1 -> 2 workers {med[1, name] / med[2, name]:.2f}x)"
        )


def print_spans(names) -> None:
    """Wall span and summed task seconds of each named phase of the last call."""
    shown = [
        f"{name.removeprefix('evalci-')} {hi - lo:.1f} s ({busy:.1f} task-s)"
        for name in names
        if name in PHASES
        for lo, hi, busy in [PHASES[name]]
    ]
    if shown:
        print(f"  {'':<52}phases: {', '.join(shown)}")


#: ``memory_limit`` of every worker in case e's first call (``--memory-limit``)
#: and in its runs (``--fit-limit``).
LIMIT_E, FIT_E = "300MB", "1GB"
#: Whether case e first tries ``LIMIT_E`` (not with ``--skip-limit``).
TRY_E = True


def _limited(workers: int, limit, call, tile=None):
    """``call()`` on a fresh memory-limited cluster (task shuffle, no mmap
    tuning): ``(on_cluster's tuple, None)``, or ``(seconds, ValueError)``."""
    t = time.perf_counter()
    with (
        evalci.set_options(tile_size=tile),
        dask.config.set({"dataframe.shuffle.method": "tasks"}),
        cluster(workers, memory_limit=limit, mmap=False) as client,
    ):
        t = time.perf_counter()
        try:
            return on_cluster(client, call), None
        except ValueError as e:
            return time.perf_counter() - t, e


def _fitted(workers: int, limit, call, tile=None):
    """``call()`` at ``limit`` (with ``tile``); refused with a tile size
    named, again with it."""
    out, err = _limited(workers, limit, call, tile)
    if err is None:
        return out, tile
    found = re.search(r"tile_size=2\*\*(\d+)", str(err))
    if found is None:
        print(f"  refused at {limit}: {err}")
        return None, None
    tile = 2 ** int(found[1])
    print(f"  refused after {out:.1f} s; again with tile_size=2**{found[1]}")
    out, err = _limited(workers, limit, call, tile)
    if err is not None:
        print(f"  refused again: {err}")
        return None, tile
    return out, tile


def case_e(tmp, quick: bool) -> None:
    """Issue 23: 10 systems x 10**6 inputs x 5 runs, refused at 300 MB and run
    at ``FIT_E`` on 1 and 2 workers; then 10**7 inputs x 1 system (1 run)."""
    n, b = (20_000, 2_048) if quick else (1_000_000, 2_048)
    path = to_parquet(frame(n, 5, 10, "continuous"), f"{tmp}/e", PART_E)
    kw = dict(by="system", n_resamples=b, rng=0)

    def call():
        return dd.read_parquet(path).evalci.cluster_ci("value", "input_id", **kw)

    if PROCESSES and TRY_E:  # in-process workers share the client's memory
        # at 300 MB the reduction would pause the workers for good
        # (benchmarks/RESULTS.md): refused before any task is sent
        section(f"e. {n:,} inputs x 5 runs x 10 systems at memory_limit={LIMIT_E}")
        out, err = _limited(2, LIMIT_E, call)
        if err is None:
            print(f"  ran, not refused: {out[1]:.1f} s")
        else:
            print(f"  refused after {out:.1f} s: {err}")
    limit = FIT_E if PROCESSES else "auto"
    section(
        f"e. {n:,} inputs x 5 runs x 10 systems (scores) from Parquet, B={b:,}, "
        f"memory_limit={limit} per worker"
    )
    times, results, tile = {}, {}, None
    for workers in (1, 2):  # the second starts with the first's tile size
        out, tile = _fitted(workers, limit, call, tile)
        if out is None:
            return
        res, t, c, w, tasks = out
        row(f"dask {workers}x1, {limit} each, tile_size={tile}", t, c, w, tasks)
        print(
            f"  {'':<52}peak resident set per worker: "
            + ", ".join(f"{p:.0f} MB" for p in PEAKS)
        )
        print_phases()
        times[workers], results[workers] = t, res
    print(
        f"  speed-up 1 -> 2 workers: {times[1] / times[2]:.2f}x  "
        f"same numbers on 1 and 2 workers: {same(results[1], results[2])}"
    )
    n = 20_000 if quick else 10_000_000
    path10 = to_parquet(frame(n, 1, 1, "continuous"), f"{tmp}/e10", PART_E)

    def call10():
        return dd.read_parquet(path10).evalci.cluster_ci(
            "value", "input_id", n_resamples=1_000, rng=0
        )

    out, tile = _fitted(2, limit, call10)
    if out is None:
        return
    res, t, c, w, tasks = out
    row(f"dask 2x1, {n:,} inputs x 1 run, B=1,000, tile_size={tile}", t, c, w, tasks)
    print(
        f"  {'':<52}peak resident set per worker: "
        + ", ".join(f"{p:.0f} MB" for p in PEAKS)
    )
    print_phases()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (CI smoke)")
    parser.add_argument("--case", choices="abcdef", action="append")
    parser.add_argument(
        "--kind",
        choices=("binary", "continuous"),
        action="append",
        help="case a: only these outcomes (default both)",
    )
    parser.add_argument(
        "--memory-limit",
        default="300MB",
        help="case e: each worker's memory_limit in the first call",
    )
    parser.add_argument(
        "--skip-limit",
        action="store_true",
        help="case e: do not first try --memory-limit (refused before it starts)",
    )
    parser.add_argument(
        "--fit-limit", default="1GB", help="case e: each worker's memory_limit"
    )
    parser.add_argument("--repeats", type=int, default=3, help="case f: timed rounds")
    parser.add_argument(
        "--paths",
        action="store_true",
        help="case f: then summaries vs cells gathered on warm clusters",
    )
    args = parser.parse_args(argv)
    global PROCESSES, LIMIT_E, FIT_E, TRY_E, REPEATS_F  # noqa: PLW0603
    REPEATS_F = args.repeats
    LIMIT_E, FIT_E = args.memory_limit, args.fit_limit
    TRY_E = not args.skip_limit
    PROCESSES = not args.quick
    # a shuffle started and ended by the scheduler is not news
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    cases = args.case or list("abcdef")
    print(
        f"evalci {evalci.__version__}  numpy {np.__version__}  pandas {pd.__version__}"
        f"  dask {dask.__version__}  cpus {os.cpu_count()}  "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}  "
        f"mode: {'quick' if args.quick else 'full'}, one timed call per row"
    )
    with tempfile.TemporaryDirectory(prefix="evalci-bench-") as tmp:
        for case in cases:
            t = time.perf_counter()
            if case == "a":
                case_a(tmp, args.quick, args.kind or ("binary", "continuous"))
            elif case == "b":
                case_b(args.quick)
            elif case == "c":
                case_c(tmp, args.quick)
            elif case == "e":
                case_e(tmp, args.quick)
            elif case == "f":
                case_f(tmp, args.quick)
                if args.paths:
                    case_f_paths(tmp, args.quick)
            else:
                case_d(tmp, args.quick)
            print(f"  (case {case}: {time.perf_counter() - t:.0f} s in all)")


if __name__ == "__main__":
    main()
