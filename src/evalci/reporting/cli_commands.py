"""The ``evalci`` commands ``ci``, ``compare``, ``report``, ``plan`` and ``demo``.

Each command reads the user's file (:mod:`evalci.reporting.cli_input`), calls
the public functions and prints the result
(:mod:`evalci.reporting.cli_output`); the parser that picks one is in
:mod:`evalci.reporting.cli`, and ``simulate`` in
:mod:`evalci.reporting.cli_simulate`. The statistics live in the library.
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np
import pandas as pd

from evalci._base import progress as _progress
from evalci._base import text as _text
from evalci.reporting import cli_errors as _cli_errors
from evalci.reporting import cli_input as _cli_input
from evalci.reporting import cli_output as _cli_output


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


# --------------------------------------------------------------------------
# reading, metrics, output
# --------------------------------------------------------------------------


def _say(text: str) -> None:
    sys.stderr.write(f"evalci: {_text.terminal(text)}\n")


def _load(args) -> _cli_input.Loaded:
    args.extra = [*args.by, *([args.strata] if args.strata else []),
                  *getattr(args, "facet", [])]
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
    if args.facet:
        from evalci.reporting import cli_facets

        return cli_facets.facet_ci(args, data, sys.modules[__name__])
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
    from evalci.methods import planning
    from evalci.methods.variance import icc

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
    from evalci.methods import planning

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
