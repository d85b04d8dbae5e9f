"""The cube: the rows the engine reads, coded by their keys.

Keys (inputs, groups, strata) are coded by :func:`evalci.engine.keys.factorize`
(sorted codes, so a shuffled table gives the same codes; re-exported here).
:class:`Cube` holds
the rows in canonical order with their codes and statistics, and splits them
into draw units (:meth:`Cube.units`). How a table becomes a cube is
:mod:`evalci.engine.table`; how a cube is resampled is :mod:`evalci.engine.passes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.lazy import sparse
from evalci.engine.keys import factorize, sorted_factorize
from evalci.engine.patterns_find import group_two_values
from evalci.engine.resampling import Unit

__all__ = [
    "Cube",
    "factorize",
    "iid_order",
    "sorted_factorize",
    "unit_cells",
    "value_codes",
]


def group_codes(frame: pd.DataFrame, by: list[str]):
    """``(codes, groups, n_groups)`` of the ``by`` columns; one group without them."""
    if not by:
        return np.zeros(len(frame), dtype=np.int64), None, 1
    codes, groups = factorize(frame, by, "by")
    return codes, groups, len(groups)


def value_codes(series: pd.Series) -> np.ndarray:
    """Codes that order rows by value (for a canonical order within an input)."""
    try:
        return sorted_factorize(series)[0]
    except TypeError:  # unorderable mix: fall back to first appearance
        return sorted_factorize(series.astype(str))[0]


def iid_order(values: pd.Series, group_codes: np.ndarray) -> np.ndarray:
    """The rows by (group, value), ties in table order: one stable radix sort.

    ``np.lexsort((value_codes(values), group_codes))``, the same permutation:
    small whole numbers (0/1, booleans, counts) and few groups make one int16
    key, which numpy's stable argsort sorts by radix in O(R); other values
    take the lexsort.
    """
    v = values.to_numpy() if isinstance(values.dtype, np.dtype) else None
    if v is not None and v.dtype.kind in "biu" and len(v):
        v = v.view(np.uint8) if v.dtype.kind == "b" else v
        lo, hi = v.min(), v.max()
        span = int(hi) - int(lo) + 1
        n_groups = int(group_codes.max()) + 1
        if n_groups * span <= 1 << 15:
            v = v.astype(np.int32) if v.dtype.itemsize < 4 else v
            key = (v - v.dtype.type(lo)).astype(np.int16)  # 0 .. span - 1
            if n_groups > 1:
                key += (group_codes * span).astype(np.int16)
            return np.argsort(key, kind="stable")
    return np.lexsort((value_codes(values), group_codes))


def _same_inputs(present: np.ndarray) -> list[list[int]]:
    """The groups (columns of ``present``, inputs x groups) that have the
    same set of inputs, in order of first appearance: one draw unit each."""
    patterns, first = {}, []
    for g in range(present.shape[1]):
        key = present[:, g].tobytes()
        if key not in patterns:
            patterns[key] = len(first)
            first.append([])
        first[patterns[key]].append(g)
    return first


@dataclass
class Cube:
    """Rows in canonical order with their group and cluster codes.

    ``stats`` is ``(R, m)`` for a sufficient-statistic metric (None for the
    callable path); ``frame`` holds the same rows for the callable path.
    """

    row_group: np.ndarray
    row_cluster: np.ndarray
    cluster_keys: pd.Index
    groups: pd.Index | None
    strata: np.ndarray | None  # (N,) codes per cluster
    stats: np.ndarray | None = None
    frame: pd.DataFrame | None = None
    runs: np.ndarray | None = None  # runs behind each row (counts tables); else 1
    row_input: np.ndarray | None = None  # input codes when inputs nest in clusters
    input_weighted: bool = False  # stats already weight each nested input equally
    # the `stats` array known to hold whole numbers (made from integers): no
    # scan needed to know its sums are exact (table._sums_exact)
    whole_stats: np.ndarray | None = field(default=None, repr=False, compare=False)
    # rows not yet in canonical order: the function that puts them in it,
    # called by :meth:`settle` when a kernel reads the rows themselves
    pending_order: object = field(default=None, repr=False, compare=False)
    # cell codes, counts...: cached for the current rows (:meth:`_cache`)
    _cells: dict | None = field(default=None, repr=False, compare=False)

    @property
    def n_groups(self) -> int:
        return 1 if self.groups is None else len(self.groups)

    @property
    def n_clusters(self) -> int:
        return len(self.cluster_keys)

    def _cache(self) -> dict:
        """Per-cell facts of the current rows, dropped when the rows change."""
        c = self._cells
        if (
            c is None
            or c["rows"][0] is not self.row_cluster
            or (c["rows"][1] is not self.row_group)
        ):
            c = self._cells = {"rows": (self.row_cluster, self.row_group)}
        return c

    def reorder(self, order: np.ndarray) -> None:
        """Put the rows (codes, statistics, runs) in ``order``."""
        self.row_group, self.row_cluster = (
            self.row_group[order],
            self.row_cluster[order],
        )
        if self.row_input is not None:
            self.row_input = self.row_input[order]
        if self.stats is not None:
            whole = self.whole_stats is self.stats
            self.stats = self.stats[order]
            self.whole_stats = self.stats if whole else None
        if self.runs is not None:
            self.runs = self.runs[order]

    def settle(self) -> None:
        """Apply the pending canonical order, if any (:attr:`pending_order`)."""
        if self.pending_order is not None:
            settle, self.pending_order = self.pending_order, None
            settle()

    def two_valued(self) -> list | None:
        """Per group, its two raw run rows ``(low, high)`` (None for a group
        with three or more), read in any row order; None when the bits would
        depend on the order (:func:`~evalci.engine.patterns_find.group_two_values`)."""
        c = self._cache()
        if self.stats is None:
            return None
        if c.get("two", (None,))[0] is not self.stats:
            whole = self.whole_stats is self.stats
            two = group_two_values(self.stats, self.row_group, self.n_groups, whole)
            c["two"] = (self.stats, two)
        return c["two"][1]

    def cell_codes(self) -> np.ndarray:
        """Cell ``cluster * G + group`` of every row."""
        c = self._cache()
        if "cell" not in c:
            g = self.n_groups
            c["cell"] = (
                self.row_cluster if g == 1 else self.row_cluster * g + self.row_group
            )
        return c["cell"]

    def _cells_in_order(self) -> bool:
        """Whether the cell codes are 0, 1, ..., N G - 1."""
        c = self._cache()
        if "in_order" not in c:
            cell = self.cell_codes()
            c["in_order"] = _is_range(cell, len(cell))
        return c["in_order"]

    def cell_counts(self) -> np.ndarray:
        """Runs per (cluster, group): ``k`` of shape (N, G)."""
        c = self._cache()
        if "counts" not in c:
            n, g = self.n_clusters, self.n_groups
            k = np.bincount(self.cell_codes(), minlength=n * g).reshape(n, g)
            k.flags.writeable = False  # shared by every caller
            c["counts"] = k
        return c["counts"]

    def cell_runs(self) -> np.ndarray:
        """Runs per (cluster, group): rows, or summed ``runs`` for counts tables."""
        if self.runs is None:
            return self.cell_counts()
        c = self._cache()
        if c.get("runs", (None,))[0] is not self.runs:
            n, g = self.n_clusters, self.n_groups
            k = self._per_cell(self.runs[:, None]).reshape(n, g)
            k.flags.writeable = False  # shared by every caller
            c["runs"] = (self.runs, k)
        return c["runs"][1]

    def cell_sums(self) -> np.ndarray:
        """Summed statistics per (cluster, group): ``T`` of shape (N, G, m)."""
        c = self._cache()
        if c.get("sums", (None,))[0] is not self.stats:
            n, g = self.n_clusters, self.n_groups
            t = self._per_cell(self.stats).reshape(n, g, self.stats.shape[1])
            t.flags.writeable = False  # shared by every caller
            c["sums"] = (self.stats, t)
        return c["sums"][1]

    def _per_cell(self, x: np.ndarray) -> np.ndarray:
        """Sums of the rows ``x`` (R, m) per cell, ``(N * G, m)``.

        Every cell has one row in a counts table: its sum is that row (plus
        0.0, which is what bincount's sum from zero gives a -0.0), placed
        without summing; else one bincount per column.
        """
        n, g = self.n_clusters, self.n_groups
        cell = self.cell_codes()
        if len(cell) == n * g and int(self.cell_counts().max(initial=0)) == 1:
            if self._cells_in_order():  # rows in cell order already
                y = np.asarray(x, dtype=float)
                return y if x is self.whole_stats else y + 0.0  # (integers: no -0.0)
            out = np.empty((n * g, x.shape[1]))
            out[cell] = x
            out += 0.0
            return out
        if x.shape[1] > 2:  # many columns: one pass over the rows
            return cell_sums_of(cell, x, n * g)
        out = np.empty((n * g, x.shape[1]))
        for j in range(x.shape[1]):
            if _all_ones(x[:, j]):  # the runs column of a mean: the row counts
                out[:, j] = self.cell_counts().reshape(-1)
            else:
                out[:, j] = np.bincount(cell, weights=x[:, j], minlength=n * g)
        return out

    def units(
        self,
        strategy: str,
        weight: str,
        scale_invariant: bool = False,
        per_input=None,
        paired: bool = True,
    ) -> list[tuple[Unit, np.ndarray, np.ndarray]]:
        """Split into draw units: groups with the same set of inputs share draws.

        Returns ``(unit, groups, clusters)`` triples: the unit, the positions of
        its groups and the (global) codes of its clusters in unit order, which
        is (stratum, key).

        With ``weight="input"`` each input's statistics are divided by its
        number of runs. For a scale-invariant metric (``finalize(c * s) ==
        finalize(s)``) and a group whose inputs all have the same k, the
        division changes nothing but rounding, so it is skipped: sums of 0/1
        stay integers and an accuracy of 35/50 is exactly 0.7 (which matters
        when an endpoint is compared with a grid value).

        ``per_input`` (a Metric's per-input hook) maps each input's raw sums
        ``(..., m)`` to its statistics ``(..., m2)`` *instead of* the weight
        division: each input then contributes one value (pass@k, coincidences).

        ``paired=False``: one unit a group (its position the stream key), so
        each group draws as if alone.
        """
        k = self.cell_counts()
        present = k > 0
        if paired:
            first = _same_inputs(present)
        else:
            first = [[g] for g in range(present.shape[1])]
        with_stats = self.stats is not None
        sums = self.cell_sums() if with_stats else None
        run_rows = with_stats and strategy in ("single_draw", "hierarchical")
        run_rows &= self.pending_order is None  # unsettled: no run rows
        out = []
        for u, groups in enumerate(first):
            groups = np.asarray(groups)
            every = bool(present[:, groups[0]].all())  # (the usual case)
            if every:
                clusters = np.arange(present.shape[0])
            else:
                clusters = np.flatnonzero(present[:, groups[0]])
            if self.strata is not None:
                every = False  # reordered below
                clusters = clusters[np.argsort(self.strata[clusters], kind="stable")]
                counts_h = np.bincount(self.strata[clusters])
                counts_h = counts_h[counts_h > 0]
                bounds = np.concatenate([[0], np.cumsum(counts_h)])
            else:
                bounds = np.array([0, len(clusters)])
            take = _Take(clusters, groups, k.shape, every or None)
            kk = np.asarray(take(k), dtype=np.int64)  # (N_u, G_u), read only
            starts, counts, rows = (), (), ()
            if run_rows or not with_stats:  # the run rows of each input
                starts, counts, rows = self._run_rows(
                    strategy, weight, scale_invariant, take, kk, run_rows
                )
            if with_stats:
                t = take(sums)
                if per_input is not None:
                    t = np.asarray(per_input(t), dtype=float)
                elif weight == "input":
                    runs = kk if self.runs is None else take(self.cell_runs())
                    same = np.zeros(runs.shape[1], dtype=bool)
                    if scale_invariant:
                        # equal k within a group: divide by nothing (see above)
                        same = (runs == runs[:1]).all(axis=0)
                    if not same.all():
                        runs = runs.astype(float)  # a copy: changed below
                        runs[:, same] = 1.0
                        t = t / runs[:, :, None]
            else:
                t = np.zeros((len(clusters), len(groups), 0))
            unit = Unit(
                index=u,
                T=t,
                strata_bounds=bounds,
                starts=tuple(starts),
                counts=tuple(counts),
                rows=tuple(rows),
            )
            out.append((unit, groups, clusters))
        return out

    def _run_rows(self, strategy, weight, scale_invariant, take, kk, run_rows):
        """Per group of a unit: row starts and runs of each input, and its rows.

        The rows are in canonical order (group, cluster, ...), so a group's
        cells start at the cumulative sums of their runs; the run rows are
        weighted as the run-level strategies draw them (see :meth:`units`).
        """
        k = self.cell_counts()
        starts, counts, rows = [], [], []
        if run_rows:  # start of each group's rows
            group_start = np.searchsorted(self.row_group, np.arange(self.n_groups + 1))
        for j, g in enumerate(take.groups):
            # rows of group g are sorted by cluster: cell starts by cumsum
            cell_start = np.concatenate([[0], np.cumsum(k[:, g])])[:-1]
            starts.append(cell_start[take.clusters])
            counts.append(kk[:, j])
            if not run_rows:
                continue
            constant_k = (
                scale_invariant and self.runs is None and (kk[:, j] == kk[0, j]).all()
            )
            lo, hi = group_start[g], group_start[g + 1]
            x = self.stats[lo:hi]
            kr = np.repeat(k[:, g], k[:, g]).astype(float)  # k of each row
            if constant_k:
                pass  # scale-invariant metric, equal k: no reweighting
            elif strategy == "hierarchical" and weight == "input":
                x = x / kr[:, None]
            elif strategy == "single_draw" and weight == "run":
                x = x * kr[:, None]
            rows.append(x)
        return starts, counts, rows


def cell_sums_of(cell: np.ndarray, x: np.ndarray, size: int) -> np.ndarray:
    """Sums of the rows ``x`` (R, m) per cell code, ``(size, m)``, in one pass.

    Each cell's rows are added in row order from 0.0, as
    ``np.bincount(cell, weights=x[:, j])`` adds them column by column: the
    same bits (any rows, whole or not), without m strided passes. The
    product of the transposed one-hot rows with ``x`` (scipy's CSC kernel
    walks the rows in order and adds each into its cell).
    """
    x = np.ascontiguousarray(x, dtype=float)
    r = len(cell)
    ones = sparse.csr_array(
        (np.ones(r), np.asarray(cell), np.arange(r + 1)), shape=(r, size)
    )
    return np.asarray(ones.T @ x).reshape(size, x.shape[1])


def _all_ones(col: np.ndarray) -> bool:
    """Whether every value is 1 (then a cell's float sum is its row count,
    exactly); a first chunk settles most columns that are not."""
    if not (col[:4096] == 1).all():
        return False
    return bool((col == 1).all())


def _is_range(codes: np.ndarray, n: int) -> bool:
    """Whether ``codes`` is ``0, 1, ..., n - 1`` (in chunks that stay in cache)."""
    if len(codes) != n or (n and (codes[0] != 0 or codes[-1] != n - 1)):
        return False
    step = 1 << 16
    for lo in range(0, n - 1, step):
        chunk = codes[lo : lo + step + 1]
        if not (chunk[1:] - chunk[:-1] == 1).all():
            return False
    return True


def unit_cells(a: np.ndarray, clusters: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``a[np.ix_(clusters, groups)]`` of an (N, G, ...) array: ``a`` itself
    (read only, no copy) when the unit holds every cluster and group."""
    return _Take(clusters, groups, a.shape)(a)


class _Take:
    """``a[np.ix_(clusters, groups)]`` for (N, G, ...) arrays, without a copy
    when the unit holds every cluster (and every group)."""

    def __init__(self, clusters, groups, shape, all_clusters=None):
        self.clusters, self.groups = clusters, groups
        # flatnonzero gives sorted codes: all N of them are 0 .. N-1 (unless
        # strata reordered them, which a cheap look at the ends catches);
        # ``all_clusters=True`` says the caller knows they are
        self.all_clusters = all_clusters or (
            len(clusters) == shape[0]
            and (shape[0] == 0 or (clusters[0] == 0 and clusters[-1] == shape[0] - 1))
        )
        if self.all_clusters and shape[0] > 2 and all_clusters is None:
            self.all_clusters = _is_range(clusters, shape[0])
        self.all_groups = _is_range(groups, shape[1])

    def __call__(self, a: np.ndarray) -> np.ndarray:
        if self.all_clusters and self.all_groups:
            return a
        if self.all_clusters:
            return a[:, self.groups]
        return a[np.ix_(self.clusters, self.groups)]


def dense_cells(data, value: str, input: str, run, system, *, input_name="input"):
    """``value`` laid out by (input, run, system), NaN where a run is missing.

    Inputs, runs and systems are sorted by key (:func:`factorize`); without
    ``run`` each (input, system) cell's runs are numbered in table order.
    Returns ``(dense, input_codes, input_keys, run_keys, system_keys)``
    (``input_codes`` one per row of ``data``): ``dense`` has
    shape ``(N, K, S)`` (``S = 1`` and ``system_keys`` None without
    ``system``), float for numbers and booleans, object otherwise.
    ``input_name`` is the argument the input column came in (for errors).
    """
    in_codes, in_keys = factorize(data, [input], input_name)
    if system is not None:
        sys_codes, sys_keys = factorize(data, [system], "system")
    else:
        sys_codes, sys_keys = np.zeros(len(data), dtype=np.int64), None
    n_sys = 1 if sys_keys is None else len(sys_keys)
    if run is not None:
        run_codes, run_keys = factorize(data, [run], "run")
    else:
        cell = pd.Series(in_codes * n_sys + sys_codes)
        run_codes = cell.groupby(cell).cumcount().to_numpy()
        run_keys = pd.RangeIndex(int(run_codes.max()) + 1)
    dup = pd.Series((in_codes * len(run_keys) + run_codes) * n_sys + sys_codes)
    if dup.duplicated().any():
        raise ValueError(
            f"two rows share the same ({input}, {run}"
            f"{', ' + system if system else ''}); each cell holds one value. "
            f"Pass run=None to number runs in table order."
        )
    values = data[value].to_numpy()
    numeric = pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(
        values
    )
    dense = np.full(
        (len(in_keys), len(run_keys), n_sys), np.nan, dtype=float if numeric else object
    )
    dense[in_codes, run_codes, sys_codes] = values
    return dense, in_codes, in_keys, run_keys, sys_keys
