"""A lost worker loses no work: kill one at each phase, get the same numbers.

A LocalCluster of 2 single-threaded worker *processes* on loopback; a
scheduler plugin kills (SIGKILL, by process id) the worker that runs -- or
holds -- the first task of a phase the moment the scheduler sees it, so the
kill lands in that phase every time, not by timing. The nanny restarts the
worker; the result must equal the pandas one bit for bit, within a timeout.

Phases: ``evalci-reduce`` (the per-input statistics of a shuffled
partition), ``evalci-statistics`` (what resampling reads, killed while one
worker holds the only copy: the scattered future of old was lost with it,
``FutureCancelledError ... already forgotten``), ``evalci-resample`` (a
block of replicates, after others were assigned) on the eager path; and
``evalci-start`` (the pass) and ``evalci-finish`` (the intervals), which are
tasks in a lazy graph only (eagerly they run in the client).
"""

import concurrent.futures
import os
import signal

import dask.dataframe as dd
import numpy as np
import pytest

import evalci

distributed = pytest.importorskip("distributed")
from distributed.diagnostics.plugin import SchedulerPlugin  # noqa: E402

from conftest import local_cluster  # noqa: E402

FIELDS = ("estimate", "low", "high", "standard_error", "bootstrap_distribution")
TIMEOUT = 120  # seconds for one call, kill and recovery included


class KillAt(SchedulerPlugin):
    """SIGKILL the worker of the ``nth`` task named ``prefix...`` to reach ``state``."""

    def __init__(self, scheduler, pids, prefix, state="processing", nth=1):
        self.scheduler, self.pids, self.prefix = scheduler, pids, prefix
        self.state, self.nth, self.seen, self.killed = state, nth, 0, None

    def transition(self, key, start, finish, *args, **kwargs):
        if self.killed or finish != self.state or not str(key).startswith(self.prefix):
            return
        self.seen += 1
        if self.seen < self.nth:
            return
        ts = self.scheduler.tasks[key]
        ws = ts.processing_on if finish == "processing" else next(iter(ts.who_has))
        if ws is not None and ws.address in self.pids:
            if finish == "memory":
                assert len(ts.who_has) == 1  # the only copy
            os.kill(self.pids[ws.address], signal.SIGKILL)
            self.killed = ws.address


@pytest.fixture()
def cluster():
    """A fresh cluster per case: a case must not wait for the nanny to bring
    back the worker the previous case killed (under load that took over
    240 s twice: WorkerStartTimeoutError); the surviving worker finishes."""
    with local_cluster(n_workers=2, processes=True, host="127.0.0.1") as (lc, client):
        yield lc, client


def scores(n=300, k=3, systems=3, seed=0):
    rng = np.random.default_rng(seed)
    import pandas as pd

    idx = np.arange(n * k * systems)
    return pd.DataFrame(
        {
            "input_id": (idx // k) % n,
            "system": idx // (n * k),
            "score": rng.normal(0.5, 1.0, len(idx)),
        }
    ).sample(frac=1, random_state=seed)


KW = dict(by="system", n_resamples=2500, rng=11, method="bca")

PHASES = [
    ("eager", "evalci-reduce", "processing", 1),
    ("eager", "evalci-statistics", "memory", 1),
    ("eager", "evalci-resample", "processing", 3),
    # the pass and the intervals run as tasks in a lazy graph only
    ("lazy", "evalci-start", "processing", 1),
    ("lazy", "evalci-finish", "processing", 1),
]


@pytest.mark.slow
@pytest.mark.parametrize("mode, prefix, state, nth", PHASES)
def test_a_worker_killed_at_any_phase_changes_nothing(
    cluster, mode, prefix, state, nth
):
    lc, client = cluster
    client.wait_for_workers(2, timeout=120)
    df = scores()
    ref = evalci.cluster_ci(df, "score", "input_id", **KW)
    ddf = dd.from_pandas(df, npartitions=4)
    kill = KillAt(lc.scheduler, client.run(os.getpid), prefix, state, nth)
    lc.scheduler.add_plugin(kill, name="kill")
    try:
        if mode == "eager":
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                call = pool.submit(ddf.evalci.cluster_ci, "score", "input_id", **KW)
                got = call.result(timeout=TIMEOUT)
        else:
            lazy = ddf.evalci.cluster_ci("score", "input_id", compute=False, **KW)
            got = client.compute(lazy).result(timeout=TIMEOUT)
    finally:
        lc.scheduler.remove_plugin(name="kill")
    assert kill.killed is not None, f"no task {prefix}... reached {state}"
    for f in FIELDS:
        assert np.array_equal(getattr(ref, f), getattr(got, f), equal_nan=True), f
