"""Missing outcomes in :func:`evalci.analytic_ci`: the ``missing=`` policies.

The policies, their checks, messages and counts are those of the bootstrap
(:mod:`evalci.engine.missing`); this module applies them to the table before
a closed-form interval is built:

``"raise"`` (default)
    Refuse, with the counts (how many, in which inputs, why).
``"drop"``
    Leave the missing rows out, with a :class:`~evalci.MissingDataWarning`.
``"zero"``
    A missing outcome is a failure (0); outcomes on [0, 1] only.
``"bounds"``
    Worst-case (Manski) bounds: the closed-form interval of the table with
    every missing outcome a failure (0) and of the table with every one a
    success (1); ``low`` is the first's lower limit, ``high`` the second's
    upper limit (Horowitz and Manski 2000: each end at the asked level), as
    the bootstrap's bounds (:mod:`evalci.engine.missing`). ``estimate`` is
    the score of the scored part, ``e0 / c`` with ``c`` the share scored.
    ``"rule-of-three"`` is refused: a filling of a group with a missing
    outcome is no longer all 0 or all 1.

Cohen's kappa (``"fleiss-cohen-everitt"``) takes ``"raise"`` and ``"drop"``
only: a missing label is no failure, and kappa's worst case is not [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from evalci.engine import missing as _missing
from evalci.engine.missing import aligned
from evalci.metrics.registry import get_metric

__all__ = ["Missing", "aligned", "bounded", "prepare"]

_KAPPA = "fleiss-cohen-everitt"


@dataclass(frozen=True)
class Missing:
    """The table after ``missing=`` and what the result records of it."""

    data: pd.DataFrame  # the rows the interval is built on
    policy: str
    counts: pd.DataFrame | None = None  # engine.missing.tally, full-table groups
    share: pd.Series | None = None  # "bounds": the share scored per group
    ones: pd.DataFrame | None = None  # "bounds": `data` with every missing a 1

    @property
    def fillings(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``"bounds"``: the table with each missing outcome 0, then 1."""
        return self.data, self.ones


@dataclass(frozen=True)
class _View:
    """The arguments as :mod:`evalci.engine.missing` reads them."""

    value: str
    metric: object
    cluster: list
    by: list
    weight: str
    missing: str = "raise"
    input: tuple = ()
    trials: None = None
    strategy: str = "cluster"
    dropna: bool = False
    row_runs: None = None  # analytic tables are never reduced


def _view(args, value: str, policy: str = "raise") -> _View:
    weight = args.weight if args.cluster else "run"  # no cluster: a row is an input
    return _View(value, get_metric("mean"), list(args.cluster), list(args.by),
                 weight, policy)  # fmt: skip


def _refuse(data, args, na, cols) -> None:
    col = next(c for c in cols if data[c].isna().any())
    role = "value" if col == args.value else "truth"
    text = _missing.refusal(data, _view(args, col), na, col, role)
    # analytic_ci's wording since it first refused missing values
    text = text.replace(f"`{role}`: column", f"`{role}` column", 1)
    text = text.replace(
        "; missing='drop' is the old dropna=True. Or fill them.",
        f". Or fill them, or drop them yourself (data.dropna(subset=[{col!r}])).",
    )
    raise ValueError(text)


def prepare(data: pd.DataFrame, args, missing) -> Missing:
    """Apply ``missing=`` to ``data`` (already checked by ``_analytic_iv``)."""
    policy = _missing.policy(missing)
    kappa = args.method == _KAPPA
    cols = [args.value, *([args.truth] if kappa else [])]
    na = data[cols].isna().any(axis=1).to_numpy()
    if len(data) == 0 or not na.any():
        return Missing(data, policy)
    if policy == "raise":
        _refuse(data, args, na, cols)
    if policy == "bounds" and args.method == "rule-of-three":
        raise ValueError(
            "missing='bounds' with method='rule-of-three': the rule of three "
            "bounds a group whose outcomes are all 0 (or all 1), and a missing "
            "outcome may be either, so the worst case is no longer such a "
            "group. Use method='clopper-pearson' (k=1) or 'clustered-wilson' "
            "with missing='bounds', or missing='zero'/'drop'."
        )
    if kappa and policy != "drop":
        raise ValueError(
            f"missing={policy!r} is not defined for Cohen's kappa "
            f"(method={_KAPPA!r}): a missing label is no failure, and the worst "
            "case of kappa is not the range [0, 1]. Use missing='drop' (and say "
            "so), or fill the labels yourself."
        )
    marked = data.assign(**{args.value: data[args.value].mask(na)}) if kappa else data
    view = _view(args, args.value, policy)
    _missing.check_policy(marked, view)
    counts = _missing.tally(marked, view)
    if policy == "drop":
        _missing.warn_dropped(counts)
        return Missing(data.loc[~na], policy, counts)
    if policy == "zero":
        return Missing(_missing.filled(data, view), policy, counts)
    share = pd.Series(_missing.share_scored(data, view), index=counts.index)
    zero, one = (_missing.filled(data, view, fill) for fill in (0.0, 1.0))
    return Missing(zero, policy, counts, share, one)


def bounded(zero, one, handled: Missing):
    """``(interval, fields)`` of the bounds from the intervals of the two
    fillings (``methods.analytic._Closed``): ``low`` the zero filling's,
    ``high`` the one filling's, the standard error the larger of theirs,
    the estimate the scored part's (``e0 / c``), ``boundary`` where either
    filling collapsed at 0/N or N/N (its end is then exact: no warning of
    few inputs or a zero SE). ``fields``: ``share_scored``, ``bound_low``,
    ``bound_high``."""
    groups = zero.cells.groups
    share = handled.share if groups is None else handled.share.reindex(groups)
    c = np.asarray(share, dtype=float)
    _missing.warn_unscored(handled.counts)
    out = replace(
        zero,
        estimate=_missing.scored_score(zero.estimate, c),
        high=one.high,
        se=np.fmax(zero.se, one.se),
        boundary=zero.boundary | one.boundary,
    )
    fields = dict(share_scored=c, bound_low=zero.estimate, bound_high=one.estimate)
    return out, fields
