"""The pilot model: the user's own pilot data resampled as the population.

:class:`PilotModel` (built by :meth:`PilotModel.from_data` or
:func:`pilot_model`) is a two-stage bootstrap world: inputs drawn with
replacement, then runs of each drawn input, systems kept paired; its true
values are those of that world (optionally with the ICC corrected to the
pilot's estimate). :func:`_pilot_array` reads the pilot's tidy table into
the (input, run, system) array the model resamples.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci._base.validate import check_columns, check_finite
from evalci.engine.cube import dense_cells
from evalci.simulate.protocol import _Sampler, _truth

__all__ = ["PilotModel", "pilot_model"]


def _pilot_array(data, value, cluster, run, system):
    """The pilot's ``value`` by (input, run, system), NaN where a run is missing.

    Inputs, runs and systems are sorted by key (the layout of
    :func:`evalci.frames.dataarray.to_xarray`). Returns the float array
    ``(N, K, S)`` (``S = 1`` without ``system``), the input keys and the
    system keys (None without ``system``).
    """
    cols = [value, cluster] + [c for c in (run, system) if c is not None]
    check_columns(data, cols, "pilot_model")
    if data[value].isna().any():
        raise ValueError(
            f"`value` column {as_written(value)} has missing values; NaN marks a missing run "
            "in the pilot, so drop those rows first."
        )
    check_finite(data, [value], "value")
    dense, _, in_keys, _, sys_keys = dense_cells(
        data, value, cluster, run, system, input_name="cluster"
    )
    sys_keys = None if sys_keys is None else np.asarray(sys_keys)
    return dense.astype(float), np.asarray(in_keys), sys_keys


@dataclass(frozen=True, eq=False)
class PilotModel(_Sampler):
    """The user's own pilot data as the population (a two-stage bootstrap world).

    Each simulated data set draws ``n_inputs`` of the pilot's inputs with
    replacement and, for each drawn input, ``n_runs`` of its runs with
    replacement. Systems stay paired: an input is drawn for every system at
    once, and so is each run index (the j-th run of an input, in run order,
    for every system; so runs matched by run number stay matched, as in
    :func:`evalci.icc`'s ``matched_runs``). Build it with
    :meth:`from_data` or :func:`pilot_model`. In a simulated data set
    ``input_id`` numbers the draws 0..n_inputs-1 (an input drawn twice
    appears as two inputs) and ``correct`` holds the pilot's ``value`` (int
    when that is 0/1).

    The true values are those of this world: ``truth("accuracy")`` is each
    system's mean of per-input means (every input counting equally, the
    estimand of a balanced evaluation), ``truth("gap")`` the difference of
    those, and ``truth("icc")`` the world's intraclass correlation.

    Notes
    -----
    *The world's ICC is not the pilot's ICC estimate.* A drawn input's runs
    are i.i.d. from its ``k_i`` observed runs, whose variance is
    ``v_i = (k_i - 1) / k_i * s_i^2`` (``s_i^2`` the input's sample
    variance), and its latent rate is its observed mean ``m_i``. So the world
    has run noise ``sigma2_W* = mean_i v_i`` and data noise ``sigma2_B* =
    var_i(m_i)`` (divisor N). On a balanced pilot (k runs each) that is
    ``sigma2_W* = (k - 1) / k * MSW`` and ``sigma2_B* = (N - 1) / N * MSB /
    k``, i.e. ``sigma2_B* = sigma2_B + (MSW - MSB / N) / k``: the pilot's
    per-input means carry run noise, which the world counts as data noise on
    top of the run noise it adds again. Its ICC is higher than the pilot's
    (0.68 against 0.61 for the GPQA example's first system, k = 5) unless
    ``match_icc=True``.
    :func:`evalci.icc` on data sets from this world estimates ``sigma2_B*``
    and ``sigma2_W*`` without bias (the ANOVA estimates are unbiased for any
    i.i.d. two-stage design), and ``truth("icc")`` gives ``rho* = sigma2_B*
    / (sigma2_B* + sigma2_W*)`` exactly. The mean, the estimand of a coverage
    study, is unaffected, and so is the covariance of two systems' per-input
    means.

    *match_icc=True* corrects the ICC: with probability ``1 - c_s`` a
    simulated run of system ``s`` is instead a run drawn from the whole pilot
    (a uniform input, then a uniform run of it; drawn jointly for the
    systems, with one uniform deciding for all). The latent mean of an input
    becomes ``c_s m_i + (1 - c_s) mean``, so ``sigma2_B* = c_s^2 var_i(m_i)``
    while the total variance ``T = var_i(m_i) + mean_i v_i`` is kept
    (``sigma2_W* = T - sigma2_B*``); ``c_s^2 = rho_hat T / var_i(m_i)``
    (clipped to [0, 1]) makes the world's ICC equal to the pilot's ANOVA
    estimate ``rho_hat`` (``rho_raw``, clamped at 0). Outcomes stay values
    the pilot has (0/1 stays 0/1). The price: the covariance of two systems'
    latent means shrinks by ``c_A c_B`` (the pilot's cov of per-input means is
    kept only without the correction), so a paired gap's between-input
    variance is somewhat larger than the pilot suggests (about 14% for the
    GPQA example's pair). :meth:`components` gives the world's components
    either way.

    Attributes
    ----------
    systems : tuple of str
        The systems' names (``("A",)`` for a pilot without a system column).
    values : ndarray, shape (N, K, S)
        The pilot's outcomes by input, run (compacted: an input's runs first,
        NaN after) and system.
    n_runs_per_input : ndarray of int, shape (N,)
        Each input's number of runs (the same in every system).
    match_icc : bool
        Whether the world's ICC is corrected to the pilot's estimate (see
        Notes).

    Examples
    --------
    >>> import evalci
    >>> from evalci import simulate
    >>> pilot = evalci.load_example()            # 198 inputs x 5 runs x 2 systems
    >>> m = simulate.PilotModel.from_data(pilot, "correct", "input_id", system="system")
    >>> [round(v, 4) for v in m.truth().values()]
    [0.6758, 0.6172]
    >>> round(list(m.truth("gap").values())[0], 4)
    -0.0586
    >>> df = m.sample(198, 5, rng=0)
    >>> df.shape
    (1980, 4)
    """

    values: np.ndarray
    systems: tuple
    n_runs_per_input: np.ndarray = field(repr=False)
    match_icc: bool = False
    mixing: tuple = field(init=False, repr=False)

    def __post_init__(self):
        if self.match_icc:
            if (self.n_runs_per_input < 2).all():
                raise ValueError(
                    "`match_icc=True` needs a pilot with 2+ runs of some inputs to "
                    "estimate its ICC."
                )
            _, var_m, within = self._plain_components()
            total = var_m + within
            rho = np.clip(self.pilot_icc(), 0.0, None)
            with np.errstate(divide="ignore", invalid="ignore"):
                c2 = np.where(var_m > 0, rho * total / var_m, 0.0)
            mixing = tuple(float(x) for x in np.sqrt(np.clip(c2, 0.0, 1.0)))
        else:
            mixing = (1.0,) * len(self.systems)
        object.__setattr__(self, "mixing", mixing)

    def pilot_icc(self) -> np.ndarray:
        """The pilot's own ANOVA estimate of rho per system (``evalci.icc``'s
        ``rho_raw``: k0 for unequal runs), shape (S,)."""
        y, k = self.values, self.n_runs_per_input.astype(float)
        n = len(k)
        m = np.nanmean(y, axis=1)  # (N, S)
        msw = np.nansum((y - m[:, None, :]) ** 2, axis=1).sum(axis=0) / (k.sum() - n)
        grand = (k @ m) / k.sum()
        msb = (k @ (m - grand) ** 2) / (n - 1)
        k0 = (k.sum() - (k @ k) / k.sum()) / (n - 1)
        between = (msb - msw) / k0
        return between / (between + msw)

    @classmethod
    def from_data(
        cls, data, value, cluster, system=None, *, run="run", match_icc=False
    ):
        """A pilot model from a tidy table (one row per run).

        Parameters
        ----------
        data : pandas.DataFrame
            The pilot: one row per (input, run[, system]).
        value : str
            Outcome column (0/1 correctness, or numeric scores).
        cluster : str
            Column naming the input.
        system : str, optional
            Column naming the system; without it the pilot is one system "A".
        run : str or None
            Column of run numbers (default ``"run"``, ignored if absent): an
            input's runs are taken in this order, which pairs the systems'
            runs. None uses table order.
        match_icc : bool
            Shrink the world towards the pilot's pooled runs so that its
            intraclass correlation equals the pilot's estimate (see Notes).

        Every input must have the same number of runs (at least 1) in every
        system.
        """
        if not isinstance(cluster, str):
            raise ValueError(
                f"`cluster` must name one column; got {as_written(cluster)}."
            )
        if run is not None and run not in data.columns:
            run = None
        y, inputs, sys_keys = _pilot_array(data, value, cluster, run, system)
        systems = ("A",) if system is None else tuple(str(s) for s in sys_keys)
        # compact each (input, system): observed runs first, in run order
        order = np.argsort(np.isnan(y), axis=1, kind="stable")
        y = np.take_along_axis(y, order, axis=1)
        counts = (~np.isnan(y)).sum(axis=1)  # (N, S)
        if (counts != counts[:, :1]).any() or (counts == 0).any():
            bad = inputs[((counts != counts[:, :1]) | (counts == 0)).any(1)]
            raise ValueError(
                f"every input needs the same number of runs in every system (so "
                f"the systems can be resampled jointly); these differ: "
                f"{list(bad[:5])}{' ...' if len(bad) > 5 else ''}."
            )
        y.flags.writeable = False
        return cls(y, systems, counts[:, 0].astype(np.int64), match_icc=match_icc)

    def _draw(self, n, k, gen) -> dict:
        """Inputs, then run indices, drawn jointly for the systems."""
        idx = gen.integers(0, self.values.shape[0], n)
        j = (gen.random((n, k)) * self.n_runs_per_input[idx, None]).astype(np.int64)
        y = self.values[idx[:, None], j, :]  # (n, k, S)
        if self.match_icc:
            # with probability 1 - c_s a run is one from the whole pilot
            # (uniform input, then uniform run): drawn jointly for the systems
            u = gen.random((n, k))
            pi = gen.integers(0, self.values.shape[0], (n, k))
            pj = (gen.random((n, k)) * self.n_runs_per_input[pi]).astype(np.int64)
            own = u[:, :, None] < np.asarray(self.mixing)[None, None, :]
            y = np.where(own, y, self.values[pi, pj, :])
        y = np.moveaxis(y, -1, 0)
        if np.isin(y, (0.0, 1.0)).all():
            y = y.astype(np.int64)
        return {"correct": y}

    def _plain_components(self):
        """(mean, var_i(m_i), mean_i v_i) per system, each shape (S,)."""
        m = np.nanmean(self.values, axis=1)  # (N, S) per-input means
        v = np.nanmean((self.values - m[:, None, :]) ** 2, axis=1)  # divisor k_i
        return m.mean(axis=0), m.var(axis=0), v.mean(axis=0)

    def components(self) -> pd.DataFrame:
        """The world's true components per system: ``mean``, ``sigma2_between``,
        ``sigma2_within``, ``rho`` and the mixing weight ``c`` (see Notes)."""
        mean, var_m, within = self._plain_components()
        c2 = np.asarray(self.mixing) ** 2
        between = c2 * var_m
        within = var_m + within - between  # the total variance is kept
        return pd.DataFrame(
            {
                "system": list(self.systems),
                "mean": mean,
                "sigma2_between": between,
                "sigma2_within": within,
                "rho": between / (between + within),
                "c": np.asarray(self.mixing),
            }
        )

    def truth(self, metric: str = "accuracy") -> dict:
        """Per system: "accuracy" (mean of per-input means), "icc" (the world's
        rho*, see Notes), or "gap" of accuracy between systems.

        Parameters
        ----------
        metric : {'accuracy', 'icc', 'gap'}
            The estimand; ``"gap"`` gives ``{(a, b): accuracy_b - accuracy_a}``
            for each pair of systems ``a`` before ``b``. Default
            ``"accuracy"``.

        Returns
        -------
        dict
        """
        comp = self.components()
        values = {
            "accuracy": dict(zip(self.systems, map(float, comp["mean"]), strict=True)),
            "icc": dict(zip(self.systems, map(float, comp["rho"]), strict=True)),
        }
        return _truth(self, values, metric, ("accuracy", "icc"))


def pilot_model(
    data, value, cluster, system=None, *, run="run", match_icc=False
) -> PilotModel:
    """:meth:`PilotModel.from_data` as a function.

    Parameters
    ----------
    data : pandas.DataFrame
        The pilot: one row per (input, run[, system]).
    value : str
        Outcome column (0/1 correctness, or numeric scores).
    cluster : str
        Column naming the input.
    system : str, optional
        Column naming the system; without it the pilot is one system "A".
    run : str or None
        Column of run numbers (default ``"run"``, ignored if absent): an
        input's runs are taken in this order, which pairs the systems' runs.
        None uses table order.
    match_icc : bool
        Shrink the world towards the pilot's pooled runs so that its
        intraclass correlation equals the pilot's estimate (see
        :class:`PilotModel`).

    Returns
    -------
    PilotModel

    Examples
    --------
    >>> import evalci
    >>> m = evalci.simulate.pilot_model(evalci.load_example(), "correct", "input_id",
    ...                                 system="system")
    >>> len(m.systems), m.values.shape
    (2, (198, 5, 2))
    """
    return PilotModel.from_data(
        data, value, cluster, system, run=run, match_icc=match_icc
    )
