"""Scores of a value column: mean, accuracy, ratio of sums and quantile.

Mean, accuracy and ratio are ratios of two summed statistics (their
``finalize`` is ``_ratio``); a quantile is a callable metric (the general,
row-gathering path).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_name, check_number
from evalci.metrics.base import Metric, _mean_statistics, _ratio
from evalci.metrics.labels import check_comparable

__all__ = ["mean", "accuracy", "ratio", "quantile"]

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


def ratio(denominator: str, *, name: str = "ratio") -> Metric:
    """Ratio of sums: the value column summed over the ``denominator`` column.

    ``sum(value) / sum(denominator)`` over the resampled rows: cost per correct
    answer (value ``cost``, denominator ``correct``), tokens per solved task,
    errors per 1,000 tokens. A ratio estimator, consistent and biased of order
    1/N; with ``weight="input"`` and unequal runs each input's sums are first
    divided by its runs (a ratio of per-input means). For a bounded score
    (a judge's 1-10 rating) use ``metric="mean"``.

    Parameters
    ----------
    denominator : str
        Numeric column summed in the denominator.
    name : str
        Name shown in results (e.g. ``"cost_per_correct"``).

    Examples
    --------
    Runs per correct answer on GPQA (a ratio of two columns):

    >>> import evalci
    >>> df = evalci.load_example().assign(one=1)
    >>> m = evalci.metrics.ratio("correct", name="runs_per_correct")
    >>> r = evalci.cluster_ci(df[df.system == df.system.iloc[0]], "one",
    ...                       cluster="input_id", metric=m, n_resamples=500, rng=0)
    >>> r.metric, round(float(r.estimate), 3)
    ('runs_per_correct', 1.48)
    """
    check_name(denominator, "denominator")
    if not isinstance(name, str) or not name:
        raise ValueError(f"`name` must be a non-empty string; got {as_written(name)}.")

    def statistics(data, value):
        d = data[denominator]
        if not (pd.api.types.is_numeric_dtype(d) or pd.api.types.is_bool_dtype(d)):
            raise ValueError(
                f"`denominator` column {as_written(denominator)} must be numeric; got dtype "
                f"{np.asarray(d).dtype}."
            )
        return np.column_stack(
            [np.asarray(data[value], dtype=float), np.asarray(d, dtype=float)]
        )

    return Metric(
        name,
        statistics=statistics,
        finalize=_ratio,
        columns=(denominator,),
        scale_invariant=True,
    )


def quantile(q: float, column: str) -> Callable[[pd.DataFrame], float]:
    """A callable metric: the ``q`` quantile of ``column`` over the rows.

    For latency or cost distributions (median: ``q=0.5``; p95: ``q=0.95``).
    A quantile is not a function of summed statistics, so it takes the
    general (callable) path: the same draws, gathered as rows, slower for
    large tables. ``column`` is named again because a callable sees the whole
    table. Rows are pooled (each run weighs as one row), so with the default
    ``weight="input"`` the inputs need equal runs (else pass ``weight="run"``).

    Caveat: the bootstrap of a quantile is rough. Its distribution is
    discrete (a resample's quantile is one of a few observed values), so with
    ties or few inputs the interval is coarse and percentile endpoints sit on
    data values; BCa's jackknife is unstable for quantiles. Prefer many
    inputs, and read the interval as approximate.

    Parameters
    ----------
    q : float
        The quantile, in (0, 1).
    column : str
        The numeric column (usually the same as ``value``).

    Returns
    -------
    callable
        ``f(DataFrame) -> float`` named ``quantile_<q>`` (e.g.
        ``quantile_0.95``), for ``metric=``.

    Examples
    --------
    >>> import numpy as np, pandas as pd, evalci
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"input_id": np.repeat(np.arange(200), 2),
    ...                    "latency": rng.lognormal(0, 0.5, 400)})
    >>> p95 = evalci.metrics.quantile(0.95, "latency")
    >>> p95.__name__, round(p95(df), 3)
    ('quantile_0.95', 2.208)
    >>> r = evalci.cluster_ci(df, "latency", cluster="input_id", metric=p95,
    ...                       n_resamples=200, rng=0)
    >>> r.metric, bool(r.low < r.estimate < r.high)
    ('quantile_0.95', True)
    """
    q = check_number(q, "q", low=0, high=1, low_open=True, high_open=True)
    check_name(column, "column")

    def f(frame: pd.DataFrame) -> float:
        return float(np.quantile(frame[column].to_numpy(dtype=float), q))

    f.__name__ = f.__qualname__ = f"quantile_{q:g}"
    return f
