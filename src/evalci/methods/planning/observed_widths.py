"""Observed interval widths: the cluster bootstrap of nested run subsamples.

The check behind :func:`evalci.width_table` (``observed=True``):
each input's runs are put in a seeded random order, the first k' of them are
kept (so the k'-run subsample is contained in the (k'+1)-run one), and the
cluster-bootstrap percentile interval of each subsample is measured.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _subsample(data, src, b_codes, c_codes, k_max, seed):
    """Up to ``k_max`` runs per input, nested in k: a seeded random order per input.

    Rows: each row gets a uniform key; the first k' rows of an input in key
    order are its k'-run subsample, so the k'-run set is contained in the
    (k'+1)-run set. Counts: k_max runs are drawn one at a time without
    replacement from the urn of c successes and n - c failures (sequential
    draws over the runs, vectorised over inputs). Returns arrays
    (by code, cluster code, rank, outcome).
    """
    rng = np.random.default_rng(seed)
    if not src.counts:
        y = data[src.value].to_numpy(dtype=float)
        cell = b_codes * (c_codes.max() + 1) + c_codes
        u = rng.random(len(y))
        order = np.lexsort((u, cell))
        cs = cell[order]
        start = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]])
        rank = np.arange(len(cs)) - np.repeat(start, np.diff(np.r_[start, len(cs)]))
        keep = rank < k_max
        o = order[keep]
        return b_codes[o], c_codes[o], rank[keep], y[o]
    c = data[src.successes].to_numpy(dtype=float)
    n = data[src.trials].to_numpy(dtype=float)
    m = len(n)
    kk = np.minimum(n, k_max).astype(np.int64)
    out = np.zeros((m, k_max))
    left_c, left_n = c.copy(), n.copy()
    for j in range(k_max):  # loop over runs, not inputs
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(left_n > 0, left_c / left_n, 0.0)
        draw = rng.random(m) < p
        out[:, j] = draw
        left_c -= draw
        left_n -= 1
    keep = np.arange(k_max)[None, :] < kk[:, None]
    rows = np.repeat(np.arange(m), kk)
    rank = np.broadcast_to(np.arange(k_max), (m, k_max))[keep]
    return b_codes[rows], c_codes[rows], rank, out[keep]


def _observed_widths(
    data, src, codes, ks, k_min, present, n_resamples, confidence_level, rng
):
    """(groups, k') cluster-bootstrap widths of nested run subsamples (NaN past k_min)."""
    from evalci.engine.bootstrap import (
        cluster_ci,  # local: core imports nothing from here
    )
    from evalci.engine.resampling import seed_sequence

    root = seed_sequence(rng)
    order_seed, boot_seed = root.spawn(2)
    boot_int = int(boot_seed.generate_state(1)[0])
    k_obs = int(min(ks.max(), k_min[present].max()))
    gb, gc, rank, y = _subsample(data, src, codes.by, codes.cluster, k_obs, order_seed)
    G = len(present)
    widths = np.full((G, len(ks)), np.nan)
    pos = np.full(codes.nb, -1)
    pos[present] = np.arange(G)
    for j, kp in enumerate(ks):
        if kp > k_obs:
            break
        keep = rank < kp
        frame = pd.DataFrame({"_g": gb[keep], "_c": gc[keep], "_y": y[keep]})
        res = cluster_ci(
            frame,
            "_y",
            "_c",
            by="_g" if src.by else None,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            rng=boot_int,
        )
        if src.by:
            w = res.high - res.low
            widths[pos[w.index.to_numpy()], j] = w.to_numpy()
        else:
            widths[0, j] = res.high - res.low
    widths[k_min[present][:, None] < ks[None, :]] = np.nan
    return widths
