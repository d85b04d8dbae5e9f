"""Battles to sufficient statistics: matchup counts, per cluster.

A battle is a row ``(model_a, model_b, winner)`` with ``winner`` one of
:data:`WINNERS`, optionally a cluster key (the prompt, ``question_id``; or
the judge) and a verdict label (``"A>>B"``, ...) that ``strength=`` weighs.
:func:`encode` validates the table and reduces it to

* the models (sorted names) and the observed pairs ``i < j``;
* per pair, the weighted wins of ``i``, wins of ``j`` and ties;
* a sparse ``(C, 3 P)`` matrix ``S`` of the same counts per resampling unit:
  a prompt (or judge) when ``cluster`` is given, else a *battle type* (a
  distinct ``(pair, outcome, weight)``) with its multiplicity, so that a
  bootstrap replicate's counts are ``w @ S`` for a weight vector ``w`` over
  units (count weights, never duplicated rows).

Units are sorted by their key, so results never depend on row order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from evalci._base.lazy import sparse
from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_frame,
    check_number,
)
from evalci._base.warnings import EstimandWarning
from evalci._base.warnings import warn as _warn
from evalci.methods.preference.fit import Pairs, components

__all__ = [
    "AUTO_PRIOR",
    "WINNERS",
    "Battles",
    "WeakPriorWarning",
    "check_graph",
    "encode",
    "row_cells",
    "verdict_class",
    "warn_prior",
]

#: The weak prior added when a maximum-likelihood score would be infinite
#: (``prior=None``): a Gaussian of SD 10 on the natural log-strengths,
#: ``prior / 2 * sum(theta ** 2)`` (choix's MAP with ``alpha = prior / 2``).
AUTO_PRIOR = 0.01


class WeakPriorWarning(EstimandWarning):
    """A weak prior was added because a maximum-likelihood score is infinite.

    Some model wins (or loses) every battle it plays, in the data or in some
    bootstrap resample; its maximum-likelihood log-strength is then infinite
    and the board could not be ranked. With ``prior=None`` (the default)
    every fit of the call uses the Gaussian prior :data:`AUTO_PRIOR`
    instead; pass ``prior=`` to choose it, or ``prior=0`` to refuse.
    """


#: Arena's winner values and the outcome each means (0: a wins, 1: b, 2: tie).
WINNERS = {"model_a": 0, "model_b": 1, "tie": 2, "tie (bothbad)": 2}

#: Verdict labels (A = model_a) -> (outcome, strength key).
_VERDICTS = {
    "A>>B": (0, "A>>B"),
    "B<<A": (0, "A>>B"),
    "A>B": (0, "A>B"),
    "B<A": (0, "A>B"),
    "A=B": (2, "A=B"),
    "B=A": (2, "A=B"),
    "B>A": (1, "A>B"),
    "A<B": (1, "A>B"),
    "B>>A": (1, "A>>B"),
    "A<<B": (1, "A>>B"),
}
STRENGTH_KEYS = ("A>>B", "A>B", "A=B")


@dataclass(frozen=True)
class Battles:
    """Validated battles as counts (see the module docstring)."""

    models: pd.Index
    pairs: Pairs
    counts: np.ndarray  # (P, 3): wins of i, wins of j, ties (weighted)
    units: sparse.csr_matrix  # (C, 3P) counts per resampling unit
    multiplicity: np.ndarray | None  # (C,) battle-type sizes; None: clusters
    n_battles: np.ndarray  # (G,) battles per model (unweighted)
    n_inputs: np.ndarray  # (G,) distinct prompts per model (or battles)
    n_clusters: np.ndarray  # (G,) distinct clusters per model
    cluster: tuple
    #: with crossed clusters (prompt x judge): each unit's code in each
    #: cluster column, for the pigeonhole weights; None otherwise
    crossed: tuple | None = None

    @property
    def n_units(self) -> int:
        return self.units.shape[0]


def verdict_class(labels: pd.Series, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Outcome codes and strength keys of verdict labels; unknown labels raise."""
    text = labels.astype(str).str.replace(" ", "", regex=False)
    bad = ~text.isin(list(_VERDICTS)) | labels.isna()
    if bad.any():
        shown = ", ".join(repr(v) for v in pd.unique(labels[bad])[:5])
        raise ValueError(
            f"`{column}` holds verdicts that are not Arena-Hard labels ({shown}); "
            f"known labels: {', '.join(_VERDICTS)} (A is model_a)."
        )
    outcome = text.map(lambda s: _VERDICTS[s][0]).to_numpy(np.int64)
    key = text.map(lambda s: _VERDICTS[s][1]).to_numpy(object)
    return outcome, key


def check_strength(strength) -> dict[str, float]:
    """``strength=``: weights of the verdict classes; every other class counts 1."""
    if not isinstance(strength, dict):
        raise TypeError(
            "`strength` must be a dict of verdict weights, e.g. "
            f"{{'A>>B': 3, 'A>B': 1}}; got {type(strength).__name__}."
        )
    out = dict.fromkeys(STRENGTH_KEYS, 1.0)
    for key, w in strength.items():
        norm = str(key).replace(" ", "")
        if norm not in _VERDICTS:
            raise ValueError(
                f"`strength`: {as_written(key)} is not a verdict label; use 'A>>B' (a strong "
                "win, either side), 'A>B' (a win) or 'A=B' (a tie)."
            )
        out[_VERDICTS[norm][1]] = check_number(
            w, f"strength[{key!r}]", low=0, hint=" (a verdict's weight), e.g. 3"
        )
    return out


def _outcomes(data, winner, verdict, strength):
    """Outcome codes (0/1/2) and battle weights, validated."""
    col = data[winner]
    try:
        codes = pd.Index(list(WINNERS)).get_indexer(col)
    except TypeError:  # unhashable values (lists, dicts): none is a winner
        codes = pd.Index(list(WINNERS)).get_indexer(col.map(_hashable))
    if (codes < 0).any():
        bad = col[codes < 0]
        counts = bad.map(as_written).value_counts()
        shown = ", ".join(f"{v} ({n} rows)" for v, n in counts.head(5).items())
        raise ValueError(
            f"`{winner}` holds values that name no winner: {shown}; each battle's "
            f"winner must be one of {', '.join(repr(w) for w in WINNERS)}. Fix or "
            "drop those rows first."
        )
    outcome = np.array(list(WINNERS.values()), np.int64)[codes]
    weight = np.ones(len(data))
    if strength is not None:
        if verdict not in data.columns:
            raise ValueError(
                f"`strength` weighs each battle by its verdict, but the table has no "
                f"`{verdict}` column (e.g. 'A>>B', as evalci.read_arena_hard "
                "writes); pass verdict= to name it, or drop strength=."
            )
        v_out, key = verdict_class(data[verdict], verdict)
        clash = v_out != outcome
        if clash.any():
            row = data.index[np.argmax(clash)]
            raise ValueError(
                f"`{verdict}` and `{winner}` disagree on {int(clash.sum())} battles "
                f"(first: row {as_written(row)}); the verdict's A is model_a."
            )
        weight = pd.Series(key).map(strength).to_numpy(float)
    return outcome, weight


def _hashable(v):
    """``v``, or its repr when it cannot be a dict key (a list, a dict)."""
    try:
        hash(v)
    except TypeError:
        return repr(v)
    return v


#: what pandas infers for a column of model names that can be told apart
_NAME_KINDS = {"string", "integer", "categorical", "empty"}


def _check_names(data, col) -> None:
    """Model names: present, and text (or whole numbers), never lists or NaN."""
    na = data[col].isna()
    if na.any():
        raise ValueError(f"`{col}`: {int(na.sum())} battles name no model.")
    kind = pd.api.types.infer_dtype(data[col], skipna=False)
    if kind in _NAME_KINDS:
        return
    odd = data[col].map(
        lambda v: isinstance(v, bool) or not isinstance(v, (str, int, np.integer))
    )
    if odd.any():
        first = data[col][odd].iloc[0]
        raise ValueError(
            f"`{col}` holds values that are not model names ({kind}; first "
            f"{_plain(first)!r}); each battle names its models as text."
        )


def _plain(v):
    """A numpy scalar as the Python value it prints as."""
    return v.item() if isinstance(v, np.generic) else v


def _keys(data, cols, name):
    """Sorted integer codes of the (possibly several) key columns."""
    for c in cols:
        if data[c].isna().any():
            raise ValueError(
                f"`{name}`: the column {as_written(c)} has missing values; every battle "
                "needs its cluster (drop or fill those rows)."
            )
    return data.groupby(cols, sort=True, dropna=False).ngroup().to_numpy(np.int64)


def encode(
    data: pd.DataFrame,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    cluster=None,
    verdict: str = "verdict",
    strength=None,
    ties: str = "keep",
    models=None,
    crossed: bool = False,
) -> Battles:
    """Validate a battle table and reduce it to :class:`Battles`.

    ``ties="drop"`` leaves tied battles out (and models that only tied);
    ``models`` names models that must all be ranked (one that never plays
    raises); ``crossed`` keeps each unit's code in every cluster column (the
    units are then their crossed cells, e.g. prompt x judge).
    """
    check_frame(data, name="battles", rows=True)
    cluster_cols = as_columns(cluster, "cluster")
    check_columns(data, [model_a, model_b, winner, *cluster_cols], "battles")
    strength = None if strength is None else check_strength(strength)
    for c in (model_a, model_b):
        _check_names(data, c)
    outcome, weight = _outcomes(data, winner, verdict, strength)
    both = pd.concat([data[model_a], data[model_b]], ignore_index=True).astype(str)
    codes, uniques = pd.factorize(both)
    order = np.argsort(np.asarray(uniques, dtype=object))  # models sorted by name
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    names = np.asarray(uniques, dtype=object)[order]
    n = len(data)
    code_a, code_b = rank[codes[:n]], rank[codes[n:]]
    same = code_a == code_b
    if same.any():
        raise ValueError(
            f"{int(same.sum())} battles pit a model against itself (first: "
            f"{as_written(names[code_a[same][0]])}); drop them, they carry no comparison."
        )
    unit = _keys(data, cluster_cols, "cluster") if cluster_cols else None
    keep = weight > 0
    if ties == "drop":
        keep &= outcome != 2
    g = len(names)
    played = names[np.bincount(np.r_[code_a[keep], code_b[keep]], minlength=g) > 0]
    _check_models(models, names, played)
    a, b = code_a[keep], code_b[keep]
    outcome, weight = outcome[keep], weight[keep]
    unit = None if unit is None else unit[keep]
    parts = ([_keys(data, [c], "cluster")[keep] for c in cluster_cols]
             if crossed else None)
    battles = _reduce(names, a, b, outcome, weight, unit, tuple(cluster_cols))
    if parts is None:
        return battles
    _, dense, _ = _unique(unit)
    per_unit = []
    for part in parts:
        codes = np.zeros(battles.n_units, np.int64)
        codes[dense] = _unique(part)[1]
        per_unit.append(codes)
    return replace(battles, crossed=tuple(per_unit))


def _check_models(models, names, played) -> None:
    """Every model asked for must play (a battle that counts)."""
    wanted = names if models is None else np.asarray([str(m) for m in models])
    idle = sorted(set(wanted) - set(played))
    if idle:
        raise ValueError(
            f"these models cannot be ranked: they play no battle that counts "
            f"({', '.join(map(repr, idle[:10]))}"
            + (f" and {len(idle) - 10} more" if len(idle) > 10 else "")
            + "); give them battles, or leave them out of `models`."
        )
    if models is not None:
        extra = sorted(set(names) - set(wanted))
        if extra:
            raise ValueError(
                f"`models` leaves out models that play ({', '.join(map(repr, extra[:5]))}); "
                "list every model, or filter the battles first."
            )


def _unique(x: np.ndarray):
    """Sorted distinct values, the inverse and the counts (by one sort).

    numpy's own ``unique`` hashes when no inverse is asked for, which is
    many times slower on millions of spread-out integers (numpy 2.4).
    """
    order = np.argsort(x, kind="stable")
    s = x[order]
    new = np.r_[True, s[1:] != s[:-1]] if len(s) else np.zeros(0, bool)
    inverse = np.empty(len(x), np.int64)
    inverse[order] = np.cumsum(new) - 1
    counts = np.diff(np.r_[np.flatnonzero(new), len(x)])
    return s[new], inverse, counts


def _reduce(names, a, b, outcome, weight, unit, cluster) -> Battles:
    g = len(names)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    # outcome seen from the canonical pair (lo, hi): a win of b is a win of hi
    flip = a > b
    canon = np.where(flip & (outcome < 2), 1 - outcome, outcome)
    pair_key = lo * g + hi
    pair_ids, pair, _ = _unique(pair_key)
    pairs = Pairs(i=pair_ids // g, j=pair_ids % g, n_models=g)
    cell = pair * 3 + canon
    n_cells = 3 * len(pair_ids)
    counts = np.bincount(cell, weights=weight, minlength=n_cells).reshape(-1, 3)
    if unit is None:
        # battle types: distinct (cell, weight), with their multiplicity
        wcode = _unique(weight)[1]
        types, inverse, mult = _unique(cell * (wcode.max() + 1) + wcode)
        first = np.zeros(len(types), np.int64)
        first[inverse] = np.arange(len(cell))
        rows, cols, vals = np.arange(len(types)), cell[first], weight[first]
        units = sparse.csr_matrix((vals, (rows, cols)), shape=(len(types), n_cells))
        n_inputs = np.bincount(np.r_[a, b], minlength=g)
        n_clusters, multiplicity = n_inputs, mult.astype(float)
    else:
        _, unit, _ = _unique(unit)  # dense, sorted codes
        n_units = int(unit.max()) + 1
        units = sparse.csr_matrix(
            (weight, (unit, cell)), shape=(n_units, n_cells)
        )  # duplicates summed
        units.sum_duplicates()
        # distinct (unit, model) pairs that played, per model (linear memory)
        met = _unique(np.r_[unit * g + a, unit * g + b])[0]
        n_clusters = np.bincount(met % g, minlength=g)
        n_inputs, multiplicity = n_clusters, None
    return Battles(
        models=pd.Index(names, name="system"),
        pairs=pairs,
        counts=counts,
        units=units,
        multiplicity=multiplicity,
        n_battles=np.bincount(np.r_[a, b], minlength=g),
        n_inputs=n_inputs,
        n_clusters=n_clusters,
        cluster=cluster,
    )


def row_cells(
    data: pd.DataFrame,
    battles: Battles,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    verdict: str = "verdict",
    strength=None,
    ties: str = "keep",
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's matchup cell (``3 * pair + outcome`` of ``battles``) and weight.

    ``data`` is the table ``battles`` was encoded from (same options); a row
    that does not count (weight 0, or a tie with ``ties="drop"``) gets cell
    -1. The cells' weighted counts are ``battles.counts``.
    """
    strength = None if strength is None else check_strength(strength)
    outcome, weight = _outcomes(data, winner, verdict, strength)
    names = battles.models
    a = names.get_indexer(data[model_a].astype(str))
    b = names.get_indexer(data[model_b].astype(str))
    g = battles.pairs.n_models
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    canon = np.where((a > b) & (outcome < 2), 1 - outcome, outcome)
    pair_ids = battles.pairs.i * g + battles.pairs.j
    pair = np.searchsorted(pair_ids, lo * g + hi)
    keep = (weight > 0) & (a >= 0) & (b >= 0)
    if ties == "drop":
        keep &= outcome != 2
    cell = np.where(keep, 3 * np.minimum(pair, len(pair_ids) - 1) + canon, -1)
    return cell, np.where(keep, weight, 0.0)


def check_graph(battles: Battles, wi, wj, t, model, prior) -> float:
    """The prior to fit with: ``prior``, or for ``prior=None`` 0 or :data:`AUTO_PRIOR`.

    Raises (naming the models) when no fit exists: a disconnected graph,
    Davidson without ties, or ``prior == 0`` on a graph that is not strongly
    connected. ``prior=None`` (the entry points' default) fits by maximum
    likelihood when the graph is strongly connected, and otherwise adds the
    weak prior, with a :class:`WeakPriorWarning` that names the models.
    """
    names = battles.models
    n_weak, weak = components(wi, wj, t, battles.pairs, connection="weak")
    if n_weak > 1:
        groups = [list(names[weak == k]) for k in range(n_weak)]
        groups.sort(key=len)
        shown = "; ".join(", ".join(map(repr, grp[:6])) for grp in groups[:-1][:3])
        raise ValueError(
            f"the comparison graph is disconnected ({n_weak} groups of models "
            f"that never meet each other): these models cannot be ranked against "
            f"the rest: {shown}. Add battles between the groups, or rank each "
            "group on its own."
        )
    if model == "davidson" and (t.sum() == 0 or (wi + wj).sum() == 0):
        raise ValueError(
            "`model='davidson'` needs both ties and decided battles; these battles "
            f"have {'no tie' if t.sum() == 0 else 'only ties'}. Use "
            "model='bradley-terry'."
        )
    if prior is not None and prior > 0:
        return prior
    n_strong, strong = components(wi, wj, t, battles.pairs)
    if n_strong == 1:
        return 0.0
    sizes = np.bincount(strong)
    small = [k for k in np.argsort(sizes)[: max(n_strong - 1, 1)]]
    shown = ", ".join(repr(m) for k in small for m in list(names[strong == k])[:4])
    what = (
        "the comparison graph is not strongly connected: some models win (or "
        "lose) every battle against the rest, so their maximum-likelihood "
        f"scores are infinite: {shown}"
    )
    if prior is None:
        warn_prior(what)
        return AUTO_PRIOR
    raise ValueError(
        f"{what}; with prior=0 they cannot be ranked. Leave `prior` unset (a "
        f"weak prior, prior={AUTO_PRIOR:g}, is then added where needed), pass "
        "prior= (a Gaussian prior on the log-strengths, e.g. prior=0.01), or add "
        "battles those models lose (or win)."
    )


def warn_prior(what: str) -> None:
    """Say that the fit adds the weak prior :data:`AUTO_PRIOR`, and why."""
    sd = AUTO_PRIOR**-0.5
    _warn(
        f"{what}. The fit (and every bootstrap replicate of it) uses a weak "
        f"Gaussian prior on the natural log-strengths instead, prior="
        f"{AUTO_PRIOR:g} (SD {sd:g}, {sd * 400 / np.log(10):,.0f} points on the "
        "400-per-factor-10 scale), so every score is finite; the interval of a "
        "model that never wins (or loses) is then set by the prior on that side. "
        "Pass prior= to choose its strength, or prior=0 to refuse such data.",
        WeakPriorWarning,
    )
