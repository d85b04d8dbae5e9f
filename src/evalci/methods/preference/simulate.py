"""Seeded battles with prompt effects, and the scores they estimate.

:func:`simulate_battles` draws Arena-style battles in which each prompt
shifts each model's log-strength by its own effect ``u ~ N(0, prompt_sd^2)``
(a prompt suits some models): battles that share a prompt are correlated,
which is what a prompt-level bootstrap must carry and a battle-level one
ignores. :func:`population_fit` gives the scores an infinite number of
prompts would give under the same design (the estimand of the fit), from
the expected matchup counts by Gauss-Hermite quadrature.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci.engine import resampling as _rs
from evalci.methods.preference import fit as _fit

__all__ = ["population_fit", "simulate_battles"]

DESIGNS = ("all-pairs", "baseline")


def _strengths(strengths):
    if isinstance(strengths, dict):
        names, theta = list(strengths), np.asarray(list(strengths.values()), float)
    else:
        theta = np.asarray(strengths, float)
        names = [f"m{k}" for k in range(len(theta))]
    if theta.ndim != 1 or len(theta) < 2 or not np.isfinite(theta).all():
        raise ValueError(
            "`strengths` must be at least 2 finite log-strengths (a dict by model "
            "name, or a list)."
        )
    return names, theta


def _probs(d, tie):
    """P(a wins), P(b wins), P(tie) at log-strength gap ``d`` (Davidson, nu=tie)."""
    h = 0.5 * d
    den = np.exp(h) + np.exp(-h) + tie
    return np.exp(h) / den, np.exp(-h) / den, tie / den


def _design(g, design, baseline):
    if design == "all-pairs":
        i, j = np.triu_indices(g, 1)
        return i, j
    others = np.array([m for m in range(g) if m != baseline])
    return np.full(len(others), baseline), others


def simulate_battles(
    strengths,
    n_prompts: int,
    *,
    repeats: int = 1,
    prompt_sd: float = 1.0,
    tie: float = 0.0,
    design: str = "all-pairs",
    baseline: str | None = None,
    strong: float = 0.3,
    n_judges: int | None = None,
    rng=None,
) -> pd.DataFrame:
    """Battles with prompt effects: ``question_id, model_a, model_b, winner, verdict``.

    Parameters
    ----------
    strengths : dict or list of float
        Natural log-strengths by model (``theta``; a gap of ``ln 10`` is
        odds of 10 to 1).
    n_prompts : int
        Prompts; every battle belongs to one.
    repeats : int
        Battles of each pair on each prompt (``"all-pairs"``; different
        voters on the same prompt).
    prompt_sd : float
        SD of each model's per-prompt effect on its log-strength.
    tie : float
        Davidson's ``nu`` (0: no ties).
    design : {'all-pairs', 'baseline'}
        Every pair meets on every prompt (sides drawn at random), or every
        model meets ``baseline`` in two games per prompt with the positions
        swapped (Arena-Hard: game 1 has the baseline as ``model_a``).
    baseline : str, optional
        The baseline model of ``design="baseline"`` (default the first).
    strong : float
        Share of decided battles whose verdict is strong (``"A>>B"``).
    n_judges : int, optional
        Add a ``judge`` column, each battle's judge drawn from this many.
    rng : int, Generator or SeedSequence, optional
        Fixes the battles.

    Returns
    -------
    pandas.DataFrame
    """
    names, theta = _strengths(strengths)
    if design not in DESIGNS:
        raise ValueError(
            f"`design` must be 'all-pairs' or 'baseline'; got {as_written(design)}."
        )
    gen = _rs.stream(_rs.seed_sequence(rng), 0)
    g = len(theta)
    base = 0 if baseline is None else names.index(baseline)
    i, j = _design(g, design, base)
    u = gen.normal(0.0, prompt_sd, size=(n_prompts, g))
    per = repeats if design == "all-pairs" else 2
    q = np.repeat(np.arange(n_prompts), len(i) * per)
    pi, pj = (
        np.tile(np.repeat(i, per), n_prompts),
        np.tile(np.repeat(j, per), n_prompts),
    )
    if design == "all-pairs":
        swap = gen.random(len(q)) < 0.5
    else:  # game 1: baseline is A; game 2: positions swapped
        swap = np.tile([False, True], len(q) // 2)
    a, b = np.where(swap, pj, pi), np.where(swap, pi, pj)
    p_a, _, p_t = _probs(theta[a] + u[q, a] - theta[b] - u[q, b], tie)
    x = gen.random(len(q))
    outcome = np.where(x < p_a, 0, np.where(x < p_a + p_t, 2, 1))
    is_strong = gen.random(len(q)) < strong
    label = np.array(["A>B", "B>A", "A=B"], object)[outcome]
    label[is_strong & (outcome == 0)] = "A>>B"
    label[is_strong & (outcome == 1)] = "B>>A"
    out = pd.DataFrame(
        {
            "question_id": q,
            "model_a": np.asarray(names, object)[a],
            "model_b": np.asarray(names, object)[b],
            "winner": np.array(["model_a", "model_b", "tie"], object)[outcome],
            "verdict": label,
        }
    )
    if n_judges is not None:
        out["judge"] = [f"judge{k}" for k in gen.integers(0, n_judges, len(q))]
    return out


def population_fit(
    strengths,
    *,
    prompt_sd: float = 1.0,
    tie: float = 0.0,
    model: str = "bradley-terry",
    ties: str = "half",
    design: str = "all-pairs",
    baseline: str | None = None,
    nodes: int = 80,
) -> pd.Series:
    """Log-strengths (first model 0) the fit converges to with infinitely many prompts.

    Each pair's expected counts are ``E_u[P(outcome | theta + u)]`` over the
    prompt effects (Gauss-Hermite with ``nodes`` points on the gap's
    ``N(0, 2 prompt_sd^2)``), weighted by how often the design pits them;
    the model (``"bradley-terry"`` with ``ties``, or ``"davidson"``) is fitted
    to those expectations. With ``prompt_sd > 0`` this is not ``strengths``:
    averaging over prompts flattens the win probabilities.

    Parameters
    ----------
    strengths : dict or list of float
        Natural log-strengths, as in :func:`simulate_battles`.
    prompt_sd : float
        SD of each model's per-prompt effect.
    tie : float
        Davidson's ``nu`` of the simulation (0: no ties).
    model : {'bradley-terry', 'davidson'}
        The model whose limit is wanted.
    ties : {'half', 'drop'}
        Bradley-Terry's ties, as in :func:`evalci.preference.bradley_terry`.
    design : {'all-pairs', 'baseline'}
        As in :func:`simulate_battles`.
    baseline : str, optional
        As in :func:`simulate_battles`.
    nodes : int
        Gauss-Hermite points.

    Returns
    -------
    pandas.Series
        By model name.
    """
    names, theta = _strengths(strengths)
    g = len(theta)
    i, j = _design(g, design, 0 if baseline is None else names.index(baseline))
    x, w = np.polynomial.hermite.hermgauss(nodes)
    z = np.sqrt(2.0) * np.sqrt(2.0) * prompt_sd * x  # N(0, 2 sd^2) nodes
    d = (theta[i] - theta[j])[:, None] + z[None, :]
    p = [(pr * w).sum(axis=1) / np.sqrt(np.pi) for pr in _probs(d, tie)]
    wi, wj, t = (np.asarray(v)[None, :] for v in p)
    if model == "bradley-terry":
        if ties == "half":
            wi, wj = wi + 0.5 * t, wj + 0.5 * t
        t = np.zeros_like(t)
    code = "davidson" if model == "davidson" else "bt"
    est, _, _ = _fit.fit(wi, wj, t, _fit.Pairs(i=i, j=j, n_models=g), model=code)
    return pd.Series(est[0], index=pd.Index(names, name="system"))
