"""Old path of :mod:`evalci.methods.testing`, kept importable: the same module object."""

import sys

from evalci.methods import testing as _module

sys.modules[__name__] = _module
