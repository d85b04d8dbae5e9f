"""The missing-value policy around the engine: one step before the pass, one after.

:func:`before` reads the table under ``missing=`` (raise, drop, zero or
worst-case bounds; :mod:`evalci.engine.missing` holds the vocabulary: the
counts, the fillings, the notes) and returns what the engine resamples: the
table as it is, with the missing runs dropped or counted as 0, or the two
fillings (0 and 1) as groups of the same inputs, so both get the same draws.
:func:`after` turns the pass's result into the one the user gets: the bounds
read from the two fillings, the counts attached, the warnings said.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from evalci.engine import missing as _missing
from evalci.engine.args import BootstrapArgs
from evalci.engine.results import BootstrapResult, warn_degenerate

__all__ = ["Step", "after", "before"]


@dataclass(frozen=True)
class Step:
    """What the engine resamples under a policy, and what :func:`after` needs."""

    data: pd.DataFrame
    args: BootstrapArgs
    counts: pd.DataFrame | None  # attempted, scored and missing per group
    bounds: bool  # two fillings, one group each: read low and high apart


def before(data, args: BootstrapArgs) -> Step:
    """The table the engine resamples under ``args.missing``."""
    _missing.check_policy(data, args)
    plain = args.trials is not None or not isinstance(data, pd.DataFrame)
    counts = None if plain else _missing.tally(data, args)
    if counts is None:
        return Step(data, args, None, False)
    if args.missing == "raise":
        _missing.refuse(data, args)
    if args.missing == "bounds":
        both, both_args = _missing.fillings(data, args)
        return Step(both, both_args, counts, True)
    if args.missing == "drop":
        _missing.warn_dropped(counts)
    else:
        data = _missing.filled(data, args)
    return Step(data, args, counts, False)


def after(result: BootstrapResult, step: Step, data, args: BootstrapArgs):
    """The user's result: bounds from the fillings, the counts attached."""
    if step.counts is None:
        return result
    if step.bounds:
        result = _bounds(result, step.counts, data, args)
    counts = _missing.aligned(step.counts, result.groups)
    return replace(result, missing=args.missing, counts=counts)


def _bounds(pair: BootstrapResult, counts, data, args) -> BootstrapResult:
    """``low`` from the zero filling, ``high`` from the one filling."""
    fill = np.asarray(pair.groups.get_level_values(_missing.FILL))
    zero, one = (
        pair._select(
            pos, pair.groups[pos].droplevel(_missing.FILL) if args.by else None
        )
        for pos in (np.flatnonzero(fill == 0), np.flatnonzero(fill == 1))
    )
    share = pd.Series(_missing.share_scored(data, args), index=counts.index)
    if zero.groups is not None:
        share = share.reindex(zero.groups)
    res = BootstrapResult._from_fillings(zero, one, share.to_numpy())
    warn_degenerate(None, None, flat=res._arrays("low") == res._arrays("high"))
    _missing.warn_unscored(counts)
    return res
