"""Missing samples in a paired comparison: ``missing=`` of :func:`evalci.compare`.

Two things can be missing when systems are compared on the same inputs: a
*value* (a sample that errored, hit a limit, was never scored: NaN) and a
*whole input* for one system (its rows are absent: a one-sided input). One
option says what both mean (:mod:`evalci.engine.missing` for one score):

``"raise"`` (the default)
    Refuse, with the counts, naming a few, and the choices.
``"drop"``
    Leave the missing runs out (a :class:`~evalci.MissingDataWarning`: the
    estimand changes), then the inputs left for some systems only (a
    :class:`MissingInputsWarning`): the comparison runs on the inputs every
    system shares.
``"zero"``
    A missing run is a failure (0). An input a system lacks enters with the
    runs another system has of it, all failures; every input is kept.
``"bounds"``
    Worst-case (Manski) bounds on every gap ``b - a``: the lower bound fills
    b's missing runs (one-sided inputs included, as under ``"zero"``) with 0
    and a's with 1, the upper bound the reverse. Both fillings are resampled
    with the same draws as every other system (one pass over ``2 G``
    filled systems), so each bound is a paired bootstrap of its own; the
    interval is ``[low of the lower bound, high of the upper bound]``
    (Horowitz and Manski 2000: each end at the asked level, so the interval
    covers the gap with at least that probability whatever the missing runs
    hold). The decision and the p-value read that interval.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from evalci._base.text import as_written, plain
from evalci._base.warnings import EvalciWarning, MissingDataWarning
from evalci._base.warnings import warn as _warn
from evalci.engine import missing as _missing
from evalci.engine.cube import factorize

__all__ = [
    "MissingInputsWarning",
    "PairedRows",
    "bounded_gaps",
    "paired_rows",
    "warn_unscored",
]


class MissingInputsWarning(EvalciWarning):
    """Inputs present for some systems only were dropped from a paired comparison."""


@dataclass(frozen=True)
class PairedRows:
    """The rows a paired comparison resamples, and what was missing.

    ``frame``: the rows (under ``"bounds"``, the ``2 G`` filled systems, coded
    ``2 * position + fill`` in the system column, fill 0 or 1). ``counts``:
    one row per system (attempted, scored, missing runs, by cause, inputs
    with no row) or None when nothing is missing. ``bounds``: whether
    ``frame`` holds the two fillings. ``systems``: the rows with the systems
    as they are named, for a score per system (``frame`` itself unless
    ``bounds``; then every input for every system, missing values NaN).
    """

    frame: pd.DataFrame
    counts: pd.DataFrame | None
    bounds: bool = False
    systems: pd.DataFrame | None = None

    def __post_init__(self):
        if self.systems is None:
            object.__setattr__(self, "systems", self.frame)


def _presence(frame, keys, system, names):
    """``(codes, keys, present)``: each row's input, and which systems have it."""
    codes, inputs = factorize(frame, keys, "cluster")
    # the few distinct names looked up once, not once a row
    row_code, seen = factorize(frame, [system], "system")
    pos = pd.Index(names).get_indexer(seen)[row_code]
    present = np.zeros((len(inputs), len(names)), dtype=bool)
    present[codes, pos] = True
    return codes, inputs, present


def _counts(frame, args, system, names, lacking) -> pd.DataFrame | None:
    """Per system: the counts of missing runs, and ``n_inputs_missing`` (absent)."""
    tally = _missing.tally(frame, replace(args, by=(system,)))
    if tally is None and not lacking.any():
        return None
    absent = pd.Series(lacking.sum(axis=0), index=pd.Index(names, name=system))
    if tally is None:
        tally = pd.DataFrame(index=absent.index)
    out = tally.reindex(absent.index).fillna(0).astype(np.int64)
    return out.assign(n_inputs_missing=absent.astype(np.int64))


def _one_sided_message(inputs, names, present, lacking) -> str:
    partial = lacking.any(axis=1)
    shown = [
        f"{as_written(inputs[i])} (missing for "
        f"{[plain(names[j]) for j in np.flatnonzero(~present[i])][:3]})"
        for i in np.flatnonzero(partial)[:5]
    ]
    return (
        f"{int(partial.sum())} inputs are present for some systems but not others, "
        f"so the comparison cannot be paired: {', '.join(shown)}. Say what a "
        "missing input means with `missing`: missing='drop' compares on the "
        "inputs all systems share, 'zero' counts it as a failure of the system "
        "that lacks it, 'bounds' gives worst-case bounds on the gap."
    )


def paired_rows(frame, args, keys, system, names, cols, *, warn=True) -> PairedRows:
    """The rows of a comparison of ``names`` under ``args.missing``.

    ``frame`` holds the compared systems only; ``cols`` are the columns whose
    missing value makes a row unusable (value, metric, trials).
    """
    policy = args.missing
    na = frame[cols].isna().any(axis=1).to_numpy()
    codes, inputs, present = _presence(frame, keys, system, names)
    lacking = ~present
    counts = _counts(frame, args, system, names, lacking)
    if counts is None:
        return PairedRows(frame, None)
    if policy == "raise":
        if na.any():
            col = next(c for c in cols if frame[c].isna().any())
            raise ValueError(_missing.refusal(frame, args, na, col, "value"))
        raise ValueError(_one_sided_message(inputs, names, present, lacking))
    if policy == "drop":
        return PairedRows(_dropped(frame, args, keys, system, names, na, warn), counts)
    _missing.check_policy(frame, args)
    whole = _completed(frame, args, system, names, codes, present)
    if policy == "zero":
        return PairedRows(_filled(whole, args.value, 0.0), counts)
    pos = pd.Index(names).get_indexer(whole[system])
    both = [
        _filled(whole, args.value, float(f)).assign(**{system: 2 * pos + f})
        for f in (0, 1)
    ]
    both = pd.concat(both, ignore_index=True)
    return PairedRows(both, counts, bounds=True, systems=whole)


def _dropped(frame, args, keys, system, names, na, warn):
    """``"drop"``: the missing runs, then the inputs some systems lack."""
    if na.any():
        if warn:
            tally = _missing.tally(frame, replace(args, by=()))
            _missing.warn_dropped(tally)
        frame = frame.loc[~na]
    gone = [s for s in names if not (frame[system] == s).any()]
    if gone:
        raise ValueError(
            f"`value`: system {as_written(gone[0])} has no scored rows, so it cannot be "
            "compared; leave it out (`pairs=` / `baseline=`) or choose "
            "missing='zero' or 'bounds'."
        )
    codes, _, present = _presence(frame, keys, system, names)
    partial = ~present.all(axis=1)
    if not partial.any():
        return frame
    if warn:
        _warn(
            f"dropped {int(partial.sum())} of {len(partial)} inputs that are "
            "missing for at least one compared system (after leaving out the "
            "missing runs); the comparison uses the "
            f"{int((~partial).sum())} inputs all of them share.",
            MissingInputsWarning,
        )
    return frame[~partial[codes]]


def _completed(frame, args, system, names, codes, present):
    """``frame`` with, for every input a system lacks, the rows of that input
    of the first system that has it, relabelled, their value missing."""
    if present.all():
        return frame
    pos = pd.Index(names).get_indexer(frame[system])
    donor = present.argmax(axis=1)  # the first system that has each input
    from_donor = pos == donor[codes]
    pieces = [frame]
    for j, name in enumerate(names):
        rows = from_donor & ~present[codes, j]
        if rows.any():
            pieces.append(frame.loc[rows].assign(**{system: name, args.value: np.nan}))
    out = pd.concat(pieces, ignore_index=True)
    if isinstance(frame[system].dtype, pd.CategoricalDtype):
        out[system] = out[system].astype(frame[system].dtype)
    return out


def _filled(frame, value, fill: float) -> pd.DataFrame:
    """``frame`` with each missing value ``fill``, on a float view of the column."""
    y = frame[value]
    if not y.isna().any():
        return frame
    return frame.assign(**{value: _missing.numbers(y).fillna(fill)})


def warn_unscored(share, names) -> None:
    """``"bounds"``: name the systems with no scored run, whose scored part
    (``estimate_a``/``estimate_b``, ``gap``) is NaN; the interval stands."""
    gone = [plain(names[j]) for j in np.flatnonzero(np.asarray(share) == 0)]
    if not gone:
        return
    one = len(gone) == 1
    _warn(
        f"system{'' if one else 's'} {', '.join(map(repr, gone[:5]))} "
        f"{'has' if one else 'have'} no scored run: under missing='bounds' "
        f"{'its' if one else 'their'} score may be anything in [0, 1], so the "
        "score of the scored part (`estimate_a`/`estimate_b`) and the gap "
        "between scored parts (`gap`) are NaN there; `low` and `high` bound the "
        f"gap with {'that score' if one else 'those scores'} anywhere in [0, 1].",
        MissingDataWarning,
    )


def bound_pairs(pairs) -> list[tuple[int, int]]:
    """The ``2 m`` pairs of the filled systems: the lower bounds, then the upper.

    Lower bound of ``b - a``: b filled with 0 (``2 b``), a with 1 (``2 a + 1``);
    upper: the reverse.
    """
    low = [(2 * a + 1, 2 * b) for a, b in pairs]
    high = [(2 * a, 2 * b + 1) for a, b in pairs]
    return low + high


def bounded_gaps(g, m: int, alternative: str):
    """The gaps of ``m`` pairs from those of their :func:`bound_pairs` (``g``).

    Returns ``(g, extra)``: ``g`` with one entry per pair (``estimate``: the
    scored part of each system, ``gap`` their difference, ``low``/``high``
    the bounded interval, ``p`` and ``at_floor`` of the side the interval is
    read from) and ``extra``, the columns ``gap_bound_low``,
    ``gap_bound_high`` (the estimated worst-case gaps) and the systems'
    shares scored.
    """
    e0, e1 = g.estimate[0::2], g.estimate[1::2]
    share = 1.0 - (e1 - e0)  # filling the missing part with 1 rather than 0
    with np.errstate(invalid="ignore", divide="ignore"):
        scored = np.where(share > 0, e0 / share, np.nan)
    lo, hi = slice(0, m), slice(m, 2 * m)
    est_lo, est_hi = g.gap[lo], g.gap[hi]
    if alternative == "greater":
        use_lo = np.ones(m, dtype=bool)
    elif alternative == "less":
        use_lo = np.zeros(m, dtype=bool)
    else:
        use_lo = est_lo > 0
    p = np.where(use_lo, g.p[lo], g.p[hi])
    at_floor = np.where(use_lo, g.at_floor[lo], g.at_floor[hi])
    if alternative == "two-sided":  # the bounds straddle 0: no level excludes it
        straddle = (est_lo <= 0) & (est_hi >= 0)
        p = np.where(straddle, 1.0, p)
        at_floor = at_floor & ~straddle
    dist = None if g.distribution is None else (g.distribution[lo], g.distribution[hi])
    out = replace(
        g,
        estimate=scored,
        gap=np.full(m, np.nan),  # filled in by the caller, per pair
        low=g.low[lo],
        high=g.high[hi],
        se=np.fmax(g.se[lo], g.se[hi]),
        p=p,
        at_floor=at_floor,
        degenerate=g.degenerate[lo] | g.degenerate[hi],
        n_units=g.n_units[lo],
        n_inputs=g.n_inputs[lo],
        distribution=dist,
    )
    return out, {"gap_bound_low": est_lo, "gap_bound_high": est_hi, "share": share}


def bounded_scores(score):
    """Per-input scores of the ``G`` systems from those of the ``2 G`` fillings:
    an input's score where nothing of it is missing (both fillings agree),
    else NaN (it counts as neither a win, a loss nor a tie)."""
    if score is None:
        return None
    s0, s1 = score[:, 0::2], score[:, 1::2]
    return np.where(s0 == s1, s0, np.nan)
