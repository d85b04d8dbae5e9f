"""The house: subpackages are layers, imports run one way, and nothing
imports in a circle (counting imports inside functions).

docs/contributing.md draws the layers; this test keeps the drawing true. It
reads the source with ``ast`` (no import needed), so it sees every import,
at module level or inside a function.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "evalci"

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
#: the top of the house: ``evalci/__init__.py``, ``__main__.py`` and the old
#: module paths kept importable (``evalci/planning.py`` and the others)
TOP = 8


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
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
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


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_file_over_800_lines(name):
    assert len(MODULES[name].read_text(encoding="utf-8").splitlines()) <= 800


def _long_functions(path: Path, limit: int = 80) -> list[str]:
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
def test_no_function_body_over_80_lines(name):
    assert _long_functions(MODULES[name]) == []
