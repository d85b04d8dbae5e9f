"""``missing="bounds"`` on a Dask DataFrame: the pandas numbers, bit for bit.

Issue 34: the share scored was summed from per-row weights (one over the
input's attempted runs) on pandas and from per-distinct-row weights on
Dask, which differed by up to 7e-12; both now divide whole counts once per
input, summed in key order. Run on a real ``distributed.LocalCluster`` on
loopback (the ``client`` fixture of conftest.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import evalci

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")


def _ragged(seed=5, n=3000):
    """n inputs with 3, 6 or 7 runs, 15% of runs missing, two systems by input
    parity: a table whose shares differed by 2.4e-14 between the two paths."""
    gen = np.random.default_rng(seed)
    q = np.repeat(np.arange(n), gen.choice([3, 6, 7], size=n))
    y = (gen.random(len(q)) < 0.6).astype(float)
    y[gen.random(len(q)) < 0.15] = np.nan
    return pd.DataFrame({"q": q, "system": np.where(q % 2, "a", "b"), "y": y})


@pytest.mark.parametrize("weight", ["input", "run"])
def test_bounds_on_dask_equal_pandas_exactly(client, weight):
    df = _ragged()
    ddf = dd.from_pandas(df.sample(frac=1, random_state=2), npartitions=4)
    kw = dict(cluster="q", by="system", missing="bounds", n_resamples=200, rng=1,
              weight=weight)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalci.MissingDataWarning)
        want = evalci.cluster_ci(df, "y", **kw)
        with dask.config.set(scheduler=client):
            have = evalci.cluster_ci(ddf, "y", **kw)
    for name in ("share_scored", "estimate", "low", "high", "bound_low", "bound_high"):
        np.testing.assert_array_equal(
            np.asarray(getattr(have, name)), np.asarray(getattr(want, name)), name
        )
    np.testing.assert_array_equal(
        have.bootstrap_distribution, want.bootstrap_distribution
    )
    # the share by hand (pandas' pairwise sums: equal to rounding)
    scored = df.y.notna().groupby([df.system, df.q]).mean()
    runs = df.y.notna().groupby(df.system).mean()
    share = scored.groupby(level=0).mean() if weight == "input" else runs
    np.testing.assert_allclose(want.share_scored, share, rtol=1e-13)
