"""Time one bayes_ci posterior (target: under 50 ms at N = 1,000, k = 10).

Run: ``PYTHONPATH=src python benchmarks/bench_bayes.py``. Prints the median
of repeated calls for each estimand and size, on the per-input counts (the
quadrature) and through the DataFrame front door.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

import evalci
from evalci.methods.bayes.grid import Counts
from evalci.methods.bayes.interval import posterior


def _median_ms(fn, repeat=15) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1000 * float(np.median(times))


def main() -> None:
    gen = np.random.default_rng(0)
    for n, k in ((30, 1), (100, 3), (1000, 10), (10_000, 10)):
        s = gen.binomial(k, gen.beta(2, 1, n))
        counts = Counts.of(np.full(n, k), s)
        df = pd.DataFrame(
            {
                "input": np.repeat(np.arange(n), k),
                "correct": (np.arange(k)[None, :] < s[:, None]).ravel().astype(int),
            }
        )
        for estimand in ("population", "inputs"):
            quad = _median_ms(lambda c=counts, e=estimand: posterior(c, estimand=e))
            door = _median_ms(
                lambda d=df, e=estimand: evalci.bayes_ci(
                    d, "correct", "input", estimand=e
                ),
                repeat=5,
            )
            print(
                f"N={n:>6} k={k:>2} {estimand:>10}: quadrature {quad:7.1f} ms, "
                f"bayes_ci on the table {door:7.1f} ms"
            )


if __name__ == "__main__":
    main()
