"""evalci: honest confidence intervals for LLM evaluation results.

Importing evalci registers the ``.evalci`` accessor on pandas DataFrames.

>>> import evalci
>>> df = evalci.load_example()
>>> res = df.evalci.cluster_ci("correct", cluster="input_id", by="system", rng=0)
"""

from . import (
    coverage,
    extract,
    judge,
    metrics,
    planning,
    scaleout,
    simulate,
    testing,
    xr,
)
from ._example import load_example
from ._warnings import (
    ClusteringIgnoredWarning,
    DegenerateDataWarning,
    EstimandWarning,
    EvalciWarning,
    FewClustersWarning,
    FewResamplesWarning,
    PooledGroupsWarning,
)
from .accessors import EvalciDataArrayAccessor, EvalciDataFrameAccessor
from .analytic import (
    AnalyticResult,
    McNemarResult,
    RunLevelResult,
    analytic_ci,
    mcnemar,
    run_level_ci,
)
from .compare import ComparisonResult, MissingInputsWarning, compare, decide
from .core import bootstrap, cluster_ci
from .metrics import Metric
from .planning import Plan, icc, minimum_detectable_effect, plan, sample_size
from .ranks import Leaderboard, leaderboard
from .readers import read_helm, read_inspect, read_jsonl, read_lm_eval
from .report import Report, flaky, report
from .results import BootstrapResult

__version__ = "0.1.0"

__all__ = [
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
