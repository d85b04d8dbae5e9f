"""Prediction-powered inference for the gap between two systems: :func:`ppi_compare`.

The same inputs are judged for every system, and the labeled inputs carry
gold for every system (the humans grade both systems' outputs on them), so
the gap is a mean of per-input differences and PPI++ applies to it with one
weight tuned for the gap. A judge that errs the same way on an input for
both systems (a shared bias) errs by the same amount in both judge means,
and the difference cancels it; so the gap's correction is usually smaller
and its interval narrower than two separate :func:`evalci.judge.ppi_mean`
intervals suggest. See :mod:`evalci.methods.judge` for how rows become
inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.lazy import special
from evalci._base.text import as_written, plain
from evalci._base.validate import as_columns, check_columns, check_name
from evalci.engine.cube import factorize
from evalci.methods.judge.design import _Design, _design_iv, _gold_judged_iv
from evalci.methods.judge.inputs import _Inputs, _inputs, _judge_iv
from evalci.methods.judge.ppi import PPIResult, _lam_iv, _ppi_cells, _warn_few_gold

__all__ = ["PPICompareResult", "ppi_compare"]


@dataclass(frozen=True, repr=False)
class PPICompareResult(PPIResult):
    """A prediction-powered (PPI++) interval for the gap ``system - baseline``.

    One gap with two systems (floats); with more, one per system against
    the baseline (Series indexed by system).

    Attributes
    ----------
    estimate, low, high, standard_error : float or pandas.Series
        The gap's estimate, interval and plug-in SE (see :func:`ppi_compare`).
    p_value : float or pandas.Series
        Two-sided normal p-value of "no gap".
    n_labeled, n_unlabeled : int or pandas.Series
        Inputs with gold (for both systems) and without.
    lam : float or pandas.Series
        The weight on the judge's differences (NaN with ``strata``; see
        ``strata``).
    effective_n : float or pandas.Series
        ``n_labeled * V_gold / V``: the gold-labeled inputs a gold-only
        paired interval (``lam = 0``) would need for the same width; ``V``
        and ``V_gold`` are the plug-in variances of the gap's estimator and
        of the gold-only gap on the same labels.
    system, baseline : object
        The system compared (None with several: see ``groups``) and the
        system subtracted.
    method : {'clt'}
        The normal interval.
    confidence_level : float
        Two-sided level.
    groups : pandas.Index or None
        The systems compared with the baseline (None with one gap).
    strata : pandas.DataFrame or None
        With ``strata=``: the per-stratum gaps (as in
        :class:`~evalci.judge.PPIResult`).
    """

    p_value: object = None
    system: object = None
    baseline: object = None

    # PPIResult's columns with the p-value after the standard error
    _PER_GROUP = (*PPIResult._PER_GROUP[:4], "p_value", *PPIResult._PER_GROUP[4:])
    _NAME = "PPI++ gap"

    def _header(self) -> str:
        return f"{super()._header()}, gap = system - {as_written(self.baseline)}"

    def _scalar_repr(self) -> str:
        return (
            super()
            ._scalar_repr()
            .replace(
                "(", f"({as_written(self.system)} - {as_written(self.baseline)}: ", 1
            )
        )


def ppi_compare(
    data: pd.DataFrame,
    judge: str,
    gold: str,
    cluster,
    system: str = "system",
    *,
    baseline=None,
    confidence_level: float = 0.95,
    lam="auto",
    strata: str | None = None,
    shares=None,
    label_prob: str | None = None,
) -> PPICompareResult:
    """Interval for the true gap between two systems from judge scores and shared gold.

    Every input is judged for every system; the labeled inputs have gold for
    every system (the same inputs graded by humans for both, or a gold
    verdict per system on each). For the gap ``A - B`` (``A`` the other
    system, ``B`` the ``baseline``), with ``n`` labeled and ``N`` unlabeled
    inputs, each input ``i`` gives the differences of its per-system means
    (rows pair with gold as in :func:`ppi_mean`)::

        D_i = Y_iA - Y_iB       (gold; labeled inputs)
        d_i = f_iA - f_iB       (judge; over the gold rows if labeled)

    and the estimate is PPI++ on the differences,
    ``gap = lam * mean_U(d) + mean_L(D - lam d)``, with
    ``SE^2 = lam^2 Var_U(d) / N + Var_L(D - lam d) / n`` (plug-in,
    ``ddof=0``) and ``lam`` the power-tuned weight for the gap,
    ``Cov_L(D, d) / ((1 + n/N) Var(d))`` clipped to [0, 1] -- PPI++'s
    variance-minimising weight for a mean, applied to the gap's estimand,
    so it is ``ppi_py.ppi_mean_ci(D, d_L, d_U)``. It is unbiased for the
    input-weighted mean gap for any ``lam`` when the labeled inputs are a
    random sample. The variances are over inputs (cluster-robust for k runs
    per input and system), and pairing puts the covariance of the two
    systems' errors in ``Var(D - lam d)``: a judge bias shared by both
    systems on an input cancels in ``d``.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run, system). Never modified.
    judge : str
        Column of the judge's scores; no missing values.
    gold : str
        Column of the gold scores; NaN on unlabeled rows. An input labeled
        for one system must be labeled for every system compared.
    cluster : str or list of str
        Column(s) identifying the input: it pairs the systems.
    system : str
        Column naming the system.
    baseline : optional
        The system subtracted (gap = other - baseline), one gap per other
        system. Default with two systems: the first in sorted order.
    confidence_level : float
        Two-sided level, e.g. 0.95.
    lam : "auto" or float
        ``"auto"``: the tuned weight above; a number fixes it (1: the
        original PPI, 0: the gold-only paired interval).
    strata, shares : optional
        Stratified PPI, as in :func:`ppi_mean`: per-stratum gaps with their
        own ``lam_h``, combined by the population shares ``W_h``
        (``gap = sum_h W_h gap_h``, ``SE^2 = sum_h W_h^2 SE_h^2``). The
        stratum is a property of the input (the same for every system).
    label_prob : str, optional
        Each input's probability of having been labeled (for both systems
        at once), in (0, 1]: the inverse-probability-weighted estimator of
        :func:`ppi_mean` applied to the differences.

    Returns
    -------
    PPICompareResult

    See Also
    --------
    ppi_mean : one system's score.
    evalci.compare : paired gaps from gold (or judge) scores alone.

    References
    ----------
    A. N. Angelopoulos, J. C. Duchi, T. Zrnic (2023). PPI++: Efficient
    prediction-powered inference. arXiv:2311.01453.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evalci.judge import ppi_compare
    >>> rng = np.random.default_rng(1)
    >>> n = 2000
    >>> p = rng.beta(2, 2, n)                       # input difficulty
    >>> bias = rng.random(n) < 0.3                  # inputs the judge passes anyway
    >>> rows = []
    >>> for name, skill in (("A", 1.0), ("B", 0.8)):
    ...     truth = rng.random(n) < skill * p
    ...     verdict = np.where(truth, rng.random(n) < 0.95, bias)
    ...     rows.append(pd.DataFrame({"input_id": np.arange(n), "system": name,
    ...                               "judge": verdict.astype(int), "truth": truth}))
    >>> df = pd.concat(rows, ignore_index=True)
    >>> df["gold"] = df.truth.where(df.input_id < 200).astype(float)
    >>> res = ppi_compare(df, "judge", "gold", "input_id", baseline="B")
    >>> print(f"A - B: {res.estimate:.3f} [{res.low:.3f}, {res.high:.3f}]")
    A - B: 0.100 [0.041, 0.158]
    """
    args, design_args = _compare_iv(
        data, judge, gold, cluster, system, confidence_level, strata, shares,
        label_prob,
    )  # fmt: skip
    lam = _lam_iv(lam)
    ins = _inputs(data, args)
    base, others = _baseline(ins.groups, baseline, system)
    key_of, keys, ccode_rows = _input_keys(data, args, ins)
    n_keys = len(keys)
    pos = _paired_positions(ins, key_of, keys, [base, *others], system)
    diff = _differences(ins, pos, base, others, system)
    labeled_key = ins.labeled[pos[base]]
    design = _design_iv(
        data, *design_args, ccode_rows, n_keys, labeled_key, diff.groups
    )
    reps = len(others)
    design = _Design(
        stratum=np.tile(design.stratum, reps),
        strata=design.strata,
        shares=design.shares,
        w=None if design.w is None else np.tile(design.w, reps),
    )
    unweighted = design.strata is None and design.w is None
    if unweighted:
        n_lab = np.bincount(diff.group, weights=diff.labeled, minlength=reps)
        _warn_few_gold(n_lab.astype(np.int64), diff.groups)
    fields = _ppi_cells(diff, design, lam, args)
    est, se = fields["estimate"], fields["standard_error"]
    with np.errstate(invalid="ignore", divide="ignore"):
        p_value = np.where(se > 0, 2 * special.ndtr(-np.abs(est) / se), np.nan)
    return PPICompareResult._from_arrays(
        **fields,
        p_value=p_value,
        system=plain(ins.groups[others[0]]) if len(others) == 1 else None,
        baseline=plain(ins.groups[base]),
    )


def _compare_iv(data, judge, gold, cluster, system, level, strata, shares, label_prob):
    """Validate :func:`ppi_compare`'s arguments: the shared ones and its own."""
    if gold is None:
        raise ValueError(
            "`gold` is required: the column of gold scores (NaN where unlabeled)."
        )
    if cluster is None or (isinstance(cluster, (list, tuple)) and not cluster):
        raise ValueError(
            "`cluster` is required: the column naming the input, which pairs the "
            "systems (rows of different systems on the same input)."
        )
    _gold_judged_iv(data, judge, gold)
    check_name(system, "system")
    if isinstance(data, pd.DataFrame):
        check_columns(data, [system], "system")
    if system in as_columns(cluster, "cluster"):
        raise ValueError(
            f"`system` column {as_written(system)} is also in `cluster`: the cluster names "
            "the input, shared by the systems; pass the input column alone."
        )
    args = _judge_iv(
        data, judge, gold, cluster, [system], level, "clt", ("clt",), 9999,
        binary=False,
    )  # fmt: skip
    return args, (strata, shares, label_prob)


def _baseline(systems: pd.Index, baseline, system: str):
    """Code of the baseline and of the other systems."""
    if len(systems) < 2:
        raise ValueError(
            f"`system` column {as_written(system)} holds one system ({as_written(systems[0])}); a gap "
            "needs two: for one system's score use ppi_mean."
        )
    if baseline is None:
        if len(systems) > 2:
            raise ValueError(
                f"{len(systems)} systems in {as_written(system)} ({list(systems)[:5]}): pass "
                "`baseline=` (the system every other is compared with), or keep "
                "the rows of two systems."
            )
        return 0, [1]
    try:
        known = baseline in set(systems)
    except TypeError:  # unhashable: a list, a dict
        known = False
    if not known:
        raise ValueError(
            f"`baseline`: {as_written(baseline)} is not a system; systems are "
            f"{list(systems)[:10]}."
        )
    base = int(systems.get_loc(baseline))
    return base, [g for g in range(len(systems)) if g != base]


def _input_keys(data, args, ins: _Inputs):
    """Each input's cluster key code, the keys, and each row's key code.

    :func:`_inputs` orders inputs by (system, key) code, so the sorted unique
    cells are its inputs in its order.
    """
    ccode, keys = factorize(data, args.cluster, "cluster")
    gcode, _ = factorize(data, args.by, "by")
    cells = np.unique(gcode * len(keys) + ccode)
    return cells % len(keys), keys, ccode


def _paired_positions(ins, key_of, keys, used, system) -> dict:
    """``{system code: (K,) input positions by key}``; refuse unpaired inputs."""
    n_keys, pos = len(keys), {}
    for g in used:
        at = np.full(n_keys, -1)
        mine = np.flatnonzero(ins.group == g)
        at[key_of[mine]] = mine
        pos[g] = at
    for g in used:
        hole = pos[g] < 0
        if not hole.any():
            continue
        k = int(np.argmax(hole))
        other = next(h for h in used if pos[h][k] >= 0)
        gold_there = bool(ins.labeled[pos[other][k]])
        what = "gold labels not in the judged set: " if gold_there else ""
        raise ValueError(
            f"{what}input {as_written(keys[k])} has rows for system {as_written(ins.groups[other])} but none for "
            f"{as_written(ins.groups[g])} ({int(hole.sum())} such inputs for it): "
            "ppi_compare pairs the systems on the same inputs; judge those inputs "
            f"for {as_written(ins.groups[g])} or drop them, e.g. keep the inputs every "
            f"system has (data.groupby(cluster).filter(lambda d: "
            f"d[{as_written(system)}].nunique() == {len(used)}))."
        )
    base = pos[used[0]]
    for g in used[1:]:
        unshared = ins.labeled[pos[g]] != ins.labeled[base]
        if unshared.any():
            k = int(np.argmax(unshared))
            has, lacks = (g, used[0]) if ins.labeled[pos[g][k]] else (used[0], g)
            raise ValueError(
                f"gold labels must be shared: {int(unshared.sum())} inputs (e.g. "
                f"{as_written(keys[k])}) have gold for system "
                f"{as_written(ins.groups[has])} but not for {as_written(ins.groups[lacks])}; the gap's "
                "correction needs both systems' gold on the same inputs: label "
                f"{as_written(ins.groups[lacks])} there too, or drop those labels."
            )
    return pos


def _differences(ins: _Inputs, pos, base: int, others, system: str) -> _Inputs:
    """Per-input differences ``other - baseline``, one group per other system."""
    b = pos[base]
    parts = [
        {
            name: getattr(ins, name)[pos[g]] - getattr(ins, name)[b]
            for name in ("y", "f_gold", "f_all")
        }
        for g in others
    ]
    groups = None
    if len(others) > 1:
        groups = pd.Index([ins.groups[g] for g in others], name=system)
    return _Inputs(
        group=np.repeat(np.arange(len(others)), len(b)),
        labeled=np.tile(ins.labeled[b], len(others)),
        f_all=np.concatenate([p["f_all"] for p in parts]),
        y=np.concatenate([p["y"] for p in parts]),
        f_gold=np.concatenate([p["f_gold"] for p in parts]),
        sums=np.zeros((len(b) * len(others), 4)),
        groups=groups,
        n_groups=len(others),
    )
