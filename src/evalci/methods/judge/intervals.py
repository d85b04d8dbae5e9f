"""The result base and the intervals (normal, bootstrap) both judge estimators share.

The base class of :class:`~evalci.judge.PPIResult` and
:class:`~evalci.judge.RoganGladenResult`, the normal critical value, the
stratified cluster bootstrap (labeled and unlabeled inputs resampled apart,
through the engine's index kernel) and its percentile interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.lazy import special
from evalci._base.text import as_written
from evalci._base.warnings import DegenerateDataWarning, warn
from evalci.engine import resampling as _rs
from evalci.engine import tiles
from evalci.engine.resampling import seed_sequence
from evalci.engine.results import _GroupedResult


@dataclass(frozen=True, repr=False)
class _JudgeResult(_GroupedResult):
    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: one row per group (group columns first)."""
        frame = pd.DataFrame(
            {n: np.atleast_1d(np.asarray(getattr(self, n))) for n in self._PER_GROUP}
        )
        frame["confidence_level"] = self.confidence_level
        frame["method"] = self.method
        return self._with_groups(frame)

    def _header(self) -> str:
        return (
            f"{self.confidence_level:.0%} {self._NAME} interval, method={self.method}"
        )

    def _scalar_repr(self) -> str:
        def show(name):
            v = getattr(self, name)
            return f"{name}={v}" if isinstance(v, int) else f"{name}={v:.4g}"

        body = ", ".join(show(n) for n in self._PER_GROUP)
        return (
            f"{type(self).__name__}({body}, method={as_written(self.method)}, "
            f"confidence_level={self.confidence_level})"
        )


def _z(level: float) -> float:
    # from the tail: 0.5 + level / 2 rounds to 1 (z = inf) for level near 1
    return float(-special.ndtri((1 - level) / 2))


def _bootstrap(parts, n_groups: int, replicate, n_resamples: int, rng) -> np.ndarray:
    """(G, B) replicates; each part (e.g. labeled, unlabeled) resampled on its own.

    ``parts`` is a list of ``(group codes, statistics)``, one row per input.
    The inputs of group ``g``'s part ``q`` are one draw unit of the engine's
    index kernel (:func:`evalci.engine.tiles.replicate_sums`, unit index
    ``g * len(parts) + q``, so parts and groups draw independently);
    ``replicate(*sums)`` maps the parts' (B, m) sums to (B,).
    """
    root = seed_sequence(rng)
    reps = np.empty((n_groups, n_resamples))
    for gi in range(n_groups):  # groups are few; replicates are vectorised
        sums = []
        for q, (g, t) in enumerate(parts):
            rows = t[g == gi]
            unit = _rs.Unit(
                index=gi * len(parts) + q,
                T=rows[:, None, :],
                strata_bounds=np.array([0, len(rows)]),
            )
            sums.append(tiles.replicate_sums(unit, root, "cluster", n_resamples)[:, 0])
        reps[gi] = replicate(*sums)
    return reps


def _percentile(reps: np.ndarray, level: float):
    """Percentile interval and SD of (G, B) replicates (NaN replicates dropped)."""
    bad = np.isnan(reps)
    if bad.any():
        warn(
            f"{int(bad.sum())} bootstrap replicates are undefined (e.g. a resample "
            "with sensitivity + specificity <= 1) and were dropped.",
            DegenerateDataWarning,
        )
    few = (~bad).sum(axis=-1) < 2
    if few.any():
        warn(
            f"fewer than 2 bootstrap replicates are defined in {int(few.sum())} "
            "group(s): their interval and standard error are NaN; use more "
            "inputs or another method.",
            DegenerateDataWarning,
        )
    alpha = 1 - level
    ok = reps[~few]
    low, high, sd = (np.full(reps.shape[:-1], np.nan) for _ in range(3))
    low[~few] = np.nanquantile(ok, alpha / 2, axis=-1)
    high[~few] = np.nanquantile(ok, 1 - alpha / 2, axis=-1)
    sd[~few] = np.nanstd(ok, axis=-1, ddof=1)
    return low, high, sd
