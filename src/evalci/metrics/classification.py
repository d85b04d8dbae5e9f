"""Classification metrics: precision, recall and F1 (binary, macro, micro).

From summed counts, with scikit-learn's definitions and ``zero_division``.
"""

from __future__ import annotations

import numpy as np

from evalci._base.text import as_written
from evalci._base.validate import check_name, check_option
from evalci.metrics.base import Finalize, Metric, Statistics
from evalci.metrics.labels import (
    _as_labels,
    _codes,
    _confusion,
    _confusion_statistics,
    _label_set,
    check_comparable,
)

__all__ = ["precision", "recall", "f1"]

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
                f"{name}: `positive`={as_written(positive)} is not a label of the data "
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
            f"`zero_division` must be 0, 1 or numpy.nan; got {as_written(zero_division)}."
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
