"""The fixed work of a call, made lighter without changing a result (issue 27).

References: the leave-one-input-out formula ``finalize(T.sum(0) - T[i])``
written out on the per-input sums, and the warnings of tables whose cells
hold several rows. The timings are in ``benchmarks/bench_engine.py``.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine import args as _args
from evalci.engine import passes, resampling
from evalci.metrics import Metric


def counts(n=60, systems=("a", "b"), seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "input_id": np.tile(np.arange(n), len(systems)),
            "system": np.repeat(list(systems), n),
            "c": rng.integers(0, 6, n * len(systems)),
            "k": 5,
        }
    )


def pass_of(df, **kw):
    options = dict(strategy="cluster", metric="mean", by=None, strata=None,
                   method="percentile", confidence_level=0.95, n_resamples=200,
                   weight="input", dropna=False)  # fmt: skip
    options.update(kw)
    args = _args.bootstrap_iv(df, None, "input_id", **options)
    return passes.start_pass(df, args, resampling.seed_sequence(0))


def test_systems_pooled_in_a_counts_table_still_warn():
    """A counts table is skipped by the check only when no cell has two rows."""
    df = counts()
    kw = dict(cluster="input_id", successes="c", trials="k", n_resamples=100, rng=0)
    with pytest.warns(evalci.PooledGroupsWarning, match=r"by='system'"):
        evalci.cluster_ci(df, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evalci.cluster_ci(df, by="system", **kw)  # one row per input and system
        evalci.cluster_ci(df[df.system == "a"], **kw)  # the column is constant


@pytest.mark.parametrize("by", [None, "system"])
def test_pattern_jackknife_is_leave_one_input_out_when_read(by):
    df = counts(n=2000, systems=("a", "b") if by else ("a",))
    p = pass_of(df, successes="c", trials="k", by=by)
    assert p.paths == ["patterns"]
    rep = passes.finish_pass(p)
    # deferred: the (N, G) values are gathered only when a comparison reads them
    assert [callable(jack) for _, jack, _ in rep.jackknife_parts] == [True]
    assert rep.paired
    groups, jack, bounds = rep.jackknife[0]
    assert not callable(rep.jackknife_parts[0][1])
    # the reference: each input left out of the per-input sums, one at a time
    unit = p.units[0][0]
    T = unit.T  # (N, G, 2): successes and runs of each input
    metric = p.args.metric
    assert isinstance(metric, Metric)
    want = np.array(
        [metric.finalize(np.delete(T, i, axis=0).sum(axis=0)) for i in range(len(T))]
    )
    np.testing.assert_allclose(jack, want, rtol=1e-14, atol=0)
    np.testing.assert_array_equal(groups, np.arange(len(groups)))
    np.testing.assert_array_equal(bounds, unit.strata_bounds)
