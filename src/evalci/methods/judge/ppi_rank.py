"""Prediction-powered Bradley-Terry ratings and rank sets: :func:`ppi_preference`.

An LLM judge gives a verdict on every battle (two models answer a prompt);
humans give theirs on a subset. Bradley-Terry fitted on the judge's
verdicts is biased by the judge's preferences (a favourite model, the first
position); fitted on the human subset alone it is noisy. Prediction-powered
inference (Angelopoulos et al. 2023; PPI++ for M-estimators) corrects the
judge's estimating equation by its error on the labelled battles, as
Chatzi et al. (2024) do for rankings of LLMs.

With ``x_i = e_a - e_b`` (battle ``i`` between models ``a`` and ``b``),
``s_i = expit(theta_a - theta_b)``, the judge's and the human's verdicts
``f_i, y_i`` (1: ``a`` won) and the Bradley-Terry scores
``g^f_i = x_i (f_i - s_i)``, ``g^y_i = x_i (y_i - s_i)``, ``theta`` solves::

    Psi(theta) = lam / N sum_{all i} g^f_i + sum_{labelled i} w_i (g^y_i - lam g^f_i) = 0

with ``w_i = 1 / (N pi_i)``: ``pi_i = n / N`` when the labelled battles are
a uniform random subset (then the second sum is ``1/n sum_L``), ``n_h /
N_h`` within each stratum (``strata=``), or known probabilities
(``probabilities=``). ``lam = 1`` is PPI, ``lam = 0`` Bradley-Terry on the
human verdicts alone. ``Psi`` is the gradient of a concave weighted
logistic log-likelihood (every battle's weight ``lam / N + R_i w_i (1 - lam)``
is >= 0), solved by Newton's method.

Covariance (sandwich): ``V = H^-1 M H^-1``, ``H = -dPsi/dtheta``. The meat
``M`` is over *clusters* (prompts: scores summed per prompt first). With
``U_c`` the judge scores of cluster ``c`` summed over all its battles and
``D_hc = sum (g^y - lam g^f)`` over its labelled battles of stratum ``h``
(``S`` the scatter about the mean)::

    M = lam^2 / N^2 S(U) + sum_h w_h^2 S_h(D) + lam / N sum_h w_h (S_h(U, D) + S_h(D, U))

The last term is the covariance of the two sums: the labelled battles are
among the ``N`` the judge term averages over (``ppi_py`` takes them as two
independent samples and leaves it out; with ``n << N`` it is small, with a
perfect judge and ``lam = 1`` it makes ``V`` the classical sandwich
exactly). With known probabilities (Poisson sampling) ``M = S(psi)`` of the
clusters' whole contributions ``psi_c``. ``lam`` (``tuned=True``)
minimises ``trace(H^-1 M(lam) H^-1)`` (``M`` is quadratic in ``lam``),
clipped to [0, 1], at the PPI (``lam = 1``) fit; then ``theta`` is refitted.

Rank sets: the rating differences are jointly normal with covariance from
``V``; simultaneous intervals on all ``G (G - 1) / 2`` differences (``max |t|``
critical value by simulation, or Bonferroni as Chatzi et al.); a model's
ranks run from ``1 + #(models surely better)`` to ``G - #(models surely
worse)``.

References
----------
Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I., Zrnic, T.
(2023). Prediction-powered inference. Science 382, 669-674.
Angelopoulos, A. N., Duchi, J. C., Zrnic, T. (2023). PPI++: Efficient
prediction-powered inference. arXiv:2311.01453.
Chatzi, I., Straitouri, E., Thejaswi, S., Gomez-Rodriguez, M. (2024).
Prediction-powered ranking of large language models. arXiv:2402.17826.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.lazy import special
from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_frame,
    check_level,
    check_number,
    check_option,
)
from evalci.engine.cube import factorize
from evalci.methods.judge.rank_sets import (
    RANK_METHODS,
    PPIRankResult,
    critical_value,
    rank_sets,
    result,
)
from evalci.methods.preference import WINNERS

__all__ = ["RANK_METHODS", "PPIRankResult", "ppi_preference"]

_TOL, _MAX_ITER = 1e-10, 100


# ===================================================================== input
@dataclass(frozen=True)
class _Data:
    """Battles as arrays (``y = 1``: ``model_a`` won)."""

    models: pd.Index
    a: np.ndarray
    b: np.ndarray
    yf: np.ndarray
    yh: np.ndarray  # 0 where unlabelled
    lab: np.ndarray  # bool
    unit: np.ndarray  # cluster code of each battle
    cell: np.ndarray  # (stratum, cluster) code of each battle
    cell_stratum: np.ndarray  # stratum of each cell
    cell_unit: np.ndarray  # cluster of each cell
    w: np.ndarray  # 1 / (N pi) on labelled battles, 0 elsewhere
    poisson: bool  # known probabilities: the meat of Poisson sampling

    @property
    def g(self) -> int:
        return len(self.models)


def _verdicts(col: pd.Series, name: str, missing: bool) -> np.ndarray:
    """1.0 where ``model_a`` won, 0.0 where ``model_b`` did, NaN if allowed."""
    y = col.map({"model_a": 1.0, "model_b": 0.0}).astype(float)
    bad = y.isna() & (col.notna() if missing else True)
    if bad.any():
        shown = ", ".join(as_written(v) for v in pd.unique(col[bad])[:5])
        ties = [w for w in WINNERS if w.startswith("tie")]
        raise ValueError(
            f"`{name}` holds verdicts that are not binary ({shown}; {int(bad.sum())} "
            f"battles); each must be 'model_a' or 'model_b'"
            + (" (NaN marks a battle without a human verdict)" if missing else "")
            + f". Bradley-Terry here has no ties ({', '.join(map(repr, ties))}): "
            "drop those battles first."
        )
    return y.to_numpy()


def _models(battles, model_a, model_b):
    for c in (model_a, model_b):
        if battles[c].isna().any():
            raise ValueError(
                f"`{c}`: {int(battles[c].isna().sum())} battles name no model."
            )
    both = pd.concat([battles[model_a], battles[model_b]], ignore_index=True).astype(
        str
    )
    codes, names = pd.factorize(both, sort=True)
    n = len(battles)
    a, b = codes[:n], codes[n:]
    if (a == b).any():
        raise ValueError(
            f"{int((a == b).sum())} battles pit a model against itself (first: "
            f"{as_written(names[a[a == b][0]])}); drop them."
        )
    return pd.Index(names, name="system"), a, b


def _read(battles, judge, human, model_a, model_b, cluster, strata, probabilities):
    """Validate the table; its arrays and the design (see :class:`_Data`)."""
    check_frame(battles, name="battles", rows=True)
    cluster_cols = as_columns(cluster, "cluster")
    extra = [strata] if strata is not None else []
    if isinstance(probabilities, str):
        extra.append(probabilities)
    check_columns(
        battles, [judge, human, model_a, model_b, *cluster_cols, *extra], "battles"
    )
    models, a, b = _models(battles, model_a, model_b)
    yf = _verdicts(battles[judge], "judge", missing=False)
    yh = _verdicts(battles[human], "human", missing=True)
    lab = ~np.isnan(yh)
    if not lab.any():
        raise ValueError(
            f"`human`: no battle has a human verdict in {as_written(human)} (all NaN); "
            "label a random subset of the battles (NaN marks the others)."
        )
    seen = np.bincount(np.r_[a[lab], b[lab]], minlength=len(models)) > 0
    if not seen.all():
        idle = ", ".join(map(repr, list(models[~seen])[:10]))
        raise ValueError(
            f"`human`: these models have no human-labelled battle ({idle}); their "
            "ratings would rest on the judge alone. Label some of their battles, or "
            "drop them from `battles`."
        )
    n = len(battles)
    unit = (
        factorize(battles, cluster_cols, "cluster")[0] if cluster_cols else np.arange(n)
    )
    stratum, w, poisson = _design(battles, lab, strata, probabilities)
    key = stratum * (int(unit.max()) + 1) + unit
    cell = np.unique(key, return_inverse=True)[1].reshape(-1)
    cell_stratum = np.zeros(int(cell.max()) + 1, np.int64)
    cell_stratum[cell] = stratum
    cell_unit = np.zeros_like(cell_stratum)
    cell_unit[cell] = unit
    return _Data(
        models, a, b, yf, np.nan_to_num(yh), lab, unit, cell, cell_stratum,
        cell_unit, w, poisson,
    )  # fmt: skip


def _design(battles, lab, strata, probabilities):
    """Each battle's stratum, weight ``1 / (N pi)`` (labelled) and the meat's form."""
    n_all = len(battles)
    stratum, names = (
        factorize(battles, [strata], "strata") if strata is not None
        else (np.zeros(n_all, np.int64), pd.Index([0]))
    )  # fmt: skip
    if probabilities is None:
        n_h = np.bincount(stratum[lab], minlength=len(names))
        if (n_h == 0).any():
            empty = ", ".join(as_written(s) for s in names[n_h == 0][:5])
            raise ValueError(
                f"`strata`: no human-labelled battle in the strata {empty}; label some "
                "battles in every stratum, or merge the strata."
            )
        pi = (n_h / np.bincount(stratum, minlength=len(names)))[stratum]
        return stratum, np.where(lab, 1.0 / (n_all * pi), 0.0), False
    if isinstance(probabilities, str):
        pi = pd.to_numeric(battles[probabilities], errors="coerce").to_numpy(float)
    elif isinstance(probabilities, dict) and strata is not None:
        unknown = set(names) - set(probabilities)
        if unknown:
            raise ValueError(
                f"`probabilities`: no probability for the strata "
                f"{', '.join(map(as_written, sorted(unknown, key=str)[:5]))}; give one per stratum."
            )
        pi = np.array([probabilities[s] for s in names], float)[stratum]
    else:
        raise TypeError(
            "`probabilities` must be a column name (each battle's probability of a "
            "human label) or a dict {stratum: probability} together with `strata=`."
        )
    if not (np.isfinite(pi) & (pi > 0) & (pi <= 1)).all():
        raise ValueError(
            "`probabilities`: every labelling probability must be a number in (0, 1]; "
            "fix the column (or dict) so that each battle has its probability."
        )
    return stratum, np.where(lab, 1.0 / (n_all * pi), 0.0), True


# ================================================================ estimator
def _weights(d: _Data, lam: float):
    """Per battle: the weight on ``-s`` and on the outcome in ``Psi``."""
    n_all = len(d.a)
    wt = lam / n_all + d.w * (1.0 - lam)
    out = lam / n_all * d.yf + d.w * (d.yh - lam * d.yf)
    return wt, out


def _solve(d: _Data, lam: float, ref: int, start=None) -> np.ndarray:
    """``theta`` (``theta[ref] = 0``) solving ``Psi = 0`` by damped Newton."""
    g = d.g
    wt, out = _weights(d, lam)
    key = d.a * g + d.b
    pairs = np.flatnonzero(np.bincount(key, minlength=g * g))
    i, j = pairs // g, pairs % g
    big_a = np.bincount(key, wt, minlength=g * g)[pairs]
    big_c = np.bincount(key, out, minlength=g * g)[pairs]
    free = np.arange(g) != ref
    theta = np.zeros(g) if start is None else start - start[ref]

    def objective(th):
        dd = th[i] - th[j]
        return float(big_c @ dd - big_a @ np.logaddexp(0.0, dd))

    for _ in range(_MAX_ITER):
        dd = theta[i] - theta[j]
        s = special.expit(dd)
        r = big_c - big_a * s
        grad = np.bincount(i, r, minlength=g) - np.bincount(j, r, minlength=g)
        hess = _pair_matrix(i, j, big_a * s * (1 - s), g)
        step = np.zeros(g)
        step[free] = np.linalg.lstsq(hess[np.ix_(free, free)], grad[free], rcond=None)[
            0
        ]
        f0, t = objective(theta), 1.0
        while objective(theta + t * step) < f0 - 1e-12 * (1 + abs(f0)) and t > 1e-10:
            t *= 0.5
        theta = theta + t * step
        if np.abs(t * step).max() < _TOL:
            return theta
    raise ValueError(
        "the prediction-powered Bradley-Terry equations have no finite solution on "
        "these battles (some model wins or loses every battle it plays, in the human "
        "or the judge verdicts); label more battles of the models concerned."
    )


def _pair_matrix(i, j, v, g) -> np.ndarray:
    """``sum_p v_p x_p x_p^T`` with ``x_p = e_i - e_j``."""
    out = np.zeros(g * g)
    np.add.at(out, i * g + i, v)
    np.add.at(out, j * g + j, v)
    np.add.at(out, i * g + j, -v)
    np.add.at(out, j * g + i, -v)
    return out.reshape(g, g)


def _sums(code, n_codes, d: _Data, r) -> np.ndarray:
    """``(n_codes, G)``: the scores ``x_i r_i`` summed per code."""
    g = d.g
    pos = np.bincount(code * g + d.a, r, minlength=n_codes * g)
    neg = np.bincount(code * g + d.b, r, minlength=n_codes * g)
    return (pos - neg).reshape(n_codes, g)


def _parts(d: _Data, theta) -> dict:
    """Per-cluster and per-cell score sums at ``theta`` (lam-free pieces)."""
    s = special.expit(theta[d.a] - theta[d.b])
    rf, rh = d.yf - s, np.where(d.lab, d.yh - s, 0.0)
    n_units, n_cells = int(d.unit.max()) + 1, len(d.cell_stratum)
    lab = d.lab.astype(float)
    parts = {
        "U": _sums(d.unit, n_units, d, rf),
        "Yc": _sums(d.cell, n_cells, d, rh * d.w),
        "Fc": _sums(d.cell, n_cells, d, rf * lab * d.w),
        "s": s,
    }
    if d.poisson:
        parts["Yu"] = _sums(d.unit, n_units, d, rh * d.w)
        parts["Fu"] = _sums(d.unit, n_units, d, rf * lab * d.w)
    else:
        has = np.bincount(d.cell, lab, minlength=n_cells) > 0
        parts["has"] = has
        parts["Uc"] = parts["U"][d.cell_unit]
    return parts


def _centre(x, groups, keep) -> np.ndarray:
    """Rows of ``x`` where ``keep``, centred within their group."""
    x, grp = x[keep], groups[keep]
    n = np.bincount(grp)
    means = (
        np.stack([np.bincount(grp, col) for col in x.T], axis=1)
        / np.maximum(n, 1)[:, None]
    )
    return x - means[grp]


def _meat(d: _Data, p: dict, lam: float) -> np.ndarray:
    """The variance of ``Psi`` at ``lam`` (module docstring)."""
    n_all = len(d.a)
    if d.poisson:
        psi = lam / n_all * p["U"] + p["Yu"] - lam * p["Fu"]
        psi = psi - psi.mean(axis=0)
        return psi.T @ psi
    u = p["U"] - p["U"].mean(axis=0)
    has, grp = p["has"], d.cell_stratum
    # w_h per cell: the labelled part's sums already carry w, so D is w_h D_hc
    dd = _centre(p["Yc"] - lam * p["Fc"], grp, has)
    uc = _centre(p["Uc"], grp, has)
    cross = uc.T @ dd
    return lam**2 / n_all**2 * (u.T @ u) + dd.T @ dd + lam / n_all * (cross + cross.T)


def _bread(d: _Data, theta, s, lam) -> np.ndarray:
    wt, _ = _weights(d, lam)
    return _pair_matrix(d.a, d.b, wt * s * (1 - s), d.g)


def _covariance(d: _Data, theta, lam, ref) -> np.ndarray:
    """``V = H^-1 M H^-1`` of ``theta`` (the reference's row and column 0)."""
    p = _parts(d, theta)
    free = np.arange(d.g) != ref
    h_inv = np.linalg.inv(_bread(d, theta, p["s"], lam)[np.ix_(free, free)])
    out = np.zeros((d.g, d.g))
    out[np.ix_(free, free)] = h_inv @ _meat(d, p, lam)[np.ix_(free, free)] @ h_inv
    return out


def _tune(d: _Data, theta, ref) -> float:
    """PPI++'s ``lam``: the minimiser of ``trace(H^-1 M(lam) H^-1)`` in [0, 1]."""
    if d.lab.all():
        return 0.0  # the judge adds nothing when every battle has a human verdict
    p = _parts(d, theta)
    free = np.arange(d.g) != ref
    n_all = len(d.a)
    h = _pair_matrix(d.a, d.b, p["s"] * (1 - p["s"]) / n_all, d.g)
    h_inv = np.linalg.inv(h[np.ix_(free, free)])

    def tr(lam):
        return np.trace(h_inv @ _meat(d, p, lam)[np.ix_(free, free)] @ h_inv)

    m0, m1, m_1 = tr(0.0), tr(1.0), tr(-1.0)
    slope, curve = (m1 - m_1) / 2, (m1 + m_1) / 2 - m0
    if curve <= 0:
        return 1.0 if m1 < m0 else 0.0
    return float(np.clip(-slope / (2 * curve), 0.0, 1.0))


# ============================================================== entry point
def _scale_matrix(g, ref, anchor, scale, base) -> np.ndarray:
    """``L`` with ``rating - anchor_score = L @ theta`` (anchored or centred)."""
    k = scale / np.log(base)
    zero = np.zeros((g, g))
    zero[:, ref] = 1.0 if anchor is not None else 0.0
    if anchor is None:
        zero[:] = 1.0 / g
    return k * (np.eye(g) - zero)


def _anchor(d: _Data, anchor) -> int:
    if anchor is None:
        return 0
    if anchor not in d.models:
        raise ValueError(
            f"`anchor`: {as_written(anchor)} plays no battle here; name one of the "
            f"models ({', '.join(map(repr, list(d.models[:5])))}), or anchor=None to "
            "centre the ratings."
        )
    return int(d.models.get_loc(anchor))


def _effective_n(d: _Data, cov, lmat, ref) -> tuple[np.ndarray, float]:
    """Per model and overall ``n * Var_human / Var`` (NaN without a human-only fit)."""
    n = int(d.lab.sum())
    try:
        theta0 = _solve(d, 0.0, ref)
    except (ValueError, np.linalg.LinAlgError):
        return np.full(d.g, np.nan), float("nan")
    v0 = lmat @ _covariance(d, theta0, 0.0, ref) @ lmat.T
    v, v0 = np.diag(cov), np.diag(v0)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(v > 0, n * v0 / v, np.nan)
    return per, float(n * v0.sum() / v.sum())


def ppi_preference(
    battles: pd.DataFrame,
    *,
    judge: str = "judge_winner",
    human: str = "winner",
    model_a: str = "model_a",
    model_b: str = "model_b",
    cluster="question_id",
    confidence_level: float = 0.95,
    tuned: bool = True,
    lam: float | None = None,
    strata: str | None = None,
    probabilities=None,
    rank_method: str = "max-t",
    anchor: str | None = None,
    anchor_score: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    rng=0,
) -> PPIRankResult:
    """Bradley-Terry ratings and rank sets from a judge's verdicts corrected by human ones.

    The estimator, its sandwich covariance and the rank sets are in
    :mod:`evalci.methods.judge.ppi_rank`: the judge's Bradley-Terry
    estimating equation over all battles, corrected by ``human - judge`` on
    the labelled ones (PPI; PPI++'s weight ``lam`` with ``tuned=True``).
    Unbiased for the ratings the human verdicts estimate, whatever the
    judge's bias, when the labelled battles are a random sample (uniform,
    within strata, or with known probabilities).

    Parameters
    ----------
    battles : pandas.DataFrame
        One row per battle. Never modified.
    judge, human : str
        Columns of the judge's and the human's verdicts, each ``'model_a'``
        or ``'model_b'`` (evalci's ``winner`` values; no ties). ``human`` is
        NaN on the battles without a human verdict.
    model_a, model_b : str
        Columns naming the two models.
    cluster : str, list of str or None
        Battles sharing it (the prompt) are one cluster: scores are summed
        per cluster before the variances. None: battles independent.
    confidence_level : float
        Of each rating's (marginal) interval and of the rank sets
        (simultaneous over all pairs).
    tuned : bool
        Power-tune ``lam`` (PPI++); False: ``lam = 1`` (PPI).
    lam : float, optional
        A fixed weight in [0, 1] (overrides ``tuned``; 0 is human only).
    strata : str, optional
        Column of each battle's stratum: the labelled battles are a uniform
        sample within each stratum (probability ``n_h / N_h``), and weigh
        ``1 / pi``.
    probabilities : str or dict, optional
        Known labelling probabilities (Poisson sampling): a column with each
        battle's, or ``{stratum: probability}`` with ``strata=``.
    rank_method : {'max-t', 'bonferroni'}
        Simultaneous intervals on the differences: the ``max |t|`` quantile of
        the estimated joint normal (by simulation; seeded by ``rng``), or
        Bonferroni over the ``G (G - 1) / 2`` pairs (Chatzi et al.).
    anchor, anchor_score, scale, base
        The Elo-like scale of :func:`evalci.preference.preference_ci`:
        ``rating = anchor_score + scale * log_base(pi / pi_anchor)``; no
        anchor: the mean rating is ``anchor_score``.
    rng : int or numpy.random.Generator
        Seeds the ``max |t|`` simulation.

    Returns
    -------
    PPIRankResult

    Examples
    --------
    >>> import numpy as np, evalci
    >>> from evalci.judge import ppi_preference
    >>> b = evalci.preference.simulate_battles(
    ...     {"a": 0.6, "b": 0.0, "c": -0.6}, n_prompts=2000, prompt_sd=0.5, rng=1)
    >>> r = np.random.default_rng(0)
    >>> fav = (b.model_a == "c") | (b.model_b == "c")    # the judge favours c
    >>> flip = r.random(len(b)) < np.where(fav, 0.3, 0.1)
    >>> other = b.winner.map({"model_a": "model_b", "model_b": "model_a"})
    >>> b["judge_winner"] = b.winner.where(~flip, other)
    >>> b["winner"] = b.winner.where(r.random(len(b)) < 0.1)   # 10% labelled
    >>> res = ppi_preference(b, anchor="b")
    >>> res.table[["system", "rank_low", "rank_high"]]
      system  rank_low  rank_high
    0      a         1          1
    1      b         2          2
    2      c         3          3
    """
    level = check_level(confidence_level)
    check_option(rank_method, "rank_method", RANK_METHODS)
    if anchor is not None and not isinstance(anchor, str):
        raise TypeError(
            f"`anchor` must be a model name or None; got {as_written(anchor)}."
        )
    scale = check_number(scale, "scale", low=0, low_open=True, hint=", e.g. 400")
    base = check_number(base, "base", low=1, low_open=True, hint=", e.g. 10")
    anchor_score = check_number(anchor_score, "anchor_score")
    if lam is not None:
        lam = check_number(lam, "lam", low=0, high=1, hint=", e.g. 1 (PPI) or 0.5")
    d = _read(battles, judge, human, model_a, model_b, cluster, strata, probabilities)
    ref = _anchor(d, anchor)
    if lam is None:
        lam = _tune(d, _solve(d, 1.0, ref), ref) if tuned else 1.0
    theta = _solve(d, lam, ref)
    cov_t = _covariance(d, theta, lam, ref)
    lmat = _scale_matrix(d.g, ref, anchor, scale, base)
    cov = lmat @ cov_t @ lmat.T
    crit = critical_value(cov_t, level, rank_method, rng)
    low_rank, high_rank = rank_sets(theta, cov_t, crit)
    per_n, n_eff = _effective_n(d, cov, lmat, ref)
    return result(d, theta, lmat, anchor_score, cov, level, (low_rank, high_rank),
                   per_n, n_eff, lam, rank_method, crit)  # fmt: skip
