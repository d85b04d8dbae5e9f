"""Old path of :mod:`evalci.methods.ranks`, kept importable: the same module object."""

import sys

from evalci.methods import ranks as _module

sys.modules[__name__] = _module
