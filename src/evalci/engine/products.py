"""The index kernel's product: count weights ``W`` times per-input sums ``T``.

One replicate's sums are ``W[b] @ T``, ``W[b]`` the number of times each
input was drawn. Two facts make the product cheaper than its float64 form
without changing a bit of it (issue 39):

* **Whole numbers multiply in float32.** When every statistic is a whole
  number (0/1 scores, counts) and no replicate sum can reach ``2**24``
  (``N * max|T| < 2**24``), every partial sum of the product is an integer
  that float32 holds exactly, so float32 gives the float64 product's values
  at a third of its cost (half the bytes, twice the lanes).
* **Columns constant within every stratum need no product.** A replicate
  draws ``N_h`` inputs from stratum ``h``, so such a column sums to
  ``sum_h N_h v_h`` in every replicate (the runs column at equal k). For
  whole numbers that is the product's value exactly; other columns keep the
  product, whose rounding the float64 BLAS fixes.

The counts themselves are integers, bincounted from the drawn indices: one
flat bincount for a chunk while its ``rows x N`` counts stay in cache, one
bincount per replicate row beyond (the same integers; the flat array of a
large chunk misses the cache on every increment, measured 3x slower at
N = 100,000).

Statistics that are not whole numbers take the float64 product on every
column, per block of groups, as before: the same bits as earlier versions.
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["CountProduct", "constant_sums", "count_rows"]

#: Below this many bytes of int64 counts a chunk is bincounted at once.
FLAT_COUNT_BYTES = 2**19
#: Every partial sum below this is an exact float32 integer.
FLOAT32_EXACT = 2.0**24

_PLANS: dict[int, tuple] = {}


def count_rows(idx: np.ndarray, n: int, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` (r, n) with how often each of ``n`` inputs occurs in each
    row of ``idx`` (r, L); ``out`` may be any numeric dtype (counts are exact
    up to 2**24 in float32).

    >>> import numpy as np
    >>> count_rows(np.array([[0, 2, 2], [1, 1, 1]]), 3, np.empty((2, 3)))
    array([[1., 0., 2.],
           [0., 3., 0.]])
    """
    r = idx.shape[0]
    if 8 * r * n <= FLAT_COUNT_BYTES:
        flat = (idx + (np.arange(r) * n)[:, None]).ravel()
        out[...] = np.bincount(flat, minlength=r * n).reshape(r, n)
        return out
    for i in range(r):  # r <= 64 rows of O(N) work each
        out[i] = np.bincount(idx[i], minlength=n)
    return out


def _whole(t: np.ndarray) -> bool:
    """Every value a whole number (no NaN), checked in cache-sized chunks."""
    flat = t.reshape(-1)
    step = 1 << 16
    for lo in range(0, flat.size, step):
        x = flat[lo : lo + step]
        if not np.array_equal(x, np.trunc(x)):
            return False
    return True


def constant_sums(t: np.ndarray, bounds: np.ndarray) -> list:
    """Per column of ``t``, ``sum_h N_h v_h`` when constant within every stratum."""
    out = []
    edges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    for j in range(t.shape[1]):
        col, total = t[:, j], 0.0
        for lo, hi in edges:
            if hi > lo and not (col[lo:hi] == col[lo]).all():
                total = None
                break
            total += (hi - lo) * float(col[lo]) if hi > lo else 0.0
        out.append(total)
    return out


class CountProduct:
    """``W @ T`` for chunks of index draws of one unit.

    Parameters
    ----------
    T : (N, G, m) float array
        The unit's per-input sums (``unit.T``: the plan is kept per array).
    bounds : (H + 1,) int array
        The strata's input offsets.
    spans : list of (int, int)
        Column blocks of the float64 product (the blocks of groups a Dask
        task holds); whole numbers multiply all their columns at once.

    Examples
    --------
    >>> import numpy as np
    >>> T = np.array([[1.0, 5.0], [0.0, 5.0], [1.0, 5.0]])[:, None, :]
    >>> prod = CountProduct(T, np.array([0, 3]), [(0, 2)])
    >>> out = np.empty((2, 2))
    >>> prod(np.array([[0, 0, 1], [1, 1, 1]]), out)
    array([[ 2., 15.],
           [ 0., 15.]])
    """

    def __init__(self, T: np.ndarray, bounds: np.ndarray, spans) -> None:
        n = T.shape[0]
        t = T.reshape(n, -1)
        self.n = n
        self.exact32, self.fixed, self.varying, self.parts = _plan(T, t, bounds)
        if not self.exact32:
            self.spans = spans
            self.parts = (
                [t]
                if len(spans) == 1
                else [np.ascontiguousarray(t[:, a:b]) for a, b in spans]
            )
        self._w: np.ndarray | None = None

    def __call__(self, idx: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Fill ``out`` (r, c) with the sums of the replicates drawn in ``idx``."""
        r = idx.shape[0]
        dtype = np.float32 if self.exact32 else float
        if self._w is None or self._w.shape[0] != r:
            self._w = np.empty((r, self.n), dtype=dtype)
        w = count_rows(idx, self.n, self._w)
        if not self.exact32:
            for (a, b), part in zip(self.spans, self.parts, strict=True):
                np.matmul(w, part, out=out[:, a:b])
            return out
        for j, v in enumerate(self.fixed):
            if v is not None:
                out[:, j] = v
        if self.varying:
            out[:, self.varying] = w @ self.parts
        return out


def _plan(T: np.ndarray, t: np.ndarray, bounds: np.ndarray) -> tuple:
    """``(exact32, fixed sums, varying columns, float32 varying block)`` of
    ``t`` (``T`` flattened), computed once per array ``T``: a pass calls the
    kernel per block of streams on the same statistics."""
    key = id(T)
    hit = _PLANS.get(key)
    if hit is not None and hit[0]() is T and np.array_equal(hit[1], bounds):
        return hit[2]
    n, c = t.shape
    big = float(np.abs(t).max()) if t.size else 0.0
    exact32 = n < FLOAT32_EXACT and big * n < FLOAT32_EXACT and _whole(t)
    if exact32:
        fixed = constant_sums(t, bounds)
        varying = [j for j in range(c) if fixed[j] is None]
        block = np.ascontiguousarray(t[:, varying], dtype=np.float32)
        plan = (True, fixed, varying, block)
    else:  # the float64 product of every column: nothing more to keep
        plan = (False, None, None, None)
    if len(_PLANS) >= 8:
        _PLANS.clear()
    # the entry (and its float32 copy) goes when the statistics do
    gone = weakref.ref(T, lambda _, key=key: _PLANS.pop(key, None))
    _PLANS[key] = (gone, np.array(bounds), plan)
    return plan
