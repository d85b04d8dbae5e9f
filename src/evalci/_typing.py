"""Literal aliases shared by the public functions."""

from __future__ import annotations

from typing import Literal, Union

import numpy as np

Strategy = Literal["iid", "cluster", "single_draw", "hierarchical", "mode_aggregate"]
Method = Literal["percentile", "basic", "bca"]
Weight = Literal["input", "run"]
RNGLike = Union[int, np.random.Generator, np.random.SeedSequence, None]

STRATEGIES: tuple[str, ...] = (
    "iid",
    "cluster",
    "single_draw",
    "hierarchical",
    "mode_aggregate",
)
METHODS: tuple[str, ...] = ("percentile", "basic", "bca")
WEIGHTS: tuple[str, ...] = ("input", "run")
