"""Planning an evaluation: variance components, interval widths, N vs k, sample size.

Seed 000 ("Choosing N and k") writes the variance of a mean score over N inputs
with k runs each as

    Var(Ybar) = (sigma2_B + sigma2_W / k) / N = sigma2 (rho + (1 - rho) / k) / N,

with sigma2_B the variance *between* inputs (data noise: which inputs you
drew), sigma2_W the variance *within* an input (run noise: which run you
drew), sigma2 = sigma2_B + sigma2_W and rho = sigma2_B / sigma2 the
intraclass correlation. Everything in this module follows from that formula:

* :func:`icc` estimates sigma2_B, sigma2_W and rho from a pilot (one-way
  random-effects ANOVA, from 0/1 rows or from a counts table);
* :func:`width_factor`, :func:`predict_width` and :func:`width_table` predict
  (and, for the table, check by subsampling runs) how an interval narrows
  with k: the factor sqrt(rho + (1 - rho) / k) never drops below sqrt(rho);
* :func:`plan` / :func:`plan_from_data` choose N and k for a budget or a
  target width, given the cost of a new input and of one run;
* :func:`sample_size`, :func:`minimum_detectable_effect` and :func:`power`
  (and the ``*_from_data`` forms) size a comparison of two systems.

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
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ._data import (
    as_columns,
    check_columns,
    check_finite,
    check_n_resamples,
    factorize,
)
from ._warnings import DegenerateDataWarning, warn
from .analytic import MCNEMAR_EXACT_BELOW

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

_ALTERNATIVES = ("two-sided", "greater", "less")
#: default upper limit of the automatic ``max_k`` of :func:`plan`
_MAX_K_CAP = 1000


# ============================================================ validation helpers
def _number(x, name, *, low=None, high=None, low_open=False, high_open=False, hint=""):
    """``x`` as a float, checked against ``[low, high]`` (or open ends)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not np.isfinite(x):
        raise ValueError(f"`{name}` must be a finite number{hint}; got {x!r}.")
    x = float(x)
    bad = (low is not None and (x < low or (low_open and x == low))) or (
        high is not None and (x > high or (high_open and x == high))
    )
    if bad:
        lo = "" if low is None else ("(" if low_open else "[") + f"{low:g}"
        hi = "" if high is None else f"{high:g}" + (")" if high_open else "]")
        where = f"in {lo or '(-inf'}, {hi or 'inf)'}"
        raise ValueError(f"`{name}` must be {where}{hint}; got {x!r}.")
    return x


def _integer(x, name, *, low=1, hint=""):
    if (
        isinstance(x, bool)
        or not isinstance(x, numbers.Real)
        or not float(x).is_integer()
        or x < low
    ):
        raise ValueError(f"`{name}` must be an integer >= {low}{hint}; got {x!r}.")
    return int(x)


def _z_two_sided(confidence_level):
    """Normal quantile for a two-sided interval, z = Phi^-1(1/2 + level/2)."""
    level = _number(
        confidence_level,
        "confidence_level",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
        hint=", e.g. 0.95",
    )
    return float(stats.norm.ppf(0.5 + level / 2))


def _check_frame(data):
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"`data` must be a pandas DataFrame, not {type(data).__name__}; for a "
            "DataArray use da.evalci (or evalci.xr.to_frame(da) first)."
        )


@dataclass(frozen=True)
class _Source:
    """Normalised description of where the outcomes are in the table."""

    value: str | None
    cluster: list[str]
    by: list[str]
    system: str | None
    successes: str | None
    trials: str | None

    @property
    def counts(self) -> bool:
        return self.successes is not None


def _source_iv(data, value, cluster, by, system, successes, trials) -> _Source:
    """Validate the table arguments shared by every ``*_from_data`` function."""
    _check_frame(data)
    if (successes is None) != (trials is None):
        raise ValueError(
            "`successes` and `trials` go together: name both count columns, e.g. "
            "successes='n_correct', trials='n_runs'."
        )
    if successes is not None and value is not None:
        raise ValueError(
            "pass either `value` (one row per run) or `successes`/`trials` (one row "
            f"per input with counts), not both; got value={value!r}."
        )
    if successes is None and value is None:
        raise ValueError(
            "`value` is required: name the outcome column (e.g. value='correct'), or "
            "pass successes='n_correct', trials='n_runs' for a counts table."
        )
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"`value` must be a column name (str), not {type(value).__name__}."
        )
    cluster = as_columns(cluster, "cluster", allow_none=True)
    if not cluster:
        raise ValueError(
            "`cluster` is required: name the column that identifies inputs, e.g. "
            "cluster='input_id'."
        )
    by = as_columns(by, "by")
    if system is not None and not isinstance(system, str):
        raise TypeError(
            f"`system` must be a column name (str), not {type(system).__name__}."
        )
    for name, cols in (
        ("value", [value] if value else []),
        ("cluster", cluster),
        ("by", by),
        ("system", [system] if system else []),
        ("successes", [successes] if successes else []),
        ("trials", [trials] if trials else []),
    ):
        check_columns(data, cols, name)
    shared = set(cluster) & (set(by) | ({system} if system else set()))
    if shared:
        raise ValueError(
            f"`cluster` column {sorted(shared)[0]!r} is also a group (`by`/`system`): "
            "variance components need several inputs per group."
        )
    if system is not None and system in by:
        raise ValueError(f"`system` column {system!r} is also in `by`; list it once.")
    return _Source(value, cluster, by, system, successes, trials)


def _outcomes(data, src: _Source):
    """Per-row weights ``n``, sums ``S`` and sums of squares ``Q`` as float arrays.

    For 0/1 outcomes summarised as counts, ``c`` successes out of ``n`` runs
    are sufficient: sum y = sum y^2 = c, so the table is never expanded.
    """
    if src.counts:
        out = []
        for name, col in (("successes", src.successes), ("trials", src.trials)):
            check_finite(data, [col], name)
            x = data[col]
            if not pd.api.types.is_numeric_dtype(x) or x.isna().any():
                raise ValueError(
                    f"`{name}` column {col!r} must hold numbers without missing values."
                )
            x = x.to_numpy(dtype=float)
            if (x < 0).any() or not np.all(x == np.round(x)):
                raise ValueError(
                    f"`{name}` column {col!r} must hold non-negative whole counts."
                )
            out.append(x)
        c, n = out
        if (n < 1).any():
            raise ValueError(
                f"`trials` column {src.trials!r} has {int((n < 1).sum())} rows with no "
                "runs; drop them first."
            )
        if (c > n).any():
            raise ValueError(
                f"`successes` column {src.successes!r} exceeds `trials` "
                f"{src.trials!r} in {int((c > n).sum())} rows."
            )
        return n, c, c
    y = data[src.value]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(
            f"`value` column {src.value!r} is not numeric (dtype {y.dtype}); variance "
            "components need 0/1 correctness or a numeric score."
        )
    if y.isna().any():
        raise ValueError(
            f"`value` column {src.value!r} has {int(y.isna().sum())} missing values; "
            f"drop those rows (df.dropna(subset=[{src.value!r}])) or fill them."
        )
    check_finite(data, [src.value], "value")
    y = y.to_numpy(dtype=float)
    return np.ones_like(y), y, y * y


# ======================================================================= ANOVA
def _anova(g, n, S, Q, n_groups):
    """One-way random-effects ANOVA per group from per-input sufficient statistics.

    ``g`` is the group of each input, ``n`` its number of runs, ``S`` the sum
    and ``Q`` the sum of squares of its outcomes. With N inputs and
    n = sum n_i runs (Searle, Casella & McCulloch 1992, ch. 3):

        SSB = sum S_i^2 / n_i - S^2 / n,   SSW = sum Q_i - sum S_i^2 / n_i,
        MSB = SSB / (N - 1),               MSW = SSW / (n - N),
        k0  = (n - sum n_i^2 / n) / (N - 1),
        sigma2_W = MSW,  sigma2_B = (MSB - MSW) / k0  (unbiased; may be < 0).
    """

    def total(w):
        return np.bincount(g, weights=w, minlength=n_groups)

    n_inputs = np.bincount(g, minlength=n_groups).astype(float)
    ntot, stot = total(n), total(S)
    means = S / n
    ss_means = total(S * means)
    with np.errstate(divide="ignore", invalid="ignore"):
        ssb = np.maximum(ss_means - stot**2 / ntot, 0.0)
        ssw = np.maximum(total(Q) - ss_means, 0.0)  # rounding can dip below 0
        dfb, dfw = n_inputs - 1, ntot - n_inputs
        msb = np.where(dfb > 0, ssb / dfb, np.nan)
        msw = np.where(dfw > 0, ssw / dfw, np.nan)
        k0 = np.where(dfb > 0, (ntot - total(n * n) / ntot) / dfb, np.nan)
        sb_raw = (msb - msw) / k0
        mean = total(means) / n_inputs
    return dict(
        msb=msb,
        msw=msw,
        k0=k0,
        sb_raw=sb_raw,
        n_inputs=n_inputs,
        mean_k=ntot / n_inputs,
        n_runs=ntot,
        mean=mean,
    )


def _finish(parts):
    """Add clamped sigma2_B and both versions of rho to an ANOVA dict."""
    sb_raw, sw = parts["sb_raw"], parts["msw"]
    with np.errstate(divide="ignore", invalid="ignore"):
        sb = np.maximum(sb_raw, 0.0)
        tot_raw = sb_raw + sw
        rho_raw = np.where(tot_raw != 0, sb_raw / tot_raw, np.nan)
        rho = np.where(sb + sw > 0, sb / (sb + sw), np.nan)
    return {
        "msb": parts["msb"],
        "msw": sw,
        "sigma2_between": sb,
        "sigma2_within": sw,
        "rho_raw": rho_raw,
        "rho": rho,
        "n_inputs": parts["n_inputs"].astype(np.int64),
        "mean_k": parts["mean_k"],
        "k0": parts["k0"],
        "sigma2_between_raw": sb_raw,
        "mean": parts["mean"],
        "n_runs": parts["n_runs"],
    }


_ICC_COLUMNS = [
    "msb",
    "msw",
    "sigma2_between",
    "sigma2_within",
    "rho_raw",
    "rho",
    "n_inputs",
    "mean_k",
    "k0",
    "sigma2_between_raw",
    "mean",
    "n_runs",
]


def _mean_difference(ga, na, Sa, Qa, nb, Sb, Qb, n_groups):
    """Components of the per-run difference b - a when runs cannot be matched.

    Per input i, D_i = mean_b,i - mean_a,i has variance
    sigma2_B,d + sigma2_W,a / k_a,i + sigma2_W,b / k_b,i, and for independent
    D_i with a common mean the sample variance s_D^2 has expectation
    mean_i Var(D_i). Hence (a method-of-moments estimator)

        sigma2_W,d = MSW_a + MSW_b,
        sigma2_B,d = s_D^2 - mean_i (MSW_a / k_a,i + MSW_b / k_b,i).

    It is reported in ANOVA form with k_eff = sigma2_W,d / mean_i(...),
    MSB = k_eff s_D^2 and MSW = sigma2_W,d, so sigma2_B = (MSB - MSW) / k0
    still holds with k0 = k_eff (k_eff = k for balanced data).
    """
    pa, pb = _anova(ga, na, Sa, Qa, n_groups), _anova(ga, nb, Sb, Qb, n_groups)
    msw_a, msw_b = pa["msw"], pb["msw"]
    d = Sb / nb - Sa / na
    n_inputs = np.bincount(ga, minlength=n_groups).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        dbar = np.bincount(ga, weights=d, minlength=n_groups) / n_inputs
        s2d = np.bincount(ga, weights=(d - dbar[ga]) ** 2, minlength=n_groups) / (
            n_inputs - 1
        )
        vbar = (
            np.bincount(ga, weights=msw_a[ga] / na + msw_b[ga] / nb, minlength=n_groups)
            / n_inputs
        )
        sw = msw_a + msw_b
        # k_eff; with no run noise at all, fall back to the harmonic-type mean
        kh = n_inputs / np.bincount(
            ga, weights=(1 / na + 1 / nb) / 2, minlength=n_groups
        )
        k_eff = np.where(vbar > 0, sw / vbar, kh)
        sb_raw = s2d - vbar
    return dict(
        msb=k_eff * s2d,
        msw=sw,
        k0=k_eff,
        sb_raw=sb_raw,
        n_inputs=n_inputs,
        mean_k=np.bincount(ga, weights=(na + nb) / 2, minlength=n_groups) / n_inputs,
        n_runs=np.bincount(ga, weights=(na + nb) / 2, minlength=n_groups),
        mean=dbar,
    )


def _group_frame(by_index, by_codes, by_cols):
    """Group columns for rows with by-codes ``by_codes``."""
    if not by_cols:
        return pd.DataFrame(index=range(len(by_codes)))
    keys = (
        by_index.to_frame(index=False)
        if isinstance(by_index, pd.MultiIndex)
        else pd.DataFrame({by_cols[0]: by_index})
    )
    return keys.iloc[by_codes].reset_index(drop=True)


def _warn_degenerate(frame, label_cols):
    bad_rep = frame["msw"].isna() | (frame["n_inputs"] < 2)
    bad_var = ~bad_rep & frame["rho"].isna()

    def names(mask):
        if not label_cols:
            return "the data"
        rows = frame.loc[mask, label_cols].astype(str).agg(" / ".join, axis=1)
        shown = ", ".join(repr(r) for r in rows.iloc[:5])
        return shown + (", ..." if mask.sum() > 5 else "")

    if bad_rep.any():
        warn(
            f"{names(bad_rep)}: fewer than 2 inputs, or one run per input, so the "
            "within-input (run) variance and rho cannot be estimated (NaN). Run "
            "some inputs at least twice.",
            DegenerateDataWarning,
        )
    if bad_var.any():
        warn(
            f"{names(bad_var)}: every outcome is the same (no variance at all), so "
            "rho is undefined (NaN).",
            DegenerateDataWarning,
        )


def icc(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    by=None,
    system: str | None = None,
    pairs=None,
    successes: str | None = None,
    trials: str | None = None,
    run: str | None = "run",
) -> pd.DataFrame:
    """Variance components and intraclass correlation of per-input outcomes.

    A one-way random-effects ANOVA with inputs as the random factor (seed
    000, "Estimating rho"): the between- and within-input mean squares MSB and
    MSW give the run noise sigma2_W = MSW and the data noise
    sigma2_B = (MSB - MSW) / k0, with k0 = (sum k_i - sum k_i^2 / sum k_i) /
    (N - 1) for unequal numbers of runs k_i (k0 = k when balanced), and
    rho = sigma2_B / (sigma2_B + sigma2_W).

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table: one row per run (``value``), or one row per input with
        counts (``successes``/``trials``). Never modified.
    value : str, optional
        Outcome column (0/1 correctness or a numeric score).
    cluster : str or list of str
        Column(s) identifying the input.
    by : str or list of str, optional
        One row of components per group (e.g. subject).
    system : str, optional
        Column naming the system: one row per system (within ``by`` groups).
        Needed for ``pairs``.
    pairs : list of (a, b) tuples or "all", optional
        Also estimate the components of the per-run paired difference
        ``b - a`` (seed 000 did this for CoT - Direct Answer). ``"all"`` takes
        every pair ``a < b`` in sorted order. Only inputs run by both systems
        are used. See Notes for how runs are paired.
    successes, trials : str, optional
        A counts table of 0/1 outcomes: ``successes`` correct out of
        ``trials`` runs per (input, system) row, e.g.
        ``successes="n_correct", trials="n_runs"``. The counts are the
        sufficient statistics (sum y = sum y^2 = c) and the result is
        identical to the expanded 0/1 rows.
    run : str or None
        Column of run numbers used to match the runs of two systems in
        ``pairs`` (default ``"run"``, ignored if absent). ``None`` always uses
        the difference of per-input means.

    Returns
    -------
    pandas.DataFrame
        One row per group (``by`` x ``system``, then one per pair; group
        columns first), with columns ``msb, msw``: the mean squares;
        ``sigma2_between``: sigma2_B clamped at 0 (use it for planning);
        ``sigma2_within``: sigma2_W; ``rho_raw``: the unclamped ANOVA estimate
        (may be negative); ``rho``: clamped at 0, as seed 000 reports it;
        ``n_inputs``: N; ``mean_k``: mean runs per input; ``k0``; and
        ``sigma2_between_raw``, ``mean`` (mean of the per-input means: the
        score with each input counting equally), ``n_runs``. With ``pairs``
        there are also ``kind`` ('system' or 'difference') and ``method``
        ('anova', 'matched_runs' or 'mean_difference'); a difference row's
        ``system`` is ``"b - a"``.

    Warns
    -----
    DegenerateDataWarning
        For a group with one run per input, fewer than 2 inputs, or no
        variance at all (its components are NaN). If no group can be
        estimated at all, ``ValueError`` is raised instead.

    Notes
    -----
    *The clamped estimate is biased upward* at small N x k: when the truth is
    near 0 the raw estimate is negative about half the time and clamping
    moves those to 0 (PAPER-NOTES: mean 0.043 against a true 0.025 at N=200,
    k=2, with 38% of data sets clamped). Look at ``rho_raw`` beside ``rho``.

    *Pairs.* With one row per run and a ``run`` column, the runs of the two
    systems are matched by run number within an input (same input, same run
    number), provided every common input has the same set of run numbers in
    both systems and no run number repeats; the ANOVA is then done on the
    differences d_ij = y_b,ij - y_a,ij (``method="matched_runs"``). Run
    numbers are arbitrary labels: under seed 000's assumption that runs are
    independent given the input, any matching estimates the same quantities.
    Otherwise (counts tables, no ``run`` column, unequal run sets) the
    difference of per-input means is used (``method="mean_difference"``):
    sigma2_W of the difference is MSW_a + MSW_b and sigma2_B is the variance of
    the per-input mean differences minus its run-noise part (see
    ``_mean_difference``).

    References
    ----------
    Searle, S. R., Casella, G., & McCulloch, C. E. (1992). *Variance
    Components*, ch. 3 (the one-way classification; unbalanced data and
    k0). Wiley.

    Examples
    --------
    >>> import evalci
    >>> from evalci import planning
    >>> df = evalci.load_example()                  # 198 inputs x 5 runs x 2 systems
    >>> est = planning.icc(df, "correct", "input_id", system="system", pairs="all")
    >>> est[["kind", "method", "rho", "sigma2_between", "sigma2_within"]].round(3)
             kind        method    rho  sigma2_between  sigma2_within
    0      system         anova  0.607           0.134          0.086
    1      system         anova  0.666           0.158          0.079
    2  difference  matched_runs  0.408           0.119          0.172
    >>> est.system.iloc[2]
    'openai/gpt-5.4-mini-2026-03-17 - openai/gpt-5-nano-2025-08-07'

    A counts table gives the same components as its expanded rows:

    >>> counts = (df.groupby(["input_id", "system"], as_index=False)
    ...             .agg(n_correct=("correct", "sum"), n_runs=("correct", "size")))
    >>> c = planning.icc(counts, cluster="input_id", system="system",
    ...                  successes="n_correct", trials="n_runs")
    >>> import numpy as np
    >>> bool(np.allclose(c.rho, est.rho[:2]))
    True
    """
    src = _source_iv(data, value, cluster, by, system, successes, trials)
    if pairs is not None and system is None:
        raise ValueError(
            "`pairs` needs `system=`: name the column whose values the pairs refer "
            "to, e.g. system='system', pairs=[('direct', 'cot')]."
        )
    n, S, Q = _outcomes(data, src)
    b_codes, b_index = (
        factorize(data, src.by, "by")
        if src.by
        else (np.zeros(len(data), np.int64), None)
    )
    s_codes, s_index = (
        factorize(data, [src.system], "system")
        if src.system
        else (np.zeros(len(data), np.int64), None)
    )
    c_codes, c_index = factorize(data, src.cluster, "cluster")
    nb = 1 if b_index is None else len(b_index)
    ns = 1 if s_index is None else len(s_index)
    nc = len(c_index)
    grp = b_codes * ns + s_codes
    shift = np.zeros(nb * ns)
    if not src.counts:
        # centre within the group first: the mean squares are invariant to a
        # shift, and sums of squares of large scores then lose no precision
        shift = np.bincount(grp, weights=S, minlength=nb * ns) / np.maximum(
            np.bincount(grp, minlength=nb * ns), 1
        )
        S = S - shift[grp]
        Q = S * S
    cell = grp * nc + c_codes
    ucell, inv = np.unique(cell, return_inverse=True)
    cn = np.bincount(inv, weights=n)
    cS = np.bincount(inv, weights=S)
    cQ = np.bincount(inv, weights=Q)
    cg = ucell // nc
    parts = _anova(cg, cn, cS, cQ, nb * ns)
    parts["mean"] = parts["mean"] + shift  # undo the centring in the reported mean
    res = _finish(parts)
    present = np.flatnonzero(parts["n_inputs"] > 0)
    out = pd.DataFrame({k: v[present] for k, v in res.items()})
    label_cols = list(src.by)
    pieces = [_group_frame(b_index, present // ns, src.by)]
    if src.system:
        pieces.append(pd.DataFrame({src.system: s_index[present % ns]}))
        label_cols.append(src.system)
    out = pd.concat([*pieces, out], axis=1)
    order_b = present // ns

    if pairs is not None:
        pair_list = _pairs_iv(pairs, s_index, src.system)
        out.insert(len(label_cols), "kind", "system")
        out.insert(len(label_cols) + 1, "method", "anova")
        rows, order = [out], [order_b * (len(pair_list) + 1)]
        for j, (a, b) in enumerate(pair_list):
            sa, sb = s_index.get_loc(a), s_index.get_loc(b)
            offset = shift.reshape(nb, ns)[:, sb] - shift.reshape(nb, ns)[:, sa]
            piece, b_present = _pair_components(
                data, src, run, S, n, b_codes, s_codes, c_codes, nb, nc, sa, sb, offset
            )
            if piece is None:
                continue
            frame = pd.concat([_group_frame(b_index, b_present, src.by), piece], axis=1)
            frame.insert(len(src.by), src.system, f"{b} - {a}")
            frame.insert(len(src.by) + 1, "kind", "difference")
            rows.append(frame)
            order.append(b_present * (len(pair_list) + 1) + j + 1)
        out = pd.concat(rows, ignore_index=True)
        out = out.iloc[np.argsort(np.concatenate(order), kind="stable")].reset_index(
            drop=True
        )
    estimable = out["msw"].notna() & (out["n_inputs"] >= 2)
    if not estimable.any():
        raise ValueError(
            f"`cluster` {src.cluster}: no group has 2+ inputs with 2+ runs each, so "
            "the run (within-input) variance and rho cannot be estimated; icc needs "
            "repeated runs of at least some inputs (k >= 2)."
        )
    _warn_degenerate(out, label_cols)
    return out


def _pairs_iv(pairs, s_index, system):
    systems = list(s_index)
    if isinstance(pairs, str):
        if pairs != "all":
            raise ValueError(
                f"`pairs` must be 'all' or a list of (a, b) tuples; got {pairs!r}."
            )
        return [
            (systems[i], systems[j])
            for i in range(len(systems))
            for j in range(i + 1, len(systems))
        ]
    try:
        out = [tuple(p) for p in pairs]
    except TypeError:
        raise ValueError(
            f"`pairs` must be 'all' or a list of (a, b) tuples; got {pairs!r}."
        ) from None
    for p in out:
        if len(p) != 2:
            raise ValueError(f"`pairs`: each pair must be (a, b); got {p!r}.")
        for s in p:
            if s not in s_index:
                shown = ", ".join(map(repr, systems[:10]))
                raise ValueError(
                    f"`pairs`: system {s!r} is not in column {system!r}; available: "
                    f"{shown}."
                )
        if p[0] == p[1]:
            raise ValueError(f"`pairs`: a pair needs two different systems; got {p!r}.")
    return out


def _pair_components(
    data, src, run, y, n, b_codes, s_codes, c_codes, nb, nc, sa, sb, offset
):
    """Components of b - a per by-group: a DataFrame and the by-codes present.

    ``y`` is centred per (by, system) for rows (sums of counts otherwise);
    ``offset[g]`` (shift of b minus shift of a) restores the mean difference.
    """
    ma, mb = s_codes == sa, s_codes == sb
    method = "mean_difference"
    if not src.counts and run is not None and run in data.columns:
        r_codes, r_index = factorize(data, [run], "run")
        nr = len(r_index)
        key = (b_codes * nc + c_codes) * nr + r_codes
        ka, kb = key[ma], key[mb]
        common = np.intersect1d(ka // nr, kb // nr)
        ia = np.isin(ka // nr, common)
        ib = np.isin(kb // nr, common)
        oa = np.argsort(ka[ia], kind="stable")
        ob = np.argsort(kb[ib], kind="stable")
        ka_s, kb_s = ka[ia][oa], kb[ib][ob]
        if (
            len(ka_s) == len(kb_s)
            and np.array_equal(ka_s, kb_s)
            and not (np.diff(ka_s) == 0).any()
        ):
            method = "matched_runs"
            d = y[mb][ib][ob] - y[ma][ia][oa]
            cell = ka_s // nr
            ucell, inv = np.unique(cell, return_inverse=True)
            cn = np.bincount(inv).astype(float)
            cS = np.bincount(inv, weights=d)
            cQ = np.bincount(inv, weights=d * d)
            parts = _anova(ucell // nc, cn, cS, cQ, nb)
    if method == "mean_difference":
        cell_a = b_codes[ma] * nc + c_codes[ma]
        cell_b = b_codes[mb] * nc + c_codes[mb]
        common = np.intersect1d(cell_a, cell_b)
        stats_ = []
        for m, cell_x in ((ma, cell_a), (mb, cell_b)):
            keep = np.isin(cell_x, common)
            pos = np.searchsorted(common, cell_x[keep])
            w = n[m][keep]
            yy = y[m][keep]
            if src.counts:
                sums = (w, yy, yy)
            else:
                sums = (w, yy, yy * yy)
            stats_.append(
                [np.bincount(pos, weights=s, minlength=len(common)) for s in sums]
            )
        (na, Sa, Qa), (nb_, Sb, Qb) = stats_
        parts = _mean_difference(common // nc, na, Sa, Qa, nb_, Sb, Qb, nb)
    parts["mean"] = parts["mean"] + offset
    res = _finish(parts)
    present = np.flatnonzero(parts["n_inputs"] > 0)
    if len(present) == 0:
        return None, None
    frame = pd.DataFrame({k: v[present] for k, v in res.items()})
    frame.insert(0, "method", method)
    return frame, present


# ================================================================ widths
def _as_float_array(x, name, *, low, low_open, high=None, hint=""):
    try:
        raw = np.asarray(x)
        ok = raw.dtype.kind in "iuf"  # not str ("0.5" would convert), bool, object
        arr = raw.astype(float) if ok else None
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(
            f"`{name}` must be a number or an array of numbers{hint}; got {x!r}."
        )
    bad = ~np.isfinite(arr) | (arr < low) | (low_open & (arr == low))
    if high is not None:
        bad |= arr > high
    if bad.any():
        first = arr[bad].reshape(-1)[0]
        rng = f"{'(' if low_open else '['}{low:g}, {'inf)' if high is None else f'{high:g}]'}"
        raise ValueError(f"`{name}` must be in {rng}{hint}; got {first!r}.")
    return arr


def _scalar_or_array(arr):
    return float(arr) if np.ndim(arr) == 0 else arr


def width_factor(rho, k):
    """Interval width with k runs per input relative to one run: sqrt(rho + (1 - rho)/k).

    Seed 000 ("Choosing N and k"): the standard error of a mean over N inputs
    x k runs is sigma sqrt((rho + (1 - rho) / k) / N), so going from 1 run to
    k runs multiplies the width by this factor. It falls quickly at first and
    never below sqrt(rho): runs remove run noise, not data noise.

    Parameters
    ----------
    rho : float or array_like
        Intraclass correlation, in [0, 1] (e.g. ``icc(...).rho``).
    k : float or array_like
        Runs per input, >= 1. Broadcasts against ``rho``.

    Returns
    -------
    float or ndarray

    Examples
    --------
    Seed 000's simulation model (rho = 0.025065, PAPER-NOTES):

    >>> from evalci import planning
    >>> planning.width_factor(0.025065, [2, 3, 5]).round(3).tolist()
    [0.716, 0.592, 0.469]
    >>> round(planning.width_factor(0.025065, 1e9), 3)   # the sqrt(rho) floor
    0.158
    """
    r = _as_float_array(
        rho, "rho", low=0, low_open=False, high=1, hint=" (an intraclass correlation)"
    )
    kk = _as_float_array(k, "k", low=1, low_open=False, hint=" (runs per input)")
    return _scalar_or_array(np.sqrt(r + (1 - r) / kk))


def predict_width(sigma2_between, sigma2_within, n_inputs, k, confidence_level=0.95):
    """Normal-approximation width of the interval for a mean over N inputs x k runs.

    ``2 z sqrt((sigma2_B + sigma2_W / k) / N)`` with ``z`` the two-sided normal
    quantile (1.96 for 95%). For accuracy the cluster bootstrap's percentile
    interval has about this width (seed 000: 0.0592 against 0.0594 at N=200,
    k=5).

    Parameters
    ----------
    sigma2_between, sigma2_within : float or array_like
        Variance components, >= 0 (``icc(...)`` columns of the same names).
    n_inputs : float or array_like
        Number of inputs N, > 0.
    k : float or array_like
        Runs per input, >= 1.
    confidence_level : float
        In (0, 1).

    Returns
    -------
    float or ndarray
        Broadcast over the array arguments.

    Examples
    --------
    Seed 000's model at N = 200 (paper: cluster bootstrap widths 0.1266 at
    k=1, 0.0592 at k=5):

    >>> from evalci import planning
    >>> planning.predict_width(0.0052637, 0.2047363, 200, [1, 5]).round(4).tolist()
    [0.127, 0.0596]
    """
    z = _z_two_sided(confidence_level)
    sb = _as_float_array(sigma2_between, "sigma2_between", low=0, low_open=False)
    sw = _as_float_array(sigma2_within, "sigma2_within", low=0, low_open=False)
    n = _as_float_array(n_inputs, "n_inputs", low=0, low_open=True)
    kk = _as_float_array(k, "k", low=1, low_open=False, hint=" (runs per input)")
    return _scalar_or_array(2 * z * np.sqrt((sb + sw / kk) / n))


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
    1  2              0.71             0.73
    2  3              0.59             0.57
    3  5              0.47             0.44

    (One data set of 400 inputs: the observed factors scatter by a few
    hundredths around the prediction; seed 000 averaged 2,000 of them.)
    """
    from .core import cluster_ci  # local: core imports nothing from here
    from .resampling import seed_sequence

    src = _source_iv(data, value, cluster, by, None, successes, trials)
    check_n_resamples(n_resamples)
    _z_two_sided(confidence_level)
    comp = icc(
        data,
        src.value,
        src.cluster,
        by=src.by or None,
        successes=src.successes,
        trials=src.trials,
    )
    b_codes, b_index = (
        factorize(data, src.by, "by")
        if src.by
        else (np.zeros(len(data), np.int64), None)
    )
    c_codes, _ = factorize(data, src.cluster, "cluster")
    n, _, _ = _outcomes(data, src)
    nb = 1 if b_index is None else len(b_index)
    nc = int(c_codes.max()) + 1
    cell = b_codes * nc + c_codes
    ucell, inv = np.unique(cell, return_inverse=True)
    k_cell = np.bincount(inv, weights=n)
    k_min = np.full(nb, np.inf)
    np.minimum.at(k_min, ucell // nc, k_cell)
    present = np.flatnonzero(np.isfinite(k_min))
    if ks is None:
        ks = np.arange(1, int(min(k_min[present].max(), 10)) + 1)
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
    ks = np.unique(np.r_[1, ks.astype(np.int64)])
    group = _group_frame(b_index, present, src.by)
    # comp rows are in by-code order, one per present group
    rho = comp["rho"].to_numpy()
    sb, sw = comp["sigma2_between"].to_numpy(), comp["sigma2_within"].to_numpy()
    nn = comp["n_inputs"].to_numpy()
    z = _z_two_sided(confidence_level)
    G, K = len(present), len(ks)
    table = pd.concat(
        [
            group.loc[np.repeat(np.arange(G), K)].reset_index(drop=True),
            pd.DataFrame({"k": np.tile(ks, G)}),
        ],
        axis=1,
    )
    rr = np.repeat(rho, K)
    with np.errstate(invalid="ignore"):
        table["rho"] = rr
        table["predicted_factor"] = np.sqrt(rr + (1 - rr) / table["k"].to_numpy())
        table["predicted_width"] = (
            2
            * z
            * np.sqrt(
                (np.repeat(sb, K) + np.repeat(sw, K) / table["k"].to_numpy())
                / np.repeat(nn, K)
            )
        )
    if not observed:
        return table
    root = seed_sequence(rng)
    order_seed, boot_seed = root.spawn(2)
    boot_int = int(boot_seed.generate_state(1)[0])
    k_obs = int(min(ks.max(), k_min[present].max()))
    gb, gc, rank, y = _subsample(data, src, b_codes, c_codes, k_obs, order_seed)
    widths = np.full((G, K), np.nan)
    pos = np.full(nb, -1)
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
    table["observed_width"] = widths.reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        table["observed_factor"] = (widths / widths[:, :1]).reshape(-1)
    return table


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
    cost_input, cost_run, budget, target_width, n_inputs, max_k, level, data=False
):
    """Validate the design arguments of :func:`plan` (``n_inputs="data"`` if ``data``).

    Returns ``z, budget, target_width, n_inputs, cost_input, cost_run,
    max_k`` as numbers (``n_inputs`` stays ``"data"`` when given so).
    """
    z = _z_two_sided(level)
    if (budget is None) == (target_width is None):
        raise ValueError(
            "give exactly one of `budget` (minimise the width) or `target_width` "
            "(minimise the cost)."
        )
    if budget is not None:
        budget = _number(budget, "budget", low=0, low_open=True)
    if target_width is not None:
        target_width = _number(
            target_width,
            "target_width",
            low=0,
            low_open=True,
            hint=" (high - low, e.g. 0.05)",
        )
    fixed = n_inputs is not None
    if fixed and not (data and isinstance(n_inputs, str) and n_inputs == "data"):
        n_inputs = _integer(n_inputs, "n_inputs", low=2)
    if cost_input is not None:
        cost_input = _number(cost_input, "cost_input", low=0)
    if cost_run is not None:
        cost_run = _number(cost_run, "cost_run", low=0, low_open=True)
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
        max_k = _integer(max_k, "max_k", low=1)
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
    sb = _number(
        sigma2_between,
        "sigma2_between",
        low=0,
        hint=" (a variance; use icc(...).sigma2_between)",
    )
    sw = _number(
        sigma2_within,
        "sigma2_within",
        low=0,
        hint=" (a variance; use icc(...).sigma2_within)",
    )
    if sb + sw == 0:
        raise ValueError(
            "`sigma2_between` and `sigma2_within` are both 0: with no variance "
            "every design gives a zero-width interval; nothing to plan."
        )
    z, budget, target_width, n_inputs, cost_input, cost_run, max_k = _plan_iv(
        cost_input, cost_run, budget, target_width, n_inputs, max_k, confidence_level
    )
    fixed = n_inputs is not None
    rho = sb / (sb + sw)
    ci = 0.0 if cost_input is None else cost_input
    cr = np.nan if cost_run is None else cost_run
    eps = 1e-9
    notes = []

    if not fixed:
        if sb == 0:
            k_star = np.inf
        else:
            k_star = math.sqrt(sw * ci / (sb * cr))
        if max_k is None:
            max_k = (
                100
                if not np.isfinite(k_star)
                else int(min(max(10, math.ceil(k_star) + 1), _MAX_K_CAP))
            )
        ks = np.arange(1, max_k + 1)
        var_k = sb + sw / ks
        per_input = ci + ks * cr
        if budget is not None:
            nn = np.floor(budget / per_input + eps)
            feasible = nn >= 2
            with np.errstate(divide="ignore", invalid="ignore"):
                width = np.where(feasible, 2 * z * np.sqrt(var_k / nn), np.nan)
            cost = nn * per_input
            best = int(np.nanargmin(width)) if feasible.any() else None
            if best is None:
                notes.append(
                    f"the budget {budget:g} buys fewer than 2 inputs even with one run "
                    f"each (one input with one run costs {ci + cr:g})."
                )
        else:
            vt = (target_width / (2 * z)) ** 2
            nn = np.maximum(2, np.ceil(var_k / vt - eps))
            width = 2 * z * np.sqrt(var_k / nn)
            cost = nn * per_input
            feasible = np.ones(len(ks), bool)
            best = int(np.lexsort((width, cost))[0])
        if best is not None:
            kb = int(ks[best])
            if np.isfinite(k_star):
                nbrs = {max(1, math.floor(k_star)), max(1, math.ceil(k_star))}
                if k_star > max_k:
                    notes.append(
                        f"k* = {k_star:.3g} is beyond max_k = {max_k}; k capped."
                    )
                elif kb not in nbrs:
                    nb_ = [j - 1 for j in nbrs if j <= max_k]
                    crit = width if budget is not None else cost
                    alt = min(nb_, key=lambda j: crit[j])
                    gain = crit[alt] / crit[best] - 1
                    what = "width" if budget is not None else "cost"
                    notes.append(
                        f"k = {kb} rather than k = {alt + 1} (next to k* = "
                        f"{k_star:.3g}): with whole inputs it has a {gain:.2%} "
                        f"smaller {what}."
                    )
            else:
                notes.append(
                    "sigma2_between = 0: no data noise was estimated, so every run "
                    f"is worth a new input at a lower cost; k capped at max_k = {max_k}."
                )
        floor_width = 0.0
    else:
        k_star = np.nan
        nn_fixed = float(n_inputs)
        floor_width = 2 * z * math.sqrt(sb / nn_fixed)
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
                k_need = max(1, math.ceil(sw / (nn_fixed * vt - sb) - eps))
            if max_k is None:
                max_k = int(min(max(10, k_need or 10), _MAX_K_CAP))
            ks = np.arange(1, max_k + 1)
            width = 2 * z * np.sqrt((sb + sw / ks) / nn_fixed)
            feasible = width <= target_width * (1 + eps)
            if k_need is not None and k_need > max_k:
                notes.append(
                    f"the target needs k = {k_need} runs per input, beyond max_k = "
                    f"{max_k}; raise max_k."
                )
                k_need = None
            best = None if k_need is None else k_need - 1
        else:
            k_aff = math.floor((budget / nn_fixed - ci) / cr + eps)
            if max_k is None:
                max_k = int(min(max(10, k_aff), _MAX_K_CAP))
            ks = np.arange(1, max_k + 1)
            width = 2 * z * np.sqrt((sb + sw / ks) / nn_fixed)
            feasible = nn_fixed * (ci + ks * cr) <= budget * (1 + eps)
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
        cost = nn * (ci + ks * cr)
        if best is not None and best < len(ks):
            gap = width[best] / floor_width if floor_width > 0 else np.inf
            if gap < 1.05:
                notes.append(
                    f"the width is within 5% of the floor {floor_width:.4g}: more runs "
                    "barely help; only more inputs would."
                )
    best_mask = np.zeros(len(ks), bool)
    if best is not None:
        best_mask[best] = True
    alternatives = pd.DataFrame(
        {
            "k": ks,
            "n_inputs": nn.astype(np.int64),
            "runs": (nn * ks).astype(np.int64),
            "width": width,
            "cost": cost,
            "feasible": np.asarray(feasible, bool),
            "best": best_mask,
        }
    )
    if best is None:
        rec = dict(
            n_inputs=n_inputs if fixed else None,
            k=None,
            width=np.nan,
            cost=np.nan,
            feasible=False,
        )
    else:
        rec = dict(
            n_inputs=int(nn[best]),
            k=int(ks[best]),
            width=float(width[best]),
            cost=float(cost[best]),
            feasible=True,
        )
    return Plan(
        **rec,
        objective="budget" if budget is not None else "target_width",
        k_star=float(k_star),
        floor_width=float(floor_width),
        sigma2_between=sb,
        sigma2_within=sw,
        rho=rho,
        cost_input=cost_input,
        cost_run=cost_run,
        budget=budget,
        target_width=target_width,
        confidence_level=float(confidence_level),
        fixed_n_inputs=fixed,
        note=" ".join(notes),
        alternatives=alternatives,
    )


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
    # every argument checked before the pilot is read (and for groups left out)
    _plan_iv(
        cost_input,
        cost_run,
        budget,
        target_width,
        n_inputs,
        max_k,
        confidence_level,
        data=True,
    )
    comp = icc(
        data,
        src.value,
        src.cluster,
        by=src.by or None,
        successes=src.successes,
        trials=src.trials,
    )
    kwargs = dict(
        cost_input=cost_input,
        cost_run=cost_run,
        budget=budget,
        target_width=target_width,
        max_k=max_k,
        confidence_level=confidence_level,
    )

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


# ========================================================= power and sample size
def _z_alpha(alpha, alternative):
    alpha = _number(
        alpha, "alpha", low=0, high=1, low_open=True, high_open=True, hint=", e.g. 0.05"
    )
    if alternative not in _ALTERNATIVES:
        raise ValueError(
            f"`alternative` must be one of {_ALTERNATIVES}, not {alternative!r}."
        )
    q = alpha / 2 if alternative == "two-sided" else alpha
    return float(stats.norm.ppf(1 - q))


def _z_power(pw):
    pw = _number(
        pw, "power", low=0, high=1, low_open=True, high_open=True, hint=", e.g. 0.8"
    )
    return float(stats.norm.ppf(pw))


def _design_effect(k, rho):
    """rho + (1 - rho) / k: the variance of a k-run input mean over one run's."""
    k = _number(k, "k", low=1, hint=" (runs per input)")
    if k == 1:
        return 1.0
    if rho is None:
        raise ValueError(
            f"`rho` is required with k = {k:g} runs per input: the variance of a "
            "k-run mean is sigma2 (rho + (1 - rho) / k); estimate rho with icc(...) "
            "on a pilot, or pass rho=0 if runs are truly independent."
        )
    rho = _number(rho, "rho", low=0, high=1, hint=" (an intraclass correlation)")
    return rho + (1 - rho) / k


def _paired_iv(paired, discordance, sd_diff):
    if not paired:
        if discordance is not None or sd_diff is not None:
            raise ValueError(
                "`discordance` and `sd_diff` describe a paired design (both systems "
                "on the same inputs); pass paired=True."
            )
        return None, None
    if (discordance is None) == (sd_diff is None):
        raise ValueError(
            "paired=True needs exactly one of `discordance` (share of inputs where "
            "the two systems disagree, McNemar) or `sd_diff` (SD of the per-input "
            "difference b - a)."
        )
    if discordance is not None:
        discordance = _number(
            discordance,
            "discordance",
            low=0,
            high=1,
            low_open=True,
            hint=" (a share of inputs)",
        )
    if sd_diff is not None:
        sd_diff = _number(sd_diff, "sd_diff", low=0, low_open=True)
    return discordance, sd_diff


def _proportion(p, name):
    return _number(
        p, name, low=0, high=1, low_open=True, high_open=True, hint=" (an accuracy)"
    )


def _variances(p1, p2, discordance, sd_diff, paired, deff):
    """Per-input variance of the difference under H0 and under H1, times deff."""
    delta = p2 - p1
    if not paired:
        v = (p1 * (1 - p1) + p2 * (1 - p2)) * deff
        return v, v
    if discordance is not None:
        # Connor (1987): discordant share psi; Var under H0 psi, under H1 psi - delta^2
        return discordance * deff, (discordance - delta**2) * deff
    return sd_diff**2 * deff, sd_diff**2 * deff


def _check_discordance(p1, p2, psi):
    delta = p2 - p1
    if psi < abs(delta) - 1e-12:  # rounding: 0.8 - 0.5 > 0.3
        raise ValueError(
            f"`discordance` = {psi:g} is smaller than |p2 - p1| = {abs(delta):g}: the "
            "systems must disagree on at least that share of inputs."
        )
    # p01 = share where only b is right, p10 = only a: bounded by the margins
    p01, p10 = (psi + delta) / 2, (psi - delta) / 2
    if p01 > min(p2, 1 - p1) + 1e-12 or p10 > min(p1, 1 - p2) + 1e-12:
        raise ValueError(
            f"`discordance` = {psi:g} is impossible with accuracies p1 = {p1:g} and "
            f"p2 = {p2:g}: too many disagreements for those margins."
        )


def _direction_iv(delta, alternative):
    if alternative == "greater" and delta <= 0:
        raise ValueError(
            "alternative='greater' tests p2 > p1, but p2 - p1 = "
            f"{delta:g}; swap p1 and p2 or use alternative='less'."
        )
    if alternative == "less" and delta >= 0:
        raise ValueError(
            "alternative='less' tests p2 < p1, but p2 - p1 = "
            f"{delta:g}; swap p1 and p2 or use alternative='greater'."
        )


# ---------------------------------------------- McNemar's test as evalci runs it
def _mcnemar_upper(m, alpha):
    """Per number of discordant inputs m: the smallest n01 > m/2 that rejects.

    ``evalci.mcnemar``'s default rule (``exact=None``) at level ``alpha``
    (reject when the p-value is <= alpha): below ``MCNEMAR_EXACT_BELOW``
    discordant inputs the two-sided binomial test with p = 1/2, whose p-value
    at n01 = x > m/2 is min(1, 2 P(K >= x)), K ~ Binomial(m, 1/2); from there
    on the continuity-corrected chi-squared (|n01 - n10| - 1)^2 / m, which
    rejects from x >= (m + 1 + sqrt(m chi2_(1, alpha))) / 2. Both rules are
    symmetric: n01 <= m - u(m) rejects too. ``m + 1`` where nothing rejects.
    """
    m = np.asarray(m, dtype=np.int64)
    u = np.empty(len(m), dtype=np.int64)
    small = m < MCNEMAR_EXACT_BELOW
    ms = m[small][:, None]
    x = np.arange(MCNEMAR_EXACT_BELOW + 1)[None, :]
    pval = np.minimum(1.0, 2 * stats.binom.sf(x - 1, ms, 0.5))
    ok = (2 * x > ms) & (x <= ms) & (pval <= alpha)
    u[small] = np.where(ok.any(axis=1), np.argmax(ok, axis=1), ms[:, 0] + 1)
    ml = m[~small].astype(float)
    if len(ml):
        crit = stats.chi2.isf(alpha, 1)

        def rejects(xx):
            d = 2 * xx - ml
            return (d > 0) & (stats.chi2.sf((d - 1) ** 2 / ml, 1) <= alpha)

        cand = np.ceil((ml + 1 + np.sqrt(ml * crit)) / 2)
        # the p-value itself decides where rounding puts cand on the boundary
        cand = np.where(rejects(cand - 1), cand - 1, cand)
        cand = np.where(rejects(cand), cand, cand + 1)
        u[~small] = np.minimum(cand, ml + 1).astype(np.int64)
    return u


def _mcnemar_power(n, psi, delta, alpha, alternative):
    """Exact power of ``evalci.mcnemar``'s decision rule on n paired inputs.

    The number of discordant inputs is m ~ Binomial(n, psi) and, given m,
    n01 (only b right) ~ Binomial(m, q) with q = (psi + delta) / (2 psi);
    the power is sum_m P(m) P(n01 in the rejection region of m). One-sided
    alternatives use mcnemar's p-value halved in the planned direction
    (its one-sided version: reject if the gap has the planned sign and
    p <= 2 alpha). Vectorised over m; m outside the central 1 - 2e-14 of
    its distribution is ignored.
    """
    lo = int(stats.binom.ppf(1e-14, n, psi))
    hi = int(stats.binom.isf(1e-14, n, psi))
    m = np.arange(max(lo - 1, 0), min(hi + 1, n) + 1)
    w = stats.binom.pmf(m, n, psi)
    q = min(max((psi + delta) / (2 * psi), 0.0), 1.0)
    two = alternative == "two-sided"
    u = _mcnemar_upper(m, alpha if two else min(2 * alpha, 1.0))
    up = stats.binom.sf(u - 1, m, q)  # n01 >= u: b better
    down = stats.binom.cdf(m - u, m, q)  # n01 <= m - u: a better
    rej = up + down if two else (up if alternative == "greater" else down)
    return float(min(np.sum(w * rej), 1.0))


def _mcnemar_sample_size(psi, delta, alpha, power, alternative, start):
    """Smallest n found by bisection with exact power >= ``power`` (n - 1 below).

    Exact power rises with n up to small ripples (the discreteness of the
    test is averaged over m ~ Binomial(n, psi)); bisection returns an n with
    power(n) >= target > power(n - 1).
    """

    def enough(n):
        return _mcnemar_power(n, psi, delta, alpha, alternative) >= power

    lo, hi = 0, max(int(start), 1)
    while not enough(hi):
        lo, hi = hi, 2 * hi
        if hi > 10**12:
            raise ValueError(
                f"no n up to 10^12 reaches power {power:g} for discordance {psi:g} "
                f"and p2 - p1 = {delta:g}."
            )
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def _mcnemar_mde(n, psi, alpha, power, alternative):
    """Smallest |p2 - p1| whose exact McNemar power at n is ``power`` (NaN if none)."""
    sign = -1.0 if alternative == "less" else 1.0

    def gap(d):
        return _mcnemar_power(n, psi, sign * d, alpha, alternative) - power

    if gap(psi) < 0:
        return float("nan")
    lo = psi * 1e-9
    if gap(lo) >= 0:
        return lo
    return float(optimize.brentq(gap, lo, psi, xtol=1e-13, rtol=1e-12))


def _mcnemar_exact(paired, discordance, k):
    """Whether the design is the one mcnemar tests: paired, from discordance, k = 1."""
    return bool(paired) and discordance is not None and float(k) == 1.0


def sample_size(
    p1,
    p2,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    discordance=None,
    sd_diff=None,
    k=1,
    rho=None,
    alternative: str = "two-sided",
) -> int:
    """Inputs per system needed to detect accuracy p1 vs p2.

    **Paired, from the discordance rate, k = 1**: sized for the test evalci
    runs on such data, :func:`evalci.mcnemar` with its default rule (exact
    binomial below 25 discordant inputs, continuity-corrected chi-squared
    from there on; reject when the p-value is <= alpha). The returned n is
    the smallest whose *exact* power reaches ``power``: the number of
    discordant inputs is m ~ Binomial(n, psi), of which n01 (only b right)
    ~ Binomial(m, (psi + p2 - p1) / (2 psi)), and the power sums the
    probability of mcnemar's rejection region over both. Connor's (1987)
    normal formula below is for the *uncorrected* test: at its n the
    corrected test mcnemar runs has power 0.77, not 0.80, which is why it is
    not used here. One-sided alternatives use mcnemar's p-value halved in
    the planned direction.

    The other designs use the normal approximation n = (z_alpha sqrt(v0) +
    z_beta sqrt(v1))^2 / (p2 - p1)^2, with v0, v1 the per-input variance of
    the difference under the null and the alternative:

    * independent samples (different inputs per system; seed 004):
      v0 = v1 = p1 (1 - p1) + p2 (1 - p2);
    * paired, from the discordance rate psi with k > 1 runs per input
      (mcnemar needs k = 1; the paired comparison is then the paired cluster
      bootstrap): Connor's v0 = psi, v1 = psi - (p2 - p1)^2, times the design
      effect;
    * paired, from ``sd_diff``, the SD of the single-run paired difference
      b - a on an input: v0 = v1 = sd_diff^2.

    With k runs per input, each variance is multiplied by the design effect
    rho + (1 - rho) / k (seed 000: Var of a k-run input mean =
    sigma2 (rho + (1 - rho) / k)); rho is the intraclass correlation of the
    outcome (independent design) or of the paired difference (paired).

    Parameters
    ----------
    p1, p2 : float
        Accuracies of the two systems, in (0, 1).
    alpha : float
        Significance level.
    power : float
        Wanted power, 1 - beta.
    paired : bool
        Both systems scored on the same inputs; give ``discordance`` or
        ``sd_diff``.
    discordance : float, optional
        Share of inputs on which the systems disagree (one right, one wrong),
        >= ``|p2 - p1|``.
    sd_diff : float, optional
        SD of the paired difference of one run of each system on an input
        (between- plus within-input variance of the difference, i.e.
        ``sqrt(sigma2_between + sigma2_within)`` of an :func:`icc` pair row).
    k : int
        Runs per input and system.
    rho : float, optional
        Intraclass correlation; required when k > 1.
    alternative : {'two-sided', 'greater', 'less'}
        About p2 - p1; one-sided tests use z_(1 - alpha).

    Returns
    -------
    int
        Inputs per system (rounded up); with ``paired=True`` the number of
        inputs both systems are run on. Each input gets k runs.

    Notes
    -----
    Except for McNemar's design (exact), a normal approximation: it needs
    n p and n (1 - p) reasonably large, so answers of a few dozen inputs at
    accuracies near 0 or 1 are optimistic.

    References
    ----------
    Connor, R. J. (1987). Sample size for testing differences in proportions
    for the paired-sample design. *Biometrics* 43(1), 207-211.
    Edwards, A. L. (1948). Note on the "correction for continuity" in testing
    the significance of the difference between correlated proportions.
    *Psychometrika* 13(3), 185-187.
    Fleiss, J. L., Levin, B., & Paik, M. C. (2003). *Statistical Methods for
    Rates and Proportions*, 3rd ed., ch. 4. Wiley.

    Examples
    --------
    Seed 004 ("How many items do you need?"): 80% vs 83% needs "about 2,600
    items per system" (it rounds z to 1.96 + 0.84 = 2.8 and gets 2,622):

    >>> from evalci import planning
    >>> planning.sample_size(0.80, 0.83)
    2626

    Paired on the same inputs, with the systems disagreeing on 10% of them
    (McNemar's test as :func:`evalci.mcnemar` runs it; Connor's formula for
    the uncorrected test would say 870, where mcnemar's power is 0.77):

    >>> planning.sample_size(0.80, 0.83, paired=True, discordance=0.10)
    925
    >>> round(planning.power(0.80, 0.83, 925, paired=True, discordance=0.10), 4)
    0.8002

    Five runs per input, intraclass correlation 0.6 (design effect 0.68):

    >>> planning.sample_size(0.80, 0.83, k=5, rho=0.6)
    1786
    """
    p1, p2 = _proportion(p1, "p1"), _proportion(p2, "p2")
    if p1 == p2:
        raise ValueError("`p1` and `p2` are equal: there is no difference to detect.")
    za, zb = _z_alpha(alpha, alternative), _z_power(power)
    _direction_iv(p2 - p1, alternative)
    discordance, sd_diff = _paired_iv(paired, discordance, sd_diff)
    if discordance is not None:
        _check_discordance(p1, p2, discordance)
    deff = _design_effect(k, rho)
    v0, v1 = _variances(p1, p2, discordance, sd_diff, paired, deff)
    n = (za * math.sqrt(v0) + zb * math.sqrt(v1)) ** 2 / (p2 - p1) ** 2
    if _mcnemar_exact(paired, discordance, k):
        return _mcnemar_sample_size(
            discordance, p2 - p1, float(alpha), float(power), alternative, n
        )
    return int(math.ceil(n - 1e-9))


def power(
    p1,
    p2,
    n_inputs,
    *,
    alpha: float = 0.05,
    paired: bool = False,
    discordance=None,
    sd_diff=None,
    k=1,
    rho=None,
    alternative: str = "two-sided",
) -> float:
    """Power to detect p1 vs p2 with ``n_inputs`` inputs per system.

    The inverse of :func:`sample_size` (same designs and variances). Paired
    from ``discordance`` with k = 1: the exact power of
    :func:`evalci.mcnemar`'s decision rule (see :func:`sample_size`;
    ``n_inputs`` must then be whole). Otherwise the normal approximation
    ``power = Phi((sqrt(n) |delta| - z_alpha sqrt(v0)) / sqrt(v1))``, plus
    the (tiny) probability of rejecting in the wrong direction for a
    two-sided test.

    Parameters
    ----------
    p1, p2 : float
        Accuracies, in (0, 1).
    n_inputs : int
        Inputs per system (paired: inputs run by both systems).
    alpha, paired, discordance, sd_diff, k, rho, alternative
        As in :func:`sample_size`.

    Returns
    -------
    float

    Examples
    --------
    >>> from evalci import planning
    >>> round(planning.power(0.80, 0.83, 2626), 3)
    0.8
    >>> round(planning.power(0.80, 0.83, 200), 3)      # seed 004's 200-item eval
    0.121
    """
    p1, p2 = _proportion(p1, "p1"), _proportion(p2, "p2")
    n = _number(n_inputs, "n_inputs", low=0, low_open=True)
    za = _z_alpha(alpha, alternative)
    discordance, sd_diff = _paired_iv(paired, discordance, sd_diff)
    if discordance is not None:
        _check_discordance(p1, p2, discordance)
    deff = _design_effect(k, rho)
    if _mcnemar_exact(paired, discordance, k):
        n = _integer(n_inputs, "n_inputs", hint=" (McNemar: whole paired inputs)")
        return _mcnemar_power(n, discordance, p2 - p1, float(alpha), alternative)
    v0, v1 = _variances(p1, p2, discordance, sd_diff, paired, deff)
    delta = p2 - p1
    if v1 <= 0:
        return 1.0
    up = stats.norm.cdf((math.sqrt(n) * delta - za * math.sqrt(v0)) / math.sqrt(v1))
    down = stats.norm.cdf((-math.sqrt(n) * delta - za * math.sqrt(v0)) / math.sqrt(v1))
    if alternative == "greater":
        return float(up)
    if alternative == "less":
        return float(down)
    return float(up + down)


def minimum_detectable_effect(
    n_inputs,
    *,
    p=None,
    sigma2=None,
    k=1,
    rho=None,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    sd_diff=None,
    discordance=None,
    alternative: str = "two-sided",
) -> float:
    """Smallest difference in accuracy detectable with ``n_inputs`` per system.

    The inverse of :func:`sample_size`: the delta > 0 at which it returns
    ``n_inputs`` (before rounding up).

    * independent, from a baseline accuracy ``p``: solves for p2 = p + delta
      (p - delta for ``alternative="less"``) with the unequal variances
      p (1 - p) + p2 (1 - p2);
    * independent, from a common variance ``sigma2`` of one run:
      delta = (z_alpha + z_beta) sqrt(2 sigma2 D / n);
    * paired from ``sd_diff``: delta = (z_alpha + z_beta) sd_diff sqrt(D / n);
    * paired from ``discordance`` with k = 1: the delta at which the exact
      power of :func:`evalci.mcnemar`'s rule is ``power`` (as
      :func:`sample_size`), solved numerically; with k > 1, Connor's (1987)
      normal formula with the design effect;

    with D = rho + (1 - rho) / k the design effect.

    Parameters
    ----------
    n_inputs : int
        Inputs per system (paired: inputs run by both).
    p : float, optional
        Baseline accuracy (independent design).
    sigma2 : float, optional
        Variance of one run's outcome (independent design), e.g.
        sigma2_between + sigma2_within from :func:`icc`.
    k : int
        Runs per input.
    rho : float, optional
        Intraclass correlation; required when k > 1.
    alpha, power, alternative
        As in :func:`sample_size`.
    paired : bool
        Same inputs for both systems; give ``sd_diff`` or ``discordance``.
    sd_diff, discordance : float, optional
        As in :func:`sample_size`.

    Returns
    -------
    float
        The detectable ``|p2 - p1|``; NaN if no difference is detectable (e.g.
        ``p`` so close to 1 that even p2 = 1 is too close).

    Examples
    --------
    >>> from evalci import planning
    >>> round(planning.minimum_detectable_effect(2626, p=0.80), 4)
    0.03
    >>> round(planning.minimum_detectable_effect(200, p=0.80), 3)  # seed 004's 200 items
    0.099

    Paired, GPQA-like (SD of the per-run difference 0.54, rho 0.41, 5 runs):

    >>> round(planning.minimum_detectable_effect(198, paired=True, sd_diff=0.54,
    ...                                          k=5, rho=0.41), 3)
    0.078
    """
    n = _number(n_inputs, "n_inputs", low=0, low_open=True)
    za, zb = _z_alpha(alpha, alternative), _z_power(power)
    discordance, sd_diff = _paired_iv(paired, discordance, sd_diff)
    deff = _design_effect(k, rho)
    zz = za + zb
    if paired:
        if p is not None or sigma2 is not None:
            raise ValueError(
                "`p` and `sigma2` describe the independent design; with paired=True "
                "give `sd_diff` or `discordance`."
            )
        if sd_diff is not None:
            return float(zz * sd_diff * math.sqrt(deff / n))
        psi = discordance
        if _mcnemar_exact(paired, discordance, k):
            n = _integer(n_inputs, "n_inputs", hint=" (McNemar: whole paired inputs)")
            return _mcnemar_mde(n, psi, float(alpha), float(power), alternative)

        def n_req(d):
            return (
                za * math.sqrt(psi * deff)
                + zb * math.sqrt(max(psi - d * d, 0.0) * deff)
            ) ** 2 / (d * d)

        hi = psi
    else:
        if (p is None) == (sigma2 is None):
            raise ValueError(
                "give exactly one of `p` (baseline accuracy) or `sigma2` (variance of "
                "one run's outcome) for the independent design."
            )
        if sigma2 is not None:
            sigma2 = _number(sigma2, "sigma2", low=0, low_open=True)
            return float(zz * math.sqrt(2 * sigma2 * deff / n))
        p = _proportion(p, "p")
        sign = -1.0 if alternative == "less" else 1.0

        def n_req(d):
            p2 = p + sign * d
            return zz**2 * deff * (p * (1 - p) + p2 * (1 - p2)) / (d * d)

        hi = p if sign < 0 else 1 - p
    if n_req(hi) > n:
        return float("nan")
    lo = hi * 1e-12
    return float(
        optimize.brentq(lambda d: n_req(d) - n, lo, hi, xtol=1e-14, rtol=1e-12)
    )


# ----------------------------------------------------------- from a pilot table
def _pilot(data, value, cluster, by, system, pair, successes, trials):
    """Components per group (independent) or per by-group of the pair (paired)."""
    if pair is not None:
        if system is None:
            raise ValueError(
                "`pair` needs `system=`: name the column holding the systems, e.g. "
                "system='system', pair=('direct', 'cot')."
            )
        try:
            a, b = pair
        except (TypeError, ValueError):
            raise ValueError(f"`pair` must be a tuple (a, b); got {pair!r}.") from None
        comp = icc(
            data,
            value,
            cluster,
            by=by,
            system=system,
            pairs=[(a, b)],
            successes=successes,
            trials=trials,
        )
        by_cols = as_columns(by, "by")
        base = comp[(comp["kind"] == "system") & (comp[system] == a)]
        diff = comp[comp["kind"] == "difference"].reset_index(drop=True)
        if by_cols:
            base = diff[by_cols].merge(base, on=by_cols, how="left")
        p1 = base["mean"].to_numpy()
        return diff, by_cols + [system], p1
    comp = icc(
        data, value, cluster, by=by, system=system, successes=successes, trials=trials
    )
    cols = as_columns(by, "by") + ([system] if system else [])
    return comp, cols, comp["mean"].to_numpy()


def _k_column(ks):
    return ks.astype(np.int64) if np.all(ks == np.round(ks)) else ks


def _planned_k(k, comp):
    if k is not None:
        return np.full(len(comp), _number(k, "k", low=1, hint=" (runs per input)"))
    return np.maximum(1.0, np.round(comp["mean_k"].to_numpy()))


def sample_size_from_data(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    effect,
    by=None,
    system: str | None = None,
    pair=None,
    k=None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    successes: str | None = None,
    trials: str | None = None,
) -> pd.DataFrame:
    """:func:`sample_size` with accuracy, rho and k taken from a pilot table.

    Without ``pair``: for each group (``by`` x ``system``) an independent
    design with p1 = the pilot's accuracy, p2 = p1 + ``effect``, the group's
    rho (clamped) and k. With ``pair=(a, b)``: a paired design for b - a with
    ``sd_diff`` = sqrt(sigma2_between + sigma2_within) and rho of the paired
    difference (:func:`icc` with ``pairs``) and p1 = the accuracy of a.

    Parameters
    ----------
    data, value, cluster, by, system, successes, trials
        The pilot, as in :func:`icc`.
    effect : float
        The difference p2 - p1 to detect. Choose it from what matters, not
        from the pilot's observed gap (which overstates it when it was
        selected for being large).
    pair : (a, b), optional
        Two values of ``system``: plan the paired comparison b - a.
    k : int, optional
        Runs per input planned; default the pilot's mean k, rounded.
    alpha, power, alternative
        As in :func:`sample_size`.

    Returns
    -------
    pandas.DataFrame
        Group columns, ``p1, p2, rho, k`` (and ``sd_diff`` when paired), and
        ``n_inputs``: inputs per system (paired: shared inputs). NaN where
        rho could not be estimated.

    Examples
    --------
    >>> import evalci
    >>> from evalci import planning
    >>> df = evalci.load_example()
    >>> a, b = sorted(df.system.unique())
    >>> out = planning.sample_size_from_data(df, "correct", "input_id",
    ...                                      system="system", pair=(a, b),
    ...                                      effect=-0.05)
    >>> out[["p1", "p2", "rho", "k", "sd_diff", "n_inputs"]].round(3)
          p1     p2    rho  k  sd_diff  n_inputs
    0  0.676  0.626  0.408  5    0.539       481
    """
    effect = _number(effect, "effect", low=-1, high=1, hint=" (a difference p2 - p1)")
    _z_alpha(alpha, alternative)
    _z_power(power)
    if k is not None:
        _number(k, "k", low=1, hint=" (runs per input)")
    comp, cols, p1 = _pilot(data, value, cluster, by, system, pair, successes, trials)
    ks = _planned_k(k, comp)
    out = comp[cols].reset_index(drop=True).copy()
    out["p1"], out["p2"] = p1, p1 + effect
    out["rho"] = comp["rho"].to_numpy()
    out["k"] = _k_column(ks)
    if pair is not None:
        out["sd_diff"] = np.sqrt(
            comp["sigma2_between"] + comp["sigma2_within"]
        ).to_numpy()
    n = np.full(len(out), np.nan)
    for i in range(len(out)):  # one call per group, not per input
        row = out.iloc[i]
        if not np.isfinite(row["rho"]):
            continue
        if not 0 < row["p2"] < 1:
            raise ValueError(
                f"`effect`: p1 + effect = {row['p2']:.4g} is outside (0, 1) for group "
                f"{i} (p1 = {row['p1']:.4g})."
            )
        kw = dict(
            alpha=alpha,
            power=power,
            k=row["k"],
            rho=row["rho"],
            alternative=alternative,
        )
        if pair is not None:
            n[i] = sample_size(
                row["p1"], row["p2"], paired=True, sd_diff=row["sd_diff"], **kw
            )
        else:
            n[i] = sample_size(row["p1"], row["p2"], **kw)
    # nullable integers: NaN where rho could not be estimated
    out["n_inputs"] = (
        pd.array(n, dtype="Float64").astype("Int64")
        if np.isnan(n).any()
        else n.astype(np.int64)
    )
    return out


def mde_from_data(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    n_inputs=None,
    k=None,
    by=None,
    system: str | None = None,
    pair=None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    successes: str | None = None,
    trials: str | None = None,
) -> pd.DataFrame:
    """:func:`minimum_detectable_effect` with p, rho and k taken from a pilot table.

    Without ``pair``: independent design per group, baseline p = the group's
    accuracy. With ``pair=(a, b)``: paired design from the SD and rho of the
    per-run difference b - a (:func:`icc` with ``pairs``).

    Parameters
    ----------
    data, value, cluster, by, system, successes, trials
        The pilot, as in :func:`icc`.
    n_inputs : int, optional
        Inputs per system planned; default the pilot's N (what this
        benchmark can detect).
    k : int, optional
        Runs per input planned; default the pilot's mean k, rounded.
    pair : (a, b), optional
        Two values of ``system``.
    alpha, power, alternative
        As in :func:`sample_size`.

    Returns
    -------
    pandas.DataFrame
        Group columns, ``p`` (baseline accuracy), ``rho``, ``n_inputs``,
        ``k`` (and ``sd_diff`` when paired) and ``mde``.

    Examples
    --------
    >>> import evalci
    >>> from evalci import planning
    >>> df = evalci.load_example()
    >>> a, b = sorted(df.system.unique())
    >>> out = planning.mde_from_data(df, "correct", "input_id", system="system",
    ...                              pair=(a, b))
    >>> out[["p", "rho", "n_inputs", "k", "sd_diff", "mde"]].round(3)
           p    rho  n_inputs  k  sd_diff    mde
    0  0.676  0.408       198  5    0.539  0.078
    """
    _z_alpha(alpha, alternative)
    _z_power(power)
    if k is not None:
        _number(k, "k", low=1, hint=" (runs per input)")
    if n_inputs is not None:
        n_inputs = _integer(n_inputs, "n_inputs", low=2)
    comp, cols, p1 = _pilot(data, value, cluster, by, system, pair, successes, trials)
    ks = _planned_k(k, comp)
    if n_inputs is None:
        nn = comp["n_inputs"].to_numpy()
    else:
        nn = np.full(len(comp), n_inputs)
    out = comp[cols].reset_index(drop=True).copy()
    out["p"] = p1
    out["rho"] = comp["rho"].to_numpy()
    out["n_inputs"] = nn
    out["k"] = _k_column(ks)
    if pair is not None:
        out["sd_diff"] = np.sqrt(
            comp["sigma2_between"] + comp["sigma2_within"]
        ).to_numpy()
    mde = np.full(len(out), np.nan)
    for i in range(len(out)):  # one call per group, not per input
        row = out.iloc[i]
        if not np.isfinite(row["rho"]):
            continue
        kw = dict(
            k=row["k"],
            rho=row["rho"],
            alpha=alpha,
            power=power,
            alternative=alternative,
        )
        if pair is not None:
            mde[i] = minimum_detectable_effect(
                row["n_inputs"], paired=True, sd_diff=row["sd_diff"], **kw
            )
        elif 0 < row["p"] < 1:
            mde[i] = minimum_detectable_effect(row["n_inputs"], p=row["p"], **kw)
    out["mde"] = mde
    return out
