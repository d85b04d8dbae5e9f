"""Old path of :mod:`evalci.frames.dataarray`, kept importable: the same module object."""

import sys

from evalci.frames import dataarray as _module

sys.modules[__name__] = _module
