"""Old path of :mod:`evalci.reporting.report`, kept importable: the same module object."""

import sys

from evalci.reporting import report as _module

sys.modules[__name__] = _module
