"""Old path of :mod:`evalci.methods.planning`, kept importable: the same module object."""

import sys

from evalci.methods import planning as _module

sys.modules[__name__] = _module
