"""The same numbers for the same seed, however the data is split and run.

The reference is the numpy path: the same DataArray held in memory, or the
same table as a pandas DataFrame. Every Dask layout must give it *bit for
bit* (``np.array_equal``), not to a tolerance: the reduction sums each
(input, group) cell's runs in the canonical order inside one task (an
input's runs are never split between tasks), so no float sum depends on the
chunking, and the streams of draws are keyed by index, never by task.

Layouts: DataArray chunkings (one chunk, ten, uneven, chunked along run
and along system too, with and without coordinates on the dims), DataFrame
partitionings (1, 3 and 7 partitions of shuffled rows), and schedulers
(synchronous, threads, processes, and ``distributed.LocalCluster`` on
loopback with 1 and 2 workers, threads and processes). Values: 0/1
outcomes, float scores in [0, 1], and predicted labels scored by Cohen's
kappa (the exact distinct-rows reduction).
"""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evalci

from conftest import local_cluster  # noqa: E402

distributed = pytest.importorskip("distributed")

N, K = 200, 4
KINDS = ("binary", "score", "kappa")
RESAMPLES = 1100  # two resampling tasks of 1,024 replicates


def values(kind: str, seed: int = 0):
    """(input, run, system) values of ``kind`` with ~10% missing runs, and truth."""
    rng = np.random.default_rng(seed)
    shape = (N, K, 2)
    difficulty = rng.beta(2, 2, N)[:, None, None]
    truth = rng.integers(0, 3, N)
    if kind == "binary":
        v = (rng.random(shape) < difficulty).astype(float)
    elif kind == "score":
        v = np.clip(difficulty + rng.normal(0.0, 0.2, shape), 0.0, 1.0)
    else:  # a label, right with probability 0.7, else any of the 3
        right = rng.random(shape) < 0.7
        v = np.where(right, truth[:, None, None], rng.integers(0, 3, shape))
        v = v.astype(float)
    gone = rng.random(shape) < 0.1
    gone[:, 0, :] = False  # every input keeps a run in every system
    v[gone] = np.nan
    return v, truth


def dataarray(kind: str, labels: str = "coords") -> xr.DataArray:
    """The values as a DataArray. ``labels``: "coords", input keys in shuffled
    order (the canonical order is not the array's) and named systems;
    "none", dims without coordinates (positions are the keys); "repeated",
    30 input keys that occur twice, far apart (one input, merged)."""
    v, truth = values(kind)
    coords = {"subject": ("input", np.arange(N) % 3)}
    if kind == "kappa":
        coords["label"] = ("input", truth)
    if labels != "none":
        keys = np.random.default_rng(1).permutation(N)
        if labels == "repeated":
            keys[-30:] = keys[:30]
        coords["input"] = [f"q{i:04d}" for i in keys]
        coords["system"] = ["sysB", "sysA"]
    return xr.DataArray(v, dims=("input", "run", "system"), coords=coords, name="y")


def options(kind: str) -> dict:
    kw = dict(n_resamples=RESAMPLES, rng=np.random.SeedSequence(2024), method="bca")
    if kind == "kappa":
        kw["metric"] = evalci.metrics.kappa(truth="label")
    return kw


def same_dataset(ref: xr.Dataset, got: xr.Dataset) -> None:
    """Every variable of two results equal bit for bit, on the same labels."""
    got = got.compute()
    assert set(ref.data_vars) == set(got.data_vars)
    for name in ref.data_vars:
        a, b = ref[name], got[name]
        assert a.dims == b.dims, name
        for d in a.dims:
            if d in ref.coords:
                assert np.array_equal(ref[d].values, got[d].values), d
        assert np.array_equal(a.values, b.values, equal_nan=True), name
    xr.testing.assert_identical(ref, got)  # and the same labels and attrs


def same_result(ref, got) -> None:
    """Two BootstrapResults with the same numbers, bit for bit."""
    for f in ("estimate", "low", "high", "standard_error", "bootstrap_distribution"):
        a, b = np.asarray(getattr(ref, f)), np.asarray(getattr(got, f))
        assert np.array_equal(a, b, equal_nan=True), f
    assert np.array_equal(np.asarray(ref.n_runs), np.asarray(got.n_runs))
    assert np.array_equal(np.asarray(ref.n_inputs), np.asarray(got.n_inputs))
    assert list(ref.groups) == list(got.groups)


def table(kind: str) -> pd.DataFrame:
    """The labelled DataArray as a tidy table, rows in shuffled order."""
    frame = dataarray(kind).evalci.to_frame()
    return frame.sample(frac=1, random_state=3).reset_index(drop=True)


def frame_ci(df, kind):
    return evalci.cluster_ci(df, "y", "input", by="system", **options(kind))


# ---------------------------------------------------------------- chunkings
CHUNKINGS = {
    "one chunk": {},
    "ten chunks": {"input": 20},
    "uneven": {"input": (7, 100, 1, 55, 37)},
    "runs split": {"input": 50, "run": 1},
    "systems split": {"input": 30, "system": 1},
}


CASES = [
    *[(kind, labels, {}) for kind in KINDS for labels in ("coords", "none")],
    ("score", "none", {"strata": "subject"}),
    ("binary", "coords", {"by": "subject"}),
    ("score", "repeated", {}),
    # runs resampled too: the start task gathers the array (exact too)
    ("binary", "none", {"strategy": "hierarchical"}),
]


@pytest.mark.parametrize("kind, labels, extra", CASES)
def test_every_chunking_of_a_dataarray_gives_the_numpy_numbers(kind, labels, extra):
    da = dataarray(kind, labels)
    ref = da.evalci.bootstrap(**options(kind), **extra)
    # the options beyond the plain case: two layouts that split inputs
    names = list(CHUNKINGS) if not extra else ["ten chunks", "uneven"]
    layouts = {name: da.chunk(CHUNKINGS[name]) for name in names}
    if not extra:  # the same cells in another memory order, then chunked
        layouts["transposed"] = da.transpose("system", "run", "input").chunk(
            {"input": 45}
        )
    with dask.config.set(scheduler="sync"):
        for name, lazy in layouts.items():
            got = lazy.evalci.bootstrap(**options(kind), **extra)
            assert got.low.chunks is not None
            try:
                same_dataset(ref, got)
            except AssertionError as e:
                raise AssertionError(f"{name}: {e}") from None


@pytest.mark.parametrize("kind", KINDS)
def test_one_run_per_input_without_a_run_dim(kind):
    da = dataarray(kind, "none").isel(run=0, drop=True)  # run 0 is never missing
    ref = da.evalci.bootstrap(**options(kind))
    with dask.config.set(scheduler="sync"):
        for chunks in ({}, {"input": 33}, {"input": 25, "system": 1}):
            same_dataset(ref, da.chunk(chunks).evalci.bootstrap(**options(kind)))


def test_the_numpy_dataarray_is_the_pandas_table():
    # the reference itself, against the independent pandas path
    for kind in KINDS:
        ref = frame_ci(table(kind), kind)
        ds = dataarray(kind).evalci.bootstrap(**options(kind))
        ds = ds.sel(system=list(ref.groups))
        assert np.array_equal(ds.low.values, ref.low)
        assert np.array_equal(ds.high.values, ref.high)


# ------------------------------------------------------------ partitionings
@pytest.mark.parametrize("kind", KINDS)
def test_every_partitioning_of_a_dataframe_gives_the_pandas_numbers(kind):
    df = table(kind)
    ref = frame_ci(df, kind)
    with dask.config.set(scheduler="sync"):
        for npartitions in (1, 3, 7):
            for seed in (None, 5):  # as given, and the rows shuffled again
                rows = df if seed is None else df.sample(frac=1, random_state=seed)
                ddf = dd.from_pandas(
                    rows.reset_index(drop=True), npartitions=npartitions
                )
                same_result(ref, frame_ci(ddf, kind))


# --------------------------------------------------------------- schedulers
SCHEDULERS = ["sync", "threads", "processes", "dist-1", "dist-2", "dist-2-processes"]


@pytest.fixture(scope="module", params=SCHEDULERS)
def scheduler(request):
    """A scheduler to compute on: a local one by name, or a LocalCluster on
    loopback (module-scoped: each cluster starts once, one at a time)."""
    name = request.param
    if name == "processes":
        # one pool for the module: a pool per compute would start (and
        # import evalci in) two fresh processes every time
        context = multiprocessing.get_context("spawn")
        with (
            ProcessPoolExecutor(2, mp_context=context) as pool,
            dask.config.set(scheduler=name, pool=pool),
        ):
            yield name
        return
    if not name.startswith("dist"):
        with dask.config.set(scheduler=name):
            yield name
        return
    with local_cluster(
        n_workers=int(name.split("-")[1]),
        processes=name.endswith("processes"),
        protocol="tcp",  # on loopback, also for workers in this process
        host="127.0.0.1",
    ):
        yield name


@pytest.fixture(scope="module")
def references():
    """The numpy numbers, computed once per kind."""
    return {
        kind: (
            dataarray(kind, "none").evalci.bootstrap(**options(kind)),
            frame_ci(table(kind), kind),
        )
        for kind in KINDS
    }


@pytest.mark.slow  # ~35 s: two process pools and three clusters start
@pytest.mark.parametrize("kind", KINDS)
def test_every_scheduler_gives_the_numpy_numbers(scheduler, kind, references):
    da_ref, frame_ref = references[kind]
    da = dataarray(kind, "none").chunk({"input": 40, "system": 1})
    lazy = da.evalci.bootstrap(**options(kind))
    same_dataset(da_ref, lazy)
    ddf = dd.from_pandas(table(kind), npartitions=3)
    same_result(frame_ref, frame_ci(ddf, kind))
    # a lazy result (graph built now, computed later) on the same scheduler
    lazy = evalci.cluster_ci(
        ddf, "y", "input", by="system", compute=False, **options(kind)
    )
    same_result(frame_ref, lazy.compute())
