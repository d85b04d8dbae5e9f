"""The ``evalci`` command line (``python -m evalci``).

One room for every command: parsing arguments, reading the user's file
(:mod:`evalci.reporting.cli_input`), calling the public functions, and printing the
result as an aligned table, Markdown, JSON records or HTML. The statistics
live in the library.

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
import re
import sys
import time
import warnings

import numpy as np
import pandas as pd

from evalci._base import progress as _progress
from evalci._base import text as _text
from evalci.engine.missing import MISSING as _MISSING
from evalci.reporting import cli_errors as _cli_errors
from evalci.reporting import cli_input as _cli_input
from evalci.reporting import cli_output as _cli_output

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
  evalci ci counts.csv --successes n_correct --trials n_runs --by subject""",
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


def _missing(args, command: str) -> str:
    """``--missing`` (with ``--dropna`` as ``drop``) for ``command``: the policy."""
    missing = getattr(args, "missing", None)
    if args.dropna and missing not in (None, "drop"):
        raise ValueError(
            f"--dropna is the old name of --missing drop and disagrees with "
            f"--missing {missing}: give one of them."
        )
    missing = "drop" if args.dropna else (missing or "raise")
    if command not in ("ci", "compare", "report") and missing in ("zero", "bounds"):
        raise ValueError(
            f"--missing {missing} is not supported for {command} (only for ci, "
            "compare and report): use --missing drop (and say so), or fill the "
            "values."
        )
    return missing


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
        p.set_defaults(func=globals()[f"_cmd_{name}"])
    _extra_options(sub.choices)
    demo = sub.add_parser("demo", help="the bundled GPQA example end to end",
                          parents=[_stat_options("bca"), _progress_option()],
                          formatter_class=_RAW, epilog=_EPILOG["demo"],
                          description="Every step on the bundled GPQA Diamond "
                          "example (198 inputs x 5 runs x 2 systems).")  # fmt: skip
    demo.set_defaults(func=_cmd_demo, mme=None)
    _simulate_parser(sub)
    return top


def _progress_option() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--no-progress", action="store_true",
                   help="no progress line on stderr (or EVALCI_NO_PROGRESS=1)")  # fmt: skip
    return p


def _extra_options(cmds) -> None:
    for name in ("compare", "report"):
        cmds[name].add_argument("--baseline", help="compare every system to this one")
        cmds[name].add_argument("--adjust", choices=["bonferroni", "holm"],
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
# reading, metrics, output
# --------------------------------------------------------------------------


def _say(text: str) -> None:
    sys.stderr.write(f"evalci: {_text.terminal(text)}\n")


def _load(args) -> _cli_input.Loaded:
    args.extra = [*args.by, *([args.strata] if args.strata else [])]
    opts = argparse.Namespace(**vars(args))
    opts.trials = args.trials_col
    try:
        data = _cli_input.load(args.file, opts)
    except Exception as e:  # anything a hostile file makes a reader raise
        raise _cli_errors.FileFault(args.file, e) from e
    what = f"read {_files_text(args)} ({data.source}, {len(data.frame)} rows"
    what += f", {data.n_systems} system{'s' if data.n_systems != 1 else ''})"
    if data.detected:
        what += "; detected " + ", ".join(data.detected)
        what += " (set with --value/--input/--system/--run)"
    _say(what)
    return data


def _files_text(args) -> str:
    files = args.file if isinstance(args.file, list) else [args.file]
    return " ".join(map(str, files))


def _metric(text: str, data: _cli_input.Loaded):
    """``--metric``: mean, pass@K / pass^K, or a registered name.

    Returns (metric, value, successes, trials) as the library takes them: a
    counts table with pass@K passes the correct runs as the value and the
    runs to the metric.
    """
    from evalci import metrics as metrics

    m = re.fullmatch(r"pass([@^])(\d+)", text.strip())
    if m is None:
        return text, data.value, data.successes, data.trials
    make = metrics.pass_at_k if m[1] == "@" else metrics.pass_hat_k
    if data.successes is not None:
        return make(int(m[2]), trials=data.trials), data.successes, None, None
    return make(int(m[2])), data.value, None, None


def _render(frame, fmt, title, notes=(), full=None) -> str:
    return _cli_output.render(frame, fmt, title, notes, full)


def _emit(text: str, args) -> None:
    _cli_output.emit(text, getattr(args, "output", None), _say)


def _working(args, label: str):
    return _progress.working(f"evalci: {label}", enabled=_progress_flag(args))


def _progress_flag(args) -> bool | None:
    return False if getattr(args, "no_progress", False) else None


def _level_text(args) -> str:
    unit = "inputs"
    if getattr(args, "cluster", None) not in (None, getattr(args, "input", None)):
        unit = f"clusters ({args.cluster})"
    return (
        f"{args.confidence_level:.0%} {args.method} intervals, cluster bootstrap "
        f"over {unit} ({args.n_resamples} resamples, rng {args.rng})"
    )


# --------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------


def _boot_kwargs(args, data) -> dict:
    metric, value, successes, trials = _metric(args.metric, data)
    return dict(
        value=value,
        cluster=data.cluster,
        metric=metric,
        strata=args.strata,
        confidence_level=args.confidence_level,
        n_resamples=args.n_resamples,
        rng=args.rng,
        successes=successes,
        trials=trials,
        missing=_missing(args, args.command),
        **({} if data.input is None else {"input": data.input}),
    )


def _inputs_only(args, data, what: str) -> None:
    """plan and simulate work on inputs: refuse ``--cluster``; apply ``--dropna``."""
    if args.cluster not in (None, args.input):
        raise ValueError(
            f"`--cluster` is for ci, compare and report; {what} works on inputs: "
            "name them with --input."
        )
    cols = [c for c in (data.value, data.successes, data.trials) if c]
    na = data.frame[cols].isna().any(axis=1)
    drop = _missing(args, what) == "drop"
    if na.any() and not drop:
        col = next(c for c in cols if data.frame[c].isna().any())
        raise ValueError(
            f"`--value`: column {col!r} has {int(data.frame[col].isna().sum())} "
            "missing values; pass --missing drop (or --dropna) to drop those rows, "
            "or fill them."
        )
    if na.any():
        said = "--dropna" if args.dropna else "--missing drop"
        _say(f"{said}: dropped {int(na.sum())} rows with a missing value")
        data.frame = data.frame.loc[~na.to_numpy()].reset_index(drop=True)


def _cmd_ci(args) -> int:
    from evalci.engine.bootstrap import cluster_ci

    data = _load(args)
    kw = _boot_kwargs(args, data)
    with _working(args, "resampling"):
        res = cluster_ci(data.frame, by=[data.system, *args.by], method=args.method, **kw)  # fmt: skip
    full = res.to_frame()
    keys = [data.system, *args.by]
    shown = full[keys + ["estimate", "low", "high", "standard_error", "n_inputs", "n_runs"]]  # fmt: skip
    title = f"{_level_text(args)}; metric {full['metric'].iloc[0]} of {kw['value'] or 'successes/trials'!r}"  # fmt: skip
    cols = keys + ["estimate", "low", "high", "standard_error", "n_inputs", "n_runs",
                   "confidence_level", "method", "metric"]  # fmt: skip
    _emit(_render(shown, args.format, title, full=full[cols]), args)
    return 0


def _compare_one(frame, args, data, kw):
    from evalci.methods.compare.paired import compare

    res = compare(frame, system=data.system, baseline=args.baseline,
                  method=args.method, mme=args.mme, adjust=args.adjust, **kw)  # fmt: skip
    return res.to_frame()


def _cmd_compare(args) -> int:
    data = _load(args)
    kw = _boot_kwargs(args, data)
    parts = []
    with _working(args, "resampling"):
        if not args.by:
            parts.append(_compare_one(data.frame, args, data, kw))
        for key, frame in data.frame.groupby(args.by) if args.by else ():
            key = key if isinstance(key, tuple) else (key,)
            out = _compare_one(frame, args, data, kw)
            for c, v in reversed(list(zip(args.by, key, strict=True))):
                out.insert(0, c, v)
            parts.append(out)
    full = pd.concat(parts, ignore_index=True)
    pcol = "pvalue_adjusted" if args.adjust else "pvalue"
    shown = full[[*args.by, "a", "b", "gap", "low", "high", pcol, "decision"]]
    mme = f", minimum meaningful effect {args.mme:g}" if args.mme else ""
    title = f"Paired gaps b - a, metric {args.metric}: {_level_text(args)}{mme}"
    notes = [f"{r.b} vs {r.a}: {r.explanation}" for r in full.itertuples()]
    keep = [*args.by, "a", "b", "estimate_a", "estimate_b", "gap", "low", "high",
            "standard_error", "pvalue", "pvalue_adjusted", "decision", "explanation",
            "wins", "losses", "ties", "n_inputs"]  # fmt: skip
    bounds = ["gap_bound_low", "gap_bound_high", "share_scored_a", "share_scored_b"]
    keep[keep.index("high") + 1 : keep.index("high") + 1] = [
        c for c in bounds if c in full
    ]
    _emit(_render(shown, args.format, title, notes, full=full[keep]), args)
    return 0


def _cmd_report(args) -> int:
    from evalci.reporting.report import report

    if args.by:
        raise ValueError(
            "`--by` is not a report option: a report covers one comparison; "
            "use 'evalci compare FILE --by ...' or filter the file first."
        )
    data = _load(args)
    kw = _boot_kwargs(args, data)
    with _working(args, "resampling"):
        rep = report(data.frame, system=data.system, baseline=args.baseline,
                     method=args.method, mme=args.mme, adjust=args.adjust,
                     max_flaky=args.max_flaky, **kw)  # fmt: skip
    text = {
        "table": rep.to_text,
        "markdown": rep.to_markdown,
        "html": rep.to_html,
        "json": lambda: _cli_output.to_json(rep.to_frame()),
    }[args.format]()
    _emit(text, args)
    return 0


def _plan_rows(data, args, value, successes, trials) -> tuple[pd.DataFrame, float]:
    """Per system: today's width and floor, then k (N fixed) and N, k (free)."""
    from evalci.methods.planning import plans as planning
    from evalci.methods.planning.plans import icc

    by = [data.system, *args.by]
    src = dict(value=value, cluster=data.cluster, by=by, successes=successes,
               trials=trials, confidence_level=args.confidence_level)  # fmt: skip
    comp = icc(data.frame, value, data.cluster, by=by, successes=successes, trials=trials)  # fmt: skip
    now = planning.predict_width(comp["sigma2_between"], comp["sigma2_within"],
                                 comp["n_inputs"], comp["mean_k"],
                                 args.confidence_level)  # fmt: skip
    target = args.target_width
    if target is None and args.budget is None:
        target = float(np.round(np.nanmin(now) / 2, 4))
    goal = dict(target_width=target) if args.budget is None else dict(budget=args.budget)  # fmt: skip
    fixed = planning.plan_from_data(data.frame, **src, n_inputs="data",
                                    cost_run=args.cost_run, **goal)  # fmt: skip
    free = planning.plan_from_data(data.frame, **src, cost_input=args.cost_input,
                                   cost_run=args.cost_run, **goal)  # fmt: skip
    out = comp[by + ["n_inputs", "mean_k", "rho"]].rename(columns={"mean_k": "k"})
    out["width"] = np.asarray(now, dtype=float)
    out["floor_width"] = fixed["floor_width"].to_numpy()
    out["k_needed"] = fixed["k"].to_numpy()
    out["plan_n_inputs"] = free["n_inputs"].to_numpy()
    out["plan_k"] = free["k"].to_numpy()
    out["plan_width"] = free["width"].to_numpy()
    return out, target


def _cmd_plan(args) -> int:
    from evalci.methods.planning.power_analysis import sample_size_from_data

    data = _load(args)
    _inputs_only(args, data, "plan")
    if args.metric != "mean":
        raise ValueError(
            f"`--metric`: plan works on the mean of a 0/1 or score column; got "
            f"{args.metric!r}. Leave --metric out."
        )
    value, successes, trials = data.value, data.successes, data.trials
    rows, target = _plan_rows(data, args, value, successes, trials)
    goal = f"width {target:g}" if args.budget is None else f"budget {args.budget:g}"
    notes = [
        "width: today's predicted width; floor_width: the narrowest any number of "
        "runs gives at today's N; k_needed: runs per input for the goal at today's N "
        f"(empty: out of reach); plan_*: cheapest N x k with cost_input "
        f"{args.cost_input:g}, cost_run {args.cost_run:g}."
    ]
    systems = sorted(data.frame[data.system].unique())
    if args.mme and len(systems) >= 2 and not args.by:
        a, b = systems[:2]
        n = sample_size_from_data(data.frame, value, data.cluster, system=data.system,
                                  pair=(a, b), effect=args.mme, power=args.power,
                                  successes=successes, trials=trials)  # fmt: skip
        notes.append(
            f"To detect a gap of {args.mme:g} between {b} and {a} with power "
            f"{args.power:g} (alpha 0.05, paired, k = {int(n['k'].iloc[0])}): "
            f"about {n['n_inputs'].iloc[0]} shared inputs."
        )
    title = f"Plan for a {args.confidence_level:.0%} interval of {goal}"
    _emit(_render(rows, args.format, title, notes), args)
    return 0


class _FromData:
    """A population of inputs like the user's: each (input, system) a pass rate.

    ``sample`` draws N inputs with replacement from the file's inputs (the
    same inputs for every system, so systems stay paired) and k runs per
    input, each correct with that input's observed pass rate; ``truth`` is the
    mean pass rate over the file's inputs (each input counts equally).
    """

    def __init__(self, frame, value, cluster, system):
        rates = frame.pivot_table(index=cluster, columns=system, values=value,
                                  aggfunc="mean")  # fmt: skip
        self.dropped = int(rates.isna().any(axis=1).sum())
        rates = rates.dropna()
        self.systems = [str(s) for s in rates.columns]
        self.p = rates.to_numpy(dtype=float)

    def truth(self, metric):
        return dict(zip(self.systems, self.p.mean(axis=0), strict=True))

    def sample(self, n, k, rng):
        idx = rng.integers(0, len(self.p), n)
        u = rng.random((len(self.systems), n, k))
        correct = (u < self.p[idx].T[:, :, None]).astype(np.int64)
        s, i, r = np.indices(correct.shape).reshape(3, -1)
        return pd.DataFrame({"input_id": i, "run": r,
                             "system": np.asarray(self.systems)[s],
                             "correct": correct.ravel()})  # fmt: skip


def _simulate_file(args) -> int:
    from evalci.simulate.coverage import coverage_study

    args.trials, args.n_resamples = args.trials or 200, args.n_resamples or 1000
    data = _load(args)
    _inputs_only(args, data, "simulate")
    if data.value is None or not _cli_input._binary(data.frame[data.value]):
        raise ValueError(
            "`--value`: simulate FILE needs a 0/1 value column (one row per run); "
            f"{data.value!r} holds other values."
        )
    model = _FromData(data.frame, data.value, data.cluster, data.system)
    if model.dropped:
        _say(f"{model.dropped} inputs miss a system and are left out")
    k_now = int(round(data.frame.groupby([data.system, data.cluster]).size().mean()))
    res = coverage_study(
        model, strategies=("cluster", "iid"), methods=(args.method,),
        n_inputs=args.n_inputs or len(model.p), n_runs=args.runs or k_now,
        trials=args.trials, n_resamples=args.n_resamples,
        confidence_level=args.confidence_level, rng=args.rng,
        progress=_progress.wanted(_progress_flag(args)),
    )  # fmt: skip
    cols = ["system", "strategy", "n_inputs", "n_runs", "truth", "coverage",
            "coverage_se", "mean_width"]  # fmt: skip
    title = (
        f"Coverage of {args.confidence_level:.0%} {args.method} intervals over "
        f"{args.trials} data sets drawn from {_files_text(args)} ({args.n_resamples} "
        f"resamples each, rng {args.rng})"
    )
    notes = [
        "cluster: resample inputs with their runs (evalci's default); iid: rows "
        "as independent (the naive interval). Coverage near the level is honest."
    ]
    _emit(_render(res[cols], args.format, title, notes, full=res), args)
    return 0


def _cmd_simulate(args) -> int:
    if args.paper and args.file:
        raise ValueError("give FILE or --paper, not both.")
    if args.file:
        return _simulate_file(args)
    if not args.paper:
        raise ValueError(
            "simulate needs FILE (a coverage check on your data) or --paper "
            "(seed 000's tables); see 'evalci simulate --help'."
        )
    return _simulate_paper(args)


def _simulate_paper(args) -> int:
    from evalci.simulate.coverage import format_paper, reproduce_paper

    trials, b = args.trials or 2000, args.n_resamples or 5000
    metrics = ("accuracy",) if args.accuracy_only else ("accuracy", "kappa")
    print(
        f"Seed 000's coverage tables: {trials} trials x {b} resamples per cell, "
        f"95% intervals, rng={args.rng}; the paper used 2,000 x 5,000. "
        "Endpoints count as covered (low <= theta <= high)."
    )
    for metric in metrics:
        start = time.perf_counter()
        df = reproduce_paper(metric, trials=trials, n_resamples=b, rng=args.rng,
                             progress=_progress.wanted(_progress_flag(args)),
                             n_jobs=args.jobs)  # fmt: skip
        print()
        print(format_paper(df))
        worst = df.loc[df.note == "", "diff_se"].abs()
        print(
            f"({metric}: {time.perf_counter() - start:.1f} s; largest |diff| "
            f"outside the noted cells {worst.max():.1f} SE)"
        )
        sys.stdout.flush()
    return 0


def _cmd_demo(args) -> int:
    from evalci.engine.bootstrap import cluster_ci
    from evalci.io.example import load_example
    from evalci.methods.compare.paired import compare
    from evalci.reporting.flaky import flaky

    df = load_example()
    mme = 0.02 if args.mme is None else args.mme
    kw = dict(confidence_level=args.confidence_level, n_resamples=args.n_resamples,
              rng=args.rng)  # fmt: skip
    with _working(args, "resampling"):
        res = cluster_ci(df, "correct", cluster="input_id", by="system",
                         method=args.method, **kw)  # fmt: skip
        gap = compare(df, "correct", "input_id", mme=mme, method=args.method, **kw)
    print("GPQA Diamond: 198 inputs x 5 runs per system (stephlinds/evalconfidence, Apache-2.0)")  # fmt: skip
    print(res)
    print()
    print(gap)
    print()
    top = flaky(df, "correct", "input_id", by="system")
    n_flaky = top.groupby("system")["flaky"].sum()
    print("Flaky inputs (runs disagree): " + ", ".join(
        f"{s}: {int(n)} of 198" for s, n in n_flaky.items()))  # fmt: skip
    top = top.groupby("system", sort=False).head(3)  # each system's flakiest
    print(top[["system", "input_id", "n_runs", "pass_rate", "share"]].to_string(index=False))  # fmt: skip
    print()
    row = gap.to_frame().iloc[0]
    print(f"Verdict ({row.b} vs {row.a}, gap {row.gap:+.3f} [{row.low:+.3f}, "
          f"{row.high:+.3f}]): {row.explanation}")  # fmt: skip
    print()
    print(_demo_next(df, mme, row))
    return 0


def _demo_next(df, mme, row) -> str:
    from evalci.methods.planning import plans as planning

    plan = planning.plan_from_data(df, "correct", "input_id", by="system",
                                   n_inputs="data", target_width=0.05)  # fmt: skip
    need = planning.sample_size_from_data(df, "correct", "input_id", system="system",
                                          pair=(row.a, row.b), effect=mme)  # fmt: skip
    floor = plan["floor_width"].min()
    return "\n".join([
        "What to try next:",
        f"  - More runs cannot narrow an interval below {floor:.3f} at N = 198 "
        "inputs (the floor); more inputs can.",
        f"  - To detect a {mme:g} gap with 80% power (paired, k = 5) you need "
        f"about {need['n_inputs'].iloc[0]} shared inputs: "
        "evalci plan yourfile.csv --mme 0.02",
        "  - Your own results: evalci ci yourfile.csv (columns detected; "
        "or --value correct --input question_id --system model)",
    ])  # fmt: skip


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
