"""Label columns: their kinds, label sets, codes and one-hot confusion cells.

The shared parts of the label metrics (accuracy, kappa, precision / recall /
F1, Krippendorff's alpha): refusing predictions and labels that can never be
equal (numbers vs text), fixing the label set and coding labels as positions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.text import as_written

__all__ = ["check_comparable"]

_NUMBER_KINDS = {"integer", "floating", "mixed-integer-float", "decimal", "boolean"}
_TEXT_KINDS = {"string", "bytes"}


def _value_kind(values, kind: str | None = None) -> str:
    """'number', 'text' or 'mixed': the kind of value a label column holds
    (``kind``: its ``infer_dtype``, when already known)."""
    if kind is None:
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

    Parameters
    ----------
    pred : array-like
        The predictions (the value column).
    true : array-like
        The true labels.
    value : str
        Name of the value column, for the message.
    truth : str
        Name of the truth column, for the message.
    """
    inferred = [pd.api.types.infer_dtype(v, skipna=True) for v in (pred, true)]
    for col, role, kind in zip(
        (value, truth), ("value", "truth"), inferred, strict=True
    ):
        if kind == "mixed-integer":
            raise ValueError(
                f"`{role}` column {as_written(col)} mixes numbers and text (e.g. 1 and '1'), "
                f"which never compare equal; convert it to one type, e.g. "
                f"df[{as_written(col)}].astype(str)."
            )
    kp, kt = (
        _value_kind(v, kind) for v, kind in zip((pred, true), inferred, strict=True)
    )
    if {kp, kt} == {"number", "text"}:
        dp, dt = np.asarray(pred).dtype, np.asarray(true).dtype
        raise ValueError(
            f"predictions (`value` column {as_written(value)}, dtype {dp}, {kp}) and labels "
            f"(`truth` column {as_written(truth)}, dtype {dt}, {kt}) share no value type, so "
            "no prediction can equal a label. Convert one to the other's type, "
            f"e.g. df[{as_written(value)}].astype(str) or df[{as_written(truth)}].astype(int)."
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
            f"numbers (e.g. {as_written(seen[0])}); pass labels=[...] listing them in order."
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
            f"{name}: label {as_written(bad)} is not in `labels`; add it, or pass "
            "labels=None to use every label seen in the data."
        )
    return codes.astype(np.int64)


def _one_hot(cell: np.ndarray, width: int) -> np.ndarray:
    """Rows of 0/1 (uint8: whole numbers the engine need not scan)."""
    return (np.asarray(cell)[:, None] == np.arange(width)).view(np.uint8)


def _factorized(values):
    """``(codes, uniques)`` of a label column by one hash pass, or None when it
    holds a missing value (then the labels are coded value by value)."""
    values = np.asarray(values)
    if values.dtype.kind in "US":
        values = values.astype(object)
    codes, uniques = pd.factorize(values)
    if len(codes) and codes.min() < 0:
        return None
    return codes, np.asarray(uniques, dtype=object)


def _coded_labels(columns, fixed, ordered: bool, name: str, role: str):
    """The label set of ``columns`` and each column's codes in it.

    What :func:`_label_set` of the columns joined and :func:`_codes` of each
    give, from the columns' distinct values: a column is hashed once
    (``pd.factorize``) and only its few distinct labels are looked up.
    """
    found = [_factorized(c) for c in columns]
    if any(f is None for f in found):
        cats = _label_set(np.concatenate(columns), fixed, ordered, name, role)
        return cats, [_codes(c, cats, name) for c in columns]
    seen = np.concatenate([u for _, u in found])
    cats = _label_set(seen, fixed, ordered, name, role)
    index = pd.Index(cats, dtype=object)
    out = []
    for col, (codes, uniques) in zip(columns, found, strict=True):
        where = index.get_indexer(uniques)
        if (where < 0).any():  # the first row whose label is not in `labels`
            _codes(np.asarray(col)[where[codes] < 0][:1], cats, name)
        out.append(where.astype(np.int64)[codes])
    return cats, out


def _confusion_statistics(truth, fixed, name: str, ordered=False):
    """Statistics: the one-hot C x C confusion cell (truth row, prediction column)."""

    def statistics(data, value):
        check_comparable(data[value], data[truth], value, truth)
        columns = [np.asarray(data[value]), np.asarray(data[truth])]
        cats, (p, t) = _coded_labels(columns, fixed, ordered, name, "`weights`")
        return _one_hot(t * len(cats) + p, len(cats) ** 2)

    return statistics


def _as_labels(labels) -> list | None:
    if labels is None:
        return None
    if isinstance(labels, str) or not hasattr(labels, "__iter__"):
        raise TypeError(
            f"`labels` must be a sequence of labels (e.g. [0, 1, 2]) or None; got "
            f"{as_written(labels)}."
        )
    out = list(labels)
    if len(out) < 2 or len(set(out)) != len(out):
        raise ValueError(
            f"`labels` must list at least 2 distinct labels; got {as_written(out)}."
        )
    return out


def _confusion(sums: np.ndarray) -> np.ndarray:
    """``(..., C*C)`` summed one-hot cells as ``(..., C, C)`` confusion counts."""
    n_labels = int(round(np.sqrt(sums.shape[-1])))
    return sums.reshape(sums.shape[:-1] + (n_labels, n_labels))
