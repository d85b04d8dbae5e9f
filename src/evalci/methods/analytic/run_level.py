"""The run-level t interval of Blackwell et al. (2025): variation across runs only."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.messages import _FRAME_HINT, _no_missing, _where
from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
    check_level,
    check_name,
    check_option,
)
from evalci._base.warnings import DegenerateDataWarning, warn
from evalci.engine.cube import factorize
from evalci.engine.cube import group_codes as group_codes_of
from evalci.engine.results import _GroupedResult

__all__ = ["RUN_LEVEL_KINDS", "RunLevelResult", "run_level_ci"]

#: what :func:`run_level_ci` can bracket
RUN_LEVEL_KINDS: tuple[str, ...] = ("prediction", "mean")
_RUN_FIELDS = (
    "estimate",
    "low",
    "high",
    "standard_error",
    "run_sd",
    "n_runs",
    "n_inputs",
)


@dataclass(frozen=True, repr=False)
class RunLevelResult(_GroupedResult):
    """A run-level t interval over k benchmark runs (Blackwell et al. 2025).

    Not a confidence interval for the score over the population of inputs:
    the input set is held fixed and only run-to-run variation is measured.
    See :func:`run_level_ci`.

    Attributes
    ----------
    estimate : float or pandas.Series
        Mean of the k run means (each run's mean over the same N inputs).
    low, high : float or pandas.Series
        Interval endpoints: ``estimate -/+ t_{k-1} * scale`` with ``scale =
        run_sd * sqrt(1 + 1/k)`` (``kind="prediction"``) or ``run_sd /
        sqrt(k)`` (``kind="mean"``).
    standard_error : float or pandas.Series
        ``run_sd / sqrt(k)``: the standard error of ``estimate`` over runs on
        these inputs.
    run_sd : float or pandas.Series
        Standard deviation (``ddof=1``) of the k run means.
    n_runs, n_inputs : int or pandas.Series
        k runs and the N inputs each run scored.
    run_means : pandas.Series
        The run means, indexed by (group columns..., run).
    kind : {'prediction', 'mean'}
        What the interval brackets: the score of one future run on these
        inputs (``"prediction"``), or the long-run mean score over runs on
        them (``"mean"``).
    confidence_level : float
        Two-sided level.
    groups : pandas.Index or None
        The groups (one per ``by`` value; a MultiIndex for several ``by``
        columns) that index each per-group Series; None without ``by``.
    """

    estimate: object
    low: object
    high: object
    standard_error: object
    run_sd: object
    n_runs: object
    n_inputs: object
    run_means: pd.Series = field(repr=False)
    kind: str
    confidence_level: float
    groups: pd.Index | None = field(default=None, repr=False)

    _PER_GROUP = _RUN_FIELDS
    _SETTINGS = ("confidence_level", "kind")

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: one row per group (group columns first).

        Examples
        --------
        >>> import evalci
        >>> from evalci import run_level_ci
        >>> gpqa = evalci.load_example()
        >>> r = run_level_ci(gpqa, "correct", "input_id", by="system")
        >>> r.to_frame()[["estimate", "low", "high", "n_runs"]].round(4)
           estimate     low    high  n_runs
        0    0.6758  0.6557  0.6958       5
        1    0.6172  0.5198  0.7146       5
        """
        frame = pd.DataFrame(
            {
                name: np.atleast_1d(np.asarray(getattr(self, name)))
                for name in _RUN_FIELDS
            }
        )
        frame["confidence_level"] = self.confidence_level
        frame["kind"] = self.kind
        return self._with_groups(frame)

    def _header(self) -> str:
        what = (
            "prediction interval for a next run"
            if self.kind == "prediction"
            else ("interval for the mean over runs")
        )
        return (
            f"{self.confidence_level:.0%} run-level {what} (t, k-1 df; inputs held "
            "fixed)"
        )

    def _scalar_repr(self) -> str:
        return (
            f"RunLevelResult(estimate={self.estimate:.4g}, low={self.low:.4g}, "
            f"high={self.high:.4g}, standard_error={self.standard_error:.3g}, "
            f"run_sd={self.run_sd:.3g}, n_runs={self.n_runs}, "
            f"n_inputs={self.n_inputs}, kind={as_written(self.kind)}, "
            f"confidence_level={self.confidence_level})"
        )


def run_level_ci(
    data: pd.DataFrame,
    value: str,
    cluster,
    *,
    run: str = "run",
    by=None,
    kind: str = "prediction",
    confidence_level: float = 0.95,
) -> RunLevelResult:
    """Run-level t interval of Blackwell et al. (2025): variation across runs only.

    Per run, the mean of ``value`` over the inputs; then a Student-t interval
    with k - 1 degrees of freedom over the k run means. This is the opposite
    aggregation to the cluster bootstrap (seed 000: "they take the mean over
    inputs per run and use those k values"), and it answers a different
    question:

    * ``kind="prediction"`` (default; Blackwell et al.'s "x-bar +/- PI"):
      where the score of **one future benchmark run on this same input set**
      should fall, ``mean +/- t_{k-1} s sqrt(1 + 1/k)``, ``s`` the SD of the
      run means.
    * ``kind="mean"``: a confidence interval for the long-run mean score
      over runs **on this input set**, ``mean +/- t_{k-1} s / sqrt(k)``.

    Either way the inputs are held fixed. It says nothing about how the score
    would change on another sample of inputs, which the cluster bootstrap
    (:func:`evalci.cluster_ci`) and ``analytic_ci(method="clt")`` include:
    their target is the expected accuracy of a single call on a random input
    from the population. The run-level interval is usually far narrower (it
    ignores input sampling, the dominant term unless N is small) and must not
    be read as uncertainty about the population score. With few runs (k = 3
    to 5) its width is itself very noisy: t_{k-1} is large and ``s`` rests on
    k - 1 degrees of freedom, so one unusual run can make it wider than the
    bootstrap interval. Not clipped to the range of the data (as ``"clt"``).

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table, one row per (input, run[, group]). Never modified.
    value : str
        Numeric column (0/1 correctness or a score).
    cluster : str or list of str
        Column(s) identifying the input. Every run of a group must score the
        same inputs, each once.
    run : str
        Column identifying the run (``"run"``).
    by : str or list of str, optional
        Column(s) to group by (e.g. ``"system"``): one interval per group;
        groups may have different runs and inputs.
    kind : {'prediction', 'mean'}
        What the interval brackets (above).
    confidence_level : float
        Two-sided level, e.g. 0.95.

    Returns
    -------
    RunLevelResult

    Warns
    -----
    DegenerateDataWarning
        When every run of a group has the same mean score: the interval has
        zero width, which says the runs agree, not that the score is known.

    Raises
    ------
    ValueError
        Fewer than 2 runs in a group; a run that does not score the same
        inputs as the other runs of its group (the run and an input are
        named); an (input, run) with more than one row; missing, infinite or
        non-numeric values; unknown columns or options.

    See Also
    --------
    evalci.cluster_ci : interval for the population score (inputs x runs).
    analytic_ci : closed-form intervals for the population score.

    References
    ----------
    Blackwell, R. E., Barry, J., & Cohn, A. G. (2025). Towards reproducible
    LLM evaluation: quantifying uncertainty in LLM benchmark scores.
    arXiv:2410.03492.

    Examples
    --------
    GPQA Diamond, 198 inputs x 5 runs per system:

    >>> import evalci
    >>> from evalci import run_level_ci
    >>> gpqa = evalci.load_example()
    >>> run_level_ci(gpqa, "correct", "input_id", by="system")
    RunLevelResult: 95% run-level prediction interval for a next run (t, k-1 df; inputs held fixed)
                            system  estimate    low   high  standard_error   run_sd  n_runs  n_inputs
      openai/gpt-5-nano-2025-08-07    0.6758 0.6557 0.6958        0.002945 0.006585       5       198
    openai/gpt-5.4-mini-2026-03-17    0.6172 0.5198 0.7146         0.01432  0.03202       5       198

    The run means behind it: gpt-5.4-mini's fifth run scored 0.566. With
    ``kind="mean"`` the interval brackets the mean over runs on these inputs:

    >>> r = run_level_ci(gpqa, "correct", "input_id", by="system", kind="mean")
    >>> r.run_means.loc["openai/gpt-5.4-mini-2026-03-17"].round(3).tolist()
    [0.636, 0.636, 0.606, 0.641, 0.566]
    >>> (r.high - r.low).round(4).tolist()
    [0.0164, 0.0795]
    """
    from scipy import stats  # slow to import: only when used

    args = _run_level_iv(data, value, cluster, run, by, kind, confidence_level)
    means, present, groups, run_keys, n_inputs = _run_means(data, args)
    k = present.sum(axis=1)
    _few_runs_iv(k, groups, args)
    estimate = np.nanmean(means, axis=1)
    run_sd = np.sqrt(
        np.nansum((means - estimate[:, None]) ** 2, axis=1) / np.maximum(k - 1, 1)
    )
    se = run_sd / np.sqrt(k)
    scale = run_sd * np.sqrt(1 + 1 / k) if args.kind == "prediction" else se
    t = stats.t.ppf(0.5 + args.confidence_level / 2, k - 1)
    if (run_sd == 0).any():
        g = int(np.argmax(run_sd == 0))
        warn(
            f"every run has the same mean score{_where(groups, g)}: the run-level "
            "interval has zero width. That says the runs agree, not that the score "
            "is known; for the population score use evalci.cluster_ci(...).",
            DegenerateDataWarning,
        )
    return RunLevelResult._from_arrays(
        groups=groups,
        estimate=estimate,
        low=estimate - t * scale,
        high=estimate + t * scale,
        standard_error=se,
        run_sd=run_sd,
        n_runs=k,
        n_inputs=n_inputs,
        run_means=_run_means_series(means, present, groups, run_keys, args),
        kind=args.kind,
        confidence_level=args.confidence_level,
    )


@dataclass(frozen=True)
class _RunArgs:
    value: str
    cluster: list[str]
    run: str
    by: list[str]
    kind: str
    confidence_level: float


def _run_level_iv(data, value, cluster, run, by, kind, confidence_level) -> _RunArgs:
    """Validate and normalise the arguments of :func:`run_level_ci`."""
    check_frame(data, _FRAME_HINT)
    check_option(
        kind,
        "kind",
        RUN_LEVEL_KINDS,
        describe="'prediction' (where a next run's score falls) or 'mean' (the "
        "mean score over runs on these inputs)",
    )
    level = check_level(confidence_level)
    check_name(value, "value")
    check_name(run, "run")
    cluster = as_columns(cluster, "cluster", allow_none=False)
    by = as_columns(by, "by")
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, [run], "run")
    check_columns(data, by, "by")
    for name, cols in (("cluster", cluster), ("by", by)):
        if run in cols:
            raise ValueError(
                f"`run` column {as_written(run)} is also in `{name}`; `run` names the "
                f"repetition of the benchmark, `{name}` something else."
            )
    if set(cluster) & set(by):
        raise ValueError(
            f"`by` and `cluster` share column {as_written(sorted(set(cluster) & set(by))[0])}; "
            "group by a column that spans several inputs."
        )
    if len(data) == 0:
        raise ValueError("`data` has no rows.")
    _no_missing(data, value, "value", "fill them (e.g. count a missing answer as 0)")
    check_finite(data, [value], "value")
    y = data[value]
    if not (pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y)):
        raise ValueError(
            f"`value` column {as_written(value)} is not numeric (dtype {y.dtype}); score it "
            "first, e.g. (df.answer == df.target).astype(int)."
        )
    return _RunArgs(value, cluster, run, by, kind, level)


def _run_means(data: pd.DataFrame, args: _RunArgs):
    """(G, R) run means (NaN where a group lacks a run) and the checks on run cells."""
    gc, groups, n_groups = group_codes_of(data, args.by)
    ic, input_keys = factorize(data, args.cluster, "cluster")
    rc, run_keys = factorize(data, [args.run], "run")
    n, r = len(input_keys), len(run_keys)
    cell = (gc * r + rc) * n + ic
    cells, counts = np.unique(cell, return_counts=True)
    if (counts > 1).any():
        c = int(cells[np.argmax(counts > 1)])
        raise ValueError(
            f"input {as_written(input_keys[c % n])} has {int(counts.max())} rows in run "
            f"{as_written(run_keys[(c // n) % r])}{_where(groups, c // (n * r))}; each "
            "run scores each input once. Aggregate duplicates first or give them "
            f"distinct `run` values."
        )
    gr = gc * r + rc
    n_gr = np.bincount(gr, minlength=n_groups * r).reshape(n_groups, r)
    sums = np.bincount(
        gr, weights=data[args.value].to_numpy(dtype=float), minlength=n_groups * r
    )
    gi = np.unique(gc * n + ic)
    n_inputs = np.bincount(gi // n, minlength=n_groups)
    present = n_gr > 0
    short = present & (n_gr != n_inputs[:, None])
    if short.any():
        _different_inputs_iv(short, gc, rc, ic, input_keys, run_keys, groups, args)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(present, sums.reshape(n_groups, r) / n_gr, np.nan)
    return means, present, groups, run_keys, n_inputs


def _different_inputs_iv(short, gc, rc, ic, input_keys, run_keys, groups, args):
    """Name the first run that misses inputs of its group (error path only)."""
    g, j = (int(v) for v in np.argwhere(short)[0])
    in_group = gc == g
    missing = np.setdiff1d(ic[in_group], ic[in_group & (rc == j)])
    shown = ", ".join(as_written(input_keys[i]) for i in missing[:5])
    more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
    raise ValueError(
        f"run {as_written(run_keys[j])}{_where(groups, g)} does not score the same inputs "
        f"as the other runs: it lacks {len(missing)} of them ({shown}{more}). The "
        "run-level interval compares runs on one fixed input set; drop those inputs "
        f"from every run (or score them in run {as_written(run_keys[j])}) first."
    )


def _few_runs_iv(k, groups, args: _RunArgs) -> None:
    if (k < 2).any():
        g = int(np.argmax(k < 2))
        raise ValueError(
            f"run_level_ci needs at least 2 runs per group for a t interval over "
            f"run means{_where(groups, g)}; found {int(k[g])} (`run` {as_written(args.run)}). "
            "Run the benchmark again, or for one run use evalci.cluster_ci(...) "
            "or analytic_ci(...), which resample inputs."
        )


def _run_means_series(means, present, groups, run_keys, args) -> pd.Series:
    """The present run means as a Series indexed by (group columns..., run)."""
    g, j = np.nonzero(present)
    run_index = pd.Index(run_keys[j], name=args.run)
    if groups is None:
        index = run_index
    else:
        sel = groups[g]
        arrays = (
            [sel.get_level_values(i) for i in range(sel.nlevels)]
            if isinstance(sel, pd.MultiIndex)
            else [sel]
        )
        index = pd.MultiIndex.from_arrays([*arrays, run_index])
    return pd.Series(means[g, j], index=index, name=args.value)
