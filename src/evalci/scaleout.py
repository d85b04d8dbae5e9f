"""Old path of :mod:`evalci.engine.scaleout`, kept importable: the same module object."""

import sys

from evalci.engine import scaleout as _module

sys.modules[__name__] = _module
