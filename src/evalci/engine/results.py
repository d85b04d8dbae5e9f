"""Result objects: frozen, labelled, printable, convertible."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from evalci._base import text as _text
from evalci._base.text import as_written
from evalci._base.typing import METHODS
from evalci._base.warnings import DegenerateDataWarning, warn
from evalci.engine import intervals as _intervals
from evalci.engine.missing import note as _missing_words
from evalci.engine.missing import scored_score as _scored_score

__all__ = ["BootstrapResult"]

_FIELDS = (
    "estimate",
    "low",
    "high",
    "standard_error",
    "n_inputs",
    "n_runs",
    "n_clusters",
    "z0",
    "acceleration",
)


def warn_degenerate(reps: np.ndarray, estimate: np.ndarray, flat=None) -> None:
    """Say so when the replicates cannot support an interval (no spread, NaN).

    ``flat``: which groups have an interval of zero width, when not read
    from ``reps`` (``missing="bounds"``: a filling may be flat at 0 or 1,
    its bound then exact; ``reps`` None checks only ``flat``).
    """
    if flat is None:
        with np.errstate(invalid="ignore"):
            flat = np.all(reps == reps[:, :1], axis=1)
    if np.any(flat):
        warn(
            "the bootstrap distribution has no spread (every resample gives the "
            "same score, e.g. every outcome is 1 or 0): the interval has zero width "
            "and says nothing about uncertainty. For 0/N or N/N outcomes use "
            "evalci.analytic_ci(..., method='clopper-pearson'), which gives an "
            "exact bound.",
            DegenerateDataWarning,
        )
    if reps is None:
        return
    if np.isnan(estimate).any():
        warn(
            "the score is undefined on the data itself (the metric returned NaN, "
            "e.g. a ratio with a zero denominator or kappa with a single label), "
            "so its interval is NaN; check the metric and the data.",
            DegenerateDataWarning,
        )
    undefined = np.isnan(reps).any(axis=1) & ~np.isnan(estimate)
    if undefined.any():
        share = np.isnan(reps[undefined]).mean(axis=1).max()
        warn(
            f"up to {share:.1%} of resamples give an undefined score (e.g. kappa "
            "when a resample holds a single label, or a ratio with a zero "
            "denominator), so the interval is NaN. Use more inputs, or a metric "
            "defined on every resample.",
            DegenerateDataWarning,
        )


class _GroupedResult:
    """What interval results share: scalars without groups, Series with them.

    Subclasses list their per-group fields in ``_PER_GROUP``, the settings the
    compact table leaves out in ``_SETTINGS``, and give ``_header()`` and
    ``_scalar_repr()``.
    """

    _PER_GROUP: tuple[str, ...] = ()
    _SETTINGS: tuple[str, ...] = ()

    @classmethod
    def _from_arrays(cls, *, groups, **arrays):
        """Arrays of shape (G,) -> scalars (groups is None) or Series by group."""
        out = {}
        for key, val in arrays.items():
            if key in cls._PER_GROUP:
                val = np.asarray(val)
                if groups is None:
                    val = val.reshape(-1)[0].item()
                else:
                    val = pd.Series(val, index=groups, name=key)
            out[key] = val
        return cls(groups=groups, **out)

    def _with_groups(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Group columns first, then ``frame``'s."""
        if self.groups is None:
            return frame
        keys = self.groups.to_frame(index=False)
        return pd.concat([keys.reset_index(drop=True), frame], axis=1)

    def _table(self) -> pd.DataFrame:
        t = self.to_frame()
        return t[[c for c in t.columns if c not in self._SETTINGS]]

    def __repr__(self) -> str:
        if self.groups is None:
            return _text.terminal_block(self._scalar_repr())
        # groups and metric names are user text: no control character printed
        header = _text.terminal(self._header())
        return f"{type(self).__name__}: {header}\n{_text.table_text(self._table())}"

    def _repr_html_(self) -> str:
        return _text.result_html(type(self).__name__, self._header(), self._table())


@dataclass(frozen=True, repr=False)
class BootstrapResult(_GroupedResult):
    """A bootstrap confidence interval (one per group when ``by`` was given).

    Attributes
    ----------
    estimate, low, high, standard_error : float or pandas.Series
        Point estimate, interval endpoints and bootstrap standard error
        (``ddof=1``). Floats without ``by``; Series indexed by group with ``by``.
    bootstrap_distribution : ndarray
        Replicates, shape ``(n_resamples,)`` or ``(n_groups, n_resamples)``
        (resample axis last, as in scipy).
    n_inputs, n_runs : int or pandas.Series
        Number of inputs (clusters) and of rows (runs) behind each estimate.
    z0, acceleration : float or pandas.Series
        BCa's bias correction and acceleration (cluster jackknife). ``z0`` is
        NaN unless ``method="bca"``; ``acceleration`` is always computed (it is
        O(N)) so :meth:`interval` can switch to BCa without resampling again.
    method, strategy, weight, metric : str
        How the interval was made. ``weight="input"`` means each input counts
        equally (seed 000's estimand: the expected score of one call on a random
        input); ``"run"`` pools runs.
    confidence_level : float
        The level of the intervals, in (0, 1).
    n_resamples : int
        Bootstrap replicates drawn.
    paired : bool
        Whether all groups were computed from the same draws of inputs
        (comparisons between them are then paired).
    n_clusters : int or pandas.Series
        Resampled clusters behind each estimate (``n_inputs`` unless inputs
        nest in larger clusters, ``input=``).
    cluster, input : tuple of str
        The resampling unit's columns and the estimand's unit's columns.
    kernel : {'patterns', 'index', 'patterns+index', 'rows'}
        How the resamples were drawn: ``"patterns"``, multinomial counts of
        distinct per-input patterns (exact, fast when patterns repeat);
        ``"index"``, one index per input and replicate; ``"rows"``, gathered
        rows for a callable metric. Chosen from the data's shape only.
    metric_calls : int or None
        A callable metric's calls (kernel ``"rows"``), over all groups of the
        call: one per group on its rows, one per resample and group on the
        gathered rows of its drawn inputs, and with BCa one per input and
        group for the jackknife. None for a :class:`~evalci.metrics.Metric`
        (resampled as sums: no call per resample). The repr says it.
    groups : pandas.Index or None
        The groups (one per ``by`` value; a MultiIndex for several ``by``
        columns) that index each per-group Series; None without ``by``.
    missing : {'raise', 'drop', 'zero', 'bounds'}
        What a missing value was taken to mean (see :func:`evalci.bootstrap`).
    counts : pandas.DataFrame or None
        When some values were missing: one row per group (in group order)
        with ``n_attempted``, ``n_scored``, ``n_missing`` runs, by cause when
        the table said (``n_errored``, ``n_hit_limit``) and
        ``n_inputs_unscored`` (inputs with no scored run); None otherwise.
    share_scored, bound_low, bound_high : float, pandas.Series or None
        ``missing="bounds"`` only: the share scored ``c``, and the score with
        every missing run a failure (``bound_low = c * estimate``) and with
        every one a success (``bound_high = c * estimate + 1 - c``): the
        worst-case bounds on this table. ``low`` is the lower limit of the
        zero filling's interval, ``high`` the upper limit of the one
        filling's (both resampled with the same draws), so ``[low, high]``
        adds the sampling error to ``[bound_low, bound_high]``. ``estimate``
        is the score of the scored part, ``bootstrap_distribution`` its
        replicates (``e0 / (1 - e1 + e0)`` of the fillings' paired
        replicates) and ``standard_error`` the larger of the fillings' SEs.
    filled : tuple of two BootstrapResult, or None
        ``missing="bounds"`` only: the results of the zero and the one
        filling, from which :meth:`interval` and :meth:`mc_error` read the
        ends.
    """

    estimate: object
    low: object
    high: object
    standard_error: object
    bootstrap_distribution: np.ndarray = field(repr=False)
    n_inputs: object
    n_runs: object
    method: str
    strategy: str
    confidence_level: float
    n_resamples: int
    weight: str
    metric: str
    z0: object = np.nan
    acceleration: object = np.nan
    groups: pd.Index | None = field(default=None, repr=False)
    paired: bool = True
    n_clusters: object = None
    cluster: tuple = ()
    input: tuple = ()
    kernel: str = "index"
    metric_calls: int | None = None
    missing: str = "raise"
    counts: pd.DataFrame | None = field(default=None, repr=False)
    share_scored: object = None
    bound_low: object = None
    bound_high: object = None
    filled: tuple | None = field(default=None, repr=False)

    _PER_GROUP = _FIELDS
    _SETTINGS = (
        "confidence_level",
        "method",
        "strategy",
        "weight",
        "metric",
        "z0",
        "acceleration",
    )

    @classmethod
    def _from_arrays(cls, *, groups, **arrays):
        """As the base class; the distribution is 1-D without groups."""
        dist = np.asarray(arrays.pop("bootstrap_distribution"))
        arrays["bootstrap_distribution"] = dist[0] if groups is None else dist
        return super()._from_arrays(groups=groups, **arrays)

    def _arrays(self, name):
        val = getattr(self, name)
        return np.atleast_1d(np.asarray(val, dtype=float))

    # -- another interval from the same replicates --------------------------
    def interval(
        self, method: str | None = None, confidence_level: float | None = None
    ):
        """The interval from the same replicates with another method or level.

        No resampling happens: percentile, basic and BCa all read the stored
        bootstrap distribution (BCa with the stored acceleration).

        Parameters
        ----------
        method : {'percentile', 'basic', 'bca', 'normal'}, optional
            The interval type; default this result's ``method``.
        confidence_level : float, optional
            In (0, 1); default this result's level.

        Returns
        -------
        BootstrapResult
            This result with the new ``low``, ``high``, ``z0``, ``method``
            and ``confidence_level`` (same replicates).

        Examples
        --------
        >>> import evalci
        >>> df = evalci.load_example()
        >>> r = evalci.cluster_ci(df[df.system == df.system.iloc[0]], "correct",
        ...                       cluster="input_id", rng=0, n_resamples=2000)
        >>> r90 = r.interval(confidence_level=0.90)
        >>> r90.high - r90.low < r.high - r.low
        True
        """
        method = self.method if method is None else method
        level = self.confidence_level if confidence_level is None else confidence_level
        if self.filled is not None:  # "bounds": each end from its own filling
            zero, one = (part.interval(method, level) for part in self.filled)
            return replace(
                self,
                low=zero.low,
                high=one.high,
                method=zero.method,
                confidence_level=zero.confidence_level,
                filled=(zero, one),
            )
        if method not in METHODS:
            raise ValueError(
                f"`method` must be one of {METHODS}, not {as_written(method)}."
            )
        if not 0 < level < 1:
            raise ValueError("`confidence_level` must be in (0, 1).")
        dist = np.atleast_2d(self.bootstrap_distribution)
        accel = self._arrays("acceleration")
        if method == "bca" and np.isnan(accel).any():
            raise ValueError(
                "BCa needs the jackknife acceleration, which was not computed for "
                "this result (callable metric); rerun with method='bca'."
            )
        low, high, z0 = _intervals.interval(
            dist, self._arrays("estimate"), method, level, accel=accel
        )
        return replace(
            self,
            low=self._per_group(low),
            high=self._per_group(high),
            z0=self._per_group(z0),
            method=method,
            confidence_level=level,
        )

    def _per_group(self, v):
        """An array of one value per group as this result holds it."""
        if self.groups is None:
            return float(np.asarray(v).reshape(-1)[0])
        return pd.Series(np.asarray(v), index=self.groups)

    def _select(self, pos, groups) -> BootstrapResult:
        """The groups at positions ``pos``, indexed by ``groups`` (None: one)."""
        per = {n: np.atleast_1d(np.asarray(getattr(self, n)))[pos] for n in _FIELDS}
        dist = np.atleast_2d(self.bootstrap_distribution)[pos]
        skip = {*_FIELDS, "groups", "bootstrap_distribution"}
        rest = {
            f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip
        }
        return type(self)._from_arrays(
            groups=groups, bootstrap_distribution=dist, **per, **rest
        )

    @classmethod
    def _from_fillings(cls, zero, one, share) -> BootstrapResult:
        """Worst-case bounds from the zero and the one filling (same draws).

        ``low`` is the zero filling's lower limit, ``high`` the one
        filling's upper limit (Horowitz and Manski 2000); ``share`` is the
        share scored ``c`` per group, exact (:func:`evalci.engine.missing.share_scored`).
        """
        e0 = zero._arrays("estimate")
        d0 = np.atleast_2d(zero.bootstrap_distribution)
        d1 = np.atleast_2d(one.bootstrap_distribution)
        reps = _scored_score(d0, 1.0 - (d1 - d0))  # the paired resampled shares
        se = np.fmax(zero._arrays("standard_error"), one._arrays("standard_error"))
        nan = zero._per_group(np.full(len(e0), np.nan))
        return replace(
            zero,
            estimate=zero._per_group(_scored_score(e0, share)),
            high=one.high,
            standard_error=zero._per_group(se),
            bootstrap_distribution=reps if zero.groups is not None else reps[0],
            z0=nan,
            acceleration=nan,
            share_scored=zero._per_group(share),
            bound_low=zero.estimate,
            bound_high=one.estimate,
            filled=(zero, one),
        )

    # -- Monte-Carlo error of the bootstrap itself ---------------------------
    def mc_error(self) -> pd.DataFrame:
        """How much the endpoints would move with another seed: their Monte-Carlo SE.

        Columns ``mc_error_low``, ``mc_error_high`` (on the metric's scale)
        and ``mc_error_share``, the larger of the two over the interval's
        width; one row per group. Computed from the stored replicates
        (:func:`evalci.engine.intervals.endpoint_mc_error`); ``n_resamples="auto"``
        draws until it is below a tolerance. At the default 10,000 resamples
        a percentile endpoint's MC error is about 0.7% of the width; at 100
        resamples about 7%, enough to give one model copied twice two
        visibly different intervals.

        Examples
        --------
        >>> import evalci
        >>> df = evalci.load_example()
        >>> r = df.evalci.cluster_ci("correct", cluster="input_id", by="system",
        ...                          rng=0)
        >>> bool((r.mc_error().mc_error_share < 0.02).all())
        True
        """
        if self.filled is None:
            se_low, se_high = self._endpoint_errors()
        else:  # "bounds": each end is its filling's
            se_low = self.filled[0]._endpoint_errors()[0]
            se_high = self.filled[1]._endpoint_errors()[1]
        width = self._arrays("high") - self._arrays("low")
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.maximum(se_low, se_high) / width
        frame = pd.DataFrame(
            {"mc_error_low": se_low, "mc_error_high": se_high, "mc_error_share": share}
        )
        return self._with_groups(frame)

    def _endpoint_errors(self):
        """The Monte-Carlo SEs of ``low`` and ``high`` from the replicates."""
        accel = self._arrays("acceleration") if self.method == "bca" else None
        return _intervals.endpoint_mc_error(
            np.atleast_2d(self.bootstrap_distribution),
            self._arrays("estimate"),
            self.method,
            self.confidence_level,
            accel=None if accel is None else np.nan_to_num(accel),
        )

    # -- conversion ---------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: one row per group (group columns first)."""
        cols = {
            name: self._arrays(name)
            if name not in ("n_inputs", "n_runs")
            else np.atleast_1d(np.asarray(getattr(self, name)))
            for name in (
                "estimate",
                "low",
                "high",
                "standard_error",
                "n_inputs",
                "n_runs",
            )
        }
        frame = pd.DataFrame(cols)
        if self._nested:
            frame.insert(4, "n_clusters", np.atleast_1d(np.asarray(self.n_clusters)))
        if self.share_scored is not None:
            frame.insert(3, "bound_low", self._arrays("bound_low"))
            frame.insert(4, "bound_high", self._arrays("bound_high"))
        if self.counts is not None:
            for name in self.counts.columns:
                frame[name] = self.counts[name].to_numpy()
        if self.share_scored is not None:
            frame["share_scored"] = self._arrays("share_scored")
        frame["confidence_level"] = self.confidence_level
        frame["method"] = self.method
        frame["strategy"] = self.strategy
        frame["weight"] = self.weight
        frame["metric"] = self.metric
        frame["z0"] = self._arrays("z0")
        frame["acceleration"] = self._arrays("acceleration")
        return self._with_groups(frame)

    @property
    def _nested(self) -> bool:
        """Whether the resampled clusters sit above the inputs (``input=``)."""
        return bool(self.input) and tuple(self.input) != tuple(self.cluster)

    def _resampling(self) -> str:
        if not self._nested:
            return ""
        return (
            f", resampling clusters {list(self.cluster)} with inputs "
            f"{list(self.input)} counted {'equally' if self.weight == 'input' else 'by runs'}"
        )

    def _header(self) -> str:
        return (
            f"{self.confidence_level:.0%} {self.method} interval, {self.strategy} "
            f"bootstrap ({self.n_resamples} resamples), metric={self.metric}, "
            f"weight={self.weight}{self._resampling()}{self._missing_note()}"
            f"{self._calls_note()}"
        )

    def _calls_note(self) -> str:
        """``"; callable metric: 10,001 calls on gathered rows ..."`` (or "")."""
        if self.metric_calls is None:
            return ""
        return (
            f"; callable metric: {self.metric_calls:,} calls on gathered rows "
            "(kernel='rows'; a Metric, e.g. evalci.metrics.from_sums, resamples sums)"
        )

    def _missing_note(self) -> str:
        """``"; missing='drop': scored 183 of 200 runs; 17 errored"`` (or "")."""
        if self.counts is None:
            return ""
        total = self.counts.sum(numeric_only=True)
        what = "worst-case bounds" if self.missing == "bounds" else "missing"
        return f"; {what} ({as_written(self.missing)}): {_missing_words(total)}"

    def plot(self, ax=None, *, sort=True):
        """Forest plot of each group's interval: :func:`evalci.plotting.intervals`.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; default a new figure.
        sort : bool
            Groups by estimate (True, the default) or in result order.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from evalci._base.figures import intervals

        return intervals(self, ax=ax, sort=sort)

    def _scalar_repr(self) -> str:
        return (
            f"BootstrapResult(estimate={self.estimate:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, "
            f"standard_error={self.standard_error:.3g}, n_inputs={self.n_inputs}, "
            f"n_runs={self.n_runs}, "
            + (f"n_clusters={self.n_clusters}, " if self._nested else "")
            + f"method={as_written(self.method)}, "
            f"strategy={as_written(self.strategy)}, confidence_level={self.confidence_level})"
            + ("" if self.counts is None else f"\n  {self._missing_note()[2:]}")
            + ("" if self.metric_calls is None else f"\n  {self._calls_note()[2:]}")
        )
