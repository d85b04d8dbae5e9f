"""evalci: honest confidence intervals for LLM evaluation results.

Importing evalci registers the ``.evalci`` accessor on pandas DataFrames.

>>> import evalci
>>> df = evalci.load_example()
>>> res = df.evalci.cluster_ci("correct", cluster="input_id", by="system", rng=0)

The distribution is ``evalci-stats`` (not on PyPI yet: ``pip install -e .``
from a checkout); the import name is ``evalci``. The unrelated project that PyPI calls ``evalci``
installs a package of the same import name, and two packages in one folder
mix their files, so importing refuses to run beside it (see
:func:`_check_distribution`).
"""

DISTRIBUTION = "evalci-stats"
# Our summary, as every distribution of this project (the old name too) has it.
_SUMMARY = "Confidence intervals for LLM evaluation results"


def _check_distribution() -> None:
    """Raise ImportError if PyPI's unrelated ``evalci`` project is installed.

    It ships ``evalci/__init__.py``, ``evalci/cli.py`` and ``evalci/report.py``
    among others; installed beside ours they overwrite or shadow each other.
    A distribution named ``evalci`` is ours (this project before it took its
    own name, as editable installs of it may still be) if its summary is
    ours or it lists ``evalci/accessors.py``. Costs one metadata look-up.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("evalci")
    except metadata.PackageNotFoundError:
        return
    summary = dist.metadata.get("Summary") or ""
    files = {str(f) for f in dist.files or ()}
    if summary.startswith(_SUMMARY) or "evalci/accessors.py" in files:
        return
    raise ImportError(
        f"another project named 'evalci' (version {dist.version}: "
        f"{summary or 'no summary'!r}) is installed and uses the same import "
        "name, so the two packages overwrite each other's files; this library "
        f"is distributed as {DISTRIBUTION!r}. Remove the other and reinstall this "
        f"one: pip uninstall evalci && pip install --force-reinstall {DISTRIBUTION} "
        "(from a checkout of this library: pip install --force-reinstall -e .)"
    )


_check_distribution()

# The old module paths, each the same module object as its new home. Where a
# path is also a function's name (compare, report), the function is bound
# below and wins, as it always did.
from evalci import (  # noqa: E402 - after the distribution check
    accessors,
    analytic,
    coverage,
    extract,
    intervals,
    judge,
    metrics,
    planning,
    ranks,
    readers,
    scaleout,
    simulate,
    testing,
    xr,
)
from evalci import compare as _compare_module  # noqa: E402, F401
from evalci import report as _report_module  # noqa: E402, F401
from evalci._base.version import __version__  # noqa: E402, F401
from evalci._base.warnings import (  # noqa: E402
    ClusteringIgnoredWarning,
    DegenerateDataWarning,
    EstimandWarning,
    EvalciWarning,
    FewClustersWarning,
    FewResamplesWarning,
    PooledGroupsWarning,
)
from evalci.engine.results import BootstrapResult  # noqa: E402
from evalci.frames.accessors import (  # noqa: E402
    EvalciDataArrayAccessor,
    EvalciDataFrameAccessor,
)
from evalci.frames.doors import (  # noqa: E402
    bootstrap,
    cluster_ci,
    compare,
    leaderboard,
    report,
)
from evalci.io.example import load_example  # noqa: E402
from evalci.io.readers import read_helm, read_inspect, read_jsonl, read_lm_eval  # noqa: E402
from evalci.methods.analytic import (  # noqa: E402
    AnalyticResult,
    McNemarResult,
    RunLevelResult,
    analytic_ci,
    mcnemar,
    run_level_ci,
)
from evalci.methods.compare import (  # noqa: E402
    ComparisonResult,
    MissingInputsWarning,
    decide,
)
from evalci.methods.planning import (  # noqa: E402
    Plan,
    icc,
    minimum_detectable_effect,
    plan,
    sample_size,
)
from evalci.methods.ranks import Leaderboard  # noqa: E402
from evalci.metrics import Metric  # noqa: E402
from evalci.reporting.report import Report, flaky  # noqa: E402

__all__ = [
    "DISTRIBUTION",
    "Plan",
    "icc",
    "minimum_detectable_effect",
    "plan",
    "planning",
    "sample_size",
    "AnalyticResult",
    "McNemarResult",
    "analytic_ci",
    "mcnemar",
    "RunLevelResult",
    "run_level_ci",
    "read_helm",
    "read_inspect",
    "read_jsonl",
    "read_lm_eval",
    "readers",
    "analytic",
    "accessors",
    "intervals",
    "extract",
    "judge",
    "ranks",
    "Leaderboard",
    "leaderboard",
    "scaleout",
    "BootstrapResult",
    "ComparisonResult",
    "MissingInputsWarning",
    "Report",
    "flaky",
    "report",
    "compare",
    "decide",
    "ClusteringIgnoredWarning",
    "DegenerateDataWarning",
    "EstimandWarning",
    "EvalciDataArrayAccessor",
    "EvalciDataFrameAccessor",
    "EvalciWarning",
    "FewClustersWarning",
    "FewResamplesWarning",
    "PooledGroupsWarning",
    "Metric",
    "bootstrap",
    "cluster_ci",
    "load_example",
    "metrics",
    "simulate",
    "coverage",
    "testing",
    "xr",
]
