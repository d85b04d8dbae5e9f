"""Generative models of evaluation data and the coverage studies run on them.

:mod:`evalci.simulate.models` holds the models; :mod:`evalci.simulate.coverage`
the batched, exact coverage study (also offered here, beside the models it
runs on).
"""

from evalci.simulate.coverage import coverage_study
from evalci.simulate.models import *  # noqa: F403
from evalci.simulate.models import __all__ as _models_all

__all__ = ["coverage_study", *_models_all]
