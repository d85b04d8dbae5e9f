"""Planning an evaluation: variance components, interval widths, N vs k, sample size.

Everything here follows from seed 000's formula for the variance of a mean
score over N inputs with k runs each, Var(Ybar) = (sigma2_B + sigma2_W / k) / N
(see :mod:`evalci.variance`):

* :func:`icc` estimates sigma2_B, sigma2_W and rho from a pilot (it lives in
  :mod:`evalci.variance`);
* :func:`width_factor`, :func:`predict_width` and :func:`width_table` predict
  (and, for the table, check by subsampling runs) how an interval narrows
  with k: the factor sqrt(rho + (1 - rho) / k) never drops below sqrt(rho);
* :func:`plan` / :func:`plan_from_data` choose N and k for a budget or a
  target width, given the cost of a new input and of one run;
* :func:`sample_size`, :func:`minimum_detectable_effect` and :func:`power`
  (and the ``*_from_data`` forms) size a comparison of two systems (they
  live in :mod:`evalci.power`).

Every one of them is importable from this module.

Examples
--------
Seed 000's simulation model has rho = 0.025065 (PAPER-NOTES):

>>> from evalci import planning, simulate
>>> df = simulate.confusion_model(20_000, 5, rng=3)
>>> est = planning.icc(df, "correct", "input_id")
>>> round(float(est.rho.iloc[0]), 3)
0.025
>>> planning.width_factor(0.025065, [2, 3, 5]).round(3).tolist()
[0.716, 0.592, 0.469]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.validate import (
    check_integer,
    check_n_resamples,
    check_number,
)
from evalci.methods.power import (
    mde_from_data,
    minimum_detectable_effect,
    power,
    sample_size,
    sample_size_from_data,
)
from evalci.methods.variance import (
    _cell_sums,
    _codes,
    _group_frame,
    _outcomes,
    _source_icc,
    _source_iv,
    icc,
)

# moved to power.py and variance.py; importable from here as before
from evalci.methods.widths import (  # noqa: F401 - part of this module's API
    _factor,
    _scalar_or_array,
    _width,
    _z_two_sided,
    predict_width,
    width_factor,
)

__all__ = [
    "Plan",
    "icc",
    "mde_from_data",
    "minimum_detectable_effect",
    "plan",
    "plan_from_data",
    "power",
    "predict_width",
    "sample_size",
    "sample_size_from_data",
    "width_factor",
    "width_table",
]

#: default upper limit of the automatic ``max_k`` of :func:`plan`
_MAX_K_CAP = 1000
#: slack for whole numbers computed in floating point (N, k, budgets)
_EPS = 1e-9


# ================================================================ widths
# (the closed forms live in evalci.methods.widths)
def _subsample(data, src, b_codes, c_codes, k_max, seed):
    """Up to ``k_max`` runs per input, nested in k: a seeded random order per input.

    Rows: each row gets a uniform key; the first k' rows of an input in key
    order are its k'-run subsample, so the k'-run set is contained in the
    (k'+1)-run set. Counts: k_max runs are drawn one at a time without
    replacement from the urn of c successes and n - c failures (sequential
    draws over the runs, vectorised over inputs). Returns arrays
    (by code, cluster code, rank, outcome).
    """
    rng = np.random.default_rng(seed)
    if not src.counts:
        y = data[src.value].to_numpy(dtype=float)
        cell = b_codes * (c_codes.max() + 1) + c_codes
        u = rng.random(len(y))
        order = np.lexsort((u, cell))
        cs = cell[order]
        start = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]])
        rank = np.arange(len(cs)) - np.repeat(start, np.diff(np.r_[start, len(cs)]))
        keep = rank < k_max
        o = order[keep]
        return b_codes[o], c_codes[o], rank[keep], y[o]
    c = data[src.successes].to_numpy(dtype=float)
    n = data[src.trials].to_numpy(dtype=float)
    m = len(n)
    kk = np.minimum(n, k_max).astype(np.int64)
    out = np.zeros((m, k_max))
    left_c, left_n = c.copy(), n.copy()
    for j in range(k_max):  # loop over runs, not inputs
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(left_n > 0, left_c / left_n, 0.0)
        draw = rng.random(m) < p
        out[:, j] = draw
        left_c -= draw
        left_n -= 1
    keep = np.arange(k_max)[None, :] < kk[:, None]
    rows = np.repeat(np.arange(m), kk)
    rank = np.broadcast_to(np.arange(k_max), (m, k_max))[keep]
    return b_codes[rows], c_codes[rows], rank, out[keep]


def width_table(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    by=None,
    ks=None,
    observed: bool = False,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    rng=None,
    successes: str | None = None,
    trials: str | None = None,
) -> pd.DataFrame:
    """Predicted (and observed) interval width for k' = 1, 2, ... runs per input.

    Seed 000's table "Predicted factor / Observed factor": the predicted
    factor is :func:`width_factor` at the data's estimated rho; with
    ``observed=True`` each input's runs are put in a seeded random order, the
    first k' are kept, and the cluster-bootstrap percentile interval of that
    subsample is compared with the one at k' = 1.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per run (``value``) or a counts table (``successes``/``trials``).
    value : str, optional
        Outcome column.
    cluster : str or list of str
        Column(s) identifying the input.
    by : str or list of str, optional
        One table per group (e.g. ``by="system"``).
    ks : sequence of int, optional
        Values of k' (1 is always added). Default: 1 .. min(k, 10), k the
        smallest number of runs of any input in the best-covered group.
        Predicted columns extend to any k'; observed ones are NaN where a
        group has an input with fewer than k' runs.
    observed : bool
        Also compute observed widths by subsampling runs (costs one cluster
        bootstrap per k').
    n_resamples : int
        Bootstrap replicates per k' (``observed=True``).
    confidence_level : float
        In (0, 1).
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Seed for the run order and the bootstrap. The same bootstrap seed is
        used at every k', so the ratios share their draws of inputs (common
        random numbers make the observed factors less noisy).
    successes, trials : str, optional
        Counts-table columns (0/1 outcomes), as in :func:`icc`.

    Returns
    -------
    pandas.DataFrame
        One row per (group, k'): group columns, ``k``, ``rho``,
        ``predicted_factor``, ``predicted_width`` (:func:`predict_width` at
        the group's N and components) and, with ``observed=True``,
        ``observed_width`` and ``observed_factor`` (width at k' over width at
        k' = 1). ``df.pivot(index=..., columns="k", values=...)`` gives seed
        000's wide layout.

    Examples
    --------
    >>> from evalci import planning, simulate
    >>> df = simulate.confusion_model(400, 5, rng=2)
    >>> t = planning.width_table(df, "correct", "input_id", ks=[1, 2, 3, 5],
    ...                          observed=True, n_resamples=1000, rng=0)
    >>> t[["k", "predicted_factor", "observed_factor"]].round(2)
       k  predicted_factor  observed_factor
    0  1              1.00             1.00
    1  2              0.71             0.78
    2  3              0.59             0.63
    3  5              0.47             0.50

    (One data set of 400 inputs: the observed factors scatter by a few
    hundredths around the prediction; seed 000 averaged 2,000 of them.)
    """
    src = _source_iv(data, value, cluster, by, None, successes, trials)
    check_n_resamples(n_resamples)
    z = _z_two_sided(confidence_level)
    comp = _source_icc(data, src)
    codes = _codes(data, src)
    k_min = _fewest_runs(codes, _outcomes(data, src)[0])
    present = np.flatnonzero(np.isfinite(k_min))
    ks = _ks_iv(ks, k_min[present])
    table = _predicted_table(comp, codes, present, src.by, ks, z)
    if not observed:
        return table
    widths = _observed_widths(
        data, src, codes, ks, k_min, present, n_resamples, confidence_level, rng
    )
    table["observed_width"] = widths.reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        table["observed_factor"] = (widths / widths[:, :1]).reshape(-1)
    return table


def _fewest_runs(codes, n):
    """Per by-group, the fewest runs of any of its inputs (inf for absent groups)."""
    nc = codes.nc
    ucell, (k_cell,) = _cell_sums(codes.by * nc + codes.cluster, n)
    k_min = np.full(codes.nb, np.inf)
    np.minimum.at(k_min, ucell // nc, k_cell)
    return k_min


def _ks_iv(ks, k_min):
    """The k' of the table: 1 and ``ks`` (default 1 .. min(max(k_min), 10)), sorted."""
    if ks is None:
        ks = np.arange(1, int(min(k_min.max(), 10)) + 1)
    else:
        try:
            ks = np.asarray(ks)
            ok = (
                ks.ndim == 1
                and len(ks) > 0
                and ks.dtype.kind in "iuf"
                and bool(np.all(np.isfinite(ks)))
                and np.all(ks == np.round(ks))
                and np.all(ks >= 1)
            )
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"`ks` must be a sequence of integers >= 1; got {ks!r}.")
    return np.unique(np.r_[1, ks.astype(np.int64)])


def _predicted_table(comp, codes, present, by_cols, ks, z):
    """One row per (present group, k'): group columns, k, rho, predicted factor, width."""
    group = _group_frame(codes.by_index, present, by_cols)
    # comp rows are in by-code order, one per present group
    rho = comp["rho"].to_numpy()
    sb, sw = comp["sigma2_between"].to_numpy(), comp["sigma2_within"].to_numpy()
    nn = comp["n_inputs"].to_numpy()
    G, K = len(present), len(ks)
    table = pd.concat(
        [
            group.loc[np.repeat(np.arange(G), K)].reset_index(drop=True),
            pd.DataFrame({"k": np.tile(ks, G)}),
        ],
        axis=1,
    )
    rr = np.repeat(rho, K)
    k = table["k"].to_numpy()
    with np.errstate(invalid="ignore"):
        table["rho"] = rr
        table["predicted_factor"] = _factor(rr, k)
        table["predicted_width"] = _width(
            z, np.repeat(sb, K), np.repeat(sw, K), np.repeat(nn, K), k
        )
    return table


def _observed_widths(
    data, src, codes, ks, k_min, present, n_resamples, confidence_level, rng
):
    """(groups, k') cluster-bootstrap widths of nested run subsamples (NaN past k_min)."""
    from evalci.engine.bootstrap import (
        cluster_ci,  # local: core imports nothing from here
    )
    from evalci.engine.resampling import seed_sequence

    root = seed_sequence(rng)
    order_seed, boot_seed = root.spawn(2)
    boot_int = int(boot_seed.generate_state(1)[0])
    k_obs = int(min(ks.max(), k_min[present].max()))
    gb, gc, rank, y = _subsample(data, src, codes.by, codes.cluster, k_obs, order_seed)
    G = len(present)
    widths = np.full((G, len(ks)), np.nan)
    pos = np.full(codes.nb, -1)
    pos[present] = np.arange(G)
    for j, kp in enumerate(ks):
        if kp > k_obs:
            break
        keep = rank < kp
        frame = pd.DataFrame({"_g": gb[keep], "_c": gc[keep], "_y": y[keep]})
        res = cluster_ci(
            frame,
            "_y",
            "_c",
            by="_g" if src.by else None,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            rng=boot_int,
        )
        if src.by:
            w = res.high - res.low
            widths[pos[w.index.to_numpy()], j] = w.to_numpy()
        else:
            widths[0, j] = res.high - res.low
    widths[k_min[present][:, None] < ks[None, :]] = np.nan
    return widths


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


@dataclass
class _Table:
    """The designs a plan weighs (one per k = 1 .. max_k) and the one it picks."""

    ks: np.ndarray
    n_inputs: np.ndarray
    width: np.ndarray
    cost: np.ndarray
    feasible: np.ndarray
    best: int | None
    k_star: float = np.nan
    floor_width: float = 0.0
    notes: list = field(default_factory=list)

    def alternatives(self) -> pd.DataFrame:
        best = np.zeros(len(self.ks), bool)
        if self.best is not None:
            best[self.best] = True
        nn = self.n_inputs
        return pd.DataFrame(
            {
                "k": self.ks,
                "n_inputs": nn.astype(np.int64),
                "runs": (nn * self.ks).astype(np.int64),
                "width": self.width,
                "cost": self.cost,
                "feasible": np.asarray(self.feasible, bool),
                "best": best,
            }
        )


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

    >>> from evalci import planning
    >>> p = planning.plan(0.13, 0.086, cost_input=10, cost_run=1, budget=5000)
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

    >>> q = planning.plan(0.0052637, 0.2047363, n_inputs=200, cost_run=1,
    ...                   target_width=0.05)
    >>> q.k, round(q.width, 4), round(q.floor_width, 4)
    (8, 0.0487, 0.0201)
    >>> planning.plan(0.0052637, 0.2047363, n_inputs=200,
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


def _free_n(sb, sw, z, budget, target_width, ci, cr, max_k) -> _Table:
    """N and k both free: per k, the N the budget buys or the target needs."""
    k_star = np.inf if sb == 0 else math.sqrt(sw * ci / (sb * cr))
    if max_k is None:
        max_k = (
            100
            if not np.isfinite(k_star)
            else int(min(max(10, math.ceil(k_star) + 1), _MAX_K_CAP))
        )
    ks = np.arange(1, max_k + 1)
    var_k = sb + sw / ks
    per_input = ci + ks * cr
    notes = []
    if budget is not None:
        nn = np.floor(budget / per_input + _EPS)
        feasible = nn >= 2
        with np.errstate(divide="ignore", invalid="ignore"):
            width = np.where(feasible, _width(z, sb, sw, nn, ks), np.nan)
        cost = nn * per_input
        best = int(np.nanargmin(width)) if feasible.any() else None
        if best is None:
            notes.append(
                f"the budget {budget:g} buys fewer than 2 inputs even with one run "
                f"each (one input with one run costs {ci + cr:g})."
            )
    else:
        vt = (target_width / (2 * z)) ** 2
        nn = np.maximum(2, np.ceil(var_k / vt - _EPS))
        width = _width(z, sb, sw, nn, ks)
        cost = nn * per_input
        feasible = np.ones(len(ks), bool)
        best = int(np.lexsort((width, cost))[0])
    if best is not None:
        crit = width if budget is not None else cost
        what = "width" if budget is not None else "cost"
        notes += _k_star_notes(k_star, int(ks[best]), max_k, crit, what)
    return _Table(ks, nn, width, cost, feasible, best, k_star, 0.0, notes)


def _k_star_notes(k_star, kb, max_k, crit, what):
    """Why the chosen k = ``kb`` is not next to the continuous optimum k*."""
    if not np.isfinite(k_star):
        return [
            "sigma2_between = 0: no data noise was estimated, so every run "
            f"is worth a new input at a lower cost; k capped at max_k = {max_k}."
        ]
    nbrs = {max(1, math.floor(k_star)), max(1, math.ceil(k_star))}
    if k_star > max_k:
        return [f"k* = {k_star:.3g} is beyond max_k = {max_k}; k capped."]
    if kb in nbrs:
        return []
    alt = min([j - 1 for j in nbrs if j <= max_k], key=lambda j: crit[j])
    gain = crit[alt] / crit[kb - 1] - 1
    return [
        f"k = {kb} rather than k = {alt + 1} (next to k* = "
        f"{k_star:.3g}): with whole inputs it has a {gain:.2%} "
        f"smaller {what}."
    ]


def _fixed_n(sb, sw, z, n_inputs, budget, target_width, ci, cr, max_k, rho) -> _Table:
    """N fixed: the smallest k meeting the target, or the largest the budget pays for."""
    nn_fixed = float(n_inputs)
    floor_width = 2 * z * math.sqrt(sb / nn_fixed)
    notes = []
    if target_width is not None:
        vt = (target_width / (2 * z)) ** 2
        if nn_fixed * vt <= sb:
            k_need = None
            notes.append(
                f"target width {target_width:g} is at or below the floor "
                f"{floor_width:.4g} = 2 z sqrt(sigma2_B / N) that no number of runs "
                f"can beat with N = {n_inputs} inputs (rho = {rho:.3g}: runs only "
                "remove run noise). Add inputs or accept a wider interval."
            )
        else:
            k_need = max(1, math.ceil(sw / (nn_fixed * vt - sb) - _EPS))
        if max_k is None:
            max_k = int(min(max(10, k_need or 10), _MAX_K_CAP))
        ks = np.arange(1, max_k + 1)
        width = _width(z, sb, sw, nn_fixed, ks)
        feasible = width <= target_width * (1 + _EPS)
        if k_need is not None and k_need > max_k:
            notes.append(
                f"the target needs k = {k_need} runs per input, beyond max_k = "
                f"{max_k}; raise max_k."
            )
            k_need = None
        best = None if k_need is None else k_need - 1
    else:
        k_aff = math.floor((budget / nn_fixed - ci) / cr + _EPS)
        if max_k is None:
            max_k = int(min(max(10, k_aff), _MAX_K_CAP))
        ks = np.arange(1, max_k + 1)
        width = _width(z, sb, sw, nn_fixed, ks)
        feasible = nn_fixed * (ci + ks * cr) <= budget * (1 + _EPS)
        if k_aff < 1:
            best = None
            notes.append(
                f"the budget {budget:g} does not pay for one run per input: "
                f"N (cost_input + cost_run) = {nn_fixed * (ci + cr):g}."
            )
        else:
            best = min(k_aff, max_k) - 1
            if k_aff > max_k:
                notes.append(
                    f"the budget pays for k = {k_aff}; capped at max_k = {max_k}."
                )
    nn = np.full(len(ks), nn_fixed)
    if best is not None and best < len(ks):
        gap = width[best] / floor_width if floor_width > 0 else np.inf
        if gap < 1.05:
            notes.append(
                f"the width is within 5% of the floor {floor_width:.4g}: more runs "
                "barely help; only more inputs would."
            )
    cost = nn * (ci + ks * cr)
    return _Table(ks, nn, width, cost, feasible, best, np.nan, floor_width, notes)


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

    Returns
    -------
    Plan or pandas.DataFrame
        A :class:`Plan` without ``by``; with ``by``, one row per group (group
        columns, then :meth:`Plan.summary`).

    Examples
    --------
    >>> import evalci
    >>> from evalci import planning
    >>> df = evalci.load_example()
    >>> out = planning.plan_from_data(df, "correct", "input_id", by="system",
    ...                               n_inputs="data", target_width=0.12)
    >>> out[["system", "n_inputs", "k", "width", "floor_width"]].round(4)
                               system  n_inputs  k   width  floor_width
    0    openai/gpt-5-nano-2025-08-07       198  2  0.1171       0.1018
    1  openai/gpt-5.4-mini-2026-03-17       198  3  0.1196       0.1107
    """
    src = _source_iv(data, value, cluster, by, None, successes, trials)
    if isinstance(n_inputs, str):
        if n_inputs != "data":
            raise ValueError(
                f"`n_inputs` must be an integer, None (free) or 'data' (the pilot's "
                f"number of inputs); got {n_inputs!r}."
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
    comp = _source_icc(data, src)

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
