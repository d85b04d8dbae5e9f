"""The models of :mod:`evalci.simulate`, gathered: one sample/truth protocol.

The models (issue 11) follow one protocol, :class:`Model`
(:mod:`evalci.simulate.protocol`): :class:`ConfusionModel` (seed 000's
classifier, any matrices, several systems; :mod:`evalci.simulate.confusion`),
:class:`BetaBernoulli` (Beta-distributed per-input rates with a given mean
and ICC) and :class:`PairedSystems` (two systems with correlated per-input
rates and an exact gap; both :mod:`evalci.simulate.rates`) and
:class:`PilotModel` (the user's pilot data resampled as the population;
:mod:`evalci.simulate.pilot`). Each ``model.sample(n_inputs, n_runs, rng)``
is one seeded data set; ``model.truth(metric)`` its true values.

Examples
--------
>>> from evalci.simulate import models
>>> m = models.BetaBernoulli(0.7, 0.3)
>>> m.sample(100, 4, rng=0).shape, m.truth()
((400, 4), {'A': 0.7})
"""

from __future__ import annotations

from evalci.simulate.confusion import (
    SEED000_CONFUSION,
    ConfusionModel,
    confusion_model,
    confusion_model_arrays,
    intraclass_correlation,
    true_accuracy,
    true_kappa,
    variance_components,
)
from evalci.simulate.pilot import PilotModel, pilot_model
from evalci.simulate.protocol import Model
from evalci.simulate.rates import BetaBernoulli, PairedSystems

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
