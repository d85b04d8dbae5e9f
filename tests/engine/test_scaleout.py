"""Scale out on Dask: the reduction and the resampling as tasks, the same numbers.

Every test here compares with the numpy/pandas path *bit for bit*
(``np.array_equal``), on real schedulers: sync, threads, processes, and a
``distributed.LocalCluster`` on loopback started by the tests.
"""

import os
import signal
import time

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from dask.callbacks import Callback
from dask.core import get_dependencies
from dask.delayed import Delayed

import evalci
from evalci.engine import scaleout

from conftest import local_cluster  # noqa: E402

distributed = pytest.importorskip("distributed")

FIELDS = ("estimate", "low", "high", "standard_error", "bootstrap_distribution")


def identical(a, b):
    """Two results with the same numbers, bit for bit."""
    for f in FIELDS:
        x, y = np.asarray(getattr(a, f)), np.asarray(getattr(b, f))
        assert np.array_equal(x, y, equal_nan=True), f
    assert np.array_equal(np.asarray(a.n_runs), np.asarray(b.n_runs))
    assert np.array_equal(np.asarray(a.n_inputs), np.asarray(b.n_inputs))


def scores(n=120, k=4, systems=3, seed=0, unequal=True):
    """Continuous scores (no two alike: patterns do not compress), k runs."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(systems):
        for i in range(n):
            ki = int(rng.integers(1, k + 1)) if unequal else k
            for r in range(ki):
                rows.append((f"q{i:04d}", r, f"sys{s}", i % 3, rng.normal(s, 1.0)))
    df = pd.DataFrame(rows, columns=["input_id", "run", "system", "subject", "score"])
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)


@pytest.fixture(scope="module")
def client():
    with local_cluster(n_workers=2, processes=False) as (cluster, c):
        yield c


# -------------------------------------------------- same numbers everywhere
CASES = [
    ("score", dict(by="system")),
    ("score", dict(by="system", strata="subject", method="bca", weight="run")),
    ("score", dict(method="bca")),
]


@pytest.mark.parametrize("value, kw", CASES)
@pytest.mark.parametrize("npartitions", [1, 3, 8])
def test_dask_frame_equals_pandas_bit_for_bit(value, kw, npartitions):
    df = scores()
    if "by" not in kw:
        df = df[df.system == "sys1"]
    ref = evalci.cluster_ci(df, value, "input_id", n_resamples=1500, rng=4, **kw)
    # shuffled rows: an input's runs lie in several partitions
    ddf = dd.from_pandas(df.sample(frac=1, random_state=9), npartitions=npartitions)
    for scheduler in ("sync", "threads"):
        with dask.config.set(scheduler=scheduler):
            got = ddf.evalci.cluster_ci(
                value, "input_id", n_resamples=1500, rng=4, **kw
            )
        identical(ref, got)


def test_0_1_outcomes_kappa_and_counts_take_their_exact_paths(gpqa):
    ddf = dd.from_pandas(gpqa.sample(frac=1, random_state=1), npartitions=5)
    kw = dict(by="system", n_resamples=1200, rng=3, method="bca")
    identical(
        evalci.cluster_ci(gpqa, "correct", "input_id", **kw),
        ddf.evalci.cluster_ci("correct", "input_id", **kw),
    )
    sim = evalci.simulate.confusion_model(80, 4, rng=3)
    kappa = dict(metric=evalci.metrics.kappa(truth="label"), n_resamples=700, rng=1)
    identical(
        evalci.cluster_ci(sim, "pred", "input_id", **kappa),
        dd.from_pandas(sim, npartitions=3).evalci.cluster_ci(
            "pred", "input_id", **kappa
        ),
    )


def test_backend_dask_on_a_pandas_table_and_in_compare(gpqa, client):
    kw = dict(by="system", n_resamples=2500, rng=0)
    ref = evalci.cluster_ci(gpqa, "correct", "input_id", **kw)
    identical(ref, evalci.cluster_ci(gpqa, "correct", "input_id", backend="dask", **kw))
    df = scores(systems=2)
    a = evalci.compare(df, "score", cluster="input_id", n_resamples=1500, rng=2)
    b = evalci.compare(
        df, "score", cluster="input_id", n_resamples=1500, rng=2, backend="dask"
    )
    c = evalci.compare(
        dd.from_pandas(df, npartitions=4),
        "score",
        cluster="input_id",
        n_resamples=1500,
        rng=2,
    )
    for other in (b, c):
        assert np.array_equal(a.gap_distribution, other.gap_distribution)
        pd.testing.assert_frame_equal(a.table, other.table)


def test_on_a_distributed_cluster(client):
    df = scores()
    kw = dict(by="system", n_resamples=2000, rng=7, method="bca")
    ref = evalci.cluster_ci(df, "score", "input_id", **kw)
    ddf = dd.from_pandas(df, npartitions=6)
    identical(ref, ddf.evalci.cluster_ci("score", "input_id", **kw))
    identical(ref, ddf.evalci.cluster_ci("score", "input_id", backend="numpy", **kw))
    lazy = ddf.evalci.cluster_ci("score", "input_id", compute=False, **kw)
    identical(ref, client.compute(lazy).result())


def test_a_process_cluster_pickles_every_task():
    df = scores(n=60)
    kw = dict(by="system", n_resamples=1100, rng=1)
    ref = evalci.cluster_ci(df, "score", "input_id", **kw)
    with local_cluster(n_workers=2, processes=True) as (cluster, _):
        got = dd.from_pandas(df, npartitions=3).evalci.cluster_ci(
            "score", "input_id", **kw
        )
    identical(ref, got)


# ------------------------------------------------------------ graph shape
def _prefixes(graph) -> dict:
    out = {}
    for key in graph:
        name = key[0] if isinstance(key, tuple) else key
        if isinstance(name, str) and name.startswith("evalci-"):
            prefix = "-".join(name.split("-")[:2])
            out[prefix] = out.get(prefix, 0) + 1
    return out


def test_compute_false_is_a_lazy_graph_of_named_tasks():
    df = scores()
    ddf = dd.from_pandas(df, npartitions=4)
    lazy = ddf.evalci.cluster_ci(
        "score", "input_id", by="system", n_resamples=3000, rng=0, compute=False
    )
    assert isinstance(lazy, Delayed)
    names = _prefixes(dict(lazy.__dask_graph__()))
    # 4 partitions reduced; 3,000 resamples = 47 streams = 3 blocks of 16
    assert names["evalci-reduce"] == 4
    assert names["evalci-resample"] == 3
    assert names["evalci-start"] == names["evalci-finish"] == 1
    ref = evalci.cluster_ci(
        df, "score", "input_id", by="system", n_resamples=3000, rng=0
    )
    identical(ref, lazy.compute())
    with pytest.raises(ValueError, match="`compute=False` is for Dask DataFrames"):
        evalci.cluster_ci(df, "score", "input_id", compute=False)


class _Results(Callback):
    """Records the size of every task result a local scheduler computes."""

    def __init__(self):
        super().__init__()
        self.sizes = {}

    def _posttask(self, key, result, dsk, state, worker_id):
        name = key[0] if isinstance(key, tuple) else key
        if isinstance(result, np.ndarray):
            self.sizes[str(name)] = result.nbytes


def test_no_task_holds_the_replicate_sums_of_every_block():
    # kappa with 4 labels: 16 statistics per system, 3 systems. The replicate
    # sums of all blocks would be B x 3 x 16 floats; each resample task
    # returns its block's *finished* replicates, 1,024 x 3 floats.
    sim = pd.concat(
        [
            evalci.simulate.confusion_model(90, 3, rng=s).assign(system=f"s{s}")
            for s in range(3)
        ]
    )
    kw = dict(metric=evalci.metrics.kappa(truth="label"), by="system", rng=2)
    lazy = dd.from_pandas(sim, npartitions=3).evalci.cluster_ci(
        "pred", "input_id", n_resamples=5000, compute=False, **kw
    )
    with _Results() as seen, dask.config.set(scheduler="sync"):
        got = lazy.compute()
    blocks = {k: v for k, v in seen.sizes.items() if k.startswith("evalci-resample")}
    assert len(blocks) == 5  # 79 streams in blocks of 16
    assert max(blocks.values()) == 1024 * 3 * 8
    identical(evalci.cluster_ci(sim, "pred", "input_id", n_resamples=5000, **kw), got)


def test_a_lazy_dataarray_is_reduced_chunk_by_chunk(gpqa):
    da = scores(n=90, k=3, unequal=False).evalci.to_xarray(
        "score", input="input_id", run="run", system="system"
    )
    eager = da.evalci.cluster_ci(n_resamples=1000, rng=3)
    lazy = da.chunk({"input": 20, "system": 2}).evalci.cluster_ci(
        n_resamples=1000, rng=3
    )
    graph = dict(lazy.estimate.data.__dask_graph__())
    names = _prefixes(graph)
    assert names["evalci-reduce"] == 5 * 2  # 5 input chunks x 2 system chunks
    # the start task reads the chunks' statistics, never the array itself
    start = next(k for k in graph if str(k).startswith("evalci-start"))
    deps = get_dependencies(graph, start)  # Task objects or (old Dask) tuples
    assert deps and all(str(d).startswith("evalci-reduce") for d in deps)
    for scheduler in ("sync", "threads"):
        xr.testing.assert_identical(lazy.compute(scheduler=scheduler), eager)


# ----------------------------------------------------------------- faults
@pytest.mark.slow
def test_a_worker_killed_mid_run_changes_nothing():
    df = scores(n=400, k=3, systems=4)
    kw = dict(by="system", n_resamples=60_000, rng=11)
    ref = evalci.cluster_ci(df, "score", "input_id", **kw)
    with local_cluster(n_workers=2, processes=True) as (cluster, c):
        lazy = dd.from_pandas(df, npartitions=4).evalci.cluster_ci(
            "score", "input_id", compute=False, **kw
        )
        future = c.compute(lazy)
        pids = c.run(os.getpid)
        victim = sorted(pids)[0]
        # wait until resampling is under way on the workers (the event; the
        # bound only guards a hang, generous for a loaded machine), then kill one
        deadline, under_way = time.monotonic() + 300, False
        while time.monotonic() < deadline and not under_way:
            busy = c.processing()
            under_way = any(
                "evalci-resample" in str(k) for ks in busy.values() for k in ks
            )
            time.sleep(0.01)
        assert under_way and not future.done()  # killed mid-run, not after
        os.kill(pids[victim], signal.SIGKILL)
        got = future.result(timeout=300)
        # the nanny restarted it: a new worker process took its place
        assert (
            victim not in c.run(os.getpid) or c.run(os.getpid)[victim] != pids[victim]
        )
    identical(ref, got)


@pytest.mark.slow
def test_a_worker_memory_limit_is_respected():
    # 250,000 resamples of kappa (4 labels, 16 statistics) for 3 systems:
    # the replicate sums are 250,000 x 3 x 16 x 8 bytes = 92 MiB; a task holds
    # at most 1,024 x 3 finished replicates, and the client gathers 6 MiB.
    sim = pd.concat(
        [
            evalci.simulate.confusion_model(60, 2, rng=s).assign(system=f"s{s}")
            for s in range(3)
        ]
    )
    kw = dict(metric=evalci.metrics.kappa(truth="label"), by="system", rng=5)
    ref = evalci.cluster_ci(sim, "pred", "input_id", n_resamples=250_000, **kw)
    with local_cluster(n_workers=2, processes=True, memory_limit="300MiB") as (
        cluster,
        _,
    ):
        got = dd.from_pandas(sim, npartitions=2).evalci.cluster_ci(
            "pred", "input_id", n_resamples=250_000, **kw
        )
    identical(ref, got)


def test_task_blocks_never_change_the_numbers(monkeypatch):
    df = scores(n=50)
    kw = dict(by="system", n_resamples=2100, rng=8)
    ref = evalci.cluster_ci(df, "score", "input_id", **kw)
    for size in (1, 5, 40):
        monkeypatch.setattr(scaleout, "TASK_STREAMS", size)
        with dask.config.set(scheduler="threads"):
            got = evalci.cluster_ci(df, "score", "input_id", backend="dask", **kw)
        identical(ref, got)


def test_bad_scale_out_arguments_name_the_fix():
    df = scores(n=20)
    with pytest.raises(ValueError, match="`backend` must be 'numpy'"):
        evalci.cluster_ci(df, "score", "input_id", backend="spark")
    with pytest.raises(ValueError, match="`weights` must be 'multinomial'"):
        evalci.cluster_ci(df, "score", "input_id", weights="bayes")
    with pytest.raises(ValueError, match="weights='poisson' weights whole inputs"):
        evalci.bootstrap(
            df, "score", "input_id", strategy="hierarchical", weights="poisson"
        )
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(TypeError, match="`compute` must be True or False"):
        ddf.evalci.cluster_ci("score", "input_id", compute="no")


# ------------------------------------------- tiles and Poisson on the graph
def test_tiled_units_run_tile_by_tile_with_the_numpy_numbers(monkeypatch):
    from evalci.engine import resampling

    monkeypatch.setattr(resampling, "TILE_SIZE", 16)  # 120 inputs: 8 tiles
    df = scores(n=120, systems=2)
    for kw in (dict(by="system"), dict(by="system", strata="subject", method="bca")):
        ref = evalci.cluster_ci(df, "score", "input_id", n_resamples=1100, rng=3, **kw)
        ddf = dd.from_pandas(df, npartitions=3)
        lazy = ddf.evalci.cluster_ci(
            "score", "input_id", n_resamples=1100, rng=3, compute=False, **kw
        )
        with dask.config.set(scheduler="threads"):
            identical(ref, lazy.compute())
            identical(
                ref,
                evalci.cluster_ci(
                    df,
                    "score",
                    "input_id",
                    n_resamples=1100,
                    rng=3,
                    backend="dask",
                    **kw,
                ),
            )
    # the eager graph: per block, the tile totals, one task per tile, a combine
    p = evalci.engine.passes.start_pass(
        df,
        evalci.engine.args.bootstrap_iv(
            df,
            "score",
            "input_id",
            "cluster",
            "mean",
            "system",
            None,
            "percentile",
            0.95,
            1100,
            "input",
            False,
        ),
        np.random.SeedSequence(3),
    )
    graph = {}
    for blocks in scaleout.replicate_blocks(p):
        for d in blocks:
            graph.update(dict(d.__dask_graph__()))
    names = _prefixes(graph)
    assert names["evalci-tiles"] == 2  # 18 streams: 2 blocks of 16
    assert names["evalci-tile"] == 2 * 8 and names["evalci-combine"] == 2


@pytest.mark.parametrize("n", [40, 300])
def test_poisson_weights_on_dask_equal_numpy(n, client):
    df = scores(n=n, systems=2)
    kw = dict(by="system", n_resamples=1500, rng=6, weights="poisson")
    ref = evalci.cluster_ci(df, "score", "input_id", **kw)
    identical(
        ref,
        dd.from_pandas(df, npartitions=4).evalci.cluster_ci("score", "input_id", **kw),
    )
    # Poisson(1) weights are a different bootstrap: not the multinomial numbers
    multi = evalci.cluster_ci(
        df, "score", "input_id", by="system", n_resamples=1500, rng=6
    )
    assert not np.array_equal(ref.bootstrap_distribution, multi.bootstrap_distribution)
    # ... but the same spread for a mean of many inputs: DASK-NOTES measured
    # an SE ratio of 1.00 from N ~ 100; at N = 300 the SE of 1,500 replicates
    # is itself known to ~2%, so 10% is over 4 of its SEs
    ratio = np.asarray(ref.standard_error) / np.asarray(multi.standard_error)
    if n == 300:
        assert np.all(np.abs(ratio - 1) < 0.1), ratio


def test_auto_resamples_on_a_dask_frame_equal_pandas():
    df = scores(n=60, systems=2)
    kw = dict(by="system", n_resamples="auto", mc_tolerance=0.02, rng=3)
    ref = evalci.cluster_ci(df, "score", "input_id", **kw)
    got = dd.from_pandas(df, npartitions=3).evalci.cluster_ci("score", "input_id", **kw)
    assert got.n_resamples == ref.n_resamples
    identical(ref, got)


def test_moving_blocks_over_the_tile_size_are_not_tiled_on_dask(monkeypatch):
    # the tile graph is a multinomial over inputs: moving blocks are not, so
    # the Dask graph must follow the kernel's rule (resampling.tiled)
    from evalci.engine import resampling

    monkeypatch.setattr(resampling, "TILE_SIZE", 16)
    df = scores(n=60, systems=1)
    kw = dict(strategy="moving_block", block_length=4, n_resamples=700, rng=2)
    ref = evalci.bootstrap(df, "score", "input_id", **kw)
    with dask.config.set(scheduler="threads"):
        got = evalci.bootstrap(df, "score", "input_id", backend="dask", **kw)
    identical(ref, got)


# ------------------------------------------- memory: row chunks, group blocks
@pytest.mark.parametrize("bounds", [[0, 5000], [0, 3, 1800, 5000]])
def test_a_stream_drawn_in_row_chunks_is_the_whole_stream(bounds, monkeypatch):
    # Reference: the whole stream's (64, N) draws in one go (draw_inputs), then
    # counted and summed. Integer statistics make every sum exact, so the
    # kernel's chunked products must equal it whatever the BLAS.
    from evalci.engine import resampling as rs
    from evalci.engine import tiles

    monkeypatch.setattr(rs, "DRAW_CALL", 4 * 5000)  # 4 rows per chunk
    assert rs.draw_rows(5000) == 4
    root = np.random.SeedSequence(9)
    rng = np.random.default_rng(0)
    T = rng.integers(0, 5, (5000, 3, 2)).astype(float)
    unit = rs.Unit(0, T, np.array(bounds))
    got = tiles.stream_replicate_sums(unit, root, "cluster", 2, 3)
    for s in range(3):
        idx = rs.draw_inputs(rs.stream(root, 0, 0, 2 + s), 64, unit)
        want = np.stack([T[row].sum(axis=0) for row in idx])
        assert np.array_equal(got[64 * s : 64 * (s + 1)], want)


def test_group_blocks_on_dask_equal_numpy(monkeypatch):
    from evalci.engine import resampling as rs
    from evalci.engine import tiles

    df = scores(n=200, k=2, systems=7, unequal=False)
    # 200 inputs x 7 systems x 2 statistics = 22 kB; a block has at least 3
    # systems (6 columns: multiplied, not gathered), so blocks of 4 + 3
    monkeypatch.setattr(rs, "GROUP_BLOCK_BYTES", 6_000)
    assert tiles.group_blocks(200, 7, 2) == [(0, 4), (4, 7)]
    kw = dict(by="system", n_resamples=2100, rng=8, method="bca")
    ref = evalci.cluster_ci(df, "score", "input_id", **kw)
    with dask.config.set(scheduler="threads"):
        got = evalci.cluster_ci(df, "score", "input_id", backend="dask", **kw)
    identical(ref, got)
    # and the blocks are products of their own: the same bits as one product
    # here (OpenBLAS), which is what keeps the numbers of earlier versions
    monkeypatch.setattr(rs, "GROUP_BLOCK_BYTES", 2**40)
    identical(ref, evalci.cluster_ci(df, "score", "input_id", **kw))
    p = evalci.engine.passes.start_pass(
        df,
        evalci.engine.args.bootstrap_iv(
            df,
            "score",
            "input_id",
            "cluster",
            "mean",
            "system",
            None,
            "percentile",
            0.95,
            2100,
            "input",
            False,
        ),
        np.random.SeedSequence(8),
    )
    monkeypatch.setattr(rs, "GROUP_BLOCK_BYTES", 6_000)
    graph = {}
    for blocks in scaleout.replicate_blocks(p):
        for d in blocks:
            graph.update(dict(d.__dask_graph__()))
    names = _prefixes(graph)
    # 33 streams: 3 blocks of streams x 3 blocks of systems, joined per block
    assert names["evalci-resample"] == 6 and names["evalci-groups"] == 3
    assert names["evalci-statistics"] == 2


def test_a_stream_of_many_inputs_holds_a_row_chunk_not_the_stream():
    # 300,000 inputs: the whole stream's draws were 64 x 300,000 int64 (154
    # MB), their counts as much again and the weights too; a row chunk of
    # draw_rows(N) = 4 replicates is 1/16 of that.
    import tracemalloc

    from evalci.engine import resampling as rs
    from evalci.engine import tiles

    n = 300_000
    unit = rs.Unit(0, np.ones((n, 3, 2)), np.array([0, n]))
    tracemalloc.start()
    tiles.stream_replicate_sums(unit, np.random.SeedSequence(0), "cluster", 0, 1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert rs.draw_rows(n) == 4
    assert peak < 24 * 4 * n * 1.5, peak / 2**20  # 41 MiB; the stream: 440 MiB


def test_a_worker_memory_limit_too_small_is_refused_before_work_starts(client):
    from evalci.engine import resampling as rs

    p = evalci.engine.passes.start_pass(
        scores(n=50),
        evalci.engine.args.bootstrap_iv(
            scores(n=50),
            "score",
            "input_id",
            "cluster",
            "mean",
            "system",
            None,
            "percentile",
            0.95,
            1000,
            "input",
            False,
        ),
        np.random.SeedSequence(0),
    )
    need = scaleout.task_bytes(p.work(0))
    assert need >= 24 * rs.draw_rows(50) * 50  # the draws of a chunk at least
    # the in-process workers of the fixture have no memory limit: no check
    scaleout.check_worker_memory(p, client)
    with local_cluster(n_workers=1, processes=False, memory_limit="100MB") as (
        small,
        c,
    ):
        with pytest.raises(ValueError, match="start the workers with memory_limit"):
            scaleout.check_worker_memory(p, c)
        with pytest.raises(
            ValueError, match="start the workers with memory_limit of at least"
        ):
            evalci.cluster_ci(
                scores(n=50), "score", "input_id", by="system", backend="dask", rng=0
            )


def test_the_shuffle_check_counts_rows_and_bytes_it_can_know_without_a_task():
    """The rows of a pandas-made frame are its pandas length, those of a
    filtered frame are not known (no pass is spent on them); a row's bytes
    are its columns' item sizes, 16 for strings and categories."""
    df = pd.DataFrame(
        {
            "a": np.zeros(10, dtype=np.int8),
            "b": pd.array(np.arange(10), dtype="Int64"),
            "c": pd.Series(list("abcdefghij"), dtype="string"),
            "d": pd.Categorical(list("xyxyxyxyxy")),
            "e": np.zeros(10),
        }
    )
    ddf = dd.from_pandas(df, npartitions=3)
    assert scaleout.known_rows(ddf) == 10
    assert scaleout.known_rows(ddf[ddf.e > 1]) is None
    assert scaleout.known_rows(df) is None
    assert scaleout.row_bytes(df.dtypes) == 1 + 8 + 16 + 16 + 8
    # no client, or no worker with a limit: nothing is counted
    scaleout.check_reduce_memory(None, lambda: pytest.fail("counted"))
