"""Seeded data from seed 000's confusion-matrix model, for docs, tests and coverage.

The models (issue 11) follow one protocol, :class:`Model`:
:class:`ConfusionModel` (seed 000's classifier, any matrices, several
systems), :class:`BetaBernoulli` (Beta-distributed per-input rates with a
given mean and ICC), :class:`PairedSystems` (two systems with correlated
per-input rates and an exact gap) and :class:`PilotModel` (the user's pilot
data resampled as the population). Each ``model.sample(n_inputs, n_runs,
rng)`` is one seeded data set; ``model.truth(metric)`` its true values.

Seed 000 simulates a 4-label classifier from a "true" confusion matrix: each
input's true label is drawn from the matrix's row marginal, then each of its
``k`` runs predicts a label drawn independently from the row of that true
label. Single-run accuracy is then ``trace / total`` (0.70 for the seed
matrix) and the correctness of one run has intraclass correlation
``rho = 0.025065`` (PAPER-NOTES.md).

Examples
--------
>>> import evalci
>>> from evalci import simulate
>>> df = simulate.confusion_model(200, 5, rng=0)
>>> df.shape
(1000, 5)
>>> round(simulate.true_accuracy(simulate.SEED000_CONFUSION), 2)
0.7
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

__all__ = [
    "BetaBernoulli",
    "ConfusionModel",
    "Model",
    "PairedSystems",
    "PilotModel",
    "SEED000_CONFUSION",
    "confusion_model",
    "confusion_model_arrays",
    "intraclass_correlation",
    "pilot_model",
    "true_accuracy",
    "true_kappa",
    "variance_components",
]

#: Seed 000's "true" confusion matrix: rows are true labels 0..3, columns the
#: predicted labels 0..3 (counts; only their proportions matter).
SEED000_CONFUSION = np.array(
    [
        [120, 30, 5, 0],
        [25, 80, 20, 5],
        [5, 20, 70, 15],
        [0, 5, 20, 80],
    ],
    dtype=float,
)
SEED000_CONFUSION.flags.writeable = False


def _check_confusion(confusion) -> np.ndarray:
    c = np.asarray(confusion, dtype=float)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] < 2:
        raise ValueError(
            f"`confusion` must be a square C x C matrix with C >= 2; got shape {c.shape}."
        )
    if not np.isfinite(c).all() or (c < 0).any():
        raise ValueError("`confusion` must hold finite, non-negative counts.")
    if (c.sum(axis=1) <= 0).any():
        raise ValueError("every row (true label) of `confusion` needs a positive sum.")
    return c


def _inverse_cdf(cum: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Category of each uniform ``u`` given cumulative probabilities ``cum``.

    ``cum[..., :-1]`` holds the inner cut points; the last one (1 up to
    rounding) is left out, so the result is always a valid category.
    """
    return (u[..., None] >= cum[..., :-1]).sum(axis=-1)


def confusion_model_arrays(
    n_trials: int,
    n_inputs: int,
    k: int,
    *,
    confusion=SEED000_CONFUSION,
    rng=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Many simulated data sets at once, as arrays (vectorised; for coverage studies).

    Parameters
    ----------
    n_trials : int
        Number of independent data sets.
    n_inputs : int
        Inputs (clusters) per data set, N.
    k : int
        Runs per input.
    confusion : array_like, shape (C, C)
        Population confusion matrix (counts or proportions), rows = true label.
    rng : None, int or numpy.random.Generator
        Seed or generator (``numpy.random.default_rng(rng)``).

    Returns
    -------
    labels : ndarray of int, shape (n_trials, n_inputs)
        True label of each input, drawn from the row marginal of ``confusion``.
    preds : ndarray of int, shape (n_trials, n_inputs, k)
        Predicted labels, drawn independently given the true label from the
        normalised row ``confusion[label]``.

    Notes
    -----
    All labels are drawn first (one ``random`` call), then all predictions
    (a second one), so ``confusion_model(n, k, rng=s)`` equals trial 0 of
    ``confusion_model_arrays(1, n, k, rng=s)``.

    Examples
    --------
    >>> from evalci import simulate
    >>> labels, preds = simulate.confusion_model_arrays(3, 200, 5, rng=0)
    >>> labels.shape, preds.shape
    ((3, 200), (3, 200, 5))
    >>> float((preds == labels[..., None]).mean()) > 0.6
    True
    """
    c = _check_confusion(confusion)
    for name, v in (("n_trials", n_trials), ("n_inputs", n_inputs), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {v!r}.")
    gen = np.random.default_rng(rng)
    marginal_cum = np.cumsum(c.sum(axis=1)) / c.sum()
    row_cum = np.cumsum(c, axis=1) / c.sum(axis=1, keepdims=True)
    labels = _inverse_cdf(marginal_cum, gen.random((n_trials, n_inputs)))
    preds = _inverse_cdf(
        row_cum[labels][:, :, None, :], gen.random((n_trials, n_inputs, k))
    )
    return labels.astype(np.int64), preds.astype(np.int64)


def confusion_model(
    n_inputs: int,
    k,
    *,
    confusion=SEED000_CONFUSION,
    rng=None,
) -> pd.DataFrame:
    """One simulated evaluation from seed 000's confusion-matrix model, tidy.

    Each input's true label is drawn from the row marginal of ``confusion``;
    each of its ``k`` runs then predicts a label drawn independently from the
    row of that true label (seed 000, "Data are simulated by first random
    sampling true labels according to the true marginal, then random sampling
    predicted labels given true labels").

    Parameters
    ----------
    n_inputs : int
        Number of inputs, N.
    k : int or array_like of int
        Runs per input: one number, or one per input (length ``n_inputs``) for
        unequal numbers of runs.
    confusion : array_like, shape (C, C)
        Population confusion matrix, rows = true label. Default: seed 000's.
    rng : None, int or numpy.random.Generator
        Seed or generator.

    Returns
    -------
    pandas.DataFrame
        One row per (input, run), columns ``input_id, run, label, pred,
        correct`` (``correct = int(pred == label)``), sorted by input then run.

    See Also
    --------
    confusion_model_arrays : the same model for many trials at once.

    Examples
    --------
    >>> import evalci
    >>> from evalci import simulate
    >>> df = simulate.confusion_model(200, 5, rng=1)
    >>> list(df.columns)
    ['input_id', 'run', 'label', 'pred', 'correct']
    >>> res = evalci.cluster_ci(df, "correct", cluster="input_id",
    ...                         n_resamples=2000, rng=0)
    >>> bool(res.low < res.estimate < res.high)
    True
    """
    ks = np.asarray(k)
    if ks.ndim == 0:
        ks = np.full(n_inputs, int(ks))
    if (
        ks.shape != (n_inputs,)
        or not np.issubdtype(ks.dtype, np.integer)
        or (ks < 1).any()
    ):
        raise ValueError(
            f"`k` must be a positive integer or {n_inputs} positive integers "
            f"(one per input); got {k!r}."
        )
    labels, preds = confusion_model_arrays(
        1, n_inputs, int(ks.max()), confusion=confusion, rng=rng
    )
    labels, preds = labels[0], preds[0]
    keep = np.arange(preds.shape[1])[None, :] < ks[:, None]  # first k_i runs
    input_id = np.repeat(np.arange(n_inputs), ks)
    label = labels[input_id]
    pred = preds[keep]
    return pd.DataFrame(
        {
            "input_id": input_id,
            "run": np.concatenate([np.arange(n) for n in ks]),
            "label": label,
            "pred": pred,
            "correct": (pred == label).astype(np.int64),
        }
    )


def true_accuracy(confusion) -> float:
    """Single-run accuracy of the population: ``trace / total`` (0.70 for seed 000).

    Parameters
    ----------
    confusion : array_like, shape (C, C)
        Population confusion counts (or shares), rows the true label and
        columns the predicted one, e.g. :data:`SEED000_CONFUSION`; only the
        proportions matter.

    Returns
    -------
    float

    Examples
    --------
    >>> from evalci import simulate
    >>> simulate.true_accuracy(simulate.SEED000_CONFUSION)
    0.7
    """
    c = _check_confusion(confusion)
    return float(np.trace(c) / c.sum())


def true_kappa(confusion) -> float:
    """Cohen's kappa of the normalised population confusion matrix.

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the diagonal share and
    ``p_e`` the sum over labels of (true share x predicted share) (Cohen,
    1960). This is the estimand of kappa on N x k pooled runs.

    Parameters
    ----------
    confusion : array_like, shape (C, C)
        Population confusion counts (or shares), rows the true label and
        columns the predicted one, e.g. :data:`SEED000_CONFUSION`; only the
        proportions matter.

    Returns
    -------
    float

    Examples
    --------
    >>> from evalci import simulate
    >>> round(simulate.true_kappa(simulate.SEED000_CONFUSION), 6)
    0.596883
    """
    c = _check_confusion(confusion)
    p = c / c.sum()
    p_o = np.trace(p)
    p_e = float(p.sum(axis=1) @ p.sum(axis=0))
    return float((p_o - p_e) / (1.0 - p_e))


def variance_components(confusion) -> tuple[float, float]:
    """Between- and within-input variance of single-run correctness.

    An input with true label ``y`` is answered correctly with probability
    ``p_y = confusion[y, y] / confusion[y].sum()``; inputs have label ``y``
    with probability ``w_y`` (row marginal). By the law of total variance
    (seed 000, "Choosing N and k"), ``sigma2_B = sum_y w_y (p_y - theta)^2``
    and ``sigma2_W = sum_y w_y p_y (1 - p_y)``, which add up to
    ``theta (1 - theta)``.

    Parameters
    ----------
    confusion : array_like, shape (C, C)
        Population confusion counts (or shares), rows the true label and
        columns the predicted one, e.g. :data:`SEED000_CONFUSION`; only the
        proportions matter.

    Returns
    -------
    sigma2_B, sigma2_W : float

    Examples
    --------
    >>> from evalci import simulate
    >>> b, w = simulate.variance_components(simulate.SEED000_CONFUSION)
    >>> round(b, 7), round(w, 7)
    (0.0052637, 0.2047363)
    """
    c = _check_confusion(confusion)
    w = c.sum(axis=1) / c.sum()
    p = np.diag(c) / c.sum(axis=1)
    theta = float(w @ p)
    between = float(w @ (p - theta) ** 2)
    within = float(w @ (p * (1.0 - p)))
    return between, within


def intraclass_correlation(confusion) -> float:
    """Intraclass correlation ``rho = sigma2_B / (sigma2_B + sigma2_W)`` of correctness.

    The share of the variance of one run's 0/1 correctness that lies between
    inputs; seed 000's width factor for k runs is ``sqrt(rho + (1 - rho) / k)``.

    Parameters
    ----------
    confusion : array_like, shape (C, C)
        Population confusion counts (or shares), rows the true label and
        columns the predicted one, e.g. :data:`SEED000_CONFUSION`; only the
        proportions matter.

    Returns
    -------
    float

    Examples
    --------
    >>> from evalci import simulate
    >>> round(simulate.intraclass_correlation(simulate.SEED000_CONFUSION), 6)
    0.025065
    """
    between, within = variance_components(confusion)
    return between / (between + within)


# ---------------------------------------------------------------------------
# Models: seeded generators of whole data sets, one protocol
# ---------------------------------------------------------------------------
#
# Every model is a frozen dataclass with
#
#   systems : tuple[str, ...]
#   sample(n_inputs, n_runs, rng=None, *, as_dataarray=False)
#       -> tidy DataFrame (input_id, run, system, correct [, pred, label]),
#          sorted by system, input, run; or the DataArray of ``correct`` over
#          (input, run, system) built by ``df.evalci.to_xarray("correct")``.
#   truth(metric="accuracy") -> dict
#       {system: value}; "gap" -> {(a, b): value_b - value_a} for every pair
#       of systems a before b in ``systems`` order.


@runtime_checkable
class Model(Protocol):
    """What every model of this module provides (for :mod:`evalci.coverage`).

    ``systems`` names the systems; ``sample(n_inputs, n_runs, rng=None, *,
    as_dataarray=False)`` returns one simulated data set, a tidy DataFrame
    (``input_id`` 0..N-1, ``run`` 0..k-1, ``system``, ``correct`` [, ``pred``,
    ``label``], sorted by system, input, run) or the DataArray of ``correct``
    over (input, run, system) that ``df.evalci.to_xarray("correct")`` builds;
    ``truth(metric="accuracy")`` returns ``{system: value}``, and for
    ``"gap"`` ``{(a, b): value_b - value_a}`` for each pair of systems ``a``
    before ``b``.

    Examples
    --------
    >>> from evalci import simulate
    >>> isinstance(simulate.BetaBernoulli(0.7, 0.2), simulate.Model)
    True
    """

    systems: tuple

    def sample(self, n_inputs: int, n_runs: int, rng=None, *, as_dataarray=False):
        """One simulated data set."""

    def truth(self, metric: str = "accuracy") -> dict:
        """True value per system (or per pair, for "gap")."""


def _positive_int(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {v!r}.")
    return int(v)


def _system_names(n_systems, name: str = "n_systems") -> tuple[str, ...]:
    """``n_systems`` as a tuple of names: 1 -> ("A",), 2 -> ("A", "B"), names kept."""
    if isinstance(n_systems, (int, np.integer)) and not isinstance(n_systems, bool):
        n = _positive_int(name, n_systems)
        if n > 26:
            raise ValueError(f"`{name}` above 26 needs explicit system names.")
        return tuple(chr(ord("A") + s) for s in range(n))
    if isinstance(n_systems, str):
        n_systems = (n_systems,)
    try:
        names = tuple(str(s) for s in n_systems)
    except TypeError:
        raise ValueError(
            f"`{name}` must be a positive integer or a sequence of system names; "
            f"got {n_systems!r}."
        ) from None
    if not names or len(set(names)) != len(names):
        raise ValueError(f"`{name}` must name distinct systems; got {n_systems!r}.")
    return names


def _unit_open(name: str, v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a number in (0, 1); got {v!r}.") from None
    if not 0.0 < x < 1.0:
        raise ValueError(f"`{name}` must lie strictly between 0 and 1; got {v!r}.")
    return x


def _tidy(systems, columns: dict) -> pd.DataFrame:
    """Tidy frame from (system, input, run) arrays, sorted system-major."""
    s, n, k = columns["correct"].shape
    out = {
        "input_id": np.tile(np.repeat(np.arange(n), k), s),
        "run": np.tile(np.arange(k), s * n),
        "system": np.repeat(np.array(systems, dtype=object), n * k),
    }
    for col, arr in columns.items():
        out[col] = np.asarray(arr).reshape(-1)
    return pd.DataFrame(out)


def _finish(systems, arrays: dict, as_dataarray: bool):
    df = _tidy(systems, arrays)
    if as_dataarray:
        return df.evalci.to_xarray("correct")
    return df


def _truth(model, values: dict, metric: str, metrics: tuple[str, ...]) -> dict:
    """``values`` ({metric: {system: v}}) looked up, with "gap" from accuracy."""
    if metric == "gap":
        acc = values["accuracy"]
        sy = model.systems
        if len(sy) < 2:
            raise ValueError(
                '`metric="gap"` needs a model with two or more systems; this one '
                f"has {sy}."
            )
        return {
            (a, b): float(acc[b] - acc[a])
            for i, a in enumerate(sy)
            for b in sy[i + 1 :]
        }
    if metric not in values:
        raise ValueError(
            f"`metric` must be one of {metrics + ('gap',)} for "
            f"{type(model).__name__}; got {metric!r}."
        )
    return dict(values[metric])


@dataclass(frozen=True, eq=False)
class ConfusionModel:
    """Seed 000's confusion-matrix classifier, for one or several systems.

    Each input's true label is drawn from the row marginal of the confusion
    matrix; each system's ``k`` runs on that input then predict labels drawn
    independently from the row of the true label in *that system's* matrix
    (:func:`confusion_model`). Systems share the inputs and their labels.

    Parameters
    ----------
    confusion : array_like (C, C) or sequence of them
        One population confusion matrix (counts or proportions; rows = true
        labels) for every system, or one per system. All matrices must have
        the same row marginal (share of each true label), since the systems
        see the same inputs. Default (None): seed 000's
        (:data:`SEED000_CONFUSION`).
    n_systems : int or sequence of str
        Number of systems (named "A", "B", ...) or their names. With one
        matrix per system, 1 (the default) takes the number from the list.

    Attributes
    ----------
    systems : tuple of str
    confusions : tuple of ndarray, one per system

    Notes
    -----
    Draw order: all labels, then the predictions of each system in turn. With
    one system and a seed ``s``, ``ConfusionModel().sample(n, k, rng=s)``
    equals ``confusion_model(n, k, rng=s)`` (plus a ``system`` column).

    Examples
    --------
    >>> from evalci import simulate
    >>> m = simulate.ConfusionModel()
    >>> df = m.sample(200, 5, rng=0)
    >>> list(df.columns)
    ['input_id', 'run', 'system', 'correct', 'pred', 'label']
    >>> m.truth("accuracy"), round(m.truth("kappa")["A"], 6)
    ({'A': 0.7}, 0.596883)
    >>> m2 = simulate.ConfusionModel(n_systems=("direct", "cot"))
    >>> dict(m2.sample(50, 3, rng=1, as_dataarray=True).sizes)
    {'input': 50, 'run': 3, 'system': 2}
    """

    confusion: object = None
    n_systems: InitVar[object] = 1
    systems: tuple = field(init=False)
    confusions: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self, n_systems):
        if self.confusion is None:
            object.__setattr__(self, "confusion", SEED000_CONFUSION)
        c = (
            np.asarray(self.confusion, dtype=float)
            if not isinstance(self.confusion, (list, tuple))
            else None
        )
        if c is not None and c.ndim == 2:
            mats = None
        else:
            try:
                mats = [np.asarray(m, dtype=float) for m in self.confusion]
            except (TypeError, ValueError):
                raise ValueError(
                    "`confusion` must be a C x C matrix or a sequence of them."
                ) from None
            if mats and all(m.ndim == 0 for m in mats):
                mats = None  # a flat list of numbers: let _check_confusion say so
            elif mats and mats[0].ndim == 1:
                mats = None  # a nested list: one matrix
        if mats is None:
            one = _check_confusion(self.confusion).copy()
            systems = _system_names(n_systems)
            mats = [one] * len(systems)
        else:
            mats = [_check_confusion(m).copy() for m in mats]  # ours to freeze
            if isinstance(n_systems, (int, np.integer)) and n_systems == 1:
                systems = _system_names(len(mats))
            else:
                systems = _system_names(n_systems)
            if len(systems) != len(mats):
                raise ValueError(
                    f"`n_systems` names {len(systems)} systems but `confusion` holds "
                    f"{len(mats)} matrices."
                )
            if len({m.shape for m in mats}) != 1:
                raise ValueError(
                    "every matrix in `confusion` must have the same shape."
                )
            w0 = mats[0].sum(axis=1) / mats[0].sum()
            for m in mats[1:]:
                if not np.allclose(m.sum(axis=1) / m.sum(), w0, rtol=0, atol=1e-9):
                    raise ValueError(
                        "every matrix in `confusion` must have the same row marginal "
                        "(share of each true label): the systems share the inputs."
                    )
        for m in mats:
            m.flags.writeable = False
        object.__setattr__(self, "systems", systems)
        object.__setattr__(self, "confusions", tuple(mats))

    def sample(self, n_inputs, n_runs, rng=None, *, as_dataarray=False):
        """One simulated data set (see the class docstring for the layout).

        Parameters
        ----------
        n_inputs, n_runs : int
            N inputs and k runs of each, positive.
        rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
            Seed (passed to :func:`numpy.random.default_rng`); the same seed
            gives the same data set.
        as_dataarray : bool
            Return the DataArray of ``correct`` over (input, run, system)
            instead of the tidy table.

        Returns
        -------
        pandas.DataFrame or xarray.DataArray
        """
        n = _positive_int("n_inputs", n_inputs)
        k = _positive_int("n_runs", n_runs)
        gen = np.random.default_rng(rng)
        c0 = self.confusions[0]
        marginal_cum = np.cumsum(c0.sum(axis=1)) / c0.sum()
        labels = _inverse_cdf(marginal_cum, gen.random((1, n)))[0].astype(np.int64)
        preds = np.empty((len(self.systems), n, k), dtype=np.int64)
        for s, c in enumerate(self.confusions):
            row_cum = np.cumsum(c, axis=1) / c.sum(axis=1, keepdims=True)
            preds[s] = _inverse_cdf(
                row_cum[labels][None, :, None, :], gen.random((1, n, k))
            )[0]
        lab = np.broadcast_to(labels[None, :, None], preds.shape)
        arrays = {
            "correct": (preds == lab).astype(np.int64),
            "pred": preds,
            "label": np.ascontiguousarray(lab),
        }
        return _finish(self.systems, arrays, as_dataarray)

    def truth(self, metric: str = "accuracy") -> dict:
        """True value per system: "accuracy", "kappa" (Cohen's), or "gap" of accuracy.

        Parameters
        ----------
        metric : {'accuracy', 'kappa', 'gap'}
            The estimand; ``"gap"`` gives ``{(a, b): accuracy_b - accuracy_a}``
            for each pair of systems ``a`` before ``b``. Default
            ``"accuracy"``.

        Returns
        -------
        dict
        """
        values = {
            "accuracy": {
                s: true_accuracy(c)
                for s, c in zip(self.systems, self.confusions, strict=True)
            },
            "kappa": {
                s: true_kappa(c)
                for s, c in zip(self.systems, self.confusions, strict=True)
            },
        }
        return _truth(self, values, metric, ("accuracy", "kappa"))


def _beta_params(accuracy: float, icc: float) -> tuple[float, float]:
    """Beta(a, b) with mean ``accuracy`` and one-run ICC ``1 / (a + b + 1) = icc``."""
    total = 1.0 / icc - 1.0
    return accuracy * total, (1.0 - accuracy) * total


def _per_system(name: str, v, n: int) -> tuple[float, ...]:
    vals = np.atleast_1d(np.asarray(v, dtype=object))
    if vals.ndim != 1 or len(vals) not in (1, n):
        raise ValueError(
            f"`{name}` must be one number or one per system ({n}); got {v!r}."
        )
    vals = np.broadcast_to(vals, (n,))
    return tuple(_unit_open(name, x) for x in vals)


class _FromRates:
    """``sample`` for the models that draw per-input success rates (``rates``)
    and then each run as a Bernoulli of its input's rate."""

    def sample(self, n_inputs, n_runs, rng=None, *, as_dataarray=False):
        """One simulated data set: tidy ``input_id, run, system, correct``.

        Parameters
        ----------
        n_inputs, n_runs : int
            N inputs and k runs of each, positive.
        rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
            Seed (passed to :func:`numpy.random.default_rng`); the same seed
            gives the same data set.
        as_dataarray : bool
            Return the DataArray of ``correct`` over (input, run, system)
            instead of the tidy table.

        Returns
        -------
        pandas.DataFrame or xarray.DataArray
        """
        n = _positive_int("n_inputs", n_inputs)
        k = _positive_int("n_runs", n_runs)
        gen = np.random.default_rng(rng)
        p = self.rates(n, gen)
        correct = (gen.random(p.shape + (k,)) < p[:, :, None]).astype(np.int64)
        return _finish(self.systems, {"correct": correct}, as_dataarray)


@dataclass(frozen=True)
class BetaBernoulli(_FromRates):
    """Inputs of varying difficulty: p_i ~ Beta(a, b), runs ~ Bernoulli(p_i).

    ``a`` and ``b`` are set from the mean and the intraclass correlation of a
    single run's 0/1 outcome: a Beta(a, b) mixture of Bernoullis has mean
    ``a / (a + b)`` and ICC ``1 / (a + b + 1)`` (between-input variance
    ``mu (1 - mu) / (a + b + 1)`` over the total ``mu (1 - mu)``), so
    ``a + b = 1 / icc - 1``, ``a = accuracy (a + b)``, ``b = (1 - accuracy)
    (a + b)``. Several systems get independent per-input rates (no pairing
    beyond sharing input ids); see :class:`PairedSystems` for correlated ones.

    Parameters
    ----------
    accuracy : float or sequence of float
        Mean single-run accuracy, in (0, 1); one for all systems or one each.
    icc : float or sequence of float
        Intraclass correlation of one run's correctness, in (0, 1).
    n_systems : int or sequence of str
        Number of systems ("A", "B", ...) or their names.

    Examples
    --------
    >>> from evalci import simulate
    >>> m = simulate.BetaBernoulli(0.7, 0.3)
    >>> round(m.a[0], 4), round(m.b[0], 4)      # a + b = 1 / 0.3 - 1
    (1.6333, 0.7)
    >>> df = m.sample(100, 4, rng=0)
    >>> df.shape, m.truth()
    ((400, 4), {'A': 0.7})
    """

    accuracy: object
    icc: object
    n_systems: InitVar[object] = 1
    systems: tuple = field(init=False)
    a: tuple = field(init=False, repr=False)
    b: tuple = field(init=False, repr=False)

    def __post_init__(self, n_systems):
        systems = _system_names(n_systems)
        acc = _per_system("accuracy", self.accuracy, len(systems))
        icc = _per_system("icc", self.icc, len(systems))
        ab = [_beta_params(m, r) for m, r in zip(acc, icc, strict=True)]
        object.__setattr__(self, "accuracy", acc if len(acc) > 1 else acc[0])
        object.__setattr__(self, "icc", icc if len(icc) > 1 else icc[0])
        object.__setattr__(self, "systems", systems)
        object.__setattr__(self, "a", tuple(x for x, _ in ab))
        object.__setattr__(self, "b", tuple(y for _, y in ab))

    def rates(self, n_inputs, rng=None) -> np.ndarray:
        """Latent per-input success rates, shape (n_systems, n_inputs).

        Parameters
        ----------
        n_inputs : int
            Inputs to draw, positive.
        rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
            Seed (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray
        """
        n = _positive_int("n_inputs", n_inputs)
        gen = np.random.default_rng(rng)
        return np.stack(
            [gen.beta(a, b, n) for a, b in zip(self.a, self.b, strict=True)]
        )

    def truth(self, metric: str = "accuracy") -> dict:
        """True mean accuracy per system ("accuracy"), or "gap" between systems.

        Parameters
        ----------
        metric : {'accuracy', 'gap'}
            The estimand; ``"gap"`` gives ``{(a, b): accuracy_b - accuracy_a}``
            for each pair of systems ``a`` before ``b``. Default
            ``"accuracy"``.

        Returns
        -------
        dict
        """
        acc = np.broadcast_to(
            np.asarray(self.accuracy, dtype=float), (len(self.systems),)
        )
        values = {
            "accuracy": {s: float(v) for s, v in zip(self.systems, acc, strict=True)}
        }
        return _truth(self, values, metric, ("accuracy",))


_GH_NODES = 96  # Gauss-Hermite nodes per dimension for the copula moments


def _copula_moment(a1, b1, a2, b2, r: float) -> float:
    """E[p1 p2] for Beta marginals joined by a Gaussian copula of correlation r.

    p_j = I^{-1}(Phi(z_j); a_j, b_j) with (z1, z2) standard bivariate normal,
    z2 = r z1 + sqrt(1 - r^2) w; 2-D Gauss-Hermite quadrature over (z1, w).
    """
    from scipy import special

    x, w = np.polynomial.hermite_e.hermegauss(_GH_NODES)
    w = w / w.sum()
    p1 = special.betaincinv(a1, b1, special.ndtr(x))
    z2 = r * x[:, None] + np.sqrt(max(1.0 - r * r, 0.0)) * x[None, :]
    p2 = special.betaincinv(a2, b2, special.ndtr(z2))
    return float(w @ (p1[:, None] * p2) @ w)


@dataclass(frozen=True)
class PairedSystems(_FromRates):
    """Two systems, "A" and "B", whose per-input success rates are correlated.

    Each input has latent rates ``(p_A, p_B)`` with Beta marginals (mean
    ``accuracy_a`` and ``accuracy_a + gap``, each with one-run intraclass
    correlation ``icc``, as in :class:`BetaBernoulli`) joined by a Gaussian
    copula: ``p_j = F_j^{-1}(Phi(z_j))`` with ``(z_A, z_B)`` bivariate normal.
    The copula's correlation is solved for (2-D Gauss-Hermite quadrature,
    96 x 96 nodes, and Brent's method) so that the *Pearson correlation of
    the latent rates* ``(p_A, p_B)`` is ``correlation`` (checked against
    4 x 10^6 Monte Carlo pairs, U-shaped marginals included: agreement within
    their error, 5e-4). Runs are independent Bernoulli(p_j) draws given the
    input, so the two systems' runs are independent given the input.

    The population gap is exact by construction: the marginals are Beta with
    known means, so ``truth("gap")`` is ``gap`` (no simulation, no
    quadrature).

    Parameters
    ----------
    accuracy_a : float
        Mean single-run accuracy of system A, in (0, 1).
    gap : float
        Accuracy of B minus that of A; ``accuracy_a + gap`` must lie in (0, 1).
    icc : float
        Intraclass correlation of one run's correctness (both systems), (0, 1).
    correlation : float
        Pearson correlation of the two systems' per-input rates, in (-1, 1)
        and inside the range the two marginals allow (else ``ValueError``
        states that range).

    Attributes
    ----------
    copula_correlation : float
        The correlation of the latent normals that gives ``correlation``.

    Examples
    --------
    >>> from evalci import simulate
    >>> m = simulate.PairedSystems(0.6, 0.05, icc=0.4, correlation=0.7)
    >>> m.truth("gap")
    {('A', 'B'): 0.05}
    >>> round(m.copula_correlation, 2)
    0.73
    >>> m.sample(80, 3, rng=0).groupby("system").correct.size().tolist()
    [240, 240]
    """

    accuracy_a: float
    gap: float
    icc: float
    correlation: float
    systems: tuple = field(default=("A", "B"), init=False)
    copula_correlation: float = field(init=False, repr=False)

    def __post_init__(self):
        from scipy import optimize

        acc_a = _unit_open("accuracy_a", self.accuracy_a)
        try:
            gap = float(self.gap)
        except (TypeError, ValueError):
            raise ValueError(f"`gap` must be a number; got {self.gap!r}.") from None
        if not 0.0 < acc_a + gap < 1.0:
            raise ValueError(
                f"`gap` must keep B's accuracy accuracy_a + gap in (0, 1); got "
                f"{acc_a} + {gap}."
            )
        icc = _unit_open("icc", self.icc)
        try:
            rho = float(self.correlation)
        except (TypeError, ValueError):
            rho = np.nan
        if not -1.0 < rho < 1.0:
            raise ValueError(
                f"`correlation` must lie strictly between -1 and 1; got "
                f"{self.correlation!r}."
            )
        (a1, b1), (a2, b2) = _beta_params(acc_a, icc), _beta_params(acc_a + gap, icc)
        sd1 = np.sqrt(acc_a * (1 - acc_a) * icc)
        sd2 = np.sqrt((acc_a + gap) * (1 - acc_a - gap) * icc)

        def pearson(r):
            m = _copula_moment(a1, b1, a2, b2, r)
            return (m - acc_a * (acc_a + gap)) / (sd1 * sd2)

        lo, hi = pearson(-1.0), pearson(1.0)
        if not lo < rho < hi:
            raise ValueError(
                f"`correlation` {rho} is outside the range these marginals allow, "
                f"({lo:.4f}, {hi:.4f})."
            )
        r = optimize.brentq(lambda r: pearson(r) - rho, -1.0, 1.0, xtol=1e-12)
        for name, v in (("accuracy_a", acc_a), ("gap", gap), ("icc", icc)):
            object.__setattr__(self, name, v)
        object.__setattr__(self, "correlation", rho)
        object.__setattr__(self, "copula_correlation", float(r))
        object.__setattr__(self, "_ab", ((a1, b1), (a2, b2)))

    def rates(self, n_inputs, rng=None) -> np.ndarray:
        """Latent per-input success rates, shape (2, n_inputs): rows A, B.

        Parameters
        ----------
        n_inputs : int
            Inputs to draw, positive.
        rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
            Seed (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray
        """
        from scipy import special

        n = _positive_int("n_inputs", n_inputs)
        gen = np.random.default_rng(rng)
        z = gen.standard_normal((2, n))
        r = self.copula_correlation
        z[1] = r * z[0] + np.sqrt(1.0 - r * r) * z[1]
        u = special.ndtr(z)
        (a1, b1), (a2, b2) = self._ab
        return np.stack(
            [special.betaincinv(a1, b1, u[0]), special.betaincinv(a2, b2, u[1])]
        )

    def truth(self, metric: str = "accuracy") -> dict:
        """True accuracy per system ("accuracy") or the exact "gap" B - A.

        Parameters
        ----------
        metric : {'accuracy', 'gap'}
            The estimand; ``"gap"`` gives ``{("A", "B"): gap}``. Default
            ``"accuracy"``.

        Returns
        -------
        dict
        """
        if metric == "gap":
            return {("A", "B"): self.gap}
        values = {"accuracy": {"A": self.accuracy_a, "B": self.accuracy_a + self.gap}}
        return _truth(self, values, metric, ("accuracy",))


@dataclass(frozen=True, eq=False)
class PilotModel:
    """The user's own pilot data as the population (a two-stage bootstrap world).

    Each simulated data set draws ``n_inputs`` of the pilot's inputs with
    replacement and, for each drawn input, ``n_runs`` of its runs with
    replacement. Systems stay paired: an input is drawn for every system at
    once, and so is each run index (the j-th run of an input, in run order,
    for every system; so runs matched by run number stay matched, as in
    :func:`evalci.icc`'s ``matched_runs``). Build it with
    :meth:`from_data` or :func:`pilot_model`.

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
        from evalci.frames import dataarray as _xr

        if not isinstance(cluster, str):
            raise ValueError(f"`cluster` must name one column; got {cluster!r}.")
        if run is not None and run not in data.columns:
            run = None
        da = _xr.to_xarray(data, value, input=cluster, run=run, system=system)
        y = da.values.astype(float)
        if system is None:
            y = y[:, :, None]
            systems = ("A",)
        else:
            systems = tuple(str(s) for s in da["system"].values)
        # compact each (input, system): observed runs first, in run order
        order = np.argsort(np.isnan(y), axis=1, kind="stable")
        y = np.take_along_axis(y, order, axis=1)
        counts = (~np.isnan(y)).sum(axis=1)  # (N, S)
        if (counts != counts[:, :1]).any() or (counts == 0).any():
            bad = da["input"].values[((counts != counts[:, :1]) | (counts == 0)).any(1)]
            raise ValueError(
                f"every input needs the same number of runs in every system (so "
                f"the systems can be resampled jointly); these differ: "
                f"{list(bad[:5])}{' ...' if len(bad) > 5 else ''}."
            )
        y.flags.writeable = False
        return cls(y, systems, counts[:, 0].astype(np.int64), match_icc=match_icc)

    def sample(self, n_inputs, n_runs, rng=None, *, as_dataarray=False):
        """One simulated data set: tidy ``input_id, run, system, correct``.

        ``input_id`` numbers the draws 0..n_inputs-1 (an input drawn twice
        appears as two inputs); ``correct`` holds the pilot's ``value``
        (int when that is 0/1).

        Parameters
        ----------
        n_inputs, n_runs : int
            N inputs and k runs of each, positive.
        rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
            Seed (passed to :func:`numpy.random.default_rng`); the same seed
            gives the same data set.
        as_dataarray : bool
            Return the DataArray of ``correct`` over (input, run, system)
            instead of the tidy table.

        Returns
        -------
        pandas.DataFrame or xarray.DataArray
        """
        n = _positive_int("n_inputs", n_inputs)
        k = _positive_int("n_runs", n_runs)
        gen = np.random.default_rng(rng)
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
        return _finish(self.systems, {"correct": y}, as_dataarray)

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
