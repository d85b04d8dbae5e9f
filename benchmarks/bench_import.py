"""Start-up time: ``import evalci`` against importing its dependencies alone.

Each timing is a fresh interpreter that times its own import statement
(interpreter start-up left out), with bytecode cached as an installed package
has it; the two statements alternate, so drift in the machine's load falls on
both alike. Prints the median of each and their ratios: against ``import
numpy, pandas, scipy, xarray`` (the target: evalci within 1.2x) and against
importing exactly the third-party modules that ``import evalci`` loads (what
evalci's own code costs on top of what it imports).
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

DEPS = "import numpy, pandas, scipy, xarray"
EVALCI = "import evalci"
TARGET = 1.2


def evalci_imports(env: dict) -> str:
    """A statement importing the third-party modules ``import evalci`` loads.

    Every module new in ``sys.modules`` after ``import evalci``, outside evalci
    and the standard library (``scipy.special`` is imported as itself, not as
    ``scipy``), in the order they were loaded; one that cannot be imported on
    its own is skipped.
    """
    code = (
        "import sys; before = set(sys.modules); import evalci; "
        "std = set(sys.stdlib_module_names); "
        "new = [m for m in sys.modules if m not in before "
        "and m.split('.')[0] not in std and not m.startswith(('evalci', '_'))]; "
        "print(' '.join(new))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    names = out.stdout.split()
    return (
        "import importlib\n"
        f"for m in {names!r}:\n"
        "    try:\n        importlib.import_module(m)\n"
        "    except Exception:\n        pass"
    )


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
        "import time\nt = time.perf_counter()\n"
        f"{statement}\nprint(time.perf_counter() - t)"
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
    loads = evalci_imports(env)
    for statement in (DEPS, EVALCI, loads):  # warm up: write the bytecode
        time_import(statement, env)
    deps, ours, theirs = [], [], []
    for _ in range(repeat):
        deps.append(time_import(DEPS, env))
        ours.append(time_import(EVALCI, env))
        theirs.append(time_import(loads, env))
    d, e = statistics.median(deps), statistics.median(ours)
    t = statistics.median(theirs)
    print(f"dependencies ({DEPS[7:]}): median {d:.3f} s over {repeat}")
    n_loads = loads.count(",") + 1
    print(f"what evalci imports ({n_loads} modules): median {t:.3f} s")
    print(f"import evalci: median {e:.3f} s over {repeat}")
    verdict = "PASS" if e / d <= TARGET else "MISS"
    print(f"ratio to the dependencies {e / d:.2f}x (target <= {TARGET}x) {verdict}")
    print(f"ratio to what it imports {e / t:.2f}x (evalci's own modules)")
    if args.top:
        print("slowest packages beyond the dependencies (self time):")
        for seconds, name in top_modules(args.top, env):
            print(f"  {name:<24} {seconds:.3f} s")
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
