"""Restricted maximum likelihood (REML) for crossed random effects.

The model is ``y = X beta + Z_1 u_1 + ... + Z_m u_m + e`` with independent
``u_k ~ N(0, sigma2_k I)`` (one coefficient per level of effect ``k``: an
input, a template, a judge, an interaction) and ``e ~ N(0, sigma2_e I)``.
With ``gamma_k = sigma2_k / sigma2_e`` and ``Lambda`` the diagonal of
``sqrt(gamma)`` per level, Henderson's mixed-model equations in the scaled
form

    M = [[X'X, X'Z Lambda], [Lambda Z'X, Lambda Z'Z Lambda + I]]

give ``log|H| + log|X'H^-1 X| = log|M|`` (``H = I + Z Gamma Z'``) and
``y'P y = y'y - r'M^-1 r`` with ``r = [X'y; Lambda Z'y]``, so ``sigma2_e``
is profiled out and only a ``(p + q)``-square matrix is factored (``q`` the
total number of levels), never an ``n``-square one. The block of the effect
with the most levels is diagonal and is eliminated first, so only the other
levels enter the dense Cholesky factor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RemlFit", "reml"]

_LOG_LO, _LOG_HI = np.log(1e-10), np.log(1e8)


@dataclass(frozen=True)
class RemlFit:
    """A REML fit of a linear mixed model with crossed random effects.

    Attributes
    ----------
    variances : numpy.ndarray
        One variance per random effect, in the order given, then the residual.
        Estimates on the boundary are exactly 0.
    names : tuple of str
        The effects' names, then ``"residual"``.
    fixed : numpy.ndarray
        The GLS estimate of the fixed effects at the estimated variances.
    fixed_cov : numpy.ndarray
        ``(X' V^-1 X)^-1`` at the estimates.
    variance_cov : numpy.ndarray
        The inverse of the expected (Fisher) REML information of the variances,
        in the variance scale; NaN rows and columns for estimates at 0.
    loglik : float
        The REML log-likelihood at the optimum, with statsmodels' constant:
        ``-((n-p) (log(2 pi sigma2_e) + 1) + log|H| + log|X'H^-1 X|) / 2``
        (no ``log|X'X|`` term), equal to ``MixedLM.fit(reml=True).llf``.
    converged : bool
        Whether the optimiser reported convergence.
    """

    variances: np.ndarray
    names: tuple[str, ...]
    fixed: np.ndarray
    fixed_cov: np.ndarray
    variance_cov: np.ndarray
    loglik: float
    converged: bool


@dataclass(frozen=True)
class _Problem:
    gaa: np.ndarray  # [X Z]'[X Z], dense columns (a) by a
    gab: np.ndarray  # a by the eliminated effect's columns (b)
    gbb: np.ndarray  # the diagonal of the b block: each level's rows
    xa: np.ndarray  # [X Z]'y, a
    xb: np.ndarray  # [X Z]'y, b
    yy: float
    n: int
    p: int
    sizes: np.ndarray  # levels per effect
    owner: np.ndarray  # the effect of each level (q,)
    a: np.ndarray  # columns of [X Z] kept in the dense factor
    b: np.ndarray  # the columns of the eliminated (diagonal) effect


def _problem(y, X, codes) -> _Problem:
    """Cross products of ``[X Z]`` and ``y`` from ``np.bincount``, never ``Z``."""
    n, p = X.shape
    sizes = np.array([int(c.max()) + 1 for c in codes])
    offs = np.concatenate([[p], p + np.cumsum(sizes)])
    gram = np.zeros((offs[-1], offs[-1]))
    xy = np.empty(offs[-1])
    gram[:p, :p], xy[:p] = X.T @ X, X.T @ y
    for j, (cj, nj) in enumerate(zip(codes, sizes, strict=True)):
        sj = slice(offs[j], offs[j + 1])
        gram[:p, sj] = [np.bincount(cj, weights=x, minlength=nj) for x in X.T]
        xy[sj] = np.bincount(cj, weights=y, minlength=nj)
        for k in range(j, len(codes)):
            nk = sizes[k]
            pairs = np.bincount(cj * nk + codes[k], minlength=nj * nk)
            gram[sj, offs[k] : offs[k + 1]] = pairs.reshape(nj, nk)
    gram = np.triu(gram) + np.triu(gram, 1).T
    big = int(np.argmax(sizes))
    b = np.arange(offs[big], offs[big + 1])
    a = np.setdiff1d(np.arange(offs[-1]), b)
    owner = np.repeat(np.arange(len(codes)), sizes)
    blocks = gram[np.ix_(a, a)], gram[np.ix_(a, b)], gram[b, b], xy[a], xy[b]
    return _Problem(*blocks, float(y @ y), n, p, sizes, owner, a, b)


def _factor(pr: _Problem, gamma: np.ndarray) -> dict:
    """Solve the scaled mixed-model equations at ``gamma``, big block eliminated.

    numpy's LAPACK only (scipy's own OpenBLAS, called in turn with numpy's,
    makes the two libraries' threads wait on each other).
    """
    s = np.concatenate([np.ones(pr.p), np.repeat(np.sqrt(gamma), pr.sizes)])
    sa, sb = s[pr.a], s[pr.b]
    A = pr.gaa * np.outer(sa, sa)
    A[np.arange(pr.p, len(pr.a)), np.arange(pr.p, len(pr.a))] += 1.0
    B = pr.gab * np.outer(sa, sb)
    d = pr.gbb * sb**2 + 1.0
    chol = np.linalg.cholesky(A - (B / d) @ B.T)
    inv = np.linalg.inv(chol)
    ra, rb = sa * pr.xa, sb * pr.xb
    ba = inv.T @ (inv @ (ra - B @ (rb / d)))
    bb = (rb - B.T @ ba) / d
    sol = np.empty(len(s))
    sol[pr.a], sol[pr.b] = ba, bb
    quad = pr.yy - ra @ ba - rb @ bb
    logdet = 2.0 * np.sum(np.log(np.diag(chol))) + np.sum(np.log(d))
    return {"inv": inv, "B": B, "d": d, "sol": sol, "quad": quad, "logdet": logdet}


def _objective(x: np.ndarray, pr: _Problem) -> tuple[float, np.ndarray]:
    """Profiled ``-2`` REML log-likelihood (no constant) and its gradient in ``log gamma``."""
    f = _factor(pr, np.exp(x))
    dof = pr.n - pr.p
    inv = f["inv"]
    diag = np.empty(len(f["sol"]))
    diag[pr.a] = np.sum(inv**2, axis=0)
    diag[pr.b] = 1.0 / f["d"] + np.sum((inv @ f["B"] / f["d"]) ** 2, axis=0)
    m = len(pr.sizes)
    trace = np.bincount(pr.owner, weights=diag[pr.p :], minlength=m)
    bsq = np.bincount(pr.owner, weights=f["sol"][pr.p :] ** 2, minlength=m)
    grad = pr.sizes - trace - dof * bsq / f["quad"]
    return f["logdet"] + dof * np.log(f["quad"]), grad


def _starts(y, codes) -> list[np.ndarray]:
    """Starting ``log gamma``: between-level variance of the means, and 0.1 each."""
    total = max(np.var(y), 1e-300)
    moment = []
    for c in codes:
        means = np.bincount(c, weights=y) / np.maximum(np.bincount(c), 1)
        moment.append(np.clip(np.var(means) / total, 1e-3, 1e3))
    return [np.log(moment), np.full(len(codes), np.log(0.1))]


def _optimise(pr: _Problem, starts) -> tuple[np.ndarray, bool]:
    """Minimise over ``log gamma`` from each start; snap near-boundary values to it."""
    from scipy import optimize

    bounds = [(_LOG_LO, _LOG_HI)] * len(pr.sizes)
    opts = {"maxiter": 500, "ftol": 1e-13, "gtol": 1e-8}
    best = None
    for x0 in starts:
        res = optimize.minimize(
            _objective, x0, args=(pr,), jac=True, method="L-BFGS-B",
            bounds=bounds, options=opts,
        )  # fmt: skip
        if best is None or res.fun < best.fun:
            best = res
    x, fun = best.x.copy(), best.fun
    for k in np.argsort(x):  # flat in log gamma near 0: try the bound itself
        if x[k] < np.log(1e-5) and x[k] > _LOG_LO:
            trial = x.copy()
            trial[k] = _LOG_LO
            value = _objective(trial, pr)[0]
            if value <= fun + 1e-9 * max(1.0, abs(fun)):
                x, fun = trial, value
    return x, bool(best.success)


def _information(pr: _Problem, f: dict, var: np.ndarray) -> np.ndarray:
    """Expected REML information of ``(sigma2_1, ..., sigma2_m, sigma2_e)``.

    With ``S = I - C_uu`` (``C`` the inverse of the scaled equations) split into
    the effects' blocks: ``I_jk = ||S_jk||^2 / (2 s_j s_k)``,
    ``I_je = (tr S_jj - sum_l ||S_jl||^2) / (2 s_j s_e)`` and
    ``I_ee = (n - p - 2 tr S + ||S||^2) / (2 s_e^2)``.
    """
    B, d = f["B"], f["d"]
    sinv = f["inv"].T @ f["inv"]
    cross = -sinv @ B / d
    full = np.empty((len(f["sol"]),) * 2)
    full[np.ix_(pr.a, pr.a)], full[np.ix_(pr.a, pr.b)] = sinv, cross
    full[np.ix_(pr.b, pr.a)] = cross.T
    full[np.ix_(pr.b, pr.b)] = np.diag(1.0 / d) - (B / d).T @ cross
    S = np.eye(len(pr.owner)) - full[pr.p :, pr.p :]
    m = len(pr.sizes)
    edges = np.concatenate([[0], np.cumsum(pr.sizes)])
    frob = np.empty((m, m))
    for j in range(m):
        for k in range(m):
            frob[j, k] = np.sum(
                S[edges[j] : edges[j + 1], edges[k] : edges[k + 1]] ** 2
            )
    trace = np.bincount(pr.owner, weights=np.diag(S), minlength=m)
    info = np.empty((m + 1, m + 1))
    info[:m, :m] = frob / np.outer(var[:m], var[:m])
    info[:m, m] = info[m, :m] = (trace - frob.sum(axis=1)) / (var[:m] * var[m])
    dof = pr.n - pr.p
    info[m, m] = (dof - 2.0 * trace.sum() + frob.sum()) / var[m] ** 2
    return info / 2.0


def _check(y, effects, X):
    """Arrays of the right shapes, the levels renumbered ``0..L-1`` as seen."""
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or not np.all(np.isfinite(y)):
        raise ValueError("y must be a one-dimensional array of finite numbers")
    if not effects:
        raise ValueError("effects must name at least one random effect")
    codes = []
    for name, c in effects.items():
        c = np.asarray(c)
        if c.shape != y.shape or not np.issubdtype(c.dtype, np.integer):
            raise ValueError(
                f"effects[{name!r}] must be integer codes, one per row of y"
            )
        codes.append(np.unique(c, return_inverse=True)[1].reshape(-1))
    X = np.ones((len(y), 1)) if X is None else np.asarray(X, dtype=float)
    X = X.reshape(len(y), -1)
    if np.linalg.matrix_rank(X) < X.shape[1] or len(y) <= X.shape[1]:
        raise ValueError("X must have full column rank and fewer columns than rows")
    return y, codes, X


def reml(y, effects: dict[str, np.ndarray], X=None) -> RemlFit:
    """Fit the variance components of crossed random effects by REML.

    Parameters
    ----------
    y : array_like of float, shape (n,)
        The scores.
    effects : dict of str to array_like of int, shape (n,)
        Each random effect's name and every row's level of it (integer codes;
        renumbered in sorted order, so unused codes cost nothing).
    X : array_like of float, shape (n, p), optional
        The fixed-effects design; by default an intercept column.

    Returns
    -------
    RemlFit
        The variances (effects, then the residual), the GLS fixed effects with
        their covariance, the variances' asymptotic covariance, the REML
        log-likelihood and the optimiser's convergence flag.
    """
    y, codes, X = _check(y, effects, X)
    pr = _problem(y, X, codes)
    x, converged = _optimise(pr, _starts(y, codes))
    zero = x <= _LOG_LO
    gamma = np.where(zero, 0.0, np.exp(x))
    f = _factor(pr, np.exp(x))
    dof = pr.n - pr.p
    scale = f["quad"] / dof
    var = np.append(gamma * scale, scale)
    keep = np.append(~zero, True)
    cov = np.full((len(var), len(var)), np.nan)
    info = _information(pr, f, np.append(np.exp(x) * scale, scale))
    cov[np.ix_(keep, keep)] = np.linalg.inv(info[np.ix_(keep, keep)])
    xinv = f["inv"][:, : pr.p].T @ f["inv"][:, : pr.p]
    loglik = -0.5 * (dof * (np.log(2.0 * np.pi * scale) + 1.0) + f["logdet"])
    return RemlFit(
        variances=var,
        names=(*effects, "residual"),
        fixed=f["sol"][: pr.p],
        fixed_cov=scale * xinv,
        variance_cov=cov,
        loglik=float(loglik),
        converged=converged,
    )
