"""Metrics as sufficient-statistic blueprints.

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

from evalci._base.validate import check_name, check_number, check_option

__all__ = [
    "Metric",
    "mean",
    "accuracy",
    "kappa",
    "precision",
    "recall",
    "f1",
    "pass_at_k",
    "pass_hat_k",
    "krippendorff_alpha",
    "ratio",
    "quantile",
    "register_metric",
    "get_metric",
    "available_metrics",
]

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
        sample) and ignores ``weight`` (each input contributes one value).

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


def _label_set(values, fixed, ordered: bool, name: str, role: str) -> list:
    """The label set: ``fixed`` as given, else the sorted labels seen.

    ``ordered`` (weighted kappa, ordinal and interval levels) needs an order:
    numbers sort, text has none that means anything, so it needs ``labels=``.
    """
    if fixed is not None:
        return fixed
    seen = pd.unique(pd.Series(np.asarray(values, dtype=object)))
    if ordered and _value_kind(seen) != "number":
        raise ValueError(
            f"{name}: {role} needs ordered labels, but the labels are not all "
            f"numbers (e.g. {seen[0]!r}); pass labels=[...] listing them in order."
        )
    try:
        return sorted(seen)
    except TypeError:  # labels of several types: order them by text
        return sorted(seen, key=lambda v: (type(v).__name__, str(v)))


def _codes(values, cats: list, name: str) -> np.ndarray:
    """Positions of ``values`` in ``cats``; every value must be there."""
    codes = pd.Index(cats, dtype=object).get_indexer(np.asarray(values, dtype=object))
    if (codes < 0).any():
        bad = np.asarray(values)[np.flatnonzero(codes < 0)[0]]
        raise ValueError(
            f"{name}: label {bad!r} is not in `labels`; add it, or pass "
            "labels=None to use every label seen in the data."
        )
    return codes.astype(np.int64)


def _one_hot(cell: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros((len(cell), width))
    out[np.arange(len(cell)), cell] = 1.0
    return out


def _confusion_statistics(truth, fixed, name: str, ordered=False):
    """Statistics: the one-hot C x C confusion cell (truth row, prediction column)."""

    def statistics(data, value):
        check_comparable(data[value], data[truth], value, truth)
        both = np.concatenate([np.asarray(data[value]), np.asarray(data[truth])])
        cats = _label_set(both, fixed, ordered, name, "`weights`")
        p, t = _codes(data[value], cats, name), _codes(data[truth], cats, name)
        return _one_hot(t * len(cats) + p, len(cats) ** 2)

    return statistics


def _as_labels(labels) -> list | None:
    if labels is None:
        return None
    if isinstance(labels, str) or not hasattr(labels, "__iter__"):
        raise TypeError(
            f"`labels` must be a sequence of labels (e.g. [0, 1, 2]) or None; got "
            f"{labels!r}."
        )
    out = list(labels)
    if len(out) < 2 or len(set(out)) != len(out):
        raise ValueError(f"`labels` must list at least 2 distinct labels; got {out!r}.")
    return out


def _confusion(sums: np.ndarray) -> np.ndarray:
    """``(..., C*C)`` summed one-hot cells as ``(..., C, C)`` confusion counts."""
    n_labels = int(round(np.sqrt(sums.shape[-1])))
    return sums.reshape(sums.shape[:-1] + (n_labels, n_labels))


def _kappa_finalize(sums: np.ndarray) -> np.ndarray:
    conf = _confusion(sums)
    n = conf.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.trace(conf, axis1=-2, axis2=-1) / n
        p_e = (conf.sum(axis=-1) * conf.sum(axis=-2)).sum(axis=-1) / n**2
        return (p_o - p_e) / (1.0 - p_e)


def _disagreement_weights(n_labels: int, weights: str) -> np.ndarray:
    """Cohen's (1968) disagreement weights on label positions, in [0, 1]."""
    i = np.arange(n_labels)
    d = np.abs(i[:, None] - i[None, :]) / (n_labels - 1)
    return d if weights == "linear" else d**2


def _weighted_kappa_finalize(weights: str) -> Finalize:
    def finalize(sums: np.ndarray) -> np.ndarray:
        conf = _confusion(sums)
        w = _disagreement_weights(conf.shape[-1], weights)
        n = conf.sum(axis=(-2, -1))
        expected = conf.sum(axis=-1)[..., :, None] * conf.sum(axis=-2)[..., None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = (conf * w).sum(axis=(-2, -1)) / n
            return 1.0 - observed / ((expected * w).sum(axis=(-2, -1)) / n**2)

    return finalize


def kappa(truth: str = "label", labels=None, weights=None) -> Metric:
    """Cohen's kappa of the value column (predicted labels) against ``truth``.

    The statistics are the C x C confusion counts (one-hot per row), so
    ``kappa = (p_o - p_e) / (1 - p_e)`` is computed from summed counts. With
    ``weights``, Cohen's weighted kappa ``1 - sum(w * o) / sum(w * e)`` for
    ordered labels, with disagreement weights ``|i - j| / (C - 1)`` (linear)
    or its square (quadratic) on the positions i, j of the labels in their
    order (as scikit-learn's and statsmodels' defaults do: label *positions*,
    not their numeric values).

    Parameters
    ----------
    truth : str
        Column holding the true (reference) label.
    labels : sequence, optional
        The label set, in order. By default the sorted union of the labels seen
        in both columns; weights then need labels that are numbers (text has no
        meaningful order: pass ``labels=`` to give one).
    weights : {None, 'linear', 'quadratic'}
        None (default) for Cohen's unweighted kappa.

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales.
    Educational and Psychological Measurement, 20(1), 37-46.
    Cohen, J. (1968). Weighted kappa. Psychological Bulletin, 70(4), 213-220.

    Examples
    --------
    >>> import pandas as pd, evalci
    >>> df = pd.DataFrame({"item": range(6), "judge": [1, 2, 3, 3, 2, 1],
    ...                    "human": [1, 2, 3, 2, 2, 3]})
    >>> m = evalci.metrics.kappa(truth="human", weights="quadratic")
    >>> m.name
    'kappa_quadratic'
    >>> stats = m.statistics({c: df[c].to_numpy() for c in df}, "judge")
    >>> round(float(m.finalize(stats.sum(axis=0))), 4)
    0.2857
    """
    check_name(truth, "truth")
    check_option(weights, "weights", (None, "linear", "quadratic"))
    fixed = _as_labels(labels)
    return Metric(
        "kappa" if weights is None else f"kappa_{weights}",
        statistics=_confusion_statistics(
            truth, fixed, "kappa", ordered=weights is not None
        ),
        finalize=_kappa_finalize
        if weights is None
        else _weighted_kappa_finalize(weights),
        columns=(truth,),
        numeric=False,
        scale_invariant=True,
    )


_AVERAGES = ("binary", "macro", "micro")


def _safe_divide(num, den, zero_division: float):
    """``num / den``, ``zero_division`` where ``den == 0`` (scikit-learn's rule)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), zero_division)


def _binary_statistics(truth, positive, fixed, name: str) -> Statistics:
    """Per row: [true positive, predicted positive, actually positive]."""

    def statistics(data, value):
        check_comparable(data[value], data[truth], value, truth)
        pred, true = (np.asarray(data[c], dtype=object) for c in (value, truth))
        cats = _label_set(np.concatenate([pred, true]), fixed, False, name, "")
        if fixed is not None:
            _codes(np.concatenate([pred, true]), cats, name)
        if len(cats) > 2:
            raise ValueError(
                f"{name}: average='binary' needs at most two labels, found "
                f"{len(cats)} ({cats[:4]}); pass average='macro' or 'micro'."
            )
        if not any(positive == c for c in cats):
            raise ValueError(
                f"{name}: `positive`={positive!r} is not a label of the data "
                f"({cats}); pass positive=<the label that counts as positive>."
            )
        pp, ap = pred == positive, true == positive
        return np.column_stack([pp & ap, pp, ap]).astype(float)

    return statistics


def _prf_finalize(which: str, average: str, zero_division: float) -> Finalize:
    """Precision, recall or F1 from summed counts (scikit-learn's definitions)."""

    def finalize(sums: np.ndarray) -> np.ndarray:
        if average == "binary":
            tp, predicted, actual = sums[..., 0], sums[..., 1], sums[..., 2]
        else:
            conf = _confusion(sums)  # truth x prediction
            tp = np.diagonal(conf, axis1=-2, axis2=-1)  # (..., C)
            predicted, actual = conf.sum(axis=-2), conf.sum(axis=-1)  # TP+FP, TP+FN
        if average == "micro":  # pooled counts over labels
            tp, predicted, actual = tp.sum(-1), predicted.sum(-1), actual.sum(-1)
        if which == "precision":
            score = _safe_divide(tp, predicted, zero_division)
        elif which == "recall":
            score = _safe_divide(tp, actual, zero_division)
        else:  # F1 = 2 TP / (2 TP + FP + FN), the harmonic mean of P and R
            score = _safe_divide(2.0 * tp, predicted + actual, zero_division)
        return score.mean(axis=-1) if average == "macro" else score

    return finalize


def _prf(which, truth, positive, average, labels, zero_division) -> Metric:
    """The Metric behind :func:`precision`, :func:`recall` and :func:`f1`."""
    check_name(truth, "truth")
    check_option(
        average,
        "average",
        _AVERAGES,
        describe="'binary' (of the `positive` label), 'macro' (unweighted mean "
        "over labels) or 'micro' (from pooled counts)",
    )
    zero = zero_division
    if not (isinstance(zero, (int, float)) and (zero in (0, 1) or np.isnan(zero))):
        raise ValueError(
            f"`zero_division` must be 0, 1 or numpy.nan; got {zero_division!r}."
        )
    fixed = _as_labels(labels)
    if average == "binary":
        statistics = _binary_statistics(truth, positive, fixed, which)
    else:
        statistics = _confusion_statistics(truth, fixed, which)
    return Metric(
        which if average == "binary" else f"{which}_{average}",
        statistics=statistics,
        finalize=_prf_finalize(which, average, float(zero)),
        columns=(truth,),
        numeric=False,
        scale_invariant=True,
    )


_PRF_DOC = """{title} of the value column (predicted labels) against ``truth``.

    {formula} From summed counts: per-row one-hot
    confusion cells (``average="macro"`` or ``"micro"``) or the row's true
    positive / predicted positive / actual positive flags (``"binary"``), so
    every strategy, BCa's O(N) jackknife and the Dask path work with it.

    Parameters
    ----------
    truth : str
        Column holding the true label.
    positive : label
        The label that counts as positive for ``average="binary"`` (default 1,
        scikit-learn's ``pos_label``).
    average : {{'binary', 'macro', 'micro'}}
        scikit-learn's definitions: ``binary`` scores the ``positive`` label
        (at most two labels); ``macro`` is the unweighted mean of the per-label
        scores; ``micro`` is computed from TP, FP and FN pooled over labels
        (equal to accuracy when every label is included).
    labels : sequence, optional
        The label set. By default the sorted union of the labels seen in both
        columns of the whole table, fixed for every resample (as if passed to
        scikit-learn's ``labels=``): a label absent from a resample scores
        ``zero_division`` there rather than leaving the macro average.
    zero_division : {{0, 1, nan}}
        The score when its denominator is 0 (scikit-learn's ``zero_division``;
        NaN makes such resamples undefined, and evalci then warns).

    References
    ----------
    scikit-learn, ``sklearn.metrics.precision_recall_fscore_support``
    (definitions of the binary, macro and micro averages).

    Examples
    --------
    >>> import pandas as pd, evalci
    >>> df = pd.DataFrame({{"pred": [1, 1, 1, 1, 0, 0], "label": [1, 0, 1, 0, 1, 0]}})
    >>> m = evalci.metrics.{name}(truth="label")
    >>> stats = m.statistics({{c: df[c].to_numpy() for c in df}}, "pred")
    >>> round(float(m.finalize(stats.sum(axis=0))), 4)
    {value}
    """


def precision(
    truth: str = "label", *, positive=1, average="binary", labels=None, zero_division=0
) -> Metric:
    return _prf("precision", truth, positive, average, labels, zero_division)


def recall(
    truth: str = "label", *, positive=1, average="binary", labels=None, zero_division=0
) -> Metric:
    return _prf("recall", truth, positive, average, labels, zero_division)


def f1(
    truth: str = "label", *, positive=1, average="binary", labels=None, zero_division=0
) -> Metric:
    return _prf("f1", truth, positive, average, labels, zero_division)


precision.__doc__ = _PRF_DOC.format(
    title="Precision",
    name="precision",
    value="0.5",
    formula="Precision = TP / (TP + FP): the share of predicted positives that "
    "are positive.",
)
recall.__doc__ = _PRF_DOC.format(
    title="Recall",
    name="recall",
    value="0.6667",
    formula="Recall = TP / (TP + FN): the share of positives that are predicted.",
)
f1.__doc__ = _PRF_DOC.format(
    title="F1 score",
    name="f1",
    value="0.5714",
    formula="F1 = 2 TP / (2 TP + FP + FN), the harmonic mean of precision and recall.",
)


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(
            f"`k` must be an integer (the number of attempts, e.g. k=1); got "
            f"{k!r} ({type(k).__name__})."
        )
    if k < 1:
        raise ValueError(
            f"`k` must be a positive integer (the number of attempts); got {k}; "
            "use k=1 for the expected single-attempt success rate."
        )
    return int(k)


def _pass_counts(sums: np.ndarray, k: int, name: str):
    """``(c, n)``: correct runs and runs of each input, checked against ``k``."""
    c, n = sums[..., 0], sums[..., 1]
    short = n < k
    if short.any():
        raise ValueError(
            f"{name}: `k`={k} exceeds the runs of {int(short.sum())} input(s) "
            f"(the fewest has n={int(n[short].min())} runs); the unbiased estimator "
            f"needs n >= k runs per input. Use k <= {int(n.min())}, or drop the "
            "inputs with fewer runs."
        )
    return c, n


def _factors(x: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """``(x - i) / (n - i)`` for i = 0 .. k-1, on a new last axis.

    Their product is ``C(x, k) / C(n, k)``: k factors in [0, 1] (x <= n),
    so it neither overflows nor cancels, unlike differences of log-gammas.
    """
    i = np.arange(k, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x[..., None] - i) / (n[..., None] - i)


def _pass_statistics(c_trials: str | None) -> Statistics:
    """Per row [correct, runs]: a 0/1 column, or a counts table's two columns."""
    if c_trials is None:
        return _mean_statistics

    def statistics(data, value):
        c = np.asarray(data[value], dtype=float)
        n = np.asarray(data[c_trials], dtype=float)
        bad = (c < 0) | (c > n) | (c != np.round(c)) | (n != np.round(n))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`value` column {value!r} must count correct runs, whole numbers "
                f"from 0 to `trials` ({c_trials!r}); found {c[i]:g} of {n[i]:g}."
            )
        return np.column_stack([c, n])

    return statistics


def _pass_metric(name, k, trials, per_input) -> Metric:
    if trials is not None:
        check_name(trials, "trials")

    def hook(sums):
        c, n = _pass_counts(sums, k, name)
        v = per_input(c, n)
        return np.stack([v, np.ones_like(v)], axis=-1)

    return Metric(
        name,
        statistics=_pass_statistics(trials),
        finalize=_ratio,
        columns=() if trials is None else (trials,),
        binary=trials is None,
        per_input=hook,
    )


def pass_at_k(k: int, *, trials: str | None = None) -> Metric:
    """pass@k: the chance that at least one of k attempts succeeds, per input.

    Chen et al.'s (2021) unbiased estimator from the n >= k runs of an input,
    c of them correct, ``1 - C(n - c, k) / C(n, k)``, averaged over inputs;
    intervals resample inputs (``strategy="cluster"``: an input's runs are its
    sample). It is computed as ``-expm1(log C(n-c, k) - log C(n, k))`` from
    log-gamma, so large n neither overflows nor loses the small values.

    Parameters
    ----------
    k : int
        Attempts; at most the runs of every input (else a ValueError names
        the fewest). ``k=1`` is the mean accuracy of each input, averaged.
    trials : str, optional
        For a counts table: the column with each row's runs, the value column
        then holding its correct runs. By default the value column is 0/1, one
        row per run.

    References
    ----------
    Chen, M. et al. (2021). Evaluating large language models trained on code.
    arXiv:2107.03374, section 2.1 and figure 3.

    Examples
    --------
    Seed 004's example: n = 10 runs, c = 3 correct.

    >>> import numpy as np, evalci
    >>> m = evalci.metrics.pass_at_k(5)
    >>> t = m.per_input(np.array([[3.0, 10.0]]))  # (c, n) -> (pass@5, 1)
    >>> round(float(m.finalize(t.sum(axis=0))), 4)  # 1 - C(7, 5) / C(10, 5)
    0.9167
    """
    k = _check_k(k)

    def value(c, n):
        # C(n-c, k) / C(n, k) = prod_i (1 - c / (n - i)); zero when n - c < k
        i = np.arange(k, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            log_miss = np.log1p(-c[..., None] / (n[..., None] - i)).sum(axis=-1)
        return np.where(n - c < k, 1.0, 0.0 - np.expm1(log_miss))

    return _pass_metric(f"pass@{k}", k, trials, value)


def pass_hat_k(k: int, *, trials: str | None = None) -> Metric:
    """pass^k: the chance that all of k attempts succeed, per input.

    The unbiased estimator ``C(c, k) / C(n, k)`` of tau-bench (Yao et al.,
    2024) from the n >= k runs of an input, c of them correct, averaged over
    inputs: a reliability score that falls as k grows when a system succeeds
    on an input only sometimes. ``pass_hat_k(1)`` is the mean accuracy.

    Parameters
    ----------
    k : int
        Attempts; at most the runs of every input.
    trials : str, optional
        For a counts table, the column of runs (see :func:`pass_at_k`).

    References
    ----------
    Yao, S., Shinn, N., Razavi, P. & Narasimhan, K. (2024). tau-bench: a
    benchmark for tool-agent-user interaction in real-world domains.
    arXiv:2406.12045, section 5 (pass^k).

    Examples
    --------
    >>> import numpy as np, evalci
    >>> m = evalci.metrics.pass_hat_k(2)
    >>> t = m.per_input(np.array([[3.0, 4.0], [4.0, 4.0]]))  # 3/6 and 1
    >>> float(m.finalize(t.sum(axis=0)))
    0.75
    """
    k = _check_k(k)

    def value(c, n):
        return np.where(c < k, 0.0, _factors(c, n, k).prod(axis=-1))

    return _pass_metric(f"pass^{k}", k, trials, value)


_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _coincidences(sums: np.ndarray, n_labels: int, numeric: bool) -> np.ndarray:
    """Per input: ``(n_uc n_uk - [c == k] n_uc) / (m_u - 1)``, flattened.

    ``sums`` are the input's ratings per label ``n_uc`` (and, for numeric
    levels, each label's value times ``n_uc``, carried so that the finalize
    can read the label values). Inputs with one rating are not pairable and
    contribute zero (Krippendorff 2011, section C, step 2).
    """
    n_u = sums[..., :n_labels]
    m_u = n_u.sum(axis=-1)
    pairable = (m_u >= 2)[..., None, None]
    o = n_u[..., :, None] * n_u[..., None, :] - np.eye(n_labels) * n_u[..., :, None]
    o = np.where(pairable, o / np.maximum(m_u - 1.0, 1.0)[..., None, None], 0.0)
    out = o.reshape(o.shape[:-2] + (n_labels * n_labels,))
    if numeric:  # value x count of the pairable ratings (sum_k o_uck = n_uc)
        out = np.concatenate([out, sums[..., n_labels:] * pairable[..., 0]], axis=-1)
    return out


def _delta(level: str, n_c: np.ndarray, values) -> np.ndarray:
    """Squared distances ``delta^2_ck`` (..., C, C) of Krippendorff (2011)."""
    c = n_c.shape[-1]
    if level == "nominal":
        return 1.0 - np.eye(c)
    if level == "ordinal":  # (sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2
        cum = np.cumsum(n_c, axis=-1)
        d = (
            cum[..., None, :]
            - cum[..., :, None]
            + (n_c[..., :, None] - n_c[..., None, :]) / 2
        )
        return d**2
    diff = values[..., :, None] - values[..., None, :]
    if level == "interval":
        return diff**2
    total = values[..., :, None] + values[..., None, :]
    return (diff / np.where(total == 0, 1.0, total)) ** 2  # ratio


def _alpha_finalize(level: str) -> Finalize:
    numeric = level in ("interval", "ratio")

    def finalize(sums: np.ndarray) -> np.ndarray:
        n_labels = _n_labels(sums.shape[-1], numeric)
        o = sums[..., : n_labels * n_labels]
        o = o.reshape(o.shape[:-1] + (n_labels, n_labels))
        n_c = o.sum(axis=-1)  # pairable values per label
        n = n_c.sum(axis=-1)
        values = None
        if numeric:
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(n_c > 0, sums[..., n_labels * n_labels :] / n_c, 0.0)
        delta = _delta(level, n_c, values)
        d_o = (o * delta).sum(axis=(-2, -1))
        d_e = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.0 - (n - 1.0) * d_o / d_e

    return finalize


def _n_labels(width: int, numeric: bool) -> int:
    """C from the statistics' width: C^2, or C^2 + C with the label values."""
    if not numeric:
        return int(round(np.sqrt(width)))
    return int(round((np.sqrt(1.0 + 4.0 * width) - 1.0) / 2.0))


def krippendorff_alpha(level: str = "nominal", labels=None) -> Metric:
    """Krippendorff's alpha: agreement of several raters (or judges) on inputs.

    Rows are ratings, one per (input, rater): the value column holds the
    rating, ``cluster`` names the input (Krippendorff's unit), and a rater may
    skip inputs (leave the row out). Each input contributes its coincidences
    ``(n_uc n_uk - [c == k] n_uc) / (m_u - 1)`` of its ``m_u`` ratings (inputs
    with a single rating contribute nothing), and
    ``alpha = 1 - (n - 1) sum o_ck delta_ck / sum n_c n_k delta_ck`` with the
    level's squared distance ``delta_ck``. Intervals resample inputs with all
    their ratings (``strategy="cluster"``).

    Parameters
    ----------
    level : {'nominal', 'ordinal', 'interval', 'ratio'}
        The scale of the ratings, which sets the distance: nominal ``[c != k]``;
        ordinal from the ranks' marginal counts; interval ``(c - k)^2``; ratio
        ``((c - k) / (c + k))^2``.
    labels : sequence, optional
        The possible ratings, in order. By default the sorted ratings seen;
        ordinal, interval and ratio levels need numbers (or, for ordinal, an
        ordered ``labels=``); interval and ratio use the numbers' values.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
    Annenberg School for Communication, University of Pennsylvania,
    https://repository.upenn.edu/asc_papers/43 (section C's example: 4
    observers x 12 units, alpha = 0.743 nominal, 0.815 ordinal, 0.849
    interval, 0.797 ratio).

    Examples
    --------
    >>> import numpy as np, evalci
    >>> m = evalci.metrics.krippendorff_alpha("nominal")
    >>> n_uc = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])  # 3 inputs, 2 labels
    >>> round(float(m.finalize(m.per_input(n_uc).sum(axis=0))), 4)
    0.4444
    """
    check_option(level, "level", _LEVELS)
    fixed = _as_labels(labels)
    numeric = level in ("interval", "ratio")
    if numeric and fixed is not None and _value_kind(fixed) != "number":
        raise ValueError(
            f"level={level!r} needs numeric ratings, so `labels` must be numbers; "
            f"got {fixed!r}. Use level='ordinal' for ordered text labels."
        )
    name = f"krippendorff_alpha_{level}"

    def statistics(data, value):
        y = np.asarray(data[value])
        cats = _label_set(y, fixed, level != "nominal", name, f"level={level!r}")
        hot = _one_hot(_codes(y, cats, name), len(cats))
        if not numeric:
            return hot
        return np.concatenate([hot, hot * np.asarray(cats, dtype=float)], axis=1)

    return Metric(
        name,
        statistics=statistics,
        finalize=_alpha_finalize(level),
        numeric=numeric,
        per_input=lambda sums: _coincidences(
            sums, _n_labels_raw(sums, numeric), numeric
        ),
    )


def _n_labels_raw(sums: np.ndarray, numeric: bool) -> int:
    """C from the raw statistics' width: C one-hot columns (and C values)."""
    return sums.shape[-1] // 2 if numeric else sums.shape[-1]


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
        raise ValueError(f"`name` must be a non-empty string; got {name!r}.")

    def statistics(data, value):
        d = data[denominator]
        if not (pd.api.types.is_numeric_dtype(d) or pd.api.types.is_bool_dtype(d)):
            raise ValueError(
                f"`denominator` column {denominator!r} must be numeric; got dtype "
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


_REGISTRY: dict[str, Metric] = {"mean": mean}


def register_metric(
    metric: Metric, name: str | None = None, *, overwrite=False
) -> None:
    """Register ``metric`` so that ``metric="<name>"`` finds it.

    The registry is process-wide: every entry point of this process
    (``bootstrap``, ``compare``, the accessors) then accepts the name.

    Parameters
    ----------
    metric : Metric
        The blueprint to register (a callable is not accepted: pass it as
        ``metric=`` directly).
    name : str, optional
        The name to register it under; default ``metric.name``.
    overwrite : bool
        Replace a metric already registered under that name; default False,
        which raises ``ValueError`` instead.

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


#: names users type for a metric that needs arguments, and the call that builds it
_FACTORY_HINTS = {
    "f1": "f1(truth=...)",
    "precision": "precision(truth=...)",
    "recall": "recall(truth=...)",
    "accuracy": "accuracy(truth=...) for labels (metric='mean' for a 0/1 column)",
    "kappa": "kappa(truth=...)",
    "pass@k": "pass_at_k(k)",
    "pass_at_k": "pass_at_k(k)",
    "pass^k": "pass_hat_k(k)",
    "pass_hat_k": "pass_hat_k(k)",
    "krippendorff_alpha": "krippendorff_alpha(level=...)",
    "alpha": "krippendorff_alpha(level=...)",
    "ratio": "ratio(denominator)",
    "quantile": "quantile(q, column)",
    "median": "quantile(0.5, column)",
}


def get_metric(metric) -> Metric | Callable:
    """Normalise ``metric=``: a registered name, a :class:`Metric` or a callable.

    Parameters
    ----------
    metric : str, Metric or callable
        A name from :func:`available_metrics`, a :class:`Metric` (returned
        as is) or a callable ``f(DataFrame) -> float`` (returned as is).

    Returns
    -------
    Metric or callable

    Raises
    ------
    ValueError
        For an unregistered name, naming the call that builds it when the
        metric needs arguments (``"pass@5"`` -> ``pass_at_k(5)``).

    Examples
    --------
    >>> from evalci import metrics
    >>> metrics.get_metric("mean").name
    'mean'
    >>> metrics.get_metric("pass@5")
    Traceback (most recent call last):
    ...
    ValueError: `metric` 'pass@5' is not registered: it needs arguments; use metric=evalci.metrics.pass_at_k(5).
    """
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str):
        try:
            return _REGISTRY[metric]
        except KeyError:
            key = metric.lower().replace("-", "_")
            k = key[5:] if key[:5] in ("pass@", "pass^") else ""
            factory = _FACTORY_HINTS.get(key[:5] + "k" if k.isdigit() else key)
            if k.isdigit():  # "pass@5": say the exact call
                factory = factory.replace("(k)", f"({int(k)})")
            if factory is not None:
                raise ValueError(
                    f"`metric` {metric!r} is not registered: it needs arguments; "
                    f"use metric=evalci.metrics.{factory}."
                ) from None
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
