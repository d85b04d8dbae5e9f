"""Fixed results recorded before a refactor: moving code must not move a number.

``python tests/house/test_recorded.py --record`` rewrites ``data/recorded.json`` from
the current code; do that only when a change of results is intended (and say
so in ``CHANGELOG.md``). The test compares every number exactly.
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy

import evalci

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[0] / "data"  # tests/data (this file also runs as a script)
RECORDED = DATA / "recorded.json"


def _floats(x):
    return [float(v) for v in np.ravel(np.asarray(x, dtype=float))]


def _boot(res):
    f = res.to_frame()
    dist = np.atleast_2d(res.bootstrap_distribution)
    return {
        "table": {
            c: _floats(f[c]) for c in ("estimate", "low", "high", "standard_error")
        },
        "head": _floats(dist[:, :8]),
        "mean": _floats(dist.mean(axis=1)),
    }


def _cases():
    gpqa = evalci.load_example()
    one = gpqa[gpqa.system == gpqa.system.iloc[0]]
    sim = evalci.simulate.confusion_model(120, 3, rng=4)
    kappa = evalci.metrics.kappa(truth="label")
    kw = dict(n_resamples=1000, rng=7)
    out = {}
    for strategy in ("cluster", "hierarchical", "single_draw", "iid", "mode_aggregate"):
        for method in ("percentile", "basic", "bca", "normal"):
            out[f"gpqa/{strategy}/{method}"] = _boot(
                evalci.bootstrap(
                    gpqa,
                    "correct",
                    cluster="input_id",
                    by="system",
                    strategy=strategy,
                    method=method,
                    **kw,
                )
            )
    out["gpqa/run-weight/unequal"] = _boot(
        evalci.cluster_ci(
            one.iloc[3:],
            "correct",
            cluster="input_id",
            weight="run",
            method="bca",
            **kw,
        )
    )
    out["sim/kappa/bca"] = _boot(
        evalci.cluster_ci(
            sim, "pred", cluster="input_id", metric=kappa, method="bca", **kw
        )
    )
    out["sim/callable"] = _boot(
        evalci.cluster_ci(
            sim,
            "correct",
            cluster="input_id",
            metric=lambda d: d.correct.mean(),
            n_resamples=200,
            rng=1,
        )
    )
    for method in ("percentile", "bca", "clt"):
        c = evalci.compare(
            gpqa, "correct", cluster="input_id", mme=0.02, method=method, **kw
        ).table
        out[f"compare/{method}"] = {
            k: _floats(c[k]) for k in ("gap", "low", "high", "pvalue")
        }
    first = gpqa[gpqa.run == 1]
    for method in ("clt", "wilson", "clopper-pearson", "jeffreys", "wald"):
        a = evalci.analytic_ci(
            gpqa if method == "clt" else first,
            "correct",
            "input_id",
            by="system",
            method=method,
        ).to_frame()
        out[f"analytic/{method}"] = {
            k: _floats(a[k]) for k in ("estimate", "low", "high")
        }
    icc = evalci.icc(gpqa, "correct", "input_id", system="system")
    out["icc"] = {k: _floats(icc[k]) for k in icc.columns if icc[k].dtype.kind == "f"}
    wt = evalci.width_table(gpqa, "correct", "input_id", by="system")
    out["width_table"] = {
        k: _floats(wt[k]) for k in wt.columns if wt[k].dtype.kind == "f"
    }
    out["sample_size"] = _floats(evalci.sample_size(0.80, 0.83))
    out["sample_size/paired"] = _floats(
        evalci.sample_size(0.80, 0.83, paired=True, discordance=0.10)
    )
    out["mde"] = _floats(evalci.minimum_detectable_effect(500, p=0.7))
    out["plan"] = repr(
        evalci.plan(
            sigma2_between=0.04,
            sigma2_within=0.1,
            target_width=0.05,
            cost_input=10,
            cost_run=1,
        )
    )
    out["report"] = str(evalci.report(gpqa, "correct", "input_id", mme=0.02, **kw))
    counts = pd.read_csv(DATA / "cruxeval_output_T0.2_counts.csv")
    counts = counts[counts.system.isin(sorted(counts.system.unique())[:3])]
    out["crux/counts"] = _boot(
        evalci.cluster_ci(
            counts,
            cluster="input_id",
            by="system",
            successes="n_correct",
            trials="n_runs",
            method="bca",
            **kw,
        )
    )
    da = gpqa.evalci.to_xarray("correct")
    ds = da.evalci.cluster_ci(method="bca", **kw)
    out["xarray/bca"] = {k: _floats(ds[k]) for k in ("estimate", "low", "high")}
    return out


def _compute():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return json.loads(json.dumps(_cases()))


@pytest.mark.skipif(not RECORDED.exists(), reason="nothing recorded yet")
def test_recorded_results_are_unchanged():
    recorded = json.loads(RECORDED.read_text())
    now = _compute()
    missing = sorted(set(recorded) - set(now))
    assert not missing, f"cases no longer computed: {missing}"
    changed = [k for k in recorded if not _same(k, recorded[k], now[k])]
    assert not changed, f"results changed for {changed}"


# Recorded with scipy 1.17 (1.18 gives the same bits). Older scipy's beta
# quantiles differ in the last bit (scipy 1.11: 1 ulp in 0.7033904767824438),
# so on scipy < 1.17 the cases built on them are compared to 1e-13 relative.
_SCIPY_QUANTILE_CASES = {"analytic/clopper-pearson", "analytic/jeffreys"}
_OLD_SCIPY = tuple(int(v) for v in scipy.__version__.split(".")[:2]) < (1, 17)


def _same(key, recorded, now) -> bool:
    """Exactly equal, except scipy's beta quantiles on older scipy (above)."""
    if recorded == now:
        return True
    if not (_OLD_SCIPY and key in _SCIPY_QUANTILE_CASES):
        return False
    return recorded.keys() == now.keys() and all(
        np.allclose(recorded[c], now[c], rtol=1e-13, atol=0) for c in recorded
    )


if __name__ == "__main__" and "--record" in sys.argv:
    RECORDED.parent.mkdir(exist_ok=True)
    RECORDED.write_text(json.dumps(_compute(), indent=1, sort_keys=True) + "\n")
    print(f"recorded {RECORDED}")
