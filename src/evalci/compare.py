"""Old path of :mod:`evalci.methods.compare`, kept importable: the same module object."""

import sys

from evalci.methods import compare as _module

sys.modules[__name__] = _module
