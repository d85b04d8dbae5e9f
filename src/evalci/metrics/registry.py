"""The metric registry: names accepted by ``metric=`` and their blueprints.

:func:`register_metric` adds a name (process-wide), :func:`get_metric`
normalises ``metric=`` (a name, a :class:`~evalci.metrics.Metric` or a
callable) and :func:`available_metrics` lists the names. Built in: ``mean``.
"""

from __future__ import annotations

from collections.abc import Callable

from evalci._base.text import as_written
from evalci.metrics.base import Metric
from evalci.metrics.scores import mean

__all__ = ["register_metric", "get_metric", "available_metrics"]

_REGISTRY: dict[str, Metric] = {"mean": mean}


def register_metric(
    metric: Metric, name: str | None = None, *, overwrite=False
) -> None:
    """Register ``metric`` so that ``metric="<name>"`` finds it.

    The registry is process-wide: every entry point of this process
    (``bootstrap``, ``compare``, the accessors) then accepts the name.

    Parameters
    ----------
    metric : Metric
        The blueprint to register (a callable is not accepted: pass it as
        ``metric=`` directly).
    name : str, optional
        The name to register it under; default ``metric.name``.
    overwrite : bool
        Replace a metric already registered under that name; default False,
        which raises ``ValueError`` instead.

    Examples
    --------
    >>> import evalci
    >>> evalci.metrics.register_metric(evalci.metrics.kappa(truth="human"),
    ...                                name="judge_kappa", overwrite=True)
    >>> "judge_kappa" in evalci.metrics.available_metrics()
    True
    """
    if not isinstance(metric, Metric):
        raise TypeError("`metric` must be an evalci.metrics.Metric.")
    key = name or metric.name
    if key in _REGISTRY and not overwrite:
        raise ValueError(
            f"a metric named {as_written(key)} is already registered; pass overwrite=True "
            "to replace it."
        )
    _REGISTRY[key] = metric


def available_metrics() -> tuple[str, ...]:
    """Names accepted by ``metric=``."""
    return tuple(sorted(_REGISTRY))


#: names users type for a metric that needs arguments, and the call that builds it
_FACTORY_HINTS = {
    "f1": "f1(truth=...)",
    "precision": "precision(truth=...)",
    "recall": "recall(truth=...)",
    "accuracy": "accuracy(truth=...) for labels (metric='mean' for a 0/1 column)",
    "kappa": "kappa(truth=...)",
    "pass@k": "pass_at_k(k)",
    "pass_at_k": "pass_at_k(k)",
    "pass^k": "pass_hat_k(k)",
    "pass_hat_k": "pass_hat_k(k)",
    "krippendorff_alpha": "krippendorff_alpha(level=...)",
    "alpha": "krippendorff_alpha(level=...)",
    "ratio": "ratio(denominator)",
    "quantile": "quantile(q, column)",
    "median": "quantile(0.5, column)",
}


def get_metric(metric) -> Metric | Callable:
    """Normalise ``metric=``: a registered name, a :class:`Metric` or a callable.

    Parameters
    ----------
    metric : str, Metric or callable
        A name from :func:`available_metrics`, a :class:`Metric` (returned
        as is) or a callable ``f(DataFrame) -> float`` (returned as is).

    Returns
    -------
    Metric or callable

    Raises
    ------
    ValueError
        For an unregistered name, naming the call that builds it when the
        metric needs arguments (``"pass@5"`` -> ``pass_at_k(5)``).

    Examples
    --------
    >>> from evalci import metrics
    >>> metrics.get_metric("mean").name
    'mean'
    >>> metrics.get_metric("pass@5")
    Traceback (most recent call last):
    ...
    ValueError: `metric` 'pass@5' is not registered: it needs arguments; use metric=evalci.metrics.pass_at_k(5).
    """
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str):
        try:
            return _REGISTRY[metric]
        except KeyError:
            key = metric.lower().replace("-", "_")
            k = key[5:] if key[:5] in ("pass@", "pass^") else ""
            factory = _FACTORY_HINTS.get(key[:5] + "k" if k.isdigit() else key)
            if k.isdigit():  # "pass@5": say the exact call
                factory = factory.replace("(k)", f"({int(k)})")
            if factory is not None:
                raise ValueError(
                    f"`metric` {as_written(metric)} is not registered: it needs arguments; "
                    f"use metric=evalci.metrics.{factory}."
                ) from None
            raise ValueError(
                f"`metric` {as_written(metric)} is not registered; use one of "
                f"{available_metrics()}, evalci.metrics.accuracy(truth=...), "
                "evalci.metrics.kappa(truth=...), a Metric, or a callable "
                "f(DataFrame) -> float."
            ) from None
    if callable(metric):
        return metric
    raise TypeError(
        "`metric` must be a registered name, an evalci.metrics.Metric or a "
        f"callable f(DataFrame) -> float, not {type(metric).__name__}."
    )
