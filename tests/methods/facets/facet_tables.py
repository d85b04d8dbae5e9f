"""Seeded crossed designs shared by the facets tests."""

import numpy as np
import pandas as pd


def crossed(n=30, t=5, j=None, r=2, sd=(1.0, 0.5, 0.3, 0.6, 1.0), seed=0):
    """Gaussian scores: input + template (+ judge) + input:template + run noise."""
    rng = np.random.default_rng(seed)
    judges = 1 if j is None else j
    a = rng.normal(0, sd[0], n)
    b = rng.normal(0, sd[1], t)
    c = rng.normal(0, sd[2], judges)
    ab = rng.normal(0, sd[3], (n, t))
    idx = np.array(np.meshgrid(np.arange(n), np.arange(t), np.arange(judges),
                               np.arange(r), indexing="ij")).reshape(4, -1)
    y = a[idx[0]] + b[idx[1]] + c[idx[2]] + ab[idx[0], idx[1]]
    y = y + rng.normal(0, sd[4], y.shape)
    df = pd.DataFrame({"input": idx[0], "template": idx[1], "judge": idx[2],
                       "run": idx[3], "y": y})
    return df if j is not None else df.drop(columns="judge")
