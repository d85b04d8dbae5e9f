"""Dask accessors registered when Dask is imported, not when evalci is.

``import dask.dataframe`` takes longer than all of evalci's own
dependencies together, so ``import evalci`` must not do it. Yet
``ddf.evalci`` has to work on any Dask DataFrame, and a Dask DataFrame exists
only after ``dask.dataframe`` was imported. So the registration waits for
that import: at once if ``dask.dataframe`` is already in ``sys.modules``,
otherwise a finder on ``sys.meta_path`` lets the import run as usual and
registers the accessors the moment the module has finished executing (a
post-import hook, as in ``wrapt.register_post_import_hook``), then removes
itself.

:mod:`evalci.frames.accessors` uses :data:`dask_dataframe` in place of the module::

    from ._deferred import dask_dataframe as _dd

    @_dd.extensions.register_dataframe_accessor("evalci")
    class EvalciDaskDataFrameAccessor: ...

:data:`dask_dataframe` is ``None`` when Dask is not installed (found without
importing it).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading

__all__ = ["dask_dataframe"]

_TARGET = "dask.dataframe"
_pending: list[tuple[str, type]] = []
_lock = threading.Lock()


def _register_pending() -> None:
    """Register every waiting accessor on the imported ``dask.dataframe``."""
    module = sys.modules[_TARGET]
    with _lock:
        waiting, _pending[:] = list(_pending), []
        for finder in [f for f in sys.meta_path if isinstance(f, _DaskHook)]:
            sys.meta_path.remove(finder)
    for name, cls in waiting:
        module.extensions.register_dataframe_accessor(name)(cls)


class _DaskHook(importlib.abc.MetaPathFinder):
    """Finds ``dask.dataframe`` with the other finders; registers after it runs."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_register(module):
            exec_module(module)  # a failed import raises here: nothing registered
            _register_pending()

        # the loader is this spec's own instance: patching it touches no other
        loader.exec_module = exec_then_register
        return spec


class _Extensions:
    """Stands in for ``dask.dataframe.extensions`` until Dask is imported."""

    @staticmethod
    def register_dataframe_accessor(name: str):
        """Register ``cls`` as ``ddf.<name>`` now or once Dask is imported."""

        def decorator(cls: type) -> type:
            with _lock:
                _pending.append((name, cls))
                imported = _TARGET in sys.modules
                if not imported and not any(
                    isinstance(f, _DaskHook) for f in sys.meta_path
                ):
                    sys.meta_path.insert(0, _DaskHook())
            if imported:
                _register_pending()
            return cls

        return decorator


class _DaskDataFrame:
    """What :mod:`evalci.frames.accessors` needs of ``dask.dataframe``, deferred."""

    extensions = _Extensions()


dask_dataframe = _DaskDataFrame() if importlib.util.find_spec("dask") else None
