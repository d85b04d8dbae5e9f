"""Sorted integer codes of key columns (inputs, groups, strata, systems).

:func:`factorize` turns key columns into sorted integer codes, so a shuffled
table gives the same codes, in O(N): only the distinct keys are ever
sorted. One call of a method that codes the same column more than once (a
comparison codes its input and system columns while checking what is
missing, and again in the cube) can do the work once: inside
:func:`remembered_codes` a column's codes are kept for the rest of the
call, keyed by the column's array, which nothing changes during a call.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps

import numpy as np
import pandas as pd

from evalci._base.text import as_written

__all__ = ["factorize", "keeping_codes", "remembered_codes", "sorted_factorize"]

#: Codes kept during one call (:func:`remembered_codes`); None outside one.
_KEPT: ContextVar[dict | None] = ContextVar("evalci_kept_codes", default=None)


@contextmanager
def remembered_codes():
    """Keep each column's :func:`sorted_factorize` codes until the block ends.

    For an entry point that codes the same (unchanged) columns several times
    in one call. The kept entries hold their arrays, so no array's identity
    is reused while they are kept; nested blocks share the outer one's.

    >>> s = pd.Series(["b", "a", "b"], dtype=object)
    >>> with remembered_codes():
    ...     first = sorted_factorize(s)
    ...     again = sorted_factorize(s)
    >>> again[0].tolist(), list(again[1])
    ([1, 0, 1], ['a', 'b'])
    """
    if _KEPT.get() is not None:
        yield
        return
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def keeping_codes(fn):
    """``fn`` run inside :func:`remembered_codes` (a decorator)."""

    @wraps(fn)
    def kept(*args, **kwargs):
        with remembered_codes():
            return fn(*args, **kwargs)

    return kept


def _array_key(series: pd.Series):
    """``(key, array)``: what identifies a column's data during a call."""
    arr = series.array
    if isinstance(series.dtype, np.dtype):  # numpy data: its buffer and layout
        arr = series.to_numpy(copy=False)
        info = arr.__array_interface__
        return ("np", info["data"][0], arr.shape, arr.strides, arr.dtype.str), arr
    return ("ea", id(arr), len(arr)), arr


def factorize(frame: pd.DataFrame, cols: list[str], name: str):
    """Sorted integer codes of the key ``cols`` and the Index of unique keys.

    The same codes and keys as ``pd.factorize(..., sort=True)`` (and, for
    several columns, as ``np.unique(..., axis=0)`` of their codes), in O(N):
    only the unique keys are ever sorted, never the N rows
    (:func:`sorted_factorize`).
    """
    codes, uniques = [], []
    for col in cols:
        series = frame[col]
        if series.isna().any():
            raise ValueError(
                f"`{name}` column {as_written(col)} has {int(series.isna().sum())} missing "
                "values; fill or drop those rows first."
            )
        try:
            c, u = sorted_factorize(series)
        except TypeError:
            raise ValueError(
                f"`{name}` column {as_written(col)} mixes values that cannot be ordered "
                "(e.g. numbers and strings); convert it to one type, e.g. "
                f"df[{as_written(col)}].astype(str)."
            ) from None
        codes.append(c)
        uniques.append(u)
    if len(cols) == 1:
        return codes[0], uniques[0].rename(cols[0])
    inverse, combos = _combine(codes, [len(u) for u in uniques])
    index = pd.MultiIndex.from_arrays(
        [u[combos[:, i]] for i, u in enumerate(uniques)], names=cols
    )
    return inverse, index


def sorted_factorize(series: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize(series, sort=True)`` without sorting the N rows.

    Integer keys of moderate range (at most ``max(4 N, 65536)`` values apart)
    are coded through a table of the values present: two passes, no hashing,
    no sort. Other keys are hashed unsorted and only the U unique keys are
    sorted (not even those when they come sorted, as in a sorted table).
    Returns int64 codes and the Index of sorted unique keys.
    """
    kept = _KEPT.get()
    if kept is None:
        return _sorted_factorize(series)
    key, arr = _array_key(series)
    hit = kept.get(key)
    if hit is None:
        hit = kept[key] = (arr, *_sorted_factorize(series))
    return hit[1].copy(), hit[2]


def _sorted_factorize(series: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """:func:`sorted_factorize`, computed."""
    values = series.to_numpy() if isinstance(series.dtype, np.dtype) else None
    if values is not None and values.dtype.kind in "iu" and len(values):
        if (values[1:] > values[:-1]).all():  # distinct and sorted already
            return np.arange(len(values), dtype=np.int64), pd.Index(values)
        lo, hi = values.min(), values.max()
        span = int(hi) - int(lo) + 1
        if span <= max(4 * len(values), 1 << 16):
            if values.dtype == np.uint64:
                offset = (values - lo).astype(np.int64)
            elif values.dtype == np.int64 and lo == 0:
                offset = values
            else:
                offset = values.astype(np.int64) - int(lo)
            present = np.zeros(span, dtype=bool)
            present[offset] = True
            lut = np.cumsum(present, dtype=np.int64)
            lut -= 1
            uniques = np.flatnonzero(present)
            if values.dtype == np.uint64:  # lo may pass int64's top (hashes)
                uniques = uniques.astype(np.uint64) + lo
            else:
                uniques = (uniques + int(lo)).astype(values.dtype, copy=False)
            return lut[offset], pd.Index(uniques)
    if isinstance(series.dtype, pd.CategoricalDtype):  # codes already: no hashing
        c, u = pd.factorize(series, sort=True)
        return c.astype(np.int64, copy=False), pd.Index(u)
    codes, uniques = pd.factorize(series, sort=False)
    uniques = pd.Index(uniques)
    codes = codes.astype(np.int64, copy=False)
    try:
        if len(codes) and codes.min() < 0:  # missing values: pandas' own order
            raise TypeError
        if len(uniques) > 1 and not _increasing(uniques.array):
            order = uniques.argsort()
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order), dtype=np.int64)
            codes, uniques = rank[codes], uniques.take(order)
    except TypeError:  # missing values, or a mix pandas orders its own way
        c, u = pd.factorize(series, sort=True)
        return c.astype(np.int64, copy=False), pd.Index(u)
    return codes, uniques


def _increasing(values) -> bool:
    """Whether an array's values are strictly increasing, by one vectorised
    comparison (``Index.is_monotonic_increasing`` is slower on strings)."""
    return bool(np.asarray(values[1:] > values[:-1], dtype=bool).all())


def _combine(codes: list[np.ndarray], sizes: list[int]):
    """Codes of the distinct combinations of several code columns, sorted.

    ``(inverse, combos)`` as ``np.unique(np.column_stack(codes), axis=0,
    return_inverse=True)`` gives them (lexicographic, first column most
    significant), through one mixed-radix int64 key: O(N) while the key's
    range is at most ``max(4 N, 65536)``, else a sort of the unique keys.
    """
    n = len(codes[0])
    if float(np.prod([max(s, 1) for s in sizes], dtype=float)) >= 2.0**62:
        combos, inverse = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
        return inverse.reshape(-1).astype(np.int64), combos
    key = codes[0].astype(np.int64, copy=True)
    for c, size in zip(codes[1:], sizes[1:], strict=True):
        key *= size
        key += c
    radix = int(np.prod(sizes, dtype=np.int64))
    if radix <= max(4 * n, 1 << 16):
        present = np.zeros(radix, dtype=bool)
        present[key] = True
        lut = np.cumsum(present, dtype=np.int64)
        lut -= 1
        inverse, flat = lut[key], np.flatnonzero(present)
    else:
        inverse, flat = _sorted_factorize(pd.Series(key))
        flat = np.asarray(flat, dtype=np.int64)
    combos = np.column_stack(np.unravel_index(flat, sizes)).astype(np.int64)
    return inverse, combos
