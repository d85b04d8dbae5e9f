"""Entry points of the facets family: :func:`g_study`, :func:`facet_ci` and
:func:`facet_compare` on a tidy table (the ``*_of_cells`` forms take a table
already reduced to its cells, as the Dask door does)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci._base.lazy import stats
from evalci._base.streams import seed_sequence
from evalci._base.text import as_written
from evalci._base.validate import check_level, check_n_resamples, check_option
from evalci._base.warnings import DegenerateDataWarning, warn
from evalci.engine.intervals import interval
from evalci.methods.facets.cells import Cells, cells_of, differences
from evalci.methods.facets.components import fit_group
from evalci.methods.facets.multiway import multiway_se
from evalci.methods.facets.pigeonhole import pigeonhole_replicates
from evalci.methods.facets.result import FacetResult, GStudy, _one

__all__ = [
    "METHODS",
    "facet_ci",
    "facet_ci_of_cells",
    "facet_compare",
    "facet_compare_of_cells",
    "g_study",
    "g_study_of_cells",
]

METHODS = ("components", "multiway", "pigeonhole")
_METHOD_HELP = (
    "'components' (t interval from the variance components, Satterthwaite's "
    "df: the default), 'multiway' (Cameron-Gelbach-Miller SE) or "
    "'pigeonhole' (bootstrap over inputs and facet levels; conservative)"
)


def _components_frame(cells: Cells, fits, level: float) -> pd.DataFrame:
    parts = []
    for g, fit in enumerate(fits):
        low, high = fit.intervals(level)
        total = fit.variance.sum()
        part = pd.DataFrame({
            "variance": fit.variance, "low": low, "high": high,
            "share": fit.variance / total if total > 0 else np.nan,
            "share_of_mean": fit.weight * fit.variance / fit.mean_variance
            if fit.mean_variance > 0 else np.nan,
            "raw": fit.raw,
        }, index=pd.Index(fit.names, name="component"))
        if cells.groups is not None:
            names = [n or "group" for n in cells.groups.names]
            part = pd.concat({cells.groups[g]: part}, names=names)
        parts.append(part)
    return pd.concat(parts) if len(parts) > 1 else parts[0]


def _g_study(cells: Cells, level: float):
    fits = [fit_group(cells, g) for g in range(cells.n.shape[0])]
    groups = cells.groups
    study = GStudy(
        components=_components_frame(cells, fits, level),
        estimate=_one(np.array([f.estimate for f in fits]), groups),
        mean_variance=_one(np.array([f.mean_variance for f in fits]), groups),
        df=_one(np.array([f.df for f in fits]), groups),
        estimator=fits[0].estimator if groups is None
        else pd.Series([f.estimator for f in fits], index=groups),
        dims=cells.dims,
        levels={d: len(u) for d, u in zip(cells.dims, cells.levels, strict=True)},
        n_cells=int(np.prod(cells.shape)),
        n_empty_cells=int((~cells.present).all(axis=0).sum()),
        n_runs=int(cells.n.sum()),
        confidence_level=level,
        groups=groups,
    )
    return study, fits


def g_study_of_cells(cells: Cells, *, confidence_level: float = 0.95) -> GStudy:
    """:func:`g_study` of a table already reduced to its cells."""
    return _g_study(cells, check_level(confidence_level))[0]


def g_study(data, value, cluster, facets, *, by=None, run=None,
            confidence_level: float = 0.95) -> GStudy:
    """Variance components per facet: how much of a score's variance comes
    from the inputs, each facet, their interactions and the runs (a G-study).

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per run: the score, the input, one column per
        facet. Never modified.
    value : str
        The score's column (0/1 or any number).
    cluster : str
        The input column.
    facets : str or list of str
        Random facets, crossed with the inputs and each other: columns whose
        levels are a sample of what could have been used (templates, judges,
        inference engines, seeds shared across inputs). Rows of one
        (input, facet levels) cell are its runs, nested in the cell.
    by : str or list of str, optional
        Fixed facets (e.g. the system): one analysis per group.
    run : str, optional
        The run column, checked to be unique within a cell (else pooled).
    confidence_level : float
        Level of the components' intervals.

    Returns
    -------
    GStudy
        ``components`` (variance, interval, shares per component),
        ``estimator`` (``"anova"`` when every cell holds the same number of
        runs, else ``"reml"``), the counts of cells and empty cells.

    See Also
    --------
    facet_ci : the interval these components imply.
    plan_facets : the cheapest design for a target width (a D-study).

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example("metaprompting")
    >>> g = evalci.g_study(df, "correct", "input_id", "template")
    >>> g.estimator, g.levels
    ('anova', {'input_id': 3600, 'template': 7})
    """
    cells = cells_of(data, value, cluster, facets, by, run)
    return g_study_of_cells(cells, confidence_level=confidence_level)


def _check_method(method, n_resamples):
    check_option(method, "method", METHODS, describe=f"one of {_METHOD_HELP}")
    if method == "pigeonhole":
        return check_n_resamples(n_resamples, minimum=100)
    return 0


def _t_interval(est, se, df, level):
    half = stats.t.ppf(0.5 + level / 2, df) * se
    return est - half, est + half


def facet_ci_of_cells(cells: Cells, *, method="components", confidence_level=0.95,
                      n_resamples=10_000, rng=None) -> FacetResult:
    """:func:`facet_ci` of a table already reduced to its cells."""
    level = check_level(confidence_level)
    n_resamples = _check_method(method, n_resamples)
    study, fits = _g_study(cells, level)
    groups = cells.groups
    est = np.array([f.estimate for f in fits])
    ways = [multiway_se(cells.n[g], cells.s[g]) for g in range(len(fits))]
    naive = np.sqrt([w.one_way for w in ways])
    reps, adjusted = None, False
    if method == "components":
        se = np.sqrt([f.mean_variance for f in fits])
        df = np.array([f.df for f in fits])
        low, high = _t_interval(est, se, df, level)
    elif method == "multiway":
        se = np.sqrt([w.variance for w in ways])
        df = np.array([w.df for w in ways])
        low, high = _t_interval(est, se, df, level)
        adjusted = _one(np.array([w.adjusted for w in ways]), groups)
    else:
        reps = pigeonhole_replicates(seed_sequence(rng), cells.present, cells.means(),
                                     n_resamples)
        if np.isnan(reps).any():
            raise ValueError(
                "`method='pigeonhole'`: some resamples drew none of a group's cells "
                "(groups holding few of the inputs share the draws of all of them); "
                "analyse those groups one at a time, or use method='components'."
            )
        low, high, _ = interval(reps, est, "percentile", level)
        se, df = reps.std(axis=1, ddof=1), np.full(len(fits), np.inf)
    if not np.all(np.asarray(se) > 0):
        warn("a score has no spread over inputs, facets or runs (every value the "
             "same, e.g. all 1 or all 0): its interval has zero width and says "
             "nothing about uncertainty. For 0/N or N/N outcomes use "
             "evalci.analytic_ci(..., method='clopper-pearson').", DegenerateDataWarning)
    if np.array_equal(cells.q, cells.s):  # every score 0 or 1: a share stays in [0, 1]
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    return FacetResult(
        estimate=_one(est, groups), low=_one(np.asarray(low), groups),
        high=_one(np.asarray(high), groups), standard_error=_one(np.asarray(se), groups),
        df=_one(df, groups), naive_standard_error=_one(naive, groups), method=method,
        confidence_level=level, facets=tuple(cells.dims[1:]), fixed=tuple(cells.by),
        cluster=cells.dims[0], g_study=study,
        bootstrap_distribution=None if reps is None else (reps[0] if groups is None else reps),
        n_resamples=n_resamples, adjusted=adjusted, groups=groups,
    )


def facet_ci(data, value, cluster, facets, *, by=None, run=None, method="components",
             confidence_level=0.95, n_resamples=10_000, rng=None) -> FacetResult:
    """Confidence interval for a score that generalises over random facets:
    a new input, a new prompt template, a new judge next time.

    Parameters
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        Tidy table, one row per run (see :func:`g_study`). A Dask DataFrame
        is reduced to its cells on the workers; the same numbers.
    value, cluster, facets, by, run
        As in :func:`g_study`.
    method : {'components', 'multiway', 'pigeonhole'}
        ``"components"`` (default): the estimate +- Student's t times the
        standard error the variance components imply (Satterthwaite's
        degrees of freedom), calibrated in the coverage studies.
        ``"multiway"``: the cluster-robust multiway SE (Cameron, Gelbach and
        Miller 2011), model-free, t with the fewest levels - 1 df.
        ``"pigeonhole"``: percentile interval of the pigeonhole bootstrap
        (inputs and facet levels resampled independently; McCullagh 2000,
        Owen 2007): with many levels it counts interactions and run noise
        more than once and over-covers; with few levels of a facet (under
        ten) it under-covers a little (see the docs' coverage table).
        With 0/1 scores the interval is clipped to [0, 1].
    confidence_level : float
        In (0, 1); default 0.95.
    n_resamples : int
        ``"pigeonhole"`` only: replicates (default 10,000).
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``"pigeonhole"`` only: the seed, which fixes the result whatever the
        row order, on pandas, xarray or Dask.

    Returns
    -------
    FacetResult
        ``estimate``, ``low``, ``high``, ``standard_error``, ``df``,
        ``naive_standard_error`` (inputs only), ``g_study``.

    See Also
    --------
    facet_compare : paired gaps between systems under the same facets.
    cluster_ci : inputs only (facets fixed).

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example("metaprompting")
    >>> r = evalci.facet_ci(df, "correct", "input_id", "template")
    >>> round(r.estimate, 4), round(r.standard_error / r.naive_standard_error, 2)
    (0.7797, 1.74)
    """
    cells = cells_of(data, value, cluster, facets, by, run)
    return facet_ci_of_cells(cells, method=method, confidence_level=confidence_level,
                             n_resamples=n_resamples, rng=rng)


def _pairs(groups: pd.Index, system, baseline) -> list:
    if len(groups) < 2:
        raise ValueError(f"`system` column {as_written(system)} has one system; a "
                         "gap needs two.")
    if baseline is None:
        base = 0
    else:
        where = [i for i, g in enumerate(groups) if g == baseline]
        if not where:
            raise ValueError(
                f"`baseline` {as_written(baseline)} is not a system; systems: "
                f"{', '.join(map(as_written, list(groups)[:10]))}.")
        base = where[0]
    return [(g, base) for g in range(len(groups)) if g != base]


def facet_compare_of_cells(cells: Cells, *, baseline=None, **options) -> FacetResult:
    """:func:`facet_compare` of a table already reduced to its cells (``by`` the system)."""
    pairs = _pairs(cells.groups, cells.by[0], baseline)
    for a, b in pairs:
        apart = int((cells.present[a] != cells.present[b]).sum())
        if apart:
            raise ValueError(
                f"systems {as_written(cells.groups[a])} and {as_written(cells.groups[b])} "
                f"differ in {apart} (input, facet levels) cells: one has runs there, the "
                "other none. A paired gap needs the same cells; keep the cells both "
                "hold (e.g. an inner merge on the keys) or fill the missing runs."
            )
    return facet_ci_of_cells(differences(cells, pairs), **options)


def facet_compare(data, value, cluster, facets, system="system", *, baseline=None,
                  run=None, method="components", confidence_level=0.95,
                  n_resamples=10_000, rng=None) -> FacetResult:
    """Paired gaps between systems under the same random facets.

    Each gap is taken cell by cell (the same input under the same template,
    judge, ...), on the cells both systems hold, then analysed as a score
    of its own: its components, its interval (the same methods as
    :func:`facet_ci`; the pigeonhole draws are shared by all gaps).

    Parameters
    ----------
    data, value, cluster, facets, run, method, confidence_level, n_resamples, rng
        As in :func:`facet_ci`.
    system : str
        The system column (default ``"system"``).
    baseline : optional
        The system every other is compared with (default: the first in
        sorted order). Gaps are ``system - baseline``.

    Returns
    -------
    FacetResult
        One row per gap, indexed ``"<system> - <baseline>"``.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()  # GPQA: 2 systems, 5 runs, runs as a facet
    >>> gap = evalci.facet_compare(df, "correct", "input_id", "run")
    >>> gap.estimate.round(4).to_dict()
    {'openai/gpt-5.4-mini-2026-03-17 - openai/gpt-5-nano-2025-08-07': -0.0586}
    """
    cells = cells_of(data, value, cluster, facets, system, run)
    return facet_compare_of_cells(cells, baseline=baseline, method=method,
                                  confidence_level=confidence_level,
                                  n_resamples=n_resamples, rng=rng)
