"""Literal aliases shared by the public functions."""

from __future__ import annotations

from typing import Literal

import numpy as np

Strategy = Literal[
    "iid", "cluster", "single_draw", "hierarchical", "mode_aggregate", "moving_block"
]
Method = Literal["percentile", "basic", "bca", "normal"]
Weight = Literal["input", "run"]
RNGLike = int | np.random.Generator | np.random.SeedSequence | None

STRATEGIES: tuple[str, ...] = (
    "iid",
    "cluster",
    "single_draw",
    "hierarchical",
    "mode_aggregate",
    "moving_block",
)
METHODS: tuple[str, ...] = ("percentile", "basic", "bca", "normal")
WEIGHTS: tuple[str, ...] = ("input", "run")
RESAMPLE_WEIGHTS: tuple[str, ...] = ("multinomial", "poisson")
BACKENDS: tuple[str, ...] = ("numpy", "dask")
