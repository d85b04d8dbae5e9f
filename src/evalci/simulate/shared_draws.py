"""Resampling draws shared by the trials of one simulated block (kappa's coverage path).

A bootstrap replicate of a trial whose ``m`` equally likely units fall into
groups of sizes ``s_1 .. s_G`` (inputs with the same label and predictions;
rows in the same table cell) needs only its group counts,
``Multinomial(n, s / m)``. Drawn per trial that is O(B n) index draws, or G
binomials per replicate (numpy's multinomial, about 0.1 us each). Here one
set of ``n`` uniform unit indices per replicate is drawn for a whole block
and cumulated over the units (:class:`SharedCounts`); a trial reads its
group counts as differences of that table at its group boundaries. Each
trial lays its groups out in its own random order from its own random first
unit, cyclically (:func:`layout`): the unit indices are iid uniform and
independent of the layout, so every trial's counts are exactly
``Multinomial(n, s / m)`` and its replicates are independent of each other,
while the trials of a block read different unit-to-group maps of the same
draws.

Drawing the ``k`` runs of a drawn input with replacement (hierarchical) is
shared the same way (:class:`SharedRuns`): per
replicate a stream of run slots uniform on ``[0, k)``, with how many of the
first ``j`` slots hold each value. A trial lays its groups' drawn runs end
to end; a group whose inputs predicted class ``j`` in ``c_j`` of their
``k`` runs reads class ``j`` from the slots in
``[c_0 + .. + c_(j-1), c_0 + .. + c_j)``: exactly ``Multinomial(r M_g, c / k)``
for ``M_g`` drawn copies of ``r`` runs each, independently over groups given
``M``.

Replicates are drawn in chunks whose tables fit in a core's cache
(:data:`CACHE_BYTES`), and each chunk is read by the block's trials in
batches whose intermediates stay small (:meth:`SharedRuns.batch`): the
gathers at data-dependent positions are what costs, and they are cheap only
from cache.

Common random numbers. Trials of one block share draws, so given their data
their coverage indicators are correlated through the shared Monte-Carlo
error of the interval ends. Bound, for B = 5,000 and a 95% interval: an
end's resampling error is about 0.038 of the estimate's standard deviation,
which moves the indicator's probability by at most ~0.0022 per end, so the
correlation of two trials' indicators is at most ~2e-4 and the variance of
a block's coverage is inflated by at most ~1.3% (64 trials), the coverage
SE of a cell by ~0.6%. Blocks, strategies and cells draw independently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "CACHE_BYTES",
    "Layout",
    "RunTerms",
    "SharedCounts",
    "SharedRuns",
    "chunks",
    "in_order",
    "layout",
    "run_terms",
]

#: Bytes of shared tables per chunk of replicates: about half a core's L2.
CACHE_BYTES = 1 << 20


def chunks(b: int, bytes_per_replicate: int) -> list[slice]:
    """Slices of ``range(b)`` whose tables take about :data:`CACHE_BYTES`."""
    step = max(16, CACHE_BYTES // max(1, bytes_per_replicate))
    return [slice(lo, min(b, lo + step)) for lo in range(0, b, step)]


@dataclass(frozen=True)
class Layout:
    """Each trial's groups laid over ``m`` units: order, boundaries, wraps."""

    order: np.ndarray  # (T, G): the groups in layout order
    at: np.ndarray  # (T, G + 1): boundary units, in [0, m)
    wrap: np.ndarray  # (T, G): 1 for the group that runs past unit m

    def __getitem__(self, rows) -> Layout:
        return Layout(self.order[rows], self.at[rows], self.wrap[rows])


def layout(sizes: np.ndarray, m: int, gen: np.random.Generator) -> Layout:
    """A random order and first unit per trial for groups of ``sizes (T, G)``.

    Each row of ``sizes`` sums to ``m`` (groups of size 0 pad rows to G).
    """
    sizes = np.asarray(sizes, np.int64)
    if not np.all(sizes.sum(axis=1) == m):
        raise ValueError(f"group sizes must sum to m={m} in every trial")
    t, g = sizes.shape
    order = gen.permuted(np.tile(np.arange(g), (t, 1)), axis=1)
    ends = np.zeros((t, g + 1), np.int64)
    np.cumsum(np.take_along_axis(sizes, order, axis=1), axis=1, out=ends[:, 1:])
    ends += gen.integers(0, m, size=t)[:, None]
    return Layout(order, ends % m, np.diff(ends // m, axis=1))


def in_order(values: np.ndarray, lay: Layout) -> np.ndarray:
    """Per-group ``values (T, G, ...)`` in layout order."""
    idx = lay.order.reshape(lay.order.shape + (1,) * (values.ndim - 2))
    return np.take_along_axis(values, idx, axis=1)


class SharedCounts:
    """``b`` replicates of ``n`` uniform draws over ``m`` units, cumulated.

    ``cum[u, r]`` is how many of replicate ``r``'s draws fall on units
    ``0 .. u - 1`` (``cum[m] == n``): a trial reads whole rows of it, one per
    group boundary.
    """

    def __init__(self, m: int, n: int, b: int, gen: np.random.Generator):
        idx = gen.integers(0, m, size=(b, n))
        idx += m * np.arange(b)[:, None]
        hist = np.bincount(idx.ravel(), minlength=b * m).reshape(b, m)
        self.cum = np.zeros((m + 1, b))
        self.cum[1:] = np.cumsum(hist, axis=1).T
        self.m, self.n = m, n

    @staticmethod
    def nbytes(m: int) -> int:
        """Table bytes per replicate."""
        return 8 * (m + 1)

    def counts(self, lay: Layout) -> np.ndarray:
        """``(T, G, b)`` draws per group, in layout order."""
        at = self.cum[lay.at]  # (T, G + 1, b)
        return np.diff(at, axis=1) + (self.n * lay.wrap)[..., None]

    def margins(self, lay: Layout, values: np.ndarray) -> np.ndarray:
        """``(T, b, q)``: each replicate's ``sum_g counts_g values_g``.

        ``values (T, G, q)`` in layout order. ``sum_g (cum[e_g] - cum[s_g])
        v_g`` is ``sum_j cum[e_j] (v_(j-1) - v_j)`` over the G + 1
        boundaries, one product, plus ``n v_g`` for the group that wraps.
        """
        d = np.zeros((values.shape[0], values.shape[1] + 1, values.shape[2]))
        d[:, 1:] += values
        d[:, :-1] -= values
        at = self.cum[lay.at]  # (T, G + 1, b)
        wrapped = self.n * np.einsum("tg,tgq->tq", lay.wrap, values)
        return np.matmul(d.transpose(0, 2, 1), at).transpose(0, 2, 1) + wrapped[:, None]


class SharedRuns:
    """``b`` replicates of ``s`` run slots uniform on ``[0, k)``, cumulated.

    ``slots (b, s)`` are the draws; ``below[v - 1, r, j]`` is how many of
    replicate ``r``'s first ``j`` slots are below ``v``, for ``v = 1 .. k - 1``.
    """

    def __init__(self, s: int, k: int, b: int, gen: np.random.Generator):
        self.k, self.width, self.b = k, s + 1, b
        self.slots = slots = gen.integers(0, k, size=(b, s), dtype=np.int8)
        self.below = np.zeros((max(k - 1, 1), b, s + 1), _count_dtype(s))
        for v in range(1, k):
            np.cumsum(slots < v, axis=1, out=self.below[v - 1, :, 1:])
        self.below = self.below.ravel()

    @staticmethod
    def nbytes(s: int, k: int) -> int:
        """Table bytes per replicate."""
        return np.dtype(_count_dtype(s)).itemsize * (k - 1) * (s + 1)

    def margins(self, m: np.ndarray, runs: int, terms: RunTerms) -> np.ndarray:
        """Kappa margins ``(T, b, q)`` of the runs drawn for input groups.

        ``m (T, G, b)`` is how many copies of each group's inputs a
        replicate drew (layout order), each with ``runs`` runs laid end to
        end over the replicate's slots; ``terms`` says what the runs of a
        group with a slot below each threshold add to the margins.
        """
        t, g, b = m.shape
        drawn = runs * m
        marg = np.matmul(terms.whole.transpose(0, 2, 1), drawn)  # (T, q, b)
        if terms.group.shape[1]:
            # each term's group: where its runs end and start, as rows
            rows = (g * np.arange(t)[:, None] + terms.group).ravel()
            hi = np.cumsum(drawn, axis=1).reshape(-1, b)[rows]
            lo = hi - drawn.reshape(-1, b)[rows]
            base = ((terms.value.ravel() - 1) * (self.b * self.width)).astype(float)
            base = base[:, None] + self.width * np.arange(b, dtype=float)
            hi, lo = (hi + base).astype(np.intp), (lo + base).astype(np.intp)
            got = np.take(self.below, hi) - np.take(self.below, lo)
            got = got.astype(np.float32).reshape(t, -1, b)
            marg += np.matmul(terms.coef.transpose(0, 2, 1), got)
        return marg.transpose(0, 2, 1)

    @staticmethod
    def batch(g: int, b: int) -> int:
        """Trials per call that keep its ``(T, G, b)`` arrays near 256 KiB."""
        return max(1, (1 << 15) // max(1, g * b))


def _count_dtype(s: int):
    return np.int16 if s < 2**15 else np.int32


@dataclass(frozen=True)
class RunTerms:
    """What a group's drawn runs add to kappa's margins, per trial.

    ``whole (T, G, q)`` per drawn run of the group (its label's row, and the
    classes every slot reads); the slot-dependent part is a list of ``E``
    terms: group ``group (T, E)``'s runs with a slot below ``value (T, E)``
    add ``coef (T, E, q)`` (float32; terms of padding have coefficient 0).
    """

    whole: np.ndarray
    group: np.ndarray
    value: np.ndarray
    coef: np.ndarray

    def __getitem__(self, rows) -> RunTerms:
        return RunTerms(self.whole[rows], self.group[rows], self.value[rows],
                        self.coef[rows])  # fmt: skip


def run_terms(labels: np.ndarray, counts: np.ndarray, k: int, c: int) -> RunTerms:
    """:class:`RunTerms` of groups with ``labels (T, G)`` and ``counts (T, G, c)``.

    A group's class-j count is ``A(e_j) - A(e_(j-1))`` with ``A(v)`` its runs
    with a slot below ``v`` and ``e_j`` the cumulated run counts: ``A(0) =
    0``, ``A(k)`` is all of its runs, and only thresholds strictly between
    are drawn. Margins: row sums (labels), column sums (predictions), trace.
    """
    t, g = labels.shape
    coef = np.zeros((t, k + 1, g, 2 * c + 1))
    ends = np.zeros((t, g, c + 1), np.int64)
    np.cumsum(counts, axis=-1, out=ends[..., 1:])
    tt, gg = np.meshgrid(np.arange(t), np.arange(g), indexing="ij")
    coef[tt, k, gg, labels] += 1.0
    for j in range(c):
        coef[tt, ends[..., j + 1], gg, c + j] += 1.0
        coef[tt, ends[..., j], gg, c + j] -= 1.0
    own = np.take_along_axis(ends, labels[..., None] + np.array([0, 1]), axis=-1)
    coef[tt, own[..., 1], gg, 2 * c] += 1.0
    coef[tt, own[..., 0], gg, 2 * c] -= 1.0
    inner = coef[:, 1:k]  # (T, k - 1, G, q); A(0) = 0 drops out
    ti, vi, gi = np.nonzero(np.any(inner != 0, axis=-1))
    pos = np.arange(len(ti)) - np.searchsorted(ti, np.arange(t))[ti]
    e = int(pos.max()) + 1 if len(ti) else 0
    group, value = np.zeros((t, e), np.int64), np.ones((t, e), np.int64)
    tcoef = np.zeros((t, e, 2 * c + 1), np.float32)
    group[ti, pos], value[ti, pos] = gi, vi + 1
    tcoef[ti, pos] = inner[ti, vi, gi]
    return RunTerms(coef[:, k], group, value, tcoef)
