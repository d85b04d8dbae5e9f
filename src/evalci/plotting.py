"""Plots of results: the public namespace ``evalci.plotting`` (as ``pandas.plotting``).

Every result also has ``.plot()``; these draw one or several results at
once (page "Plots", docs/plots.md). They need the ``plot`` extra
(matplotlib).
"""

from evalci.reporting.plots import *  # noqa: F403 - the names of __all__
from evalci.reporting.plots import __all__  # noqa: F401
