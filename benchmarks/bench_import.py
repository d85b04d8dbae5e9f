"""Start-up time: ``import evalci`` against importing its dependencies alone.

Each timing is a fresh interpreter that times its own import statement
(interpreter start-up left out), with bytecode cached as an installed package
has it; the two statements alternate, so drift in the machine's load falls on
both alike. Prints the median of each and their ratio; the target is evalci
within 1.3x of its dependencies (numpy, scipy.special, pandas, xarray).
``--top`` adds the slowest packages that ``import evalci`` brings beyond the
dependencies (``python -X importtime``, self time).

    python benchmarks/bench_import.py [--quick] [--repeat N] [--top 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

DEPS = "import numpy, scipy.special, pandas, xarray"
EVALCI = "import evalci"
TARGET = 1.3


def _env(cache: str) -> dict:
    """The environment, with ``src/`` first on the path when run from a checkout.

    Bytecode is cached under ``cache`` (an installed package has its ``.pyc``
    files; compiling evalci's sources on every import would be timed
    otherwise, and the source tree is left untouched).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = cache
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    if os.path.isdir(os.path.join(src, "evalci")):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


def time_import(statement: str, env: dict) -> float:
    """Seconds one fresh interpreter spends on ``statement``."""
    code = (
        "import time; t = time.perf_counter(); "
        f"{statement}; print(time.perf_counter() - t)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(f"{statement!r} failed:\n{out.stderr}")
    return float(out.stdout.strip().splitlines()[-1])


def top_modules(n: int, env: dict) -> list[tuple[float, str]]:
    """The ``n`` slowest top-level packages ``import evalci`` adds to the deps."""

    def self_times(statement: str) -> dict[str, float]:
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", statement],
            env=env,
            capture_output=True,
            text=True,
        )
        times: dict[str, float] = {}
        for line in out.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _, name = line[len("import time:") :].split("|")
            times[name.strip()] = int(self_us) / 1e6
        return times

    deps, ours = self_times(DEPS), self_times(EVALCI)
    extra: dict[str, float] = {}
    for name, seconds in ours.items():
        if name not in deps:
            top = name.split(".")[0]
            extra[top] = extra.get(top, 0.0) + seconds
    return sorted(((s, m) for m, s in extra.items()), reverse=True)[:n]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 pairs (CI smoke)")
    parser.add_argument("--repeat", type=int, default=15, help="pairs of timings")
    parser.add_argument("--top", type=int, default=0, help="slowest extra modules")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    cache = tempfile.mkdtemp(prefix="evalci-bench-import-")
    env = _env(cache)
    time_import(DEPS, env), time_import(EVALCI, env)  # warm up: write the bytecode
    deps, ours = [], []
    for _ in range(repeat):
        deps.append(time_import(DEPS, env))
        ours.append(time_import(EVALCI, env))
    d, e = statistics.median(deps), statistics.median(ours)
    print(f"dependencies ({DEPS[7:]}): median {d:.3f} s over {repeat}")
    print(f"import evalci: median {e:.3f} s over {repeat}")
    print(f"ratio {e / d:.2f}x (target <= {TARGET}x)")
    if args.top:
        print("slowest packages beyond the dependencies (self time):")
        for seconds, name in top_modules(args.top, env):
            print(f"  {name:<24} {seconds:.3f} s")
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
