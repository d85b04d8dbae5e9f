"""Bradley-Terry and Davidson fits from matchup counts, vectorised over resamples.

Everything here works on *sufficient statistics*: for each observed pair
``p = (i, j)`` of models (``i < j``), the (weighted) number of battles ``i``
won, ``j`` won, and tied. A batch of ``B`` such count tables (the point data,
or ``B`` bootstrap resamples) is fitted at once by Newton's method with
backtracking: the log-likelihoods are concave (below), so Newton converges
from any start where the maximum exists, and in 3-5 steps from the point fit.

Memory: the negated Hessian is ``L + prior I`` with ``L`` the Laplacian of
the pair graph weighted by each pair's curvature (Davidson adds a border for
``lam``). Up to :data:`DENSE_MAX` models it is formed and solved densely;
above, each step is solved by Jacobi-preconditioned conjugate gradients with
the Hessian applied pair by pair (:func:`_cg_step`), so a fit holds arrays of
``(B, pairs)`` and ``(B, models)`` only, never ``models ** 2``.

Models (log-strengths ``theta``, ``d = theta_i - theta_j``):

* Bradley & Terry (1952): ``P(i beats j) = 1 / (1 + exp(-d))``. Ties are
  counted as half a win for each side by the caller (FastChat's convention)
  or dropped.
* Davidson (1970): with ``nu = exp(lam)``,
  ``P(i wins) = e^{d/2} / D``, ``P(j wins) = e^{-d/2} / D``,
  ``P(tie) = nu / D``, ``D = e^{d/2} + e^{-d/2} + nu``
  (``pi_i / (pi_i + pi_j + nu sqrt(pi_i pi_j))`` divided through by
  ``sqrt(pi_i pi_j)``). ``log D`` is a log-sum-exp of linear functions of
  ``(theta, lam)``, hence convex, so the log-likelihood is concave.

Identification: the likelihood depends on differences only; with
``prior == 0`` the reference model's ``theta`` is held at 0 (its row and
column leave the Newton system); with ``prior > 0`` a Gaussian penalty
``prior / 2 * sum(theta ** 2)`` (choix's ``alpha``) makes every ``theta``
identified and the fit centred.

Existence (Zermelo 1929; Ford 1957; Hunter 2004, Assumption 1): the
maximum exists (``prior == 0``) iff the directed graph with an edge
``i -> j`` whenever ``i`` beat or tied ``j`` is strongly connected;
Davidson's ``nu`` needs at least one tie and one decided battle.
:func:`strongly_connected` checks it per resample.

References
----------
Bradley, R. A., & Terry, M. E. (1952). Rank analysis of incomplete block
designs: I. Biometrika 39, 324-345.
Davidson, R. R. (1970). On extending the Bradley-Terry model to accommodate
ties in paired comparison experiments. JASA 65(329), 317-328.
Hunter, D. R. (2004). MM algorithms for generalized Bradley-Terry models.
Annals of Statistics 32(1), 384-406.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalci._base.lazy import sparse, special

__all__ = ["Pairs", "fit", "strongly_connected"]

#: Newton stops when every coordinate's step is below this (log-strength
#: units); convergence is quadratic, so the error left is of order TOL**2.
TOL = 1e-7
MAX_ITER = 100
_HALVINGS = 40
#: Newton steps longer than this (in any coordinate) are checked by backtracking.
LONG_STEP = 0.1
#: Boards of at most this many models solve each Newton system densely (one
#: LAPACK solve per replicate); larger ones by conjugate gradients on the
#: sparse Hessian (:func:`_cg_step`), in memory linear in models and pairs.
DENSE_MAX = 200
#: Dense Hessians are built this many bytes at a time at most (rows of a batch).
_DENSE_BYTES = 2**26
#: The incidence matrix is dense while it has at most this many entries.
_DENSE_INCIDENCE = 2**21
#: Conjugate gradients stop at this residual relative to the gradient's.
CG_RTOL = 1e-11


@dataclass(frozen=True)
class Pairs:
    """The observed pairs of ``n_models`` models: ``i[p] < j[p]``."""

    i: np.ndarray
    j: np.ndarray
    n_models: int

    @property
    def incidence(self) -> np.ndarray:
        """``A`` (P, G): +1 at ``i``, -1 at ``j``, so ``d = theta @ A.T``.

        Dense: a (B, P) @ (P, G) product is one BLAS call, faster than a
        sparse one up to thousands of pairs.
        """
        p = len(self.i)
        out = np.zeros((p, self.n_models))
        out[np.arange(p), self.i] = 1.0
        out[np.arange(p), self.j] = -1.0
        return out

    @property
    def sparse_incidence(self):
        """``A`` as a sparse CSR matrix (2 entries a pair)."""
        p = len(self.i)
        rows = np.r_[np.arange(p), np.arange(p)]
        vals = np.r_[np.ones(p), -np.ones(p)]
        cols = np.r_[self.i, self.j]
        return sparse.csr_matrix((vals, (rows, cols)), shape=(p, self.n_models))

    def scatter(self):
        """``(A, |A|)``: dense for small boards (one BLAS call), else sparse."""
        if len(self.i) * self.n_models <= _DENSE_INCIDENCE:
            a = self.incidence
            return a, np.abs(a)
        a = self.sparse_incidence
        return _Sparse(a.T.tocsr()), _Sparse(abs(a).T.tocsr())


class _Sparse:
    """``x @ A`` for a batch ``x`` (B, P) and a sparse ``A`` (P, G), given ``A.T``."""

    __array_ufunc__ = None  # ``ndarray @ _Sparse`` defers to __rmatmul__

    def __init__(self, at):
        self.at = at

    def __rmatmul__(self, x):
        return np.ascontiguousarray((self.at @ np.asarray(x).T).T)


def _bt(theta, lam, wi, wj, t, pairs, a, prior, ll_only=False):
    """Bradley-Terry: the log-likelihood, or its gradient and curvatures."""
    d = theta[:, pairs.i] - theta[:, pairs.j]
    if ll_only:
        ll = (wi * special.log_expit(d) + wj * special.log_expit(-d)).sum(axis=1)
        return ll - 0.5 * prior * (theta**2).sum(axis=1)
    n = wi + wj
    s = special.expit(d)
    grad = (wi - n * s) @ a - prior * theta
    return grad, n * s * (1.0 - s), None, None


def _davidson(theta, lam, wi, wj, t, pairs, a, prior, ll_only=False):
    """Davidson: as :func:`_bt`, with ``lam = log(nu)`` the last parameter."""
    d = 0.5 * (theta[:, pairs.i] - theta[:, pairs.j])
    log_d = np.logaddexp(np.logaddexp(d, -d), lam[:, None])
    if ll_only:
        ll = wi * (d - log_d) + wj * (-d - log_d) + t * (lam[:, None] - log_d)
        return ll.sum(axis=1) - 0.5 * prior * (theta**2).sum(axis=1)
    n = wi + wj + t
    pi, pj, pt = np.exp(d - log_d), np.exp(-d - log_d), np.exp(lam[:, None] - log_d)
    # d ll / d(theta_i - theta_j) and the second derivatives (module docstring)
    g_d = 0.5 * (wi - wj) - 0.5 * n * (pi - pj)
    grad = g_d @ a - prior * theta
    g_lam = (t - n * pt).sum(axis=1)
    h = 0.25 * n * ((pi + pj) - (pi - pj) ** 2)
    cross = (0.5 * n * (pi - pj) * pt) @ a  # d2 ll / d theta d lam
    h_lam = -(n * pt * (1.0 - pt)).sum(axis=1)
    return np.column_stack([grad, g_lam]), h, cross, h_lam


def _hessian(h, cross, h_lam, pairs, abs_a, prior):
    """The (B, n, n) Hessian of the log-likelihood from per-pair curvatures."""
    b, g = h.shape[0], pairs.n_models
    size = g + (cross is not None)
    out = np.zeros((b, size, size))
    out[:, pairs.i, pairs.j] = h
    out[:, pairs.j, pairs.i] = h
    diag = np.arange(g)
    out[:, diag, diag] = -(h @ abs_a) - prior
    if cross is not None:
        out[:, :g, g] = cross
        out[:, g, :g] = cross
        out[:, g, g] = h_lam
    return out


def _dense_step(grad, h, cross, h_lam, pairs, a, abs_a, prior, free):
    """Newton steps by dense solves, a chunk of replicates at a time."""
    size = grad.shape[1]
    rows = max(1, _DENSE_BYTES // (8 * size * size))
    step = np.zeros_like(grad)
    for s in range(0, len(grad), rows):
        sl = slice(s, s + rows)
        cr, hl = (None, None) if cross is None else (cross[sl], h_lam[sl])
        hess = _hessian(h[sl], cr, hl, pairs, abs_a, prior)
        sub = -hess[:, free[:, None], free[None, :]]
        step[sl, free] = np.linalg.solve(sub, grad[sl][:, free, None])[..., 0]
    return step


def _cg_step(grad, h, cross, h_lam, pairs, a, abs_a, prior, free):
    """Newton steps by Jacobi-preconditioned conjugate gradients, batched.

    The negated Hessian is ``L + prior I`` (``L`` the Laplacian of the pair
    graph weighted by the curvatures ``h``), bordered for Davidson by the
    ``lam`` row; it is applied pair by pair, never formed. Coordinates not in
    ``free`` (the reference model) stay 0.
    """
    g = pairs.n_models
    mask = np.zeros(grad.shape[1])
    mask[free] = 1.0

    def apply(x, rows):
        xt = x[:, :g]
        out = np.empty_like(x)
        out[:, :g] = (h[rows] * (xt[:, pairs.i] - xt[:, pairs.j])) @ a + prior * xt
        if cross is not None:
            c = cross[rows]
            out[:, :g] -= c * x[:, [g]]
            out[:, g] = -(c * xt).sum(axis=1) - h_lam[rows] * x[:, g]
        return out * mask

    diag = np.empty_like(grad)
    diag[:, :g] = h @ abs_a + prior
    if cross is not None:
        diag[:, g] = -h_lam
    inv = np.divide(mask, diag, out=np.zeros_like(diag), where=diag > 0)
    x = np.zeros_like(grad)
    r = grad * mask
    z = inv * r
    p = z.copy()
    rz = (r * z).sum(axis=1)
    stop = CG_RTOL * np.sqrt((r * r).sum(axis=1))
    live = np.arange(len(grad))
    for _ in range(4 * grad.shape[1] + 50):
        live = live[np.sqrt((r[live] ** 2).sum(axis=1)) > stop[live]]
        if not len(live):
            break
        q = apply(p[live], live)
        alpha = rz[live] / (p[live] * q).sum(axis=1)
        x[live] += alpha[:, None] * p[live]
        r[live] -= alpha[:, None] * q
        z_live = inv[live] * r[live]
        rz_new = (r[live] * z_live).sum(axis=1)
        p[live] = z_live + (rz_new / rz[live])[:, None] * p[live]
        rz[live] = rz_new
    return x


def fit(
    wi,
    wj,
    t,
    pairs: Pairs,
    *,
    model: str = "bt",
    ref: int = 0,
    prior: float = 0.0,
    start=None,
    tol: float = TOL,
    max_iter: int = MAX_ITER,
    solver: str = "auto",
):
    """Maximum-likelihood log-strengths for a batch of count tables.

    Parameters
    ----------
    wi, wj, t : ndarray, shape (B, P)
        Weighted wins of ``pairs.i``, of ``pairs.j``, and ties (Davidson
        only; ignored by ``"bt"``, whose caller folds or drops ties).
    pairs : Pairs
    model : {'bt', 'davidson'}
    ref : int
        The model held at ``theta = 0`` when ``prior == 0``.
    prior : float
        Gaussian penalty on ``theta`` (0: plain maximum likelihood).
    start : tuple (theta (B, G) or (G,), lam (B,) or scalar), optional
        Warm start; default zeros (and ``lam = 0``).
    solver : {'auto', 'dense', 'cg'}
        The Newton system's solver: dense (exact; memory ``G ** 2`` per
        replicate), conjugate gradients on the sparse Hessian (to
        :data:`CG_RTOL`; memory linear in models and pairs), or dense up to
        :data:`DENSE_MAX` models (``"auto"``).

    Returns
    -------
    theta : ndarray (B, G)
        With ``theta[:, ref] == 0`` when ``prior == 0``, else centred.
    lam : ndarray (B,)
        ``log(nu)`` (Davidson); zeros for ``"bt"``.
    converged : ndarray of bool (B,)
    """
    wi, wj, t = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (wi, wj, t))
    b, g = wi.shape[0], pairs.n_models
    davidson = model == "davidson"
    theta = np.zeros((b, g))
    lam = np.zeros(b)
    if start is not None:
        theta[:] = start[0]
        lam[:] = start[1]
    objective = _davidson if davidson else _bt
    a, abs_a = pairs.scatter()
    free = np.arange(g + davidson)
    if prior == 0:
        free = free[free != ref]
        theta -= theta[:, [ref]]
    dense = g <= DENSE_MAX if solver == "auto" else solver == "dense"
    converged = np.zeros(b, bool)
    active = np.arange(b)
    for _ in range(max_iter):
        if not len(active):
            break
        args = (wi[active], wj[active], t[active], pairs, a, prior)
        th, lm = theta[active], lam[active]
        grad, h, cross, h_lam = objective(th, lm, *args)
        curv = (h, cross, h_lam, pairs, a, abs_a, prior, free)
        step = _dense_step(grad, *curv) if dense else _cg_step(grad, *curv)
        scale = _backtrack(objective, th, lm, step, args, davidson)
        theta[active] = th + scale[:, None] * step[:, :g]
        if davidson:
            lam[active] = lm + scale * step[:, g]
        done = np.abs(scale[:, None] * step).max(axis=1) < tol
        converged[active[done]] = True
        active = active[~done]
    return theta, lam, converged


def _backtrack(objective, th, lm, step, args, davidson) -> np.ndarray:
    """Step sizes that do not lower the log-likelihood (halving from 1).

    Only replicates taking a long step (over :data:`LONG_STEP` in some
    coordinate) are checked: near the maximum, where warm-started refits
    are, the full Newton step of a concave function is always taken, and
    the check would cost two likelihood evaluations per step.
    """
    scale = np.ones(len(th))
    rows = np.flatnonzero(np.abs(step).max(axis=1) > LONG_STEP)
    if not len(rows):
        return scale
    g = th.shape[1]
    sub = tuple(x[rows] for x in args[:3]) + args[3:]
    th, lm, step = th[rows], lm[rows], step[rows]
    ll = objective(th, lm, *sub, ll_only=True)
    s = np.ones(len(rows))
    for _ in range(_HALVINGS):
        new_lm = lm + s * step[:, g] if davidson else lm
        new = objective(th + s[:, None] * step[:, :g], new_lm, *sub, ll_only=True)
        worse = new < ll - 1e-12 * (1 + np.abs(ll))
        if not worse.any():
            break
        s[worse] *= 0.5
    scale[rows] = s
    return scale


def strongly_connected(wi, wj, t, pairs: Pairs) -> np.ndarray:
    """Per replicate, whether the win graph is strongly connected.

    Edge ``i -> j`` when ``i`` beat or tied ``j`` (positive weight): the
    condition for the Bradley-Terry (and Davidson) maximum to exist.
    Replicates share few distinct edge sets (with many battles per pair,
    one), so each distinct set is checked once.
    """
    wi, wj, t = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (wi, wj, t))
    edges = np.concatenate([(wi > 0) | (t > 0), (wj > 0) | (t > 0)], axis=1)
    packed = np.packbits(edges, axis=1)
    seen: dict[bytes, bool] = {}
    out = np.empty(len(edges), bool)
    for r, key in enumerate(packed):
        k = key.tobytes()
        if k not in seen:
            seen[k] = _strong(edges[r], pairs)
        out[r] = seen[k]
    return out


def _strong(edges: np.ndarray, pairs: Pairs) -> bool:
    from scipy.sparse.csgraph import connected_components

    p, g = len(pairs.i), pairs.n_models
    fwd, back = edges[:p], edges[p:]
    rows = np.concatenate([pairs.i[fwd], pairs.j[back]])
    cols = np.concatenate([pairs.j[fwd], pairs.i[back]])
    graph = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(g, g))
    return connected_components(graph, connection="strong")[0] == 1


def components(wi, wj, t, pairs: Pairs, *, connection: str = "strong"):
    """Component labels of the point data's graph (weak: who ever met)."""
    from scipy.sparse.csgraph import connected_components

    fwd = (wi > 0) | (t > 0)
    back = (wj > 0) | (t > 0)
    if connection == "weak":
        fwd = back = (wi + wj + t) > 0
    rows = np.concatenate([pairs.i[fwd], pairs.j[back]])
    cols = np.concatenate([pairs.j[fwd], pairs.i[back]])
    g = pairs.n_models
    graph = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(g, g))
    return connected_components(graph, directed=True, connection=connection)
