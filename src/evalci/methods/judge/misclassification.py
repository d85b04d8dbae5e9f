"""The Rogan-Gladen correction of a 0/1 judge's positive rate: :func:`rogan_gladen`.

See :mod:`evalci.methods.judge` (the public home, ``evalci.judge``) for how
rows become labeled and unlabeled inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.validate import check_number
from evalci._base.warnings import DegenerateDataWarning, warn
from evalci.methods.judge.inputs import (
    _Args,
    _counts,
    _group_sums,
    _Inputs,
    _inputs,
    _judge_iv,
    _where,
)
from evalci.methods.judge.intervals import _bootstrap, _JudgeResult, _percentile, _z

__all__ = ["RoganGladenResult", "rogan_gladen"]


RG_METHODS: tuple[str, ...] = ("delta", "bootstrap")


@dataclass(frozen=True, repr=False)
class RoganGladenResult(_JudgeResult):
    """A Rogan-Gladen corrected prevalence (one per group with ``by``).

    Attributes
    ----------
    estimate, low, high, standard_error : float or pandas.Series
        ``(observed + specificity - 1) / (sensitivity + specificity - 1)``
        clipped to [0, 1], its interval (clipped) and its SE (delta method,
        or the SD of the bootstrap replicates).
    n_labeled, n_unlabeled : int or pandas.Series
        Inputs with and without gold (``n_labeled`` is 0 when sensitivity
        and specificity were given).
    observed : float or pandas.Series
        The judge's positive rate (mean of per-input means) on the inputs it
        is computed from: the unlabeled ones when the rates are estimated
        from gold, every input when they are given.
    sensitivity, specificity : float or pandas.Series
        Given, or estimated on the gold rows: ``P(judge = 1 | gold = 1)`` and
        ``P(judge = 0 | gold = 0)``, rows pooled.
    method : {'delta', 'bootstrap'}
        The delta-method interval or the percentile bootstrap over inputs
        (see :func:`rogan_gladen`).
    confidence_level : float
        Two-sided level.
    groups : pandas.Index or None
        The groups (one per ``by`` value; a MultiIndex for several ``by``
        columns) that index each per-group Series; None without ``by``.
    """

    estimate: object
    low: object
    high: object
    standard_error: object
    n_labeled: object
    n_unlabeled: object
    observed: object
    sensitivity: object
    specificity: object
    method: str
    confidence_level: float
    groups: pd.Index | None = field(default=None, repr=False)

    _PER_GROUP = (
        "estimate",
        "low",
        "high",
        "standard_error",
        "n_labeled",
        "n_unlabeled",
        "observed",
        "sensitivity",
        "specificity",
    )
    _SETTINGS = ("confidence_level", "method")
    _NAME = "Rogan-Gladen"


def _rg_from_sums(s_lab, p, sens, spec):
    """Corrected prevalence (unclipped), vectorised; rates estimated if ``sens`` is None."""
    if sens is None:
        tp, pos, tn, neg = np.moveaxis(s_lab, -1, 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            sens, spec = tp / pos, tn / neg
    j = sens + spec - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(j > 0, (p + spec - 1) / j, np.nan), sens, spec


def _rg_variance(ins: _Inputs, theta, p, sens, spec, known: bool, obs_mask):
    """Delta-method variance (Greenland 1988, eq. 4), cluster-robust over inputs.

    ``Var = [Var p + theta^2 Var Se + (1 - theta)^2 Var Sp
    - 2 theta (1 - theta) Cov(Se, Sp)] / (Se + Sp - 1)^2``, with ``Var p``
    the plug-in variance of the mean of per-input means and the ratio
    variances from per-input residual sums, ``sum_i (tp_i - Se pos_i)^2 /
    P^2`` (``ddof=0``; at k=1 these are ``p(1-p)/N``, ``Se(1-Se)/n_1`` and
    ``Sp(1-Sp)/n_0``, and the covariance is 0).
    """
    G = ins.n_groups
    go, fo = ins.group[obs_mask], ins.f_all[obs_mask]
    n_obs = np.bincount(go, minlength=G)
    var_p = np.bincount(go, weights=(fo - p[go]) ** 2, minlength=G) / n_obs**2
    j = sens + spec - 1
    if known:
        return var_p / j**2
    lab = ins.labeled
    gl = ins.group[lab]
    tp, pos, tn, neg = ins.sums[lab].T
    r_se = tp - sens[gl] * pos
    r_sp = tn - spec[gl] * neg
    pos_t = np.bincount(gl, weights=pos, minlength=G)
    neg_t = np.bincount(gl, weights=neg, minlength=G)
    var_se = np.bincount(gl, weights=r_se**2, minlength=G) / pos_t**2
    var_sp = np.bincount(gl, weights=r_sp**2, minlength=G) / neg_t**2
    cov = np.bincount(gl, weights=r_se * r_sp, minlength=G) / (pos_t * neg_t)
    th = theta
    num = var_p + th**2 * var_se + (1 - th) ** 2 * var_sp - 2 * th * (1 - th) * cov
    return num / j**2


def rogan_gladen(
    data: pd.DataFrame,
    judge: str,
    cluster=None,
    *,
    gold: str | None = None,
    sensitivity=None,
    specificity=None,
    by=None,
    confidence_level: float = 0.95,
    method: str = "delta",
    n_resamples: int = 9999,
    rng=None,
) -> RoganGladenResult:
    """The true positive rate behind a 0/1 judge, corrected for its errors.

    The judge says 1 with probability
    ``p = Se * prevalence + (1 - Sp) * (1 - prevalence)``, so
    ``prevalence = (p + Sp - 1) / (Se + Sp - 1)`` (Rogan & Gladen 1978),
    clipped to [0, 1]. ``Se = P(judge = 1 | gold = 1)`` and
    ``Sp = P(judge = 0 | gold = 0)`` are either known (``sensitivity``,
    ``specificity``: then ``p`` is the judge's rate over every input) or
    estimated from the gold rows (``gold``: then ``p`` is the judge's rate
    over the unlabeled inputs, so that the two parts are independent). Valid
    when the judge errs at the same rates on every input.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, group]). Never modified.
    judge : str
        Column of the judge's 0/1 verdicts; no missing values.
    cluster : str or list of str, optional
        Column(s) identifying the input. ``None``: every row is an input.
    gold : str, optional
        Column of 0/1 gold labels, NaN on unlabeled rows. Give either
        ``gold`` or both ``sensitivity`` and ``specificity``.
    sensitivity, specificity : float, optional
        Known error rates of the judge, in [0, 1] with
        ``sensitivity + specificity > 1``.
    by : str or list of str, optional
        Column(s) to group by: one correction per group (rates estimated per
        group too).
    confidence_level : float
        Two-sided level.
    method : {'delta', 'bootstrap'}
        ``"delta"``: ``estimate +/- z SE`` with the delta-method SE of
        Greenland (1988) made cluster-robust (see the module docstring), then
        clipped to [0, 1]. ``"bootstrap"``: percentile interval of the
        clipped estimator over ``n_resamples`` resamples of the inputs
        (labeled and unlabeled drawn independently).
    n_resamples : int
        Bootstrap replicates (``method="bootstrap"`` only).
    rng : int, numpy.random.Generator or numpy.random.SeedSequence, optional
        Seed of the bootstrap (SPEC 7).

    Returns
    -------
    RoganGladenResult

    References
    ----------
    W. J. Rogan, B. Gladen (1978). Estimating prevalence from the results of
    a screening test. American Journal of Epidemiology 107(1), 71-76.
    S. Greenland (1988). Variance estimation for epidemiologic effect
    estimates under misclassification. Statistics in Medicine 7, 745-757.

    Examples
    --------
    A judge that passes 95% of correct answers and 30% of wrong ones:

    >>> import numpy as np, pandas as pd
    >>> from evalci.judge import rogan_gladen
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(2000) < 0.6
    >>> judge = np.where(truth, rng.random(2000) < 0.95, rng.random(2000) < 0.3)
    >>> df = pd.DataFrame({"judge": judge.astype(int)})
    >>> res = rogan_gladen(df, "judge", sensitivity=0.95, specificity=0.7)
    >>> print(f"{res.observed:.3f} -> {res.estimate:.3f} [{res.low:.3f}, {res.high:.3f}]")
    0.693 -> 0.605 [0.574, 0.636]
    """
    known = sensitivity is not None or specificity is not None
    if known == (gold is not None) or (
        known and (sensitivity is None or specificity is None)
    ):
        raise ValueError(
            "give either `gold` (a column of 0/1 gold labels, to estimate the "
            "judge's error rates) or both `sensitivity` and `specificity` (known "
            "rates), not both and not neither."
        )
    args = _judge_iv(
        data, judge, gold, cluster, by, confidence_level, method, RG_METHODS,
        n_resamples, binary=True,
    )  # fmt: skip
    ins = _inputs(data, args)
    n_lab, n_unl = _counts(ins, 1, 1, gold=not known)
    sens0 = spec0 = None
    if known:
        sens0 = check_number(sensitivity, "sensitivity", low=0, high=1)
        spec0 = check_number(specificity, "specificity", low=0, high=1)
        _useful_iv(sens0, spec0, "")
        n_lab, n_unl = np.zeros_like(n_lab), n_lab + n_unl
    obs = np.ones_like(ins.labeled) if known else ~ins.labeled
    p = _group_sums(ins.f_all[obs, None], ins.group[obs], ins.n_groups)[:, 0] / n_unl
    s_lab = _group_sums(ins.sums[ins.labeled], ins.group[ins.labeled], ins.n_groups)
    if not known:
        _rates_iv(s_lab, ins.groups)
    theta, sens, spec = _rg_from_sums(s_lab, p, sens0, spec0)
    sens, spec = np.broadcast_to(sens, p.shape), np.broadcast_to(spec, p.shape)
    if method == "delta":
        se = np.sqrt(_rg_variance(ins, theta, p, sens, spec, known, obs))
        z = _z(args.confidence_level)
        low, high = np.clip(theta - z * se, 0, 1), np.clip(theta + z * se, 0, 1)
    else:
        reps = _rg_bootstrap(ins, obs, sens0, spec0, args, rng)
        low, high, se = _percentile(reps, args.confidence_level)
    _warn_clipped(theta, p, spec, ins.groups)
    return RoganGladenResult._from_arrays(
        groups=ins.groups,
        estimate=np.clip(theta, 0, 1),
        low=low,
        high=high,
        standard_error=se,
        n_labeled=n_lab,
        n_unlabeled=n_unl,
        observed=p,
        sensitivity=sens,
        specificity=spec,
        method=method,
        confidence_level=args.confidence_level,
    )


def _rg_bootstrap(ins: _Inputs, obs, sens0, spec0, args: _Args, rng) -> np.ndarray:
    """Replicates of the clipped estimator: observed-rate inputs and gold inputs apart."""
    t_obs = np.column_stack([np.ones(int(obs.sum())), ins.f_all[obs]])
    parts = [(ins.group[obs], t_obs)]
    if sens0 is None:
        parts.append((ins.group[ins.labeled], ins.sums[ins.labeled]))

    def replicate(so, sl=None):
        est = _rg_from_sums(sl, so[:, 1] / so[:, 0], sens0, spec0)[0]
        return np.clip(est, 0, 1)

    return _bootstrap(parts, ins.n_groups, replicate, args.n_resamples, rng)


def _useful_iv(sens, spec, where: str) -> None:
    """Refuse ``sens + spec <= 1``: the judge then carries no information (or inverts)."""
    if sens + spec <= 1:
        raise ValueError(
            f"sensitivity + specificity must be > 1 for the Rogan-Gladen correction"
            f"{where}; got {sens:.4g} + {spec:.4g} = {sens + spec:.4g}. At 1 the "
            "judge's verdicts are independent of the truth; below 1 it is worse than "
            "chance (flip its verdicts)."
        )


def _rates_iv(s_lab: np.ndarray, groups) -> None:
    """Refuse gold without positives or negatives, and useless estimated rates."""
    tp, pos, tn, neg = s_lab.T
    for gi in range(len(pos)):
        where = _where(groups, gi)
        for n, what, rate in ((pos, "1", "sensitivity"), (neg, "0", "specificity")):
            if n[gi] == 0:
                raise ValueError(
                    f"no gold row is {what}{where}, so the judge's {rate} cannot be "
                    "estimated; label more inputs, or pass `sensitivity` and "
                    "`specificity` if they are known."
                )
        _useful_iv(
            tp[gi] / pos[gi], tn[gi] / neg[gi], f" (estimated on the gold rows{where})"
        )


def _warn_clipped(theta, p, spec, groups) -> None:
    """Warn where the unclipped correction falls outside [0, 1]."""
    out = (theta < 0) | (theta > 1)
    if out.any():
        gi = int(np.argmax(out))
        side = "below 1 - specificity" if theta[gi] < 0 else "above the sensitivity"
        warn(
            f"the judge's positive rate {p[gi]:.4g} is {side}{_where(groups, gi)}, so "
            f"the corrected prevalence {theta[gi]:.4g} lies outside [0, 1] and was "
            "clipped; the error rates may be wrong for these data (differential "
            "misclassification) or too few inputs were scored.",
            DegenerateDataWarning,
        )
