"""The way a table travels through ``bootstrap`` reads top to bottom.

Read from the code with ``ast`` (issue 35): the arguments reach
``auto.resolve`` by name (no ``locals()``), the call is validated in one
pass (``bootstrap_iv``), and the missing-value policy is one step before the
engine and one after (``policy.before``, ``policy.after``), in that order,
with nothing of ``engine/missing.py`` called between them.
"""

import ast
from pathlib import Path

from conftest import ROOT  # noqa: E402

ENGINE = ROOT / "src" / "evalci" / "engine"


def _function(path: Path, name: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name
    )


def _calls(fn: ast.FunctionDef) -> list[str]:
    """The dotted names called in ``fn``, in the order they stand."""
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            parts = []
            while isinstance(f, ast.Attribute):
                parts.append(f.attr)
                f = f.value
            if isinstance(f, ast.Name):
                parts.append(f.id)
                out.append((node.lineno, node.col_offset, ".".join(reversed(parts))))
    return [name for *_, name in sorted(out)]


def test_entry_points_pass_their_arguments_by_name():
    for path, name in (
        (ENGINE / "bootstrap.py", "bootstrap"),
        (ENGINE.parent / "methods" / "compare" / "paired.py", "compare"),
    ):
        calls = _calls(_function(path, name))
        assert "locals" not in calls, name
        assert "_auto.resolve" in calls, name


def test_the_pandas_path_is_validate_policy_engine_policy():
    calls = _calls(_function(ENGINE / "bootstrap.py", "_bootstrap"))
    steps = [
        c
        for c in calls
        if c
        in (
            "rows_of",
            "bootstrap_iv",
            "_policy.before",
            "replicates",
            "_result",
            "_policy.after",
        )
        or c.startswith("_missing.")
    ]
    assert steps == [
        "rows_of",
        "bootstrap_iv",
        "_policy.before",
        "replicates",
        "_result",
        "_policy.after",
    ]


def test_the_policy_steps_use_the_missing_vocabulary_only_inside_them():
    # bootstrap.py enters engine/missing.py nowhere but through the policy
    bootstrap = (ENGINE / "bootstrap.py").read_text(encoding="utf-8")
    body = bootstrap.split("def _bootstrap(", 1)[1].split("\ndef ", 1)[0]
    assert "_missing." not in body
