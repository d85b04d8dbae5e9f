"""Old path of :mod:`evalci.methods.judge`, kept importable: the same module object."""

import sys

from evalci.methods import judge as _module

sys.modules[__name__] = _module
