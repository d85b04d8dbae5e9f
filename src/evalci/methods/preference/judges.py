"""A judge's biases in pairwise verdicts: position bias (the verdict follows
the order the answers were shown in) and self-preference (the judge favours
its own model), each with a test.

Arena-Hard judges every battle twice with the answers' order swapped
(:func:`evalci.read_arena_hard`'s ``game`` 1 and 2); so does any pairwise
judge run both ways. A *couple* is the two games of one (prompt, pair of
models, judge). With ``+1`` for a verdict for the answer shown first, ``-1``
for the second and ``0`` for a tie, a couple's position score is the mean of
its two games: the models' merits cancel (each is first once), so its
expectation is the judge's position bias, 0 for an unbiased judge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.lazy import stats
from evalci._base.text import as_written
from evalci._base.validate import check_columns, check_frame, check_level

__all__ = ["PositionBias", "position_bias", "self_preference"]

_SIDE = {"model_a": 1.0, "model_b": -1.0, "tie": 0.0, "tie (bothbad)": 0.0}


@dataclass(frozen=True, repr=False)
class PositionBias:
    """Position bias per judge.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per judge: ``n_couples`` (prompts x pairs judged both ways),
        ``consistent`` (share whose verdict follows the models: the same
        model wins both games, or both are ties), ``first`` and ``second``
        (share won by the answer shown first, or second, in both games),
        ``bias`` (mean position score: +1 always the first answer, -1
        always the second), ``low``/``high`` (its interval, clustered by
        prompt), ``pvalue`` (exact two-sided sign test of ``first`` against
        ``second`` couples: no position bias means either is as likely).
    confidence_level : float
        The level of the intervals.
    """

    table: pd.DataFrame
    confidence_level: float

    def __repr__(self) -> str:
        return (f"PositionBias ({self.confidence_level:.0%} intervals clustered by "
                f"prompt)\n{self.table.round(4).to_string()}")


def _sides(frame: pd.DataFrame, winner: str) -> np.ndarray:
    labels = frame[winner].astype(str).str.strip().str.lower()
    bad = ~labels.isin(list(_SIDE))
    if bad.any():
        raise ValueError(
            f"`winner` column {as_written(winner)} holds "
            f"{as_written(frame.loc[bad, winner].iloc[0])}; verdicts must be "
            "'model_a', 'model_b' or 'tie' (as read_arena and read_arena_hard write)."
        )
    return labels.map(_SIDE).to_numpy(dtype=float)


def _couples(frame, model_a, model_b, winner, cluster, judge):
    """One row per couple: its judge, prompt, position score and kind."""
    side = _sides(frame, winner)
    first = frame[model_a].astype(str).to_numpy()
    second = frame[model_b].astype(str).to_numpy()
    low = np.where(first < second, first, second)
    high = np.where(first < second, second, first)
    work = pd.DataFrame({"judge": frame[judge].to_numpy() if judge else "judge",
                         "cluster": frame[cluster].to_numpy(), "low": low,
                         "high": high, "side": side,
                         "low_first": first == low})
    keys = ["judge", "cluster", "low", "high"]
    grouped = work.groupby(keys, sort=True, dropna=False)
    count = grouped.side.size()
    both = grouped.low_first.agg(["min", "max"])
    ok = (count == 2) & (both["min"] != both["max"])  # one game each way
    if not ok.all():
        bad = count.index[~ok.to_numpy()][0]
        raise ValueError(
            f"prompt {as_written(bad[1])}, {bad[2]!r} vs {bad[3]!r} (judge "
            f"{as_written(bad[0])}): {int(count[bad])} games, not one in each "
            "order; position bias needs every battle judged twice with the "
            "answers swapped (Arena-Hard's two games)."
        )
    score = grouped.side.mean()
    sides = grouped.side.agg(["min", "max"])
    kind = np.select([(sides["min"] == 1), (sides["max"] == -1)], ["first", "second"],
                     default="other")
    # consistent: the same model wins both (first once, second once) or two ties
    consistent = (sides["min"] == -sides["max"])
    return pd.DataFrame({"score": score, "kind": kind, "consistent": consistent}).reset_index()


def _judge_row(part: pd.DataFrame, level: float) -> dict:
    per_prompt = part.groupby("cluster").score.mean()
    n = len(per_prompt)
    est = float(part.score.mean())
    weights = part.groupby("cluster").size() / len(part)
    u = weights * (per_prompt - est)
    se = float(np.sqrt(n / (n - 1) * np.sum(u**2))) if n > 1 else np.nan
    half = stats.t.ppf(0.5 + level / 2, n - 1) * se if n > 1 else np.nan
    k1, k2 = int((part.kind == "first").sum()), int((part.kind == "second").sum())
    p = stats.binomtest(k1, k1 + k2, 0.5).pvalue if k1 + k2 else np.nan
    return {"n_couples": len(part), "consistent": float(part.consistent.mean()),
            "first": k1 / len(part), "second": k2 / len(part), "bias": est,
            "low": est - half, "high": est + half, "pvalue": float(p)}


def position_bias(battles: pd.DataFrame, *, judge: str | None = "judge",
                  model_a: str = "model_a", model_b: str = "model_b",
                  winner: str = "winner", cluster: str = "question_id",
                  confidence_level: float = 0.95) -> PositionBias:
    """How much a judge's verdicts follow the order the answers were shown in.

    Parameters
    ----------
    battles : pandas.DataFrame
        Every battle judged twice with the answers swapped (e.g.
        :func:`evalci.read_arena_hard`): one row per game with the models
        shown first (``model_a``) and second (``model_b``) and the verdict.
    judge : str or None
        The judge column (one row of results per judge); None for one judge.
    model_a, model_b, winner, cluster : str
        The columns of the first and second answer's model, the verdict
        (``model_a``, ``model_b``, ``tie``) and the prompt.
    confidence_level : float
        Level of the bias's interval (Student's t on prompts, clustered).

    Returns
    -------
    PositionBias
        ``table``: per judge, the couples, the shares consistent / won by
        the first answer twice / by the second twice, the bias with its
        interval and the exact sign test's p-value.

    Examples
    --------
    >>> import pandas as pd
    >>> games = pd.DataFrame({
    ...     "question_id": [1, 1, 2, 2, 3, 3],
    ...     "model_a": ["x", "y", "x", "y", "x", "y"],
    ...     "model_b": ["y", "x", "y", "x", "y", "x"],
    ...     "winner": ["model_a", "model_a", "model_a", "model_b", "model_a", "model_a"]})
    >>> t = position_bias(games, judge=None).table
    >>> t[["n_couples", "first", "bias"]].round(3).to_dict("records")
    [{'n_couples': 3, 'first': 0.667, 'bias': 0.667}]
    """
    check_frame(battles, rows=True, name="battles")
    level = check_level(confidence_level)
    cols = [model_a, model_b, winner, cluster] + ([judge] if judge else [])
    for name, col in zip(("model_a", "model_b", "winner", "cluster", "judge"), cols,
                         strict=False):
        check_columns(battles, [col], name)
    couples = _couples(battles, model_a, model_b, winner, cluster, judge)
    rows = {j: _judge_row(part, level) for j, part in couples.groupby("judge", sort=True)}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "judge"
    return PositionBias(table, level)


def self_preference(battles: pd.DataFrame, judges: dict, *, judge: str = "judge",
                    model_a: str = "model_a", model_b: str = "model_b",
                    winner: str = "winner", cluster: str = "question_id",
                    confidence_level: float = 0.95) -> pd.DataFrame:
    """Whether a judge favours its own model, against the other judges on
    the same battles.

    For each judge whose model plays (``judges`` maps a judge to its model),
    the model's score (1 a win, 1/2 a tie, 0 a loss) in the battles that
    judge judged, minus its score from the other judges on the same battles
    (same prompt, opponent and order), averaged over prompts; the interval
    is Student's t on prompts (clustered), the test its t statistic.

    Parameters
    ----------
    battles : pandas.DataFrame
        Battles judged by several judges (one row per game and judge).
    judges : dict
        Judge name -> the model it is (e.g. ``{"gpt-4-judge": "gpt-4"}``).
    judge, model_a, model_b, winner, cluster : str
        Columns, as in :func:`position_bias`.
    confidence_level : float
        Level of the interval.

    Returns
    -------
    pandas.DataFrame
        One row per judge: ``model``, ``n_battles``, ``own`` (its model's
        score by this judge), ``others`` (by the other judges),
        ``preference`` (``own - others``), ``low``, ``high``, ``pvalue``.
    """
    check_frame(battles, rows=True, name="battles")
    level = check_level(confidence_level)
    check_columns(battles, [judge, model_a, model_b, winner, cluster], "battles")
    if not isinstance(judges, dict) or not judges:
        raise TypeError("`judges` must map each judge to its model, e.g. "
                        "{'gpt-4-judge': 'gpt-4'}.")
    side = _sides(battles, winner)
    rows = []
    for name, model in judges.items():
        plays = (battles[model_a] == model) | (battles[model_b] == model)
        sub = battles.loc[plays]
        won = np.where(sub[model_a] == model, side[plays.to_numpy()],
                       -side[plays.to_numpy()])
        score = pd.Series((won + 1) / 2, index=sub.index)
        key = [cluster, model_a, model_b]
        own = score[sub[judge] == name].groupby([sub[k] for k in key]).mean()
        other = score[sub[judge] != name].groupby([sub[k] for k in key]).mean()
        d = (own - other).dropna()
        if len(d) < 2:
            raise ValueError(
                f"`judges`: judge {as_written(name)} and the others share "
                f"{len(d)} battles of {as_written(model)}; a comparison needs at least 2.")
        per_prompt = d.groupby(level=0).mean()
        n, est = len(per_prompt), float(per_prompt.mean())
        se = float(per_prompt.std(ddof=1) / np.sqrt(n))
        half = stats.t.ppf(0.5 + level / 2, n - 1) * se
        p = 2 * stats.t.sf(abs(est / se), n - 1) if se > 0 else np.nan
        rows.append({"judge": name, "model": model, "n_battles": len(d),
                     "own": float(own.reindex(d.index).mean()),
                     "others": float(other.reindex(d.index).mean()),
                     "preference": est, "low": est - half, "high": est + half,
                     "pvalue": p})
    return pd.DataFrame(rows).set_index("judge")
