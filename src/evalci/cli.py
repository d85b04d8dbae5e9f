"""Old path of :mod:`evalci.reporting.cli`, kept importable: the same module object."""

import sys

from evalci.reporting import cli as _module

sys.modules[__name__] = _module
