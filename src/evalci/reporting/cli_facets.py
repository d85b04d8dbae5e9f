"""``evalci ci --facet COL``: the interval over random facets (prompt
templates, judges, ...) and the variance components behind it."""

from __future__ import annotations

import json

__all__ = ["facet_ci"]


def facet_ci(args, data, cmd) -> int:
    """Each system's score generalised over the ``--facet`` columns."""
    from evalci.methods.facets import facet_ci as _facet_ci

    if data.value is None:
        raise ValueError("`--facet` needs one row per run with a --value column, "
                         "not a counts table (--successes/--trials).")
    if args.metric != "mean":
        raise ValueError("`--facet` works on the mean of --value; leave --metric out.")
    keys = [data.system, *args.by]
    with cmd._working(args, "variance components"):
        res = _facet_ci(data.frame, data.value, data.cluster, args.facet, by=keys,
                        method=args.facet_method, confidence_level=args.confidence_level,
                        n_resamples=args.n_resamples, rng=args.rng)
    frame = res.to_frame().reset_index()
    comp = res.g_study.components.reset_index()
    how = {"components": "t from the variance components",
           "multiway": "multiway cluster-robust SE",
           "pigeonhole": f"pigeonhole bootstrap, {args.n_resamples} resamples, rng {args.rng}"}
    title = (f"{args.confidence_level:.0%} intervals ({how[args.facet_method]}); mean of "
             f"{data.value!r} over new inputs and new {', '.join(args.facet)}")
    estimator = res.g_study.estimator
    estimator = estimator if isinstance(estimator, str) else ", ".join(sorted(set(estimator)))
    notes = [f"variance components: {estimator} (see evalci.g_study); "
             "naive_standard_error treats the facets as fixed (inputs only)"]
    if args.format == "json":  # one document: the intervals and the components
        parts = {"intervals": cmd._render(frame, "json", title, notes, full=frame),
                 "components": cmd._render(comp, "json", "", full=comp)}
        text = json.dumps({k: json.loads(v) for k, v in parts.items()}, indent=2)
    else:
        text = cmd._render(frame, args.format, title, notes, full=frame)
        text += "\n\n" + cmd._render(comp, args.format, "variance components per facet",
                                     full=comp)
    cmd._emit(text, args)
    return 0
