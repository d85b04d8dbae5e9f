"""Variance components of per-input outcomes: how much is data noise, how much run noise.

Seed 000 ("Choosing N and k") writes the variance of a mean score over N inputs
with k runs each as

    Var(Ybar) = (sigma2_B + sigma2_W / k) / N = sigma2 (rho + (1 - rho) / k) / N,

with sigma2_B the variance *between* inputs (data noise: which inputs you
drew), sigma2_W the variance *within* an input (run noise: which run you
drew), sigma2 = sigma2_B + sigma2_W and rho = sigma2_B / sigma2 the
intraclass correlation. :func:`icc` estimates them from a pilot (one-way
random-effects ANOVA, from 0/1 rows or from a counts table, per group, and
for the paired difference of two systems); :mod:`evalci.methods.planning.plans` and
:mod:`evalci.power` plan with them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.warnings import DegenerateDataWarning, warn
from evalci.engine.cube import factorize
from evalci.methods.variance.source import (
    Codes,
    Source,
    cell_sums,
    group_frame,
    row_outcomes,
    source_iv,
    table_codes,
)

__all__ = ["icc", "source_icc"]


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


def _components_frame(parts):
    """The finished components of the groups with inputs, and those groups' codes."""
    res = _finish(parts)
    present = np.flatnonzero(parts["n_inputs"] > 0)
    return pd.DataFrame({k: v[present] for k, v in res.items()}), present


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


# ========================================================================= icc
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
    moves those to 0 (docs/paper-notes.md: mean 0.043 against a true 0.025 at N=200,
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
    >>> import evalci
    >>> df = evalci.load_example()                  # 198 inputs x 5 runs x 2 systems
    >>> est = evalci.icc(df, "correct", "input_id", system="system", pairs="all")
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
    >>> c = evalci.icc(counts, cluster="input_id", system="system",
    ...                  successes="n_correct", trials="n_runs")
    >>> import numpy as np
    >>> bool(np.allclose(c.rho, est.rho[:2]))
    True
    """
    src = source_iv(data, value, cluster, by, system, successes, trials)
    if pairs is not None and system is None:
        raise ValueError(
            "`pairs` needs `system=`: name the column whose values the pairs refer "
            "to, e.g. system='system', pairs=[('direct', 'cot')]."
        )
    n, S, Q = row_outcomes(data, src)
    codes = table_codes(data, src)
    out, out_by, y, shift = _system_components(src, codes, n, S, Q)
    if pairs is not None:
        pair_list = _pairs_iv(pairs, codes.system_index, src.system)
        out = _with_pairs(out, out_by, pair_list, data, src, run, codes, n, y, shift)
    estimable = out["msw"].notna() & (out["n_inputs"] >= 2)
    if not estimable.any():
        raise ValueError(
            f"`cluster` {src.cluster}: no group has 2+ inputs with 2+ runs each, so "
            "the run (within-input) variance and rho cannot be estimated; icc needs "
            "repeated runs of at least some inputs (k >= 2)."
        )
    _warn_degenerate(out, src.by + ([src.system] if src.system else []))
    return out


def source_icc(data, src: Source) -> pd.DataFrame:
    """:func:`icc` per ``by`` group of a validated table (no systems, no pairs)."""
    return icc(
        data,
        src.value,
        src.cluster,
        by=src.by or None,
        successes=src.successes,
        trials=src.trials,
    )


def _system_components(src: Source, codes: Codes, n, S, Q):
    """Components per (by, system) group, group columns first.

    Returns that frame, the by-code of each of its rows, the outcomes ``S``
    centred per group (counts stay as they are) and the shifts taken off.
    """
    nb, ns, nc = codes.nb, codes.ns, codes.nc
    grp = codes.by * ns + codes.system
    shift = np.zeros(nb * ns)
    if not src.counts:
        # centre within the group first: the mean squares are invariant to a
        # shift, and sums of squares of large scores then lose no precision
        shift = np.bincount(grp, weights=S, minlength=nb * ns) / np.maximum(
            np.bincount(grp, minlength=nb * ns), 1
        )
        S = S - shift[grp]
        Q = S * S
    ucell, (cn, cS, cQ) = cell_sums(grp * nc + codes.cluster, n, S, Q)
    parts = _anova(ucell // nc, cn, cS, cQ, nb * ns)
    parts["mean"] = parts["mean"] + shift  # undo the centring in the reported mean
    out, present = _components_frame(parts)
    pieces = [group_frame(codes.by_index, present // ns, src.by)]
    if src.system:
        pieces.append(pd.DataFrame({src.system: codes.system_index[present % ns]}))
    return pd.concat([*pieces, out], axis=1), present // ns, S, shift


def _pairs_iv(pairs, s_index, system):
    systems = list(s_index)
    if isinstance(pairs, str):
        if pairs != "all":
            raise ValueError(
                f"`pairs` must be 'all' or a list of (a, b) tuples; got {as_written(pairs)}."
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
            f"`pairs` must be 'all' or a list of (a, b) tuples; got {as_written(pairs)}."
        ) from None
    for p in out:
        if len(p) != 2:
            raise ValueError(f"`pairs`: each pair must be (a, b); got {as_written(p)}.")
        for s in p:
            if s not in s_index:
                shown = ", ".join(map(repr, systems[:10]))
                raise ValueError(
                    f"`pairs`: system {as_written(s)} is not in column {as_written(system)}; available: "
                    f"{shown}."
                )
        if p[0] == p[1]:
            raise ValueError(
                f"`pairs`: a pair needs two different systems; got {as_written(p)}."
            )
    return out


def _with_pairs(out, out_by, pair_list, data, src, run, codes: Codes, n, y, shift):
    """The system rows and, after each by-group's, one difference row per pair."""
    n_labels = len(src.by) + 1  # by columns and the system column
    out.insert(n_labels, "kind", "system")
    out.insert(n_labels + 1, "method", "anova")
    step = len(pair_list) + 1
    rows, order = [out], [out_by * step]
    shifts = shift.reshape(codes.nb, codes.ns)
    for j, (a, b) in enumerate(pair_list):
        sa, sb = codes.system_index.get_loc(a), codes.system_index.get_loc(b)
        offset = shifts[:, sb] - shifts[:, sa]
        piece, b_present = _pair_components(data, src, run, y, n, codes, sa, sb, offset)
        if piece is None:
            continue
        frame = pd.concat(
            [group_frame(codes.by_index, b_present, src.by), piece], axis=1
        )
        frame.insert(len(src.by), src.system, f"{b} - {a}")
        frame.insert(len(src.by) + 1, "kind", "difference")
        rows.append(frame)
        order.append(b_present * step + j + 1)
    out = pd.concat(rows, ignore_index=True)
    return out.iloc[np.argsort(np.concatenate(order), kind="stable")].reset_index(
        drop=True
    )


def _pair_components(data, src, run, y, n, codes: Codes, sa, sb, offset):
    """Components of b - a per by-group: a DataFrame and the by-codes present.

    ``y`` is centred per (by, system) for rows (sums of counts otherwise);
    ``offset[g]`` (shift of b minus shift of a) restores the mean difference.
    """
    ma, mb = codes.system == sa, codes.system == sb
    parts = None
    if not src.counts and run is not None and run in data.columns:
        parts = _matched_runs(data, run, y, codes, ma, mb)
    method = "mean_difference" if parts is None else "matched_runs"
    if parts is None:
        parts = _unmatched_runs(src, y, n, codes, ma, mb)
    parts["mean"] = parts["mean"] + offset
    frame, present = _components_frame(parts)
    if len(present) == 0:
        return None, None
    frame.insert(0, "method", method)
    return frame, present


def _matched_runs(data, run, y, codes: Codes, ma, mb):
    """ANOVA of the run differences b - a matched by run number; None if runs don't match.

    They match when every input both systems ran has the same set of run
    numbers in both, none repeated.
    """
    r_codes, r_index = factorize(data, [run], "run")
    nr, nc = len(r_index), codes.nc
    key = (codes.by * nc + codes.cluster) * nr + r_codes
    ka, kb = key[ma], key[mb]
    common = np.intersect1d(ka // nr, kb // nr)
    ia = np.isin(ka // nr, common)
    ib = np.isin(kb // nr, common)
    oa = np.argsort(ka[ia], kind="stable")
    ob = np.argsort(kb[ib], kind="stable")
    ka_s, kb_s = ka[ia][oa], kb[ib][ob]
    if (
        len(ka_s) != len(kb_s)
        or not np.array_equal(ka_s, kb_s)
        or (np.diff(ka_s) == 0).any()
    ):
        return None
    d = y[mb][ib][ob] - y[ma][ia][oa]
    ucell, (cn, cS, cQ) = cell_sums(ka_s // nr, np.ones(len(d)), d, d * d)
    return _anova(ucell // nc, cn, cS, cQ, codes.nb)


def _unmatched_runs(src, y, n, codes: Codes, ma, mb):
    """Components of b - a from the per-input means of the inputs both ran."""
    nc = codes.nc
    cell_a = codes.by[ma] * nc + codes.cluster[ma]
    cell_b = codes.by[mb] * nc + codes.cluster[mb]
    common = np.intersect1d(cell_a, cell_b)
    sums = []
    for m, cell_x in ((ma, cell_a), (mb, cell_b)):
        keep = np.isin(cell_x, common)
        pos = np.searchsorted(common, cell_x[keep])
        w, yy = n[m][keep], y[m][keep]
        per_row = (w, yy, yy) if src.counts else (w, yy, yy * yy)
        sums.append(
            [np.bincount(pos, weights=s, minlength=len(common)) for s in per_row]
        )
    (na, Sa, Qa), (nb_, Sb, Qb) = sums
    return _mean_difference(common // nc, na, Sa, Qa, nb_, Sb, Qb, codes.nb)
