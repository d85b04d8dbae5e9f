"""Build hooks only (the metadata is in pyproject.toml).

Both the wheel and the editable install get ``evalci_stats_guard.pth``: at
start-up it imports ``_evalci_stats_guard`` (``src/_evalci_stats_guard.py``),
which keeps ``import evalci`` refusing to run beside PyPI's unrelated
``evalci`` project even when that project, installed after this one, has
replaced ``evalci/__init__.py`` (see ``src/evalci/_guard.py``).
"""

import os

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "evalci_stats_guard.pth"
# one line; "import" lines of a .pth run at start-up. A missing module (a
# deleted checkout of an editable install) is skipped without a message.
PTH_LINE = (
    'import sys; exec("try:\\n import _evalci_stats_guard\\n'
    'except ImportError:\\n pass")\n'
)


class BuildPyWithPth(build_py):
    """Also writes the .pth beside the packages (the wheel's top level)."""

    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False):
            with open(os.path.join(self.build_lib, PTH), "w", encoding="utf-8") as f:
                f.write(PTH_LINE)

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return [*outputs, os.path.join(self.build_lib, PTH)]


class EditableWheelWithPth(editable_wheel):
    """Adds the .pth to the editable wheel (its files are written from there).

    setuptools writes the editable wheel's top-level files (its namespace
    .pth files) in ``_install_namespaces``; ours goes in beside them.
    ``tests/test_packaging.py`` installs both ways and checks the hook.
    """

    def _install_namespaces(self, installation_dir, pth_prefix):
        super()._install_namespaces(installation_dir, pth_prefix)
        with open(os.path.join(installation_dir, PTH), "w", encoding="utf-8") as f:
            f.write(PTH_LINE)


setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
