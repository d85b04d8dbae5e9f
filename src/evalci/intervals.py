"""Old path of :mod:`evalci.engine.intervals`, kept importable: the same module object."""

import sys

from evalci.engine import intervals as _module

sys.modules[__name__] = _module
