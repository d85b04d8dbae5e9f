"""Seed 000's confusion-matrix model: its data, as arrays or tidy, and its true values.

Seed 000 simulates a 4-label classifier from a "true" confusion matrix: each
input's true label is drawn from the matrix's row marginal, then each of its
``k`` runs predicts a label drawn independently from the row of that true
label. Single-run accuracy is then ``trace / total`` (0.70 for the seed
matrix) and the correctness of one run has intraclass correlation
``rho = 0.025065`` (docs/paper-notes.md). :func:`confusion_model_arrays` draws
many data sets at once (for coverage studies), :func:`confusion_model` one
tidy table, :class:`ConfusionModel` the same model for several systems under
the protocol of :mod:`evalci.simulate.protocol`; :func:`true_accuracy`,
:func:`true_kappa`, :func:`variance_components` and
:func:`intraclass_correlation` are the population's true values.

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

import numpy as np
import pandas as pd

from evalci._base.text import as_written
from evalci.simulate.protocol import _positive_int, _Sampler, _system_names, _truth

__all__ = [
    "ConfusionModel",
    "SEED000_CONFUSION",
    "confusion_model",
    "confusion_model_arrays",
    "intraclass_correlation",
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
        _positive_int(name, v)
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
            f"(one per input); got {as_written(k)}."
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
        Population confusion counts or shares, as in :func:`true_accuracy`.

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
        Population confusion counts or shares, as in :func:`true_accuracy`.

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
        Population confusion counts or shares, as in :func:`true_accuracy`.

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


@dataclass(frozen=True, eq=False)
class ConfusionModel(_Sampler):
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

    def _draw(self, n, k, gen) -> dict:
        """Labels (shared by the systems), then each system's predictions."""
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
        return {
            "correct": (preds == lab).astype(np.int64),
            "pred": preds,
            "label": np.ascontiguousarray(lab),
        }

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
