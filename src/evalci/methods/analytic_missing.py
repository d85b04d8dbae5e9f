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
    Worst-case (Manski) bounds on the closed-form interval of the scored
    part: ``[c * low_obs, c * high_obs + (1 - c)]``, ``c`` the share scored.
    With ``weight="input"`` and runs nested in inputs (``"clt"``,
    ``"clustered-wilson"``), ``c`` is the mean over inputs of each input's
    scored share and the scored part weights each scored run by one over its
    input's attempted runs (a ratio estimator with the cluster-robust
    sandwich SE), as in the bootstrap.

Cohen's kappa (``"fleiss-cohen-everitt"``) takes ``"raise"`` and ``"drop"``
only: a missing label is no failure, and kappa's worst case is not [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci.engine import missing as _missing
from evalci.engine.missing import aligned
from evalci.metrics.registry import get_metric

__all__ = ["Missing", "aligned", "bounded", "prepare"]

_KAPPA = "fleiss-cohen-everitt"
_WEIGHTED = ("clt", "clustered-wilson")  # methods that weight runs by input


@dataclass(frozen=True)
class Missing:
    """The table after ``missing=`` and what the result records of it."""

    data: pd.DataFrame  # the rows the interval is built on
    policy: str
    counts: pd.DataFrame | None = None  # engine.missing.tally, full-table groups
    share: pd.Series | None = None  # "bounds": the share scored per group
    weights: np.ndarray | None = None  # "bounds": per row of `data`, or None


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
    rows, scored, share = _missing.scored_part(data, view)
    share = pd.Series(share, index=counts.index)
    weights = None
    if args.method in _WEIGHTED and view.weight == "input":
        weights = rows[scored.metric.columns[0]].to_numpy(dtype=float)
    return Missing(data.loc[~na], policy, counts, share, weights)


def bounded(low, high, share, groups):
    """Worst-case bounds of the interval ``[low, high]`` of the scored part."""
    c = share.to_numpy(dtype=float) if groups is None else share.reindex(groups)
    c = np.asarray(c, dtype=float)
    return (*_missing.bounds(np.asarray(low), np.asarray(high), c), c)
