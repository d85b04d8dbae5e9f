"""``paired=False`` (issue 39): each group drawn on its own streams.

The law of every group's interval is that of a call on the group alone: the
first group (stream key 0) *is* that call, bit for bit; the others are tested
against it with a two-sample Kolmogorov-Smirnov test of their replicates.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci


def systems(n=400, k=5, names=("a", "b", "c"), seed=0):
    gen = np.random.default_rng(seed)
    p = gen.beta(2, 2, size=(len(names), n))
    correct = (gen.random((len(names), n, k)) < p[:, :, None]).astype(int)
    return pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(np.arange(n), k), len(names)),
            "system": np.repeat(list(names), n * k),
            "correct": correct.ravel(),
        }
    )


KW = dict(cluster="input_id", n_resamples=2_000, rng=7)


def reps(result):
    """The replicates, one row a group."""
    return np.atleast_2d(result.bootstrap_distribution)


def test_the_first_group_is_its_own_call_bit_for_bit():
    df = systems()
    both = evalci.cluster_ci(df, "correct", by="system", paired=False, **KW)
    alone = evalci.cluster_ci(df[df.system == "a"], "correct", **KW)
    assert both.paired is False
    assert np.array_equal(reps(both)[0], reps(alone)[0])
    assert both.to_frame().loc[0, "low"] == alone.low


def test_every_group_has_the_law_of_its_own_call():
    """Two-sample KS of 2,000 replicates against a call on the group alone
    with another seed: under the null p < 1e-3 has probability 1e-3 per
    group, so a false failure of this test is about 0.2%."""
    df = systems(names=("a", "b"), seed=1)
    both = evalci.cluster_ci(df, "correct", by="system", paired=False, **KW)
    alone = evalci.cluster_ci(df[df.system == "b"], "correct", **{**KW, "rng": 99})
    assert stats.ks_2samp(reps(both)[1], reps(alone)[0]).pvalue > 1e-3


def test_groups_draw_apart_only_when_asked():
    """Two identical systems: shared draws give equal replicates, separate
    draws do not (and their correlation is near 0)."""
    one = systems(names=("a",), seed=2)
    twin = pd.concat([one, one.assign(system="b")], ignore_index=True)
    paired = evalci.cluster_ci(twin, "correct", by="system", **KW)
    apart = evalci.cluster_ci(twin, "correct", by="system", paired=False, **KW)
    assert paired.paired and np.array_equal(*reps(paired))
    assert not np.array_equal(*reps(apart))
    assert abs(np.corrcoef(reps(apart))[0, 1]) < 0.15
    # the same law for each group: the widths agree within Monte-Carlo
    # error (B = 2,000: a few per cent; 15% leaves a wide margin)
    width = lambda r: np.asarray(r.high) - np.asarray(r.low)  # noqa: E731
    assert np.allclose(width(apart), width(paired), rtol=0.15)


def test_index_kernel_groups_draw_apart_too():
    """Continuous scores (the index kernel): the same rule."""
    gen = np.random.default_rng(3)
    df = systems(n=300, seed=3).assign(correct=lambda d: gen.random(len(d)))
    apart = evalci.cluster_ci(df, "correct", by="system", paired=False, **KW)
    alone = evalci.cluster_ci(df[df.system == "a"], "correct", **KW)
    assert np.array_equal(reps(apart)[0], reps(alone)[0])


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_paired_must_be_a_bool(bad):
    with pytest.raises(TypeError, match="`paired` must be True or False"):
        evalci.cluster_ci(systems(n=20), "correct", by="system", paired=bad, **KW)


def test_dask_draws_each_group_apart_with_the_same_bits(client):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    df = systems(n=200, seed=4)
    want = evalci.cluster_ci(df, "correct", by="system", paired=False, **KW)
    ddf = dd.from_pandas(df.sample(frac=1.0, random_state=1), npartitions=3)
    with dask.config.set(scheduler=client):
        got = evalci.cluster_ci(ddf, "correct", by="system", paired=False, **KW)
    assert got.paired is False
    assert np.array_equal(reps(got), reps(want))


def test_dataarray_draws_each_system_apart_as_the_table_does():
    xr = pytest.importorskip("xarray")
    gen = np.random.default_rng(5)
    da = xr.DataArray(
        (gen.random((3, 60, 4)) < 0.6).astype(float),
        dims=("system", "input", "run"),
        coords={"system": ["a", "b", "c"]},
    )
    kw = dict(n_resamples=300, rng=0, paired=False)
    ds = da.evalci.cluster_ci(**kw)
    table = da.to_dataframe(name="v").reset_index()
    want = evalci.cluster_ci(table, "v", cluster="input", by="system", **kw)
    got = ds.bootstrap_distribution.transpose("system", "resample").values
    assert np.array_equal(got, reps(want)) and ds.attrs["paired"] == 0
    lazy = da.chunk({"input": 25}).evalci.cluster_ci(**kw).compute()
    assert np.array_equal(
        lazy.bootstrap_distribution.values, ds.bootstrap_distribution.values
    )
    assert lazy.attrs["paired"] == 0


def test_bounds_refuse_groups_drawn_apart():
    df = systems(n=30)
    df.loc[df.index[:3], "correct"] = np.nan
    with pytest.raises(ValueError, match="paired=False.*missing='bounds'"):
        evalci.cluster_ci(
            df, "correct", by="system", paired=False, missing="bounds", **KW
        )
