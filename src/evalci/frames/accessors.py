"""The ``.evalci`` accessor: stateless, every method one line forwarding to a function.

Validation lives in the functions (STYLE.md, 2): the accessor only stores
the object it was created on.
"""

from __future__ import annotations

import pandas as pd
import xarray as xr

from evalci.engine import bootstrap as core
from evalci.frames import dataarray as _xr
from evalci.frames.deferred import (
    dask_dataframe as _dd,  # Dask is registered once imported
)
from evalci.methods import analytic as _analytic
from evalci.methods import facets as _facets
from evalci.methods import planning, variance
from evalci.methods.bayes import gap as _bayes_compare
from evalci.methods.bayes import interval as _bayes
from evalci.methods.compare import paired as _compare
from evalci.methods.ranks import ranking as _ranks
from evalci.reporting import flaky as _flaky
from evalci.reporting import report as _report


@pd.api.extensions.register_dataframe_accessor("evalci")
class EvalciDataFrameAccessor:
    """``df.evalci``: evalci's functions on a tidy DataFrame.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> r = df.evalci.cluster_ci("correct", cluster="input_id", by="system",
    ...                          n_resamples=1000, rng=0)
    >>> list(r.estimate.round(3))
    [0.676, 0.617]
    """

    def __init__(self, obj: pd.DataFrame):
        self._obj = obj

    def cluster_ci(self, value=None, cluster=None, *, facets=None, **kwargs):
        """Cluster-bootstrap CI; see :func:`evalci.cluster_ci`. With
        ``facets=``, the interval over random facets: :func:`evalci.facet_ci`."""
        if facets is not None:
            return _facets.facet_ci(self._obj, value, cluster, facets, **kwargs)
        return core.cluster_ci(self._obj, value, cluster, **kwargs)

    def facet_ci(self, value, cluster, facets, **kwargs):
        """CI over random facets; see :func:`evalci.facet_ci`."""
        return _facets.facet_ci(self._obj, value, cluster, facets, **kwargs)

    def facet_compare(self, value, cluster, facets, system="system", **kwargs):
        """Paired gaps under the same facets; see :func:`evalci.facet_compare`."""
        return _facets.facet_compare(self._obj, value, cluster, facets, system, **kwargs)

    def g_study(self, value, cluster, facets, **kwargs):
        """Variance components per facet; see :func:`evalci.g_study`."""
        return _facets.g_study(self._obj, value, cluster, facets, **kwargs)

    def bootstrap(self, value, cluster=None, **kwargs):
        """Bootstrap CI with any strategy; see :func:`evalci.bootstrap`."""
        return core.bootstrap(self._obj, value, cluster, **kwargs)

    def compare(self, value=None, cluster=None, system="system", **kwargs):
        """Paired gaps between systems; see :func:`evalci.compare`."""
        return _compare.compare(self._obj, value, cluster, system, **kwargs)

    def leaderboard(self, value=None, cluster=None, system="system", **kwargs):
        """Rank intervals and tie groups of systems; see :func:`evalci.leaderboard`."""
        return _ranks.leaderboard(self._obj, value, cluster, system, **kwargs)

    def analytic_ci(self, value, cluster=None, **kwargs):
        """Closed-form CI (CLT, Wilson, Clopper-Pearson, Jeffreys, Wald, FCE kappa); see :func:`evalci.analytic_ci`."""
        return _analytic.analytic_ci(self._obj, value, cluster, **kwargs)

    def bayes_ci(self, value, cluster=None, **kwargs):
        """Bayesian credible interval for small N; see :func:`evalci.bayes_ci`."""
        return _bayes.bayes_ci(self._obj, value, cluster, **kwargs)

    def bayes_compare(self, value, cluster, system="system", **kwargs):
        """Bayesian paired gap and P(a > b); see :func:`evalci.bayes_compare`."""
        return _bayes_compare.bayes_compare(self._obj, value, cluster, system, **kwargs)

    def mcnemar(self, value, cluster, system, a, b, **kwargs):
        """McNemar's paired test of two systems at k=1; see :func:`evalci.mcnemar`."""
        return _analytic.mcnemar(self._obj, value, cluster, system, a, b, **kwargs)

    def flaky(self, value=None, cluster=None, **kwargs):
        """Per-input pass rates, flaky inputs first; see :func:`evalci.flaky`."""
        return _flaky.flaky(self._obj, value, cluster, **kwargs)

    def report(self, value=None, cluster=None, system="system", **kwargs):
        """Seed 002's comparison report; see :func:`evalci.report`."""
        return _report.report(self._obj, value, cluster, system, **kwargs)

    def icc(self, value=None, cluster=None, **kwargs):
        """Variance components and rho; see :func:`evalci.icc`."""
        return variance.icc(self._obj, value, cluster, **kwargs)

    def width_table(self, value=None, cluster=None, **kwargs):
        """Predicted/observed width by runs per input; see :func:`evalci.width_table`."""
        return planning.width_table(self._obj, value, cluster, **kwargs)

    def plan(self, value=None, cluster=None, **kwargs):
        """Choose N and k from a pilot; see :func:`evalci.plan_from_data`."""
        return planning.plan_from_data(self._obj, value, cluster, **kwargs)

    def sample_size(self, value=None, cluster=None, **kwargs):
        """Inputs needed to detect an effect; see :func:`evalci.sample_size_from_data`."""
        return planning.sample_size_from_data(self._obj, value, cluster, **kwargs)

    def mde(self, value=None, cluster=None, **kwargs):
        """Minimum detectable effect; see :func:`evalci.mde_from_data`."""
        return planning.mde_from_data(self._obj, value, cluster, **kwargs)

    def to_xarray(self, value, **kwargs):
        """The table as a DataArray (input, run, system); see :func:`evalci.frames.dataarray.to_xarray`."""
        return _xr.to_xarray(self._obj, value, **kwargs)


@xr.register_dataarray_accessor("evalci")
class EvalciDataArrayAccessor:
    """``da.evalci``: evalci's functions on a DataArray over (input, run, ...).

    Examples
    --------
    >>> import evalci
    >>> da = evalci.load_example().evalci.to_xarray("correct")
    >>> ds = da.evalci.cluster_ci(n_resamples=1000, rng=0)
    >>> ds.estimate.round(3).values.tolist()
    [0.676, 0.617]
    """

    def __init__(self, obj: xr.DataArray):
        self._obj = obj

    def cluster_ci(self, **kwargs):
        """Cluster-bootstrap CI; see :func:`evalci.frames.dataarray.cluster_ci`."""
        return _xr.cluster_ci(self._obj, **kwargs)

    def bootstrap(self, **kwargs):
        """Bootstrap CI with any strategy; see :func:`evalci.frames.dataarray.bootstrap`."""
        return _xr.bootstrap(self._obj, **kwargs)

    def compare(self, **kwargs):
        """Paired gaps along the system dim; see :func:`evalci.frames.dataarray.compare`."""
        return _xr.compare(self._obj, **kwargs)

    def _long(self):
        return _xr.to_frame(self._obj), self._obj.name or "value"

    def icc(self, *, input_dim="input", **kwargs):
        """Variance components and rho; see :func:`evalci.icc`."""
        return variance.icc(*self._long(), input_dim, **kwargs)

    def width_table(self, *, input_dim="input", **kwargs):
        """Predicted/observed width by runs; see :func:`evalci.width_table`."""
        return planning.width_table(*self._long(), input_dim, **kwargs)

    def plan(self, *, input_dim="input", **kwargs):
        """Choose N and k from a pilot; see :func:`evalci.plan_from_data`."""
        return planning.plan_from_data(*self._long(), input_dim, **kwargs)

    def sample_size(self, *, input_dim="input", **kwargs):
        """Inputs needed; see :func:`evalci.sample_size_from_data`."""
        return planning.sample_size_from_data(*self._long(), input_dim, **kwargs)

    def mde(self, *, input_dim="input", **kwargs):
        """Minimum detectable effect; see :func:`evalci.mde_from_data`."""
        return planning.mde_from_data(*self._long(), input_dim, **kwargs)

    def to_frame(self, **kwargs):
        """Back to a tidy table; see :func:`evalci.frames.dataarray.to_frame`."""
        return _xr.to_frame(self._obj, **kwargs)

    def facet_ci(self, *, facets, input_dim="input", **kwargs):
        """CI over random facet dims; see :func:`evalci.facet_ci` (a missing
        value, NaN, is a run the cell lacks)."""
        return _facets.facet_ci(*self._long(), input_dim, facets, **kwargs)

    def facet_compare(self, *, facets, input_dim="input", system="system", **kwargs):
        """Paired gaps along the system dim; see :func:`evalci.facet_compare`."""
        return _facets.facet_compare(*self._long(), input_dim, facets, system, **kwargs)

    def g_study(self, *, facets, input_dim="input", **kwargs):
        """Variance components per facet dim; see :func:`evalci.g_study`."""
        return _facets.g_study(*self._long(), input_dim, facets, **kwargs)


if _dd is not None:
    from evalci.frames import dask_bayes as _dask_bayes
    from evalci.frames import dask_bootstrap as _dask_bootstrap
    from evalci.frames import dask_facets as _dask_facets
    from evalci.frames import dask_frame as _dask
    from evalci.frames import dask_planning as _dask_planning
    from evalci.frames import dask_rows as _dask_rows

    @_dd.extensions.register_dataframe_accessor("evalci")
    class EvalciDaskDataFrameAccessor:
        """``ddf.evalci`` on a Dask DataFrame: the pandas accessor's methods.

        Arguments that need no data are checked on the frame's metadata
        first, with the pandas path's messages; then one Dask reduction
        compresses the table exactly to its distinct (input, groups, strata,
        value) rows with their multiplicities, and the pandas function runs on
        that small table (see :mod:`evalci.frames.dask_frame`):

        * ``cluster_ci``, ``bootstrap``, ``compare``: the engine works on the
          multiplicities (``strategy="cluster"``, Metric metrics) and gives the
          pandas numbers for the same seed, at any size.
        * ``icc``, ``width_table`` (predicted widths), ``plan``,
          ``sample_size``, ``mde``: 0/1 outcomes become a counts table
          (successes, trials), at any size; scores, and runs matched by
          number for ``pairs``/``pair``, need the rows (below).
        * ``analytic_ci``, ``mcnemar``, ``flaky``, ``report``: the rows are
          rebuilt exactly from the multiplicities, up to
          ``evalci.frames.dask_frame.MAX_EXPANDED_ROWS`` rows (k=1 tables are as small as
          their number of inputs).
        * ``to_xarray``: loads the columns it needs (the DataArray holds every
          value).

        Computes on call; warnings point at the caller's line.

        Parameters
        ----------
        obj : dask.dataframe.DataFrame
            The table, one row per (input, run[, system]); the accessor holds
            it and nothing else.
        """

        def __init__(self, obj):
            self._obj = obj

        def cluster_ci(self, value=None, cluster=None, *, facets=None, **kwargs):
            """Cluster-bootstrap CI; see :func:`evalci.cluster_ci` (with
            ``facets=``, :func:`evalci.facet_ci`)."""
            if facets is not None:
                return _dask_facets.facet_ci(self._obj, value, cluster, facets, **kwargs)
            return _dask_bootstrap.cluster_ci(self._obj, value, cluster, **kwargs)

        def facet_ci(self, value, cluster, facets, **kwargs):
            """CI over random facets; see :func:`evalci.facet_ci`."""
            return _dask_facets.facet_ci(self._obj, value, cluster, facets, **kwargs)

        def facet_compare(self, value, cluster, facets, system="system", **kwargs):
            """Paired gaps under the same facets; see :func:`evalci.facet_compare`."""
            return _dask_facets.facet_compare(self._obj, value, cluster, facets, system,
                                              **kwargs)

        def g_study(self, value, cluster, facets, **kwargs):
            """Variance components per facet; see :func:`evalci.g_study`."""
            return _dask_facets.g_study(self._obj, value, cluster, facets, **kwargs)

        def bootstrap(self, value=None, cluster=None, **kwargs):
            """Bootstrap CI (cluster strategy); see :func:`evalci.bootstrap`."""
            return _dask_bootstrap.bootstrap(self._obj, value, cluster, **kwargs)

        def compare(self, value=None, cluster=None, system="system", **kwargs):
            """Paired gaps between systems; see :func:`evalci.compare`."""
            return _dask.compare(self._obj, value, cluster, system, **kwargs)

        def leaderboard(self, value=None, cluster=None, system="system", **kwargs):
            """Rank intervals and tie groups; see :func:`evalci.leaderboard`."""
            with _dask.caller_warnings():
                return _ranks.leaderboard(self._obj, value, cluster, system, **kwargs)

        def analytic_ci(self, value, cluster=None, **kwargs):
            """Closed-form CI; see :func:`evalci.analytic_ci`."""
            return _dask_rows.analytic_ci(self._obj, value, cluster, **kwargs)

        def bayes_ci(self, value, cluster=None, **kwargs):
            """Bayesian credible interval; see :func:`evalci.bayes_ci`."""
            return _dask_bayes.bayes_ci(self._obj, value, cluster, **kwargs)

        def bayes_compare(self, value, cluster, system="system", **kwargs):
            """Bayesian paired gap; see :func:`evalci.bayes_compare`."""
            return _dask_bayes.bayes_compare(
                self._obj, value, cluster, system, **kwargs
            )

        def mcnemar(self, value, cluster, system, a, b, **kwargs):
            """McNemar's test at k=1; see :func:`evalci.mcnemar`."""
            return _dask_rows.mcnemar(self._obj, value, cluster, system, a, b, **kwargs)

        def flaky(self, value, cluster, **kwargs):
            """Per-input pass rates, flaky inputs first; see :func:`evalci.flaky`."""
            return _dask_rows.flaky(self._obj, value, cluster, **kwargs)

        def report(self, value, cluster, system="system", **kwargs):
            """Seed 002's comparison report; see :func:`evalci.report`."""
            return _dask_rows.report(self._obj, value, cluster, system, **kwargs)

        def icc(self, value=None, cluster=None, **kwargs):
            """Variance components and rho; see :func:`evalci.icc`."""
            return _dask_planning.icc(self._obj, value, cluster, **kwargs)

        def width_table(self, value=None, cluster=None, **kwargs):
            """Predicted widths by runs per input; see :func:`evalci.width_table`."""
            return _dask_planning.width_table(self._obj, value, cluster, **kwargs)

        def plan(self, value=None, cluster=None, **kwargs):
            """Choose N and k from a pilot; see :func:`evalci.plan_from_data`."""
            return _dask_planning.plan(self._obj, value, cluster, **kwargs)

        def sample_size(self, value=None, cluster=None, **kwargs):
            """Inputs needed; see :func:`evalci.sample_size_from_data`."""
            return _dask_planning.sample_size(self._obj, value, cluster, **kwargs)

        def mde(self, value=None, cluster=None, **kwargs):
            """Minimum detectable effect; see :func:`evalci.mde_from_data`."""
            return _dask_planning.mde(self._obj, value, cluster, **kwargs)

        def to_xarray(self, value, **kwargs):
            """The table as a DataArray; see :func:`evalci.frames.dataarray.to_xarray`."""
            return _dask_rows.to_xarray(self._obj, value, **kwargs)
