"""The paired bootstrap of a preference fit: count weights over prompts, refits.

One replicate is a weight vector ``w`` over resampling units (prompts,
judges, or battle types); its matchup counts are ``w @ S`` (``S`` from
:mod:`evalci.methods.preference.data`), and the model is refitted on them,
warm-started from the point fit, a block of replicates at a time
(:func:`evalci.methods.preference.fit.fit` is vectorised over replicates).
Every model is refitted on the same ``w``, so every gap is paired.

Draws (the results depend on this order):

* clusters (``cluster=`` given): replicate ``b`` comes from the engine's
  cluster stream ``(BOOT, 0, b // STREAM_SIZE)``, the same counts
  :func:`evalci.bootstrap` draws for one unit of ``C`` inputs with no strata
  (``C <= TILE_SIZE``);
* battles (``cluster=None``, FastChat's battle-level bootstrap): each
  stream ``(BATTLES, b // STREAM_SIZE)`` draws ``multinomial(n, m / n)``
  counts over the distinct battle types of multiplicities ``m`` -- the law
  of resampling the ``n`` battles with replacement, without an ``n``-wide
  weight vector.
"""

from __future__ import annotations

import numpy as np

from evalci._base.text import as_written
from evalci._base.warnings import DegenerateDataWarning
from evalci._base.warnings import warn as _warn
from evalci.engine import resampling as _rs
from evalci.methods.preference import fit as _fit
from evalci.methods.preference.data import Battles

__all__ = ["check_memory", "replicate_fits", "split_counts"]

#: Spawn-key namespace of the battle-type draws (the engine uses 0-2).
_BATTLES = 7
#: Replicates refitted together at most.
FIT_BLOCK = 256
#: Replicate x pair cells of a block at most: the fit's temporaries are
#: (block, pairs) arrays, so a block's memory stays near 8 x 2**22 bytes each.
_FIT_CELLS = 2**22
#: Copies of the (replicates, models) array a call holds at its peak (the
#: refits, the scores, their transpose and sort, the win rates).
_OUTPUT_COPIES = 8
_SAFE_WEIGHTS = 2**24  # weights drawn per block at most (x 4 or 8 bytes)
_EXACT_FLOAT32 = 2**24  # integers below this are exact in float32


def split_counts(y: np.ndarray, model: str, ties: str):
    """``(wi, wj, t)`` from ``(B, 3P)`` counts, ties folded for Bradley-Terry.

    ``ties="half"`` counts a tie as half a win for each side (FastChat);
    ``"drop"`` ignores ties (they were already left out when encoding).
    """
    y = y.reshape(y.shape[0], -1, 3)
    wi, wj, t = y[..., 0], y[..., 1], y[..., 2]
    if model == "bradley-terry":
        if ties == "half":
            wi, wj = wi + 0.5 * t, wj + 0.5 * t
        t = np.zeros_like(t)
    return wi, wj, t


def _dtype(battles: Battles):
    """float32 when every replicate count is an integer below 2**24 (exact).

    The product ``w @ S`` is memory-bound; single precision halves the
    traffic (about 2x faster) and changes no count when the per-unit counts
    are integers (no fractional ``strength``) and no count can reach 2**24.
    """
    if battles.crossed is not None:  # products of counts: no simple bound
        return np.float64
    data = battles.units.data
    whole = bool(np.all(data == np.rint(data)))
    most = float(data.max(initial=0.0)) * (
        battles.n_units if battles.multiplicity is None else battles.multiplicity.sum()
    )
    return np.float32 if whole and most < _EXACT_FLOAT32 else np.float64


def _weights(battles: Battles, root, first: int, n_streams: int, dtype) -> np.ndarray:
    """Count weights ``(n_streams * STREAM_SIZE, C)`` for consecutive streams."""
    c = battles.n_units
    size = _rs.STREAM_SIZE
    out = np.empty((n_streams * size, c), dtype)
    if battles.crossed is not None:
        return _crossed_weights(battles.crossed, root, first, n_streams, out)
    if battles.multiplicity is None:
        for s in range(n_streams):
            gen = _rs.stream(root, _rs._BOOT, 0, first + s)
            out[s * size : (s + 1) * size] = _cluster_counts(gen, c)
        return out
    m = battles.multiplicity
    n = int(m.sum())
    for s in range(n_streams):
        gen = _rs.stream(root, _BATTLES, first + s)
        out[s * size : (s + 1) * size] = gen.multinomial(n, m / n, size=size)
    return out


def _cluster_counts(gen, levels: int) -> np.ndarray:
    """One stream's counts ``(STREAM_SIZE, levels)`` of levels drawn with replacement."""
    size = _rs.STREAM_SIZE
    idx = _rs.draw_clusters(gen, size, np.array([0, levels]))
    idx = idx + (np.arange(size) * levels)[:, None]
    return np.bincount(idx.ravel(), minlength=size * levels).reshape(size, levels)


def _crossed_weights(crossed, root, first: int, n_streams: int, out) -> np.ndarray:
    """Pigeonhole weights: a unit (prompt, judge) counts ``W_prompt W_judge``.

    Each cluster column's levels are drawn with replacement on their own;
    the first column's draws are those of the prompt bootstrap (stream
    ``(BOOT, 0, s)``), so with one level of the others the weights are the
    ordinary ones; column ``d > 0`` draws from stream ``(BOOT, 16 + d, s)``.
    """
    size = _rs.STREAM_SIZE
    for s in range(n_streams):
        rows = slice(s * size, (s + 1) * size)
        out[rows] = 1.0
        for d, codes in enumerate(crossed):
            key = (_rs._BOOT, 0, first + s) if d == 0 else (_rs._BOOT, 16 + d, first + s)
            counts = _cluster_counts(_rs.stream(root, *key), int(codes.max()) + 1)
            out[rows] *= counts[:, codes]
    return out


def replicate_fits(
    battles: Battles,
    *,
    model: str,
    ties: str,
    prior: float,
    ref: int,
    start,
    n_resamples: int,
    root,
    auto: bool = False,
):
    """Refitted ``theta (B, G)`` and ``lam (B,)`` on every replicate.

    A resample whose maximum-likelihood fit does not exist (``prior == 0``,
    a graph not strongly connected) raises; with ``auto`` the function
    returns ``(None, message)`` instead, for the caller to refit every
    replicate with the weak prior.
    """
    total = _rs.n_streams_for(n_resamples)
    per_block = _streams_per_block(battles)
    dtype = _dtype(battles)
    st = battles.units.T.tocsr().astype(dtype)  # (3P, C)
    thetas, lams = [], []
    for first in range(0, total, per_block):
        k = min(per_block, total - first)
        w = _weights(battles, root, first, k, dtype)
        # (b, 3P): the replicates' matchup counts, exact in either precision
        y = np.asarray(st @ w.T, dtype=np.float64).T
        wi, wj, t = split_counts(y, model, ties)
        unbounded = _check_replicates(battles, wi, wj, t, model, prior, first)
        if unbounded is not None:
            if auto:
                return None, unbounded
            raise ValueError(
                f"{unbounded}, so they cannot be ranked with prior=0. Leave "
                "`prior` unset (a weak prior is then added where needed), pass "
                "prior= (a Gaussian prior on the log-strengths, e.g. "
                "prior=0.01), collect more battles for those models, or leave "
                "them out."
            )
        theta, lam, ok = _fit.fit(
            wi,
            wj,
            t,
            battles.pairs,
            model=_code(model),
            ref=ref,
            prior=prior,
            start=start,
        )
        if not ok.all():
            _warn(
                f"{int((~ok).sum())} bootstrap refits did not converge in "
                f"{_fit.MAX_ITER} Newton steps; their scores are approximate.",
                DegenerateDataWarning,
            )
        thetas.append(theta)
        lams.append(lam)
    return np.concatenate(thetas)[:n_resamples], np.concatenate(lams)[:n_resamples]


def _streams_per_block(battles: Battles) -> int:
    """Streams of replicates drawn and refitted together (at least one)."""
    size = _rs.STREAM_SIZE
    return max(
        1,
        min(
            FIT_BLOCK // size,
            _SAFE_WEIGHTS // (size * max(battles.n_units, 1)),
            _FIT_CELLS // (size * max(len(battles.pairs.i), 1)),
        ),
    )


def memory_needed(battles: Battles, n_resamples: int) -> tuple[float, float]:
    """Bytes a bootstrap needs: ``(replicates' results, one block's work)``.

    The results are ``_OUTPUT_COPIES`` arrays of ``n_resamples x models``
    floats; a block draws ``(block, units)`` weights (with int64 draws and
    counts for one stream), forms ``(block, 3 x pairs)`` counts and keeps a
    dozen ``(block, pairs)`` temporaries in the fit (the dense solver adds
    its chunk of Hessians, :data:`~evalci.methods.preference.fit._DENSE_BYTES`).
    """
    g, p, c = battles.pairs.n_models, len(battles.pairs.i), battles.n_units
    block = _streams_per_block(battles) * _rs.STREAM_SIZE
    out = 8.0 * _OUTPUT_COPIES * n_resamples * (g + 1)
    work = 8.0 * (block * c + 2 * _rs.STREAM_SIZE * c + 16 * block * p)
    if g <= _fit.DENSE_MAX:  # a chunk of Hessians and its copy
        work += 2 * min(_fit._DENSE_BYTES, 8.0 * block * (g + 1) ** 2)
    work += 8.0 * 6 * (3 * p + c)
    return out, work


def check_memory(battles: Battles, n_resamples: int) -> None:
    """Refuse up front a bootstrap that cannot fit in this machine's memory.

    As :func:`evalci.engine.passes._check_memory`: what the replicates need
    (:func:`memory_needed`) against half the physical memory.
    """
    from evalci.engine.passes import _physical_memory

    out, work = memory_needed(battles, n_resamples)
    have = _physical_memory() / 2
    if out + work <= have:
        return
    g, gib = battles.pairs.n_models, 2**30
    if work > have:
        raise ValueError(
            f"{g:,} models in {len(battles.pairs.i):,} pairs over "
            f"{battles.n_units:,} resampling units need about {work / gib:.1f} GiB "
            "for one block of bootstrap refits, more than half of this machine's "
            f"memory ({2 * have / gib:.1f} GiB); rank fewer models (filter the "
            "battles) or resample coarser units (`cluster`)."
        )
    fits = int((have - work) // (8.0 * _OUTPUT_COPIES * (g + 1)))
    raise ValueError(
        f"`n_resamples`={n_resamples:,} for {g:,} models needs about "
        f"{(out + work) / gib:.1f} GiB for the replicates alone, more than half "
        f"of this machine's memory ({2 * have / gib:.1f} GiB); use at most "
        f"{fits:,} (1,000, the default, is plenty for a 95% interval), or rank "
        "fewer models (filter the battles)."
    )


def _code(model: str) -> str:
    return "davidson" if model == "davidson" else "bt"


def _check_replicates(battles, wi, wj, t, model, prior, first) -> str | None:
    """What leaves resamples' scores infinite (named models), or None.

    Davidson without ties in a resample raises here: no prior on the
    log-strengths bounds its tie parameter.
    """
    if model == "davidson":
        no_ties = (t.sum(axis=1) == 0) | ((wi + wj).sum(axis=1) == 0)
        if no_ties.any():
            raise ValueError(
                f"{int(no_ties.sum())} bootstrap resamples have no tie (or only "
                "ties), so Davidson's tie parameter has no maximum there; use "
                "model='bradley-terry', or more prompts."
            )
    if prior > 0:
        return None
    ok = _fit.strongly_connected(wi, wj, t, battles.pairs)
    if ok.all():
        return None
    bad = np.flatnonzero(~ok)
    names = battles.models
    culprits: dict[str, int] = {}
    g = battles.pairs.n_models
    for r in bad:
        wins = np.bincount(battles.pairs.i, wi[r] + t[r], g) + np.bincount(
            battles.pairs.j, wj[r] + t[r], g
        )
        losses = np.bincount(battles.pairs.i, wj[r] + t[r], g) + np.bincount(
            battles.pairs.j, wi[r] + t[r], g
        )
        for m in np.flatnonzero((wins == 0) | (losses == 0)):
            culprits[names[m]] = culprits.get(names[m], 0) + 1
    shown = ", ".join(
        f"{as_written(m)} ({n})"
        for m, n in sorted(culprits.items(), key=lambda kv: -kv[1])[:5]
    )
    return (
        f"{len(bad)} of the bootstrap resamples {first * _rs.STREAM_SIZE} to "
        f"{first * _rs.STREAM_SIZE + len(ok) - 1} leave the comparison graph not strongly connected: some model wins (or "
        "loses) every battle it plays there, so its maximum-likelihood score is "
        "infinite"
        + (f"; models that never lose or never win there: {shown}" if shown else "")
    )
