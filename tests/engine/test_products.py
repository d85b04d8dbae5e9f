"""The index kernel's product (issue 39): float32 for whole numbers, constant
columns filled, counts row by row -- the same bits as the float64 product of
flat bincounts it replaced, which is kept here verbatim as the reference."""

import numpy as np
import pytest

from evalci._base.streams import streams
from evalci.engine import products, resampling, tiles


def reference_sums(unit, root, first, n_streams, spans):
    """The one-stage cluster kernel before issue 39: flat bincounts of a chunk,
    converted to float64, multiplied per block of groups."""
    n, g, m = unit.T.shape
    t = unit.T.reshape(n, g * m)
    out = np.empty((n_streams * resampling.STREAM_SIZE, g * m))
    spans = [(lo * m, hi * m) for lo, hi in spans]
    parts = [np.ascontiguousarray(t[:, a:b]) for a, b in spans]
    rows_per = resampling.draw_rows(n)
    offsets = (np.arange(rows_per) * n)[:, None]
    gens = streams(root, (resampling._BOOT, unit.index), first, n_streams)
    for s, gen in enumerate(gens):
        for r0, block in resampling._draw_chunks(gen, unit, rows_per):
            rows = slice(s * 64 + r0, s * 64 + r0 + rows_per)
            block = block + offsets
            w = np.bincount(block.ravel(), minlength=rows_per * n)
            w = w.reshape(rows_per, n).astype(float)
            for (a, b), part in zip(spans, parts, strict=True):
                out[rows, a:b] = w @ part
    return out.reshape(-1, g, m)


def _unit(T, bounds):
    return resampling.Unit(index=3, T=T, strata_bounds=np.asarray(bounds))


def _binary(n, g, k, seed):
    gen = np.random.default_rng(seed)
    T = np.empty((n, g, 2))
    T[:, :, 0] = gen.binomial(k, gen.beta(2, 2, size=(n, g)))
    T[:, :, 1] = k
    return T


CASES = {
    # 0/1 scores of 10 systems, k = 5: float32, runs column filled
    "binary ten systems": (_binary(3_000, 10, 5, 1), [0, 3_000]),
    # strata, the runs column constant within each but not across
    "binary strata": (_binary(2_000, 4, 3, 2), [0, 700, 2_000]),
    # negative whole numbers
    "negative counts": (
        np.random.default_rng(3).integers(-9, 9, size=(1_500, 3, 2)).astype(float),
        [0, 1_500],
    ),
    # whole numbers whose sums could pass 2**24: the float64 product
    "large counts": (
        np.random.default_rng(4).integers(0, 10**5, size=(1_000, 3, 2)).astype(float),
        [0, 1_000],
    ),
    # fractions: the float64 product, every column
    "continuous": (np.random.default_rng(5).random((2_500, 6, 2)), [0, 900, 2_500]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_matches_the_float64_product_bit_for_bit(case):
    T, bounds = CASES[case]
    unit = _unit(T, bounds)
    root = np.random.SeedSequence(17)
    n, g, m = T.shape
    got = tiles.stream_replicate_sums(unit, root, "cluster", 2, 3)
    want = reference_sums(unit, root, 2, 3, tiles.group_blocks(n, g, m))
    assert np.array_equal(got, want)


def test_plan_picks_float32_only_where_it_is_exact():
    plan = products._plan
    binary = _binary(100, 2, 5, 0)
    assert plan(binary, binary.reshape(100, -1), np.array([0, 100]))[0]
    big = np.full((100, 1, 1), 2.0**24 / 100)  # a sum of 100 draws reaches 2**24
    assert not plan(big, big.reshape(100, -1), np.array([0, 100]))[0]
    half = binary + 0.5
    assert not plan(half, half.reshape(100, -1), np.array([0, 100]))[0]
    nan = binary.copy()
    nan[3, 0, 0] = np.nan
    assert not plan(nan, nan.reshape(100, -1), np.array([0, 100]))[0]


def test_constant_columns_are_filled_with_their_strata_sums():
    T = _binary(10, 2, 4, 0)
    T[:6, :, 1], T[6:, :, 1] = 4.0, 2.0
    exact32, fixed, varying, _ = products._plan(
        T, T.reshape(10, -1), np.array([0, 6, 10])
    )
    assert exact32 and varying == [0, 2]
    assert fixed[1] == fixed[3] == 6 * 4.0 + 4 * 2.0


@pytest.mark.parametrize("n", [50, 200_000])
def test_count_rows_flat_and_row_by_row_agree_with_a_loop(n):
    gen = np.random.default_rng(n)
    idx = gen.integers(0, n, size=(4, n))
    got = products.count_rows(idx, n, np.empty((4, n), dtype=np.float32))
    for i in range(4):
        assert np.array_equal(got[i], np.bincount(idx[i], minlength=n))


def test_a_plan_goes_with_its_statistics():
    import gc

    T = _binary(500, 3, 5, 9)
    key = id(T)
    products._plan(T, T.reshape(500, -1), np.array([0, 500]))
    assert key in products._PLANS
    del T
    gc.collect()
    assert key not in products._PLANS
