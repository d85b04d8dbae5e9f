"""Seeded data from seed 000's confusion-matrix model, for docs, tests and coverage.

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

import numpy as np
import pandas as pd

__all__ = [
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

    Examples
    --------
    >>> from evalci import simulate
    >>> round(simulate.intraclass_correlation(simulate.SEED000_CONFUSION), 6)
    0.025065
    """
    between, within = variance_components(confusion)
    return between / (between + within)
