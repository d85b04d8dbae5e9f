"""The house: subpackages are layers, imports run one way, and nothing
imports in a circle (counting imports inside functions).

docs/contributing.md draws the layers; this test keeps the drawing true. It
reads the source with ``ast`` (no import needed), so it sees every import,
at module level or inside a function.
"""

import ast
from pathlib import Path

import pytest

from conftest import ROOT  # noqa: E402

PACKAGE = ROOT / "src" / "evalci"

#: each subpackage's layer; a module may import its own layer or lower ones
LAYERS = {
    "_base": 0,
    "metrics": 1,
    "engine": 2,
    "methods": 3,
    "simulate": 4,
    "io": 5,
    "reporting": 6,
    "frames": 7,
}
#: the top of the house: ``evalci/__init__.py``, ``__main__.py``, the guard
#: against PyPI's unrelated ``evalci`` and the public namespaces below
TOP = 8
#: the public namespaces that are modules at the top, and the home of each:
#: lists of names (docstring, one import, ``__all__``), not aliases
FACADES = {
    "evalci.inspect": "evalci.io.inspect_hooks",
    "evalci.judge": "evalci.methods.judge",
    "evalci.plotting": "evalci.reporting.plots",
    "evalci.preference": "evalci.methods.preference",
    "evalci.testing": "evalci.methods.testing",
}
#: the methods' families: ``evalci.methods.<family>``
FAMILIES = sorted(p.parent.name for p in (PACKAGE / "methods").glob("*/__init__.py"))


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The evalci modules ``name`` imports, anywhere in its body."""
    return {module for module, _ in _imported(name, path)}


def _imported(name: str, path: Path) -> set[tuple[str, str | None]]:
    """``(module, name)`` for each evalci import in ``name``'s body: the
    module the import resolves to, and the name taken from it (None when a
    module itself is imported)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            targets = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            taken = None
            while t and t not in MODULES:
                t, _, taken = t.rpartition(".")
            if t and t != name:
                out.add((t, taken))
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> int:
    parts = name.split(".")
    if len(parts) == 1 or parts[1] not in LAYERS:
        return TOP
    return LAYERS[parts[1]]


def test_every_subpackage_has_a_layer():
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subpackages == set(LAYERS)


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _layer(n) < TOP))
def test_imports_run_downward(name):
    upward = sorted(d for d in GRAPH[name] if _layer(d) > _layer(name))
    assert not upward, f"{name} imports a layer above it: {upward}"


def test_streams_import_nothing_but_the_base():
    deps = GRAPH["evalci.engine.resampling"]
    assert all(d.startswith("evalci._base") for d in deps), deps


def test_the_engine_core_does_not_import_its_dask_backend():
    for name in ("evalci.engine.passes", "evalci.engine.bootstrap"):
        assert "evalci.engine.scaleout" not in GRAPH[name]


def test_methods_do_not_know_dask():
    # Dask DataFrames enter through evalci.frames (doors and dask_frame)
    for name, path in MODULES.items():
        if _layer(name) <= LAYERS["methods"]:
            assert "evalci.frames" not in " ".join(GRAPH[name]), name
            assert "is_dask_frame" not in path.read_text(encoding="utf-8"), name


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan).

    Edges out of a package's ``__init__`` are left out: re-exporting names
    there is how a package shows its API, and Python runs it first anyway.
    """
    edges = {
        n: [] if MODULES[n].name == "__init__.py" else sorted(GRAPH[n]) for n in MODULES
    }
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    assert _cycles() == []


def test_the_cycle_finder_finds_a_cycle():
    # the check above could not fail if the finder missed cycles
    saved = dict(GRAPH)
    try:
        GRAPH["evalci.engine.cube"] = {
            *GRAPH["evalci.engine.cube"],
            "evalci.engine.table",
        }
        planted = {"evalci.engine.cube", "evalci.engine.table"}
        assert any(planted <= set(c) for c in _cycles())
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def _long_functions(path: Path, limit: int = 60) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                body = body[1:]
            if body and node.end_lineno - body[0].lineno + 1 > limit:
                out.append(f"{node.name} (line {node.lineno})")
    return out


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_function_body_over_60_lines(name):
    assert _long_functions(MODULES[name]) == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_file_over_600_lines(name):
    assert len(MODULES[name].read_text(encoding="utf-8").splitlines()) <= 600


# -- the top of the house: no alias modules -----------------------------------


def test_the_top_holds_only_the_package_its_guard_and_public_namespaces():
    top = {n for n, p in MODULES.items() if p.parent == PACKAGE}
    assert top == {"evalci", "evalci.__main__", "evalci._guard", *FACADES}


def test_no_module_replaces_itself_in_sys_modules():
    import re

    alias = re.compile(r"sys\.modules\[[^]]+\]\s*=")
    for name, path in MODULES.items():
        assert not alias.search(path.read_text(encoding="utf-8")), name


@pytest.mark.parametrize("facade", sorted(FACADES))
def test_a_public_namespace_is_its_homes_names(facade):
    """A docstring, then ``from home import *`` and the home's ``__all__``:
    nothing else, so the namespace is exactly the home's public names."""
    import importlib

    tree = ast.parse(MODULES[facade].read_text(encoding="utf-8"))
    doc, star, listed = tree.body
    assert isinstance(doc, ast.Expr) and isinstance(doc.value.value, str)
    for node, name in ((star, "*"), (listed, "__all__")):
        assert isinstance(node, ast.ImportFrom) and node.module == FACADES[facade]
        assert [a.name for a in node.names] == [name]
    public = importlib.import_module(facade)
    home = importlib.import_module(FACADES[facade])
    assert public.__all__ == home.__all__
    assert all(getattr(public, n) is getattr(home, n) for n in home.__all__)


# -- the methods' families ----------------------------------------------------


def _family(name: str) -> str | None:
    parts = name.split(".")
    if parts[:2] == ["evalci", "methods"] and len(parts) > 2 and parts[2] in FAMILIES:
        return parts[2]
    return None


def _public(family: str) -> set[str]:
    tree = ast.parse(MODULES[f"evalci.methods.{family}"].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["__all__"]:
            return set(ast.literal_eval(node.value))
    return set()


IMPORTED = {name: _imported(name, path) for name, path in MODULES.items()}


def test_methods_hold_only_families():
    loose = [n for n in MODULES if n.startswith("evalci.methods.") and not _family(n)]
    assert loose == []


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_uses_another_only_through_its_public_names(family):
    bad = []
    for name in MODULES:
        if _family(name) != family:
            continue
        for module, taken in IMPORTED[name]:
            other = _family(module)
            if other in (None, family):
                continue
            if module != f"evalci.methods.{other}" or taken not in _public(other):
                bad.append(f"{name} imports {module}.{taken}")
    assert bad == []


def _family_edges() -> dict[str, set[str]]:
    edges = {f: set() for f in FAMILIES}
    for name in MODULES:
        if (family := _family(name)) is not None:
            for module in GRAPH[name]:
                if (other := _family(module)) not in (None, family):
                    edges[family].add(other)
    return edges


def test_the_families_form_no_circle():
    edges = _family_edges()
    done, path = set(), []

    def visit(f):
        assert f not in path, f"families import in a circle: {path + [f]}"
        if f in done:
            return
        path.append(f)
        for g in sorted(edges[f]):
            visit(g)
        path.pop()
        done.add(f)

    for f in FAMILIES:
        visit(f)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_familys_docstring_says_what_it_may_import(family):
    """The ``__init__`` docstring's "May import:" paragraph names exactly the
    families the family imports, so the docstring cannot drift."""
    import re

    doc = ast.get_docstring(ast.parse(MODULES[f"evalci.methods.{family}"].read_text()))
    assert doc and "May import:" in doc, family
    said = doc.split("May import:", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"``(\w+)``", said)) & set(FAMILIES)
    assert named == _family_edges()[family]


def test_every_package_says_what_it_holds():
    for path in PACKAGE.rglob("__init__.py"):
        assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), path
