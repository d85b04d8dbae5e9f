"""Fragility of Bradley-Terry and Davidson rankings: the greedy search.

References: a brute-force search over every multiset of up to 3 removed
battles (refitted in one vectorised batch by the Newton fitter, which
tests/methods/preference/test_preference.py checks against scipy and choix to 1e-6), and a
per-battle maximum-likelihood fit written here with scipy.optimize to
confirm that dropping the rows named flips the order.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.special import expit

import evalci
from evalci import preference as P
from evalci.methods.preference import fit as F


# ---------------------------------------------------------------- references
def _scipy_theta(df, model="bt", weights=None):
    """Per-battle ML log-strengths by scipy (first model's held at 0)."""
    names = sorted(set(df.model_a) | set(df.model_b))
    a = df.model_a.map(names.index).to_numpy()
    b = df.model_b.map(names.index).to_numpy()
    win = df.winner.to_numpy()
    w = np.ones(len(df)) if weights is None else np.asarray(weights, float)
    g = len(names)

    def nll(x):
        theta = np.r_[0.0, x[: g - 1]]
        d = theta[a] - theta[b]
        if model == "bt":
            pa, pb = np.log(expit(d)), np.log(expit(-d))
            pt = 0.5 * (pa + pb)
        else:
            lam = x[-1]
            den = np.logaddexp(np.logaddexp(d / 2, -d / 2), lam)
            pa, pb, pt = d / 2 - den, -d / 2 - den, lam - den
        ll = np.where(win == "model_a", pa, np.where(win == "model_b", pb, pt))
        return -(w * ll).sum()

    x0 = np.zeros(g - 1 + (model != "bt"))
    res = optimize.minimize(nll, x0, method="BFGS", options={"gtol": 1e-9})
    return pd.Series(np.r_[0.0, res.x[: g - 1]], index=names)


def _brute(df, a, b, model="bt", kmax=3):
    """Fewest rows (up to ``kmax``) whose removal puts ``b`` strictly ahead.

    Identical battles (pair, outcome) give identical fits, so every
    multiset of battle kinds of each size is tried; removals leaving some
    score infinite (not strongly connected) are skipped, as the search does.
    """
    names = sorted(set(df.model_a) | set(df.model_b))
    ia = df.model_a.map(names.index).to_numpy()
    ib = df.model_b.map(names.index).to_numpy()
    i, j = np.minimum(ia, ib), np.maximum(ia, ib)
    win = df.winner.to_numpy()
    out = np.where(win == "tie", 2, np.where((win == "model_a") == (ia < ib), 0, 1))
    keys = list(zip(i.tolist(), j.tolist(), out.tolist(), strict=True))
    kinds = sorted(set(keys))
    count = {k: keys.count(k) for k in kinds}
    pairs = sorted({k[:2] for k in kinds})
    pr = F.Pairs(
        np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]), len(names)
    )
    base = np.zeros((len(pairs), 3))
    for k in kinds:
        base[pairs.index(k[:2]), k[2]] += count[k]
    ka, kb = names.index(a), names.index(b)
    for r in range(kmax + 1):
        sets = [
            c
            for c in itertools.combinations_with_replacement(range(len(kinds)), r)
            if all(c.count(x) <= count[kinds[x]] for x in set(c))
        ]
        y = np.repeat(base[None], len(sets), axis=0)
        for s, c in enumerate(sets):
            for x in c:
                y[s, pairs.index(kinds[x][:2]), kinds[x][2]] -= 1
        wi, wj, t = y[..., 0], y[..., 1], y[..., 2]
        ok = np.ones(len(sets), bool)
        if model == "bt":
            wi, wj, t = wi + 0.5 * t, wj + 0.5 * t, 0 * t
        else:
            ok &= (t.sum(1) > 0) & ((wi + wj).sum(1) > 0)
        ok &= F.strongly_connected(wi, wj, t, pr)
        if ok.any():
            th, _, _ = F.fit(wi[ok], wj[ok], t[ok], pr, model=model)
            if (th[:, ka] - th[:, kb] < -1e-9).any():
                return r
    return None


def _small(seed, tie_share=0.25):
    """4 models of close strength, 30-60 battles between random pairs."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 61))
    theta = rng.normal(0, 0.3, 4)
    names = np.array(list("abcd"))
    x = rng.integers(0, 4, n)
    y = (x + rng.integers(1, 4, n)) % 4
    p = expit(theta[x] - theta[y])
    u = rng.random(n)
    decided = 1 - tie_share
    winner = np.where(
        u < decided * p, "model_a", np.where(u < decided, "model_b", "tie")
    )
    return pd.DataFrame({"model_a": names[x], "model_b": names[y], "winner": winner})


# ------------------------------------------------------------- brute force
@pytest.mark.slow
@pytest.mark.parametrize("model", ["bradley-terry", "davidson"])
def test_greedy_never_beats_brute_force_and_mostly_equals_it(model):
    # 60 random cases x (top + 3 adjacent pairs). Measured on seeds
    # 1000-1149 while building this: Bradley-Terry 447 of 447 pairs with a
    # flip within 3 removals equal to brute force, Davidson 445 of 447 (the
    # other two: greedy 4, brute force 3). The 90% floor leaves room.
    code = "bt" if model == "bradley-terry" else "davidson"
    equal = total = 0
    for seed in range(1000, 1060):
        df = _small(seed)
        try:
            frag = P.preference_fragility(df, model=model)
        except ValueError:  # a not strongly connected draw: nothing to rank
            continue
        for r in frag.table.itertuples():
            best = _brute(df, r.a, r.b, code)
            got = None if pd.isna(r.fragility) else int(r.fragility)
            if best is None:  # no flip within 3: the greedy must need more
                assert got is None or got > 3
                continue
            assert got is not None and got >= best  # an upper bound, never below
            total += 1
            equal += got == best
    assert total > 100
    assert equal / total >= 0.9, (equal, total)


def test_named_rows_flip_the_order_in_an_independent_fit():
    df = _small(3, tie_share=0.0)
    frag = P.preference_fragility(df)
    for r in frag.table.itertuples():
        assert r.fragility == len(r.fragility_rows)
        theta = _scipy_theta(df.drop(index=list(r.fragility_rows)))
        assert theta[r.b] > theta[r.a]
        full = _scipy_theta(df)
        assert full[r.a] >= full[r.b]  # a was ahead on all the data


def test_davidson_rows_flip_the_order_in_an_independent_fit():
    df = _small(5, tie_share=0.3)
    frag = P.preference_fragility(df, model="davidson")
    for r in frag.table.itertuples():
        theta = _scipy_theta(df.drop(index=list(r.fragility_rows)), model="davidson")
        assert theta[r.b] > theta[r.a]


def test_top_place_is_the_fewest_over_challengers():
    df = _small(11)
    frag = P.preference_fragility(df)
    top = frag.top
    fit = P.bradley_terry(df)
    assert top.a == fit.table.system[0]
    # every challenger's own search needs at least as many removals
    for b in fit.table.system[1:]:
        best = _brute(df, top.a, b, kmax=min(3, int(top.fragility) - 1))
        assert best is None  # no challenger overtakes with fewer (brute force)
    theta = _scipy_theta(df.drop(index=list(top.fragility_rows)))
    assert theta[top.b] > theta[top.a]


# ------------------------------------------------------------ phenomenon
def test_a_near_tie_at_the_top_flips_with_a_handful_of_votes():
    # 6 models, 15,000 battles; the two best 0.02 apart in log-strength
    # (1.7 Elo points): a few votes out of thousands move first place.
    strengths = {"m0": 0.52, "m1": 0.50, "m2": 0.2, "m3": 0.0, "m4": -0.3, "m5": -0.6}
    df = P.simulate_battles(strengths, n_prompts=1000, prompt_sd=0.0, rng=4)
    frag = P.preference_fragility(df)
    top = frag.top
    assert frag.n_battles == len(df) == 15_000
    assert 1 <= top.fragility <= 0.002 * len(df)  # at most 30 of 15,000
    theta = P.bradley_terry(df.drop(index=list(top.fragility_rows))).table
    assert theta.system[0] != top.a  # first place has changed hands
    # a clear gap lower down needs many more
    last = frag.table.iloc[-1]
    assert last.fragility > 5 * top.fragility


# ------------------------------------------------------------ properties
def test_strength_weights_go_with_the_removed_battles():
    df = P.simulate_battles({"a": 0.2, "b": 0.1, "c": 0.0}, n_prompts=40, rng=2)
    strength = {"A>>B": 3}
    frag = P.preference_fragility(df, strength=strength)
    weights = np.where(df.verdict.str.contains(">>|<<"), 3.0, 1.0)
    for r in frag.table.itertuples():
        keep = ~df.index.isin(list(r.fragility_rows))
        theta = _scipy_theta(df[keep], weights=weights[keep])
        assert theta[r.b] > theta[r.a]


def test_row_order_and_labels_do_not_change_the_counts():
    df = _small(8)
    frag = P.preference_fragility(df)
    shuffled = df.sample(frac=1.0, random_state=1)
    shuffled.index = [f"r{k}" for k in range(len(df))]
    again = P.preference_fragility(shuffled)
    cols = ["place", "a", "b", "fragility", "fragility_first_order"]
    pd.testing.assert_frame_equal(frag.table[cols], again.table[cols])
    assert all(str(x).startswith("r") for x in again.table.fragility_rows[0])


def test_does_not_modify_the_battles_and_methods_forward():
    df = _small(9)
    before = df.copy()
    frag = P.preference_fragility(df)
    pd.testing.assert_frame_equal(df, before)
    via_fit = P.bradley_terry(df).fragility(df)
    pd.testing.assert_frame_equal(frag.table, via_fit.table)
    res = P.preference_ci(
        df.assign(question_id=np.arange(len(df)) // 3), n_resamples=50, rng=0
    )
    pd.testing.assert_frame_equal(res.fragility(df).table, frag.table)
    assert evalci.preference.preference_fragility is P.preference_fragility
    assert "PreferenceFragility" in repr(frag)


def test_max_remove_gives_up_and_says_so():
    df = _small(3, tie_share=0.0)
    frag = P.preference_fragility(df)
    need = int(frag.table.fragility.max())
    capped = P.preference_fragility(df, max_remove=need - 1)
    worst = capped.table.fragility[frag.table.fragility == need]
    assert worst.isna().all()
    assert (capped.table.fragility_rows[worst.index] == ()).all()


def test_gap_on_the_elo_scale():
    df = _small(3)
    frag = P.preference_fragility(df, scale=400, base=10)
    np.testing.assert_allclose(
        frag.table.gap, frag.table.theta_gap * 400 / np.log(10), rtol=1e-12
    )
    fit = P.bradley_terry(df).table.set_index("system").score
    adj = frag.table[frag.table.place == "adjacent"]
    np.testing.assert_allclose(
        adj.gap.to_numpy(), (fit[adj.a].to_numpy() - fit[adj.b].to_numpy()), atol=1e-6
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"model": "elo"}, "`model`"),
        ({"ties": "count"}, "`ties`"),
        ({"max_remove": 0}, "`max_remove` must be an integer >= 1"),
        ({"max_remove": 2.5}, "`max_remove` must be an integer >= 1"),
        ({"max_remove": -1}, "`max_remove` must be an integer >= 1"),
        ({"max_remove": "3"}, "`max_remove` must be an integer >= 1 or None; got '3'"),
        ({"prior": -1}, "`prior`"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        P.preference_fragility(_small(3), **kwargs)


def test_unrankable_battles_raise_naming_the_models():
    df = pd.DataFrame(
        {
            "model_a": ["a", "a", "b"],
            "model_b": ["b", "c", "c"],
            "winner": ["model_a"] * 3,
        }
    )
    with pytest.raises(ValueError, match="not strongly connected.*'c', 'b'"):
        P.preference_fragility(df, prior=0)
    # the default fits with the weak prior instead, and says so
    with pytest.warns(P.WeakPriorWarning, match="'c', 'b'"):
        frag = P.preference_fragility(df)
    assert frag.top.a == "a"
