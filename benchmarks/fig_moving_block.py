"""The moving-block bootstrap's off-centre replicates: the figure of docs/strategies.md.

Run from the repository root (about a minute on 2 cores)::

    python benchmarks/fig_moving_block.py            # writes docs/_static/moving_block_offcentre.png
    python benchmarks/fig_moving_block.py --quick    # fewer series, prints only

Left: how often each input of a sequence of N is drawn, on average, by
evalci's moving blocks (``strategy="moving_block"``; counted over many
replicates of evalci's own index draws) and by the exact formula: an input
``i`` is covered by ``min(i + 1, N - i, b, N - b + 1)`` of the ``N - b + 1``
block starts, so the first and last ``b - 1`` inputs are drawn less than
once per replicate on average and the middle ones more. Right: over many
AR(1) series, where the mean of the moving-block replicates sits relative
to the estimate (the sample mean), in units of the bootstrap standard
error: the percentile interval is centred on the replicates, so it is off
centre by that much.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

import evalci
from evalci.engine.resampling import draw_moving_blocks

OUT = Path(__file__).resolve().parents[1] / "docs" / "_static"
N, BLOCK, PHI = 100, 10, 0.7


def ar1(n: int, phi: float, rng) -> np.ndarray:
    """A stationary AR(1) series: x_t = phi x_{t-1} + e_t, e_t ~ N(0, 1)."""
    x = np.empty(n)
    x[0] = rng.normal() / np.sqrt(1 - phi**2)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.normal()
    return x


def expected_counts(n: int, b: int) -> np.ndarray:
    """Mean draws of each input per replicate: ceil(n / b) blocks of b, first n kept.

    Exact for the blocks that are kept whole; the last block is cut, which
    the simulated counts in the figure include.
    """
    i = np.arange(n)
    cover = np.minimum.reduce([i + 1, n - i, np.full(n, b), np.full(n, n - b + 1)])
    return cover / (n - b + 1) * (n / b)


def offsets(n_series: int, n_resamples: int):
    """(replicate mean - estimate) / bootstrap SE over AR(1) series (mean 0),
    and how often the 95% percentile interval, as given and re-centred on
    the estimate, covers the true mean 0."""
    out = np.empty(n_series)
    covered = np.zeros((n_series, 2), dtype=bool)
    for s in range(n_series):
        x = ar1(N, PHI, np.random.default_rng(s))
        res = evalci.bootstrap(
            pd.DataFrame({"t": np.arange(N), "score": x}),
            "score",
            "t",
            strategy="moving_block",
            block_length=BLOCK,
            n_resamples=n_resamples,
            rng=s,
        )
        reps = np.asarray(res.bootstrap_distribution).reshape(-1)
        out[s] = (reps.mean() - res.estimate) / reps.std(ddof=1)
        centred = np.quantile(reps - reps.mean() + res.estimate, [0.025, 0.975])
        covered[s] = [res.low <= 0 <= res.high, centred[0] <= 0 <= centred[1]]
    return out, covered.mean(axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n_series, n_resamples = (50, 500) if args.quick else (1000, 2000)

    gen = np.random.default_rng(0)
    idx = draw_moving_blocks(gen, 20_000, N, BLOCK)
    counts = np.bincount(idx.reshape(-1), minlength=N) / len(idx)
    exact = expected_counts(N, BLOCK)
    off, coverage = offsets(n_series, n_resamples)
    q = np.quantile(np.abs(off), [0.5, 0.9])
    print(
        f"N={N}, block_length={BLOCK}, AR(1) phi={PHI}, {n_series} series x "
        f"{n_resamples} resamples"
    )
    print(
        f"draws per replicate: first input {counts[0]:.3f}, middle {counts[N // 2]:.3f}"
    )
    print(
        f"|replicate mean - estimate| / SE: median {q[0]:.3f}, 90th percentile {q[1]:.3f}"
    )
    print(
        f"95% coverage of the true mean: percentile {coverage[0]:.3f}, "
        f"re-centred on the estimate {coverage[1]:.3f} (SE "
        f"{np.sqrt(0.95 * 0.05 / n_series):.3f})"
    )
    print(f"formula vs draws: largest gap {np.abs(exact - counts)[:-BLOCK].max():.4f}")
    if args.quick:
        return

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
    left.plot(np.arange(N), counts, ".", color="C0", label="evalci's draws")
    left.plot(np.arange(N), exact, "-", color="C3", lw=1, label="formula")
    left.axhline(1, color="0.5", lw=1, ls="--", label="cluster bootstrap")
    left.set_xlabel("position in the sequence")
    left.set_ylabel("draws per replicate")
    left.set_title(f"moving blocks, N={N}, block_length={BLOCK}", fontsize="medium")
    left.legend(fontsize="small", frameon=False)
    right.hist(off, bins=40, color="0.7", edgecolor="white")
    right.axvline(0, color="C0", lw=2, label="estimate (sample mean)")
    right.set_xlabel("(mean of replicates - estimate) / bootstrap SE")
    right.set_ylabel(f"series (of {n_series})")
    right.set_title(
        f"AR(1), phi={PHI}: median |offset| {q[0]:.2f} SE", fontsize="medium"
    )
    right.legend(fontsize="small", frameon=False)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "moving_block_offcentre.png"
    fig.savefig(path, dpi=110, metadata={"Software": None})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
