"""Leaderboards from shared bootstrap draws: rank intervals and tie groups.

``board`` (:class:`Leaderboard`, the result), ``ranking``
(:func:`leaderboard`,
:func:`leaderboard_from_bootstrap`: marginal and simultaneous rank
intervals, tie groups) and ``simultaneous`` (the pairwise tests behind
them: max-t, step-down, Holm).

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``; the
family ``compare``.
"""

from evalci.methods.ranks.board import Leaderboard
from evalci.methods.ranks.ranking import leaderboard, leaderboard_from_bootstrap

__all__ = ["Leaderboard", "leaderboard", "leaderboard_from_bootstrap"]
