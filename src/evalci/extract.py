"""Old path of :mod:`evalci.io.extract`, kept importable: the same module object."""

import sys

from evalci.io import extract as _module

sys.modules[__name__] = _module
