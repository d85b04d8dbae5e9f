"""A Metric from a function of named column sums: :func:`from_sums`.

What a callable ``f(DataFrame) -> float`` computes from column totals alone
(a mean, a share, a ratio, a rate per token) is written here as a function
of those totals; the engine then resamples it as sums on its fast kernels
instead of calling Python on gathered rows once per resample.

The statistics of a row are its values in ``columns`` and a 1 (the count);
``finalize`` receives them summed, as a mapping from each column's name (and
the count's) to an array with one entry per replicate and group, and is
called once per block of replicates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from evalci._base.text import as_written
from evalci.metrics.base import Metric

__all__ = ["from_sums"]


@dataclass(frozen=True)
class SumsMetric(Metric):
    """A :class:`Metric` built by :func:`from_sums`: it may sum the value column.

    ``sums`` are the summed columns in slot order (the count last, apart).
    When the value column is one of them it is read as the value column, so
    the engine's ``columns`` (read *besides* the value column) leave it out:
    :func:`for_value`.
    """

    sums: tuple[str, ...] = ()


def for_value(metric, value: str):
    """``metric`` with the value column out of its ``columns`` (a SumsMetric
    that sums the value column reads it as the value column); anything else
    unchanged."""
    if isinstance(metric, SumsMetric) and value in metric.columns:
        return replace(metric, columns=tuple(c for c in metric.columns if c != value))
    return metric


class _SumsError(ValueError):
    """A misuse of ``finalize`` found while it runs (its message says which)."""


class _Sums(dict):
    """The named sums a function reads; an unknown name says what there is.

    ``role`` is the argument reading them (``finalize`` or ``per_input``),
    ``listed`` where the names come from (``columns`` or ``per_input``).
    """

    def __init__(self, values, metric, count, role="finalize", listed="columns"):
        super().__init__(values)
        self._metric, self._count = metric, count
        self._role, self._listed = role, listed

    def __missing__(self, key):
        names = [k for k in self if k != self._count]
        fix = (
            "add the column to `columns`"
            if self._listed == "columns"
            else "return it from `per_input`"
        )
        raise _SumsError(
            f"`{self._role}` of metric {as_written(self._metric)} reads the sum "
            f"{as_written(key)}, which is not one of the names in `{self._listed}` "
            f"{names} or the count {as_written(self._count)} (`count`); {fix}."
        )


def _check_columns(columns, count: str) -> tuple[str, ...]:
    cols = (columns,) if isinstance(columns, str) else columns
    if not isinstance(cols, (list, tuple)) or not cols:
        raise TypeError(
            "`columns` must name the summed columns: a column name or a non-empty "
            f"list of them; got {as_written(columns)}."
        )
    for c in cols:
        if not isinstance(c, str) or not c:
            raise TypeError(
                f"`columns` must hold column names (non-empty str); got {as_written(c)}."
            )
    dup = sorted({c for c in cols if list(cols).count(c) > 1})
    if dup:
        raise ValueError(f"`columns` names {as_written(dup[0])} twice; list it once.")
    if not isinstance(count, str) or not count:
        raise TypeError(f"`count` must be a non-empty str; got {as_written(count)}.")
    if count in cols:
        raise ValueError(
            f"`count` {as_written(count)} is also in `columns`; name the row count "
            "something else (e.g. count='n_rows')."
        )
    return tuple(cols)


def _statistics(name: str, cols: tuple[str, ...]):
    """Per row: its value in each column, then 1; integers stay integers."""

    def statistics(data: Mapping[str, np.ndarray], value: str) -> np.ndarray:
        arrays = [np.asarray(data[c]) for c in cols]
        for c, a in zip(cols, arrays, strict=True):
            if a.dtype.kind not in "biuf":
                raise ValueError(
                    f"`columns`: column {as_written(c)} of metric {as_written(name)} "
                    f"must be numeric or boolean to be summed; got dtype {a.dtype}."
                )
        whole = all(a.dtype.kind in "biu" for a in arrays)
        out = np.ones((len(arrays[0]), len(cols) + 1), np.int64 if whole else float)
        for i, a in enumerate(arrays):
            out[:, i] = a
        return out

    return statistics


def _finalize(name: str, cols, count: str, fn: Callable, listed: str = "columns"):
    """``fn`` on the named sums of a block of replicates, its shape checked
    (``listed``: the argument that names them, for the message)."""

    def finalize(sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums)
        named = {c: sums[..., i] for i, c in enumerate(cols)}
        named[count] = sums[..., len(cols)]
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.asarray(fn(_Sums(named, name, count, "finalize", listed)))
        if out.dtype.kind not in "biuf":
            raise _SumsError(
                f"`finalize` of metric {as_written(name)} must return numbers; got "
                f"an array of dtype {out.dtype}."
            )
        if out.shape != sums.shape[:-1]:
            raise _SumsError(
                f"`finalize` of metric {as_written(name)} must return one value per "
                f"set of sums, shape {sums.shape[:-1]} here, got shape {out.shape}: "
                "write it with array operations on the sums (np.sqrt, not "
                "math.sqrt; no float(), .item() or reduction over the sums)."
            )
        return out.astype(float, copy=False)

    return finalize


def _per_input(name: str, cols: tuple[str, ...], count: str, fn: Callable):
    """``fn`` on each input's named sums -> its named statistics, stacked.

    The names ``fn`` returns (in its order) are fixed by its first call, on
    the probe block when the metric is built: ``names`` is filled then.
    """
    names: list[str] = []

    def per_input(sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums)
        named = {c: sums[..., i] for i, c in enumerate(cols)}
        named[count] = sums[..., len(cols)]
        with np.errstate(invalid="ignore", divide="ignore"):
            out = fn(_Sums(named, name, count, "per_input"))
        if not isinstance(out, Mapping) or not out or count in out:
            raise _SumsError(
                f"`per_input` of metric {as_written(name)} must return a non-empty "
                "mapping from a statistic's name to its array (one value per "
                f"input), without the count {as_written(count)} (added for you)."
            )
        if not names:
            names.extend(out)
        if list(out) != names:
            raise _SumsError(
                f"`per_input` of metric {as_written(name)} returned {list(out)}, "
                f"not the statistics {names} it returned before."
            )
        shape = sums.shape[:-1]
        try:
            stats = [
                np.broadcast_to(np.asarray(out[k], dtype=float), shape) for k in names
            ]
        except (TypeError, ValueError):
            raise _SumsError(
                f"`per_input` of metric {as_written(name)} must return numbers of "
                f"the shape of its sums, {shape} here (or scalars)."
            ) from None
        return np.stack([*stats, np.ones(shape)], axis=-1)

    return per_input, names


def _probe(fn: Callable, probe: np.ndarray, role: str, name: str) -> np.ndarray:
    """``fn(probe)``: what is wrong with ``fn`` fails at once, naming ``role``."""
    try:
        return fn(probe)
    except _SumsError as e:
        raise ValueError(str(e)) from None
    except Exception as e:
        raise TypeError(
            f"`{role}` of metric {as_written(name)} failed on a block of sums "
            f"(arrays of shape {probe.shape[:-1]}): {type(e).__name__}: {e}. It "
            "must take arrays: write it with array operations on the sums."
        ) from e


def _probe_sums(m: int) -> np.ndarray:
    """A small block of positive sums, ``(2, 3, m + 1)``, the count the largest."""
    probe = np.arange(1.0, 1.0 + 6 * (m + 1)).reshape(2, 3, m + 1)
    probe[..., -1] += probe.max()
    return probe


def from_sums(
    name: str,
    columns,
    finalize: Callable[[Mapping[str, np.ndarray]], np.ndarray],
    *,
    count: str = "n",
    per_input: Callable[[Mapping[str, np.ndarray]], Mapping] | None = None,
    scale_invariant: bool = False,
) -> Metric:
    """A :class:`Metric` from a function of named column sums.

    The fast form of a callable metric that reads only column totals: write
    ``lambda d: d.correct.mean()`` as ``from_sums("share", "correct",
    lambda s: s["correct"] / s["n"])``. Each row contributes its value in
    every column of ``columns`` and a 1 (the row count); ``finalize`` gets
    them summed over a resample's rows, as a mapping from each column's name
    (and ``count``) to an array with one entry per replicate (and group), and
    returns the metric for each: one call per block of replicates, never one
    per resample. The result is an ordinary Metric: every strategy, interval
    (BCa's jackknife is O(N)), comparison and the Dask path take it, and it
    gives the numbers of the same Metric written by hand, bit for bit.

    With ``weight="input"`` (the default) each input's sums are divided by
    its number of runs before they are summed over inputs, as for every
    Metric: ``s[count]`` is then the number of inputs, and a ratio of sums is
    a ratio of per-input means. A column may be the value column itself.

    Parameters
    ----------
    name : str
        Name shown in results.
    columns : str or list of str
        The numeric (or boolean) columns to sum; may include the value column.
    finalize : callable
        ``finalize(sums) -> array``: ``sums[c]`` is the sum of column ``c``
        and ``sums[count]`` the row count, arrays of one shape; it must
        return an array of that shape, with array operations (``np.sqrt``,
        not ``math.sqrt``). Division by zero gives NaN or inf silently (the
        result then warns of undefined resamples).
    count : str
        The key of the row count in ``sums``; default ``"n"`` (must not be
        in ``columns``).
    per_input : callable, optional
        For a metric of each input's runs taken together (pass^k: all runs
        correct): ``per_input(sums) -> {statistic: array}`` maps the sums of
        each input's own runs (``sums[c]``, ``sums[count]`` its runs) to that
        input's statistics, which are then summed over the drawn inputs and
        passed to ``finalize`` by name, with ``sums[count]`` the number of
        inputs. Applied once to the per-input sums, never per resample. As
        for every per-input Metric: ``strategy="cluster"`` only, and
        ``weight`` has nothing to weight (each input counts once).
    scale_invariant : bool
        Declare that ``finalize`` gives the same value when every sum,
        the count included, is multiplied by one constant (true of ratios
        such as a mean or a share; false of a total or a sum of squares
        minus a square). Lets the engine keep whole-number sums when every
        input has the same number of runs; default False, always correct.

    Returns
    -------
    Metric
        For ``metric=``.

    Raises
    ------
    TypeError, ValueError
        At once, naming the argument: ``columns`` empty, repeated or not
        names, ``count`` in ``columns``, ``finalize`` or ``per_input`` not
        callable, reading a sum not listed, or returning another shape than
        its sums (both are tried on a small block of sums). At the call: a column missing from the table
        or not numeric, or holding a missing or infinite value.

    See Also
    --------
    Metric : the blueprint, for per-row statistics that are not column values.

    Examples
    --------
    The share of correct runs, as the callable ``lambda d: d.correct.mean()``
    computes it, resampled as sums:

    >>> import evalci
    >>> share = evalci.metrics.from_sums(
    ...     "share_correct", "correct", lambda s: s["correct"] / s["n"],
    ...     scale_invariant=True)
    >>> df = evalci.load_example()
    >>> one = df[df.system == df.system.iloc[0]]
    >>> r = evalci.cluster_ci(one, "correct", cluster="input_id", metric=share,
    ...                       n_resamples=2000, rng=0)
    >>> m = evalci.cluster_ci(one, "correct", cluster="input_id",
    ...                       n_resamples=2000, rng=0)
    >>> bool(r.low == m.low and r.high == m.high), r.kernel
    (True, 'patterns')

    pass^k at k = every run of an input (all its runs correct), the callable
    ``lambda d: d.groupby("input_id").correct.min().mean()``, as sums:

    >>> all_runs = evalci.metrics.from_sums(
    ...     "all_runs", "correct", lambda s: s["all"] / s["n"],
    ...     per_input=lambda s: {"all": s["correct"] == s["n"]})
    >>> r = evalci.cluster_ci(one, "correct", cluster="input_id",
    ...                       metric=all_runs, n_resamples=2000, rng=0)
    >>> round(r.estimate, 4)
    0.4949
    """
    if not callable(finalize):
        raise TypeError(
            f"`finalize` must be a callable of the named sums; got "
            f"{type(finalize).__name__}."
        )
    if not isinstance(name, str) or not name:
        raise ValueError(f"`name` must be a non-empty string; got {as_written(name)}.")
    cols = _check_columns(columns, count)
    if not isinstance(scale_invariant, bool):
        raise TypeError("`scale_invariant` must be True or False.")
    hook, names = None, cols
    if per_input is not None:
        if not callable(per_input):
            raise TypeError(
                f"`per_input` must be a callable or None; got {type(per_input).__name__}."
            )
        hook, out = _per_input(name, cols, count, per_input)
        _probe(hook, _probe_sums(len(cols)), "per_input", name)
        names = tuple(out)
    fin = _finalize(name, names, count, finalize, "per_input" if hook else "columns")
    _probe(fin, _probe_sums(len(names)), "finalize", name)
    return SumsMetric(
        name,
        statistics=_statistics(name, cols),
        finalize=fin,
        columns=cols,
        scale_invariant=scale_invariant,
        per_input=hook,
        sums=cols,
    )
