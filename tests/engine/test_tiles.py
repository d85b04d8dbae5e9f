"""Input tiles (issue 12): the two-stage exact multinomial and Poisson weights.

What is checked, and against what:

* decomposition: the unit kernel equals the pieces' partial sums computed
  from slices of ``T`` only and combined in piece order, bit for bit, for
  several blockings of the streams (the contract a Dask graph relies on);
* protocol: a slow, per-replicate re-draw of the documented streams
  (``redo_counts``, written here) gives the kernel's count matrix exactly;
* law: the two-stage counts have the one-stage multinomial's moments (mean 1,
  variance ``1 - 1/N_h``, covariance ``-1/N_h`` within a stratum, 0 across)
  and one input's counts follow Binomial(N_h, 1/N_h) (chi-square, scipy);
* bootstrap SE against closed forms: multinomial weights give
  ``Var(mean*) = sigma^2 / N`` (stratified: ``sum (N_h/N)^2 sigma_h^2 / N_h``);
  Poisson weights, given their total ``W = k > 0``, are Multinomial(k, 1/N), so
  ``Var(ratio* | W > 0) = sigma^2 E[1/W | W > 0]`` with ``W ~ Poisson(N)``
  (computed with scipy.stats.poisson);
* units of at most ``TILE_SIZE`` inputs keep the one-stage draws (a slow
  re-implementation of them here, and the boundary ``N == TILE_SIZE``).

False-failure rates (for a random seed; seeds are fixed, so each test is
deterministic): moment comparisons allow ``Z = 5.5`` standard errors (the SE
estimated from the replicates themselves), 3.8e-8 per comparison (two-sided
normal); the largest family is ``test_two_stage_moments`` with 30 + 30 + 435
comparisons, so at most 2e-5 for a random seed; all tests together make about
1,300 comparisons (< 5e-5). The chi-square test rejects at p < 1e-4.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalci.engine import patterns, resampling, tiles
from evalci.engine.resampling import STREAM_SIZE

Z = 5.5  # standard errors allowed in moment comparisons
P_MIN = 1e-4  # rejection level of the chi-square test


def make_unit(T, bounds=None, index=3):
    T = np.asarray(T, dtype=float)
    if bounds is None:
        bounds = [0, T.shape[0]]
    return resampling.Unit(index=index, T=T, strata_bounds=np.asarray(bounds))


def ratio_unit(x, bounds=None):
    """A mean as a ratio metric: statistics (x, 1) per input, one group."""
    x = np.asarray(x, dtype=float)
    return make_unit(np.stack([x, np.ones_like(x)], axis=1)[:, None, :], bounds)


def mean_star(sums):
    with np.errstate(invalid="ignore"):  # Poisson: no weight at all (W = 0)
        return sums[:, 0, 0] / sums[:, 0, 1]


def z_score(estimate_samples, target):
    """|mean - target| in standard errors of the mean of the samples."""
    se = estimate_samples.std(ddof=1) / np.sqrt(len(estimate_samples))
    return abs(estimate_samples.mean() - target) / se


def var_z(reps, target):
    """|sample variance - target| in its own (estimated) standard errors."""
    reps = reps[np.isfinite(reps)]
    return z_score((reps - reps.mean()) ** 2 * len(reps) / (len(reps) - 1), target)


def redo_counts(root, unit_index, bounds, tile, n_streams):
    """The (B, N) count matrix of the tiled kernel, redrawn slowly from the
    streams documented in ``evalci.engine.resampling`` (one call per stream and piece:
    the units here are far below ``DRAW_CALL / 64`` inputs per piece)."""
    bounds = np.asarray(bounds)
    n = int(bounds[-1])
    # pieces by hand: cut at every stratum bound and every multiple of tile
    cuts = sorted(set(bounds.tolist()) | set(range(0, n + 1, tile)))
    table = [(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]
    counts = np.zeros((n_streams * STREAM_SIZE, n), dtype=np.int64)
    for s in range(n_streams):
        gen = resampling.stream(root, 0, unit_index, s)
        tot = np.zeros((STREAM_SIZE, len(table)), dtype=np.int64)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            mine = [p for p, (a, _) in enumerate(table) if lo <= a < hi]
            if not mine:
                continue
            sizes = np.array([table[p][1] - table[p][0] for p in mine])
            tot[:, mine] = gen.multinomial(hi - lo, sizes / (hi - lo), STREAM_SIZE)
        for p, (a, b) in enumerate(table):
            gen2 = resampling.stream(root, 0, unit_index, s, 1 + p)
            draws = gen2.integers(0, b - a, tot[:, p].sum())
            start = 0
            for r in range(STREAM_SIZE):
                for d in draws[start : start + tot[r, p]]:
                    counts[s * STREAM_SIZE + r, a + d] += 1
                start += tot[r, p]
    return counts


@pytest.fixture
def tile7(monkeypatch):
    monkeypatch.setattr(resampling, "TILE_SIZE", 7)
    return 7


# ------------------------------------------------------------ pieces
def test_pieces_cut_at_tiles_and_strata():
    got = tiles.pieces([0, 5, 5, 12, 14], tile_size=4)
    # tiles 0-4, 4-8, 8-12, 12-14; stratum 1 is empty
    want = [[0, 4, 0], [4, 5, 0], [5, 8, 2], [8, 12, 2], [12, 14, 3]]
    assert np.array_equal(got, want)
    assert np.array_equal(tiles.pieces([0, 9], tile_size=9), [[0, 9, 0]])


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 30), min_size=1, max_size=6),
    tile=st.integers(1, 12),
)
def test_pieces_partition_tiles_and_strata(sizes, tile):
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    table = tiles.pieces(bounds, tile_size=tile)
    n = int(bounds[-1])
    # contiguous cover of 0 .. N by non-empty pieces
    assert np.array_equal(table[:, 0], np.r_[0, table[:-1, 1]][: len(table)])
    assert (table[:, 1] > table[:, 0]).all() and (table[-1, 1] == n if n else True)
    for lo, hi, h in table:
        assert lo // tile == (hi - 1) // tile  # inside one tile
        assert bounds[h] <= lo and hi <= bounds[h + 1]  # inside its stratum
    # as few pieces as the cuts force
    cuts = set(bounds.tolist()) | set(range(0, n + 1, tile))
    assert len(table) == len(cuts) - 1


def test_pieces_reads_tile_size_at_call_time(tile7):
    assert np.array_equal(tiles.pieces([0, 10]), [[0, 7, 0], [7, 10, 0]])


def test_bad_tile_size():
    with pytest.raises(ValueError, match="`tile_size` must be a positive"):
        tiles.pieces([0, 5], tile_size=0)


# ------------------------------------------------------------ decomposition
@pytest.mark.parametrize("m", [2, 6])  # gather path, counting path
@pytest.mark.parametrize("bounds", [[0, 33], [0, 5, 5, 20, 33]])
def test_kernel_decomposes_into_pieces(tile7, m, bounds):
    gen = np.random.default_rng(0)
    T = gen.normal(size=(33, 2, m))
    T[:, :, -1] = 1.0  # a constant column (the runs column at equal k)
    unit = make_unit(T, bounds)
    root = np.random.SeedSequence(11)
    whole = tiles.stream_replicate_sums(unit, root, "cluster", 0, 5)
    table = tiles.pieces(bounds)
    for blocks in ([(0, 5)], [(0, 2), (2, 3)], [(0, 1), (1, 1), (2, 1), (3, 2)]):
        rows = []
        for first, n_streams in blocks:
            tot = tiles.tile_totals(root, 3, bounds, first, n_streams)
            parts = [
                # each task sees one slice of T and its totals column only
                tiles.piece_sums(
                    T[lo:hi].copy(), root, 3, p, first, n_streams, tot[:, p]
                )
                for p, (lo, hi, _) in enumerate(table)
            ]
            rows.append(tiles.combine_pieces(parts))
        assert np.array_equal(np.concatenate(rows), whole)


def test_poisson_decomposes_into_pieces(tile7):
    T = np.random.default_rng(1).normal(size=(20, 1, 3))
    unit = make_unit(T, [0, 9, 20])
    root = np.random.SeedSequence(2)
    whole = tiles.stream_replicate_sums(unit, root, "cluster", 0, 3, weights="poisson")
    table = tiles.pieces([0, 9, 20])
    assert len(table) == 4  # 0-7, 7-9, 9-14, 14-20
    rows = []
    for first, n_streams in [(0, 1), (1, 2)]:
        parts = [
            tiles.poisson_piece_sums(T[lo:hi], root, 3, p, first, n_streams)
            for p, (lo, hi, _) in enumerate(table)
        ]
        rows.append(tiles.combine_pieces(parts))
    assert np.array_equal(np.concatenate(rows), whole)


def test_draw_grouping_does_not_depend_on_blocking(tile7, monkeypatch):
    """Fewer replicates per random call (large pieces) still decompose, and
    the replicates' totals are still exact."""
    monkeypatch.setattr(resampling, "DRAW_CALL", 5 * 7)  # 5 replicates per call
    T = np.random.default_rng(2).normal(size=(30, 1, 1))
    unit = make_unit(np.concatenate([T, np.ones_like(T)], axis=2), [0, 12, 30])
    root = np.random.SeedSequence(4)
    whole = tiles.stream_replicate_sums(unit, root, "cluster", 0, 4)
    parts = [tiles.stream_replicate_sums(unit, root, "cluster", f, 1) for f in range(4)]
    assert np.array_equal(np.concatenate(parts), whole)
    assert (whole[:, 0, 1] == 30).all()


def test_combine_pieces_adds_in_order():
    parts = [np.array([1e16]), np.array([1.0]), np.array([-1e16])]
    # floating addition is not associative: order is part of the contract
    assert tiles.combine_pieces(parts)[0] == (1e16 + 1.0) - 1e16
    with pytest.raises(ValueError, match="`parts` must hold"):
        tiles.combine_pieces([])


# ------------------------------------------------------------ protocol and law
def test_kernel_counts_match_slow_redraw(tile7):
    bounds, n = [0, 12, 30], 30
    root = np.random.SeedSequence(7)
    counts = redo_counts(root, 3, bounds, 7, 3)
    eye = make_unit(np.eye(n)[:, None, :], bounds)  # sums of eye are the counts
    sums = tiles.stream_replicate_sums(eye, root, "cluster", 0, 3)
    assert np.array_equal(sums[:, 0, :], counts)
    # the gather path (two columns) sums the same draws
    x = np.random.default_rng(3).normal(size=(n, 1, 2))
    got = tiles.stream_replicate_sums(make_unit(x, bounds), root, "cluster", 0, 3)
    np.testing.assert_allclose(got[:, 0, :], counts @ x[:, 0, :], rtol=1e-12)


@pytest.fixture(scope="module")
def two_stage_counts():
    """Counts (B, 30) of the tiled kernel, strata of 12 and 18, tile 7."""
    mp = pytest.MonkeyPatch()
    mp.setattr(resampling, "TILE_SIZE", 7)
    try:
        eye = make_unit(np.eye(30)[:, None, :], [0, 12, 30])
        sums = tiles.stream_replicate_sums(
            eye, np.random.SeedSequence(2024), "cluster", 0, 300
        )
    finally:
        mp.undo()
    return sums[:, 0, :]


def test_two_stage_totals_exact(two_stage_counts):
    w = two_stage_counts
    assert (w[:, :12].sum(axis=1) == 12).all()
    assert (w[:, 12:].sum(axis=1) == 18).all()
    assert (w >= 0).all() and np.array_equal(w, np.round(w))


def test_two_stage_moments(two_stage_counts):
    """Mean 1, variance 1 - 1/N_h, covariance -1/N_h (same stratum) or 0: the
    moments of Multinomial(N_h, 1/N_h) per stratum, independent strata."""
    w = two_stage_counts
    n_h = np.r_[np.full(12, 12.0), np.full(18, 18.0)]
    stratum = np.r_[np.zeros(12), np.ones(18)]
    centred = w - 1.0  # deviations from the true mean
    for i in range(30):
        assert z_score(w[:, i], 1.0) < Z
        assert z_score(centred[:, i] ** 2, 1 - 1 / n_h[i]) < Z
    for i in range(30):
        for j in range(i + 1, 30):
            cov = -1 / n_h[i] if stratum[i] == stratum[j] else 0.0
            assert z_score(centred[:, i] * centred[:, j], cov) < Z, (i, j)


def test_one_input_is_binomial(two_stage_counts):
    """Input 9 (second piece of stratum 0): Binomial(12, 1/12) counts."""
    c = two_stage_counts[:, 9].astype(int)
    pmf = stats.binom.pmf(np.arange(4), 12, 1 / 12)
    expected = np.r_[pmf, 1 - pmf.sum()] * len(c)
    observed = np.bincount(np.minimum(c, 4), minlength=5)
    assert stats.chisquare(observed, expected).pvalue > P_MIN


@pytest.mark.parametrize("bounds", [None, [0, 20, 50]])
def test_tiled_se_matches_closed_form_and_untiled(monkeypatch, bounds):
    """SE of a mean: sigma / sqrt(N) (stratified: sum (N_h/N)^2 sigma_h^2/N_h)
    for the tiled kernel (tile 7) and the untiled one, N = 50."""
    x = np.random.default_rng(5).gamma(2.0, size=50)
    unit = ratio_unit(x, bounds)
    b = bounds or [0, 50]
    truth = sum(
        ((hi - lo) / 50) ** 2 * x[lo:hi].var() / (hi - lo)
        for lo, hi in zip(b[:-1], b[1:], strict=True)
    )
    root = np.random.SeedSequence(8)
    untiled = mean_star(tiles.stream_replicate_sums(unit, root, "cluster", 0, 300))
    monkeypatch.setattr(resampling, "TILE_SIZE", 7)
    tiled = mean_star(tiles.stream_replicate_sums(unit, root, "cluster", 0, 300))
    assert not np.array_equal(tiled, untiled)  # other draws ...
    assert var_z(tiled, truth) < Z  # ... same law
    assert var_z(untiled, truth) < Z
    assert z_score(tiled, x.mean()) < Z


# ------------------------------------------------------------ small units
def one_stage_reference(unit, root, n_streams):
    """The kernel as it was before tiles: one stream, one matrix of indices."""
    n = unit.n_clusters
    t = unit.T.reshape(n, -1)
    out = []
    for s in range(n_streams):
        gen = resampling.stream(root, 0, unit.index, s)
        idx = np.empty((STREAM_SIZE, n), dtype=np.int64)
        b = unit.strata_bounds
        for lo, hi in zip(b[:-1], b[1:], strict=True):
            idx[:, lo:hi] = gen.integers(lo, hi, size=(STREAM_SIZE, hi - lo))
        w = np.zeros((STREAM_SIZE, n))
        for r in range(STREAM_SIZE):
            w[r] = np.bincount(idx[r], minlength=n)
        out.append(w @ t)
    return np.concatenate(out).reshape(-1, *unit.T.shape[1:])


@pytest.mark.parametrize("bounds", [[0, 20], [0, 8, 20]])
def test_small_units_keep_one_stage_draws(monkeypatch, bounds):
    unit = make_unit(np.random.default_rng(6).normal(size=(20, 2, 3)), bounds)
    root = np.random.SeedSequence(9)
    default = tiles.stream_replicate_sums(unit, root, "cluster", 0, 3)
    assert np.array_equal(default, one_stage_reference(unit, root, 3))
    monkeypatch.setattr(resampling, "TILE_SIZE", 20)  # N == TILE_SIZE: untiled
    assert np.array_equal(
        tiles.stream_replicate_sums(unit, root, "cluster", 0, 3), default
    )
    monkeypatch.setattr(resampling, "TILE_SIZE", 19)  # N > TILE_SIZE: tiled
    tiled = tiles.stream_replicate_sums(unit, root, "cluster", 0, 3)
    assert not np.allclose(tiled, default)


def test_run_level_strategies_stay_untiled(monkeypatch):
    """hierarchical draws do not change with TILE_SIZE (two-stage is cluster only)."""
    n, k = 12, 3
    rows = np.random.default_rng(0).integers(0, 2, (n * k, 2)).astype(float)
    rows[:, 1] = 1.0
    starts, counts = np.arange(0, n * k, k), np.full(n, k)
    T = rows.reshape(n, k, 2).sum(axis=1)[:, None, :]
    unit = resampling.Unit(
        index=0,
        T=T,
        strata_bounds=np.array([0, n]),
        starts=(starts,),
        counts=(counts,),
        rows=(rows,),
    )
    root = np.random.SeedSequence(1)
    before = tiles.stream_replicate_sums(unit, root, "hierarchical", 0, 2)
    monkeypatch.setattr(resampling, "TILE_SIZE", 5)
    after = tiles.stream_replicate_sums(unit, root, "hierarchical", 0, 2)
    assert np.array_equal(before, after)
    with pytest.raises(ValueError, match="strategy='hierarchical'"):
        tiles.stream_replicate_sums(unit, root, "hierarchical", 0, 1, weights="poisson")


def test_replicate_sums_weights_keyword():
    unit = ratio_unit(np.arange(10.0))
    root = np.random.SeedSequence(3)
    default = tiles.replicate_sums(unit, root, "cluster", 100)
    multi = tiles.replicate_sums(unit, root, "cluster", 100, weights="multinomial")
    pois = tiles.replicate_sums(unit, root, "cluster", 100, weights="poisson")
    assert np.array_equal(default, multi) and default.shape == pois.shape == (100, 1, 2)
    assert not np.array_equal(default, pois)


# ------------------------------------------------------------ Poisson
def poisson_ratio_var(sigma2, n):
    """Var(ratio* | W > 0) = sigma^2 E[1/W | W > 0], W ~ Poisson(n)."""
    k = np.arange(1, int(n + 40 * np.sqrt(n) + 50))
    pmf = stats.poisson.pmf(k, n)
    return sigma2 * (pmf / k).sum() / pmf.sum()


def test_poisson_weights_moments(tile7):
    """Independent Poisson(1) weights: mean 1, variance 1, covariance 0 (also
    across pieces and strata)."""
    eye = make_unit(np.eye(16)[:, None, :], [0, 9, 16])
    w = tiles.stream_replicate_sums(
        eye, np.random.SeedSequence(6), "cluster", 0, 200, weights="poisson"
    )[:, 0, :]
    assert np.array_equal(w, np.round(w)) and (w >= 0).all()
    for i in range(16):
        assert z_score(w[:, i], 1.0) < Z
        assert z_score((w[:, i] - 1) ** 2, 1.0) < Z
    for i in range(16):  # pieces 0-7, 7-9, 9-14, 14-16: each its own stream
        for j in range(i + 1, 16):
            assert z_score((w[:, i] - 1) * (w[:, j] - 1), 0.0) < Z, (i, j)


def test_poisson_row_groups_are_one_call(monkeypatch):
    """numpy's Poisson sampler keeps no state between calls: row groups of
    the weights (large pieces) give the same numbers as one call."""
    # integer statistics: every sum is exact, so only the weights can differ
    # (with normal T, some BLAS -- numpy 1.25's OpenBLAS -- round W @ T of
    # different row blocks differently in the last bit)
    T = np.random.default_rng(0).integers(-5, 6, size=(9, 1, 2)).astype(float)
    root = np.random.SeedSequence(5)
    one = tiles.poisson_piece_sums(T, root, 0, 0, 0, 2)
    monkeypatch.setattr(resampling, "DRAW_CALL", 9 * 5)  # 5 replicates per call
    assert np.array_equal(tiles.poisson_piece_sums(T, root, 0, 0, 0, 2), one)


@pytest.mark.parametrize("n", [10, 200])
def test_poisson_se_of_a_mean(n):
    """Against the closed form; within a few % of multinomial at N=200 and
    measurably larger at N=10 (E[1/W | W>0] = 0.1117 vs 1/10: SE +5.7%)."""
    x = np.random.default_rng(n).normal(size=n)
    unit = ratio_unit(x)
    root = np.random.SeedSequence(10)
    pois = mean_star(
        tiles.stream_replicate_sums(unit, root, "cluster", 0, 400, weights="poisson")
    )
    multi = mean_star(tiles.stream_replicate_sums(unit, root, "cluster", 0, 400))
    pois = pois[np.isfinite(pois)]  # W = 0 (probability e^-10 at N = 10)
    assert var_z(pois, poisson_ratio_var(x.var(), n)) < Z
    assert var_z(multi, x.var() / n) < Z
    ratio = pois.std() / multi.std()
    if n == 200:
        assert abs(ratio - 1) < 0.03  # ~0.5% expected, MC SE of the ratio ~0.6%
    else:
        assert ratio > 1.03  # 1.057 expected, MC SE ~0.6%


def test_pattern_poisson_same_law_as_index_poisson():
    """0/1 data: pattern Poisson(n_p) counts vs per-input Poisson(1) weights."""
    x = (np.random.default_rng(1).random(150) < 0.3).astype(float)
    unit = ratio_unit(x, [0, 60, 150])  # strata do not change Poisson weights
    root = np.random.SeedSequence(12)
    found = patterns.find_patterns(unit.T, unit.strata_bounds)
    assert found.n_patterns == 4
    pat = patterns.pattern_replicate_sums(
        found, root, unit.index, "cluster", 0, 400, weights="poisson"
    )
    idx = tiles.stream_replicate_sums(unit, root, "cluster", 0, 400, weights="poisson")
    truth = poisson_ratio_var(x.var(), 150)
    for sums in (pat, idx):
        assert z_score(sums[:, 0, 1], 150.0) < Z  # total weight ~ Poisson(150)
        assert z_score((sums[:, 0, 1] - 150) ** 2, 150.0) < Z
        assert var_z(mean_star(sums), truth) < Z
    assert abs(mean_star(pat).std() / mean_star(idx).std() - 1) < 0.04  # MC SE 0.8%
    again = patterns.replicate_sums(
        found, root, unit.index, "cluster", 100, weights="poisson"
    )
    assert np.array_equal(again, pat[:100])


def test_pattern_poisson_refuses_run_level_plans():
    found = patterns.find_patterns(np.ones((4, 1, 2)), np.array([0, 4]))
    root = np.random.SeedSequence(0)
    with pytest.raises(ValueError, match="strategy='single_draw'"):
        patterns.pattern_replicate_sums(
            found, root, 0, "single_draw", 0, 1, weights="poisson"
        )
    plan = patterns.DrawPlan(form="mixture", stats=found.stats, strata=())
    with pytest.raises(ValueError, match="needs the cluster plan"):
        patterns.poisson_pattern_sums(found, root, 0, 0, 1, plan)


@pytest.mark.parametrize("bad", ["Poisson", "bayesian", None, 1])
def test_bad_weights(bad):
    unit = ratio_unit(np.arange(5.0))
    root = np.random.SeedSequence(0)
    msg = "`weights` must be 'multinomial' .* or 'poisson'"
    with pytest.raises(ValueError, match=msg):
        tiles.stream_replicate_sums(unit, root, "cluster", 0, 1, weights=bad)
    with pytest.raises(ValueError, match=msg):
        tiles.replicate_sums(unit, root, "cluster", 10, weights=bad)
    found = patterns.find_patterns(unit.T, unit.strata_bounds)
    with pytest.raises(ValueError, match=msg):
        patterns.pattern_replicate_sums(found, root, 0, "cluster", 0, 1, weights=bad)
