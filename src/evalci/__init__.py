"""evalci: honest confidence intervals for LLM evaluation results.

Importing evalci registers the ``.evalci`` accessor on pandas DataFrames.

>>> import evalci
>>> df = evalci.load_example()
>>> res = df.evalci.cluster_ci("correct", cluster="input_id", by="system", rng=0)

The distribution is ``evalci-stats`` (not on PyPI yet: ``pip install -e .``
from a checkout); the import name is ``evalci``. The unrelated project that PyPI calls ``evalci``
installs a package of the same import name, and two packages in one folder
mix their files, so importing refuses to run beside it, in either install
order (see :func:`_check_distribution` and ``evalci/_guard.py``).
"""

DISTRIBUTION = "evalci-stats"
# Our summary, as every distribution of this project (the old name too) has it.
_SUMMARY = "Confidence intervals for LLM evaluation results"


def _check_distribution() -> None:
    """Raise ImportError if PyPI's unrelated ``evalci`` project is installed.

    It ships ``evalci/__init__.py``, ``evalci/cli.py`` and ``evalci/report.py``
    among others; installed beside ours they overwrite or shadow each other.
    The check is :func:`evalci._guard.check` (standard library only): here
    for when ours was installed last, and run by the start-up hook that the
    wheel installs (``evalci_stats_guard.pth``) for when the other project
    replaced this file. The error names the conflict and the fix, a
    reinstall from the checkout. Costs one metadata look-up.
    """
    from ._guard import check

    check()


_check_distribution()

from evalci import metrics  # noqa: E402 - after the distribution check
from evalci._base.options import get_option, set_options  # noqa: E402
from evalci._base.version import __version__  # noqa: E402, F401
from evalci._base.warnings import (  # noqa: E402
    ClusteringIgnoredWarning,
    DegenerateDataWarning,
    EstimandWarning,
    EvalciWarning,
    FewClustersWarning,
    FewResamplesWarning,
    MissingDataWarning,
    PooledGroupsWarning,
    SlowMetricWarning,
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
    facet_ci,
    facet_compare,
    g_study,
    leaderboard,
    report,
)
from evalci.io.example import load_example  # noqa: E402
from evalci.methods.analytic import (  # noqa: E402
    AnalyticResult,
    McNemarResult,
    RunLevelResult,
    analytic_ci,
    mcnemar,
    run_level_ci,
)
from evalci.methods.bayes import (  # noqa: E402
    BayesComparison,
    BayesResult,
    BetaBinomialPrior,
    bayes_ci,
    bayes_compare,
)
from evalci.methods.compare import (  # noqa: E402
    ComparisonResult,
    MissingInputsWarning,
    decide,
)
from evalci.methods.facets import FacetPlan, FacetResult, GStudy, plan_facets  # noqa: E402
from evalci.methods.planning import (  # noqa: E402
    Plan,
    mde_from_data,
    minimum_detectable_effect,
    plan,
    plan_from_data,
    power,
    predict_width,
    sample_size,
    sample_size_from_data,
    width_factor,
    width_table,
)
from evalci.methods.ranks import Leaderboard, leaderboard_from_bootstrap  # noqa: E402
from evalci.methods.variance import icc  # noqa: E402
from evalci.metrics import Metric  # noqa: E402
from evalci.reporting.columns import score_columns  # noqa: E402
from evalci.reporting.flaky import flaky  # noqa: E402
from evalci.reporting.report_result import Report  # noqa: E402

# Imported on first use (PEP 562): no accessor needs them, and they are about
# a third of evalci's own import time. name -> (module, attribute or None for
# the module itself). The public namespaces besides ``evalci`` itself are
# ``evalci.metrics``, ``evalci.io`` (the readers), ``evalci.simulate``,
# ``evalci.judge``, ``evalci.preference``, ``evalci.testing`` and
# ``evalci.plotting``; every other module is a home, not an address.
_LAZY = {
    "io": ("evalci.io", None),
    "judge": ("evalci.judge", None),
    "plotting": ("evalci.plotting", None),
    "preference": ("evalci.preference", None),
    "simulate": ("evalci.simulate", None),
    "testing": ("evalci.testing", None),
    **{
        name: ("evalci.io.readers", name)
        for name in (
            "read_arena",
            "read_arena_hard",
            "read_helm",
            "read_inspect",
            "read_jsonl",
            "read_lm_eval",
            "sample_counts",
        )
    },
    "read_lm_eval_results": ("evalci.io.lm_eval_results", "read_lm_eval_results"),
    "Fragility": ("evalci.methods.compare", "Fragility"),
    "pair_fragility": ("evalci.methods.compare", "pair_fragility"),
    "MissingTasksWarning": ("evalci.methods.suites", "MissingTasksWarning"),
    "SuiteResult": ("evalci.methods.suites", "SuiteResult"),
    "suite_ci": ("evalci.methods.suites", "suite_ci"),
}


def __getattr__(name: str):
    """The names of :data:`_LAZY`, imported when first read."""
    if name not in _LAZY:
        raise AttributeError(f"module 'evalci' has no attribute {name!r}")
    import importlib

    path, attr = _LAZY[name]
    value = importlib.import_module(path)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DISTRIBUTION",
    "get_option",
    "set_options",
    "bootstrap",
    "cluster_ci",
    "compare",
    "facet_ci",
    "facet_compare",
    "g_study",
    "plan_facets",
    "FacetPlan",
    "FacetResult",
    "GStudy",
    "decide",
    "leaderboard",
    "leaderboard_from_bootstrap",
    "report",
    "flaky",
    "score_columns",
    "load_example",
    "BootstrapResult",
    "ComparisonResult",
    "Leaderboard",
    "Report",
    "Metric",
    "AnalyticResult",
    "McNemarResult",
    "RunLevelResult",
    "analytic_ci",
    "mcnemar",
    "run_level_ci",
    "BayesComparison",
    "BetaBinomialPrior",
    "BayesResult",
    "bayes_ci",
    "bayes_compare",
    "Plan",
    "icc",
    "plan",
    "plan_from_data",
    "sample_size",
    "sample_size_from_data",
    "minimum_detectable_effect",
    "mde_from_data",
    "power",
    "predict_width",
    "width_factor",
    "width_table",
    "read_arena",
    "read_arena_hard",
    "read_helm",
    "read_inspect",
    "read_jsonl",
    "read_lm_eval",
    "read_lm_eval_results",
    "sample_counts",
    "Fragility",
    "pair_fragility",
    "MissingTasksWarning",
    "SuiteResult",
    "suite_ci",
    "ClusteringIgnoredWarning",
    "DegenerateDataWarning",
    "EstimandWarning",
    "EvalciWarning",
    "FewClustersWarning",
    "FewResamplesWarning",
    "MissingDataWarning",
    "MissingInputsWarning",
    "PooledGroupsWarning",
    "SlowMetricWarning",
    "EvalciDataArrayAccessor",
    "EvalciDataFrameAccessor",
    "metrics",
    "io",
    "simulate",
    "judge",
    "preference",
    "testing",
    "plotting",
]
