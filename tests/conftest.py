from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalci

# The real data sets (tests/data/PROVENANCE.md: source, commit and licence of
# each; some are for tests only and are not shipped in the package).
DATA = Path(__file__).resolve().parent / "data"
#: the checkout: tests/ sits in it, whatever folder a test file is in
ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def local_cluster(n_workers: int = 2, *, set_as_default: bool = True, **options):
    """A real dask.distributed LocalCluster on this machine and a client of
    it, as ``(cluster, client)``: one thread per worker, no dashboard.
    ``options`` go to LocalCluster (``processes``, ``memory_limit``,
    ``protocol``, ``host``); every Dask test starts its cluster here."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            dashboard_address=":0",
            **options,
        ) as cluster,
        distributed.Client(cluster, set_as_default=set_as_default) as client,
    ):
        yield cluster, client


@pytest.fixture(scope="module")
def client():
    """A real LocalCluster on loopback; tests opt in with dask.config.set."""
    with local_cluster(processes=False, set_as_default=False) as (_, c):
        yield c


@pytest.fixture(scope="session")
def gpqa() -> pd.DataFrame:
    return evalci.load_example()


def shared_data(name: str) -> pd.DataFrame:
    """A real data set from ``tests/data`` (see its PROVENANCE.md).

    The files are part of the repository, so a missing one is an error (the
    test fails), never a reason to skip.
    """
    path = DATA / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: the real data sets belong in tests/data "
            "(tests/data/PROVENANCE.md lists them)"
        )
    return pd.read_csv(path)


def clustered(n=60, k=4, p_sys=(0.6, 0.7), seed=0, unequal=False) -> pd.DataFrame:
    """Small clustered 0/1 data: inputs with their own difficulty, systems by column."""
    rng = np.random.default_rng(seed)
    diff = rng.beta(2, 2, n)
    rows = []
    for s, shift in enumerate(p_sys):
        for i in range(n):
            ki = int(rng.integers(1, 2 * k)) if unequal else k
            p = np.clip(diff[i] + shift - 0.5, 0.02, 0.98)
            for r in range(ki):
                rows.append((f"q{i:03d}", r, f"sys{s}", int(rng.random() < p), i % 3))
    return pd.DataFrame(
        rows, columns=["input_id", "run", "system", "correct", "subject"]
    )
