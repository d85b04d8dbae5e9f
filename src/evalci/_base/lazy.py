"""scipy's submodules, imported the first time one of their names is read.

``import scipy`` is cheap, but ``scipy.special``, ``scipy.sparse`` and
``scipy.stats`` each load scipy's array API layer, and with it
``numpy.f2py``, ``numpy.testing`` and ``charset_normalizer``: about 0.25 s
that ``import evalci`` would pay before any interval is asked for. A module
here is a stand-in with the same attributes, read from the real module on
first use (then kept on the stand-in, so later reads are plain attribute
look-ups):

>>> from evalci._base.lazy import special
>>> float(special.ndtr(0.0))
0.5

Use ``special.ndtri(p)`` where a module would write ``from scipy import
special``; names imported one by one (``from scipy.special import expit``)
would import the module at once.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["LazyModule", "sparse", "special", "stats"]


class LazyModule:
    """A module by name, imported when one of its attributes is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str):
        # Only names not yet on the stand-in get here (and never "_name").
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(self.module, attr)
        setattr(self, attr, value)
        return value

    @property
    def module(self) -> ModuleType:
        """The module itself (imported now if it was not yet)."""
        return importlib.import_module(self._name)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


special = LazyModule("scipy.special")
sparse = LazyModule("scipy.sparse")
stats = LazyModule("scipy.stats")
