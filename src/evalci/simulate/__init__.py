"""Generative models of evaluation data and the coverage studies run on them.

:mod:`evalci.simulate.models` gathers the models (the protocol in
:mod:`~evalci.simulate.protocol`, seed 000's classifier in
:mod:`~evalci.simulate.confusion`, the rate models in
:mod:`~evalci.simulate.rates`, the pilot model in
:mod:`~evalci.simulate.pilot`); :mod:`evalci.simulate.coverage` the batched,
exact coverage study (also offered here, beside the models it runs on).
"""

from evalci.simulate.coverage import coverage_study, reproduce_paper
from evalci.simulate.models import *  # noqa: F403
from evalci.simulate.models import __all__ as _models_all

__all__ = ["coverage_study", "reproduce_paper", *_models_all]
