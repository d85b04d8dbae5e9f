"""A facet table reduced to its cells: runs, sums and sums of squares per
(group, input, facet level, ...), dense over the crossed random dimensions.

Every analysis of the family (variance components, the multiway SE, the
pigeonhole bootstrap, the planner) reads only these sums, so a pandas table,
a DataArray and a Dask DataFrame reduced on its workers give the same
numbers: the keys are coded in sorted order, whatever the row order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
    check_no_missing,
)
from evalci.engine.cube import sorted_factorize

__all__ = [
    "Cells",
    "cells_of",
    "check_rows",
    "differences",
    "facet_columns",
    "from_reduced",
    "reduce_rows",
]

#: Dense cells (groups x product of the levels) refused above this many.
MAX_CELLS = 50_000_000
_SUMS = ("n", "s", "q")


@dataclass(frozen=True)
class Cells:
    """Sums per cell of a facet table.

    Attributes
    ----------
    dims : tuple of str
        The random dimensions: the input column first, then the random facets.
    levels : tuple of pandas.Index
        The sorted levels of each dimension.
    by : tuple of str
        Fixed facets (and the system): one analysis per group.
    groups : pandas.Index or None
        The groups, in sorted order; None without ``by``.
    n, s, q : ndarray, shape (G, L_0, L_1, ...)
        Runs, sum and sum of squares of the score per cell (0 where empty).
    value : str
        The score's column.
    """

    dims: tuple
    levels: tuple
    by: tuple
    groups: pd.Index | None
    n: np.ndarray
    s: np.ndarray
    q: np.ndarray
    value: str

    @property
    def shape(self) -> tuple:
        """Levels per random dimension."""
        return self.n.shape[1:]

    @property
    def present(self) -> np.ndarray:
        """Cells holding at least one run, shape (G, L_0, ...)."""
        return self.n > 0

    def means(self) -> np.ndarray:
        """Cell means, 0 where a cell is empty."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.present, self.s / np.maximum(self.n, 1), 0.0)

    def group(self, g: int) -> Cells:
        """The cells of group ``g`` alone (a leading axis of length 1)."""
        pick = slice(g, g + 1)
        return Cells(self.dims, self.levels, (), None, self.n[pick],
                     self.s[pick], self.q[pick], self.value)


def facet_columns(data, value, cluster, facets, by, run=None):
    """The checked column arguments: ``(value, cluster, facets, by, run)``.

    Every error names the argument and the fix.
    """
    if not isinstance(value, str):
        raise TypeError(f"`value` must be a column name (str), not {type(value).__name__}.")
    if not isinstance(cluster, str):
        raise TypeError(
            "`cluster` must be one column naming the input (str), not "
            f"{type(cluster).__name__}; make one key column first if inputs "
            "are keyed by several."
        )
    facets = as_columns(facets, "facets")
    by = as_columns(by, "by")
    if not facets:
        raise ValueError(
            "`facets` is empty: name at least one random facet column (e.g. "
            "facets=['template']); without one, use cluster_ci."
        )
    roles = {"value": [value], "cluster": [cluster], "facets": facets, "by": by}
    if run is not None:
        roles["run"] = [run]
    for name, cols in roles.items():
        if hasattr(data, "columns"):
            check_columns(data, cols, name)
    if hasattr(data, "columns"):
        doubled = [c for c in seen_columns(roles) if list(data.columns).count(c) > 1]
        if doubled:
            raise ValueError(
                f"the DataFrame has {list(data.columns).count(doubled[0])} columns named "
                f"{as_written(doubled[0])}; rename or drop the copies first."
            )
    seen: dict = {}
    for name, cols in roles.items():
        for col in cols:
            if col in seen:
                raise ValueError(
                    f"column {as_written(col)} is given both as `{seen[col]}` and "
                    f"as `{name}`; each column plays one role."
                )
            seen[col] = name
    return value, cluster, facets, by, run


def seen_columns(roles: dict) -> list:
    """Every column the roles name, in order."""
    return [c for cols in roles.values() for c in cols]


def _check_labels(data: pd.DataFrame, name: str, col) -> None:
    """Refuse a key column whose labels mix types (1 and "1" are two levels)."""
    series = data[col]
    if series.dtype != object:
        return
    kinds = {type(v).__name__ for v in series.drop_duplicates()}
    if len(kinds) > 1:
        raise TypeError(
            f"`{name}` column {as_written(col)} mixes labels of different types "
            f"({', '.join(sorted(kinds))}); 1 and '1' would be two levels. Make them "
            f"one type, e.g. df[{as_written(col)}] = df[{as_written(col)}].astype(str)."
        )


def check_rows(data: pd.DataFrame, value, cluster, facets, by, *, rows=True) -> None:
    """The row checks of a facet table (a Dask partition: ``rows=False``)."""
    check_frame(data, rows=rows)
    fix = ("drop those rows or fill them first (a missing run is not a "
           "failure unless you say so)")
    check_no_missing(data, value, "value", fix)
    for name, cols in (("cluster", [cluster]), ("facets", facets), ("by", by)):
        for col in cols:
            check_no_missing(data, col, name, "every row needs its key")
            _check_labels(data, name, col)
    col = data[value]
    if not pd.api.types.is_numeric_dtype(col) or isinstance(col.dtype, pd.CategoricalDtype):
        raise TypeError(
            f"`value` column {as_written(value)} must hold numbers (0/1 or a "
            f"score), not {col.dtype}."
        )
    check_finite(data, [value], "value")


def reduce_rows(frame: pd.DataFrame, value: str, keys: list) -> pd.DataFrame:
    """One row per distinct key: the keys, runs ``n``, sum ``s``, squares ``q``.

    The reduction a Dask partition runs on its worker; partial tables add up.
    """
    codes, uniques = [], []
    for col in keys:
        c, u = sorted_factorize(frame[col])
        codes.append(c)
        uniques.append(u)
    sizes = [len(u) for u in uniques]
    flat = np.ravel_multi_index(codes, sizes) if codes else np.zeros(len(frame), int)
    cell, inverse = np.unique(flat, return_inverse=True)
    y = frame[value].to_numpy(dtype=float)
    out = {col: u.take(idx) for col, u, idx in
           zip(keys, uniques, np.unravel_index(cell, sizes), strict=True)}
    out["n"] = np.bincount(inverse, minlength=len(cell))
    out["s"] = np.bincount(inverse, weights=y, minlength=len(cell))
    out["q"] = np.bincount(inverse, weights=y * y, minlength=len(cell))
    return pd.DataFrame(out)


def _check_runs(data, cluster, facets, by, run) -> None:
    """Refuse a run key that repeats inside a cell."""
    keys = [*by, cluster, *facets, run]
    dup = data.duplicated(keys)
    if dup.any():
        row = data.loc[dup, keys].iloc[0].to_dict()
        raise ValueError(
            f"`run`: {int(dup.sum())} rows repeat a run of their cell, first "
            f"{row}; each (input, facet levels, run) must appear once. Check "
            "the keys, or leave `run` out to pool the rows of a cell."
        )


def cells_of(data: pd.DataFrame, value, cluster, facets, by=None, run=None) -> Cells:
    """Reduce a tidy pandas table to its :class:`Cells`."""
    value, cluster, facets, by, run = facet_columns(data, value, cluster, facets, by, run)
    check_rows(data, value, cluster, facets, by)
    if run is not None:
        _check_runs(data, cluster, facets, by, run)
    reduced = reduce_rows(data, value, [*by, cluster, *facets])
    return from_reduced(reduced, value, cluster, facets, by)


def from_reduced(reduced: pd.DataFrame, value, cluster, facets, by) -> Cells:
    """:class:`Cells` from a table of per-key sums (``n``, ``s``, ``q``)."""
    dims = [cluster, *facets]
    codes, levels = [], []
    for col in dims:
        c, u = sorted_factorize(reduced[col])
        codes.append(c)
        levels.append(u)
    for col, u in zip(dims, levels, strict=True):
        if len(u) < 2:
            role = "`cluster`" if col == cluster else "a random facet"
            raise ValueError(
                f"{role} {as_written(col)} has {len(u)} level; a variance needs "
                "at least two. List a facet with one level in `by=` (fixed) "
                "or leave it out."
            )
    if by:
        g_codes, groups = _group_codes(reduced, list(by))
    else:
        g_codes, groups = np.zeros(len(reduced), dtype=np.int64), None
    shape = (1 if groups is None else len(groups), *(len(u) for u in levels))
    size = int(np.prod(shape, dtype=float))
    if size > MAX_CELLS:
        raise ValueError(
            f"the facets make {size:,} cells (groups x {' x '.join(map(str, shape[1:]))}), "
            f"more than {MAX_CELLS:,} held densely; analyse fewer facets or "
            "groups at a time."
        )
    flat = np.ravel_multi_index([g_codes, *codes], shape)
    arrays = [np.bincount(flat, weights=reduced[k].to_numpy(dtype=float),
                          minlength=size).reshape(shape) for k in _SUMS]
    return Cells(tuple(dims), tuple(levels), tuple(by), groups, *arrays, value)


def _group_codes(frame: pd.DataFrame, by: list):
    parts = [sorted_factorize(frame[col]) for col in by]
    sizes = [len(u) for _, u in parts]
    flat = np.ravel_multi_index([c for c, _ in parts], sizes)
    used, codes = np.unique(flat, return_inverse=True)
    idx = np.unravel_index(used, sizes)
    if len(by) == 1:
        groups = parts[0][1].take(idx[0])
        groups.name = by[0]
    else:
        groups = pd.MultiIndex.from_arrays(
            [u.take(i) for (_, u), i in zip(parts, idx, strict=True)], names=by)
    return codes.astype(np.int64), groups


def differences(cells: Cells, pairs: list) -> Cells:
    """Cells of paired gaps ``mean(a) - mean(b)`` for ``(a, b)`` group pairs.

    A gap's cell holds one value (both means present) or none; its "runs"
    are 1, so the run noise of both systems sits in the residual.
    """
    m = cells.means()
    both = np.stack([cells.present[a] & cells.present[b] for a, b in pairs])
    d = np.stack([m[a] - m[b] for a, b in pairs]) * both
    names = [f"{cells.groups[a]} - {cells.groups[b]}" for a, b in pairs]
    return Cells(cells.dims, cells.levels, cells.by, pd.Index(names, name="gap"),
                 both.astype(float), d, d * d, cells.value)
