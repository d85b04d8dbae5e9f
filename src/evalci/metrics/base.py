"""The metric blueprint: :class:`Metric`, a function of summed statistics.

A metric here is three things and an optional fourth (the pattern of flox's
``Aggregation``):

* ``statistics``: per-observation statistics, an ``(R, m)`` float array for R
  rows; they combine by summation, so the statistics of any resample are a
  weighted sum of rows;
* ``finalize``: a vectorised map from summed statistics ``(..., m)`` to the
  metric value ``(...)``;
* ``columns``: the columns the metric reads besides the value column;
* ``per_input`` (optional): a map from each input's summed statistics to that
  input's own statistics, for metrics that are a function of an input's runs
  taken together (pass@k from c correct of n runs; Krippendorff's alpha from
  an input's coincidences). The engine applies it once, to the per-input sums
  ``T``, so everything downstream is unchanged.

Because statistics add, a bootstrap replicate is one matrix product
``W @ T`` of count weights and per-input sums, and the leave-one-input-out
jackknife is ``finalize(T.sum(0) - T)``: O(N) for any such metric.

Every family module builds on it, and on the ratio of two summed statistics
(``_ratio``) that mean, accuracy, ratio and pass@k finalize with.

Examples
--------
>>> import numpy as np, evalci
>>> m = evalci.metrics.get_metric("mean")
>>> m.finalize(np.array([[3.0, 4.0]]))
array([0.75])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Metric"]

Statistics = Callable[[Mapping[str, np.ndarray], str], np.ndarray]
Finalize = Callable[[np.ndarray], np.ndarray]
PerInput = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Metric:
    """A metric that is a function of summed per-observation statistics.

    Parameters
    ----------
    name : str
        Name shown in results.
    statistics : callable
        ``statistics(data, value) -> ndarray (R, m)``: ``data`` maps column
        names to 1-D arrays of equal length R (the value column and every
        column in ``columns``); ``value`` is the name of the value column.
    finalize : callable
        ``finalize(sums) -> ndarray``: maps summed statistics of shape
        ``(..., m)`` to metric values of shape ``(...)``. Must be vectorised.
    columns : tuple of str
        Columns read besides the value column (e.g. the true label).
    binary : bool
        Whether the value column must hold only 0/1 (or booleans).
    numeric : bool
        Whether the value column must be numeric.
    scale_invariant : bool
        Whether ``finalize(c * sums) == finalize(sums)`` for any c > 0 (true of
        ratios such as accuracy and kappa). Lets the engine keep exact integer
        sums when every input has the same number of runs.
    per_input : callable, optional
        ``per_input(sums) -> ndarray (..., m2)``: maps the *raw* summed
        statistics of each input ``(..., m)`` (summed over that input's runs,
        not divided by its number of runs) to that input's statistics, which
        are then summed over inputs and finalized. For metrics that are a
        function of each input's runs taken together, such as pass@k (c
        correct of n runs) or Krippendorff's alpha (the input's coincidences).
        Such a metric needs ``strategy="cluster"`` (an input's runs are its
        sample); pass@k and pass^k refuse ``weight="run"`` (each input
        contributes one value), Krippendorff's alpha ignores ``weight``.

    Examples
    --------
    A ratio metric, mean tokens per correct answer:

    >>> import numpy as np
    >>> from evalci.metrics import Metric
    >>> ratio = Metric(
    ...     "tokens_per_item",
    ...     statistics=lambda d, v: np.column_stack([d[v], d["items"]]),
    ...     finalize=lambda s: s[..., 0] / s[..., 1],
    ...     columns=("items",),
    ... )
    """

    name: str
    statistics: Statistics = field(repr=False)
    finalize: Finalize = field(repr=False)
    columns: tuple[str, ...] = ()
    binary: bool = False
    numeric: bool = True
    scale_invariant: bool = False
    per_input: PerInput | None = field(default=None, repr=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("`name` must be a non-empty string.")
        if not callable(self.statistics) or not callable(self.finalize):
            raise TypeError("`statistics` and `finalize` must be callables.")
        if self.per_input is not None and not callable(self.per_input):
            raise TypeError("`per_input` must be a callable or None.")
        object.__setattr__(self, "columns", tuple(self.columns))


def _ratio(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[..., 0] / sums[..., 1]


def _mean_statistics(data: Mapping[str, np.ndarray], value: str) -> np.ndarray:
    """``(y, 1)`` per row; integers stay integers (the engine then knows the
    statistics are whole numbers without scanning them)."""
    y = np.asarray(data[value])
    if y.dtype.kind not in "biu":
        y = y.astype(float)
    out = np.ones((len(y), 2), dtype=y.dtype)
    out[:, 0] = y
    return out
