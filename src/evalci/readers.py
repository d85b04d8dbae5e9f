"""Old path of :mod:`evalci.io.readers`, kept importable: the same module object."""

import sys

from evalci.io import readers as _module

sys.modules[__name__] = _module
