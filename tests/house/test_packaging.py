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

    def __init__(self, summary, files, version="0.1.0", direct_url=None):
        self.metadata = {"Summary": summary} if summary is not None else {}
        self.files = files
        self.version = version
        self.direct_url = direct_url

    def read_text(self, name):
        assert name == "direct_url.json"
        return None if self.direct_url is None else json.dumps(self.direct_url)


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
def patch_distribution(monkeypatch, dist, ours=None) -> None:
    """``dist`` as the distribution named evalci, ``ours`` as evalci-stats."""

    def distribution(name):
        assert name in ("evalci", evalci.DISTRIBUTION)
        found = dist if name == "evalci" else ours
        if found is None:
            raise metadata.PackageNotFoundError(name)
        return found

    monkeypatch.setattr(metadata, "distribution", distribution)


def test_the_other_evalci_is_refused_with_the_fix(monkeypatch):
    patch_distribution(monkeypatch, FakeDistribution(OTHER_SUMMARY, OTHER_FILES))
    with pytest.raises(ImportError, match="another project named 'evalci'") as e:
        evalci._check_distribution()
    message = str(e.value)
    assert OTHER_SUMMARY in message
    # the fix: a reinstall from the checkout (this library is not on PyPI)
    assert "pip uninstall evalci && pip install --force-reinstall " in message
    assert "not on PyPI yet" in message


@pytest.mark.parametrize(
    "direct_url, fix",
    [
        # pip install -e /src/evalci-stats: pip's direct_url.json names the folder
        (
            {"url": "file:///src/my%20evalci", "dir_info": {"editable": True}},
            "pip install --force-reinstall -e '/src/my evalci'",
        ),
        (
            {"url": "file:///src/evalci", "dir_info": {}},
            "pip install --force-reinstall /src/evalci",
        ),
        # installed from a wheel file, or nothing recorded: a placeholder
        (
            {
                "url": "file:///d/evalci_stats-0.1.0-py3-none-any.whl",
                "archive_info": {},
            },
            "pip install --force-reinstall -e /path/to/your/evalci-stats/checkout",
        ),
        (None, "pip install --force-reinstall -e /path/to/your/evalci-stats/checkout"),
    ],
    ids=["editable", "folder", "wheel", "unknown"],
)
def test_the_fix_names_the_checkout(monkeypatch, direct_url, fix):
    ours = FakeDistribution(evalci._SUMMARY, [], direct_url=direct_url)
    other = FakeDistribution(OTHER_SUMMARY, OTHER_FILES)
    patch_distribution(monkeypatch, other, ours)
    with pytest.raises(ImportError) as e:
        evalci._check_distribution()
    assert str(e.value).endswith("checkout: pip uninstall evalci && " + fix)


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
    assert "pip uninstall evalci && pip install --force-reinstall " in out.stderr


def test_pyproject_names_the_distribution_and_ships_py_typed():
    pyproject = SRC.parent / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("not a source checkout")
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads(pyproject.read_text())
    assert config["project"]["name"] == evalci.DISTRIBUTION == "evalci-stats"
    assert config["project"]["description"].startswith(evalci._SUMMARY)
    # the check (evalci/_guard.py, loaded on its own too) uses the same names
    assert (evalci._guard.SUMMARY, evalci._guard.DISTRIBUTION) == (
        evalci._SUMMARY,
        evalci.DISTRIBUTION,
    )
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


DEPENDENCIES = "import numpy, pandas, scipy, xarray"
# scipy's submodules load its array API layer, and with it numpy.f2py,
# numpy.testing and charset_normalizer (~0.25 s): evalci imports them when used.
LAZY = [
    "scipy.special",
    "scipy.sparse",
    "scipy.stats",
    "scipy.optimize",
    "scipy.interpolate",
    "scipy.signal",
    "numpy.f2py",
    "numpy.testing",
    "charset_normalizer",
    # evalci's parts that no accessor needs: read on first use (evalci.__getattr__)
    "evalci.simulate",
    "evalci.methods.judge",
    "evalci.methods.preference.leaderboard",
    "evalci.methods.suites.scores",
    "evalci.io.readers",
]
LOADED = """
    import json, sys
    {statement}
    print(json.dumps(sorted(sys.modules)))
"""


def test_import_evalci_loads_nothing_beyond_its_dependencies():
    """A fresh ``import evalci`` loads no scipy submodule, and no third-party
    module that ``import numpy, pandas, scipy, xarray`` does not load itself
    (``benchmarks/bench_import.py`` times the two). ``evalci._guard``'s
    metadata look-up stays: xarray imports ``importlib.metadata`` anyway, and
    the look-up itself costs about 0.3 ms."""
    loaded = {}
    for statement in (DEPENDENCIES, "import evalci"):
        out = run(LOADED.format(statement=statement))
        assert out.returncode == 0, out.stderr
        loaded[statement] = set(json.loads(out.stdout))
    ours, deps = loaded["import evalci"], loaded[DEPENDENCIES]
    assert [m for m in LAZY if m in ours - deps] == []
    std = set(sys.stdlib_module_names)
    extra = sorted(
        m
        for m in ours - deps
        if m.split(".")[0] not in std and not m.startswith(("evalci", "_"))
    )
    assert extra == []


def test_lazy_names_of_evalci_are_their_objects():
    out = run(
        """
        import sys
        import evalci
        assert "evalci.io.readers" not in sys.modules
        assert {"read_jsonl", "judge", "suite_ci"} <= set(dir(evalci))
        import evalci.io.readers, evalci.methods.suites.scores
        assert evalci.read_jsonl is evalci.io.readers.read_jsonl
        assert evalci.io.read_jsonl is evalci.read_jsonl
        from evalci import MissingTasksWarning, preference
        assert MissingTasksWarning is evalci.methods.suites.scores.MissingTasksWarning
        assert preference is sys.modules["evalci.preference"]
        assert preference.bradley_terry is evalci.methods.preference.bradley_terry
        assert all(hasattr(evalci, name) for name in evalci.__all__)
        try:
            evalci.no_such_name
        except AttributeError as e:
            print(e)
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "module 'evalci' has no attribute 'no_such_name'"


def test_lazy_scipy_modules_are_the_modules():
    """The stand-ins of ``evalci._base.lazy`` read scipy's own functions."""
    out = run(
        """
        import sys
        from evalci._base import lazy
        assert "scipy.special" not in sys.modules
        print(lazy.special)
        import scipy.sparse, scipy.special, scipy.stats
        assert lazy.special.ndtri is scipy.special.ndtri
        assert lazy.special.module is scipy.special
        assert lazy.sparse.csr_matrix is scipy.sparse.csr_matrix
        assert lazy.stats.norm is scipy.stats.norm
        try:
            lazy.special.no_such_function
        except AttributeError as e:
            print(e)
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "<lazy module 'scipy.special'>"
    assert "no_such_function" in out.stdout.splitlines()[1]


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


# ------------------------------------- the built wheel, and both install orders
# Slow: builds the sdist and the wheel (``python -m build``, which fetches the
# build backend like any build) and installs into throwaway virtual
# environments. Needs a source checkout.
TESTS_ONLY = [  # tests/data/PROVENANCE.md: "use in tests only, do not ship"
    "math500_cot_highk_counts.csv",
    "aime2024_cot_highk_counts.csv",
    "cruxeval_output_T0.2_counts.csv",
    "swebench_lite_k1_clustered.csv",
]
CONFLICT = "ImportError: another project named 'evalci'"


def _sh(*cmd, cwd=None, check=True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    out = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    if check:
        assert out.returncode == 0, (cmd, out.stdout[-3000:], out.stderr[-3000:])
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A copy of the checkout (its files only), and the sdist and wheel built from it."""
    root = SRC.parent
    if not (root / "pyproject.toml").exists():
        pytest.skip("not a source checkout")
    pytest.importorskip("build")  # in the test extra
    import shutil

    tmp = tmp_path_factory.mktemp("built")
    checkout = tmp / "checkout"
    ignore = shutil.ignore_patterns(
        "__pycache__", "*.egg-info", ".venv*", ".git", "build", "dist", "_build"
    )
    for name in ("src", "tests", "pyproject.toml", "setup.py", "README.md"):
        (shutil.copytree if (root / name).is_dir() else shutil.copy2)(
            root / name, checkout / name, **({"ignore": ignore} if (root / name).is_dir() else {})
        )  # fmt: skip
    dist = tmp / "dist"
    _sh(sys.executable, "-m", "build", "--outdir", dist, checkout)
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    return checkout, wheel, sdist


def _venv(path: Path) -> Path:
    _sh(sys.executable, "-m", "venv", path)
    return path / ("Scripts" if os.name == "nt" else "bin")


def _other_wheel(folder: Path) -> Path:
    """A wheel standing in for PyPI's ``evalci`` 0.1.0: its name, summary, files."""
    import base64
    import hashlib
    import zipfile

    files = {
        "evalci/__init__.py": "from .stats import ci\n",
        "evalci/stats.py": "def ci():\n    return 'the other evalci'\n",
        "evalci/cli.py": "def main():\n    return 0\n",
        "evalci/report.py": "def report():\n    return None\n",
        "evalci-0.1.0.dist-info/METADATA": (
            "Metadata-Version: 2.4\nName: evalci\nVersion: 0.1.0\n"
            f"Summary: {OTHER_SUMMARY}\n"
        ),
        "evalci-0.1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
        "evalci-0.1.0.dist-info/top_level.txt": "evalci\n",
    }
    record = []
    path = folder / "evalci-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
            record.append(f"{name},sha256={digest.rstrip(b'=').decode()},{len(data)}")
            z.writestr(name, data)
        record.append("evalci-0.1.0.dist-info/RECORD,,")
        z.writestr("evalci-0.1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


@pytest.mark.slow
def test_wheel_and_sdist_hold_no_test_data(built):
    import tarfile
    import zipfile

    _, wheel, sdist = built
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n], names
    assert [n for n in names if n.endswith(".csv")] == [
        "evalci/data/gpqa_diamond_2sys_5runs.csv"
    ]
    top = {n.split("/")[0] for n in names}
    assert top == {
        "evalci",
        "evalci_stats-0.1.0.dist-info",
        "_evalci_stats_guard.py",
        "evalci_stats_guard.pth",
    }, top
    assert "evalci/_guard.py" in names and "evalci/py.typed" in names
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    for name in TESTS_ONLY:
        assert not [m for m in members if m.endswith(name)], name
    assert [m for m in members if m.endswith(".csv")] == [
        "evalci_stats-0.1.0/src/evalci/data/gpqa_diamond_2sys_5runs.csv"
    ]


@pytest.mark.slow
def test_wheel_installs_runs_the_demo_and_refuses_the_other_evalci(built, tmp_path):
    """A fresh venv: the wheel, its demo; then the other ``evalci`` after ours,
    before ours, and beside an editable install (both orders)."""
    checkout, wheel, _ = built
    other = _other_wheel(tmp_path)
    bin_ = _venv(tmp_path / "venv")
    py, pip = bin_ / "python", [bin_ / "python", "-m", "pip", "-q"]
    _sh(*pip, "install", wheel)
    demo = _sh(py, "-m", "evalci", "demo", "--n-resamples", "500", cwd=tmp_path)
    assert "openai/gpt-5-nano-2025-08-07" in demo.stdout

    def refused(editable: bool):
        out = _sh(py, "-c", "import evalci", cwd=tmp_path, check=False)
        assert out.returncode != 0 and CONFLICT in out.stderr, out.stderr[-2000:]
        assert OTHER_SUMMARY in out.stderr and "not on PyPI yet" in out.stderr
        fix = "pip uninstall evalci && pip install --force-reinstall "
        assert fix in out.stderr
        if editable:  # the fix names the checkout it was installed from
            assert fix + "-e " + str(checkout) in out.stderr

    def works():
        out = _sh(py, "-c", "import evalci; print(evalci.__file__)", cwd=tmp_path)
        return out.stdout.strip()

    # 1. the other project after ours: its evalci/__init__.py replaces ours
    _sh(*pip, "install", "--no-deps", other)
    refused(editable=False)
    # the fix as printed, from the wheel (deps stay installed)
    _sh(*pip, "uninstall", "-y", "evalci")
    _sh(*pip, "install", "--force-reinstall", "--no-deps", wheel)
    assert works().endswith(os.path.join("site-packages", "evalci", "__init__.py"))
    # 2. the other project before ours: our __init__.py runs the check
    _sh(*pip, "uninstall", "-y", "evalci-stats", "evalci")
    _sh(*pip, "install", "--no-deps", other)
    _sh(*pip, "install", "--no-deps", wheel)
    refused(editable=False)
    # 3. editable, then the other project: its folder shadows our checkout
    _sh(*pip, "uninstall", "-y", "evalci-stats", "evalci")
    _sh(*pip, "install", "--no-deps", "-e", checkout)
    assert works() == str(checkout / "src" / "evalci" / "__init__.py")
    _sh(*pip, "install", "--no-deps", other)
    refused(editable=True)
    # 4. the other project, then editable
    _sh(*pip, "uninstall", "-y", "evalci-stats", "evalci")
    _sh(*pip, "install", "--no-deps", other)
    _sh(*pip, "install", "--no-deps", "-e", checkout)
    refused(editable=True)
    # and the fix as printed restores the editable install
    _sh(*pip, "uninstall", "-y", "evalci")
    _sh(*pip, "install", "--force-reinstall", "--no-deps", "-e", checkout)
    assert works() == str(checkout / "src" / "evalci" / "__init__.py")
