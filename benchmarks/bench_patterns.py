"""Pattern kernel (issue 10) beside the index kernel: same data, same run.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_patterns.py
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_patterns.py --quick
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_patterns.py --crossover

What is timed is the kernel of one BCa accuracy CI, from a draw unit (the
``resampling.Unit`` the engine builds) to the interval:

* index: ``tiles.replicate_sums`` -> the O(N) jackknife (estimate,
  replicates, N-input jackknife) -> ``intervals.acceleration`` ->
  ``intervals.interval(method="bca")``;
* patterns: ``find_patterns`` (or ``run_level_patterns``) ->
  ``patterns.replicate_sums`` -> finalize -> ``pattern_jackknife`` ->
  ``pattern_acceleration`` -> the same ``intervals.interval``.

Building the unit from a DataFrame (``engine.start_pass``: validation, sort,
statistics) is common to both paths and timed apart (``--table N``).

Units are built directly from per-input counts (0/1 runs, k equal, weight
"input", a scale-invariant metric: ``T = (c, k)``, run rows ``(x, 1)``); the
script first checks that they equal what ``engine.start_pass`` builds from the
tidy table.

The index path is too slow at large N for full B: it is timed with fewer
resamples (``B_index`` column) and scaled linearly to B by the number of
64-replicate streams (its cost is linear in streams: one stream at a time).
The scaled figure is marked ``~``. Times are medians of repeats after a
warm-up; ``cpu/wall`` < 1 means the process waited for a CPU (shared machine).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

from evalci import metrics
from evalci.engine import args as _args
from evalci.engine import intervals, tiles
from evalci.engine import passes as engine
from evalci.engine import patterns as pt
from evalci.engine import resampling as rs

DATA_SEED = 20240601
K = 5
FINALIZE = metrics.mean.finalize


# -- data ------------------------------------------------------------------------
def make_counts(n: int, k: int, n_systems: int, seed: int = DATA_SEED) -> np.ndarray:
    """Correct runs ``c`` (N, S) of k: per (input, system) accuracy ~ Beta(2, 2)."""
    gen = np.random.default_rng(seed)
    p = gen.beta(2.0, 2.0, size=(n, n_systems))
    return gen.binomial(k, p)


def make_unit(c: np.ndarray, k: int, strategy: str) -> rs.Unit:
    """The unit ``Cube.units`` builds for 0/1 runs, equal k, weight='input'."""
    n, g = c.shape
    T = np.stack([c.astype(float), np.full((n, g), float(k))], axis=2)
    bounds = np.array([0, n])
    starts = np.arange(n, dtype=np.int64) * k
    counts = np.full(n, k, dtype=np.int64)
    rows = []
    # canonical row order within an input is by value: zeros, then ones
    for j in range(g if strategy != "cluster" else 0):
        x = (np.arange(k)[None, :] >= (k - c[:, j])[:, None]).astype(float).ravel()
        rows.append(np.column_stack([x, np.ones_like(x)]))
    return rs.Unit(
        index=0,
        T=T,
        strata_bounds=bounds,
        starts=(starts,) * g,
        counts=(counts,) * g,
        rows=tuple(rows),
    )


def tidy(c: np.ndarray, k: int) -> pd.DataFrame:
    n, g = c.shape
    correct = (np.arange(k)[None, None, :] < c[:, :, None]).astype(np.int64)  # N,G,k
    return pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(np.arange(n), k), g),
            "run": np.tile(np.arange(k), n * g),
            "system": np.repeat([f"s{j}" for j in range(g)], n * k),
            "correct": correct.transpose(1, 0, 2).ravel(),
        }
    )


def start_pass(df: pd.DataFrame, strategy: str, by):
    args = _args.bootstrap_iv(
        df, "correct", "input_id", strategy, "mean", by, None, "bca", 0.95,
        1000, "input", True,
    )  # fmt: skip
    return engine.start_pass(df, args, np.random.SeedSequence(0))


def check_units():
    """The synthetic units equal the engine's (small N, 1 and 3 systems)."""
    for g in (1, 3):
        c = make_counts(50, K, g, seed=1)
        for strategy in ("cluster", "hierarchical", "single_draw"):
            got = make_unit(c, K, strategy)
            ref = start_pass(tidy(c, K), strategy, "system" if g > 1 else None)
            ref = ref.units[0][0]
            np.testing.assert_array_equal(got.T, ref.T)
            if strategy == "cluster":  # the engine keeps no run rows for it
                continue
            for a, b in zip(got.rows + got.starts + got.counts,
                            ref.rows + ref.starts + ref.counts, strict=True):  # fmt: skip
                np.testing.assert_array_equal(a, b)


# -- kernels ---------------------------------------------------------------------
def index_ci(unit: rs.Unit, strategy: str, b: int, root):
    sums = tiles.replicate_sums(unit, root, strategy, b)
    total = unit.T.sum(axis=0)
    est, reps = metrics.mean.finalize(total), metrics.mean.finalize(sums)
    jack = metrics.mean.finalize(total[None] - unit.T)  # the index kernel's
    accel = intervals.acceleration(jack.T, unit.strata_bounds)
    return intervals.interval(reps.T, est, "bca", 0.95, accel=accel)


def binary_patterns(unit: rs.Unit, c: np.ndarray, k: int):
    """Run-level patterns from the counts (what Cube.units can pass: O(N))."""
    g = c.shape[1]
    low, high = np.tile([0.0, 1.0], (g, 1)), np.ones((g, 2))
    return pt.binary_run_patterns(
        unit.T, c, np.full_like(c, k), low, high, unit.strata_bounds
    )


def pattern_ci(unit: rs.Unit, strategy: str, b: int, root, counts=None):
    """``counts=(c, k)``: run-level patterns from counts, not from the rows."""
    if strategy == "cluster":
        pat = pt.find_patterns(unit.T, unit.strata_bounds)
    elif counts is not None:
        pat = binary_patterns(unit, *counts)
    else:
        pat = pt.run_level_patterns(unit)
    total = unit.T.sum(axis=0)
    sums = pt.replicate_sums(pat, root, unit.index, strategy, b)
    est, reps = FINALIZE(total), FINALIZE(sums)
    jack = pt.pattern_jackknife(pat, FINALIZE, total)
    accel = pt.pattern_acceleration(jack.T, pat)
    return intervals.interval(reps.T, est, "bca", 0.95, accel=accel)


def timed(fn, repeat: int, warmup: bool = True):
    """Median wall time, min, max and cpu/wall over ``repeat`` calls."""
    if warmup:
        fn()
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    walls = np.array(walls)
    return (
        float(np.median(walls)),
        float(walls.min()),
        float(walls.max()),
        float(np.sum(cpus) / walls.sum()),
    )


def fmt(t: float) -> str:
    if t >= 1:
        return f"{t:7.2f} s "
    if t >= 1e-3:
        return f"{t * 1e3:7.1f} ms"
    return f"{t * 1e6:7.0f} us"


def scaled(time_small: float, b_small: int, b: int) -> float:
    return time_small * rs.n_streams_for(b) / rs.n_streams_for(b_small)


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "?"


# -- sections --------------------------------------------------------------------
def section_accuracy(sizes, b, b_index, repeat, root):
    print(f"\n1. One 0/1 system, accuracy BCa CI, k={K}, B={b:,} (load {load()})")
    print(
        f"  {'N':>9} {'P':>3} {'index':>11} {'B_index':>8} {'patterns':>10} "
        f"{'(min..max)':>19} {'cpu/wall':>8} {'speed-up':>9} {'target':>7}"
    )
    targets = {1_000: 10, 100_000: 100, 1_000_000: 200}
    out = {}
    for n in sizes:
        c = make_counts(n, K, 1)
        unit = make_unit(c, K, "cluster")
        p = pt.find_patterns(unit.T, unit.strata_bounds).n_patterns
        bi = b_index.get(n, b)
        ti = timed(lambda u=unit, bb=bi: index_ci(u, "cluster", bb, root), 1 if bi < b else
                   max(1, repeat // 2), warmup=n <= 100_000)[0]  # fmt: skip
        t_index = scaled(ti, bi, b)
        tp, lo, hi, cw = timed(lambda u=unit: pattern_ci(u, "cluster", b, root), repeat)
        mark = "~" if bi < b else " "
        target = targets.get(n)
        ok = "" if target is None else ("PASS" if t_index / tp >= target else "MISS")
        print(
            f"  {n:>9,} {p:>3} {mark}{fmt(t_index)} {bi:>8,} {fmt(tp)} "
            f"({fmt(lo)}..{fmt(hi)}) {cw:>8.2f} {t_index / tp:>8.0f}x "
            f"{'>=' + str(target) + 'x' if target else '':>6} {ok}"
        )
        out[n] = tp
    if 1_000_000 in out:
        t = out[1_000_000]
        print(f"  N=1,000,000 patterns: {fmt(t)} (target < 1 s: "
              f"{'PASS' if t < 1 else 'MISS'})")  # fmt: skip
    return out


def section_phases(n, b, repeat, root):
    """Where the pattern path spends its time (one system, cluster)."""
    c = make_counts(n, K, 1)
    unit = make_unit(c, K, "cluster")
    pat = pt.find_patterns(unit.T, unit.strata_bounds)
    sums = pt.replicate_sums(pat, root, 0, "cluster", b)
    total = unit.T.sum(axis=0)
    reps = FINALIZE(sums)
    jack = pt.pattern_jackknife(pat, FINALIZE, total)
    accel = pt.pattern_acceleration(jack.T, pat)
    phases = {
        "find_patterns": lambda: pt.find_patterns(unit.T, unit.strata_bounds),
        "T.sum (estimate)": lambda: unit.T.sum(axis=0),
        "replicate_sums": lambda: pt.replicate_sums(pat, root, 0, "cluster", b),
        "finalize": lambda: FINALIZE(sums),
        "jackknife + accel": lambda: pt.pattern_acceleration(
            pt.pattern_jackknife(pat, FINALIZE, total).T, pat
        ),
        "BCa interval": lambda: intervals.interval(
            reps.T, FINALIZE(total), "bca", 0.95, accel=accel
        ),
    }
    hu = make_unit(c, K, "hierarchical")
    rows = hu.rows[0]
    kk = np.full_like(c, K)
    sums3 = unit.T  # raw cell sums (equal k: T is not divided)
    low, high = np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])
    phases.update(
        {
            "run level, from the rows:": None,
            "  run_level_patterns": lambda: pt.run_level_patterns(hu),
            "run level, from counts:": None,
            "  two_values (N k rows)": lambda: pt.two_values(rows),
            "  binary_counts": lambda: pt.binary_counts(sums3, kk, low, high),
            "  binary_run_patterns": lambda: pt.binary_run_patterns(
                unit.T, c, kk, low, high, unit.strata_bounds
            ),
            "  draw_plan (mixture)": lambda: pt.draw_plan(
                binary_patterns(hu, c, K), "hierarchical"
            ),
        }
    )
    print(f"\n   phases of the pattern path at N={n:,}, B={b:,}:")
    for name, fn in phases.items():
        print(f"     {name:<26} {'' if fn is None else fmt(timed(fn, repeat)[0])}")


def section_run_level(sizes, b, b_index, repeat, root):
    print(f"\n2. Run-level strategies, one 0/1 system, k={K}, B={b:,} (load {load()})")
    print(
        "  patterns from the unit's run rows (run_level_patterns, O(N k)) or from\n"
        "  per-input counts (binary_run_patterns, O(N)); index run-level timed at\n"
        "  N <= 100,000 only (it draws N k runs per replicate)."
    )
    print(
        f"  {'N':>9} {'strategy':<13} {'from':<6} {'P':>3} {'form':<8} {'index':>11} "
        f"{'B_index':>8} {'patterns':>10} {'speed-up':>9} {'/cluster':>9} {'target':>7}"
    )
    for n in sizes:
        c = make_counts(n, K, 1)
        units = {
            s: make_unit(c, K, s) for s in ("cluster", "hierarchical", "single_draw")
        }
        cases = [("cluster", "T")] + [
            (s, f) for s in ("hierarchical", "single_draw") for f in ("rows", "counts")
        ]
        # time the pattern cases round-robin so that load changes hit all alike
        fns = {
            case: (
                lambda u=units[case[0]], st=case[0], cc=(c, K) if case[1] == "counts"
                else None: pattern_ci(u, st, b, root, cc)
            )
            for case in cases
        }  # fmt: skip
        for fn in fns.values():
            fn()
        walls = {case: [] for case in cases}
        for _ in range(repeat):
            for case, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                walls[case].append(time.perf_counter() - t0)
        base = float(np.median(walls[cases[0]]))
        index_done = {}
        for case in cases:
            strategy, source = case
            unit = units[strategy]
            if strategy == "cluster":
                pat = pt.find_patterns(unit.T, unit.strata_bounds)
            elif source == "counts":
                pat = binary_patterns(unit, c, K)
            else:
                pat = pt.run_level_patterns(unit)
            plan = pt.draw_plan(pat, strategy)
            tp = float(np.median(walls[case]))
            bi = b_index.get(n, b)
            if strategy != "cluster":
                bi = max(64, bi // K)  # index run-level draws N*k per replicate
            if n <= 100_000 and strategy not in index_done:
                ti = timed(lambda u=unit, st=strategy, bb=bi: index_ci(u, st, bb, root),
                           1, warmup=n <= 1_000)[0]  # fmt: skip
                index_done[strategy] = (scaled(ti, bi, b), bi)
            if strategy in index_done:
                t_index, bi = index_done[strategy]
                mark = "~" if bi < b else " "
                ix, bis, sp = mark + fmt(t_index), f"{bi:>8,}", f"{t_index / tp:8.0f}x"
            else:
                ix, bis, sp = f"{'skipped':>11}", f"{'':>8}", f"{'':>9}"
            ratio = tp / base
            tgt = "" if strategy == "cluster" else (
                "<=1.5x " + ("PASS" if ratio <= 1.5 else "MISS"))  # fmt: skip
            print(
                f"  {n:>9,} {strategy:<13} {source:<6} {pat.n_patterns:>3} "
                f"{plan.form:<8} {ix} {bis} {fmt(tp)} {sp} {ratio:>8.2f}x {tgt}"
            )


def section_systems(sizes, b, b_index, repeat, root, time_rejected=True):
    print(
        f"\n3. Several systems jointly (paired draws), k={K}, B={b:,} (load {load()})"
    )
    print(
        "  run-level patterns from counts (binary_run_patterns); 'draws' is\n"
        "  DrawPlan.n_draws, what should_use_patterns is given."
    )
    print(
        f"  {'N':>9} {'G':>3} {'strategy':<13} {'P':>7} {'draws':>7} {'form':<11} "
        f"{'rule':<8} {'index':>11} {'B_index':>8} {'patterns':>10} {'speed-up':>9} "
        f"{'/cluster':>8}"
    )
    for n in sizes:
        for g in (2, 10):
            c = make_counts(n, K, g)
            base = None
            for strategy in ("cluster", "hierarchical", "single_draw"):
                unit = make_unit(c, K, strategy)
                if strategy == "cluster":
                    pat = pt.find_patterns(unit.T, unit.strata_bounds)
                else:
                    pat = binary_patterns(unit, c, K)
                plan = pt.draw_plan(pat, strategy)
                n_runs = {"cluster": 0, "hierarchical": n * g * K}.get(strategy, n * g)
                rule = pt.should_use_patterns(n, plan.n_draws, 2 * g, n_runs=n_runs)
                bi = b_index.get(n, b)
                if strategy != "cluster":
                    bi = max(64, bi // K)
                if strategy == "cluster" or n <= 1_000:
                    ti = timed(lambda u=unit, st=strategy, bb=bi: index_ci(u, st, bb, root),
                               1, warmup=n <= 1_000)[0]  # fmt: skip
                    t_index = scaled(ti, bi, b)
                    ix = ("~" if bi < b else " ") + fmt(t_index)
                else:
                    t_index, ix, bi = None, f"{'skipped':>11}", 0
                if rule or (n <= 1_000 and (time_rejected or strategy == "cluster")):
                    tp = timed(lambda u=unit, st=strategy, cc=c: pattern_ci(u, st, b, root, (cc, K)),
                               repeat if rule else 1)[0]  # fmt: skip
                    base = tp if strategy == "cluster" else base
                    pp = " " + fmt(tp)
                    sp = f"{t_index / tp:8.1f}x" if t_index else ""
                    rel = f"{tp / base:7.2f}x" if base else ""
                else:
                    pp, sp, rel = f"{'skipped':>11}", "", ""
                print(
                    f"  {n:>9,} {g:>3} {strategy:<13} {pat.n_patterns:>7,} "
                    f"{plan.n_draws:>7,} {plan.form:<11} "
                    f"{'patterns' if rule else 'index':<8} {ix} "
                    f"{(f'{bi:,}' if bi else ''):>8} {pp} {sp:>9} {rel:>8}"
                )


def section_crossover(repeat, root):
    """Index vs pattern kernel as P/N grows: the data behind should_use_patterns.

    Continuous statistics (the float64 product), and whole numbers of ten
    systems (0..5 correct of k = 5; the index kernel's exact float32
    product since issue 39), whose P is counted after the patterns merge.
    """
    b = 640
    print(
        f"\n4. Crossover: cluster replicate sums (+ find_patterns), B={b} "
        f"(load {load()}); inputs spread uniformly over P distinct rows"
    )
    print(
        f"  {'N':>7} {'cols':>4} {'data':>10} {'P/N':>7} {'index':>10} "
        f"{'patterns':>10} {'index/patterns':>15}"
    )
    gen = np.random.default_rng(3)
    cases = [(n, g, "normal") for n in (2_000, 20_000) for g in (1, 2, 10)]
    cases += [(n, 10, "whole") for n in (20_000, 100_000)]
    for n, g, data in cases:
        for frac in (1 / 256, 1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2):
            p = max(1, int(n * frac))
            if data == "normal":
                table = gen.normal(size=(p, g, 2))
            else:
                table = np.full((p, g, 2), 5.0)
                table[:, :, 0] = gen.integers(0, 6, (p, g))
            ids = np.concatenate([np.arange(p), gen.integers(0, p, n - p)])
            unit = rs.Unit(index=0, T=table[ids], strata_bounds=np.array([0, n]))
            found = pt.find_patterns(unit.T, unit.strata_bounds)
            ti = timed(
                lambda u=unit: tiles.replicate_sums(u, root, "cluster", b), repeat
            )[0]
            tp = timed(
                lambda u=unit: pt.replicate_sums(
                    pt.find_patterns(u.T, u.strata_bounds), root, 0, "cluster", b
                ),
                repeat,
            )[0]
            rule = pt.should_use_patterns(n, found.n_patterns, 2 * g)
            print(
                f"  {n:>7,} {2 * g:>4} {data:>10} {found.n_patterns / n:>7.4f} "
                f"{fmt(ti)} {fmt(tp)} {ti / tp:>14.2f}x "
                f"{'patterns' if rule else 'index'}"
            )


def section_table(n, repeat):
    """Building the unit from a tidy table (common to both paths)."""
    c = make_counts(n, K, 1)
    df = tidy(c, K).drop(columns="system")
    t = timed(lambda: start_pass(df, "cluster", None), repeat, warmup=False)[0]
    print(f"\n5. engine.start_pass on the tidy table, N={n:,} x k={K} rows: {fmt(t)}"
          " (DataFrame -> Unit; the same for both kernels)")  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few seconds")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--crossover", action="store_true", help="only section 4")
    ap.add_argument("--table", type=int, default=0, help="also time _start_pass at N")
    args = ap.parse_args(argv)
    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, pandas "
        f"{pd.__version__}; OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, {os.cpu_count()} CPUs"
    )
    root = np.random.SeedSequence(12345)
    check_units()
    if args.crossover:
        section_crossover(args.repeat or 3, root)
        return
    if args.quick:
        sizes, b, repeat = [1_000, 20_000], 2_000, args.repeat or 3
        b_index = {20_000: 640}
        section_accuracy(sizes, b, b_index, repeat, root)
        section_run_level(sizes[:1], b, b_index, repeat, root)
        section_systems(sizes[:1], b, b_index, repeat, root, time_rejected=False)
    else:
        sizes, b, repeat = [1_000, 100_000, 1_000_000], 10_000, args.repeat or 5
        b_index = {100_000: 1_280, 1_000_000: 320}
        section_accuracy(sizes, b, b_index, repeat, root)
        section_phases(1_000_000, b, repeat, root)
        section_run_level(sizes, b, b_index, repeat, root)
        section_systems(sizes[:2], b, b_index, repeat, root)
    if args.table:
        section_table(args.table, 1)


if __name__ == "__main__":
    main()
