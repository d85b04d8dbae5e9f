"""Agreement metrics: Cohen's kappa (and weighted kappa) and Krippendorff's alpha.

Kappa sums one-hot confusion cells of a judge against a reference label;
alpha sums each input's coincidences of several raters' ratings.
"""

from __future__ import annotations

import numpy as np

from evalci._base.text import as_written
from evalci._base.validate import check_name, check_option
from evalci.metrics.base import Finalize, Metric
from evalci.metrics.labels import (
    _as_labels,
    _codes,
    _confusion,
    _confusion_statistics,
    _label_set,
    _one_hot,
    _value_kind,
)

__all__ = ["kappa", "krippendorff_alpha"]


def _kappa_finalize(sums: np.ndarray) -> np.ndarray:
    conf = _confusion(sums)
    n = conf.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.trace(conf, axis1=-2, axis2=-1) / n
        p_e = (conf.sum(axis=-1) * conf.sum(axis=-2)).sum(axis=-1) / n**2
        return (p_o - p_e) / (1.0 - p_e)


def _disagreement_weights(n_labels: int, weights: str) -> np.ndarray:
    """Cohen's (1968) disagreement weights on label positions, in [0, 1]."""
    i = np.arange(n_labels)
    d = np.abs(i[:, None] - i[None, :]) / (n_labels - 1)
    return d if weights == "linear" else d**2


def _weighted_kappa_finalize(weights: str) -> Finalize:
    def finalize(sums: np.ndarray) -> np.ndarray:
        conf = _confusion(sums)
        w = _disagreement_weights(conf.shape[-1], weights)
        n = conf.sum(axis=(-2, -1))
        expected = conf.sum(axis=-1)[..., :, None] * conf.sum(axis=-2)[..., None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = (conf * w).sum(axis=(-2, -1)) / n
            return 1.0 - observed / ((expected * w).sum(axis=(-2, -1)) / n**2)

    return finalize


def kappa(truth: str = "label", labels=None, weights=None) -> Metric:
    """Cohen's kappa of the value column (predicted labels) against ``truth``.

    The statistics are the C x C confusion counts (one-hot per row), so
    ``kappa = (p_o - p_e) / (1 - p_e)`` is computed from summed counts. With
    ``weights``, Cohen's weighted kappa ``1 - sum(w * o) / sum(w * e)`` for
    ordered labels, with disagreement weights ``|i - j| / (C - 1)`` (linear)
    or its square (quadratic) on the positions i, j of the labels in their
    order (as scikit-learn's and statsmodels' defaults do: label *positions*,
    not their numeric values).

    Parameters
    ----------
    truth : str
        Column holding the true (reference) label.
    labels : sequence, optional
        The label set, in order. By default the sorted union of the labels seen
        in both columns; weights then need labels that are numbers (text has no
        meaningful order: pass ``labels=`` to give one).
    weights : {None, 'linear', 'quadratic'}
        None (default) for Cohen's unweighted kappa.

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales.
    Educational and Psychological Measurement, 20(1), 37-46.
    Cohen, J. (1968). Weighted kappa. Psychological Bulletin, 70(4), 213-220.

    Examples
    --------
    >>> import pandas as pd, evalci
    >>> df = pd.DataFrame({"item": range(6), "judge": [1, 2, 3, 3, 2, 1],
    ...                    "human": [1, 2, 3, 2, 2, 3]})
    >>> m = evalci.metrics.kappa(truth="human", weights="quadratic")
    >>> m.name
    'kappa_quadratic'
    >>> stats = m.statistics({c: df[c].to_numpy() for c in df}, "judge")
    >>> round(float(m.finalize(stats.sum(axis=0))), 4)
    0.2857
    """
    check_name(truth, "truth")
    check_option(weights, "weights", (None, "linear", "quadratic"))
    fixed = _as_labels(labels)
    return Metric(
        "kappa" if weights is None else f"kappa_{weights}",
        statistics=_confusion_statistics(
            truth, fixed, "kappa", ordered=weights is not None
        ),
        finalize=_kappa_finalize
        if weights is None
        else _weighted_kappa_finalize(weights),
        columns=(truth,),
        numeric=False,
        scale_invariant=True,
    )


_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _coincidences(sums: np.ndarray, n_labels: int, numeric: bool) -> np.ndarray:
    """Per input: ``(n_uc n_uk - [c == k] n_uc) / (m_u - 1)``, flattened.

    ``sums`` are the input's ratings per label ``n_uc`` (and, for numeric
    levels, each label's value times ``n_uc``, carried so that the finalize
    can read the label values). Inputs with one rating are not pairable and
    contribute zero (Krippendorff 2011, section C, step 2).
    """
    n_u = sums[..., :n_labels]
    m_u = n_u.sum(axis=-1)
    pairable = (m_u >= 2)[..., None, None]
    o = n_u[..., :, None] * n_u[..., None, :] - np.eye(n_labels) * n_u[..., :, None]
    o = np.where(pairable, o / np.maximum(m_u - 1.0, 1.0)[..., None, None], 0.0)
    out = o.reshape(o.shape[:-2] + (n_labels * n_labels,))
    if numeric:  # value x count of the pairable ratings (sum_k o_uck = n_uc)
        out = np.concatenate([out, sums[..., n_labels:] * pairable[..., 0]], axis=-1)
    return out


def _delta(level: str, n_c: np.ndarray, values) -> np.ndarray:
    """Squared distances ``delta^2_ck`` (..., C, C) of Krippendorff (2011)."""
    c = n_c.shape[-1]
    if level == "nominal":
        return 1.0 - np.eye(c)
    if level == "ordinal":  # (sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2
        cum = np.cumsum(n_c, axis=-1)
        d = (
            cum[..., None, :]
            - cum[..., :, None]
            + (n_c[..., :, None] - n_c[..., None, :]) / 2
        )
        return d**2
    diff = values[..., :, None] - values[..., None, :]
    if level == "interval":
        return diff**2
    total = values[..., :, None] + values[..., None, :]
    return (diff / np.where(total == 0, 1.0, total)) ** 2  # ratio


def _alpha_finalize(level: str) -> Finalize:
    numeric = level in ("interval", "ratio")

    def finalize(sums: np.ndarray) -> np.ndarray:
        n_labels = _n_labels(sums.shape[-1], numeric)
        o = sums[..., : n_labels * n_labels]
        o = o.reshape(o.shape[:-1] + (n_labels, n_labels))
        n_c = o.sum(axis=-1)  # pairable values per label
        n = n_c.sum(axis=-1)
        values = None
        if numeric:
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(n_c > 0, sums[..., n_labels * n_labels :] / n_c, 0.0)
        delta = _delta(level, n_c, values)
        d_o = (o * delta).sum(axis=(-2, -1))
        d_e = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.0 - (n - 1.0) * d_o / d_e

    return finalize


def _n_labels(width: int, numeric: bool) -> int:
    """C from the statistics' width: C^2, or C^2 + C with the label values."""
    if not numeric:
        return int(round(np.sqrt(width)))
    return int(round((np.sqrt(1.0 + 4.0 * width) - 1.0) / 2.0))


def krippendorff_alpha(level: str = "nominal", labels=None) -> Metric:
    """Krippendorff's alpha: agreement of several raters (or judges) on inputs.

    Rows are ratings, one per (input, rater): the value column holds the
    rating, ``cluster`` names the input (Krippendorff's unit), and a rater may
    skip inputs (leave the row out). Each input contributes its coincidences
    ``(n_uc n_uk - [c == k] n_uc) / (m_u - 1)`` of its ``m_u`` ratings (inputs
    with a single rating contribute nothing), and
    ``alpha = 1 - (n - 1) sum o_ck delta_ck / sum n_c n_k delta_ck`` with the
    level's squared distance ``delta_ck``. Intervals resample inputs with all
    their ratings (``strategy="cluster"``).

    Parameters
    ----------
    level : {'nominal', 'ordinal', 'interval', 'ratio'}
        The scale of the ratings, which sets the distance: nominal ``[c != k]``;
        ordinal from the ranks' marginal counts; interval ``(c - k)^2``; ratio
        ``((c - k) / (c + k))^2``.
    labels : sequence, optional
        The possible ratings, in order. By default the sorted ratings seen;
        ordinal, interval and ratio levels need numbers (or, for ordinal, an
        ordered ``labels=``); interval and ratio use the numbers' values.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
    Annenberg School for Communication, University of Pennsylvania,
    https://repository.upenn.edu/asc_papers/43 (section C's example: 4
    observers x 12 units, alpha = 0.743 nominal, 0.815 ordinal, 0.849
    interval, 0.797 ratio).

    Examples
    --------
    >>> import numpy as np, evalci
    >>> m = evalci.metrics.krippendorff_alpha("nominal")
    >>> n_uc = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])  # 3 inputs, 2 labels
    >>> round(float(m.finalize(m.per_input(n_uc).sum(axis=0))), 4)
    0.4444
    """
    check_option(level, "level", _LEVELS)
    fixed = _as_labels(labels)
    numeric = level in ("interval", "ratio")
    if numeric and fixed is not None and _value_kind(fixed) != "number":
        raise ValueError(
            f"level={as_written(level)} needs numeric ratings, so `labels` must be numbers; "
            f"got {as_written(fixed)}. Use level='ordinal' for ordered text labels."
        )
    name = f"krippendorff_alpha_{level}"

    def statistics(data, value):
        y = np.asarray(data[value])
        cats = _label_set(
            y, fixed, level != "nominal", name, f"level={as_written(level)}"
        )
        hot = _one_hot(_codes(y, cats, name), len(cats))
        if not numeric:
            return hot
        return np.concatenate([hot, hot * np.asarray(cats, dtype=float)], axis=1)

    return Metric(
        name,
        statistics=statistics,
        finalize=_alpha_finalize(level),
        numeric=numeric,
        per_input=lambda sums: _coincidences(
            sums, _n_labels_raw(sums, numeric), numeric
        ),
    )


def _n_labels_raw(sums: np.ndarray, numeric: bool) -> int:
    """C from the raw statistics' width: C one-hot columns (and C values)."""
    return sums.shape[-1] // 2 if numeric else sums.shape[-1]
