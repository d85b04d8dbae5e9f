"""The width table: predicted (and observed) interval width per k' runs per input.

Seed 000's table "Predicted factor / Observed factor": the predicted factor
is the closed form of :mod:`evalci.methods.planning.widths` at the data's estimated
rho; the observed one, by subsampling runs, comes from
:mod:`evalci.methods.planning.observed_widths`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_n_resamples
from evalci.methods.planning.observed_widths import _observed_widths
from evalci.methods.planning.widths import _factor, _width, _z_two_sided
from evalci.methods.variance import (
    cell_sums,
    group_frame,
    row_outcomes,
    source_icc,
    source_iv,
    table_codes,
)

__all__ = ["width_table"]


def width_table(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    by=None,
    ks=None,
    observed: bool = False,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    rng=None,
    successes: str | None = None,
    trials: str | None = None,
) -> pd.DataFrame:
    """Predicted (and observed) interval width for k' = 1, 2, ... runs per input.

    Seed 000's table "Predicted factor / Observed factor": the predicted
    factor is :func:`width_factor` at the data's estimated rho; with
    ``observed=True`` each input's runs are put in a seeded random order, the
    first k' are kept, and the cluster-bootstrap percentile interval of that
    subsample is compared with the one at k' = 1.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per run (``value``) or a counts table (``successes``/``trials``).
    value : str, optional
        Outcome column.
    cluster : str or list of str
        Column(s) identifying the input.
    by : str or list of str, optional
        One table per group (e.g. ``by="system"``).
    ks : sequence of int, optional
        Values of k' (1 is always added). Default: 1 .. min(k, 10), k the
        smallest number of runs of any input in the best-covered group.
        Predicted columns extend to any k'; observed ones are NaN where a
        group has an input with fewer than k' runs.
    observed : bool
        Also compute observed widths by subsampling runs (costs one cluster
        bootstrap per k').
    n_resamples : int
        Bootstrap replicates per k' (``observed=True``).
    confidence_level : float
        In (0, 1).
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Seed for the run order and the bootstrap. The same bootstrap seed is
        used at every k', so the ratios share their draws of inputs (common
        random numbers make the observed factors less noisy).
    successes, trials : str, optional
        Counts-table columns (0/1 outcomes), as in :func:`icc`.

    Returns
    -------
    pandas.DataFrame
        One row per (group, k'): group columns, ``k``, ``rho``,
        ``predicted_factor``, ``predicted_width`` (:func:`predict_width` at
        the group's N and components) and, with ``observed=True``,
        ``observed_width`` and ``observed_factor`` (width at k' over width at
        k' = 1). ``df.pivot(index=..., columns="k", values=...)`` gives seed
        000's wide layout.

    Examples
    --------
    >>> from evalci import simulate
    >>> import evalci
    >>> df = simulate.confusion_model(400, 5, rng=2)
    >>> t = evalci.width_table(df, "correct", "input_id", ks=[1, 2, 3, 5],
    ...                          observed=True, n_resamples=1000, rng=0)
    >>> t[["k", "predicted_factor", "observed_factor"]].round(2)
       k  predicted_factor  observed_factor
    0  1              1.00             1.00
    1  2              0.71             0.78
    2  3              0.59             0.63
    3  5              0.47             0.50

    (One data set of 400 inputs: the observed factors scatter by a few
    hundredths around the prediction; seed 000 averaged 2,000 of them.)
    """
    src = source_iv(data, value, cluster, by, None, successes, trials)
    check_n_resamples(n_resamples)
    z = _z_two_sided(confidence_level)
    comp = source_icc(data, src)
    codes = table_codes(data, src)
    k_min = _fewest_runs(codes, row_outcomes(data, src)[0])
    present = np.flatnonzero(np.isfinite(k_min))
    ks = _ks_iv(ks, k_min[present])
    table = _predicted_table(comp, codes, present, src.by, ks, z)
    if not observed:
        return table
    widths = _observed_widths(
        data, src, codes, ks, k_min, present, n_resamples, confidence_level, rng
    )
    table["observed_width"] = widths.reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        table["observed_factor"] = (widths / widths[:, :1]).reshape(-1)
    return table


def _fewest_runs(codes, n):
    """Per by-group, the fewest runs of any of its inputs (inf for absent groups)."""
    nc = codes.nc
    ucell, (k_cell,) = cell_sums(codes.by * nc + codes.cluster, n)
    k_min = np.full(codes.nb, np.inf)
    np.minimum.at(k_min, ucell // nc, k_cell)
    return k_min


def _ks_iv(ks, k_min):
    """The k' of the table: 1 and ``ks`` (default 1 .. min(max(k_min), 10)), sorted."""
    if ks is None:
        ks = np.arange(1, int(min(k_min.max(), 10)) + 1)
    else:
        try:
            ks = np.asarray(ks)
            ok = (
                ks.ndim == 1
                and len(ks) > 0
                and ks.dtype.kind in "iuf"
                and bool(np.all(np.isfinite(ks)))
                and np.all(ks == np.round(ks))
                and np.all(ks >= 1)
            )
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(
                f"`ks` must be a sequence of integers >= 1; got {as_written(ks)}."
            )
    return np.unique(np.r_[1, ks.astype(np.int64)])


def _predicted_table(comp, codes, present, by_cols, ks, z):
    """One row per (present group, k'): group columns, k, rho, predicted factor, width."""
    group = group_frame(codes.by_index, present, by_cols)
    # comp rows are in by-code order, one per present group
    rho = comp["rho"].to_numpy()
    sb, sw = comp["sigma2_between"].to_numpy(), comp["sigma2_within"].to_numpy()
    nn = comp["n_inputs"].to_numpy()
    G, K = len(present), len(ks)
    table = pd.concat(
        [
            group.loc[np.repeat(np.arange(G), K)].reset_index(drop=True),
            pd.DataFrame({"k": np.tile(ks, G)}),
        ],
        axis=1,
    )
    rr = np.repeat(rho, K)
    k = table["k"].to_numpy()
    with np.errstate(invalid="ignore"):
        table["rho"] = rr
        table["predicted_factor"] = _factor(rr, k)
        table["predicted_width"] = _width(
            z, np.repeat(sb, K), np.repeat(sw, K), np.repeat(nn, K), k
        )
    return table
