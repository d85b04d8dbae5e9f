"""Metrics as sufficient-statistic blueprints.

A metric here is three things (the pattern of flox's ``Aggregation``):

* ``statistics``: per-observation statistics, an ``(R, m)`` float array for R
  rows; they combine by summation, so the statistics of any resample are a
  weighted sum of rows;
* ``finalize``: a vectorised map from summed statistics ``(..., m)`` to the
  metric value ``(...)``;
* ``columns``: the columns the metric reads besides the value column.

Because statistics add, a bootstrap replicate is one matrix product
``W @ T`` of count weights and per-input sums, and the leave-one-input-out
jackknife is ``finalize(T.sum(0) - T)``: O(N) for any such metric.

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
import pandas as pd

__all__ = [
    "Metric",
    "mean",
    "accuracy",
    "kappa",
    "register_metric",
    "get_metric",
    "available_metrics",
]

Statistics = Callable[[Mapping[str, np.ndarray], str], np.ndarray]
Finalize = Callable[[np.ndarray], np.ndarray]


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

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("`name` must be a non-empty string.")
        if not callable(self.statistics) or not callable(self.finalize):
            raise TypeError("`statistics` and `finalize` must be callables.")
        object.__setattr__(self, "columns", tuple(self.columns))


_NUMBER_KINDS = {"integer", "floating", "mixed-integer-float", "decimal", "boolean"}
_TEXT_KINDS = {"string", "bytes"}


def _value_kind(values) -> str:
    """'number', 'text' or 'mixed': the kind of value a label column holds."""
    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind == "categorical":
        kind = pd.api.types.infer_dtype(np.asarray(values), skipna=True)
    if kind in _NUMBER_KINDS:
        return "number"
    if kind in _TEXT_KINDS:
        return "text"
    return "mixed"


def check_comparable(pred, true, value: str, truth: str) -> None:
    """Refuse predictions and labels of different kinds (numbers vs text).

    ``1 == "1"`` is False, so int predictions against string labels would
    score 0 on every row: a silent wrong answer rather than a result.
    """
    kp, kt = _value_kind(pred), _value_kind(true)
    for col, role, values in ((value, "value", pred), (truth, "truth", true)):
        if pd.api.types.infer_dtype(values, skipna=True) == "mixed-integer":
            raise ValueError(
                f"`{role}` column {col!r} mixes numbers and text (e.g. 1 and '1'), "
                f"which never compare equal; convert it to one type, e.g. "
                f"df[{col!r}].astype(str)."
            )
    if {kp, kt} == {"number", "text"}:
        dp, dt = np.asarray(pred).dtype, np.asarray(true).dtype
        raise ValueError(
            f"predictions (`value` column {value!r}, dtype {dp}, {kp}) and labels "
            f"(`truth` column {truth!r}, dtype {dt}, {kt}) share no value type, so "
            "no prediction can equal a label. Convert one to the other's type, "
            f"e.g. df[{value!r}].astype(str) or df[{truth!r}].astype(int)."
        )


def _ratio(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[..., 0] / sums[..., 1]


def _mean_statistics(data: Mapping[str, np.ndarray], value: str) -> np.ndarray:
    y = np.asarray(data[value], dtype=float)
    return np.column_stack([y, np.ones_like(y)])


#: Mean of the value column: accuracy of a 0/1 column, mean of a score column.
mean = Metric(
    "mean", statistics=_mean_statistics, finalize=_ratio, scale_invariant=True
)


def accuracy(truth: str = "label") -> Metric:
    """Share of rows whose value (a predicted label) equals the ``truth`` column.

    Parameters
    ----------
    truth : str
        Column holding the true label.

    Examples
    --------
    >>> import pandas as pd, evalci
    >>> df = pd.DataFrame({"input_id": [1, 1, 2, 2], "pred": ["a", "b", "b", "b"],
    ...                    "label": ["a", "a", "b", "b"]})
    >>> evalci.metrics.accuracy(truth="label").name
    'accuracy'
    """

    def statistics(data, value):
        check_comparable(data[value], data[truth], value, truth)
        pred, true = (np.asarray(data[c], dtype=object) for c in (value, truth))
        hit = np.asarray(pred == true, dtype=float)
        return np.column_stack([hit, np.ones_like(hit)])

    return Metric(
        "accuracy",
        statistics=statistics,
        finalize=_ratio,
        columns=(truth,),
        numeric=False,
        scale_invariant=True,
    )


def _kappa_finalize(sums: np.ndarray) -> np.ndarray:
    n_labels = int(round(np.sqrt(sums.shape[-1])))
    conf = sums.reshape(sums.shape[:-1] + (n_labels, n_labels))
    n = conf.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.trace(conf, axis1=-2, axis2=-1) / n
        p_e = (conf.sum(axis=-1) * conf.sum(axis=-2)).sum(axis=-1) / n**2
        return (p_o - p_e) / (1.0 - p_e)


def kappa(truth: str = "label", labels=None) -> Metric:
    """Cohen's kappa of the value column (predicted labels) against ``truth``.

    The statistics are the C x C confusion counts (one-hot per row), so
    ``kappa = (p_o - p_e) / (1 - p_e)`` is computed from summed counts.

    Parameters
    ----------
    truth : str
        Column holding the true (reference) label.
    labels : sequence, optional
        The label set. By default the sorted union of the labels seen in both
        columns.

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales.
    Educational and Psychological Measurement, 20(1), 37-46.
    """
    fixed = None if labels is None else list(labels)

    def statistics(data, value):
        check_comparable(data[value], data[truth], value, truth)
        pred = pd.Series(np.asarray(data[value]))
        true = pd.Series(np.asarray(data[truth]))
        cats = fixed
        if cats is None:
            seen = pd.unique(pd.concat([pred, true], ignore_index=True))
            try:
                cats = sorted(seen)
            except TypeError:  # labels of several types: order them by text
                cats = sorted(seen, key=lambda v: (type(v).__name__, str(v)))
        n_labels = len(cats)
        p = pd.Categorical(pred, categories=cats).codes
        t = pd.Categorical(true, categories=cats).codes
        if (p < 0).any() or (t < 0).any():
            raise ValueError(
                "kappa: a label is not in `labels`; pass labels=None to use every "
                "label seen in the data."
            )
        cell = t.astype(np.int64) * n_labels + p
        out = np.zeros((len(cell), n_labels * n_labels))
        out[np.arange(len(cell)), cell] = 1.0
        return out

    return Metric(
        "kappa",
        statistics=statistics,
        finalize=_kappa_finalize,
        columns=(truth,),
        numeric=False,
        scale_invariant=True,
    )


_REGISTRY: dict[str, Metric] = {"mean": mean}


def register_metric(
    metric: Metric, name: str | None = None, *, overwrite=False
) -> None:
    """Register ``metric`` so that ``metric="<name>"`` finds it.

    Examples
    --------
    >>> import evalci
    >>> evalci.metrics.register_metric(evalci.metrics.kappa(truth="human"),
    ...                                name="judge_kappa", overwrite=True)
    >>> "judge_kappa" in evalci.metrics.available_metrics()
    True
    """
    if not isinstance(metric, Metric):
        raise TypeError("`metric` must be an evalci.metrics.Metric.")
    key = name or metric.name
    if key in _REGISTRY and not overwrite:
        raise ValueError(
            f"a metric named {key!r} is already registered; pass overwrite=True "
            "to replace it."
        )
    _REGISTRY[key] = metric


def available_metrics() -> tuple[str, ...]:
    """Names accepted by ``metric=``."""
    return tuple(sorted(_REGISTRY))


def get_metric(metric) -> Metric | Callable:
    """Normalise ``metric=``: a registered name, a :class:`Metric` or a callable."""
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str):
        try:
            return _REGISTRY[metric]
        except KeyError:
            raise ValueError(
                f"`metric` {metric!r} is not registered; use one of "
                f"{available_metrics()}, evalci.metrics.accuracy(truth=...), "
                "evalci.metrics.kappa(truth=...), a Metric, or a callable "
                "f(DataFrame) -> float."
            ) from None
    if callable(metric):
        return metric
    raise TypeError(
        "`metric` must be a registered name, an evalci.metrics.Metric or a "
        f"callable f(DataFrame) -> float, not {type(metric).__name__}."
    )
