"""McNemar's paired test of two systems scored 0/1 on the same inputs (k=1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalci._base.messages import _FRAME_HINT, _no_missing
from evalci._base.text import as_written
from evalci._base.validate import (
    as_columns,
    check_columns,
    check_finite,
    check_frame,
    check_name,
)
from evalci._base.warnings import DegenerateDataWarning, warn
from evalci.engine.cube import factorize

__all__ = ["MCNEMAR_EXACT_BELOW", "McNemarResult", "mcnemar"]

# the exact McNemar test is used below this many discordant inputs (exact=None)
MCNEMAR_EXACT_BELOW = 25


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test of two systems scored 0/1 on the same inputs (k=1).

    Attributes
    ----------
    statistic : float
        ``"chi-squared"``: ``(|n01 - n10| - 1)**2 / (n01 + n10)``;
        ``"exact"``: ``min(n01, n10)`` (statsmodels' convention).
    pvalue : float
        Two-sided p-value.
    n01, n10 : int
        Discordant inputs: ``n01`` where ``a`` is wrong and ``b`` right,
        ``n10`` where ``a`` is right and ``b`` wrong.
    n_inputs : int
        Inputs scored by both systems.
    method : {'exact', 'chi-squared'}
        How ``pvalue`` was computed: the exact binomial test on the
        discordant inputs, or the continuity-corrected chi-squared statistic.
    a, b : object
        The two systems (values of the ``system`` column).
    """

    statistic: float
    pvalue: float
    n01: int
    n10: int
    n_inputs: int
    method: str
    a: object
    b: object

    @property
    def difference(self) -> float:
        """Accuracy of ``b`` minus accuracy of ``a``: ``(n01 - n10) / n_inputs``."""
        return (self.n01 - self.n10) / self.n_inputs

    def __repr__(self) -> str:
        return (
            f"McNemarResult(statistic={self.statistic:.4g}, pvalue={self.pvalue:.4g}, "
            f"n01={self.n01}, n10={self.n10}, n_inputs={self.n_inputs}, "
            f"method={as_written(self.method)}, a={as_written(self.a)}, b={as_written(self.b)})"
        )


def mcnemar(
    data: pd.DataFrame,
    value: str,
    cluster,
    system: str,
    a,
    b,
    *,
    exact: bool | None = None,
) -> McNemarResult:
    """McNemar's test: do two systems differ in accuracy on the same inputs?

    Only the discordant inputs carry information (seed 004): ``n01`` where
    ``a`` is wrong and ``b`` right, ``n10`` where ``a`` is right and ``b``
    wrong. Under the null of equal accuracy each discordant input is a fair
    coin flip.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table with one row per (input, system); rows of other systems
        are ignored. Never modified.
    value : str
        Column of 0/1 outcomes.
    cluster : str or list of str
        Column(s) identifying the input.
    system : str
        Column naming the system of each row.
    a, b : object
        The two systems to compare (values of ``system``).
    exact : bool or None
        ``True``: two-sided binomial test of ``n10`` out of ``n01 + n10``
        with p = 1/2 (:func:`scipy.stats.binomtest`). ``False``: chi-squared
        with continuity correction, ``(|n01 - n10| - 1)^2 / (n01 + n10)`` on 1
        degree of freedom (McNemar 1947; Edwards' correction, as in R's
        ``mcnemar.test`` and statsmodels). ``None`` (default): exact when
        ``n01 + n10 < 25``, chi-squared otherwise -- the usual textbook
        threshold below which the chi-squared approximation is poor.
        Fagerland, Lydersen & Laake (2013) find both the exact and the
        corrected test conservative.

    Returns
    -------
    McNemarResult

    Warns
    -----
    DegenerateDataWarning
        No discordant inputs: the systems agree everywhere and the test has
        no information (statistic 0, p-value 1).

    Raises
    ------
    ValueError
        When an (input, system) has more than one row (k > 1: use the paired
        cluster bootstrap instead), an input is scored by only one of the
        systems, ``a`` or ``b`` is not a value of ``system``, or values are
        not 0/1.

    See Also
    --------
    evalci.cluster_ci : with ``by=system``, paired bootstrap intervals for any k.
    evalci.sample_size : with ``paired=True, discordance=...``, the
        number of inputs at which this test (its default rule) has the wanted
        power, computed exactly.

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12(2), 153-157.
    Edwards, A. L. (1948). Note on the "correction for continuity" in testing
    the significance of the difference between correlated proportions.
    Psychometrika 13(3), 185-187.
    Fagerland, M. W., Lydersen, S., & Laake, P. (2013). The McNemar test for
    binary matched-pairs data: mid-p and asymptotic are better than exact
    conditional. BMC Medical Research Methodology 13, 91.

    Examples
    --------
    Seed 004: on 500 inputs, B alone is right on 30 and A alone on 15.

    >>> import numpy as np
    >>> import pandas as pd
    >>> from evalci import mcnemar
    >>> a = np.r_[np.zeros(30), np.ones(15), np.ones(300), np.zeros(155)]
    >>> b = np.r_[np.ones(30), np.zeros(15), np.ones(300), np.zeros(155)]
    >>> df = pd.DataFrame({"input_id": np.tile(np.arange(500), 2),
    ...                    "system": np.repeat(["A", "B"], 500),
    ...                    "correct": np.r_[a, b].astype(int)})
    >>> mcnemar(df, "correct", "input_id", "system", "A", "B")
    McNemarResult(statistic=4.356, pvalue=0.03689, n01=30, n10=15, n_inputs=500, method='chi-squared', a='A', b='B')
    """
    from scipy import stats  # slow to import: only when used

    cluster = _mcnemar_iv(data, value, cluster, system, a, b, exact)
    ya, yb = _paired_outcomes(data, value, cluster, system, a, b)
    n01 = int(((ya == 0) & (yb == 1)).sum())
    n10 = int(((ya == 1) & (yb == 0)).sum())
    m = n01 + n10
    use_exact = (m < MCNEMAR_EXACT_BELOW) if exact is None else bool(exact)
    if m == 0:
        warn(
            f"{as_written(a)} and {as_written(b)} agree on every one of the {len(ya)} inputs: "
            "with no discordant inputs McNemar's test has no information (p-value 1).",
            DegenerateDataWarning,
        )
        statistic, pvalue = 0.0, 1.0
    elif use_exact:
        statistic = float(min(n01, n10))
        pvalue = float(stats.binomtest(n10, m, 0.5).pvalue)
    else:
        statistic = (abs(n01 - n10) - 1) ** 2 / m
        pvalue = float(stats.chi2.sf(statistic, 1))
    return McNemarResult(
        statistic=float(statistic),
        pvalue=pvalue,
        n01=n01,
        n10=n10,
        n_inputs=len(ya),
        method="exact" if use_exact else "chi-squared",
        a=a,
        b=b,
    )


def _mcnemar_iv(data, value, cluster, system, a, b, exact) -> list:
    """Validate the arguments of :func:`mcnemar`; the cluster columns as a list."""
    check_frame(data, _FRAME_HINT)
    check_name(value, "value")
    check_name(system, "system")
    if exact is not None and not isinstance(exact, (bool, np.bool_)):
        raise ValueError(
            f"`exact` must be True (binomial test), False (chi-squared) or None "
            f"(exact below {MCNEMAR_EXACT_BELOW} discordant inputs); got {as_written(exact)}."
        )
    cluster = as_columns(cluster, "cluster", allow_none=False)
    check_columns(data, [value], "value")
    check_columns(data, cluster, "cluster")
    check_columns(data, [system], "system")
    if system in cluster:
        raise ValueError(
            f"`system` column {as_written(system)} is also in `cluster`; `cluster` names the "
            "input, `system` the two things compared on it."
        )
    sys_col = data[system]
    for name, s in (("a", a), ("b", b)):
        if not (sys_col == s).any():
            shown = ", ".join(map(as_written, pd.unique(sys_col)[:10]))
            raise ValueError(
                f"`{name}`: {as_written(s)} is not a value of the `system` column {as_written(system)}; "
                f"values: {shown}."
            )
    if a == b:
        raise ValueError(
            f"`a` and `b` are the same system ({as_written(a)}); compare two systems."
        )
    return cluster


def _paired_outcomes(data, value, cluster, system, a, b):
    """The 0/1 outcomes of ``a`` and of ``b`` on each input (one row each, both present)."""
    sys_col = data[system]
    is_b = (sys_col == b).to_numpy()
    keep = (sys_col == a).to_numpy() | is_b
    frame = data.loc[keep]
    is_b = is_b[keep]
    _no_missing(frame, value, "value", "fill them (e.g. count a missing answer as 0)")
    check_finite(frame, [value], "value")
    y = frame[value]
    bad = ~y.isin([0, 1])
    if bad.any():
        raise ValueError(
            f"`value` column {as_written(value)} must hold only 0/1 for McNemar's test; found "
            f"{as_written(y[bad].iloc[0])} in {int(bad.sum())} rows."
        )
    codes, keys = factorize(frame, cluster, "cluster")
    n = len(keys)
    counts = np.bincount(codes * 2 + is_b, minlength=2 * n).reshape(n, 2)
    _one_row_each_iv(counts, keys, cluster, system, a, b)
    ya = np.empty(n)
    yb = np.empty(n)
    yv = y.to_numpy(dtype=float)
    ya[codes[~is_b]] = yv[~is_b]
    yb[codes[is_b]] = yv[is_b]
    return ya, yb


def _one_row_each_iv(counts, keys, cluster, system, a, b) -> None:
    """Refuse k > 1 rows of an (input, system) and inputs scored by one system only."""
    if (counts > 1).any():
        i, j = np.argwhere(counts > 1)[0]
        raise ValueError(
            f"McNemar's test assumes one outcome per input and system (k=1), but "
            f"input {as_written(keys[i])} has {int(counts[i, j])} rows for system "
            f"{as_written(b if j else a)}. With k > 1 runs per input use the paired cluster "
            "bootstrap: df.evalci.compare(...) or evalci.cluster_ci(..., "
            f"by={as_written(system)}), which resamples inputs with all their runs."
        )
    only = [
        np.flatnonzero((counts[:, j] == 1) & (counts[:, 1 - j] == 0)) for j in (0, 1)
    ]
    if len(only[0]) or len(only[1]):
        parts = []
        for j, s in ((0, a), (1, b)):
            if len(only[j]):
                shown = ", ".join(as_written(keys[i]) for i in only[j][:5])
                more = f" (and {len(only[j]) - 5} more)" if len(only[j]) > 5 else ""
                parts.append(f"{len(only[j])} only for {as_written(s)}: {shown}{more}")
        raise ValueError(
            "McNemar's test needs both systems scored on the same inputs; inputs "
            f"scored by one system only (`cluster` {cluster}): {'; '.join(parts)}. "
            "Drop them or score them with both systems."
        )
