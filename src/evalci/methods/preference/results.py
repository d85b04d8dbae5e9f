"""The results of a preference fit: :class:`PreferenceFit` (a point fit on the Elo-like scale) and :class:`PreferenceResult` (its paired prompt bootstrap), with the scale they share."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base import text as _text
from evalci._base.text import as_written
from evalci.engine.results import BootstrapResult
from evalci.methods.preference.fragility import (
    PreferenceFragility,
    preference_fragility,
)
from evalci.methods.ranks import Leaderboard, leaderboard_from_bootstrap

# ===================================================================== scale
__all__ = ["PreferenceFit", "PreferenceResult", "Scale"]


@dataclass(frozen=True)
class Scale:
    """The Elo-like scale: ``anchor_score + scale / ln(base) * (theta - theta_0)``.

    ``theta_0`` is the anchor's log-strength, or the mean over models when
    there is no anchor.
    """

    anchor: str | None = None
    anchor_score: float = 1000.0
    scale: float = 400.0
    base: float = 10.0

    def scores(self, theta: np.ndarray, ref: int | None) -> np.ndarray:
        zero = theta[..., [ref]] if ref is not None else theta.mean(-1, keepdims=True)
        return self.anchor_score + self.scale / np.log(self.base) * (theta - zero)


def _win_rate(theta, lam, ref, model):
    """Model-implied chance of beating the anchor (a tie counts half)."""
    d = theta - theta[..., [ref]]
    if model == "bradley-terry":
        return 1.0 / (1.0 + np.exp(-d))
    half = 0.5 * d
    lam = np.asarray(lam, dtype=float)[..., None]
    log_den = np.logaddexp(np.logaddexp(half, -half), lam)
    return np.exp(half - log_den) + 0.5 * np.exp(lam - log_den)


# ==================================================================== results
@dataclass(frozen=True, repr=False)
class PreferenceFit:
    """A Bradley-Terry or Davidson fit on battles (no interval).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model, best first: ``system``, ``score`` (Elo-like
        scale), ``win_rate`` (model-implied chance of beating the anchor, a
        tie counting half; NaN without an anchor), ``theta`` (natural
        log-strength, the anchor's 0), ``n_battles``.
    model : {'bradley-terry', 'davidson'}
        The model fitted.
    ties : {'half', 'drop'} or None
        How Bradley-Terry counted ties (None for Davidson, which models them).
    tie_parameter : float or None
        Davidson's ``nu`` (None for Bradley-Terry).
    scale : Scale
        Anchor, anchor score, scale and base.
    prior : float
        The Gaussian penalty on the log-strengths that the fit used (0:
        maximum likelihood; with ``prior=None``, 0 or the weak prior
        :data:`~evalci.methods.preference.data.AUTO_PRIOR` when a
        maximum-likelihood score would be infinite).
    n_battles : float
        Battles counted (weighted by ``strength=`` when given).
    """

    table: pd.DataFrame = field(repr=False)
    model: str
    ties: str | None
    tie_parameter: float | None
    scale: Scale
    prior: float
    n_battles: float

    @property
    def scores(self) -> pd.Series:
        """Scores by model (alphabetical order)."""
        return self.table.set_index("system").score.sort_index()

    def to_frame(self) -> pd.DataFrame:
        """The per-model table (a copy)."""
        return self.table.copy()

    def fragility(self, battles: pd.DataFrame, **kwargs) -> PreferenceFragility:
        """:func:`preference_fragility` of this fit's model on ``battles``.

        ``battles`` must be the table this fit was made from; the model,
        ``ties``, ``prior`` and scale are this fit's.

        Parameters
        ----------
        battles : pandas.DataFrame
            The battles this fit was made from (one row per battle).
        **kwargs
            ``strength``, ``max_remove`` and the column names, as in
            :func:`preference_fragility`.

        Returns
        -------
        PreferenceFragility
        """
        return preference_fragility(
            battles,
            model=self.model,
            ties=self.ties or "half",
            prior=self.prior,
            scale=self.scale.scale,
            base=self.scale.base,
            **kwargs,
        )

    def _header(self) -> str:
        how = "ties modelled" if self.ties is None else f"ties={as_written(self.ties)}"
        s = self.scale
        at = (
            f"{as_written(s.anchor)} = {s.anchor_score:g}"
            if s.anchor
            else f"mean = {s.anchor_score:g}"
        )
        return (
            f"{self.model} ({how}), {len(self.table)} models, "
            f"{self.n_battles:g} battles; scale {s.scale:g} per factor {s.base:g}, {at}"
        )

    def __repr__(self) -> str:
        body = _text.table_text(self.table)
        return f"PreferenceFit: {_text.terminal(self._header())}\n{body}"

    def _repr_html_(self) -> str:
        return _text.result_html("PreferenceFit", self._header(), self.table)


@dataclass(frozen=True, repr=False)
class PreferenceResult:
    """A preference fit with its paired bootstrap.

    Attributes
    ----------
    fit : PreferenceFit
        The point fit.
    scores : BootstrapResult
        One score per model (``groups``), every model on the same draws
        (``paired``); ``strategy`` is ``"cluster"`` (prompts or judges
        resampled, ``cluster``) or ``"battle"`` (battles resampled as if
        independent).
    win_rate : BootstrapResult or None
        The model-implied win rate against the anchor, same draws; None
        without an anchor.
    tie_parameter : ndarray or None
        Davidson's ``nu`` per replicate.
    """

    fit: PreferenceFit
    scores: BootstrapResult
    win_rate: BootstrapResult | None = None
    tie_parameter: np.ndarray | None = field(default=None, repr=False)

    def leaderboard(
        self, method: str = "max-t", confidence_level: float | None = None
    ) -> Leaderboard:
        """Simultaneous rank intervals and tie groups from these replicates.

        :func:`evalci.leaderboard_from_bootstrap` on :attr:`scores`;
        no resampling happens.

        Parameters
        ----------
        method : {'max-t', 'stepdown', 'holm', 'bh', 'by'}
            The pairwise tests behind the rank intervals (see
            :func:`evalci.leaderboard`).
        confidence_level : float, optional
            Family-wise level of the rank intervals; default the scores'.

        Returns
        -------
        Leaderboard
        """
        return leaderboard_from_bootstrap(
            self.scores, method=method, confidence_level=confidence_level
        )

    def fragility(self, battles: pd.DataFrame, **kwargs) -> PreferenceFragility:
        """:meth:`PreferenceFit.fragility` of :attr:`fit` (no resampling).

        Parameters
        ----------
        battles : pandas.DataFrame
            The battles this fit was made from (one row per battle).
        **kwargs
            ``strength``, ``max_remove`` and the column names, as in
            :func:`preference_fragility`.

        Returns
        -------
        PreferenceFragility
        """
        return self.fit.fragility(battles, **kwargs)

    def to_frame(self) -> pd.DataFrame:
        """Per model: score interval, and the win-rate interval when anchored."""
        out = self.scores.to_frame()
        if self.win_rate is not None:
            w = self.win_rate.to_frame()
            for c in ("estimate", "low", "high"):
                out[f"win_rate_{c if c != 'estimate' else 'estimate'}"] = w[c]
        return out

    def __repr__(self) -> str:
        header = _text.terminal(self.fit._header())
        return f"PreferenceResult: {header}\n{self.scores!r}"

    def _repr_html_(self) -> str:
        return _text.result_html(
            "PreferenceResult", self.fit._header(), self.scores._table()
        )

    def plot(self, ax=None, *, sort=True):
        """Forest plot of the score intervals (:meth:`BootstrapResult.plot`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; default a new figure.
        sort : bool
            Models by score (True, the default) or alphabetically.

        Returns
        -------
        matplotlib.axes.Axes
        """
        return self.scores.plot(ax=ax, sort=sort)
