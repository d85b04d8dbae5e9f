import numpy as np
import pandas as pd
import pytest

import evalci

SHARED = __import__("pathlib").Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def gpqa() -> pd.DataFrame:
    return evalci.load_example()


def shared_data(name: str) -> pd.DataFrame:
    """A real data set from ../shared/data (tests only; some may not be shipped)."""
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} is not available on this machine")
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
