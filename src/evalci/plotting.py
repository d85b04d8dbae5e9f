"""Old path of :mod:`evalci.reporting.plots`, kept importable: the same module object."""

import sys

from evalci.reporting import plots as _module

sys.modules[__name__] = _module
