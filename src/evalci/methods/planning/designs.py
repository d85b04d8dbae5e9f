"""The designs a plan weighs: one per k, with N, width and cost, and the one picked.

:func:`evalci.plan` validates its arguments and hands the numbers
here: :func:`_free_n` when N and k are both free (N per k from the budget or
the target width), :func:`_fixed_n` when N is fixed (only k is chosen, down
to the sqrt(rho) floor). Each returns a :class:`_Table` of the alternatives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci.methods.planning.widths import _width

#: default upper limit of the automatic ``max_k`` of :func:`plan`
_MAX_K_CAP = 1000
#: slack for whole numbers computed in floating point (N, k, budgets)
_EPS = 1e-9


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
