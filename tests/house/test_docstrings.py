"""Every public callable documents its parameters in numpydoc form (issue 14).

The API pages (``docs/api.md``) are autosummary tables rendered by numpydoc,
so a parameter missing from a docstring is missing from the docs. The test
reads the autosummary entries the way Sphinx does (``.. currentmodule::``
carries over between blocks), resolves each name with the same rule as
``sphinx.ext.autosummary`` (``MODULE.OBJ`` first, then the longest importable
module prefix), and checks each parameter of the signature against the
``Parameters`` section parsed by ``numpydoc.docscrape``. The functions and
classes in the ``__all__`` of the helper modules are checked too.

Skipped by design: the accessor entries (``DataFrame.evalci.*`` and
``DataArray.evalci.*`` are one-line forwards whose docstrings point at the
function), modules, warning classes (no parameters of their own), protocols
(``simulate.Model``, never instantiated) and classes' attributes.
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

from conftest import ROOT  # noqa: E402

API = ROOT / "docs" / "api.md"
ALL_OF = [
    "metrics",
    "io",
    "judge",
    "preference",
    "testing",
    "plotting",
    "simulate",
    "inspect",
]
ACCESSOR = re.compile(r"^(DataFrame|DataArray|Dataset)\.evalci\.")


def autosummary_entries(text: str) -> list[tuple[str, str]]:
    """``(currentmodule, name)`` for each entry of each autosummary table."""
    entries: list[tuple[str, str]] = []
    module = None
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(".. currentmodule::"):
            module = stripped.split("::", 1)[1].strip()
            inside = False
        elif stripped.startswith(".. autosummary::"):
            inside = True
        elif inside and (stripped.startswith("```") or stripped.startswith("..")):
            inside = False
        elif inside and stripped and not stripped.startswith(":"):
            if not line[:1].isspace():  # a dedented line ends the directive
                inside = False
                continue
            entries.append((module, stripped.lstrip("~")))
    return entries


def resolve(module: str | None, name: str):
    """The object ``name`` names, by autosummary's rule (``_import_by_name``)."""
    full = f"{module}.{name}" if module else name
    parts = full.split(".")
    try:  # MODULE.OBJ first: ``evalci.compare`` is the function, not the module
        return getattr(importlib.import_module(".".join(parts[:-1])), parts[-1])
    except (ImportError, AttributeError, ValueError):
        pass
    for j in range(len(parts), 0, -1):  # then the longest importable prefix
        try:
            obj = importlib.import_module(".".join(parts[:j]))
        except ImportError:
            continue
        for attr in parts[j:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot resolve {full!r}")


def api_objects() -> list[tuple[str, object]]:
    """``(label, object)`` for the API page's entries and the helpers' ``__all__``."""
    found: dict[str, object] = {}
    for module, name in autosummary_entries(API.read_text()):
        if ACCESSOR.match(name):
            continue
        found[f"{module}.{name}"] = resolve(module, name)
    for mod in ALL_OF:
        m = importlib.import_module(f"evalci.{mod}")
        for name in m.__all__:
            found.setdefault(f"evalci.{mod}.{name}", getattr(m, name))
    return sorted(found.items())


def signature_names(obj) -> list[str]:
    """The parameters a docstring must name: ``*args`` / ``**kwargs`` with stars."""
    sig = inspect.signature(obj)
    names = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls") or p.name.startswith("_"):
            continue
        if p.kind is p.VAR_POSITIONAL:
            names.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            names.append(f"**{p.name}")
        else:
            names.append(p.name)
    return names


def documented_names(obj, *, described: bool = False) -> set[str]:
    """Names in the docstring's ``Parameters`` (a class's ``Attributes`` too).

    A combined entry ``a, b : int`` names both; ``\\*\\*kwargs`` is ``**kwargs``.
    With ``described``, only entries with a description (not a bare type).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpydoc's notes on unknown sections
        if inspect.isclass(obj):
            doc = ClassDoc(obj, config={"show_class_members": False})
            entries = list(doc["Parameters"]) + list(doc["Attributes"])
        else:
            doc = FunctionDoc(obj)
            entries = list(doc["Parameters"])
    names = set()
    for entry in entries:
        if described and not "".join(entry.desc).strip():
            continue
        for name in entry.name.split(","):
            names.add(name.strip().replace("\\", ""))
    return names


def checked(obj) -> bool:
    """Callables with a signature; not modules, warnings, exceptions or protocols.

    A ``typing.Protocol`` (``simulate.Model``) is never instantiated: its
    ``(*args, **kwargs)`` signature is typing's, not a parameter list.
    """
    if inspect.ismodule(obj) or not callable(obj):
        return False
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return False
    return not getattr(obj, "_is_protocol", False)


OBJECTS = [(label, obj) for label, obj in api_objects() if checked(obj)]


def public_methods() -> list[tuple[str, object]]:
    """Public methods (and class/static methods) of the listed classes.

    Inherited ones count when an evalci class defines them; the accessor
    classes' methods are one-line forwards (skipped, as on the API page).
    """
    found: dict[str, object] = {}
    for label, cls in OBJECTS:
        if not inspect.isclass(cls) or cls.__name__.endswith("Accessor"):
            continue
        for base in cls.__mro__:
            if not base.__module__.startswith("evalci"):
                continue
            for name, member in vars(base).items():
                if isinstance(member, (classmethod, staticmethod)):
                    member = member.__func__
                if name.startswith("_") or not inspect.isfunction(member):
                    continue
                found.setdefault(f"{label}.{name}", member)
    return sorted(found.items())


METHODS = public_methods()
#: what the check runs on: callables with parameters other than self
CHECKED = [(label, obj) for label, obj in OBJECTS + METHODS if signature_names(obj)]


def _api_paths() -> list[str]:
    return sorted(
        f"{module}.{name}"
        for module, name in autosummary_entries(API.read_text())
        if not ACCESSOR.match(name)
    )


def test_every_api_name_imports_from_the_path_the_page_gives():
    """``from <module> import <name>`` works for every entry of the API page
    (a class's method: its class so imported), in a fresh interpreter, so no
    import made earlier by the tests can make a path work that a user's first
    import would not."""
    import subprocess
    import sys

    code = (
        "import importlib, inspect, sys\n"
        "bad = []\n"
        "for path in sys.argv[1:]:\n"
        "    parent, _, name = path.rpartition('.')\n"
        "    try:\n"
        "        exec(f'from {parent} import {name}')\n"
        "    except ImportError:\n"
        "        owner, _, cls = parent.rpartition('.')\n"
        "        try:\n"
        "            klass = getattr(importlib.import_module(owner), cls)\n"
        "            assert inspect.isclass(klass) and hasattr(klass, name)\n"
        "        except (ImportError, AttributeError, AssertionError, ValueError):\n"
        "            bad.append(path)\n"
        "print(' '.join(bad))\n"
    )
    paths = _api_paths()
    assert len(paths) > 100
    out = subprocess.run(
        [sys.executable, "-c", code, *paths], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == []


def test_the_api_page_is_read():
    """The parser finds the page's tables; a broken parser would pass silently."""
    entries = autosummary_entries(API.read_text())
    names = {name for _, name in entries}
    assert len(entries) > 100
    assert {
        "cluster_ci",
        "engine.scaleout.finish",
        "plotting.forest",
        "EvalciWarning",
    } <= names
    assert "DataFrame.evalci.cluster_ci" in names
    # currentmodule carries over: the planning table has none of its own
    assert ("evalci", "icc") in entries
    assert ("pandas", "DataFrame.evalci.report") in entries
    labels = {label for label, _ in OBJECTS}
    assert "evalci.decide" in labels and "evalci.metrics.Metric" in labels
    assert "evalci.read_jsonl" in labels
    methods = {label for label, _ in METHODS}
    assert "evalci.BootstrapResult.interval" in methods
    assert "evalci.simulate.PilotModel.from_data" in methods
    assert not any("Accessor" in label for label in methods)


def test_the_check_can_fail():
    """A parameter missing from ``Parameters`` is reported, ``a, b`` counts twice."""

    def f(a, b, *args, c=1, **kwargs):
        """Do it.

        Parameters
        ----------
        a, b : int
            Two numbers.
        \\*args
            More.
        **kwargs
            Options.
        """

    assert set(signature_names(f)) - documented_names(f) == {"c"}

    def g(a, b):
        """Do it.

        Parameters
        ----------
        a : int
        b : int
            A number.
        """

    assert documented_names(g) == {"a", "b"}
    assert documented_names(g, described=True) == {"b"}


@pytest.mark.parametrize("label, obj", CHECKED, ids=[label for label, _ in CHECKED])
def test_parameters_are_documented(label, obj):
    names = signature_names(obj)
    missing = [n for n in names if n not in documented_names(obj)]
    assert not missing, (
        f"{label}: the docstring's Parameters section does not document "
        f"{missing}; add them in numpydoc form (`name : type` then a description)."
    )
    bare = [n for n in names if n not in documented_names(obj, described=True)]
    assert not bare, (
        f"{label}: {bare} have a type but no description; say what each is."
    )
