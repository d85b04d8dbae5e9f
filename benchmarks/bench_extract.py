"""Answer extraction in time linear in the response's length (issue 24).

Run from the repository root::

    python benchmarks/bench_extract.py            # about a minute
    python benchmarks/bench_extract.py --quick    # a few seconds

Sections (each time the median of a few repeats, ``time.perf_counter``):

1. Hostile responses ("The answer is" and n spaces, and others) at n = 0.1,
   0.5 and 1 million characters: ``evalci.io.extract.choice_answer`` against
   seed 000's regular expression with ``re`` at a few thousand characters,
   where it is already quadratic (136 s at 50,000 spaces, by the issue).
   Target: evalci at 1 MB under 1 s, and time / length flat in n.
2. A typical table: 20,000 responses of about 1,600 characters (20
   sentences), each ending in "So the answer is (X)": ``choice_answer`` on the Series against ``re``'s
   ``findall`` per response. Target: evalci within 2x of ``re``.

The targets are informational; the exit code is 0 whatever they show.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

import numpy as np
import pandas as pd

from evalci.io.extract import PATTERNS, choice_answer

SEED_RE = [re.compile(p.format(letters="A-Da-d")) for p in PATTERNS]


def seed_rule(text):
    """Seed 000's rule with ``re``: the last match of the first pattern, else the second's."""
    for pattern in SEED_RE:
        found = pattern.findall(text)
        if found:
            return found[-1].upper()
    return None


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


HOSTILE = {
    "The answer is + spaces": lambda n: "The answer is" + " " * n,
    "the the ... answer is (C)": lambda n: "the " * (n // 4) + "answer is (C)",
    "The answer is a, repeated": lambda n: "The answer is a " * (n // 16),
    "Answer: + newlines": lambda n: "Answer:" + "\n" * n,
}


def section_hostile(quick: bool, repeat: int) -> None:
    print("1. hostile responses: seconds (microseconds per 1,000 characters)")
    sizes = [100_000, 1_000_000] if quick else [100_000, 500_000, 1_000_000]
    re_sizes = [1_000, 2_000] if quick else [1_000, 2_000, 4_000]
    for name, make in HOSTILE.items():
        cells = []
        for n in sizes:
            text = make(n)
            t = timed(lambda text=text: choice_answer(text), repeat)
            cells.append(f"{n:>9,}: {t:.3f} ({1e9 * t / len(text):.0f})")
        print(f"  evalci {name:<27} " + "  ".join(cells))
        cells = []
        for n in re_sizes:
            text = make(n)
            t = timed(lambda text=text: seed_rule(text), 1)
            cells.append(f"{n:>6,}: {t:.3f} ({1e9 * t / len(text):.0f})")
        print(f"  re     {name:<27} " + "  ".join(cells))
    text = HOSTILE["The answer is + spaces"](1_000_000)
    t = timed(lambda: choice_answer(text), repeat)
    print(f"  target: 1 MB under 1 s: {t:.3f} s {'PASS' if t < 1 else 'MISS'}")


def section_typical(quick: bool, repeat: int) -> None:
    n = 2_000 if quick else 20_000
    gen = np.random.default_rng(0)
    words = np.array(
        "let us think step by step about the problem and its answer so we "
        "check each option carefully".split()
    )

    def response(i):
        # sentences of 12 words: capitals and full stops break the runs of
        # lower case that the first pattern backtracks over
        sentences = [" ".join(gen.choice(words, 12)).capitalize() for _ in range(20)]
        return ". ".join(sentences) + f". So the answer is ({'ABCD'[i % 4]})"

    texts = [response(i) for i in range(n)]
    series = pd.Series(texts)
    t_evalci = timed(lambda: choice_answer(series), repeat)
    t_re = timed(lambda: [seed_rule(x) for x in texts], repeat)
    assert choice_answer(series).tolist() == [seed_rule(x) for x in texts]
    chars = sum(map(len, texts))
    print(f"2. {n:,} typical responses ({chars / n:,.0f} characters each)")
    print(f"  evalci {t_evalci:.3f} s, re {t_re:.3f} s: ratio {t_evalci / t_re:.2f}")
    print(f"  target: within 2x of re: {'PASS' if t_evalci < 2 * t_re else 'MISS'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=None)
    args = parser.parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    section_hostile(args.quick, repeat)
    section_typical(args.quick, repeat)


if __name__ == "__main__":
    main()
