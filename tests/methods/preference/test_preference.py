"""Bradley-Terry and Davidson fits, their bootstrap, and bad battles.

References: per-battle maximum-likelihood fits written here with
scipy.optimize (no sufficient statistics, no Newton), the ``choix`` package
(Maystre's ILSR and MAP fits), and row duplication (a bootstrap replicate
is the point fit on the drawn prompts' rows, copied as often as drawn).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.special import expit

import evalci
from evalci import preference as P
from evalci.engine import resampling as rs

STRENGTHS = {"alpha": 0.6, "beta": 0.2, "gamma": 0.0, "delta": -0.5}


def _battles(seed=0, n=40, tie=0.0, **kw):
    return P.simulate_battles(STRENGTHS, n_prompts=n, tie=tie, rng=seed, **kw)


# ------------------------------------------------------- scipy reference
def _reference(battles, model="bt", ties="half", weights=None, prior=0.0):
    """Per-battle negative log-likelihood minimised by scipy (L-BFGS-B).

    Parameters: every model's log-strength but the first (held at 0), plus
    log(nu) for Davidson. Returns log-strengths by model, first model 0.
    """
    names = sorted(set(battles.model_a) | set(battles.model_b))
    a = battles.model_a.map(names.index).to_numpy()
    b = battles.model_b.map(names.index).to_numpy()
    win = battles.winner.to_numpy()
    w = np.ones(len(battles)) if weights is None else np.asarray(weights, float)
    if model == "bt" and ties == "drop":
        keep = win != "tie"
        a, b, win, w = a[keep], b[keep], win[keep], w[keep]
    g = len(names)
    free = g - 1 + (model == "davidson")

    def unpack(x):
        theta = np.r_[0.0, x[: g - 1]] if prior == 0 else x[:g]
        return theta, (x[-1] if model == "davidson" else 0.0)

    def nll(x):
        theta, lam = unpack(x)
        d = theta[a] - theta[b]
        if model == "bt":
            pa = np.log(expit(d))
            pb = np.log(expit(-d))
            pt = 0.5 * (pa + pb)
        else:
            den = np.log(np.exp(d / 2) + np.exp(-d / 2) + np.exp(lam))
            pa, pb, pt = d / 2 - den, -d / 2 - den, lam - den
        ll = np.where(win == "model_a", pa, np.where(win == "model_b", pb, pt))
        return -(w * ll).sum() + 0.5 * prior * (theta**2).sum()

    x0 = np.zeros(free + (prior > 0))
    res = optimize.minimize(
        nll, x0, method="BFGS", options={"gtol": 1e-11, "maxiter": 10_000}
    )
    res = optimize.minimize(
        nll,
        res.x,
        method="Nelder-Mead",
        options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20_000},
    )
    theta, lam = unpack(res.x)
    return pd.Series(theta - theta[0], index=names), lam


def _theta(fit):
    t = fit.table.set_index("system").theta.sort_index()
    return t - t.iloc[0]


@pytest.mark.parametrize("ties", ["half", "drop"])
def test_bradley_terry_equals_a_per_battle_scipy_fit(ties):
    battles = _battles(seed=1, tie=0.6)
    fit = P.bradley_terry(battles, ties=ties)
    ref, _ = _reference(battles, "bt", ties)
    np.testing.assert_allclose(_theta(fit), ref, atol=1e-6)


def test_davidson_equals_a_per_battle_scipy_fit():
    battles = _battles(seed=2, tie=0.8)
    fit = P.davidson(battles)
    ref, lam = _reference(battles, "davidson")
    np.testing.assert_allclose(_theta(fit), ref, atol=1e-6)
    assert fit.tie_parameter == pytest.approx(np.exp(lam), abs=1e-6)


def test_strength_weights_equal_the_weighted_likelihood():
    battles = _battles(seed=3, tie=0.5)
    strength = {"A>>B": 3, "A>B": 1, "A=B": 2}
    fit = P.davidson(battles, strength=strength)
    w = battles.verdict.map({"A>>B": 3, "B>>A": 3, "A>B": 1, "B>A": 1, "A=B": 2})
    ref, lam = _reference(battles, "davidson", weights=w)
    np.testing.assert_allclose(_theta(fit), ref, atol=1e-6)
    # and equal to duplicating the rows, as Arena-Hard does
    dup = battles.loc[battles.index.repeat(w.to_numpy())]
    np.testing.assert_allclose(_theta(fit), _theta(P.davidson(dup)), atol=1e-8)


def test_prior_is_a_gaussian_penalty():
    battles = _battles(seed=4)
    fit = P.bradley_terry(battles, prior=0.5)
    ref, _ = _reference(battles, "bt", prior=0.5)
    np.testing.assert_allclose(_theta(fit), ref, atol=1e-6)


def test_bradley_terry_equals_choix():
    choix = pytest.importorskip("choix")
    battles = _battles(seed=5, n=30)
    names = sorted(set(battles.model_a) | set(battles.model_b))
    a = battles.model_a.map(names.index).to_numpy()
    b = battles.model_b.map(names.index).to_numpy()
    win = battles.winner.to_numpy() == "model_a"
    data = [(x, y) if w else (y, x) for x, y, w in zip(a, b, win, strict=True)]
    ml = choix.ilsr_pairwise(len(names), data, alpha=0.0, tol=1e-13, max_iter=10_000)
    fit = P.bradley_terry(battles)
    np.testing.assert_allclose(_theta(fit), ml - ml[0], atol=1e-6)
    # choix's MAP penalty is alpha * sum(theta^2): our prior = 2 alpha
    map_ = choix.opt_pairwise(len(names), data, alpha=0.1, tol=1e-12)
    fit = P.bradley_terry(battles, prior=0.2)
    np.testing.assert_allclose(_theta(fit), map_ - map_[0], atol=1e-6)


# ------------------------------------------------------------------ scale
def test_scale_and_win_rate_against_the_anchor():
    battles = _battles(seed=6)
    fit = P.bradley_terry(
        battles, anchor="gamma", anchor_score=1200, scale=173.7, base=np.e
    )
    t = fit.table.set_index("system")
    assert t.score["gamma"] == 1200 and t.win_rate["gamma"] == 0.5
    # P(a beats anchor) = 1 / (1 + base^((s_anchor - s_a) / scale))
    want = 1 / (1 + np.e ** ((1200 - t.score) / 173.7))
    np.testing.assert_allclose(t.win_rate, want, rtol=1e-12)
    unanchored = P.bradley_terry(battles, anchor_score=1200)
    assert unanchored.table.score.mean() == pytest.approx(1200)
    np.testing.assert_allclose(
        np.diff(unanchored.scores.to_numpy()),
        np.diff(P.bradley_terry(battles).scores.to_numpy()),
    )


def test_davidson_win_rate_counts_half_the_ties():
    battles = _battles(seed=7, tie=0.7)
    fit = P.davidson(battles, anchor="beta")
    t = fit.table.set_index("system")
    nu, d = fit.tie_parameter, t.theta["alpha"]
    den = np.exp(d / 2) + np.exp(-d / 2) + nu
    assert t.win_rate["alpha"] == pytest.approx((np.exp(d / 2) + nu / 2) / den)


# -------------------------------------------------------------- bootstrap
def test_a_replicate_is_the_fit_on_the_drawn_prompts():
    battles = _battles(seed=8, n=25, tie=0.4)
    res = P.preference_ci(battles, n_resamples=70, rng=11, anchor="alpha")
    # replicate 64 is the first of stream (BOOT, 0, 1): prompts drawn there
    prompts = np.sort(battles.question_id.unique())
    root = rs.seed_sequence(11)
    for b, stream in ((0, 0), (64, 1)):
        idx = rs.draw_clusters(
            rs.stream(root, rs._BOOT, 0, stream), 64, np.array([0, len(prompts)])
        )[b % 64]
        drawn = pd.concat([battles[battles.question_id == prompts[k]] for k in idx])
        want = P.bradley_terry(drawn, anchor="alpha").scores
        got = res.scores.bootstrap_distribution[:, b]
        np.testing.assert_allclose(got, want.to_numpy(), atol=1e-6)


@pytest.mark.slow
def test_the_battle_bootstrap_resamples_battles():
    battles = _battles(seed=9, n=25)
    res = P.preference_ci(battles, cluster=None, n_resamples=2000, rng=1)
    assert res.scores.strategy == "battle"
    # the law of resampling rows: the SD of each score against 200 refits on
    # rows drawn with replacement (SE of that SD ~5%; 20% is 4 SE)
    rng = np.random.default_rng(0)
    slow = np.array(
        [
            P.bradley_terry(
                battles.iloc[rng.integers(0, len(battles), len(battles))]
            ).scores.to_numpy()
            for _ in range(200)
        ]
    )
    sd = res.scores.standard_error.sort_index().to_numpy()
    np.testing.assert_allclose(sd[1:], slow.std(axis=0, ddof=1)[1:], rtol=0.2)


def test_row_order_and_seed():
    battles = _battles(seed=10, n=30, n_judges=7)
    res = P.preference_ci(battles, n_resamples=100, rng=3)
    shuffled = battles.sample(frac=1, random_state=1)
    again = P.preference_ci(shuffled, n_resamples=100, rng=3)
    np.testing.assert_array_equal(
        res.scores.bootstrap_distribution, again.scores.bootstrap_distribution
    )
    judged = P.preference_ci(shuffled, cluster="judge", n_resamples=100, rng=3)
    assert judged.scores.n_clusters.max() <= 7
    iid = P.preference_ci(shuffled, cluster=None, n_resamples=100, rng=3)
    np.testing.assert_array_equal(
        iid.scores.bootstrap_distribution,
        P.preference_ci(
            battles, cluster=None, n_resamples=100, rng=3
        ).scores.bootstrap_distribution,
    )


def test_feeds_the_leaderboard():
    battles = _battles(seed=11, n=60)
    res = P.preference_ci(battles, anchor="gamma", n_resamples=300, rng=0)
    assert res.scores.paired
    board = res.leaderboard(method="holm")
    assert isinstance(board, evalci.Leaderboard)
    assert list(board.table.system) == list(res.fit.table.system)
    same = evalci.leaderboard_from_bootstrap(res.scores, method="holm")
    pd.testing.assert_frame_equal(board.table, same.table)
    top = P.arena_leaderboard(battles, anchor="gamma", n_resamples=300, rng=0)
    pd.testing.assert_frame_equal(top.table, res.leaderboard().table)
    assert "rank" in board.to_markdown()
    # the gaps' standard errors are the replicates' own
    reps = res.scores.bootstrap_distribution
    i, j = (
        list(res.scores.groups).index("alpha"),
        list(res.scores.groups).index("delta"),
    )
    row = board.pairs[(board.pairs.a == "alpha") & (board.pairs.b == "delta")]
    assert row.standard_error.iloc[0] == pytest.approx(
        np.std(reps[i] - reps[j], ddof=1)
    )
    assert res.win_rate.estimate["gamma"] == 0.5
    assert "win_rate_low" in res.to_frame()


def test_davidson_bootstrap_keeps_nu():
    battles = _battles(seed=12, n=40, tie=0.6)
    res = P.preference_ci(battles, model="davidson", n_resamples=64, rng=0)
    assert res.tie_parameter.shape == (64,)
    assert np.all(res.tie_parameter > 0)


# --------------------------------------------------------------- bad input
def _tiny():
    return pd.DataFrame(
        {
            "question_id": [1, 1, 2, 2, 3, 3],
            "model_a": ["x", "y", "x", "z", "y", "z"],
            "model_b": ["y", "z", "z", "y", "x", "x"],
            "winner": ["model_a", "model_b", "tie", "model_a", "model_a", "model_b"],
        }
    )


def test_unknown_winner_names_the_values():
    bad = _tiny()
    bad.loc[2, "winner"] = "model_c"
    with pytest.raises(
        ValueError, match=r"`winner`.*'model_c' \(1 rows\).*'tie \(bothbad\)'"
    ):
        P.bradley_terry(bad)


def test_a_model_that_never_plays():
    with pytest.raises(ValueError, match=r"cannot be ranked.*'w'"):
        P.bradley_terry(_tiny(), models=["w", "x", "y", "z"])
    only_ties = pd.concat(
        [
            _tiny(),
            pd.DataFrame(
                {
                    "question_id": [4],
                    "model_a": ["q"],
                    "model_b": ["x"],
                    "winner": ["tie"],
                }
            ),
        ]
    )
    with pytest.raises(ValueError, match=r"cannot be ranked.*'q'"):
        P.bradley_terry(only_ties, ties="drop")


def test_a_disconnected_graph_names_the_models():
    two = pd.concat(
        [_tiny(), _tiny().replace({"x": "p", "y": "q", "z": "r"}).assign(question_id=9)]
    )
    with pytest.raises(ValueError, match=r"disconnected.*'p', 'q', 'r'"):
        P.bradley_terry(two)


def test_an_unbeaten_model_names_itself():
    df = _tiny()
    df = pd.concat(
        [
            df,
            pd.DataFrame(
                {
                    "question_id": [5, 5],
                    "model_a": ["u", "x"],
                    "model_b": ["x", "u"],
                    "winner": ["model_a", "model_b"],
                }
            ),
        ]
    )
    with pytest.raises(ValueError, match=r"not strongly connected.*'u'.*prior="):
        P.bradley_terry(df, prior=0)  # maximum likelihood asked for: refused
    fit = P.bradley_terry(df, prior=0.1)  # a prior makes it finite
    assert fit.table.system.iloc[0] == "u"
    # the default adds the weak prior, and says so, naming the model
    with pytest.warns(P.WeakPriorWarning, match=r"'u'.*prior=0\.01"):
        fit = P.bradley_terry(df)
    assert fit.prior == 0.01 and fit.table.system.iloc[0] == "u"


def test_a_resample_without_the_maximum_is_refused_at_prior_zero():
    df = _tiny()  # 3 prompts: some resamples lose every loss of a model
    with pytest.raises(
        ValueError, match=r"bootstrap resamples.*not strongly connected.*prior=0"
    ):
        P.preference_ci(df, n_resamples=200, rng=0, prior=0)
    res = P.preference_ci(df, n_resamples=200, rng=0, prior=1.0)
    assert np.isfinite(res.scores.bootstrap_distribution).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"anchor": "nobody"}, r"`anchor`: 'nobody' plays no battle"),
        ({"strength": {"A>>B": 3}}, r"no `verdict` column"),
        ({"model": "elo"}, r"`model`"),
        ({"ties": "ignore"}, r"`ties`"),
        ({"scale": 0}, r"`scale`"),
        ({"prior": -1}, r"`prior`"),
        ({"method": "bca"}, r"`method`"),
        ({"cluster": "prompt"}, r"prompt"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        P.preference_ci(_tiny(), n_resamples=10, **kwargs)


def test_strength_labels_and_verdicts_checked():
    df = _battles(seed=0, n=5)
    with pytest.raises(ValueError, match=r"`strength`: 'A>>>B'"):
        P.bradley_terry(df, strength={"A>>>B": 3})
    bad = df.copy()
    bad.loc[0, "verdict"] = "A>B" if df.winner[0] == "model_b" else "B>A"
    with pytest.raises(ValueError, match=r"disagree on 1 battles"):
        P.bradley_terry(bad, strength={"A>>B": 3})
    self_play = df.copy()
    self_play.loc[0, "model_b"] = self_play.loc[0, "model_a"]
    with pytest.raises(ValueError, match=r"against itself"):
        P.bradley_terry(self_play)
    no_ties = _battles(seed=0, n=20)
    with pytest.raises(ValueError, match=r"needs both ties"):
        P.davidson(no_ties)


def test_input_is_not_modified():
    df = _battles(seed=0, n=40)
    before = df.copy()
    P.preference_ci(df, n_resamples=100, rng=0, strength={"A>>B": 3})
    pd.testing.assert_frame_equal(df, before)


def test_fractional_strength_keeps_double_precision():
    from evalci.methods.preference import boot as boot
    from evalci.methods.preference.data import encode

    battles = _battles(seed=13, n=30)
    whole = encode(battles, cluster="question_id", strength={"A>>B": 3})
    frac = encode(battles, cluster="question_id", strength={"A>>B": 2.7})
    assert boot._dtype(whole) == np.float32
    assert boot._dtype(frac) == np.float64
    # a replicate with fractional weights is the weighted fit on the drawn prompts
    res = P.preference_ci(battles, strength={"A>>B": 2.7}, n_resamples=64, rng=2)
    prompts = np.sort(battles.question_id.unique())
    idx = rs.draw_clusters(
        rs.stream(rs.seed_sequence(2), rs._BOOT, 0, 0), 64, np.array([0, len(prompts)])
    )[5]
    drawn = pd.concat([battles[battles.question_id == prompts[k]] for k in idx])
    want = P.bradley_terry(drawn, strength={"A>>B": 2.7}).scores.to_numpy()
    np.testing.assert_allclose(res.scores.bootstrap_distribution[:, 5], want, atol=1e-6)


# ------------------------------------------- issue 34: lopsided boards, bad tables
def _lopsided(n_hopeless=10_001, wins=1, seed=0):
    """Three close models, and a hopeless one, ``h``, that wins ``wins`` of its
    ``n_hopeless`` battles (each on its own prompt): connected, but a prompt
    bootstrap often leaves ``h``'s one win out (about e^-1 of resamples)."""
    board = P.simulate_battles(
        {"a": 0.5, "b": 0.0, "c": -0.5}, n_prompts=300, rng=seed
    ).drop(columns="verdict")
    rng = np.random.default_rng(seed)
    h = pd.DataFrame(
        {
            "question_id": 10_000 + np.arange(n_hopeless),
            "model_a": "h",
            "model_b": rng.choice(["a", "b", "c"], n_hopeless),
            "winner": ["model_a"] * wins + ["model_b"] * (n_hopeless - wins),
        }
    )
    return pd.concat([board, h], ignore_index=True)


def test_a_lopsided_board_is_ranked_with_the_weak_prior():
    # one win in 10,001 battles: before, the board was refused ("N bootstrap
    # resamples leave the comparison graph not strongly connected")
    df = _lopsided()
    with pytest.warns(P.WeakPriorWarning, match=r"'h'.*prior=0\.01"):
        res = P.preference_ci(df, n_resamples=300, rng=0)
    assert res.fit.prior == 0.01
    reps = res.scores.bootstrap_distribution
    assert np.isfinite(reps).all()
    t = res.scores.to_frame().set_index("system")
    h = t.loc["h"]
    assert np.isfinite([h.low, h.estimate, h.high]).all()
    # its lower end is where the prior holds a resample with no win: finite,
    # about 2 natural log-units (350 points) below the estimate
    assert h.low < h.estimate - 200 and h.high < t.drop("h").low.min()
    board = res.leaderboard().table.set_index("system")
    assert (board.loc["h", ["rank_low", "rank_high"]] == 4).all()
    # the weak prior is exactly prior=0.01 passed by hand, on every fit
    explicit = P.preference_ci(df, n_resamples=300, rng=0, prior=0.01)
    np.testing.assert_array_equal(reps, explicit.scores.bootstrap_distribution)
    # and prior=0 still asks for maximum likelihood, refusing with the model named
    with pytest.raises(ValueError, match=r"never lose or never win there: 'h'"):
        P.preference_ci(df, n_resamples=300, rng=0, prior=0)


def test_the_weak_prior_equals_choix_map():
    # h never wins: the point fit itself needs the prior; choix's MAP
    # (alpha * sum(theta^2)) with alpha = prior / 2 is the independent reference
    choix = pytest.importorskip("choix")
    df = _lopsided(n_hopeless=300, wins=0)
    with pytest.warns(P.WeakPriorWarning, match="'h'"):
        fit = P.bradley_terry(df)
    names = sorted(set(df.model_a) | set(df.model_b))
    a = df.model_a.map(names.index).to_numpy()
    b = df.model_b.map(names.index).to_numpy()
    win = df.winner.to_numpy() == "model_a"
    data = [(x, y) if w else (y, x) for x, y, w in zip(a, b, win, strict=True)]
    map_ = choix.opt_pairwise(len(names), data, alpha=0.005, tol=1e-12)
    np.testing.assert_allclose(_theta(fit), map_ - map_[0], atol=1e-6)
    assert _theta(fit)["h"] < -8  # finite, far below the others


def test_connected_boards_are_fitted_by_maximum_likelihood_unchanged():
    # the default (prior=None) adds nothing where every resample has its
    # maximum: the same replicates, bit for bit, as prior=0, and no warning
    df = _battles(seed=8, n=60)
    res = P.preference_ci(df, n_resamples=200, rng=1)
    mle = P.preference_ci(df, n_resamples=200, rng=1, prior=0)
    assert res.fit.prior == 0.0
    np.testing.assert_array_equal(
        res.scores.bootstrap_distribution, mle.scores.bootstrap_distribution
    )


@pytest.mark.parametrize(
    "fn", [P.bradley_terry, P.preference_ci, P.preference_fragility]
)
def test_empty_multiindex_and_text_strengths_are_refused(fn):
    df = _battles(seed=0, n=10)
    with pytest.raises(ValueError, match=r"`battles` has no rows"):
        fn(df.iloc[:0])
    wide = df.copy()
    wide.columns = pd.MultiIndex.from_tuples([(c, "x") for c in df.columns])
    with pytest.raises(ValueError, match=r"`battles` has MultiIndex columns"):
        fn(wide)
    for w in ("3", np.nan, -1, True):
        with pytest.raises(ValueError, match=r"`strength\['A>B'\]` must be"):
            fn(df, strength={"A>B": w})
