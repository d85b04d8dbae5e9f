"""Packaging: the distribution check, what ``import evalci`` imports, py.typed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

import evalci

SRC = Path(evalci.__file__).resolve().parents[1]
# PyPI's unrelated project of the same import name: its wheel's METADATA and
# RECORD (evalci 0.1.0, read from the wheel itself).
OTHER_SUMMARY = "Statistical significance & confidence intervals for LLM evals"
OTHER_FILES = ["evalci/__init__.py", "evalci/_significance.py", "evalci/stats.py"]


class FakeDistribution:
    """What ``_check_distribution`` reads of an ``importlib.metadata.Distribution``."""

    def __init__(self, summary, files, version="0.1.0"):
        self.metadata = {"Summary": summary} if summary is not None else {}
        self.files = files
        self.version = version


def run(code: str, **env) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter with this checkout's ``evalci`` first."""
    path = os.pathsep.join(filter(None, [env.pop("PYTHONPATH", ""), str(SRC)]))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": path, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


# ------------------------------------------------------- distribution check
def patch_distribution(monkeypatch, dist) -> None:
    def distribution(name):
        assert name == "evalci"
        if dist is None:
            raise metadata.PackageNotFoundError(name)
        return dist

    monkeypatch.setattr(metadata, "distribution", distribution)


def test_the_other_evalci_is_refused_with_the_fix(monkeypatch):
    patch_distribution(monkeypatch, FakeDistribution(OTHER_SUMMARY, OTHER_FILES))
    with pytest.raises(ImportError, match="another project named 'evalci'") as e:
        evalci._check_distribution()
    message = str(e.value)
    assert OTHER_SUMMARY in message
    assert "pip uninstall evalci && pip install --force-reinstall evalci-stats" in (
        message
    )


def test_a_distribution_without_metadata_is_not_taken_for_ours(monkeypatch):
    patch_distribution(monkeypatch, FakeDistribution(None, None))
    with pytest.raises(ImportError, match="no summary"):
        evalci._check_distribution()


@pytest.mark.parametrize(
    "dist",
    [
        None,  # no distribution named evalci: the usual case
        # this project under its old name, e.g. an editable install (no files)
        FakeDistribution(evalci._SUMMARY + ": cluster bootstrap ...", None),
        FakeDistribution("", ["evalci/__init__.py", "evalci/accessors.py"]),
    ],
    ids=["absent", "old-name-editable", "our-files"],
)
def test_ours_or_none_passes(monkeypatch, dist):
    patch_distribution(monkeypatch, dist)
    assert evalci._check_distribution() is None


def test_import_fails_beside_the_other_distribution(tmp_path):
    """End to end: a dist-info of the other project on the path stops the import."""
    info = tmp_path / "evalci-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.4\nName: evalci\nVersion: 0.1.0\n"
        f"Summary: {OTHER_SUMMARY}\n"
    )
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in OTHER_FILES))
    out = run("import evalci", PYTHONPATH=str(tmp_path))
    assert out.returncode != 0
    assert "ImportError: another project named 'evalci'" in out.stderr
    assert "pip install --force-reinstall evalci-stats" in out.stderr


def test_pyproject_names_the_distribution_and_ships_py_typed():
    pyproject = SRC.parent / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("not a source checkout")
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads(pyproject.read_text())
    assert config["project"]["name"] == evalci.DISTRIBUTION == "evalci-stats"
    assert config["project"]["description"].startswith(evalci._SUMMARY)
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["evalci"]
    assert (SRC / "evalci" / "py.typed").exists()
    for extra in ("test", "all"):  # self-references use the new name
        assert not [
            r
            for r in config["project"]["optional-dependencies"][extra]
            if r.startswith("evalci[")
        ]


def test_readme_example_prints_what_the_readme_says():
    readme = SRC.parent / "README.md"
    if not readme.exists():
        pytest.skip("not a source checkout")
    text = readme.read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    shown = text.split("```text\n", 1)[1].split("```", 1)[0]
    out = run(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout == shown


# ----------------------------------------------------------------- start-up
HEAVY = ["scipy.stats", "scipy.optimize", "dask", "distributed", "matplotlib"]


def test_import_evalci_leaves_heavy_modules_out():
    """evalci adds none of them to what its dependencies import.

    (xarray 2023.6 itself imports part of Dask when it is installed; newer
    xarray does not, and then no Dask module is loaded at all.)
    """
    out = run(
        f"""
        import json, sys
        import numpy, scipy.special, pandas, xarray
        before = set(sys.modules)
        import evalci
        heavy = {HEAVY!r}
        print(json.dumps(sorted(
            m for m in set(sys.modules) - before
            if any(m == h or m.startswith(h + ".") for h in heavy))))
        """
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


DASK_ACCESSOR = """
    import sys
    {first}
    import dask.dataframe as dd
    import numpy as np
    import pandas as pd
    from evalci.frames.accessors import EvalciDaskDataFrameAccessor
    df = pd.DataFrame({{"input_id": np.repeat(np.arange(12), 3),
                        "correct": np.arange(36) % 5 < 3}}).astype({{"correct": int}})
    ddf = dd.from_pandas(df, npartitions=2)
    assert isinstance(ddf.evalci, EvalciDaskDataFrameAccessor), type(ddf.evalci)
    hooks = [f for f in sys.meta_path if type(f).__name__ == "_DaskHook"]
    assert hooks == [], hooks  # the hook removes itself once it has registered
    kw = dict(cluster="input_id", n_resamples=200, rng=0)
    r, p = ddf.evalci.cluster_ci("correct", **kw), df.evalci.cluster_ci("correct", **kw)
    assert (r.estimate, r.low, r.high) == (p.estimate, p.low, p.high)
    print(r.estimate)
"""


@pytest.mark.parametrize(
    "first",
    ["import evalci", "import dask.dataframe; import evalci"],
    ids=["evalci-first", "dask-first"],
)
def test_dask_accessor_is_registered_whichever_is_imported_first(first):
    pytest.importorskip("dask.dataframe")
    out = run(DASK_ACCESSOR.format(first=first))
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == pytest.approx(22 / 36)  # rows with i % 5 < 3


# ---------------------------------------------------------------- API docs
def documented_parameters(func) -> set[str]:
    docscrape = pytest.importorskip("numpydoc.docscrape")  # the docs extra
    names = set()
    for p in docscrape.FunctionDoc(func)["Parameters"]:
        names.update(n.strip() for n in p.name.split(","))
    return names


@pytest.mark.parametrize("func", [evalci.cluster_ci, evalci.bootstrap])
def test_entry_points_document_every_parameter(func):
    import inspect

    assert set(inspect.signature(func).parameters) == documented_parameters(func)
