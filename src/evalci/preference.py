"""Public path of :mod:`evalci.methods.preference`, kept importable: the same module object."""

import sys

from evalci.methods import preference as _module

sys.modules[__name__] = _module
