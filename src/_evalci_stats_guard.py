"""evalci-stats' start-up hook (loaded by ``evalci_stats_guard.pth``).

PyPI's unrelated ``evalci`` project, installed after this library, replaces
``evalci/__init__.py`` (or shadows an editable install), and with it the
check in that file. This module is a file that project does not ship: the
``.pth`` imports it when Python starts, and it puts one finder first on
``sys.meta_path`` that, when ``evalci`` is imported, runs ``check()`` from
``evalci/_guard.py`` (found beside this file and loaded by its path, so the
other project's ``evalci/__init__.py`` never runs). The check raises an
ImportError naming the conflict and the fix; otherwise the finder removes
itself and the import goes on as usual. At start-up it costs one small import.
"""

import os
import sys

_GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "evalci", "_guard.py")


class EvalciStatsGuard:
    """A meta-path finder that only checks; it never finds anything itself."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "evalci" or not os.path.isfile(_GUARD):
            return None
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "_evalci_stats_guard_check", _GUARD
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.check()  # ImportError beside the other project: it stays in place
        if cls in sys.meta_path:
            sys.meta_path.remove(cls)
        return None


def install() -> None:
    if EvalciStatsGuard not in sys.meta_path and "evalci" not in sys.modules:
        sys.meta_path.insert(0, EvalciStatsGuard)


install()
