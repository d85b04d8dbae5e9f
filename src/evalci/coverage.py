"""Old path of :mod:`evalci.simulate.coverage`, kept importable: the same module object."""

import sys

from evalci.simulate import coverage as _module

sys.modules[__name__] = _module
