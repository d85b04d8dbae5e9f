"""``evalci.set_options(tile_size=...)``: smaller tiles for small workers (issue 23).

A tile size is a setting of where the draws are cut, not of the statistics:
it must give the same numbers on numpy and on every Dask scheduler (the
setting read once in the caller's process, travelling with the call), the
same law as the untiled bootstrap (an exact two-stage multinomial), and a
worker-memory refusal that names the tile size that would fit.
"""

from __future__ import annotations

import contextlib
import os
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalci
from evalci.engine import resampling as rs
from evalci.engine import scaleout

from conftest import local_cluster  # noqa: E402

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

#: Whether this process's BLAS runs one thread (as .ci/run sets it), read at
#: collection: a LocalCluster later sets the variable for its workers.
ONE_BLAS_THREAD = os.environ.get("OPENBLAS_NUM_THREADS") == "1"
N = 3_000  # inputs: three tiles of 1,024 (the smallest tile size allowed)


def scores(n=N, k=2, systems=3, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, n)
    return pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(np.arange(n), k), systems),
            "system": np.repeat([f"s{j}" for j in range(systems)], n * k),
            "score": rng.normal(np.tile(np.repeat(p, k), systems), 0.3),
        }
    )


def reps(res) -> np.ndarray:
    return np.atleast_2d(np.asarray(res.bootstrap_distribution))


def same(a, b) -> bool:
    return all(
        np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)))
        for f in ("estimate", "low", "high", "standard_error")
    ) and np.array_equal(reps(a), reps(b))


def call(df, **kw):
    return evalci.cluster_ci(
        df, "score", "input_id", by="system", n_resamples=300, rng=3, **kw
    )


def test_options_are_checked_and_restored():
    assert evalci.get_option("tile_size") is None
    with pytest.raises(ValueError, match="unknown evalci option"):
        evalci.set_options(tile=4096)
    with pytest.raises(TypeError, match="`tile_size` must be an integer"):
        evalci.set_options(tile_size=4096.0)
    with pytest.raises(TypeError, match="`tile_size` must be an integer"):
        evalci.set_options(tile_size=True)
    with pytest.raises(ValueError, match="at least 1,024"):
        evalci.set_options(tile_size=100)
    with evalci.set_options(tile_size=np.int64(2048)):
        assert evalci.get_option("tile_size") == 2048
        with evalci.set_options(tile_size=None):
            assert evalci.get_option("tile_size") is None
        assert evalci.get_option("tile_size") == 2048
    assert evalci.get_option("tile_size") is None


def test_a_tile_size_tiles_the_draws_and_equals_a_slow_two_stage_draw():
    """The tiled replicates equal a loop re-implementation of the documented
    two-stage draws (docs/scaling.md, Tiles) with calls of 2 x tile_size."""
    df = scores(systems=1)
    with evalci.set_options(tile_size=1024):
        tiled = call(df)
    untiled = call(df)
    assert not np.array_equal(reps(tiled), reps(untiled))
    # slow reference: per replicate, tile totals, then uniform draws per tile
    x = df.groupby("input_id")["score"].mean().to_numpy()
    root = rs.seed_sequence(3)
    bounds = [0, 1024, 2048, N]
    sizes = np.diff(bounds)
    out = []
    for s in range(rs.n_streams_for(300)):
        gen = rs.stream(root, 0, 0, s)
        totals = gen.multinomial(N, sizes / N, size=64)
        sums = np.zeros(64)
        for p in range(3):
            g2 = rs.stream(root, 0, 0, s, 1 + p)
            step = max(1, min(64, 2 * 1024 // sizes[p]))
            for r0 in range(0, 64, step):
                tot = totals[r0 : r0 + step, p]
                draws = g2.integers(0, sizes[p], int(tot.sum())) + bounds[p]
                for i, chunk in enumerate(np.split(draws, np.cumsum(tot)[:-1])):
                    sums[r0 + i] += x[chunk].sum()
        out.append(sums / N)
    ref = np.concatenate(out)[:300]
    np.testing.assert_allclose(reps(tiled)[0], ref, rtol=0, atol=1e-12)


def test_a_tile_size_keeps_the_law():
    """Two-sample KS between tiled and untiled replicates of one table
    (B = 4,000 each, independent seeds): the same law, so p > 0.001 fails
    one seed in a thousand; the seeds are fixed, so it cannot flake."""
    df = scores(systems=1)
    kw = dict(n_resamples=4000)
    with evalci.set_options(tile_size=1024):
        a = evalci.cluster_ci(df, "score", "input_id", rng=11, **kw)
    b = evalci.cluster_ci(df, "score", "input_id", rng=12, **kw)
    a, b = reps(a)[0], reps(b)[0]
    assert stats.ks_2samp(a, b).pvalue > 0.001
    assert abs(a.std() / b.std() - 1) < 0.06  # SE of the ratio ~0.016


@contextlib.contextmanager
def workers(n: int, memory_limit="auto"):
    """``(cluster, client)``: ``n`` single-threaded worker processes, each
    with its own resident memory (they never see the client's options)."""
    with local_cluster(n_workers=n, processes=True, memory_limit=memory_limit) as (
        lc,
        c,
    ):
        yield lc, c


@pytest.fixture(scope="module")
def procs():
    """Two worker processes, shared by the tests that set no memory limit."""
    with workers(2) as (_, c):
        yield c


def test_the_tile_size_travels_with_the_call_to_worker_processes(procs):
    df = scores()
    with evalci.set_options(tile_size=1024):
        ref = call(df)
        eager = dd.from_pandas(df, npartitions=3).evalci.cluster_ci(
            "score", "input_id", by="system", n_resamples=300, rng=3
        )
        lazy = dd.from_pandas(df, npartitions=2).evalci.cluster_ci(
            "score", "input_id", by="system", n_resamples=300, rng=3, compute=False
        )
        pandas_on_dask = call(df, backend="dask")
    # computed after the setting is gone: it was read when the call was made
    lazy = lazy.compute()
    for res in (eager, lazy, pandas_on_dask):
        assert same(res, ref)
    assert not same(call(df), ref)  # the default tiles: other draws


def test_the_memory_check_names_a_tile_size_that_fits():
    """200,000 inputs x 10 systems of a mean: 32 MB of statistics plus 38 MB
    of draws per task, over the ~50 MiB a 300 MB worker leaves; the tile size
    the error names passes the same check (with its 10% margin for the
    worker's own memory, which is measured each time)."""
    n, g = 200_000, 10
    counts = pd.DataFrame(
        {
            "input_id": np.tile(np.arange(n), g),
            "system": np.repeat(np.arange(g), n),
            "c": np.random.default_rng(0).integers(0, 5, n * g),
            "k": 4,  # 5**10 joint patterns: the index kernel
        }
    )
    kw = dict(successes="c", trials="k", by="system", n_resamples=100)
    with workers(1, "300MB") as (_, c):  # its own memory measured (~180 MiB)
        args = evalci.engine.args.bootstrap_iv_of(
            counts, {}, value=None, cluster="input_id", **kw
        )
        p = evalci.engine.passes.start_pass(counts, args, np.random.SeedSequence(0))
        with pytest.raises(ValueError, match=r"tile_size=2\*\*\d+\)") as err:
            scaleout.check_worker_memory(p, c)
        assert "memory_limit of at least" in str(err.value)
        size = 2 ** int(re.search(r"tile_size=2\*\*(\d+)", str(err.value))[1])
        assert 2**10 <= size < 2**20
        with evalci.set_options(tile_size=size):
            args = evalci.engine.args.bootstrap_iv_of(
                counts, {}, value=None, cluster="input_id", **kw
            )
        p = evalci.engine.passes.start_pass(counts, args, np.random.SeedSequence(0))
        scaleout.check_worker_memory(p, c)  # fits now


def test_workers_too_small_for_the_reduction_are_refused_before_it_starts():
    """A 260 MB worker process holds ~180 MiB of its own once pandas, Dask
    and evalci are imported: below the room the reduction needs, refused
    before any task runs (the error names the memory_limit to use)."""
    df = scores(n=200, systems=2)
    with workers(1, "260MB") as (lc, c):
        (own,) = [rss for _, rss in scaleout.worker_memory(c)]
        assert 100 * 2**20 < own < 260e6  # measured on the worker, warmed
        ddf = dd.from_pandas(df, npartitions=2)
        with pytest.raises(ValueError, match="nothing has been computed") as err:
            ddf.evalci.cluster_ci("score", "input_id", by="system", rng=0)
        assert "memory_limit of at least" in str(err.value)
        assert not c.cluster.scheduler.task_groups  # no task ran


def test_a_table_too_large_for_the_workers_shuffle_is_refused_before_it_starts(
    tmp_path,
):
    """Workers with more than the reduction's least room, but less than
    their share of shuffling this many rows (rows known from Parquet's
    footers), are refused before any task runs, naming a memory_limit that
    meets the rule; the rows of a filtered frame are not counted (no pass
    over the data is spent on the check)."""
    with workers(2, "300MB") as (_, c):
        room = scaleout._tightest(c)[3]
        assert room > scaleout.REDUCE_ROOM  # the least room alone would pass
        # rows of 24 bytes whose 2-worker share is ~1.3x the room above it
        n = int((room - scaleout.REDUCE_ROOM) * 2 / 24 * 1.3)
        df = pd.DataFrame(
            {
                "input_id": np.arange(n, dtype=np.int64),
                "system": np.zeros(n, dtype=np.int64),
                "score": np.linspace(0.0, 1.0, n),
            }
        )
        df.to_parquet(tmp_path / "t.parquet", row_group_size=n // 8 + 1)
        ddf = dd.read_parquet(tmp_path / "t.parquet")
        assert scaleout.known_rows(ddf) == n
        assert scaleout.known_rows(ddf[ddf.score > 2]) is None
        assert scaleout.row_bytes(ddf._meta.dtypes) == 24
        with pytest.raises(ValueError, match="nothing has been computed") as err:
            ddf.evalci.cluster_ci("score", "input_id", by="system", rng=0)
        assert f"shuffling {n:,} rows of 24 bytes" in str(err.value)
        assert not c.cluster.scheduler.task_groups  # no task ran
        limit = float(
            re.search(r"memory_limit of at least ([\d,]+) MB", str(err.value))[
                1
            ].replace(",", "")
        )
        _, own, pause, _ = scaleout._tightest(c)
        share = scaleout.SHUFFLE_ROOM_PER_BYTE * n * 24 / 2
        assert limit * 1e6 * pause - own >= scaleout.REDUCE_ROOM + share - 1e6
        # far fewer rows: within the rule, not refused by it
        scaleout.check_reduce_memory(c, lambda: (n // 100, 24))
        with pytest.raises(ValueError, match="shuffling"):
            scaleout.check_reduce_memory(c, lambda: (n, 24))


@pytest.mark.slow
def test_a_run_refused_at_300mb_finishes_there_with_the_tile_size_it_names():
    """The small-scale memory-limit run: 200,000 inputs x 10 systems of
    scores (a task of the default draws needs ~70 MB, a 300 MB worker has
    ~50 MiB of room), resampled on two 300 MB worker processes (the reduction in this
    process: ``backend="dask"``). The default tiles are refused before any
    resampling; with the tile size the error names, the run finishes there
    and gives the numbers of the numpy path with the same setting."""
    n, g = 200_000, 10
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "input_id": np.tile(np.arange(n), g),
            "system": np.repeat(np.arange(g), n),
            "score": rng.normal(0.5, 0.3, n * g),
        }
    )
    kw = dict(by="system", n_resamples=512, rng=4)
    with workers(2, "300MB") as (_, c):
        pids = c.run(os.getpid)
        with pytest.raises(ValueError, match=r"tile_size=2\*\*\d+\)") as err:
            evalci.cluster_ci(df, "score", "input_id", backend="dask", **kw)
        size = 2 ** int(re.search(r"tile_size=2\*\*(\d+)", str(err.value))[1])
        # a unit of at most `size` inputs stays whole and only counts its
        # draws in smaller row chunks (the tiled case is checked draw by
        # draw above)
        assert 2**10 <= size < 2**20
        with evalci.set_options(tile_size=size):
            got = evalci.cluster_ci(df, "score", "input_id", backend="dask", **kw)
            ref = evalci.cluster_ci(df, "score", "input_id", **kw)
        assert c.run(os.getpid) == pids  # no worker was restarted
    if ONE_BLAS_THREAD:
        assert same(got, ref)
    else:
        # a client whose BLAS splits a product over threads rounds its last
        # bits otherwise than single-threaded workers (docs/scaling.md,
        # Reproducibility): measured up to 2e-15 here
        np.testing.assert_allclose(reps(got), reps(ref), rtol=1e-12, atol=0)
        assert np.array_equal(np.asarray(got.estimate), np.asarray(ref.estimate))


def test_reduced_partitions_are_gathered_in_batches(procs, monkeypatch):
    """The client brings the reduced partitions home a few at a time (so a
    worker never loads every spilled partition at once): the same numbers
    as pandas whatever the batch, and the batches are what reaches it."""
    from evalci.frames import dask_frame

    df = scores(n=400, systems=3)
    ref = call(df)
    seen = []
    gather = procs.gather

    def spy(futures, *a, **k):
        seen.append(len(futures))
        return gather(futures, *a, **k)

    monkeypatch.setattr(procs, "gather", spy)
    for batch in (3, 100):
        monkeypatch.setattr(dask_frame, "GATHER_BATCH", batch)
        seen.clear()
        got = dd.from_pandas(df, npartitions=10).evalci.cluster_ci(
            "score", "input_id", by="system", n_resamples=300, rng=3
        )
        assert same(got, ref)
        # first the whole-number reduction's 2 blocks and 10 flags (scores
        # are not whole: it gives way), then the shuffle's 10 partitions (a
        # later gather of 1 is the resampling's)
        want = [3, 3, 3, 3] + [3, 3, 3, 1]
        assert seen[:8] == want if batch == 3 else 3 not in seen
