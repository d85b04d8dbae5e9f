"""The cheapest design over facets (a D-study, Brennan 2001 ch. 4).

Given variance components, a design with ``n_d`` levels of each random
dimension and ``n_r`` runs per cell gives the score a variance

    V = sum over effects a of sigma2_a / prod(n_d for d in a)
        + sigma2_residual / (prod(n_d) n_r),

and a width ``2 z sqrt(V)`` (normal quantile: the planning scale of
:func:`plan`). It costs ``sum_d cost_d n_d + cost_run prod(n_d) n_r``: a price
per input, per template, per judge (writing, validating, licensing one) and
one per run (a model call, with its judging). For every combination of the
facets' levels and runs on a grid, the inputs follow in closed form (``V`` is
``A + B / n_input``), so the optimum is exact on the grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.lazy import stats
from evalci._base.text import as_written
from evalci._base.validate import check_integer, check_level, check_number
from evalci.methods.facets.result import FacetResult, GStudy

__all__ = ["FacetPlan", "plan_facets"]

#: Levels of each facet (and runs) searched unless ``max_levels`` says otherwise.
MAX_LEVELS = 32


@dataclass(frozen=True, repr=False)
class FacetPlan:
    """The cheapest design for a target width, or the narrowest for a budget.

    Attributes
    ----------
    design : dict
        Levels per random dimension (the input column first) and ``"run"``.
    width, cost, variance : float
        The planned interval's width, the design's cost and the score's variance.
    contributions : pandas.DataFrame
        Each component's variance, its divisor in this design and its share
        of ``variance``.
    pilot : dict
        The pilot's design (levels per dimension, runs per cell rounded).
    marginal : pandas.DataFrame
        From the pilot's design, per dimension (and runs): the cost of one
        more level, the width it removes, and the width removed per unit of
        cost, best first.
    spend_on : str
        The dimension whose next level narrows the pilot's interval most per
        unit of cost: where the next money goes. (At the planned optimum the
        dimensions it changes pay about the same per unit.)
    confidence_level : float
        The level of the planned interval.
    notes : tuple of str
        What the plan could not choose (runs, when the pilot had one a cell).
    """

    design: dict
    width: float
    cost: float
    variance: float
    contributions: pd.DataFrame
    pilot: dict
    marginal: pd.DataFrame
    spend_on: str
    confidence_level: float
    notes: tuple = ()

    def __repr__(self) -> str:
        shown = " x ".join(f"{n} {d}" for d, n in self.design.items())
        was = " x ".join(f"{n} {d}" for d, n in self.pilot.items())
        lines = [f"FacetPlan({shown}: width {self.width:.4g}, cost {self.cost:.6g}; "
                 f"from the pilot's {was}, spend on {self.spend_on!r} first)",
                 self.marginal.to_string()]
        return "\n".join([*lines, *self.notes])


def _study_components(study, group):
    if isinstance(study, FacetResult):
        study = study.g_study
    if not isinstance(study, GStudy):
        raise TypeError(f"`study` must be a GStudy or a FacetResult, not "
                        f"{type(study).__name__}; make one with evalci.g_study.")
    comp = study.components
    if study.groups is not None:
        if group is None:
            raise ValueError(f"`study` has {len(study.groups)} groups; choose one "
                             f"with group= (e.g. {as_written(study.groups[0])}).")
        comp = comp.xs(group, level=0)
    replicated = "residual" in comp.index and any(
        ":".join(study.dims) == name for name in comp.index)
    runs = max(1, round(study.n_runs / max(1, study.n_cells - study.n_empty_cells)))
    pilot = {**study.levels, "run": runs if replicated else 1}
    return comp["variance"], list(study.dims), replicated, pilot


def _costs(costs, dims):
    if not isinstance(costs, dict):
        raise TypeError("`costs` must be a dict of a price per level of each "
                        f"dimension and per run, e.g. {{{dims[0]!r}: 1.0, 'run': 0.01}}.")
    unknown = [k for k in costs if k not in (*dims, "run")]
    if unknown:
        raise ValueError(f"`costs`: {as_written(unknown[0])} is not a dimension of the "
                         f"study; give prices for {', '.join(map(repr, dims))} and 'run'.")
    out = {k: check_number(costs.get(k, 0.0), f"costs[{k!r}]", low=0) for k in (*dims, "run")}
    if out["run"] <= 0 and out[dims[0]] <= 0:
        raise ValueError("`costs`: give a positive price per run (or per input); "
                         "with both 0 more inputs are free and no design is cheapest.")
    return out


def _grid(dims, fixed, max_levels, replicated):
    """Candidate levels of every dimension but the input, and of the runs."""
    axes = []
    for d in [*dims[1:], "run"]:
        if d in fixed:
            axes.append(np.array([check_integer(fixed[d], f"fixed[{d!r}]", low=1)]))
        elif d == "run" and not replicated:
            axes.append(np.array([1]))
        else:
            axes.append(np.arange(1, max_levels + 1))
    mesh = np.meshgrid(*axes, indexing="ij")
    return [m.ravel().astype(float) for m in mesh]


def _split(variance, dims, others):
    """``V = A + B / n_input`` on the grid: A and B per candidate."""
    a = np.zeros_like(others[0])
    b = np.zeros_like(others[0])
    for name, s2 in variance.items():
        parts = dims + ["run"] if name == "residual" else name.split(":")
        div = np.ones_like(a)
        for d in parts:
            if d != dims[0]:
                div = div * others[dims.index(d) - 1 if d != "run" else -1]
        if name == "residual" or dims[0] in parts:
            b += s2 / div
        else:
            a += s2 / div
    return a, b


def _design_variance(variance, dims, design: dict) -> pd.DataFrame:
    rows = []
    for name, s2 in variance.items():
        parts = [*dims, "run"] if name == "residual" else name.split(":")
        div = float(np.prod([design[d] for d in parts]))
        rows.append((name, s2, div, s2 / div))
    out = pd.DataFrame(rows, columns=["component", "variance", "divisor", "contribution"])
    out = out.set_index("component")
    total = out["contribution"].sum()
    out["share"] = out["contribution"] / total if total > 0 else np.nan
    return out


def _marginal(variance, dims, design, costs, z, replicated) -> pd.DataFrame:
    base = np.sqrt(_design_variance(variance, dims, design)["contribution"].sum())
    rows = []
    for d in [*dims, "run"] if replicated else dims:
        more = {**design, d: design[d] + 1}
        width = 2 * z * np.sqrt(_design_variance(variance, dims, more)["contribution"].sum())
        calls = np.prod([more[k] for k in [*dims, "run"]]) - np.prod(
            [design[k] for k in [*dims, "run"]])
        added = costs[d] + costs["run"] * calls
        gain = 2 * z * base - width
        rows.append((d, added, gain, gain / added if added > 0 else np.inf))
    out = pd.DataFrame(rows, columns=["dimension", "added_cost", "width_removed",
                                      "per_cost"]).set_index("dimension")
    return out.sort_values("per_cost", ascending=False)


def _choose(a, b, others, costs, dims, z, target_width, budget):
    fixed_cost = sum(costs[d] * others[i] for i, d in enumerate(dims[1:]))
    calls = np.prod(others, axis=0)  # runs per input
    per_input = costs[dims[0]] + costs["run"] * calls
    with np.errstate(divide="ignore", invalid="ignore"):
        if target_width is not None:
            room = (target_width / (2 * z)) ** 2 - a
            n_in = np.where(room > 0, np.maximum(2, np.ceil(b / room)), np.inf)
            cost = fixed_cost + per_input * n_in
            score = np.where(np.isfinite(cost), cost, np.inf)
        else:
            n_in = np.floor((budget - fixed_cost) / per_input)
            n_in = np.where(n_in >= 2, n_in, np.nan)
            cost = fixed_cost + per_input * n_in
            score = np.where(np.isfinite(n_in), 2 * z * np.sqrt(a + b / n_in), np.inf)
    if not np.isfinite(score).any():
        return None
    width = 2 * z * np.sqrt(a + b / n_in)
    best = np.lexsort((width, score))[0]
    return int(n_in[best]), best


def plan_facets(study, *, costs, target_width=None, budget=None, fixed=None,
                max_levels: int = MAX_LEVELS, group=None,
                confidence_level: float = 0.95) -> FacetPlan:
    """The design over inputs, facets and runs that reaches a target width
    at least cost, or the narrowest interval for a budget (a D-study).

    Parameters
    ----------
    study : GStudy or FacetResult
        Variance components from a pilot (:func:`g_study`).
    costs : dict
        Price of one level of each random dimension (the input column, each
        facet) and of one ``"run"`` (one model call, judged). Missing
        dimensions cost 0.
    target_width, budget : float
        Exactly one: the interval width to reach (high - low), or the money.
    fixed : dict, optional
        Levels that cannot change, e.g. ``{"judge": 1}``.
    max_levels : int
        Largest number of levels of each facet, and of runs, searched
        (default 32). Inputs are not bounded.
    group : optional
        With a study of several groups (``by``), the one to plan for.
    confidence_level : float
        The level of the planned interval.

    Returns
    -------
    FacetPlan
        ``design``, ``width``, ``cost``, ``contributions``, ``marginal``
        and ``spend_on``: the dimension whose next level buys the most width
        per unit of cost.

    Notes
    -----
    The width is ``2 z sqrt(V)`` with the normal quantile; an interval
    from so few facet levels that Student's t matters (fewer than about ten)
    is wider, which favours more levels than the plan says. When the pilot
    had one run per cell, run noise and the highest interaction are one
    component and the runs stay at 1.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example("metaprompting")
    >>> g = evalci.g_study(df, "correct", "input_id", "template")
    >>> p = evalci.plan_facets(g, costs={"template": 20.0, "run": 0.01},
    ...                        target_width=0.03)
    >>> p.design["template"] > 7, p.spend_on
    (True, 'template')
    """
    level = check_level(confidence_level)
    z = float(stats.norm.ppf(0.5 + level / 2))
    variance, dims, replicated, pilot = _study_components(study, group)
    costs = _costs(costs, dims)
    if (target_width is None) == (budget is None):
        raise ValueError("give exactly one of `target_width` (least cost) or "
                         "`budget` (narrowest interval).")
    if target_width is not None:
        target_width = check_number(target_width, "target_width", low=0, low_open=True)
    else:
        budget = check_number(budget, "budget", low=0, low_open=True)
    max_levels = check_integer(max_levels, "max_levels", low=1)
    fixed = dict(fixed or {})
    bad = [k for k in fixed if k not in (*dims[1:], "run")]
    if bad:
        raise ValueError(f"`fixed`: {as_written(bad[0])} is not a facet or 'run'; "
                         "the inputs are what the plan chooses.")
    others = _grid(dims, fixed, max_levels, replicated)
    a, b = _split(variance, dims, others)
    chosen = _choose(a, b, others, costs, dims, z, target_width, budget)
    if chosen is None:
        what = (f"width {target_width:g}" if target_width is not None
                else f"budget {budget:g}")
        raise ValueError(f"no design up to {max_levels} levels of each facet reaches "
                         f"the {what}; raise `max_levels`, the budget or the width.")
    n_in, best = chosen
    design = {dims[0]: n_in, **{d: int(others[i][best])
                                for i, d in enumerate([*dims[1:], "run"])}}
    contributions = _design_variance(variance, dims, design)
    total = float(contributions["contribution"].sum())
    marginal = _marginal(variance, dims, pilot, costs, z, replicated)
    cost = sum(costs[d] * design[d] for d in dims) + costs["run"] * float(
        np.prod(list(design.values())))
    notes = () if replicated else (
        "one run per cell in the pilot: run noise is not separable, runs stay at 1",)
    return FacetPlan(design, 2 * z * np.sqrt(total), float(cost), total, contributions,
                     pilot, marginal, str(marginal.index[0]), level, notes)
