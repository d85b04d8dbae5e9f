"""Old path of :mod:`evalci.methods.analytic`, kept importable: the same module object."""

import sys

from evalci.methods import analytic as _module

sys.modules[__name__] = _module
