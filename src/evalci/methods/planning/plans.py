"""Planning an evaluation: variance components, interval widths, N vs k, sample size.

Everything here follows from seed 000's formula for the variance of a mean
score over N inputs with k runs each, Var(Ybar) = (sigma2_B + sigma2_W / k) / N
(see :mod:`evalci.variance`):

* :func:`icc` estimates sigma2_B, sigma2_W and rho from a pilot (it lives in
  :mod:`evalci.methods.variance.components`);
* :func:`width_factor`, :func:`predict_width` and :func:`width_table` predict
  (and, for the table, check by subsampling runs) how an interval narrows
  with k: the factor sqrt(rho + (1 - rho) / k) never drops below sqrt(rho)
  (they live in :mod:`evalci.methods.planning.widths` and
  :mod:`evalci.methods.planning.width_grid`);
* :func:`plan` / :func:`plan_from_data` choose N and k for a budget or a
  target width, given the cost of a new input and of one run: this module's
  own job (the table of designs it weighs is :mod:`evalci.methods.planning.designs`);
* :func:`sample_size`, :func:`minimum_detectable_effect` and :func:`power`
  (and the ``*_from_data`` forms) size a comparison of two systems (they
  live in :mod:`evalci.methods.planning.power_analysis`).

All of them are importable from the family, :mod:`evalci.methods.planning`, and from :mod:`evalci`.

Examples
--------
Seed 000's simulation model has rho = 0.025065 (docs/paper-notes.md):

>>> from evalci import simulate
>>> import evalci
>>> df = simulate.confusion_model(20_000, 5, rng=3)
>>> est = evalci.icc(df, "correct", "input_id")
>>> round(float(est.rho.iloc[0]), 3)
0.025
>>> evalci.width_factor(0.025065, [2, 3, 5]).round(3).tolist()
[0.716, 0.592, 0.469]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_integer, check_number
from evalci.methods.facets import g_study, plan_facets
from evalci.methods.planning.designs import _fixed_n, _free_n
from evalci.methods.planning.widths import (
    _z_two_sided,
)
from evalci.methods.variance import (
    source_icc,
    source_iv,
)

__all__ = ["Plan", "plan", "plan_from_data"]


# ================================================================== N versus k
@dataclass(frozen=True, eq=False)
class Plan:
    """A choice of N inputs and k runs per input, with the alternatives behind it.

    Attributes
    ----------
    n_inputs, k : int or None
        The recommendation (None when nothing in the table is feasible).
    width, cost : float
        Predicted interval width (normal approximation, :func:`predict_width`)
        and cost ``N (cost_input + k cost_run)`` of the recommendation.
    feasible : bool
        False when the budget buys too little, or the target width is out of
        reach (with N fixed: at or below the floor; see ``note``).
    objective : {'budget', 'target_width'}
        Minimise width for a budget, or cost for a target width.
    k_star : float
        The continuous optimum sqrt((sigma2_W / sigma2_B) (cost_input /
        cost_run)) (free N only; inf when sigma2_B = 0; NaN with N fixed).
    floor_width : float
        With N fixed, 2 z sqrt(sigma2_B / N): the width no number of runs can
        beat (the sqrt(rho) floor of seed 000). 0 with N free.
    sigma2_between, sigma2_within, rho : float
        The variance components planned with.
    cost_input, cost_run, budget, target_width, confidence_level
        The inputs of the plan.
    fixed_n_inputs : bool
        Whether N was fixed (only k is chosen).
    note : str
        Plain-language explanation (the floor, caps, infeasibility).
    alternatives : pandas.DataFrame
        One row per k = 1 .. max_k: ``k, n_inputs, runs, width, cost,
        feasible, best``. Also :meth:`to_frame`.
    """

    n_inputs: int | None
    k: int | None
    width: float
    cost: float
    feasible: bool
    objective: str
    k_star: float
    floor_width: float
    sigma2_between: float
    sigma2_within: float
    rho: float
    cost_input: float | None
    cost_run: float | None
    budget: float | None
    target_width: float | None
    confidence_level: float
    fixed_n_inputs: bool
    note: str
    alternatives: pd.DataFrame = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        """The table of alternatives (one row per k), ``best`` marking the choice."""
        return self.alternatives.copy()

    def summary(self) -> dict:
        """The recommendation as a flat dict (one row of :func:`plan_from_data`)."""
        return {
            "n_inputs": self.n_inputs,
            "k": self.k,
            "width": self.width,
            "cost": self.cost,
            "feasible": self.feasible,
            "k_star": self.k_star,
            "floor_width": self.floor_width,
            "rho": self.rho,
            "sigma2_between": self.sigma2_between,
            "sigma2_within": self.sigma2_within,
            "note": self.note,
        }

    def __repr__(self) -> str:
        level = f"{self.confidence_level:.0%}"
        costs = (
            f"cost_input {self.cost_input:g}, " if self.cost_input is not None else ""
        )
        costs += f"cost_run {self.cost_run:g}" if self.cost_run is not None else ""
        if self.objective == "budget":
            head = f"Plan: narrowest {level} interval for a budget of {self.budget:g}"
        else:
            head = (
                f"Plan: cheapest design with a {level} width <= {self.target_width:g}"
            )
        head += f" ({costs.rstrip(', ')})" if costs else ""
        lines = [head]
        if self.n_inputs is not None and self.k is not None:
            fixed = " (fixed)" if self.fixed_n_inputs else ""
            cost = "" if np.isnan(self.cost) else f", cost {self.cost:.8g}"
            lines.append(
                f"  N = {self.n_inputs} inputs{fixed} x k = {self.k} runs: "
                f"width {self.width:.4g}{cost}"
            )
        else:
            lines.append("  no feasible design")
        comp = (
            f"  sigma2_B = {self.sigma2_between:.4g}, sigma2_W = "
            f"{self.sigma2_within:.4g}, rho = {self.rho:.4g}"
        )
        if self.fixed_n_inputs:
            comp += f"; floor width {self.floor_width:.4g}"
        elif not np.isnan(self.k_star):
            comp += f"; k* = {self.k_star:.3g}"
        lines.append(comp)
        if self.note:
            lines.append("  " + self.note)
        t = self.alternatives
        if t["cost"].isna().all():
            t = t.drop(columns="cost")
        if len(t) > 12:
            b = int(np.flatnonzero(t["best"])[0]) if t["best"].any() else 0
            lo = max(0, min(b - 5, len(t) - 11))
            t = t.iloc[lo : lo + 11]
        lines.append(
            t.to_string(
                index=False,
                formatters={
                    "width": lambda v: f"{v:.4g}",
                    "cost": lambda v: f"{v:.8g}",
                },
            )
        )
        return "\n".join(lines)


def _plan_iv(
    cost_input,
    cost_run,
    budget,
    target_width,
    n_inputs,
    max_k,
    confidence_level,
    data=False,
):
    """Validate the design arguments of :func:`plan` (``n_inputs="data"`` if ``data``).

    Returns ``z, budget, target_width, n_inputs, cost_input, cost_run,
    max_k`` as numbers (``n_inputs`` stays ``"data"`` when given so).
    """
    z = _z_two_sided(confidence_level)
    if (budget is None) == (target_width is None):
        raise ValueError(
            "give exactly one of `budget` (minimise the width) or `target_width` "
            "(minimise the cost)."
        )
    if budget is not None:
        budget = check_number(budget, "budget", low=0, low_open=True)
    if target_width is not None:
        target_width = check_number(
            target_width,
            "target_width",
            low=0,
            low_open=True,
            hint=" (high - low, e.g. 0.05)",
        )
    fixed = n_inputs is not None
    if fixed and not (data and isinstance(n_inputs, str) and n_inputs == "data"):
        n_inputs = check_integer(n_inputs, "n_inputs", low=2)
    if cost_input is not None:
        cost_input = check_number(cost_input, "cost_input", low=0)
    if cost_run is not None:
        cost_run = check_number(cost_run, "cost_run", low=0, low_open=True)
    if not fixed and (cost_input is None or cost_run is None):
        raise ValueError(
            "`cost_input` and `cost_run` are required to trade new inputs against "
            "more runs (e.g. cost_input=10, cost_run=1); with the inputs fixed, pass "
            "n_inputs= instead."
        )
    if fixed and budget is not None and cost_run is None:
        raise ValueError(
            "`cost_run` is required to know how many runs a `budget` buys."
        )
    if max_k is not None:
        max_k = check_integer(max_k, "max_k", low=1)
    return z, budget, target_width, n_inputs, cost_input, cost_run, max_k


def plan(
    sigma2_between,
    sigma2_within,
    *,
    cost_input=None,
    cost_run=None,
    budget=None,
    target_width=None,
    n_inputs=None,
    max_k=None,
    confidence_level: float = 0.95,
) -> Plan:
    """Choose N inputs and k runs per input for a budget or a target width.

    The cost of a design is ``N (cost_input + k cost_run)`` and its interval
    width ``2 z sqrt((sigma2_B + sigma2_W / k) / N)`` (seed 000). Minimising
    the width for a budget, or the cost for a target width, both lead to

        k* = sqrt((sigma2_W / sigma2_B) (cost_input / cost_run)),

    (minimise (sigma2_B + sigma2_W / k)(cost_input + k cost_run) over k).
    The recommendation is the best whole design on the table of k = 1 ..
    max_k, with N = floor(budget / (cost_input + k cost_run)) or the smallest
    N that meets the target: this is floor(k*) or ceil(k*), unless rounding N
    to whole inputs favours a neighbour.

    With ``n_inputs`` fixed (a benchmark's inputs are what they are), only k
    is chosen: the smallest k meeting ``target_width``, or the largest k the
    ``budget`` pays for. No k can beat the floor 2 z sqrt(sigma2_B / N)
    (``floor_width``, the sqrt(rho) floor); a target at or below it is
    reported as infeasible.

    Parameters
    ----------
    sigma2_between, sigma2_within : float
        Variance components, >= 0 and not both 0: from :func:`icc`, or use
        :func:`plan_from_data` on a pilot.
    cost_input : float, optional
        Cost paid once per new input (e.g. writing and labelling it), >= 0.
        Required when N is free; 0 when omitted with N fixed.
    cost_run : float, optional
        Cost of one run of one input, > 0. Required except for a target
        width with N fixed.
    budget : float, optional
        Total budget: minimise the width. Give this or ``target_width``.
    target_width : float, optional
        Wanted interval width (high - low, e.g. 0.05 = +/- 2.5 points):
        minimise the cost.
    n_inputs : int, optional
        Fix N (>= 2) and choose k only.
    max_k : int, optional
        Largest k considered (rows of ``alternatives``). Default: enough to
        contain the optimum (at least 10), at most 1000; 100 when sigma2_B = 0
        with N free (then every extra run helps and there is no optimum).
    confidence_level : float
        In (0, 1).

    Returns
    -------
    Plan
        Prints as a short report; ``.to_frame()`` gives the alternatives.

    Notes
    -----
    Widths are those of the normal approximation, which the cluster
    bootstrap matches for accuracy (seed 000: 0.0592 vs 0.0594 at N = 200,
    k = 5). For nonlinear metrics treat them as a guide.

    Examples
    --------
    Components like GPQA's (rho = 0.6); a new input costs 10 runs:

    >>> import evalci
    >>> p = evalci.plan(0.13, 0.086, cost_input=10, cost_run=1, budget=5000)
    >>> p.n_inputs, p.k, round(p.width, 4), round(p.k_star, 2)
    (384, 3, 0.0797, 2.57)
    >>> p.to_frame().head(4).round(4)
       k  n_inputs  runs   width    cost  feasible   best
    0  1       454   454  0.0855  4994.0      True  False
    1  2       416   832  0.0799  4992.0      True  False
    2  3       384  1152  0.0797  4992.0      True   True
    3  4       357  1428  0.0808  4998.0      True  False

    Seed 000's model (rho = 0.025) with the benchmark fixed at 200 inputs:
    8 runs per input reach a width of 0.05, but no k reaches 0.02, below the
    floor of 0.0201:

    >>> q = evalci.plan(0.0052637, 0.2047363, n_inputs=200, cost_run=1,
    ...                   target_width=0.05)
    >>> q.k, round(q.width, 4), round(q.floor_width, 4)
    (8, 0.0487, 0.0201)
    >>> evalci.plan(0.0052637, 0.2047363, n_inputs=200,
    ...               target_width=0.02).feasible
    False
    """
    sb, sw = _components_iv(sigma2_between, sigma2_within)
    z, budget, target_width, n_inputs, cost_input, cost_run, max_k = _plan_iv(
        cost_input, cost_run, budget, target_width, n_inputs, max_k, confidence_level
    )
    fixed = n_inputs is not None
    rho = sb / (sb + sw)
    ci = 0.0 if cost_input is None else cost_input
    cr = np.nan if cost_run is None else cost_run
    if fixed:
        t = _fixed_n(sb, sw, z, n_inputs, budget, target_width, ci, cr, max_k, rho)
    else:
        t = _free_n(sb, sw, z, budget, target_width, ci, cr, max_k)
    if t.best is None:
        rec = dict(
            n_inputs=n_inputs if fixed else None,
            k=None,
            width=np.nan,
            cost=np.nan,
            feasible=False,
        )
    else:
        rec = dict(
            n_inputs=int(t.n_inputs[t.best]),
            k=int(t.ks[t.best]),
            width=float(t.width[t.best]),
            cost=float(t.cost[t.best]),
            feasible=True,
        )
    return Plan(
        **rec,
        objective="budget" if budget is not None else "target_width",
        k_star=float(t.k_star),
        floor_width=float(t.floor_width),
        sigma2_between=sb,
        sigma2_within=sw,
        rho=rho,
        cost_input=cost_input,
        cost_run=cost_run,
        budget=budget,
        target_width=target_width,
        confidence_level=float(confidence_level),
        fixed_n_inputs=fixed,
        note=" ".join(t.notes),
        alternatives=t.alternatives(),
    )


def _components_iv(sigma2_between, sigma2_within):
    hint = " (a variance; use icc(...).{})"
    sb = check_number(
        sigma2_between, "sigma2_between", low=0, hint=hint.format("sigma2_between")
    )
    sw = check_number(
        sigma2_within, "sigma2_within", low=0, hint=hint.format("sigma2_within")
    )
    if sb + sw == 0:
        raise ValueError(
            "`sigma2_between` and `sigma2_within` are both 0: with no variance "
            "every design gives a zero-width interval; nothing to plan."
        )
    return sb, sw


def plan_from_data(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    by=None,
    successes: str | None = None,
    trials: str | None = None,
    cost_input=None,
    cost_run=None,
    budget=None,
    target_width=None,
    n_inputs=None,
    max_k=None,
    confidence_level: float = 0.95,
    facets=None,
    costs=None,
):
    """:func:`plan` with the variance components estimated from a pilot.

    The components are :func:`icc`'s ``sigma2_between`` (clamped at 0) and
    ``sigma2_within``.

    Parameters
    ----------
    data, value, cluster, by, successes, trials
        The pilot, as in :func:`icc`. Give ``by="system"`` for a table with
        several systems (pooling them would count system differences as
        run noise).
    n_inputs : int or "data", optional
        Fix N; ``"data"`` uses the pilot's number of inputs (the benchmark is
        what it is; only k can change).
    cost_input, cost_run, budget, target_width, max_k, confidence_level
        As in :func:`plan`.
    facets : str or list of str, optional
        Random facets (templates, judges, ...) of the pilot: the plan is then
        over inputs, each facet's levels and runs (a D-study,
        :func:`plan_facets`), with prices in ``costs``; ``by`` must then
        name one group or none.
    costs : dict, optional
        With ``facets``: the price of a level of each dimension and of a
        ``"run"`` (see :func:`plan_facets`).

    Returns
    -------
    Plan, FacetPlan or pandas.DataFrame
        A :class:`Plan` without ``by``; with ``by``, one row per group (group
        columns, then :meth:`Plan.summary`); with ``facets``, a
        :class:`FacetPlan`.

    Examples
    --------
    >>> import evalci
    >>> import evalci
    >>> df = evalci.load_example()
    >>> out = evalci.plan_from_data(df, "correct", "input_id", by="system",
    ...                               n_inputs="data", target_width=0.12)
    >>> out[["system", "n_inputs", "k", "width", "floor_width"]].round(4)
                               system  n_inputs  k   width  floor_width
    0    openai/gpt-5-nano-2025-08-07       198  2  0.1171       0.1018
    1  openai/gpt-5.4-mini-2026-03-17       198  3  0.1196       0.1107
    """
    if facets is not None:
        study = g_study(data, value, cluster, facets, by=by, confidence_level=confidence_level)
        return plan_facets(study, costs=costs, target_width=target_width, budget=budget,
                           confidence_level=confidence_level)
    src = source_iv(data, value, cluster, by, None, successes, trials)
    if isinstance(n_inputs, str):
        if n_inputs != "data":
            raise ValueError(
                f"`n_inputs` must be an integer, None (free) or 'data' (the pilot's "
                f"number of inputs); got {as_written(n_inputs)}."
            )
    kwargs = dict(
        cost_input=cost_input,
        cost_run=cost_run,
        budget=budget,
        target_width=target_width,
        max_k=max_k,
        confidence_level=confidence_level,
    )
    # every argument checked before the pilot is read (and for groups left out)
    _plan_iv(**kwargs, n_inputs=n_inputs, data=True)
    comp = source_icc(data, src)

    def one(row):
        n = int(row["n_inputs"]) if isinstance(n_inputs, str) else n_inputs
        return plan(row["sigma2_between"], row["sigma2_within"], n_inputs=n, **kwargs)

    if not src.by:
        return one(comp.iloc[0])
    rows = []
    for _, row in comp.iterrows():  # one plan per group (not per input)
        if not np.isfinite(row["rho"]):
            rows.append(
                {"feasible": False, "note": "variance components not estimable"}
            )
            continue
        rows.append(one(row).summary())
    return pd.concat([comp[src.by].reset_index(drop=True), pd.DataFrame(rows)], axis=1)
