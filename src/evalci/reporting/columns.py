"""Results as the columns of an existing leaderboard table:
``<name>_avg``, ``<name>_std_err`` (the shape Evalchemy and similar
harnesses write) and the interval's ends."""

from __future__ import annotations

import pandas as pd

from evalci._base.text import as_written

__all__ = ["score_columns"]

_NEEDED = ("estimate", "standard_error", "low", "high")


def score_columns(result, name: str) -> pd.DataFrame:
    """A result as ``<name>_avg``, ``<name>_std_err``, ``<name>_ci_low``,
    ``<name>_ci_high`` columns, one row per group.

    Parameters
    ----------
    result
        Any evalci result with ``to_frame()`` holding ``estimate``,
        ``standard_error``, ``low`` and ``high`` (``cluster_ci``,
        ``bootstrap``, ``analytic_ci``, ``facet_ci``, ...).
    name : str
        The metric's name in the table, e.g. ``"MATH500"`` or ``"acc"``.

    Returns
    -------
    pandas.DataFrame
        Indexed by the result's groups (e.g. the system; one unnamed row
        without groups), ready to ``join`` onto a leaderboard frame.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> r = evalci.cluster_ci(df, "correct", "input_id", by="system",
    ...                       n_resamples=2000, rng=0)
    >>> evalci.score_columns(r, "gpqa").round(4).columns.tolist()
    ['gpqa_avg', 'gpqa_std_err', 'gpqa_ci_low', 'gpqa_ci_high']
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"`name` must be the metric's name (str), not {as_written(name)}.")
    if not hasattr(result, "to_frame"):
        raise TypeError(f"`result` must be an evalci result with to_frame(), not "
                        f"{type(result).__name__}.")
    frame = result.to_frame()
    missing = [c for c in _NEEDED if c not in frame.columns]
    if missing:
        raise ValueError(f"`result`: its frame has no {missing[0]!r} column; give a "
                         "result with an estimate, a standard error and an interval.")
    groups = getattr(result, "groups", None)
    keys = [c for c in (groups.names if groups is not None else []) if c in frame.columns]
    if keys:  # the groups are columns of the frame (BootstrapResult): index by them
        frame = frame.set_index(keys)
    out = frame[list(_NEEDED)].rename(columns={
        "estimate": f"{name}_avg", "standard_error": f"{name}_std_err",
        "low": f"{name}_ci_low", "high": f"{name}_ci_high"})
    return out
