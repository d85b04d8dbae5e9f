"""The ``evalci`` command line (``python -m evalci``).

The parser and the entry point: one subcommand each; the commands read the
user's file (:mod:`evalci.reporting.cli_input`), call the public functions
(:mod:`evalci.reporting.cli_commands`, :mod:`evalci.reporting.cli_simulate`)
and print the result as an aligned table, Markdown, JSON records or HTML.
The statistics live in the library.

* ``evalci demo`` (also ``evalci`` alone, and ``evalci --n-resamples N``):
  the bundled GPQA example end to end.
* ``evalci ci FILE``: each system's score with its interval.
* ``evalci compare FILE``: paired gaps between systems, with a decision.
* ``evalci report FILE``: seed 002's report (text, Markdown, HTML, JSON).
* ``evalci plan FILE``: how many inputs or runs a target width needs.
* ``evalci simulate --paper``: seed 000's coverage tables;
  ``evalci simulate FILE``: coverage and width at your N and k, simulated
  from your own inputs' pass rates.

Errors in the input (a bad file, a missing column) end the command with one
line ``evalci: error: <file>: ...`` on stderr and exit code 2; warnings print
as one line ``evalci: warning: ...``; Ctrl-C exits 130
(:mod:`evalci.reporting.cli_errors` holds the contract). ``EVALCI_DEBUG=1``
shows the traceback. Output is formatted and escaped in
:mod:`evalci.reporting.cli_output`.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from evalci.engine.missing import MISSING as _MISSING
from evalci.reporting import cli_commands as _commands
from evalci.reporting import cli_errors as _cli_errors
from evalci.reporting import cli_input as _cli_input
from evalci.reporting.cli_simulate import _cmd_simulate

COMMANDS = ("demo", "ci", "compare", "report", "plan", "simulate")
FORMATS = ("table", "markdown", "json", "html")
_RAW = argparse.RawDescriptionHelpFormatter

_EPILOG = {
    "evalci": """Examples:
  evalci demo                                  the bundled GPQA example
  evalci ci results.csv                        intervals per system
  evalci compare results.csv --mme 0.02        paired gaps and a decision
  evalci report logs/ --format markdown        an Inspect/lm-eval/HELM folder
  evalci plan results.csv --target-width 0.05  inputs and runs needed
  evalci simulate --paper --trials 64 --n-resamples 200 --accuracy-only
Run 'evalci COMMAND --help' for a command's options.""",
    "demo": """Example:
  evalci demo --n-resamples 2000
  evalci --n-resamples 2000          (the same: no command runs the demo)""",
    "ci": """Examples:
  evalci ci results.csv
  evalci ci results.parquet --value correct --input question_id --system model
  evalci ci run.eval --metric pass@2 --format json -o ci.json
  evalci ci counts.csv --successes n_correct --trials n_runs --by subject
  evalci ci results.csv --facet template          (over new prompt templates too)""",
    "compare": """Examples:
  evalci compare results.csv --mme 0.02
  evalci compare results.jsonl --baseline gpt-4o --adjust holm --format markdown""",
    "report": """Examples:
  evalci report results.csv --mme 0.02
  evalci report logs/ --format html -o report.html""",
    "plan": """Examples:
  evalci plan results.csv                      (target: half today's width)
  evalci plan results.csv --target-width 0.05 --mme 0.02
  evalci plan results.csv --budget 5000 --cost-input 2 --cost-run 1""",
    "simulate": """Examples:
  evalci simulate results.csv --trials 200 --n-resamples 1000
  evalci simulate results.csv --n-inputs 100,400 --runs 1,5
  evalci simulate --paper --trials 64 --n-resamples 200 --accuracy-only

'simulate FILE' draws new data sets from your file (inputs drawn with
replacement from yours, each run a coin flip at that input's observed pass
rate for that system), builds the cluster and the naive (iid) interval on
each, and counts how often they cover the population score: a check that
the interval is honest at your N and k. Needs a 0/1 value and metric mean.""",
}


# --------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------


def _names(text: str) -> list[str]:
    """``--by a,b``: column names (an option value, so FILE is never swallowed)."""
    return [t.strip() for t in text.split(",") if t.strip()]


def _ints(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected whole numbers separated by commas, got {text!r}"
        ) from None


def _data_options() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("input")
    g.add_argument("file", metavar="FILE", nargs="+",
                   help="CSV, Parquet, JSON Lines, an Inspect .eval log, an "
                   "lm-eval samples_*.jsonl, a HELM per_instance_stats.json, "
                   "or a directory of logs; several FILEs are read as one "
                   "folder holding them")  # fmt: skip
    g.add_argument("--from", dest="source", choices=_cli_input.SOURCES,
                   help="the file's kind (default: from its name)")  # fmt: skip
    g.add_argument("--value", metavar="COL", help="outcome column (default: detected)")
    g.add_argument("--input", metavar="COL",
                   help="input id column: each input counts once (default: detected)")  # fmt: skip
    g.add_argument("--cluster", metavar="COL",
                   help="resampling unit when inputs nest in larger ones (a repo, a "
                   "document); alone, each cluster counts as one input, as the "
                   "API's cluster= (default: the input)")  # fmt: skip
    g.add_argument("--system", metavar="COL",
                   help="system/model column (default: detected)")  # fmt: skip
    g.add_argument("--run", metavar="COL",
                   help="run column (default: detected, else file order)")  # fmt: skip
    g.add_argument("--successes", metavar="COL",
                   help="counts table: correct runs per row")  # fmt: skip
    g.add_argument("--trials", dest="trials_col", metavar="COL",
                   help="counts table: runs per row")  # fmt: skip
    g.add_argument("--scorer", help="Inspect logs: read only this scorer")
    g.add_argument("--stat", default="exact_match", help="HELM: the stat to read")
    _select_options(g)
    return p


def _select_options(g, shown: bool = True) -> None:
    """--split, --task, --missing, --dropna: which rows of the file are analysed."""
    say = (lambda text: text) if shown else (lambda text: argparse.SUPPRESS)
    g.add_argument("--split", metavar="NAME",
                   help=say("HELM: read this split (test, valid; default: the "
                            "reader's)"))  # fmt: skip
    g.add_argument("--task", metavar="NAME",
                   help=say("a file with several tasks: analyse this one (or "
                            "one result per task with --by task)"))  # fmt: skip
    g.add_argument("--missing", choices=_MISSING,
                   help=say("what a missing value (an errored sample) means: "
                            "raise (the default: refuse, with the counts), drop "
                            "(leave the missing runs out; changes the "
                            "estimand), zero (count each as a failure: a value "
                            "of 0), bounds (worst-case bounds of a mean of "
                            "values in [0, 1]: as if every missing run failed, "
                            "and as if every one succeeded); ci, compare and "
                            "report take all four, plan and simulate raise "
                            "and drop"))  # fmt: skip
    g.add_argument("--dropna", action="store_true",
                   help=say("the old name of --missing drop (kept working)"))  # fmt: skip


def _stat_options(method: str = "percentile") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("statistics")
    g.add_argument("--method", default=method,
                   choices=["percentile", "basic", "bca", "normal"],
                   help=f"interval method (default {method})")  # fmt: skip
    g.add_argument("--n-resamples", type=int, default=10_000, metavar="B",
                   help="bootstrap resamples (default 10000)")  # fmt: skip
    g.add_argument("--confidence-level", type=float, default=0.95, metavar="L")
    g.add_argument("--rng", type=int, default=0, help="seed (default 0)")
    g.add_argument("--metric", default="mean",
                   help="mean (default), pass@K, pass^K, or a registered name")  # fmt: skip
    g.add_argument("--by", type=_names, action="extend", default=[], metavar="COL",
                   help="one result per group: COL or COL,COL (repeatable)")  # fmt: skip
    g.add_argument("--strata", metavar="COL", help="draw inputs within strata")
    g.add_argument("--mme", type=float,
                   help="compare, report, plan: minimum meaningful effect on the "
                   "metric's scale (0.02 = 2 points)")  # fmt: skip
    return p


def _output_options() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("output")
    g.add_argument("--format", default="table", choices=FORMATS)
    g.add_argument("-o", "--output", metavar="FILE", help="write here, not stdout")
    g.add_argument("--no-progress", action="store_true",
                   help="no progress line on stderr (or EVALCI_NO_PROGRESS=1)")  # fmt: skip
    return p


def _parser() -> argparse.ArgumentParser:
    from evalci._base.version import __version__

    top = argparse.ArgumentParser(
        prog="evalci", formatter_class=_RAW, epilog=_EPILOG["evalci"],
        description="Confidence intervals for LLM evaluation results: cluster "
        "bootstrap over inputs x runs.",
    )  # fmt: skip
    top.add_argument("--version", action="version", version=f"evalci {__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND")
    data, out = _data_options(), _output_options()
    helps = {
        "ci": "each system's score with its interval",
        "compare": "paired gaps between systems, with a decision",
        "report": "seed 002's report: scores, gaps, flaky inputs, decision",
        "plan": "inputs and runs a target width (or a gap) needs",
    }
    for name, text in helps.items():
        p = sub.add_parser(name, help=text, description=text[0].upper() + text[1:],
                           parents=[data, _stat_options(), out],
                           formatter_class=_RAW, epilog=_EPILOG[name])  # fmt: skip
        p.set_defaults(func=getattr(_commands, f"_cmd_{name}"))
    _extra_options(sub.choices)
    demo = sub.add_parser("demo", help="the bundled GPQA example end to end",
                          parents=[_stat_options("bca"), _progress_option()],
                          formatter_class=_RAW, epilog=_EPILOG["demo"],
                          description="Every step on the bundled GPQA Diamond "
                          "example (198 inputs x 5 runs x 2 systems).")  # fmt: skip
    demo.set_defaults(func=_commands._cmd_demo, mme=None)
    _simulate_parser(sub)
    return top


def _progress_option() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--no-progress", action="store_true",
                   help="no progress line on stderr (or EVALCI_NO_PROGRESS=1)")  # fmt: skip
    return p


def _extra_options(cmds) -> None:
    f = cmds["ci"].add_argument_group("facets")
    f.add_argument("--facet", type=_names, action="extend", default=[], metavar="COL",
                   help="a random facet (prompt template, judge, ...): the interval "
                   "generalises over new levels (COL or COL,COL; repeatable)")  # fmt: skip
    f.add_argument("--facet-method", default="components",
                   choices=["components", "multiway", "pigeonhole"],
                   help="with --facet: the interval (default components)")  # fmt: skip
    for name in ("compare", "report"):
        cmds[name].add_argument("--baseline", help="compare every system to this one")
        cmds[name].add_argument("--adjust", choices=["bonferroni", "holm", "bh", "by"],
                                help="multiplicity adjustment")  # fmt: skip
    cmds["report"].add_argument("--max-flaky", type=int, default=5,
                                help="flaky inputs to name (default 5)")  # fmt: skip
    p = cmds["plan"].add_argument_group("plan")
    p.add_argument("--target-width", type=float,
                   help="wanted interval width (default: half of today's)")  # fmt: skip
    p.add_argument("--budget", type=float, help="plan for a budget instead")
    p.add_argument("--cost-input", type=float, default=1.0,
                   help="cost of a new input (default 1)")  # fmt: skip
    p.add_argument("--cost-run", type=float, default=1.0,
                   help="cost of one run of one input (default 1)")  # fmt: skip
    p.add_argument("--power", type=float, default=0.8,
                   help="power to detect a gap of --mme (default 0.8)")  # fmt: skip


def _simulate_parser(sub) -> None:
    p = sub.add_parser(
        "simulate", formatter_class=_RAW, epilog=_EPILOG["simulate"],
        parents=[_output_options()],
        help="coverage: seed 000's tables (--paper), or at your N and k (FILE)",
        description="Coverage studies: seed 000's tables (--paper), or a "
        "coverage and width check simulated from your file (FILE).",
    )  # fmt: skip
    p.add_argument("file", nargs="*", metavar="FILE",
                   help="your results (any input; several are read as one "
                   "folder holding them)")  # fmt: skip
    p.add_argument("--paper", action="store_true",
                   help="reproduce seed 000's accuracy and Cohen's kappa tables")  # fmt: skip
    p.add_argument("--trials", type=int, help="data sets per cell (2000 / 200)")
    p.add_argument("--n-resamples", type=int, help="per interval (5000 / 1000)")
    p.add_argument("--accuracy-only", action="store_true", help="--paper: no kappa")
    p.add_argument("--rng", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1,
                   help="--paper: worker processes (same results)")  # fmt: skip
    p.add_argument("--n-inputs", type=_ints, metavar="N[,N]",
                   help="FILE: N to check (default: the file's)")  # fmt: skip
    p.add_argument("--runs", type=_ints, metavar="K[,K]",
                   help="FILE: k to check (default: the file's)")  # fmt: skip
    p.add_argument("--method", default="percentile",
                   choices=["percentile", "basic", "bca", "normal"])  # fmt: skip
    p.add_argument("--confidence-level", type=float, default=0.95)
    for opt in ("--from", "--value", "--input", "--cluster", "--system", "--run",
                "--scorer"):  # fmt: skip
        dest = {"--from": "source"}.get(opt, opt[2:])
        p.add_argument(opt, dest=dest, help=argparse.SUPPRESS)
    _select_options(p, shown=False)
    p.set_defaults(func=_cmd_simulate, stat="exact_match", successes=None,
                   trials_col=None, by=[], strata=None)  # fmt: skip


# --------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------


def _argv(argv) -> list[str]:
    """No command (or only the old demo flags): the demo, as before."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):  # fmt: skip
        return ["demo", *argv]
    return argv


def main(argv=None) -> int:
    """Run the ``evalci`` command; returns the exit code (2 on bad input)."""
    args = _parser().parse_args(_argv(argv))
    if args.command is None:
        _parser().print_help()
        return 0
    options = dict(_cli_errors.OPTIONS)
    if getattr(args, "cluster", None) is None:
        options["cluster"] = "--input"  # the resampled unit is the input
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = _cli_errors.show_warning(options)
        return _cli_errors.run_guarded(args.func, args, options)
