"""Core timing benchmark for evalci's cluster bootstrap.

Run from the repository root::

    python benchmarks/bench_core.py            # full sizes (about 1-2 minutes)
    python benchmarks/bench_core.py --quick    # smoke test (under 30 s)

Every time is the median of a few repeats (``time.perf_counter``) after one
warm-up call. Targets are printed beside the measured ratios with PASS/MISS;
they are informational only: the exit code is 0 whatever they show.

Sections
--------
1. Accuracy CI (N inputs x k runs, B resamples), percentile and BCa, beside
   the time to draw the B x N indices alone and beside
   ``scipy.stats.bootstrap`` on the per-input means.
2. BCa / percentile for evalci at N=1,000 and N=20,000, and evalci's peak
   memory for BCa at N=20,000 (measured in a subprocess); scipy's BCa
   jackknife memory at N=20,000 is estimated, never run.
3. Cohen's kappa (4 classes): ratio to the accuracy CI, and at k=1 against
   ``scipy.stats.bootstrap`` with a vectorised paired kappa statistic.
4. Several systems at once (``by="system"``) against one system and against a
   loop of single-system calls.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import scipy
from scipy import stats

import evalci

LABELS = np.array(["A", "B", "C", "D"])
DATA_SEED = 20240601


# -- data -----------------------------------------------------------------------
def make_accuracy(
    n: int, k: int, n_systems: int = 1, seed: int = DATA_SEED
) -> pd.DataFrame:
    """Tidy 0/1 table: one row per input x run (x system).

    Each (input, system) has its own accuracy drawn from Beta(2, 2), so inputs
    differ and the runs of one input are correlated (the reason for the
    cluster bootstrap).
    """
    gen = np.random.default_rng(seed)
    p = gen.beta(2.0, 2.0, size=(n_systems, n))  # (S, N)
    correct = (gen.random((n_systems, n, k)) < p[:, :, None]).astype(np.int64)
    ids = np.array([f"q{i:06d}" for i in range(n)])
    frame = pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(ids, k), n_systems),
            "run": np.tile(np.arange(1, k + 1), n * n_systems),
            "system": np.repeat([f"system-{s:02d}" for s in range(n_systems)], n * k),
            "correct": correct.ravel(),
        }
    )
    return frame if n_systems > 1 else frame.drop(columns="system")


def make_kappa(n: int, k: int, seed: int = DATA_SEED + 1) -> pd.DataFrame:
    """Tidy 4-class table: a true ``label`` per input, a predicted ``pred`` per run.

    Labels are imbalanced (40/30/20/10%); each input's chance of a correct
    prediction is drawn from Beta(3, 2); a wrong prediction is one of the other
    three classes at random.
    """
    gen = np.random.default_rng(seed)
    label = gen.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
    p = gen.beta(3.0, 2.0, size=n)
    hit = gen.random((n, k)) < p[:, None]
    wrong = (label[:, None] + gen.integers(1, 4, size=(n, k))) % 4
    pred = np.where(hit, label[:, None], wrong)
    ids = np.array([f"q{i:06d}" for i in range(n)])
    return pd.DataFrame(
        {
            "input_id": np.repeat(ids, k),
            "run": np.tile(np.arange(1, k + 1), n),
            "pred": LABELS[pred.ravel()],
            "label": LABELS[np.repeat(label, k)],
        }
    )


# -- scipy comparison statistics -------------------------------------------------
def kappa_statistic(pred, label, axis=-1):
    """Cohen's kappa along ``axis`` of paired integer-coded (pred, label) samples.

    Vectorised for ``scipy.stats.bootstrap(..., vectorized=True, paired=True)``:
    the confusion counts of every leading-index slice come from one bincount.
    """
    pred = np.moveaxis(np.asarray(pred), axis, -1)
    label = np.moveaxis(np.asarray(label), axis, -1)
    pred, label = np.broadcast_arrays(pred, label)
    lead, n = pred.shape[:-1], pred.shape[-1]
    c = 4
    cell = label.reshape(-1, n) * c + pred.reshape(-1, n)
    rows = cell.shape[0]
    offset = (np.arange(rows) * (c * c))[:, None]
    conf = np.bincount((cell + offset).ravel(), minlength=rows * c * c)
    conf = conf.reshape(rows, c, c).astype(float)
    p_o = np.trace(conf, axis1=1, axis2=2) / n
    p_e = (conf.sum(axis=2) * conf.sum(axis=1)).sum(axis=1) / n**2
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (p_o - p_e) / (1.0 - p_e)
    return out.reshape(lead)


# -- timing helpers --------------------------------------------------------------
class Report:
    """Times cases, prints rows and ratios, and collects the targets.

    The cases of one group are timed round-robin (A B C A B C ...) after one
    warm-up call each, so that a change in machine load affects all of them
    alike rather than whichever case happened to run at the time.
    """

    def __init__(self):
        self.times: dict[str, float] = {}
        self.targets: list[tuple[str, str, float, float, str]] = []
        self.loads: list[float] = []

    def load(self) -> float:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        self.loads.append(load)
        return load

    def section(self, title: str):
        print()
        print(title)
        print("-" * len(title))
        print(
            f"  (1-min load average before this section: {self.load():.2f} on "
            f"{os.cpu_count()} cpus)"
        )
        print(
            f"  {'case':<62} {'median':>9} {'min':>9} {'max':>9} {'cpu/wall':>9} "
            f"{'faults':>8}"
        )

    def time_group(self, cases, repeat: int, warmup: bool = True):
        """Time ``cases`` = [(key, label, fn, repeat or None), ...] round-robin."""
        if warmup:
            for _, _, fn, _ in cases:
                fn()
        wall = {key: [] for key, *_ in cases}
        cpu = {key: [] for key, *_ in cases}
        faults = {key: [] for key, *_ in cases}
        for r in range(max(rep or repeat for *_, rep in cases)):
            for key, _, fn, rep in cases:
                if r >= (rep or repeat):
                    continue
                f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                c0, t0 = time.process_time(), time.perf_counter()
                fn()
                t1, c1 = time.perf_counter(), time.process_time()
                f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                wall[key].append(t1 - t0)
                cpu[key].append(c1 - c0)
                faults[key].append(f1 - f0)
        for key, label, _, _ in cases:
            w = wall[key]
            med = float(np.median(w))
            self.times[key] = med
            # CPU time of all threads of this process / wall time. Below 1: the
            # process waited for a CPU (another process had it). Above 1: BLAS
            # worker threads ran (a matrix product, or OpenBLAS's spin-wait
            # after one).
            use = sum(cpu[key]) / sum(w)
            # Minor page faults per call (median): fresh memory the call touched,
            # in 4 kB pages.
            flt = fmt_count(float(np.median(faults[key])))
            print(
                f"  {label:<62} {fmt_s(med):>9} {fmt_s(min(w)):>9} "
                f"{fmt_s(max(w)):>9} {use:>9.2f} {flt:>8}",
                flush=True,
            )

    def note(self, text: str):
        print(f"  {text}")

    def ratio(
        self,
        label: str,
        num: str,
        den: str,
        target: float | None = None,
        better: str = "lower",
        show_target: str | None = None,
    ):
        """Print num/den; with a target, record PASS/MISS (``lower``: ratio < target)."""
        r = self.times[num] / self.times[den]
        if target is None:
            print(f"  {'ratio: ' + label:<62} {r:>8.2f}x")
            return r
        ok = r < target if better == "lower" else r > target
        verdict = "PASS" if ok else "MISS"
        shown = show_target or (
            f"< {target:g}x" if better == "lower" else f"> {target:g}x"
        )
        print(f"  {'ratio: ' + label:<62} {r:>8.2f}x   target {shown:<8} {verdict}")
        self.targets.append((label, shown, r, target, verdict))
        return r


def fmt_s(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_count(n: float) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    if n >= 1e4:
        return f"{n / 1e3:.0f}k"
    return f"{n:.0f}"


def fmt_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


def maxrss_bytes(ru_maxrss: int) -> int:
    # Linux reports kilobytes, macOS bytes.
    return ru_maxrss if sys.platform == "darwin" else ru_maxrss * 1024


def ci(res) -> str:
    return f"{res.estimate:.4f} [{res.low:.4f}, {res.high:.4f}]"


def sci(res, est) -> str:
    lo, hi = res.confidence_interval
    return f"{est:.4f} [{lo:.4f}, {hi:.4f}]"


# -- environment -----------------------------------------------------------------
def print_environment():
    print("Environment")
    print("-----------")
    print(
        f"  python {platform.python_version()}  numpy {np.__version__}  "
        f"scipy {scipy.__version__}  pandas {pd.__version__}  evalci {evalci.__version__}"
    )
    print(f"  platform {platform.platform()}  cpus {os.cpu_count()}")
    for var in (
        "OPENBLAS_CORETYPE",
        "OPENBLAS_L2_SIZE",
        "OPENBLAS_NUM_THREADS",
        "OMP_NUM_THREADS",
    ):
        print(f"  {var}={os.environ.get(var, '(unset)')}")
    try:
        import threadpoolctl
    except ImportError:
        print("  threadpoolctl: not installed; numpy's build config says:")
        try:
            blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
            print(
                f"    blas {blas.get('name')} {blas.get('version')}: "
                f"{blas.get('openblas configuration', '')}"
            )
        except Exception as exc:  # informational only
            print(f"    (unavailable: {exc})")
    else:
        for info in threadpoolctl.threadpool_info():
            keys = (
                "user_api",
                "internal_api",
                "version",
                "num_threads",
                "architecture",
            )
            print("  threadpool: " + "  ".join(f"{k}={info.get(k)}" for k in keys))


# -- memory child ----------------------------------------------------------------
# The meter is a small interpreter that starts the measured child and reports
# RUSAGE_CHILDREN. It is needed because on Linux a child's ru_maxrss starts at
# the RSS of the process that forked it (exec keeps the old hiwater mark): a
# child forked straight from this (large) benchmark process would report this
# process's RSS, not its own peak.
METER = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], check=True)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def vm_hwm() -> int | None:
    """Peak RSS of this process from /proc (Linux), in bytes; None elsewhere."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def memory_child(kind: str, n: int, k: int, b: int):
    """Entry point of the memory subprocess: build data, optionally run BCa."""
    df = make_accuracy(n, k)
    if kind == "bca":
        res = evalci.cluster_ci(
            df, "correct", cluster="input_id", method="bca", n_resamples=b, rng=0
        )
        assert np.isfinite(res.low)
    print(json.dumps({"kind": kind, "vm_hwm": vm_hwm()}))


def run_child(kind: str, n: int, k: int, b: int) -> tuple[int, int | None]:
    """(peak RSS of the child from the meter's RUSAGE_CHILDREN, the child's VmHWM)."""
    child = [
        sys.executable,
        os.path.abspath(__file__),
        "--_memory-child",
        kind,
        "--_n",
        str(n),
        "--_k",
        str(k),
        "--_b",
        str(b),
    ]
    out = subprocess.run(
        [sys.executable, "-c", METER, *child],
        check=True,
        capture_output=True,
        text=True,
    )
    lines = out.stdout.strip().splitlines()
    hwm = json.loads(lines[-2])["vm_hwm"]
    return maxrss_bytes(int(lines[-1])), hwm


# -- sections --------------------------------------------------------------------
def section_accuracy(rep: Report, n: int, k: int, b: int, repeat: int):
    rep.section(f"1. Accuracy CI: N={n:,} inputs x k={k} runs, B={b:,}")
    df = make_accuracy(n, k)
    means = df.groupby("input_id", sort=True)["correct"].mean().to_numpy()

    def ev(method):
        return lambda: evalci.cluster_ci(
            df, "correct", cluster="input_id", method=method, n_resamples=b, rng=0
        )

    def sp(method):
        return lambda: stats.bootstrap(
            (means,), np.mean, vectorized=True, n_resamples=b, method=method, rng=0
        )

    # Context only (no target): the draw scheme evalci uses (seeded streams of
    # 64 replicates) and the bincount that turns indices into count weights.
    n_streams = -(-b // 64)

    def streamed_draws():
        root = np.random.SeedSequence(0)
        for s in range(n_streams):
            seq = np.random.SeedSequence(root.entropy, spawn_key=(0, 0, s))
            np.random.Generator(np.random.PCG64(seq)).integers(0, n, size=(64, n))

    idx = np.random.default_rng(0).integers(0, n, size=(b, n))

    def bincount():
        np.bincount((idx + (np.arange(b) * n)[:, None]).ravel(), minlength=b * n)

    rep.time_group(
        [
            (
                "draw",
                f"numpy: draw B x N indices alone (integers(0, N, ({b}, {n})))",
                lambda: np.random.default_rng(0).integers(0, n, size=(b, n)),
                None,
            ),
            ("acc_pct", "evalci cluster_ci, percentile", ev("percentile"), None),
            ("acc_bca", "evalci cluster_ci, BCa", ev("bca"), None),
            (
                "sp_pct",
                "scipy.stats.bootstrap on per-input means, percentile",
                sp("percentile"),
                None,
            ),
            (
                "sp_bca",
                "scipy.stats.bootstrap on per-input means, BCa",
                sp("BCa"),
                None,
            ),
            (
                "ctx_streams",
                f"context: same draws as {n_streams} seeded streams of 64",
                streamed_draws,
                None,
            ),
            (
                "ctx_bincount",
                "context: bincount B x N indices into B x N counts",
                bincount,
                None,
            ),
        ],
        repeat,
    )

    rep.ratio("evalci percentile / draw indices", "acc_pct", "draw", 2.0)
    rep.ratio("evalci BCa / draw indices", "acc_bca", "draw", 2.0)
    rep.ratio("scipy percentile / evalci percentile", "sp_pct", "acc_pct")
    rep.ratio("scipy BCa / evalci BCa", "sp_bca", "acc_bca")

    r_pct, r_bca = ev("percentile")(), ev("bca")()
    s_pct, s_bca = sp("percentile")(), sp("BCa")()
    est = float(means.mean())
    rep.note(f"check  evalci pct {ci(r_pct)}  scipy pct {sci(s_pct, est)}")
    rep.note(f"check  evalci BCa {ci(r_bca)}  scipy BCa {sci(s_bca, est)}")


def section_bca_ratio(
    rep: Report,
    n_small: int,
    n_large: int | None,
    k: int,
    b: int,
    repeat: int,
    large_repeat: int,
):
    rep.section(f"2. BCa / percentile (k={k}) and memory at large N")
    rep.ratio(
        f"evalci BCa / percentile, N={n_small:,}, B={b:,}", "acc_bca", "acc_pct", 1.2
    )
    if n_large is None:
        rep.note("--quick: N=20,000 timing and the memory measurement are skipped.")
        print_scipy_jackknife_estimate(rep, 20_000)
        return

    df = make_accuracy(n_large, k)

    def ev(method, bb):
        return lambda: evalci.cluster_ci(
            df, "correct", cluster="input_id", method=method, n_resamples=bb, rng=0
        )

    # Fall back to B=2,000 only if one B=10,000 call is slow (> 20 s).
    b_large = b
    t0 = time.perf_counter()
    ev("percentile", b)()
    first = time.perf_counter() - t0
    if first > 20.0:
        b_large = 2_000
        rep.note(
            f"one call at N={n_large:,}, B={b:,} took {first:.1f} s: "
            f"using B={b_large:,} at N={n_large:,}"
        )
    if b_large == b:
        ev("bca", b)()  # warm-up; the probe above warmed up percentile
    rep.time_group(
        [
            (
                "big_pct",
                f"evalci cluster_ci, percentile, N={n_large:,}, B={b_large:,}",
                ev("percentile", b_large),
                None,
            ),
            (
                "big_bca",
                f"evalci cluster_ci, BCa, N={n_large:,}, B={b_large:,}",
                ev("bca", b_large),
                None,
            ),
        ],
        large_repeat,
        warmup=b_large != b,
    )
    rep.ratio(
        f"evalci BCa / percentile, N={n_large:,}, B={b_large:,}",
        "big_bca",
        "big_pct",
        1.2,
    )

    base_peak, base_hwm = run_child("baseline", n_large, k, b_large)
    bca_peak, bca_hwm = run_child("bca", n_large, k, b_large)
    extra = bca_peak - base_peak
    rep.note(
        "memory, fresh subprocesses (ru_maxrss via RUSAGE_CHILDREN of a small meter):"
    )
    rep.note(
        f"  baseline (import evalci + build N={n_large:,} data) "
        f"{fmt_bytes(base_peak)}; with BCa {fmt_bytes(bca_peak)}"
    )
    if base_hwm is not None and bca_hwm is not None:
        rep.note(
            f"  cross-check, children's own VmHWM: baseline {fmt_bytes(base_hwm)}, "
            f"BCa {fmt_bytes(bca_hwm)} (difference {fmt_bytes(bca_hwm - base_hwm)})"
        )
    verdict = "PASS" if extra < 0.5e9 else "MISS"
    label = f"evalci BCa peak memory above baseline, N={n_large:,}, B={b_large:,}"
    print(f"  {label:<62} {fmt_bytes(extra):>9}   target < 0.5 GB  {verdict}")
    rep.targets.append((label, "< 0.5 GB", extra / 1e9, 0.5, verdict))
    print_scipy_jackknife_estimate(rep, n_large)


def print_scipy_jackknife_estimate(rep: Report, n: int):
    mask = n * n  # bool mask (n, n)
    index = n * (n - 1) * 8  # int64 jackknife indices (n, n-1)
    gathered = n * (n - 1) * 8  # float64 jackknife samples (n, n-1)
    rep.note(
        f"scipy BCa at N={n:,} NOT run: its jackknife (batch=None) builds an "
        f"(N, N-1) float64 copy = {fmt_bytes(gathered)},"
    )
    rep.note(
        f"  plus int64 indices {fmt_bytes(index)} and a bool mask "
        f"{fmt_bytes(mask)}: ~{fmt_bytes(mask + index + gathered)} at peak "
        "(6.6 GB measured before)."
    )


def section_kappa(rep: Report, n: int, k: int, b: int, repeat: int):
    rep.section(f"3. Cohen's kappa (4 classes), N={n:,}, B={b:,}, BCa")
    kappa = evalci.metrics.kappa(truth="label")
    df = make_kappa(n, k)

    def ev(frame, method="bca"):
        return lambda: evalci.cluster_ci(
            frame,
            "pred",
            cluster="input_id",
            metric=kappa,
            method=method,
            n_resamples=b,
            rng=0,
        )

    acc = make_accuracy(n, k)
    df1 = make_kappa(n, 1)
    codes = {lab: i for i, lab in enumerate(LABELS)}
    pred = df1["pred"].map(codes).to_numpy(np.int64)  # scipy needs numbers: coded
    label = df1["label"].map(codes).to_numpy(np.int64)  # outside the timing

    def sp(method):
        return lambda: stats.bootstrap(
            (pred, label),
            kappa_statistic,
            paired=True,
            vectorized=True,
            n_resamples=b,
            method=method,
            rng=0,
        )

    rep.time_group(
        [
            (
                "acc_bca3",
                f"evalci accuracy, k={k}, BCa (re-timed beside kappa)",
                lambda: evalci.cluster_ci(
                    acc,
                    "correct",
                    cluster="input_id",
                    method="bca",
                    n_resamples=b,
                    rng=0,
                ),
                None,
            ),
            ("kappa_bca", f"evalci kappa, k={k}, BCa", ev(df), None),
            ("kappa1_bca", "evalci kappa, k=1, BCa", ev(df1), None),
            (
                "sp_kappa1_bca",
                "scipy.stats.bootstrap kappa, k=1, paired, BCa",
                sp("BCa"),
                None,
            ),
            (
                "kappa1_pct",
                "evalci kappa, k=1, percentile",
                ev(df1, "percentile"),
                None,
            ),
            (
                "sp_kappa1_pct",
                "scipy.stats.bootstrap kappa, k=1, paired, percentile",
                sp("percentile"),
                None,
            ),
        ],
        repeat,
    )
    rep.ratio(
        f"evalci kappa / evalci accuracy, BCa, k={k}", "kappa_bca", "acc_bca3", 4.0
    )
    rep.ratio(
        "scipy / evalci, kappa k=1, BCa (evalci faster)",
        "sp_kappa1_bca",
        "kappa1_bca",
        1.0,
        better="higher",
        show_target="> 1x",
    )
    rep.ratio("scipy / evalci, kappa k=1, percentile", "sp_kappa1_pct", "kappa1_pct")
    r, s = ev(df1)(), sp("BCa")()
    rep.note(
        f"check  evalci BCa {ci(r)}  scipy BCa {sci(s, kappa_statistic(pred, label))}"
    )


def section_systems(rep: Report, n: int, k: int, b: int, repeat: int):
    rep.section(f"4. Several systems at once (by='system'), N={n:,}, k={k}, B={b:,}")
    frames = {s: make_accuracy(n, k, n_systems=s) for s in (1, 2, 10)}

    def ev(frame, by):
        return lambda: evalci.cluster_ci(
            frame, "correct", cluster="input_id", by=by, n_resamples=b, rng=0
        )

    ten = frames[10]

    def loop():
        for _, sub in ten.groupby("system", sort=True):
            evalci.cluster_ci(sub, "correct", cluster="input_id", n_resamples=b, rng=0)

    rep.time_group(
        [
            ("sys1", "evalci, 1 system (no by)", ev(frames[1], None), None),
            ("sys2", "evalci, 2 systems, by='system'", ev(frames[2], "system"), None),
            (
                "sys10",
                "evalci, 10 systems, by='system'",
                ev(frames[10], "system"),
                None,
            ),
            (
                "loop10",
                "evalci, loop of 10 single-system calls (incl. groupby)",
                loop,
                max(1, repeat // 2 + 1),
            ),
        ],
        repeat,
    )
    rep.ratio("2 systems / 1 system", "sys2", "sys1")
    rep.ratio("10 systems / 1 system", "sys10", "sys1", 2.0)
    rep.ratio("loop of 10 calls / 10 systems at once", "loop10", "sys10")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes (N=200, B=1,000, no N=20,000): a smoke test",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="timed repeats per case (default 5; 7 with --quick; 3 at N=20,000)",
    )
    parser.add_argument("--_memory-child", dest="memory_child", help=argparse.SUPPRESS)
    parser.add_argument("--_n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--_k", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--_b", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child, args._n, args._k, args._b)
        return 0

    k = 5
    if args.quick:
        n, b, n_large, repeat, large_repeat = 200, 1_000, None, 7, 1
    else:
        n, b, n_large, repeat, large_repeat = 1_000, 10_000, 20_000, 5, 3
    if args.repeat is not None:
        repeat = large_repeat = max(1, args.repeat)

    start = time.perf_counter()
    print_environment()
    mode = "quick (smoke test)" if args.quick else "full"
    large = f" ({large_repeat} at N={n_large:,})" if n_large else ""
    print(
        f"  mode: {mode}; times are the median of {repeat} repeats{large} after "
        "one warm-up call;\n  the cases of a section run round-robin"
    )

    rep = Report()
    section_accuracy(rep, n, k, b, repeat)
    section_bca_ratio(rep, n, n_large, k, b, repeat, large_repeat)
    section_kappa(rep, n, k, b, repeat)
    section_systems(rep, n, k, b, repeat)

    print()
    print("Targets (informational; never affect the exit code)")
    print("---------------------------------------------------")
    for label, shown, value, _target, verdict in rep.targets:
        unit = " GB" if shown.endswith("GB") else "x"
        print(f"  {verdict:<5} {label:<62} {value:>7.2f}{unit}  target {shown}")
    rep.load()
    print(
        f"  max 1-min load average seen: {max(rep.loads):.2f} on {os.cpu_count()} cpus "
        "(this benchmark alone accounts for about 1-2); a higher load means\n"
        "  other processes competed for the CPUs and the times are inflated and noisy."
    )
    n_pass = sum(t[4] == "PASS" for t in rep.targets)
    print(
        f"  {n_pass}/{len(rep.targets)} targets met; total wall time "
        f"{time.perf_counter() - start:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
