"""Labelling designs for PPI: strata with known shares, inclusion probabilities.

What :func:`evalci.judge.ppi_mean` and :func:`evalci.judge.ppi_compare` do
with ``strata=``, ``shares=`` and ``label_prob=``: the checks of those
arguments, their per-input values, the inverse-probability-weighted (IPW)
estimator of one cell (a stratum of a group), and the combination of the
cells' estimates by population share. The split-form PPI++ kernel of a cell
(no ``label_prob``) is :mod:`evalci.methods.judge.ppi`'s.

The IPW estimator of a cell with ``M`` inputs (every one judged, ``f_i`` the
judge's mean over all its rows), labeled inputs ``L`` (``R_i = 1``) with
gold mean ``Y_i``, the judge's mean ``g_i`` over the same rows, and
inclusion probabilities ``pi_i`` (``w_i = 1 / pi_i``)::

    theta = lam * mean_all(f) + H(Y - lam g),   H(x) = sum_L w x / sum_L w

(the judge's mean over every input, corrected by the Hajek-normalised
Horvitz-Thompson mean of its error on the labeled ones). Its influence
function over inputs is ``psi_i = lam a_i + R_i v_i (b_i - lam c_i)`` with
``a = f - mean_all(f)``, ``b = Y - H(Y)``, ``c = g - H(g)`` and
``v_i = w_i M / sum_L w``, so ``SE^2 = sum_i psi_i^2 / M^2`` (inputs
labeled independently, Poisson sampling; cluster-robust because ``psi`` is
per input). ``SE^2`` is a quadratic in ``lam``; ``lam="auto"`` takes its
minimiser, clipped to [0, 1]. ``lam = 0`` is the Hajek gold-only estimate,
whose ``SE^2`` is the gold-only variance of :func:`_effective_n`.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_columns, check_name
from evalci.engine.cube import factorize
from evalci.engine.cube import group_codes as group_codes_of

#: how far the shares may sum from 1 (rounding of user-typed shares)
SHARES_TOL = 1e-6


@dataclass(frozen=True)
class _Design:
    """Per-input stratum codes and weights, and the shares of the strata."""

    stratum: np.ndarray  # (I,) stratum code of each input (0 without strata)
    strata: pd.Index | None  # the strata, in code order
    shares: np.ndarray  # (H,) population share of each stratum
    w: np.ndarray | None  # (I,) 1 / label_prob (NaN unlabeled); None: uniform


def _gold_judged_iv(data, judge, gold) -> None:
    """Refuse gold labels on rows the judge did not score (not in the judged set)."""
    if not (isinstance(data, pd.DataFrame) and isinstance(judge, str)
            and isinstance(gold, str)):  # fmt: skip
        return  # the shared checks say what is wrong
    if any((data.columns == col).sum() != 1 for col in (judge, gold)):
        return  # absent or duplicated: the shared checks say so
    try:
        bad = data[gold].notna() & data[judge].isna()
    except (TypeError, ValueError):
        return
    if bool(np.any(bad)):
        raise ValueError(
            f"`judge` column {as_written(judge)} has {int(bad.sum())} missing values on rows "
            f"with a gold label in {as_written(gold)}: gold labels must be in the judged set "
            "(PPI pairs each gold label with the judge's score of the same row); "
            f"score those rows with the judge or drop them "
            f"(data.dropna(subset=[{as_written(judge)}]))."
        )


def _input_index(data: pd.DataFrame, cluster: list[str], by: list[str]):
    """Each row's input (rank of its (group, cluster) cell, as :func:`_inputs`)."""
    gcode, _, _ = group_codes_of(data, by)
    if cluster:
        ccode, keys = factorize(data, cluster, "cluster")
        n_keys = len(keys)
    else:
        ccode, n_keys = np.arange(len(data), dtype=np.int64), len(data)
    _, inv = np.unique(gcode * n_keys + ccode, return_inverse=True)
    return inv.reshape(-1)


def _constant(values: np.ndarray, index: np.ndarray, n: int, name: str, col: str):
    """Per-input value of a column that must be constant within each input."""
    order = np.argsort(index, kind="stable")
    idx, v = index[order], values[order]
    rank = np.r_[0, np.cumsum(np.diff(idx) != 0)]
    first = v[np.r_[0, np.flatnonzero(np.diff(idx)) + 1]]
    same = v == first[rank]
    if v.dtype.kind == "f":
        same |= np.isnan(v) & np.isnan(first[rank])
    if not same.all():
        i = int(np.argmin(same))
        raise ValueError(
            f"`{name}` column {as_written(col)} varies within an input ({as_written(first[rank[i]])} and "
            f"{as_written(v[i])}): it describes inputs, so give every row of an input the same "
            "value."
        )
    return first  # inputs are 0..n-1, every one with rows


def _design_iv(data, strata, shares, label_prob, index, n_inputs, labeled, groups):
    """Validate ``strata``, ``shares``, ``label_prob``; per-input design arrays."""
    if strata is None:
        if shares is not None:
            raise ValueError(
                "`shares` gives the population share of each stratum: pass "
                "`strata=` (the column naming each input's stratum) with it."
            )
        stratum, strata_index, share = np.zeros(n_inputs, np.int64), None, np.ones(1)
    else:
        check_name(strata, "strata")
        check_columns(data, [strata], "strata")
        codes, strata_index = factorize(data, [strata], "strata")
        stratum = _constant(codes, index, n_inputs, "strata", strata)
        share = _shares_iv(shares, strata_index, stratum, n_inputs)
    w = None
    if label_prob is not None:
        w = _label_prob_iv(data, label_prob, index, n_inputs, labeled)
    return _Design(stratum=stratum, strata=strata_index, shares=share, w=w)


def _shares_iv(shares, strata: pd.Index, stratum: np.ndarray, n_inputs: int):
    """Shares in stratum order; default: each stratum's share of the inputs."""
    if shares is None:
        return np.bincount(stratum, minlength=len(strata)) / n_inputs
    if isinstance(shares, pd.Series):
        shares = shares.to_dict()
    if not isinstance(shares, Mapping):
        raise ValueError(
            "`shares` must map each stratum to its population share, e.g. "
            f"{{{as_written(strata[0])}: 0.5, ...}} (a dict or a pandas Series); got "
            f"{type(shares).__name__}."
        )
    missing = [s for s in strata if s not in shares]
    extra = [s for s in shares if s not in set(strata)]
    if missing or extra:
        raise ValueError(
            f"`shares` must name exactly the strata in the data "
            f"({[as_written(s) for s in strata[:10]]}); "
            + (f"missing {missing[:5]}" if missing else f"no inputs in {extra[:5]}")
            + "."
        )
    out = np.empty(len(strata))
    for i, s in enumerate(strata):
        v = shares[s]
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v >= 0:
            raise ValueError(
                f"`shares`: the share of stratum {as_written(s)} must be a number >= 0; got "
                f"{as_written(v)}."
            )
        out[i] = float(v)
    if not np.isfinite(out).all() or abs(out.sum() - 1) > SHARES_TOL:
        raise ValueError(
            f"`shares` must sum to 1 (they are the strata's population shares); they "
            f"sum to {out.sum():.6g}. Divide each by their total, or fix the one "
            "that is off."
        )
    return out


def _label_prob_iv(data, col, index, n_inputs, labeled) -> np.ndarray:
    """``1 / label_prob`` per input (NaN on unlabeled inputs)."""
    check_name(col, "label_prob")
    check_columns(data, [col], "label_prob")
    p = data[col]
    if not (pd.api.types.is_numeric_dtype(p) and not pd.api.types.is_bool_dtype(p)):
        raise ValueError(
            f"`label_prob` column {as_written(col)} must hold numbers (the probability each "
            f"input had of being labeled); dtype is {p.dtype}."
        )
    p = p.to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isnan(p) & ~((p > 0) & (p <= 1))
    if bad.any():
        raise ValueError(
            f"`label_prob` column {as_written(col)} must be in (0, 1]: found {as_written(p[bad][0])} on "
            f"{int(bad.sum())} rows. It is each input's probability of being "
            "labeled; an input that could never be labeled (0) cannot be corrected "
            "for by weighting: drop it from the population or give it a chance."
        )
    per_input = _constant(p, index, n_inputs, "label_prob", col)
    hole = labeled & np.isnan(per_input)
    if hole.any():
        raise ValueError(
            f"`label_prob` column {as_written(col)} is missing on {int(hole.sum())} labeled "
            "inputs: every labeled input needs its inclusion probability."
        )
    return np.where(labeled, 1.0 / per_input, np.nan)


def _cell_counts(design: _Design, group, labeled, n_groups, groups):
    """(G, H) labeled and unlabeled inputs; refuse a stratum without labels."""
    n_strata = len(design.shares)
    cell = group * n_strata + design.stratum
    size = n_groups * n_strata
    n_lab = np.bincount(cell, weights=labeled, minlength=size).reshape(n_groups, -1)
    n_all = np.bincount(cell, minlength=size).reshape(n_groups, -1)
    for gi in range(n_groups):
        for h in range(n_strata):
            where = _name(design, groups, gi, h)
            if n_all[gi, h] == 0 and design.shares[h] > 0:
                raise ValueError(
                    f"{where} has no inputs but a share of {design.shares[h]:g}: "
                    "its mean cannot be estimated; judge some of its inputs or give "
                    "it share 0 (and renormalise the others)."
                )
            if design.shares[h] == 0:
                continue  # weighs nothing
            if n_lab[gi, h] == 0:
                raise ValueError(
                    f"{where} has no gold labels: PPI cannot correct the judge "
                    "there; label some of its inputs, or merge it into a "
                    "neighbouring stratum."
                )
            if n_lab[gi, h] == 1:
                raise ValueError(
                    f"{where} has 1 labeled input; its variance needs at least 2: "
                    "label another, or merge it into a neighbouring stratum."
                )
    return n_lab.astype(np.int64), (n_all - n_lab).astype(np.int64)


def _name(design: _Design, groups, gi: int, h: int) -> str:
    what = (
        "the data"
        if design.strata is None
        else f"stratum {as_written(design.strata[h])}"
    )
    return what if groups is None else f"{what} in group {as_written(groups[gi])}"


def _ipw_cells(y, g, f, labeled, w, cell, n_cells, lam):
    """IPW PPI per cell: ``theta``, ``var``, ``var_gold``, ``lam``, rectifier SD.

    ``y``, ``g`` (judge over the gold rows) matter on labeled inputs only,
    ``f`` (judge over all rows) on every input; see the module docstring.
    """

    def tot(x, on=None):
        x = np.where(labeled, x, 0.0) if on == "lab" else x
        return np.bincount(cell, weights=x, minlength=n_cells)

    w0 = np.where(labeled, w, 0.0)
    y0, g0 = np.where(labeled, y, 0.0), np.where(labeled, g, 0.0)
    m = tot(np.ones_like(f))
    wsum = tot(w0, "lab")
    mu_y, mu_g, mu_f = tot(w0 * y0) / wsum, tot(w0 * g0) / wsum, tot(f) / m
    a = f - mu_f[cell]
    v = w0 * (m / wsum)[cell]  # Hajek-normalised weights, 0 off L
    b, c = (y0 - mu_y[cell]) * labeled, (g0 - mu_g[cell]) * labeled
    # psi = lam * (a - v c) + v b: SE^2 = sum psi^2 / M^2, a quadratic in lam
    d = a - v * c
    s_dd, s_db, s_bb = tot(d * d), tot(d * v * b), tot((v * b) ** 2)
    if lam is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            lam = np.clip(-s_db / s_dd, 0.0, 1.0)
        lam = np.where(s_dd > 0, lam, 0.0)
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (n_cells,))
    theta = lam * mu_f + mu_y - lam * mu_g
    var = np.maximum(lam**2 * s_dd + 2 * lam * s_db + s_bb, 0.0) / m**2
    rect = tot(w0 * (b - lam[cell] * c) ** 2) / wsum
    return theta, var, s_bb / m**2, lam, np.sqrt(rect)


def _combine(theta, var, var_gold, shares, n_groups):
    """Cells (G * H,) -> groups (G,): share-weighted sums (strata independent)."""
    wts = np.tile(shares, n_groups)
    live = wts > 0  # a share-0 stratum adds nothing, even if it is NaN

    def by_group(x, power):
        x = np.where(live, wts**power * x, 0.0)
        return x.reshape(n_groups, -1).sum(axis=1)

    return by_group(theta, 1), by_group(var, 2), by_group(var_gold, 2)


def _effective_n(n_labeled, var_gold, var):
    """``n_labeled * var_gold / var``: gold labels a gold-only interval needs for
    the same width (NaN when the variance is zero)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, np.asarray(n_labeled) * var_gold / var, np.nan)


def _strata_table(design, groups, n_lab, n_unl, theta, se, lam, sd_rect):
    """Per-stratum results, with the Neyman allocation of the next labels."""
    n_groups, n_strata = n_lab.shape
    ws = design.shares * sd_rect.reshape(n_groups, n_strata)
    with np.errstate(invalid="ignore", divide="ignore"):
        neyman = ws / ws.sum(axis=1, keepdims=True)
    frame = pd.DataFrame(
        {
            design.strata.name or "stratum": np.tile(design.strata, n_groups),
            "share": np.tile(design.shares, n_groups),
            "n_labeled": n_lab.reshape(-1),
            "n_unlabeled": n_unl.reshape(-1),
            "estimate": theta,
            "standard_error": se,
            "lam": lam,
            "neyman_share": neyman.reshape(-1),
        }
    )
    if groups is None:
        return frame
    keys = groups.repeat(n_strata).to_frame(index=False)
    return pd.concat([keys, frame], axis=1)
