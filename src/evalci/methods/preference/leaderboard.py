"""Pairwise preferences: Bradley-Terry and Davidson leaderboards with paired intervals.

Arena-style leaderboards rank models from battles ``(model_a, model_b,
winner)``. This module fits the Bradley-Terry model (ties as half wins, or
dropped) or Davidson's extension for ties from the matchup counts, puts the
log-strengths on the Elo-like scale (``anchor_score + scale *
log_base(strength / strength_anchor)``), and bootstraps them by resampling
*prompts* (``question_id``; or judges) with one shared draw for every model,
so every gap is paired. The bootstrap is a :class:`~evalci.BootstrapResult`
with one score per model, which :meth:`PreferenceResult.leaderboard` hands
to the leaderboard machinery (simultaneous rank intervals by max-t,
step-down or Holm; tie groups; ``plot()``; Markdown).

* :func:`bradley_terry`, :func:`davidson`: the point fits.
* :func:`preference_ci`: the bootstrap.
* :func:`arena_leaderboard`: both, then the leaderboard.
* :func:`preference_fragility`: the fewest battles found whose removal
  flips the top place or an adjacent pair (a verified upper bound,
  :mod:`evalci.methods.preference.fragility`).
* :func:`simulate_battles`: seeded battles with prompt effects
  (:mod:`evalci.methods.preference.simulate`).

Two constructions users meet elsewhere, for contrast (``docs/arena.md``):
FastChat resamples *battles* as if independent (``cluster=None`` here);
Arena-Hard turns each ``"A>>B"`` into three identical rows and resamples
rows per model, unpaired. Battles that share a prompt are correlated, so
both understate the uncertainty when prompts matter.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import (
    check_level,
    check_n_resamples,
    check_number,
    check_option,
)
from evalci.engine import intervals as _intervals
from evalci.engine import resampling as _rs
from evalci.engine.results import BootstrapResult
from evalci.methods.preference import fit as _fit
from evalci.methods.preference.boot import check_memory, replicate_fits, split_counts
from evalci.methods.preference.data import (
    AUTO_PRIOR,
    Battles,
    encode,
    warn_prior,
)
from evalci.methods.preference.data import check_graph as _check_graph
from evalci.methods.preference.results import (
    PreferenceFit,
    PreferenceResult,
    Scale,
    _win_rate,
)
from evalci.methods.ranks import Leaderboard

__all__ = ["arena_leaderboard", "bradley_terry", "davidson", "preference_ci"]

MODELS = ("bradley-terry", "davidson")
TIES = ("half", "drop")
_INTERVALS = ("percentile", "basic", "normal")


# ================================================================ arguments
def _options(model, ties, anchor, anchor_score, scale, base, prior):
    check_option(model, "model", MODELS, describe="'bradley-terry' or 'davidson'")
    check_option(
        ties,
        "ties",
        TIES,
        describe="'half' (a tie is half a win for each side) or 'drop'",
    )
    if anchor is not None and not isinstance(anchor, str):
        raise TypeError(
            f"`anchor` must be a model name or None; got {as_written(anchor)}."
        )
    sc = Scale(
        anchor=anchor,
        anchor_score=check_number(anchor_score, "anchor_score"),
        scale=check_number(scale, "scale", low=0, low_open=True, hint=", e.g. 400"),
        base=check_number(base, "base", low=1, low_open=True, hint=", e.g. 10"),
    )
    if prior is not None:
        prior = check_number(prior, "prior", low=0, hint=", e.g. 0 or 0.01")
    return sc, prior


def _reference(battles: Battles, scale: Scale) -> int:
    if scale.anchor is None:
        return 0
    if scale.anchor not in battles.models:
        near = ", ".join(map(repr, list(battles.models[:5])))
        raise ValueError(
            f"`anchor`: {as_written(scale.anchor)} plays no battle here; name one of the "
            f"models ({near}, ...), or anchor=None to centre the scores."
        )
    return int(battles.models.get_loc(scale.anchor))


def _point(battles, model, ties, prior, ref, scale) -> tuple:
    """The point fit, its log-strengths and ``log(nu)``.

    ``prior=None``: maximum likelihood where it exists, else the weak
    prior (:func:`~evalci.methods.preference.data.check_graph`).
    """
    wi, wj, t = split_counts(battles.counts.reshape(1, -1), model, ties)
    prior = _check_graph(battles, wi[0], wj[0], t[0], model, prior)
    code = "davidson" if model == "davidson" else "bt"
    theta, lam, _ = _fit.fit(wi, wj, t, battles.pairs, model=code, ref=ref, prior=prior)
    theta = theta[0] - theta[0, ref]
    lam = float(lam[0])
    score = scale.scores(theta, ref if scale.anchor else None)
    rate = (
        _win_rate(theta, lam, ref, model)
        if scale.anchor
        else np.full(len(theta), np.nan)
    )
    table = pd.DataFrame(
        {
            "system": list(battles.models),
            "score": score,
            "win_rate": rate,
            "theta": theta,
            "n_battles": battles.n_battles,
        }
    )
    table = table.sort_values("score", ascending=False, kind="stable")
    fit = PreferenceFit(
        table=table.reset_index(drop=True),
        model=model,
        ties=None if model == "davidson" else ties,
        tie_parameter=float(np.exp(lam)) if model == "davidson" else None,
        scale=scale,
        prior=prior,
        n_battles=float(battles.counts.sum()),
    )
    return fit, theta, lam


def _encode(data, cluster, strength, ties, model, models, columns, judge=None):
    if judge is not None:
        if not isinstance(cluster, str) or not isinstance(judge, str):
            raise ValueError(
                "`judge` needs `cluster` to be one column (the prompt) and "
                "`judge` one column (the judge); both are resampled, crossed."
            )
        if judge == cluster:
            raise ValueError("`judge` and `cluster` name the same column; the "
                             "judge is a facet crossed with the prompts.")
    return encode(
        data,
        cluster=cluster if judge is None else [cluster, judge],
        strength=strength,
        ties="drop" if (ties == "drop" and model == "bradley-terry") else "keep",
        models=models,
        crossed=judge is not None,
        **columns,
    )


# ============================================================== entry points
_COMMON = """
    battles : pandas.DataFrame
        One row per battle: ``model_a``, ``model_b``, ``winner`` (one of
        ``'model_a'``, ``'model_b'``, ``'tie'``, ``'tie (bothbad)'``), as
        Chatbot Arena publishes them or :func:`evalci.read_arena` /
        :func:`evalci.read_arena_hard` return them. Never modified.
    anchor : str, optional
        The model whose score is ``anchor_score`` (e.g. ``"gpt-4-0314"``);
        default none: the mean score is ``anchor_score``.
    anchor_score, scale, base : float
        The Elo-like scale: ``score = anchor_score + scale * log_base(pi /
        pi_anchor)``, so a gap of ``scale`` means odds of ``base`` to 1
        (defaults 1000, 400, 10, as FastChat and Arena-Hard).
    strength : dict, optional
        Weights of verdict classes read from the ``verdict`` column, e.g.
        ``{"A>>B": 3, "A>B": 1}`` counts a strong verdict (either side) as 3
        battles, as Arena-Hard's ``WEIGHT=3`` does, but as a count weight on
        the same prompt, never as duplicated rows; classes not named count
        1. Default: every battle counts 1.
    prior : float or None
        A Gaussian penalty ``prior / 2 * sum(theta ** 2)`` on the natural
        log-strengths (choix's MAP with ``alpha = prior / 2``). 0 is maximum
        likelihood, which needs a strongly connected comparison graph (every
        model wins and loses somewhere; in every bootstrap resample too) and
        refuses the board otherwise. None (default): maximum likelihood
        when it exists everywhere, else every fit of the call uses the weak
        prior ``0.01`` (SD 10 natural units, about 1,740 points), with a
        ``WeakPriorWarning`` naming the models (see ``docs/arena.md``).
    models : list of str, optional
        Models that must be ranked; one that plays no battle raises.
    model_a, model_b, winner, verdict : str
        Column names (defaults ``"model_a"``, ``"model_b"``, ``"winner"``,
        ``"verdict"``).
"""


def _docstring(f):
    f.__doc__ = f.__doc__.replace("    {common}\n", _COMMON.lstrip("\n"))
    return f


@_docstring
def bradley_terry(
    battles: pd.DataFrame,
    *,
    ties: str = "half",
    anchor: str | None = None,
    anchor_score: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    strength: dict | None = None,
    prior: float | None = None,
    models=None,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    verdict: str = "verdict",
) -> PreferenceFit:
    """Bradley-Terry scores of models from battles (maximum likelihood).

    ``P(a beats b) = 1 / (1 + base ** ((score_b - score_a) / scale))``,
    fitted by Newton's method on the matchup counts
    (:mod:`evalci.methods.preference.fit`); the same fit as FastChat's
    logistic regression without penalty.

    Parameters
    ----------
    {common}
    ties : {'half', 'drop'}
        A tie counts as half a win for each side (``"half"``, FastChat's
        convention) or is left out (``"drop"``). :func:`davidson` models
        ties instead.

    Returns
    -------
    PreferenceFit

    Examples
    --------
    >>> import evalci
    >>> battles = evalci.preference.simulate_battles(
    ...     {"a": 0.5, "b": 0.0, "c": -0.5}, n_prompts=200, rng=0)
    >>> fit = evalci.preference.bradley_terry(battles, anchor="b")
    >>> fit.table[["system", "score"]].round(1)
      system   score
    0      a  1076.8
    1      b  1000.0
    2      c   944.8
    """
    sc, prior = _options(
        "bradley-terry", ties, anchor, anchor_score, scale, base, prior
    )
    cols = dict(model_a=model_a, model_b=model_b, winner=winner, verdict=verdict)
    data = _encode(battles, None, strength, ties, "bradley-terry", models, cols)
    return _point(data, "bradley-terry", ties, prior, _reference(data, sc), sc)[0]


@_docstring
def davidson(
    battles: pd.DataFrame,
    *,
    anchor: str | None = None,
    anchor_score: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    strength: dict | None = None,
    prior: float | None = None,
    models=None,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    verdict: str = "verdict",
) -> PreferenceFit:
    """Davidson's (1970) extension of Bradley-Terry for ties.

    ``P(a wins) = pi_a / D``, ``P(tie) = nu sqrt(pi_a pi_b) / D``, ``D =
    pi_a + pi_b + nu sqrt(pi_a pi_b)``; among decided battles the odds are
    Bradley-Terry's, so the scores are on the same scale. The fit's
    ``tie_parameter`` is ``nu``.

    Parameters
    ----------
    {common}

    Returns
    -------
    PreferenceFit

    Examples
    --------
    >>> import evalci
    >>> battles = evalci.preference.simulate_battles(
    ...     {"a": 0.5, "b": 0.0, "c": -0.5}, n_prompts=200, tie=0.5, rng=0)
    >>> fit = evalci.preference.davidson(battles, anchor="b")
    >>> round(fit.tie_parameter, 2)
    0.48
    """
    sc, prior = _options("davidson", "half", anchor, anchor_score, scale, base, prior)
    cols = dict(model_a=model_a, model_b=model_b, winner=winner, verdict=verdict)
    data = _encode(battles, None, strength, "half", "davidson", models, cols)
    return _point(data, "davidson", "half", prior, _reference(data, sc), sc)[0]


@_docstring
def preference_ci(
    battles: pd.DataFrame,
    *,
    model: str = "bradley-terry",
    ties: str = "half",
    cluster="question_id",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    method: str = "percentile",
    rng=None,
    anchor: str | None = None,
    anchor_score: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    strength: dict | None = None,
    prior: float | None = None,
    models=None,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    verdict: str = "verdict",
    judge: str | None = None,
) -> PreferenceResult:
    """Scores of models from battles, with a paired prompt-level bootstrap.

    Every replicate draws prompts (``cluster``) with replacement, once for
    all models: the replicate's matchup counts are the drawn prompts'
    counts, and the model is refitted on them (warm-started from the point
    fit). Battles on one prompt are correlated (a prompt suits some models),
    so resampling battles as if independent, as FastChat does
    (``cluster=None`` here), gives intervals too narrow; resampling prompts
    keeps that correlation in.

    Parameters
    ----------
    {common}
    model : {'bradley-terry', 'davidson'}
        The model (see :func:`bradley_terry`, :func:`davidson`).
    ties : {'half', 'drop'}
        Bradley-Terry's ties (see :func:`bradley_terry`); ignored by Davidson.
    cluster : str, list of str or None
        The resampled unit: ``"question_id"`` (default: prompts), ``"judge"``
        (users or judges), several columns, or None (battles resampled as if
        independent: FastChat's construction, shown for comparison).
    judge : str, optional
        A column naming who judged each battle (several LLM judges on the
        same prompts): the judge is then a random facet crossed with the
        prompts, and every replicate draws prompts and judges independently
        (the pigeonhole bootstrap; a battle counts ``W_prompt x W_judge``), so
        the interval generalises over new judges as well as new prompts. With
        one judge it is the prompt bootstrap. With two or three judges the
        judge's share is under-estimated (a bootstrap over few levels); with
        many it is conservative (see the docs page "Facets").
    n_resamples : int
        Bootstrap replicates (default 1,000).
    confidence_level : float
        Of each score interval (marginal); see
        :meth:`PreferenceResult.leaderboard` for simultaneous rank intervals.
    method : {'percentile', 'basic', 'normal'}
        The interval from the replicates.
    rng : int, numpy.random.Generator or SeedSequence, optional
        Fixes every result, whatever the row order.

    Returns
    -------
    PreferenceResult
        ``fit`` (the point fit), ``scores`` and ``win_rate``
        (:class:`~evalci.BootstrapResult`, one per model, shared draws),
        ``leaderboard()``.

    Notes
    -----
    Coverage (``tests/methods/preference/test_preference_coverage.py``: 4 models, 80 prompts,
    960 battles, prompt effects of SD 1 on the log-strength): 95% percentile
    intervals from prompt-level resampling covered the population score in
    94.0% of 300 seeded trials; battle-level ones (``cluster=None``) in
    83.0% of 100.

    Examples
    --------
    >>> import evalci
    >>> battles = evalci.preference.simulate_battles(
    ...     {"a": 0.5, "b": 0.0, "c": -0.5}, n_prompts=200, rng=0)
    >>> res = evalci.preference.preference_ci(battles, anchor="b",
    ...                                       n_resamples=500, rng=0)
    >>> res.leaderboard().table[["system", "rank_low", "rank_high"]]
      system  rank_low  rank_high
    0      a         1          1
    1      b         2          2
    2      c         3          3
    """
    sc, prior = _options(model, ties, anchor, anchor_score, scale, base, prior)
    level = check_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples, minimum=2, hint=" Use 1000.")
    check_option(
        method, "method", _INTERVALS, describe="'percentile', 'basic' or 'normal'"
    )
    cols = dict(model_a=model_a, model_b=model_b, winner=winner, verdict=verdict)
    data = _encode(battles, cluster, strength, ties, model, models, cols, judge)
    ref = _reference(data, sc)
    check_memory(data, n_resamples)
    root = _rs.seed_sequence(rng)
    fit, theta, lam, thetas, lams = _fits(
        data, model, ties, prior, ref, sc, n_resamples, root
    )
    at = ref if sc.anchor else None
    scores = _result(
        data, sc.scores(theta, at), sc.scores(thetas, at).T, level, method, model
    )
    rate = None
    if sc.anchor:
        rate = _result(
            data,
            _win_rate(theta, lam, ref, model),
            _win_rate(thetas, lams, ref, model).T,
            level,
            method,
            f"{model} win rate vs {sc.anchor}",
        )
    return PreferenceResult(
        fit=fit,
        scores=scores,
        win_rate=rate,
        tie_parameter=np.exp(lams) if model == "davidson" else None,
    )


def _fits(data, model, ties, prior, ref, sc, n_resamples, root) -> tuple:
    """The point fit and the replicates' ``theta (B, G)`` and ``lam (B,)``.

    ``prior=None``: maximum likelihood, unless the data or some resample
    leaves a score infinite; then the point fit and every replicate again
    with the weak prior (one objective for the whole result, warned).
    """
    fit, theta, lam = _point(data, model, ties, prior, ref, sc)
    start = (theta, lam if model == "davidson" else 0.0)
    kw = dict(model=model, ties=ties, ref=ref, n_resamples=n_resamples, root=root)
    auto = prior is None and fit.prior == 0
    thetas, lams = replicate_fits(data, prior=fit.prior, start=start, auto=auto, **kw)
    if thetas is None:  # a resample without the maximum: all again, with the prior
        warn_prior(lams)
        fit, theta, lam = _point(data, model, ties, AUTO_PRIOR, ref, sc)
        start = (theta, lam if model == "davidson" else 0.0)
        thetas, lams = replicate_fits(data, prior=AUTO_PRIOR, start=start, **kw)
    return fit, theta, lam, thetas, lams


def _result(data: Battles, estimate, reps, level, method, metric) -> BootstrapResult:
    """One BootstrapResult per model (groups), all from the same draws."""
    low, high, z0 = _intervals.interval(reps, estimate, method, level)
    g = len(estimate)
    return BootstrapResult._from_arrays(
        groups=data.models,
        estimate=estimate,
        low=low,
        high=high,
        standard_error=reps.std(axis=1, ddof=1),
        bootstrap_distribution=reps,
        n_inputs=data.n_inputs,
        n_runs=data.n_battles,
        n_clusters=data.n_clusters,
        z0=z0,
        acceleration=np.full(g, np.nan),
        method=method,
        strategy="cluster" if data.cluster else "battle",
        confidence_level=level,
        n_resamples=reps.shape[1],
        weight="battle",
        metric=metric,
        paired=True,
        cluster=data.cluster,
        input=data.cluster,
        kernel="index",
    )


def arena_leaderboard(
    battles: pd.DataFrame,
    *,
    method: str = "max-t",
    confidence_level: float = 0.95,
    **kwargs,
) -> Leaderboard:
    """:func:`preference_ci`, then its :meth:`~PreferenceResult.leaderboard`.

    Parameters
    ----------
    battles : pandas.DataFrame
        As in :func:`preference_ci`.
    method : {'max-t', 'stepdown', 'holm', 'bh', 'by'}
        The pairwise tests behind the simultaneous rank intervals (see
        :func:`evalci.leaderboard`).
    confidence_level : float
        Of the rank intervals (family-wise) and of the score intervals.
    **kwargs
        Everything else :func:`preference_ci` takes (``model``, ``cluster``,
        ``anchor``, ``strength``, ``n_resamples``, ``rng``, ...).

    Returns
    -------
    Leaderboard
    """
    res = preference_ci(battles, confidence_level=confidence_level, **kwargs)
    return res.leaderboard(method=method)
