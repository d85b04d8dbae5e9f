"""Old path of :mod:`evalci.frames.accessors`, kept importable: the same module object."""

import sys

from evalci.frames import accessors as _module

sys.modules[__name__] = _module
