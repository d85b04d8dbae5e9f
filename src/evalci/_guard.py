"""The check against PyPI's unrelated ``evalci`` project (standard library only).

PyPI's ``evalci`` (a different project, "Statistical significance &
confidence intervals for LLM evals") installs a package of the same import
name. Its wheel ships ``evalci/__init__.py``, ``evalci/cli.py``,
``evalci/report.py`` and ``evalci/stats.py`` among others, so:

* installed *before* this library, our files overwrite its three shared ones
  and ``evalci/__init__.py`` is ours: ``evalci._check_distribution`` runs;
* installed *after* this library, its ``evalci/__init__.py`` replaces ours (or,
  beside an editable install, its folder comes first on ``sys.path``), and
  none of our code runs on ``import evalci``.

For the second order the wheel also installs ``evalci_stats_guard.pth`` and
the top-level module ``_evalci_stats_guard`` (files the other project does not
ship): at start-up the ``.pth`` adds an import hook that runs :func:`check`
from this file, by its path, the first time ``evalci`` is imported.

This module imports nothing from ``evalci`` (it is also loaded on its own).
"""

from __future__ import annotations

DISTRIBUTION = "evalci-stats"
# Our summary, as every distribution of this project (the old name too) has it.
SUMMARY = "Confidence intervals for LLM evaluation results"
CHECKOUT = "/path/to/your/evalci-stats/checkout"


def _checkout() -> tuple[str, bool]:
    """Where this library was installed from (a folder), and whether editable.

    Read from pip's ``direct_url.json`` (PEP 610) of ``evalci-stats``; a
    placeholder when it is not known.
    """
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        info = json.loads(text or "{}")
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return CHECKOUT, True
    url = urlparse(info.get("url", ""))
    if url.scheme != "file" or "dir_info" not in info:
        return CHECKOUT, True
    return unquote(url.path), bool(info["dir_info"].get("editable", False))


def fix() -> str:
    """The commands that remove the other project and reinstall this one."""
    import shlex

    path, editable = _checkout()
    return (
        "pip uninstall evalci && pip install --force-reinstall "
        + ("-e " if editable else "")
        + shlex.quote(path)
    )


def check() -> None:
    """Raise ImportError if a distribution named ``evalci`` is not this library.

    A distribution named ``evalci`` is ours (this project before it took its
    own name, as editable installs of it may still be) if its summary is ours
    or it lists ``evalci/accessors.py``. Costs one metadata look-up.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("evalci")
    except metadata.PackageNotFoundError:
        return
    summary = dist.metadata.get("Summary") or ""
    files = {str(f) for f in dist.files or ()}
    if summary.startswith(SUMMARY) or "evalci/accessors.py" in files:
        return
    raise ImportError(
        f"another project named 'evalci' (version {dist.version}: "
        f"{summary or 'no summary'!r}) is installed and uses the same import "
        "name, so the two packages overwrite each other's files; this library "
        f"is distributed as {DISTRIBUTION!r} and is not on PyPI yet. Remove the "
        f"other and reinstall this one from its checkout: {fix()}"
    )
