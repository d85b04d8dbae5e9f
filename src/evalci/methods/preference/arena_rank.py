"""LMArena's own leaderboard construction (the ``arena-rank`` package,
version 0.1.1), reproduced with numpy and scipy.

arena-rank's ``BradleyTerry`` (``arena_rank/models/bradley_terry.py``) and
``PairDataset`` (``arena_rank/utils/data_utils.py``) do this:

- **Outcomes.** ``winner`` is mapped to 1 (``"model_a"``), 0
  (``"model_b"``) and 0.5 for anything else (``"tie"``, ``"both_bad"``,
  ``"tie (bothbad)"``, any other label): a tie is half a win for each side,
  kept in the likelihood as the outcome 0.5.
- **Rows.** Battles are grouped into unique ``(model_a, model_b, outcome)``
  rows with counts (``model_a`` and ``model_b`` are not swapped into a
  canonical order); models are indexed in sorted order of their names.
- **Fit.** ``P(a beats b) = sigmoid(r_a - r_b)``, the count-weighted mean
  log-likelihood minimised by optax's L-BFGS from ``r = 0`` (no penalty;
  stops when the relative change of the loss or the largest gradient entry
  falls under 1e-9, at most 1000 iterations). Every L-BFGS step lies in
  the span of gradients, which sum to zero, so the fit keeps
  ``sum(r) = 0``: the **anchor is the mean**, no reference model.
- **Scale.** ``rating = 1000 + r * 400 / ln(10)``: the mean rating is 1000,
  400 points are a factor 10 in odds.
- **Intervals.** ``ci_method="sandwich"`` (the default, used on the
  leaderboard since July 2025): ``H = sum p(1-p) n x x' + 1e-5 N I`` (a
  ridge of 1e-5 times the number of battles ``N`` on the diagonal),
  ``G = sum (y - p)^2 n x x'`` over the unique rows (``x = e_a - e_b``,
  ``n`` the row's count), covariance ``H^-1 G H^-1``, and
  ``rating +- z * sd`` with ``z`` the normal quantile. Battles are treated
  as independent. ``ci_method="bootstrap"``: 100 multinomial redraws of
  the ``N`` battles over the unique rows (jax's PRNG, seed 42; battles
  again independent), a refit from zero for each, and the 2.5% and 97.5%
  quantiles (linear interpolation) of the refitted ratings.

arena-rank itself stops there. LMArena's published leaderboard
(``lmarena/arena-catalog``, ``data/leaderboard-text.json``) adds the rank
rule ``rank = 1 + number of models whose lower bound exceeds this model's
upper bound`` (``recompute_final_ranking``) and the JSON
``{category: {model: {"rating", "rating_q975", "rating_q025"}}}``.

May import: ``evalci._base``; numpy, scipy, pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit
from scipy.stats import norm

__all__ = ["ARENA_OUTCOMES", "arena_rank", "arena_rank_rows", "to_arena_json"]

#: arena-rank's outcome map; any other label is 0.5 (a tie)
ARENA_OUTCOMES = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "both_bad": 0.5}

#: the columns of :func:`arena_rank`'s frame
_COLUMNS = ["rating", "rating_q025", "rating_q975", "variance", "rank"]


def arena_rank_rows(
    battles: pd.DataFrame,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Battles grouped as arena-rank's ``PairDataset.from_pandas`` groups them.

    Parameters
    ----------
    battles : pandas.DataFrame
        One row per battle.
    model_a, model_b, winner : str
        Column names.

    Returns
    -------
    tuple
        ``(models, pairs, outcomes, counts)``: the model names in sorted
        order, the unique ``(index_a, index_b)`` rows (``int`` array of
        shape ``(U, 2)``), their outcomes (1, 0 or 0.5) and counts, in
        arena-rank's (lexicographic) order.

    Examples
    --------
    >>> import pandas as pd
    >>> b = pd.DataFrame({"model_a": ["x", "y", "x"], "model_b": ["y", "x", "y"],
    ...                   "winner": ["model_a", "tie", "model_a"]})
    >>> models, pairs, y, n = arena_rank_rows(b)
    >>> models, pairs.tolist(), y.tolist(), n.tolist()
    (['x', 'y'], [[0, 1], [1, 0]], [1.0, 0.5], [2.0, 1.0])
    """
    missing = [c for c in (model_a, model_b, winner) if c not in battles.columns]
    if missing:
        raise ValueError(
            f"battles: no column {missing[0]!r} (columns: {list(battles.columns)})."
        )
    if len(battles) == 0:
        raise ValueError("battles: no rows.")
    both = pd.concat([battles[model_a], battles[model_b]]).astype(str)
    codes, models = pd.factorize(both, sort=True)
    k = len(battles)
    y = battles[winner].map(lambda w: ARENA_OUTCOMES.get(w, 0.5)).to_numpy(float)
    rows = np.column_stack([codes[:k].astype(float), codes[k:].astype(float), y])
    unique, counts = np.unique(rows, axis=0, return_counts=True)
    pairs = unique[:, :2].astype(int)
    return list(models), pairs, unique[:, 2].copy(), counts.astype(float)


def _fit(pairs, y, w, m, ftol=1e-9, max_iter=1000) -> np.ndarray:
    """The sum-zero maximum of ``sum w (y d - softplus(d))``: Newton's method
    with step halving, stopped as arena-rank stops its L-BFGS (the mean loss
    changes by less than ``ftol`` relative, or the gradient vanishes). Newton
    converges quadratically, so the stop leaves the exact optimum to
    rounding; where there is none (a model that wins, or loses, every
    battle: separated data), the ratings stop at a finite, large value that
    depends on the optimiser, here as in arena-rank."""
    a, b = pairs[:, 0], pairs[:, 1]
    r, total = np.zeros(m), max(float(np.sum(w)), 1e-300)
    center = np.ones((m, m)) / m

    def loss(r):
        d = r[a] - r[b]
        return -np.sum(w * (y * d + log_expit(-d))) / total

    now = loss(r)
    for _ in range(max_iter):
        p = expit(r[a] - r[b])
        g = np.bincount(a, w * (y - p), m) - np.bincount(b, w * (y - p), m)
        if np.max(np.abs(g)) / total <= 1e-14:
            break
        step = np.linalg.solve(_pairwise(pairs, w * p * (1 - p), m) + center, g)
        step -= step.mean()
        t = 1.0
        while loss(r + t * step) > now + 1e-15 * abs(now) and t > 1e-10:
            t /= 2
        r, before, now = r + t * step, now, loss(r + t * step)
        if abs(now - before) / max(abs(now), abs(before), 1.0) < ftol:
            break
    return r - r.mean()


def _pairwise(pairs, vals, m) -> np.ndarray:
    """``sum vals x x'`` with ``x = e_a - e_b`` (arena-rank's
    ``assemble_parwise_matrix``)."""
    a, b = pairs[:, 0], pairs[:, 1]
    mat = np.zeros((m, m))
    np.add.at(mat, (a, a), vals)
    np.add.at(mat, (b, b), vals)
    np.add.at(mat, (a, b), -vals)
    np.add.at(mat, (b, a), -vals)
    return mat


def _sandwich(r, pairs, y, n, hessian_reg) -> np.ndarray:
    """arena-rank's sandwich variances of the unscaled ratings."""
    m = len(r)
    p = expit(r[pairs[:, 0]] - r[pairs[:, 1]])
    hess = _pairwise(pairs, p * (1 - p) * n, m) + np.eye(m) * hessian_reg * n.sum()
    grad_cov = _pairwise(pairs, (y - p) ** 2 * n, m)
    inv = np.linalg.inv(hess)
    return np.diag(inv @ grad_cov @ inv)


def _rank(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """LMArena's rank: 1 + how many models' lower bounds exceed this upper bound."""
    return 1 + (lower[None, :] > upper[:, None]).sum(axis=1)


def _boot_counts(n, n_resamples, seed, counts) -> np.ndarray:
    if counts is None:
        rng = np.random.default_rng(seed)
        return rng.multinomial(int(n.sum()), n / n.sum(), size=n_resamples).astype(
            float
        )
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.shape[1] != len(n):
        raise ValueError(
            f"counts: expected an array of shape (n_resamples, {len(n)}) (one count per "
            f"unique row of arena_rank_rows), got shape {counts.shape}."
        )
    return counts


def arena_rank(
    battles: pd.DataFrame,
    *,
    interval: str = "covariance",
    level: float = 0.95,
    scale: float = 400.0,
    base: float = 10.0,
    init_rating: float = 1000.0,
    hessian_reg: float = 1e-5,
    n_resamples: int = 100,
    seed: int | None = 42,
    counts=None,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
) -> pd.DataFrame:
    """LMArena's ratings, intervals and ranks, as arena-rank 0.1.1 computes them.

    The construction is the module's (:mod:`evalci.methods.preference.arena_rank`):
    ties as half wins, ratings centred on ``init_rating`` (mean anchor),
    ``scale / ln(base)`` points per logit, and an interval that treats
    battles as independent. For an interval that resamples prompts, use
    :func:`evalci.preference.preference_ci`.

    Parameters
    ----------
    battles : pandas.DataFrame
        One row per battle: ``model_a``, ``model_b``, ``winner``.
    interval : {'covariance', 'bootstrap'}
        ``"covariance"``: arena-rank's sandwich (``ci_method="sandwich"``,
        the default there). ``"bootstrap"``: its battle bootstrap.
    level : float
        Coverage (arena-rank's ``1 - significance_level``).
    scale, base, init_rating, hessian_reg : float
        arena-rank's ``BradleyTerry`` settings (defaults equal).
    n_resamples : int
        Bootstrap replicates (arena-rank's ``num_bootstrap``).
    seed : int or None
        Seed of numpy's generator for the bootstrap draws. arena-rank draws
        with jax's PRNG, which numpy does not reproduce: the same seed gives
        other draws (the interval agrees up to Monte Carlo error).
    counts : array_like, optional
        Bootstrap counts, shape ``(n_resamples, U)``, one column per unique
        row of :func:`arena_rank_rows` (e.g. arena-rank's own draws); then
        ``seed`` and ``n_resamples`` are not used.
    model_a, model_b, winner : str
        Column names.

    Returns
    -------
    pandas.DataFrame
        Indexed by model name (sorted), columns ``rating``,
        ``rating_q025``, ``rating_q975`` (the interval's bounds, the names
        LMArena publishes), ``variance`` and ``rank``.

    Notes
    -----
    A bootstrap draw in which a model never loses (or never wins) has no
    finite maximum likelihood; arena-rank's L-BFGS and this Newton fit both
    stop where the loss stops changing (relative change under 1e-9), at
    large values that depend on the optimiser. Where such draws set a bound,
    the bound is an artefact (small arenas; ``preference_ci`` keeps them
    finite with a weak prior and warns).

    Examples
    --------
    >>> import pandas as pd
    >>> b = pd.DataFrame({
    ...     "model_a": ["x", "x", "y", "y", "z", "z", "x", "y"],
    ...     "model_b": ["y", "z", "z", "x", "x", "y", "y", "z"],
    ...     "winner": ["model_a", "model_a", "model_a", "model_b",
    ...                "model_b", "tie", "model_b", "model_a"]})
    >>> lb = arena_rank(b)
    >>> lb["rating"].round(1).to_dict(), lb["rank"].tolist()
    ({'x': 1212.1, 'y': 1060.5, 'z': 727.4}, [1, 1, 2])
    """
    if interval not in ("covariance", "bootstrap"):
        raise ValueError(
            f"interval must be 'covariance' or 'bootstrap', not {interval!r}."
        )
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}.")
    models, pairs, y, n = arena_rank_rows(
        battles, model_a=model_a, model_b=model_b, winner=winner
    )
    m, alpha = len(models), scale / np.log(base)
    r = _fit(pairs, y, n, m)
    if interval == "covariance":
        var = _sandwich(r, pairs, y, n, hessian_reg)
        half = norm.ppf(1 - (1 - level) / 2) * np.sqrt(var)
        lower, upper = r - half, r + half
        lower, upper, var = (
            lower * alpha + init_rating,
            upper * alpha + init_rating,
            var * alpha**2,
        )
    else:
        draws = _boot_counts(n, n_resamples, seed, counts)
        reps = np.array([_fit(pairs, y, c, m) for c in draws]) * alpha + init_rating
        tail = (1 - level) / 2
        lower, upper = (
            np.quantile(reps, tail, axis=0),
            np.quantile(reps, 1 - tail, axis=0),
        )
        var = np.var(reps, axis=0)
    out = pd.DataFrame(
        {
            "rating": r * alpha + init_rating,
            "rating_q025": lower,
            "rating_q975": upper,
            "variance": var,
        },
        index=pd.Index(models),
    )
    out["rank"] = _rank(out["rating_q025"].to_numpy(), out["rating_q975"].to_numpy())
    out.attrs["evalci_arena_rank"] = {"interval": interval, "level": level}
    return out


def to_arena_json(frame: pd.DataFrame, category: str = "full") -> dict:
    """The leaderboard JSON LMArena publishes, from :func:`arena_rank`'s frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        Indexed by model, with ``rating``, ``rating_q025``, ``rating_q975``.
    category : str
        The top-level key (LMArena's ``"full"``, ``"coding"``, ...).

    Returns
    -------
    dict
        ``{category: {model: {"rating", "rating_q975", "rating_q025"}}}``,
        models by rating, highest first (floats), as in
        ``lmarena/arena-catalog``'s ``data/leaderboard-text.json``.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"rating": [990.0, 1010.0], "rating_q025": [980.0, 1001.0],
    ...                   "rating_q975": [1000.0, 1019.0]}, index=["b", "a"])
    >>> to_arena_json(f)
    {'full': {'a': {'rating': 1010.0, 'rating_q975': 1019.0, 'rating_q025': 1001.0}, \
'b': {'rating': 990.0, 'rating_q975': 1000.0, 'rating_q025': 980.0}}}
    """
    missing = [
        c for c in ("rating", "rating_q025", "rating_q975") if c not in frame.columns
    ]
    if missing:
        raise ValueError(
            f"frame: no column {missing[0]!r} (columns: {list(frame.columns)})."
        )
    order = np.argsort(-frame["rating"].to_numpy(float), kind="stable")
    rows = frame.iloc[order]
    return {
        str(category): {
            str(model): {
                "rating": float(row["rating"]),
                "rating_q975": float(row["rating_q975"]),
                "rating_q025": float(row["rating_q025"]),
            }
            for model, row in rows.iterrows()
        }
    }
