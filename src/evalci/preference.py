"""Pairwise preferences: the public namespace ``evalci.preference``.

Bradley-Terry and Davidson leaderboards from battles ``(model_a, model_b,
winner)``, bootstrapped over prompts with one shared draw for every model so
that every gap is paired (:func:`preference_ci`, :func:`arena_leaderboard`);
the fewest battles whose removal flips an order
(:func:`preference_fragility`); seeded battles with prompt effects
(:func:`simulate_battles`). The methods are documented in
:mod:`evalci.methods.preference.leaderboard` (page "Arena", docs/arena.md).
"""

from evalci.methods.preference import *  # noqa: F403 - the names of __all__
from evalci.methods.preference import __all__  # noqa: F401
