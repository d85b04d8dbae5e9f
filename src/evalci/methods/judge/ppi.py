"""Prediction-powered inference for a mean with PPI++'s tuned weight: :func:`ppi_mean`.

See :mod:`evalci.methods.judge` (the public home, ``evalci.judge``) for how
rows become labeled and unlabeled inputs.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_number
from evalci._base.warnings import (
    FEW_INPUTS,
    DegenerateDataWarning,
    FewClustersWarning,
    warn,
)
from evalci.methods.judge.design import (
    _cell_counts,
    _combine,
    _Design,
    _design_iv,
    _effective_n,
    _gold_judged_iv,
    _input_index,
    _ipw_cells,
    _strata_table,
)
from evalci.methods.judge.inputs import (
    _counts,
    _group_sums,
    _Inputs,
    _inputs,
    _judge_iv,
    _where,
)
from evalci.methods.judge.intervals import _bootstrap, _JudgeResult, _percentile, _z

__all__ = ["PPIResult", "ppi_mean"]


PPI_METHODS: tuple[str, ...] = ("clt", "bootstrap")

#: Coverage of PPI++'s 95% interval (``method="clt"``, ``lam="auto"``) by the
#: number of gold-labeled inputs, measured by a seeded simulation (2,000
#: trials each, 1,000 unlabeled inputs, a 0/1 outcome at rate 0.6 and a 0/1
#: judge of sensitivity 0.9, specificity 0.7; docs/judges.md has the table
#: and a continuous judge, which covered a little more). With 60, 75 and
#: 100 labeled inputs it covered 94.0-94.6% (each figure's SE is 0.5%).
PPI_COVERAGE: tuple[tuple[int, float], ...] = (
    (15, 0.853),
    (20, 0.896),
    (30, 0.9275),
    (40, 0.9305),
    (50, 0.9375),
)
#: Below this many labeled inputs the measured coverage was under 94%.
PPI_FEW_GOLD = 60


@dataclass(frozen=True, repr=False)
class PPIResult(_JudgeResult):
    """A prediction-powered (PPI++) interval for a mean (one per group with ``by``).

    Attributes
    ----------
    estimate, low, high, standard_error : float or pandas.Series
        ``lam * mean_U(f) + mean_L(Y - lam f)``, the interval and its SE
        (for ``method="bootstrap"`` the SD of the replicates).
    n_labeled, n_unlabeled : int or pandas.Series
        Inputs with and without gold labels.
    lam : float or pandas.Series
        The weight on the judge: PPI++'s power-tuned value (clipped to
        [0, 1]) or the one given. 0 ignores the judge (gold only), 1 is the
        original PPI. NaN with ``strata`` (each stratum has its own: see
        ``strata``).
    effective_n : float or pandas.Series
        ``n_labeled * V_gold / V``: the gold labels a gold-only interval
        would need for the same width, where ``V`` is the estimator's
        plug-in variance (``standard_error**2`` for ``method="clt"``) and
        ``V_gold`` the plug-in variance of the gold-only estimate on the same
        labels (``lam = 0``: ``Var_L(Y) / n``, ``ddof=0``; with ``strata`` or
        ``label_prob`` the same design's ``lam = 0`` variance). Both are the
        plug-in variances whatever the ``method``.
    method : {'clt', 'bootstrap'}
        The normal interval with the plug-in SE, or the percentile bootstrap
        over inputs (see :func:`ppi_mean`).
    confidence_level : float
        Two-sided level.
    groups : pandas.Index or None
        The groups (one per ``by`` value; a MultiIndex for several ``by``
        columns) that index each per-group Series; None without ``by``.
    strata : pandas.DataFrame or None
        With ``strata=``: one row per (group, stratum) with its ``share``,
        ``n_labeled``, ``n_unlabeled``, ``estimate``, ``standard_error``,
        ``lam`` and ``neyman_share`` (the share of the next gold labels that
        minimises the variance, ``share * SD(Y - lam f)`` normalised); None
        without.
    """

    estimate: object
    low: object
    high: object
    standard_error: object
    n_labeled: object
    n_unlabeled: object
    lam: object
    effective_n: object
    method: str
    confidence_level: float
    groups: pd.Index | None = field(default=None, repr=False)
    strata: pd.DataFrame | None = field(default=None, repr=False)

    _PER_GROUP = (
        "estimate",
        "low",
        "high",
        "standard_error",
        "n_labeled",
        "n_unlabeled",
        "lam",
        "effective_n",
    )
    _SETTINGS = ("confidence_level", "method")
    _NAME = "PPI++"


def _ppi_stats(ins: _Inputs, shift_y: np.ndarray, shift_f: np.ndarray):
    """Per-input statistics whose sums give PPI++ (shifted to keep moments exact).

    Labeled: ``[1, y, f, y^2, f^2, y f]``; unlabeled: ``[1, f, f^2]``. The
    estimator is shift-equivariant (``theta(y + a, f + b) = theta + a``) and
    lam and the variances are shift-invariant, so centring at each group's
    means costs nothing and avoids cancellation in ``sum f^2 - (sum f)^2 / n``.
    """
    lab = ins.labeled
    y = ins.y[lab] - shift_y[ins.group[lab]]
    fl = ins.f_gold[lab] - shift_f[ins.group[lab]]
    fu = ins.f_all[~lab] - shift_f[ins.group[~lab]]
    t_lab = np.column_stack([np.ones_like(y), y, fl, y * y, fl * fl, y * fl])
    t_unl = np.column_stack([np.ones_like(fu), fu, fu * fu])
    return t_lab, t_unl


def _ppi_from_sums(s_lab: np.ndarray, s_unl: np.ndarray, lam):
    """PPI++ estimate, SE and lam from summed statistics, vectorised over (...).

    With ``n`` labeled and ``N`` unlabeled inputs (Angelopoulos, Duchi & Zrnic
    2023, Example 6.1 and eq. 6):

    * ``lam* = Cov(Y, f) / ((1 + n/N) Var(f))``, clipped to [0, 1], with
      ``Cov`` over the labeled inputs (``ddof=0``) and ``Var`` over all
      inputs' judge means (``ddof=1``) -- ``ppi_py``'s ``_calc_lam_glm``;
    * ``theta = lam mean_U(f) + mean_L(Y - lam f)``;
    * ``SE^2 = lam^2 Var_U(f) / N + Var_L(Y - lam f) / n`` (``ddof=0``).
    """
    n, sy, sf, syy, sff, syf = np.moveaxis(s_lab, -1, 0)
    N, su, suu = np.moveaxis(s_unl, -1, 0)
    my, mf, mu = sy / n, sf / n, su / N
    var_y, var_f, var_u = syy / n - my**2, sff / n - mf**2, suu / N - mu**2
    cov = syf / n - my * mf
    if lam is None:
        m_all = (sf + su) / (n + N)
        var_all = (sff + suu - (n + N) * m_all**2) / (n + N - 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            lam = np.clip(cov / ((1 + n / N) * var_all), 0.0, 1.0)
        lam = np.where(var_all > 0, lam, 0.0)  # a constant judge carries nothing
    lam = np.broadcast_to(np.asarray(lam, dtype=float), np.shape(n))
    theta = lam * mu + my - lam * mf
    var_rect = var_y - 2 * lam * cov + lam**2 * var_f
    var = lam**2 * np.maximum(var_u, 0) / N + np.maximum(var_rect, 0) / n
    return theta, np.sqrt(var), lam


def ppi_mean(
    data: pd.DataFrame,
    judge: str,
    gold: str,
    cluster=None,
    *,
    by=None,
    confidence_level: float = 0.95,
    lam="auto",
    method: str = "clt",
    n_resamples: int = 9999,
    rng=None,
    strata: str | None = None,
    shares=None,
    label_prob: str | None = None,
) -> PPIResult:
    """Interval for the true mean score from judge scores and a gold subset (PPI++).

    Every row has a judge score; rows of the labeled inputs also have a gold
    score. With ``n`` labeled and ``N`` unlabeled inputs, ``Y_i`` and
    ``f_i`` the per-input gold and judge means (see the module docstring for
    how rows pair), the prediction-powered estimate is
    ``theta = lam * mean_U(f) + mean_L(Y - lam * f)``: the judge's mean,
    corrected by its average error on the labeled inputs. It is unbiased for
    any ``lam`` when the labeled inputs are a random sample; PPI++'s ``lam``
    minimises its variance, so it is never (asymptotically) wider than the
    gold-only interval (``lam=0``).

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, group]). Never modified.
    judge : str
        Column of the judge's scores (any numbers); no missing values.
    gold : str
        Column of the gold scores, on the same scale; NaN on unlabeled rows.
    cluster : str or list of str, optional
        Column(s) identifying the input (its rows are its runs). ``None``:
        every row is its own input (k=1).
    by : str or list of str, optional
        Column(s) to group by (e.g. ``"system"``): one interval per group,
        each with its own ``lam``.
    confidence_level : float
        Two-sided level, e.g. 0.95.
    lam : "auto" or float
        ``"auto"``: PPI++'s power-tuned weight,
        ``Cov(Y, f) / ((1 + n/N) Var(f))`` clipped to [0, 1]. A number fixes
        it: 1 is the original PPI (Angelopoulos et al. 2023), 0 the gold-only
        (classical) interval.
    method : {'clt', 'bootstrap'}
        ``"clt"``: ``theta +/- z SE`` with
        ``SE^2 = lam^2 Var_U(f) / N + Var_L(Y - lam f) / n`` (plug-in
        variances over inputs, ``ppi_py``'s ``ppi_mean_ci``; ``lam`` treated
        as fixed). ``"bootstrap"``: percentile interval of the same
        estimator (``lam`` re-tuned in each replicate) over ``n_resamples``
        cluster resamples, labeled and unlabeled inputs drawn independently.
    n_resamples : int
        Bootstrap replicates (``method="bootstrap"`` only).
    rng : int, numpy.random.Generator or numpy.random.SeedSequence, optional
        Seed of the bootstrap (SPEC 7).
    strata : str, optional
        Column naming each input's stratum (constant within an input):
        stratified PPI. Each stratum ``h`` gets its own PPI++ estimate
        ``theta_h`` with its own power-tuned ``lam_h`` (the strata are
        independent, so tuning each for its own variance minimises the
        total), and ``theta = sum_h W_h theta_h``,
        ``SE^2 = sum_h W_h^2 SE_h^2``. Every stratum with a positive share
        needs at least 2 labeled inputs; a fully labeled stratum is its
        gold mean (``lam_h = 0``). ``method="clt"`` only.
    shares : dict or pandas.Series, optional
        With ``strata``: the population share ``W_h`` of each stratum (they
        sum to 1). Default: each stratum's share of the judged inputs (of
        its group), right when the judged inputs are the population or a
        random sample of it.
    label_prob : str, optional
        Column of each input's probability of having been labeled (in
        (0, 1], constant within an input; NaN allowed on unlabeled inputs),
        for non-uniform or active labelling; inputs labeled independently.
        The estimate becomes ``lam * mean_all(f) + H(Y - lam f)``: the
        judge's mean over every input corrected by the inverse-probability
        (Horvitz-Thompson weights ``1 / label_prob``, normalised: Hajek)
        mean of its error on the labeled inputs, with the influence-function
        SE over inputs and ``lam`` minimising it (see
        :mod:`evalci.methods.judge.design`). ``method="clt"`` only.
        With ``strata`` each stratum is weighted so.

    Returns
    -------
    PPIResult
        ``estimate``, ``low``, ``high``, ``standard_error``, ``n_labeled``,
        ``n_unlabeled``, ``lam``, ``effective_n`` (Series by group with
        ``by``), and ``strata`` (a table by stratum) with ``strata``.

    See Also
    --------
    ppi_compare : the gap between two systems with shared gold labels.
    rogan_gladen : the correction of a 0/1 judge by its error rates.

    References
    ----------
    A. N. Angelopoulos, J. C. Duchi, T. Zrnic (2023). PPI++: Efficient
    prediction-powered inference. arXiv:2311.01453.
    A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic
    (2023). Prediction-powered inference. Science 382, 669-674.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evalci.judge import ppi_mean
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2000) < 0.6                      # true outcomes
    >>> judge = np.where(truth, rng.random(2000) < 0.95, rng.random(2000) < 0.3)
    >>> gold = np.where(np.arange(2000) < 200, truth, np.nan)  # 200 labeled
    >>> df = pd.DataFrame({"judge": judge.astype(int), "gold": gold})
    >>> print(f"truth {truth.mean():.3f}, judge alone {df.judge.mean():.3f}")
    truth 0.605, judge alone 0.693
    >>> res = ppi_mean(df, "judge", "gold")
    >>> print(f"{res.estimate:.3f} [{res.low:.3f}, {res.high:.3f}] lam={res.lam:.2f}")
    0.556 [0.504, 0.608] lam=0.67
    """
    if gold is None:
        raise ValueError(
            "`gold` is required: the column of gold scores (NaN where unlabeled)."
        )
    _gold_judged_iv(data, judge, gold)
    args = _judge_iv(
        data, judge, gold, cluster, by, confidence_level, method, PPI_METHODS,
        n_resamples, binary=False,
    )  # fmt: skip
    lam = _lam_iv(lam)
    ins = _inputs(data, args)
    if strata is not None or shares is not None or label_prob is not None:
        design = _mean_design(data, args, ins, strata, shares, label_prob)
        return PPIResult._from_arrays(**_ppi_cells(ins, design, lam, args))
    n_lab, n_unl = _counts(ins, 2, 1, gold=True)
    lab = ins.labeled
    shift_y = _group_sums(ins.y[lab, None], ins.group[lab], ins.n_groups)[:, 0] / n_lab
    shift_f = _group_sums(ins.f_all[:, None], ins.group, ins.n_groups)[:, 0] / (
        n_lab + n_unl
    )
    t_lab, t_unl = _ppi_stats(ins, shift_y, shift_f)
    s_lab = _group_sums(t_lab, ins.group[lab], ins.n_groups)
    s_unl = _group_sums(t_unl, ins.group[~lab], ins.n_groups)
    if method == "clt":
        _warn_few_gold(n_lab, ins.groups)
    theta, se, lam_hat = _ppi_from_sums(s_lab, s_unl, lam)
    n, sy, syy = s_lab[:, 0], s_lab[:, 1], s_lab[:, 3]
    effective_n = _effective_n(n_lab, (syy / n - (sy / n) ** 2) / n, se**2)
    if method == "clt":
        z = _z(args.confidence_level)
        low, high = theta - z * se, theta + z * se
    else:

        def replicate(sl, su):
            return _ppi_from_sums(sl, su, lam)[0]

        parts = [(ins.group[lab], t_lab), (ins.group[~lab], t_unl)]
        reps = _bootstrap(parts, ins.n_groups, replicate, args.n_resamples, rng)
        low, high, se = _percentile(reps, args.confidence_level)
    if np.any(se == 0):
        warn(
            "the standard error is zero (every labeled input has the same gold and "
            "judge score, and the judge is constant): the interval has zero width.",
            DegenerateDataWarning,
        )
    return PPIResult._from_arrays(
        groups=ins.groups,
        estimate=theta + shift_y,
        low=low + shift_y,
        high=high + shift_y,
        standard_error=se,
        n_labeled=n_lab,
        n_unlabeled=n_unl,
        lam=lam_hat,
        effective_n=effective_n,
        method=method,
        confidence_level=args.confidence_level,
    )


def _mean_design(data, args, ins, strata, shares, label_prob) -> _Design:
    """The design of :func:`ppi_mean` with ``strata`` or ``label_prob``."""
    if args.method != "clt":
        raise ValueError(
            "`strata` and `label_prob` take method='clt' (the design's normal "
            "interval); the bootstrap does not resample by design yet."
        )
    index = _input_index(data, args.cluster, args.by)
    return _design_iv(
        data, strata, shares, label_prob, index, len(ins.group), ins.labeled,
        ins.groups,
    )  # fmt: skip


def _ppi_cells(ins: _Inputs, design: _Design, lam, args) -> dict:
    """PPI per (group, stratum) cell, combined by share: a result's fields.

    Without ``label_prob`` each cell is PPI++ (:func:`_split_cells`), with it
    the IPW estimator (:func:`evalci.methods.judge.design._ipw_cells`).
    """
    _counts(ins, 2, 1, gold=True)  # per group; strata are checked per cell
    n_strata = len(design.shares)
    n_lab, n_unl = _cell_counts(
        design, ins.group, ins.labeled, ins.n_groups, ins.groups
    )
    cell = ins.group * n_strata + design.stratum
    n_cells = ins.n_groups * n_strata
    with np.errstate(invalid="ignore", divide="ignore"):
        if design.w is None:
            theta, var, var_gold, lam_c, sd = _split_cells(ins, cell, n_cells, lam)
        else:
            theta, var, var_gold, lam_c, sd = _ipw_cells(
                ins.y, ins.f_gold, ins.f_all, ins.labeled, design.w, cell, n_cells,
                lam,
            )  # fmt: skip
    est, v, v_gold = _combine(theta, var, var_gold, design.shares, ins.n_groups)
    se, z = np.sqrt(v), _z(args.confidence_level)
    table = None
    if design.strata is not None:
        table = _strata_table(
            design, ins.groups, n_lab, n_unl, theta, np.sqrt(var), lam_c, sd
        )
    if np.any(se == 0):
        warn("the standard error is zero: the interval has zero width.",
             DegenerateDataWarning)  # fmt: skip
    n_lab, n_unl = n_lab.sum(axis=1), n_unl.sum(axis=1)
    return dict(
        groups=ins.groups,
        estimate=est,
        low=est - z * se,
        high=est + z * se,
        standard_error=se,
        n_labeled=n_lab,
        n_unlabeled=n_unl,
        lam=lam_c if n_strata == 1 else np.full(ins.n_groups, np.nan),
        effective_n=_effective_n(n_lab, v_gold, v),
        method=args.method,
        confidence_level=args.confidence_level,
        strata=table,
    )


def _split_cells(ins: _Inputs, cell: np.ndarray, n_cells: int, lam):
    """PPI++ per cell: ``theta``, ``var``, ``var_gold``, ``lam``, rectifier SD.

    A cell without unlabeled inputs (a fully labeled stratum) is its gold
    mean: ``lam = 0``, ``var = Var_L(Y) / n``.
    """
    lab = ins.labeled
    n = np.bincount(cell[lab], minlength=n_cells)
    m = np.bincount(cell, minlength=n_cells)
    shift_y = np.bincount(cell[lab], weights=ins.y[lab], minlength=n_cells) / n
    shift_f = np.bincount(cell, weights=ins.f_all, minlength=n_cells) / m
    by_cell = dataclasses.replace(ins, group=cell, n_groups=n_cells)
    t_lab, t_unl = _ppi_stats(by_cell, np.nan_to_num(shift_y), shift_f)
    s_lab = _group_sums(t_lab, cell[lab], n_cells)
    s_unl = _group_sums(t_unl, cell[~lab], n_cells)
    none = s_unl[:, 0] == 0
    s_unl[none, 0] = 1  # sums stay 0: mean_U(f) = 0, weighted by lam = 0 below
    lam_c = np.where(none, 0.0, _ppi_from_sums(s_lab, s_unl, lam)[2])
    theta, se, _ = _ppi_from_sums(s_lab, s_unl, lam_c)
    n, sy, sf, syy, sff, syf = s_lab.T
    var_y = syy / n - (sy / n) ** 2
    rect = (
        var_y
        - 2 * lam_c * (syf / n - sy * sf / n**2)
        + lam_c**2 * (sff / n - (sf / n) ** 2)
    )
    return theta + shift_y, se**2, var_y / n, lam_c, np.sqrt(np.maximum(rect, 0))


def _warn_few_gold(n_lab: np.ndarray, groups) -> None:
    """Warn below :data:`PPI_FEW_GOLD` labeled inputs, with the measured coverage
    (``method="clt"``; the bootstrap's was not measured).

    Fewer than ``FEW_INPUTS`` already warn (:func:`_counts`); between that and
    PPI_FEW_GOLD the interval is computed as ppi_py computes it, and the
    user is told what it covered in the simulation at that many gold labels.
    """
    few = (n_lab >= FEW_INPUTS) & (n_lab < PPI_FEW_GOLD)
    if not few.any():
        return
    gi = int(np.argmax(few))
    n = int(n_lab[gi])
    # the measured size at or below n (the smallest measured one below it)
    at, cov = max([(m, c) for m, c in PPI_COVERAGE if m <= n] or [PPI_COVERAGE[0]])
    warn(
        f"only {n} labeled inputs{_where(groups, gi)}: in a seeded simulation "
        f"PPI++'s 95% interval covered the truth {cov:.1%} of the time with {at} "
        f"gold labels, and under 94% below {PPI_FEW_GOLD} (docs/judges.md, "
        "'Few gold labels'); label more inputs, or take the interval as a little "
        "narrower than its level says.",
        FewClustersWarning,
    )


def _lam_iv(lam):
    """``"auto"`` -> None (tune), else a finite float."""
    if isinstance(lam, str) and lam == "auto":
        return None
    if isinstance(lam, str) or not isinstance(lam, numbers.Real):
        raise ValueError(
            f"`lam` must be 'auto' (PPI++'s tuned weight) or a number, e.g. 1 for "
            f"the original PPI or 0 for gold only; got {as_written(lam)}."
        )
    # |lam| <= 1000 keeps lam^2 times the scores' sums finite (judge_inputs'
    # _scale_iv); PPI++ tunes it within [0, 1]
    return check_number(
        lam, "lam", low=-1000, high=1000, hint=", e.g. 1 for the original PPI"
    )
