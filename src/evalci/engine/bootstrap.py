"""The bootstrap entry points: ``bootstrap`` and ``cluster_ci``.

What the user may pass is checked in :mod:`evalci.engine.args`; the table becomes
a cube in :mod:`evalci.engine.table`; the cube is resampled in :mod:`evalci.engine.passes`.
This module runs the pass on a pandas table and reads the intervals into a
:class:`~evalci.engine.results.BootstrapResult`. A Dask DataFrame never gets
here: it enters through :mod:`evalci.frames` (see :mod:`evalci.frames.doors`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalci.engine import auto as _auto
from evalci.engine import intervals as _intervals
from evalci.engine import missing as _missing
from evalci.engine import policy as _policy
from evalci.engine import resampling as _rs
from evalci.engine.args import BootstrapArgs, bootstrap_iv
from evalci.engine.backends import replicates
from evalci.engine.passes import Replicates
from evalci.engine.results import BootstrapResult, warn_degenerate
from evalci.engine.table import rows_of

__all__ = ["bootstrap", "cluster_ci"]


def _result(rep: Replicates, args: BootstrapArgs, flat=None) -> BootstrapResult:
    """Intervals from a pass, as a :class:`BootstrapResult` (``flat``: as
    :func:`~evalci.engine.results.warn_degenerate`)."""
    cube, estimate, reps, accel = rep.cube, rep.estimate, rep.reps, rep.accel
    n_groups, fast = cube.n_groups, rep.fast
    if not fast and args.method != "bca":
        accel[:] = np.nan
    warn_degenerate(reps, estimate, flat)
    low, high, z0 = _intervals.interval(
        reps,
        estimate,
        args.method,
        args.confidence_level,
        accel=np.nan_to_num(accel) if args.method == "bca" else None,
    )
    with np.errstate(invalid="ignore"):
        se = (
            reps.std(axis=1, ddof=1)
            if args.n_resamples > 1
            else np.full(n_groups, np.nan)
        )
    name = args.metric.name if fast else getattr(args.metric, "__name__", "callable")
    return BootstrapResult._from_arrays(
        groups=cube.groups,
        estimate=estimate,
        low=low,
        high=high,
        standard_error=se,
        bootstrap_distribution=reps,
        n_inputs=rep.n_inputs,
        n_runs=rep.n_runs,
        n_clusters=rep.n_clusters,
        cluster=tuple(args.cluster),
        input=tuple(args.input or args.cluster),
        kernel=rep.kernel,
        metric_calls=rep.metric_calls,
        z0=z0,
        acceleration=accel,
        method=args.method,
        strategy=args.strategy,
        confidence_level=args.confidence_level,
        n_resamples=args.n_resamples,
        weight=args.weight,
        metric=name,
        paired=rep.paired,
    )


def bootstrap(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    strategy: str = "cluster",
    metric="mean",
    by=None,
    paired: bool = True,
    strata=None,
    method: str = "percentile",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    weight: str = "input",
    missing: str = "raise",
    dropna: bool = False,
    rng=None,
    successes: str | None = None,
    trials: str | None = None,
    input=None,
    weights: str = "multinomial",
    backend: str | None = None,
    compute: bool = True,
    block_length: int | None = None,
    mc_tolerance: float | None = None,
) -> BootstrapResult:
    """Bootstrap confidence interval of an evaluation score over inputs x runs.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, system]). Never modified.
    value : str
        Column with the outcome: 0/1 correctness, a score, or a predicted label
        (with ``metric=accuracy(truth=...)`` or ``kappa(truth=...)``).
    cluster : str or list of str, optional
        Column(s) identifying the resampling unit: rows sharing a key (and
        group) are drawn together. Usually the input, whose rows are its runs;
        it may be a larger unit that inputs nest in (a repository, a source
        document), with ``input=`` naming the input. Required unless
        ``strategy="iid"``.
    strategy : {'cluster', 'iid', 'single_draw', 'hierarchical', 'mode_aggregate', \
'moving_block'}
        Seed 000's five strategies, and the moving-block bootstrap. ``cluster`` (the default) resamples inputs
        with all their runs; ``single_draw`` takes one run per drawn input;
        ``hierarchical`` resamples runs within each drawn input;
        ``mode_aggregate`` collapses each input's runs to their mode (random
        tie-breaks) and warns that it changes the estimand: for predicted
        labels (``metric=accuracy(truth=...)``) it is the accuracy of the
        majority-vote label; for a 0/1 column it is the share of inputs where
        most runs are correct (a tie at even k broken at random), which is not
        the majority-vote accuracy; ``iid`` treats rows as independent (one
        run per input). ``moving_block`` (Kunsch 1989; seed 003: observations
        in sequence, such as successive turns of a dialogue or a time series)
        keeps runs of ``block_length`` consecutive inputs together: inputs
        are taken in the order of their ``cluster`` key, so name a column
        that sorts in sequence (a turn number, a timestamp).
    metric : str, Metric or callable
        ``"mean"`` (accuracy of a 0/1 column), a :class:`~evalci.metrics.Metric`
        such as ``evalci.metrics.kappa(truth="label")``, a registered name, or a
        callable ``f(DataFrame) -> float`` (slower general path: it is called
        on the gathered rows of every resample, about 1,200x the same mean as
        a Metric at 1,000 inputs, and the result's ``metric_calls`` counts the
        calls; a function of column sums is a Metric in one line with
        :func:`evalci.metrics.from_sums`, docs/tutorial.md). The callable receives the
        rows of one group: the original rows for the estimate and the
        jackknife; for a resample, the rows of every drawn input, with an
        input drawn twice appearing as two distinct inputs -- its ``cluster``
        column (and ``input`` column) holds ``(original key, copy number)``
        tuples, so per-input aggregation (``groupby(cluster)``) sees each copy.
    by : str or list of str, optional
        One interval per group. Groups with the same set of inputs (e.g.
        ``by="system"``) share the same draws, so gaps between them are paired.
    paired : bool
        ``True`` (default): groups with the same inputs share their draws
        (above). ``False``: each group is drawn on its own, from its own
        streams, as if it were called alone -- the same law for every
        group's interval, at the cost of separate calls, which is far less
        when the groups' joint per-input patterns are many (10 systems of
        0/1 scores at k = 5: their own 6 patterns each, against about as
        many joint patterns as inputs). Gaps between the groups are then
        not paired (``result.paired`` is False): use :func:`compare` for
        them.
    strata : str, optional
        Column constant within each input; inputs are drawn within strata.
    method : {'percentile', 'basic', 'bca', 'normal'}
        Interval type. BCa uses the leave-one-input-out jackknife (O(N) from
        sufficient statistics; within strata when stratified). ``"normal"``:
        estimate +- z * bootstrap standard error.
    confidence_level : float
        In (0, 1).
    n_resamples : int or 'auto'
        Bootstrap replicates. Work is done in blocks, so memory does not grow
        with it beyond the ``(n_resamples, n_groups)`` replicates. ``"auto"``
        doubles it from 2,048 until every endpoint's Monte-Carlo error
        (:meth:`BootstrapResult.mc_error`) is at most ``mc_tolerance``, up to
        262,144; the result equals the one at the ``n_resamples`` it reports.
    weight : {'input', 'run'}
        ``"input"`` (default): each input counts equally, seed 000's estimand
        (expected score of one call on a random input). ``"run"``: runs are
        pooled, so inputs with more runs weigh more. Equal when k is constant.
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing value (NaN: an errored sample, one that hit a limit)
        means; see the page "When samples are missing". ``"raise"`` (default):
        refuse, with the counts. ``"drop"``: leave the missing runs out (an
        input with no scored run disappears), with a
        :class:`~evalci.MissingDataWarning`, as the score changes meaning.
        ``"zero"``: a missing run counts as a failure (value 0; for 0/1
        values, scores in [0, 1] and 0/1 metrics such as pass@k).
        ``"bounds"``: worst-case bounds for ``metric="mean"`` on [0, 1] with
        ``strategy="cluster"``: the table with every missing run a failure
        and the table with every one a success are resampled with the same
        draws; ``low`` is the first's lower limit, ``high`` the second's
        upper limit (each end at the asked level, Horowitz and Manski
        2000), and ``estimate`` the score of the scored part. A group with
        no scored run keeps its row, ``[0, 1]``. Whenever a value is
        missing, the result counts attempted, scored and missing runs (and
        errored, hit a limit, when the table has ``error``/``limit``
        columns).
    dropna : bool
        Deprecated: ``dropna=True`` is ``missing="drop"`` (with a
        ``DeprecationWarning``); with another ``missing`` it is an error.
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Seed (SPEC 7). Fixes the result, whatever the row order of ``data``.
    successes, trials : str, optional
        A counts table instead of one row per run: one row per (input[, group])
        with the number of correct runs and of runs (e.g. ``"n_correct"``,
        ``"n_runs"``). They are the sufficient statistics of accuracy, so the
        cluster bootstrap runs on them directly, with no expansion to rows;
        ``value`` is then left out. Only ``strategy="cluster"``.
    input : str or list of str, optional
        The estimand's unit when it is not the resampled ``cluster``: inputs
        nested in larger clusters (problems in repositories). Whole clusters
        are resampled, while each input counts equally (``weight="input"``).
        Defaults to ``cluster``. With few clusters (under 30) a
        ``FewClustersWarning`` says the interval is rough.
    weights : {'multinomial', 'poisson'}
        ``"multinomial"`` (default): the bootstrap, N inputs drawn with
        replacement. ``"poisson"``: each input weighted by an independent
        Poisson(1) count (Chamandy et al. 2012), which needs no N and so
        suits streaming data; it matches the multinomial bootstrap for ratio
        metrics (means, accuracy) from about N = 100 inputs and is a few
        percent wide of it below (about 6% at N = 10). ``strategy="cluster"``
        only (``iid`` too).
    backend : {'numpy', 'dask'}, optional
        Where the resampling runs: ``"numpy"`` in this process, ``"dask"`` as
        Dask tasks on the current scheduler (a ``distributed`` client if one
        is active, else Dask's threads). The default is ``"dask"`` for a Dask
        DataFrame, else ``"numpy"``. Same numbers either way, for the same
        seed. See the "Scaling out" page.
    block_length : int, optional
        ``strategy="moving_block"`` only (and required there): consecutive
        inputs per block, at least 1 and fewer than the inputs. Larger blocks
        keep longer dependence (``N ** (1/3)`` is the classical order). Not
        with ``method="bca"`` or ``strata``.
    mc_tolerance : float, optional
        With ``n_resamples="auto"``: the largest Monte-Carlo SE an endpoint
        may keep, on the metric's scale (default 0.001, a tenth of a point of
        accuracy).
    compute : bool
        Dask DataFrames only: ``False`` returns a ``dask.delayed`` object of
        the result (reduction, resampling and intervals as named tasks:
        ``evalci-reduce``, ``evalci-resample``, ``evalci-finish``), to join a
        larger graph.

    Returns
    -------
    BootstrapResult

    References
    ----------
    Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397).
    Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data. JRSS-B 69(3).

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> res = evalci.bootstrap(df, "correct", cluster="input_id", by="system",
    ...                        n_resamples=2000, rng=0)
    >>> res.to_frame()[["system", "n_inputs", "n_runs"]]
                               system  n_inputs  n_runs
    0    openai/gpt-5-nano-2025-08-07       198     990
    1  openai/gpt-5.4-mini-2026-03-17       198     990
    """
    missing, dropna = _missing.resolve(missing, dropna), False
    return _auto.resolve(
        _bootstrap,
        data=data,
        value=value,
        cluster=cluster,
        strategy=strategy,
        metric=metric,
        by=by,
        paired=paired,
        strata=strata,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        weight=weight,
        missing=missing,
        dropna=dropna,
        rng=rng,
        successes=successes,
        trials=trials,
        input=input,
        weights=weights,
        backend=backend,
        compute=compute,
        block_length=block_length,
        mc_tolerance=mc_tolerance,
    )


def _bootstrap(data, value, cluster, *, input, rng, compute, **options):
    """:func:`bootstrap` of a pandas table with an integer ``n_resamples``."""
    if compute is not True:
        raise ValueError(
            "`compute=False` is for Dask DataFrames (it returns a lazy result); a "
            "pandas DataFrame is computed at once. Leave `compute` out, or pass "
            "backend='dask' to resample on Dask."
        )
    data, row_runs = rows_of(data)  # a table reduced exactly (e.g. on Dask)
    args = bootstrap_iv(data, value, cluster, **options, input=input, row_runs=row_runs)
    step = _policy.before(data, args)  # the missing-value policy on the table
    rep = replicates(step.data, step.args, _rs.seed_sequence(rng))
    result = _result(rep, step.args, flat=False if step.bounds else None)
    return _policy.after(result, step, data, args)  # counts, bounds, warnings


def cluster_ci(
    data: pd.DataFrame,
    value: str | None = None,
    cluster=None,
    *,
    metric="mean",
    by=None,
    paired: bool = True,
    strata=None,
    method: str = "percentile",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    weight: str = "input",
    missing: str = "raise",
    dropna: bool = False,
    rng=None,
    successes: str | None = None,
    trials: str | None = None,
    input=None,
    weights: str = "multinomial",
    backend: str | None = None,
    compute: bool = True,
    mc_tolerance: float | None = None,
) -> BootstrapResult:
    """Cluster-bootstrap confidence interval: resample inputs with all their runs.

    Seed 000's recommended recipe: :func:`bootstrap` with
    ``strategy="cluster"``, the same draws for the same ``rng``.

    Parameters
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        Tidy table, one row per (input, run[, system]). Never modified.
    value : str, optional
        Column with the outcome: 0/1 correctness, a score, or a predicted label
        (with ``metric=accuracy(truth=...)`` or ``kappa(truth=...)``). Left
        out with ``successes``/``trials``.
    cluster : str or list of str
        Column(s) identifying the resampling unit: rows sharing a key (and
        group) are drawn together. Usually the input, whose rows are its runs;
        it may be a larger unit that inputs nest in (a repository), with
        ``input=`` naming the input.
    metric : str, Metric or callable
        ``"mean"`` (accuracy of a 0/1 column, the default), a
        :class:`~evalci.metrics.Metric` such as
        ``evalci.metrics.kappa(truth="label")``, a registered name, or a
        callable ``f(DataFrame) -> float`` (slower general path, called on the
        gathered rows of every resample; see :func:`bootstrap`).
    by : str or list of str, optional
        One interval per group. Groups with the same set of inputs (e.g.
        ``by="system"``) share the same draws, so gaps between them are paired.
    paired : bool
        ``True`` (default): groups with the same inputs share their draws.
        ``False``: each group drawn on its own streams, as if called alone
        (the cost of separate calls; see :func:`bootstrap`).
    strata : str, optional
        Column constant within each input; inputs are drawn within strata.
    method : {'percentile', 'basic', 'bca', 'normal'}
        Interval type. BCa uses the leave-one-input-out jackknife (O(N) from
        sufficient statistics). ``"normal"``: estimate +- z * bootstrap
        standard error.
    confidence_level : float
        In (0, 1); default 0.95.
    n_resamples : int or 'auto'
        Bootstrap replicates (default 10,000). ``"auto"`` doubles it from
        2,048 until every endpoint's Monte-Carlo error is at most
        ``mc_tolerance``, as in :func:`bootstrap`.
    weight : {'input', 'run'}
        ``"input"`` (default): each input counts equally (the expected score
        of one call on a random input). ``"run"``: runs are pooled, so inputs
        with more runs weigh more. Equal when k is constant.
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing value means: refuse (default), leave the run out
        (with a :class:`~evalci.MissingDataWarning`), count it as a failure,
        or worst-case bounds (``metric="mean"`` on [0, 1]); see
        :func:`bootstrap` and the page "When samples are missing".
    dropna : bool
        Deprecated: ``dropna=True`` is ``missing="drop"``.
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Seed (SPEC 7). Fixes the result, whatever the row order of ``data``.
    successes, trials : str, optional
        A counts table instead of one row per run: the columns with each
        input's number of correct runs and of runs (e.g. ``"n_correct"``,
        ``"n_runs"``); ``value`` is then left out.
    input : str or list of str, optional
        The estimand's unit when it is not the resampled ``cluster`` (problems
        nested in repositories): whole clusters are resampled, while each
        input counts equally. Defaults to ``cluster``.
    weights : {'multinomial', 'poisson'}
        ``"multinomial"`` (default): N inputs drawn with replacement.
        ``"poisson"``: each input weighted by an independent Poisson(1) count
        (Chamandy et al. 2012), for streaming data.
    backend : {'numpy', 'dask'}, optional
        Where the resampling runs: in this process, or as Dask tasks on the
        current scheduler. The default is ``"dask"`` for a Dask DataFrame,
        else ``"numpy"``. Same numbers either way, for the same seed.
    compute : bool
        Dask DataFrames only: ``False`` returns a ``dask.delayed`` object of
        the result, to join a larger graph.
    mc_tolerance : float, optional
        With ``n_resamples="auto"``: the largest Monte-Carlo SE an endpoint
        may keep, on the metric's scale (default 0.001, a tenth of a point of
        accuracy).

    Returns
    -------
    BootstrapResult
        Estimate, interval and bootstrap distribution per group
        (``to_frame()``, ``interval()``, ``plot()``).

    See Also
    --------
    bootstrap : the other strategies (iid, single_draw, hierarchical,
        mode_aggregate, moving_block).
    compare : paired gaps between systems from the same draws.

    Examples
    --------
    >>> import evalci
    >>> df = evalci.load_example()
    >>> one = df[df.system == "openai/gpt-5-nano-2025-08-07"]
    >>> r = evalci.cluster_ci(one, "correct", cluster="input_id", rng=0,
    ...                       n_resamples=2000)
    >>> round(r.estimate, 4), r.n_inputs, r.n_runs
    (0.6758, 198, 990)
    """
    return bootstrap(
        data,
        value,
        cluster,
        strategy="cluster",
        metric=metric,
        by=by,
        paired=paired,
        strata=strata,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        weight=weight,
        missing=missing,
        dropna=dropna,
        rng=rng,
        successes=successes,
        trials=trials,
        input=input,
        weights=weights,
        backend=backend,
        compute=compute,
        mc_tolerance=mc_tolerance,
    )
