"""Keys and the cube: sorted codes of key columns, and the rows the engine reads.

:func:`factorize` turns key columns (inputs, groups, strata) into sorted
integer codes, so a shuffled table gives the same codes. :class:`Cube` holds
the rows in canonical order with their codes and statistics, and splits them
into draw units (:meth:`Cube.units`). How a table becomes a cube is
:mod:`evalci.engine.table`; how a cube is resampled is :mod:`evalci.engine.passes`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci.engine.resampling import Unit

__all__ = ["Cube", "factorize", "value_codes"]


def factorize(frame: pd.DataFrame, cols: list[str], name: str):
    """Sorted integer codes of the key ``cols`` and the Index of unique keys."""
    codes, uniques = [], []
    for col in cols:
        series = frame[col]
        if series.isna().any():
            raise ValueError(
                f"`{name}` column {col!r} has {int(series.isna().sum())} missing "
                "values; fill or drop those rows first."
            )
        try:
            c, u = pd.factorize(series, sort=True)
        except TypeError:
            raise ValueError(
                f"`{name}` column {col!r} mixes values that cannot be ordered "
                "(e.g. numbers and strings); convert it to one type, e.g. "
                f"df[{col!r}].astype(str)."
            ) from None
        codes.append(c.astype(np.int64))
        uniques.append(pd.Index(u))
    if len(cols) == 1:
        return codes[0], uniques[0].rename(cols[0])
    combos, inverse = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
    index = pd.MultiIndex.from_arrays(
        [u[combos[:, i]] for i, u in enumerate(uniques)], names=cols
    )
    return inverse.reshape(-1).astype(np.int64), index


def group_codes(frame: pd.DataFrame, by: list[str]):
    """``(codes, groups, n_groups)`` of the ``by`` columns; one group without them."""
    if not by:
        return np.zeros(len(frame), dtype=np.int64), None, 1
    codes, groups = factorize(frame, by, "by")
    return codes, groups, len(groups)


def value_codes(series: pd.Series) -> np.ndarray:
    """Codes that order rows by value (for a canonical order within an input)."""
    try:
        return pd.factorize(series, sort=True)[0]
    except TypeError:  # unorderable mix: fall back to first appearance
        return pd.factorize(series.astype(str), sort=True)[0]


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

    @property
    def n_groups(self) -> int:
        return 1 if self.groups is None else len(self.groups)

    @property
    def n_clusters(self) -> int:
        return len(self.cluster_keys)

    def cell_counts(self) -> np.ndarray:
        """Runs per (cluster, group): ``k`` of shape (N, G)."""
        cell = self.row_cluster * self.n_groups + self.row_group
        return np.bincount(cell, minlength=self.n_clusters * self.n_groups).reshape(
            self.n_clusters, self.n_groups
        )

    def cell_runs(self) -> np.ndarray:
        """Runs per (cluster, group): rows, or summed ``runs`` for counts tables."""
        if self.runs is None:
            return self.cell_counts()
        cell = self.row_cluster * self.n_groups + self.row_group
        n, g = self.n_clusters, self.n_groups
        return np.bincount(cell, weights=self.runs, minlength=n * g).reshape(n, g)

    def cell_sums(self) -> np.ndarray:
        """Summed statistics per (cluster, group): ``T`` of shape (N, G, m)."""
        n, g = self.n_clusters, self.n_groups
        m = self.stats.shape[1]
        cell = self.row_cluster * g + self.row_group
        out = np.empty((n * g, m))
        for j in range(m):
            out[:, j] = np.bincount(cell, weights=self.stats[:, j], minlength=n * g)
        return out.reshape(n, g, m)

    def units(
        self,
        strategy: str,
        weight: str,
        scale_invariant: bool = False,
        per_input=None,
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
        """
        k = self.cell_counts()
        present = k > 0
        patterns, first = {}, []
        for g in range(self.n_groups):
            key = present[:, g].tobytes()
            if key not in patterns:
                patterns[key] = len(first)
                first.append([])
            first[patterns[key]].append(g)
        with_stats = self.stats is not None
        sums = self.cell_sums() if with_stats else None
        # start of each group's rows and of each cell inside them
        group_start = np.searchsorted(self.row_group, np.arange(self.n_groups + 1))
        out = []
        for u, groups in enumerate(first):
            groups = np.asarray(groups)
            clusters = np.flatnonzero(present[:, groups[0]])
            if self.strata is not None:
                clusters = clusters[np.argsort(self.strata[clusters], kind="stable")]
                counts_h = np.bincount(self.strata[clusters])
                counts_h = counts_h[counts_h > 0]
                bounds = np.concatenate([[0], np.cumsum(counts_h)])
            else:
                bounds = np.array([0, len(clusters)])
            kk = k[np.ix_(clusters, groups)].astype(np.int64)  # (N_u, G_u)
            starts, counts, rows = [], [], []
            for j, g in enumerate(groups):
                lo, hi = group_start[g], group_start[g + 1]
                # rows of group g are sorted by cluster: cell starts by cumsum
                cell_start = np.concatenate([[0], np.cumsum(k[:, g])])[:-1]
                starts.append(cell_start[clusters])
                counts.append(kk[:, j])
                constant_k = (
                    scale_invariant
                    and self.runs is None
                    and (kk[:, j] == kk[0, j]).all()
                )
                if with_stats and strategy in ("single_draw", "hierarchical"):
                    x = self.stats[lo:hi]
                    kr = np.repeat(k[:, g], k[:, g]).astype(float)  # k of each row
                    if constant_k:
                        pass  # scale-invariant metric, equal k: no reweighting
                    elif strategy == "hierarchical" and weight == "input":
                        x = x / kr[:, None]
                    elif strategy == "single_draw" and weight == "run":
                        x = x * kr[:, None]
                    rows.append(x)
            if with_stats:
                t = sums[np.ix_(clusters, groups)]
                if per_input is not None:
                    t = np.asarray(per_input(t), dtype=float)
                elif weight == "input":
                    runs = (
                        kk
                        if self.runs is None
                        else self.cell_runs()[np.ix_(clusters, groups)]
                    ).astype(float)
                    if scale_invariant:
                        # equal k within a group: divide by nothing (see above)
                        same = (runs == runs[:1]).all(axis=0)
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
