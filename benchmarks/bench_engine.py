"""The engine's two kernels end to end: patterns against indices (issue 10).

Run from the repository root::

    python benchmarks/bench_engine.py            # full sizes (a few minutes)
    python benchmarks/bench_engine.py --quick    # smoke test (seconds)

Every case calls the public API (``evalci.bootstrap`` / ``cluster_ci``) on
the same data twice in the same run: once with the engine's own choice of
kernel (``result.kernel`` is printed), once forced onto the index kernel
(``engine._FORCE_PATH = "index"``), which is the kernel before issue 10 plus
its cheap win (it no longer gathers a column that is constant within
strata). The index kernel without the cheap win is timed too, in section 1,
to show what that win is worth. Where the index kernel would take minutes,
it runs with fewer resamples and its time is scaled linearly by the number
of 64-replicate streams (marked ``~``); its cost is exactly linear in them.

Sections: 0. one accuracy CI against the O(N) floor (:func:`floor_ci`, an
exact pattern bootstrap with an unsorted factorize and bincounts) at N =
1,000 ... 1,000,000 from a counts table and from tidy tables with integer
and string ids (``--only floor`` runs this section alone); 1. one accuracy CI (k=5, B=10,000) at N = 1,000 / 100,000 /
1,000,000, from a counts table (the table preparation is the same for both
kernels; a tidy table of N x k rows is timed too); 2. hierarchical,
single_draw and iid against cluster from tidy tables (one system and three)
and counts tables, N = 1,000 ... 1,000,000, timed in turn (``--only
run_level``; issue 39); 3. Cohen's kappa, 4 classes, N=1,000 and
100,000: its ratio to the accuracy cluster interval (target 4x, issue 39)
and its pattern kernel against the index kernel (``--only kappa``);
4. 10 and 31 systems (CRUXEval counts) in one call; 5. BCa against
percentile. Targets are printed with PASS/MISS; the exit code is always 0.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import evalci
from evalci.engine import passes as engine
from evalci.engine import resampling, tiles

# the real data sets of the tests (tests/data/PROVENANCE.md; not shipped)
DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
STREAM = resampling.STREAM_SIZE


def timed(fn, repeat=1):
    fn()  # warm-up
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def timed_pair(f, g, repeat):
    """Best times of ``f`` and ``g`` called in turn, so load falls on both."""
    f(), g()  # warm-up
    best_f = best_g = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best_f = min(best_f, time.perf_counter() - t)
        t = time.perf_counter()
        out = g()
        best_g = min(best_g, time.perf_counter() - t)
    return best_f, best_g, out


def counts_table(n, k=5, seed=0, systems=1):
    rng = np.random.default_rng(seed)
    frames = []
    for s in range(systems):
        p = rng.beta(2, 2, n)
        frames.append(
            pd.DataFrame(
                {
                    "input_id": np.arange(n),
                    "system": f"s{s}",
                    "c": rng.binomial(k, p),
                    "k": k,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def run(df, b, path=None, **kw):
    engine._FORCE_PATH = path
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evalci.EvalciWarning)
            return evalci.bootstrap(df, n_resamples=b, rng=0, **kw)
    finally:
        engine._FORCE_PATH = None


def compare_kernels(df, b, b_index, repeat=1, **kw):
    """(auto time, index time at B (scaled if b_index < b), auto kernel)."""
    t_auto, res = timed(lambda: run(df, b, **kw), repeat)
    t_idx, _ = timed(
        lambda: run(df, b_index, "index", **kw), 1 if b_index < b else repeat
    )
    scale = -(-b // STREAM) / -(-b_index // STREAM)
    return t_auto, t_idx * scale, res.kernel, b_index < b


def fmt(t):
    if not np.isfinite(t):
        return "     n/a   "
    return f"{t * 1e3:8.1f} ms" if t < 1 else f"{t:8.2f} s "


def verdict(ok):
    return "PASS" if ok else "MISS"


def floor_ci(ids, successes, trials=None, b=10_000, seed=0):
    """The yardstick: an exact pattern bootstrap of accuracy built in O(N).

    An unsorted hash factorize of the ids, bincount sums per input, the
    distinct (c, k) pairs as patterns, ``b`` multinomial draws over them and
    one product: no sort, no validation, no jackknife. ``trials=None`` means
    one row per run (a tidy 0/1 table).
    """
    codes, uniques = pd.factorize(ids, sort=False)
    n = len(uniques)
    c = np.bincount(codes, weights=successes, minlength=n).astype(np.int64)
    if trials is None:
        k = np.bincount(codes, minlength=n)
    else:
        k = np.bincount(codes, weights=trials, minlength=n).astype(np.int64)
    radix = int(k.max()) + 1
    found = np.bincount(c * radix + k)
    pattern = np.flatnonzero(found)
    counts = (
        np.random.default_rng(seed)
        .multinomial(n, found[pattern] / n, size=b)
        .astype(float)
    )
    reps = (counts @ (pattern // radix)) / (counts @ (pattern % radix))
    return np.quantile(reps, [0.025, 0.975])


def tidy_table(n, k=5, seed=1, strings=False):
    rng = np.random.default_rng(seed)
    ids = np.arange(n)
    if strings:
        ids = np.array([f"q{i:07d}" for i in ids], dtype=object)
    return pd.DataFrame(
        {
            "input_id": np.repeat(ids, k),
            "correct": (rng.random(k * n) < 0.6).astype(np.int8),
        }
    )


def section_floor(quick):
    """evalci against the O(N) floor (issue 27): within 2x at every N."""
    b = 2_000 if quick else 10_000
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000, 1_000_000]
    print(f"\n0. Against the O(N) floor (exact pattern bootstrap), k=5, B={b:,}")
    print(f"{'N':>10} {'table':>12} {'floor':>11} {'evalci':>11} {'ratio':>7}  <= 2x")
    for n in sizes:
        repeat = 15 if n <= 10_000 else 5 if n <= 100_000 else 3
        cases = [
            ("counts", counts_table(n), dict(successes="c", trials="k")),
            ("tidy int", tidy_table(n), dict(value="correct")),
            ("tidy str", tidy_table(n, strings=True), dict(value="correct")),
        ]
        for name, df, kw in cases:
            if "value" in kw:
                fl = lambda d=df: floor_ci(d["input_id"], d["correct"], b=b)  # noqa: E731
            else:
                fl = lambda d=df: floor_ci(d["input_id"], d["c"], d["k"], b=b)  # noqa: E731
            t_floor, t_ev, res = timed_pair(
                fl,
                lambda d=df, k=kw: run(
                    d, b, cluster="input_id", method="percentile", **k
                ),
                repeat,
            )
            r = t_ev / t_floor
            print(
                f"{n:>10,} {name:>12} {fmt(t_floor)} {fmt(t_ev)} {r:6.2f}x  "
                f"{verdict(r <= 2)} ({res.kernel})"
            )


def section_fixed_cost(quick):
    """What a small call pays whatever N: its streams, as a block or one by one."""
    b = 2_000 if quick else 10_000
    n_streams = -(-b // STREAM)
    root = np.random.SeedSequence(0)
    key = (resampling._BOOT, 0)

    def one_by_one():
        return [resampling.stream(root, *key, s) for s in range(n_streams)]

    def block():
        from evalci._base import streams  # (issue 27; absent before)

        gens = streams.streams(root, key, 0, n_streams)
        return [g.bit_generator.state for g in gens]

    t_old, _ = timed(one_by_one, 15)
    try:
        t_new, _ = timed(block, 15)
    except ImportError:
        t_new = np.nan
    df = counts_table(1_000)
    kw = dict(cluster="input_id", successes="c", trials="k", method="percentile")
    t_call, _ = timed(lambda: run(df, b, **kw), 15)
    print(
        f"\n0b. Fixed cost of a call, N=1,000, B={b:,}: {fmt(t_call)}; its "
        f"{n_streams} streams built one by one {fmt(t_old)}, as a block {fmt(t_new)}"
    )


def section_accuracy(quick):
    print("\n1. One accuracy CI, k=5, B=10,000, from a counts table")
    sizes = [1_000, 20_000] if quick else [1_000, 100_000, 1_000_000]
    targets = {1_000: 10, 100_000: 100, 1_000_000: 200}
    b = 2_000 if quick else 10_000
    kw = dict(cluster="input_id", successes="c", trials="k", method="percentile")
    print(f"{'N':>10} {'kernel':>9} {'auto':>11} {'index':>12} {'speed-up':>9}  target")
    for n in sizes:
        df = counts_table(n)
        b_index = (
            b if n <= 20_000 else max(STREAM, int(b * 20_000 / n) // STREAM * STREAM)
        )
        t_auto, t_idx, kernel, scaled = compare_kernels(df, b, b_index, repeat=3, **kw)
        ratio = t_idx / t_auto
        want = targets.get(n)
        tgt = "" if want is None or quick else f">= {want}x {verdict(ratio >= want)}"
        if n == 1_000_000 and not quick:
            tgt += f", < 1 s {verdict(t_auto < 1)}"
        print(
            f"{n:>10,} {kernel:>9} {fmt(t_auto)} {'~' if scaled else ' '}{fmt(t_idx)}"
            f" {ratio:8.0f}x  {tgt}"
        )
    # the cheap win on the index kernel, and a tidy table end to end
    n = 1_000 if quick else 100_000
    df = counts_table(n)
    b_index = b if n <= 20_000 else 1_280
    scale = -(-b // STREAM) / -(-b_index // STREAM)
    t_new, _ = timed(lambda: run(df, b_index, "index", **kw))
    fixed = tiles.constant_sums
    tiles.constant_sums = lambda t, bounds: [None] * t.shape[1]
    try:
        t_old, _ = timed(lambda: run(df, b_index, "index", **kw))
    finally:
        tiles.constant_sums = fixed
    print(
        f"   index kernel at N={n:,}: {fmt(t_old * scale)} gathering the runs column, "
        f"{fmt(t_new * scale)} without ({1 - t_new / t_old:.0%} saved)"
    )
    n = 20_000 if quick else 1_000_000
    rng = np.random.default_rng(1)
    tidy = pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(n), 5),
            "correct": (rng.random(5 * n) < 0.6).astype(np.int8),
        }
    )
    t, res = timed(
        lambda: run(tidy, b, cluster="input_id", value="correct", method="percentile")
    )
    print(f"   tidy table, N={n:,} x 5 rows, end to end: {fmt(t)} ({res.kernel})")


def systems_table(n, systems, k=5, seed=1):
    """A tidy 0/1 table of ``systems`` systems on the same ``n`` inputs."""
    one = [
        tidy_table(n, k, seed=seed + s).assign(system=f"s{s}") for s in range(systems)
    ]
    return pd.concat(one, ignore_index=True)


def round_robin(fns, rounds):
    """Median time of each function and median ratio to the first, timed in
    turn within each round (so load falls on all of them alike)."""
    for f in fns:
        f()  # warm-up
    times = np.empty((rounds, len(fns)))
    for r in range(rounds):
        for j, f in enumerate(fns):
            t = time.perf_counter()
            f()
            times[r, j] = time.perf_counter() - t
    return np.median(times, axis=0), np.median(times / times[:, :1], axis=0)


def section_run_level(quick):
    """hierarchical, single_draw and iid against cluster (issue 39): <= 1.3x.

    From tidy tables (one 0/1 system, and ``by="system"`` with 3 systems)
    and from counts tables (iid takes no counts table), the three
    strategies and cluster timed in turn, ``rounds`` times; the median
    ratio to cluster is printed with the target.
    """
    b = 2_000 if quick else 10_000
    strategies = ("cluster", "hierarchical", "single_draw", "iid")
    print(f"\n2. Run-level strategies against cluster, k=5, B={b:,}: <= 1.3x")
    sizes = [1_000] if quick else [1_000, 100_000, 1_000_000]
    for n in sizes:
        rounds = 3 if quick else 15 if n <= 100_000 else 5
        cases = [
            ("tidy", tidy_table(n), dict(value="correct")),
            ("tidy 3 sys", systems_table(n, 3), dict(value="correct", by="system")),
            ("counts", counts_table(n), dict(successes="c", trials="k")),
        ]
        for name, df, kw in cases:
            names = strategies if "value" in kw else strategies[:3]
            fns = [
                lambda d=df, s=s, k=kw: run(
                    d, b, cluster="input_id", strategy=s, method="percentile", **k
                )
                for s in names
            ]
            times, ratios = round_robin(fns, rounds)
            kernels = [fn().kernel for fn in fns[1:]]
            row = "  ".join(
                f"{s} {fmt(t).strip()} {r:.2f}x ({kern[:3]}) {verdict(r <= 1.3)}"
                for s, t, r, kern in zip(
                    names[1:], times[1:], ratios[1:], kernels, strict=True
                )
            )
            print(f"   N={n:>9,} {name:>10}: cluster {fmt(times[0]).strip()};  {row}")
    # against the index kernel on one row per run (counts have no index path)
    n = 1_000
    rows = counts_table(n)
    rows = rows.loc[rows.index.repeat(rows.k)].assign(
        correct=lambda d: (d.groupby("input_id").cumcount() < d.c).astype(int)
    )
    for strategy in ("hierarchical", "single_draw"):
        kw = dict(cluster="input_id", value="correct", strategy=strategy)
        t_auto, t_idx, kernel, _ = compare_kernels(rows, b, b, **kw)
        print(
            f"   N={n:,} tidy rows {strategy:>12}: {fmt(t_auto)} ({kernel}) vs index "
            f"{fmt(t_idx)}: {t_idx / t_auto:.0f}x"
        )


def section_moving_block(quick):
    """moving_block against cluster on the same tidy 0/1 table (issue 27).

    One system (the pattern kernel's total form) and two systems on the same
    inputs (``by="system"``: two totals, the index kernel's block sums).
    """
    b = 2_000 if quick else 10_000
    print(f"\n2b. moving_block against cluster, tidy 0/1, k=5, B={b:,}, L = N^(1/3)")
    for n in [10_000] if quick else [10_000, 100_000]:
        one = tidy_table(n)
        two = pd.concat(
            [one.assign(system="a"), tidy_table(n, seed=2).assign(system="b")],
            ignore_index=True,
        )
        length = round(n ** (1 / 3))
        for name, df, by in (
            ("1 system", one, {}),
            ("2 systems", two, {"by": "system"}),
        ):
            kw = dict(cluster="input_id", value="correct", method="percentile", **by)
            t_c, t_m, res = timed_pair(
                lambda d=df, k=kw: run(d, b, **k),
                lambda d=df, L=length, k=kw: run(
                    d, b, strategy="moving_block", block_length=L, **k
                ),
                3,
            )
            # the index kernel (block sums of whole numbers) at the full B
            t_i, _ = timed(
                lambda d=df, L=length, k=kw: run(
                    d, b, "index", strategy="moving_block", block_length=L, **k
                )
            )
            r = t_m / t_c
            print(
                f"   N={n:>9,} L={length} {name}: cluster {fmt(t_c)}, moving_block "
                f"{fmt(t_m)} ({res.kernel}) = {r:.1f}x cluster (index kernel "
                f"{fmt(t_i)} = {t_i / t_c:.1f}x)  <= 2x {verdict(r <= 2)}"
            )


def _share_mean(d):
    return d.correct.mean()


def section_callable(quick):
    """A callable metric against the same mean as a Metric (issues 27, 39).

    The callable ``lambda d: d.correct.mean()`` is called on the gathered
    rows of every resample; the Metric written by hand (per-row statistics
    ``correct, 1`` and ``finalize = sum / sum``) and the same Metric from
    ``evalci.metrics.from_sums`` are resampled as sums, on the engine's own
    kernel (and forced onto the index kernel). Each round times the three in
    turn, so load falls on all; the medians over the rounds are printed with
    their ratios. The callable runs with 640 resamples, scaled linearly (its
    cost is B calls).
    """
    b = 2_000 if quick else 10_000
    print(f"\n2c. A callable metric against a Metric, tidy 0/1, k=5, B={b:,}")
    hand = evalci.Metric(
        "share_correct",
        statistics=lambda d, v: np.column_stack([d[v], np.ones(len(d[v]))]),
        finalize=lambda s: s[..., 0] / s[..., 1],
        scale_invariant=True,
    )
    sums = evalci.metrics.from_sums(
        "share_correct",
        "correct",
        lambda s: s["correct"] / s["n"],
        scale_invariant=True,
    )
    b_c, rounds = 640, 3 if quick else 5
    scale = -(-b // STREAM) / -(-b_c // STREAM)
    for n in [1_000] if quick else [1_000, 10_000]:
        df = tidy_table(n)
        kw = dict(cluster="input_id", value="correct", method="percentile")
        calls = {
            "hand": lambda d=df, k=kw: run(d, b, metric=hand, **k),
            "from_sums": lambda d=df, k=kw: run(d, b, metric=sums, **k),
            "hand, index": lambda d=df, k=kw: run(d, b, "index", metric=hand, **k),
            "from_sums, index": lambda d=df, k=kw: run(d, b, "index", metric=sums, **k),
            "callable": lambda d=df, k=kw: run(d, b_c, metric=_share_mean, **k),
        }
        times = {name: [] for name in calls}
        out = {name: f() for name, f in calls.items()}  # warm-up
        for _ in range(rounds):
            for name, f in calls.items():
                t = time.perf_counter()
                f()
                times[name].append(time.perf_counter() - t)
        t = {name: float(np.median(v)) for name, v in times.items()}
        t["callable"] *= scale
        same = all(
            np.array_equal(out[x].bootstrap_distribution, out[y].bootstrap_distribution)
            for x, y in [("hand", "from_sums"), ("hand, index", "from_sums, index")]
        )
        r_sums = np.median(np.divide(times["from_sums"], times["hand"]))
        print(
            f"   N={n:>7,}: Metric by hand {fmt(t['hand'])} ({out['hand'].kernel}), "
            f"from_sums {fmt(t['from_sums'])} = {r_sums:.2f}x (bit-identical: {same}); "
            f"index kernel {fmt(t['hand, index'])} / {fmt(t['from_sums, index'])}; "
            f"callable ~{fmt(t['callable'])} = {t['callable'] / t['from_sums']:,.0f}x "
            f"from_sums, {t['callable'] / t['from_sums, index']:,.0f}x on the index kernel"
        )


def kappa_table(n, k=5, seed=2):
    rng = np.random.default_rng(seed)
    labels = np.array(list("ABCD"))
    truth = rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1])
    skill = rng.beta(3, 2, n)
    right = rng.random((n, k)) < skill[:, None]
    pred = np.where(right, truth[:, None], rng.integers(0, 4, (n, k)))
    return pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(n), k),
            "pred": labels[pred.ravel()],
            "label": labels[np.repeat(truth, k)],
        }
    )


def median_ratio(f, g, repeat):
    """Median times of ``f`` and ``g`` called in turn, and the median of the
    per-round ratios ``f / g`` (so load falls on both alike)."""
    f(), g()  # warm-up
    tf, tg = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        tf.append(time.perf_counter() - t)
        t = time.perf_counter()
        g()
        tg.append(time.perf_counter() - t)
    tf, tg = np.array(tf), np.array(tg)
    return np.median(tf), np.median(tg), float(np.median(tf / tg))


def section_kappa(quick):
    b = 2_000 if quick else 10_000
    print(
        f"\n3. Cohen's kappa, 4 classes, k=5, B={b:,}, BCa, from a tidy table: "
        "against the accuracy cluster interval of a 0/1 table of the same N, k, B"
    )
    kappa = evalci.metrics.kappa(truth="label")
    for n in [1_000, 5_000] if quick else [1_000, 100_000]:
        kap, acc = kappa_table(n), tidy_table(n)

        def f(d=kap):
            return evalci.cluster_ci(
                d, "pred", cluster="input_id", metric=kappa, n_resamples=b,
                method="bca", rng=0,
            )  # fmt: skip

        def g(d=acc):
            return evalci.cluster_ci(
                d, "correct", cluster="input_id", n_resamples=b, method="bca", rng=0
            )

        t_k, t_a, r = median_ratio(f, g, 3 if quick else 7)
        tgt = "" if quick else f"<= 4x {verdict(r <= 4)}"
        print(
            f"   N={n:>7,}: kappa {fmt(t_k)} ({f().kernel}), accuracy {fmt(t_a)}: "
            f"kappa / accuracy {r:5.2f}x (median of rounds)  {tgt}"
        )
    n = 5_000 if quick else 100_000
    kw = dict(value="pred", cluster="input_id", metric=kappa, method="bca")
    b_index = b if quick else 640
    t_auto, t_idx, kernel, scaled = compare_kernels(kappa_table(n), b, b_index, **kw)
    r = t_idx / t_auto
    tgt = "" if quick else f">= 20x {verdict(r >= 20)}"
    print(
        f"   N={n:,}, {kernel}: {fmt(t_auto)}; index {'~' if scaled else ''}"
        f"{fmt(t_idx)}: {r:.1f}x  {tgt}"
    )


def section_systems(quick):
    b = 2_000 if quick else 10_000
    print(f"\n4. Several systems in one call (by='system'), B={b:,}: never slower")
    for g in [10]:
        df = counts_table(1_000, systems=g, seed=3)
        kw = dict(cluster="input_id", successes="c", trials="k", by="system")
        t_auto, t_idx, kernel, _ = compare_kernels(df, b, b, repeat=5, **kw)
        print(
            f"   {g} systems x 1,000 inputs: {fmt(t_auto)} ({kernel}) vs index "
            f"{fmt(t_idx)}: {t_idx / t_auto:.2f}x  {verdict(t_auto <= 1.15 * t_idx)} (within noise)"
        )
    crux = pd.read_csv(DATA / "cruxeval_output_T0.2_counts.csv")
    kw = dict(cluster="input_id", successes="n_correct", trials="n_runs", by="system")
    t_auto, t_idx, kernel, _ = compare_kernels(crux, b, b, repeat=5, **kw)
    print(
        f"   CRUXEval, 31 systems x 800 inputs x 10 runs: {fmt(t_auto)} ({kernel}) vs "
        f"index {fmt(t_idx)}: {t_idx / t_auto:.2f}x  {verdict(t_auto <= 1.15 * t_idx)} (within noise)"
    )


def section_bca(quick):
    b = 2_000 if quick else 10_000
    print(f"\n5. BCa against percentile, one 0/1 system, k=5, B={b:,}")
    for n in [1_000] if quick else [1_000, 100_000, 1_000_000]:
        df = counts_table(n)
        kw = dict(cluster="input_id", successes="c", trials="k")
        t_p, _ = timed(lambda d=df, k=kw: run(d, b, method="percentile", **k), 3)
        t_b, res = timed(lambda d=df, k=kw: run(d, b, method="bca", **k), 3)
        r = t_b / t_p
        print(
            f"   N={n:>9,}: percentile {fmt(t_p)}, BCa {fmt(t_b)} = {r:.2f}x "
            f"({res.kernel})  <= 1.1x {verdict(r <= 1.1)}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI smoke)")
    parser.add_argument(
        "--only",
        choices=["floor", "run_level", "moving_block", "callable", "kappa"],
        help="one section: the O(N) floor, run-level strategies (issue 39), "
        "moving_block or callable (issue 27), kappa (issue 39)",
    )
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"numpy {np.__version__}, pandas {pd.__version__}, {os.cpu_count()} CPUs, "
        f"load {load:.2f}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    if args.only in (None, "floor"):
        section_floor(args.quick)
        section_fixed_cost(args.quick)
    if args.only == "run_level":
        section_run_level(args.quick)
    if args.only == "moving_block":
        section_moving_block(args.quick)
    if args.only == "callable":
        section_callable(args.quick)
    if args.only == "kappa":
        section_kappa(args.quick)
    if args.only is not None:
        return
    section_accuracy(args.quick)
    section_run_level(args.quick)
    section_moving_block(args.quick)
    section_callable(args.quick)
    section_kappa(args.quick)
    section_systems(args.quick)
    section_bca(args.quick)


if __name__ == "__main__":
    main()
