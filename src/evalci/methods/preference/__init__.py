"""Pairwise preferences: Bradley-Terry and Davidson leaderboards with
intervals paired over prompts.

``leaderboard`` (:func:`bradley_terry`, :func:`davidson`,
:func:`preference_ci`, :func:`arena_leaderboard`), ``results``
(:class:`PreferenceFit`, :class:`PreferenceResult`),
``arena_rank`` (LMArena's arena-rank construction, reproduced:
:func:`arena_rank`, :func:`to_arena_json`),
``data`` (battles to matchup counts per prompt), ``fit`` (vectorised Newton
fits), ``boot`` (the paired prompt bootstrap and refits), ``simulate``
(seeded battles with prompt effects), ``fragility`` (the fewest battles
whose removal flips an order) and ``judges`` (a judge's position bias and
self-preference, with tests). The public home is :mod:`evalci.preference`.

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``; the
family ``ranks``.
"""

from evalci.methods.preference.arena_rank import (
    arena_rank,
    arena_rank_rows,
    to_arena_json,
)
from evalci.methods.preference.data import WINNERS, WeakPriorWarning
from evalci.methods.preference.fragility import (
    PreferenceFragility,
    preference_fragility,
)
from evalci.methods.preference.judges import (
    PositionBias,
    position_bias,
    self_preference,
)
from evalci.methods.preference.leaderboard import (
    arena_leaderboard,
    bradley_terry,
    davidson,
    preference_ci,
)
from evalci.methods.preference.results import PreferenceFit, PreferenceResult
from evalci.methods.preference.simulate import population_fit, simulate_battles

__all__ = [
    "WINNERS",
    "PositionBias",
    "PreferenceFit",
    "PreferenceFragility",
    "PreferenceResult",
    "WeakPriorWarning",
    "arena_leaderboard",
    "arena_rank",
    "arena_rank_rows",
    "bradley_terry",
    "davidson",
    "population_fit",
    "position_bias",
    "preference_ci",
    "preference_fragility",
    "self_preference",
    "simulate_battles",
    "to_arena_json",
]
