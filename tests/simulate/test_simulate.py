"""The models of :mod:`evalci.simulate` (issue 11): one sample/truth protocol.

Every statistical tolerance states its false-failure rate: the chance that a
correct implementation fails the check with these (fixed) seeds' kind of
luck. "z SE" bounds are two-sided normal tail rates (the estimates are means
or smooth functions of means of >= 5,000 independent inputs, so normality is
good); where an SD was measured by simulation rather than derived, the
comment says so and the bound is widened to cover a 10% error in that SD.
The seeds are fixed, so every test is deterministic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci import simulate

CONF_B = np.array(  # same row sums as seed 000's matrix, more accurate
    [
        [135, 15, 5, 0],
        [15, 100, 10, 5],
        [5, 10, 85, 10],
        [0, 5, 10, 90],
    ],
    dtype=float,
)


def _icc_estimates(model, gen, n_sets, cols):
    """ICC estimates of ``n_sets`` simulated GPQA-sized (198 x 5) data sets:
    ``(n_sets, system, stat)``."""
    return np.array(
        [
            evalci.icc(
                model.sample(198, 5, gen), "correct", "input_id", system="system"
            )[cols].to_numpy()
            for _ in range(n_sets)
        ]
    )


def _models():
    return {
        "confusion": simulate.ConfusionModel(),
        "confusion2": simulate.ConfusionModel((simulate.SEED000_CONFUSION, CONF_B)),
        "beta": simulate.BetaBernoulli(0.7, 0.3),
        "beta3": simulate.BetaBernoulli(0.6, 0.2, n_systems=("x", "y", "z")),
        "paired": simulate.PairedSystems(0.6, 0.05, icc=0.4, correlation=0.7),
        "pilot": simulate.pilot_model(
            evalci.load_example(), "correct", "input_id", system="system"
        ),
        "pilot_matched": simulate.pilot_model(
            evalci.load_example(),
            "correct",
            "input_id",
            system="system",
            match_icc=True,
        ),
    }


MODELS = _models()


# ---------------------------------------------------------------- protocol


@pytest.mark.parametrize("name", sorted(MODELS))
def test_protocol_frame_and_dataarray(name):
    """Tidy frame layout, determinism in rng, DataArray = the library's layout."""
    m = MODELS[name]
    assert isinstance(m, simulate.Model)
    df = m.sample(7, 3, rng=5)
    assert list(df.columns[:4]) == ["input_id", "run", "system", "correct"]
    assert len(df) == 7 * 3 * len(m.systems)
    assert tuple(pd.unique(df.system)) == m.systems
    assert sorted(df.input_id.unique()) == list(range(7))
    assert df.correct.dtype == np.int64 and set(df.correct.unique()) <= {0, 1}
    pd.testing.assert_frame_equal(df, m.sample(7, 3, rng=np.random.default_rng(5)))
    assert not df.equals(m.sample(7, 3, rng=6))
    da = m.sample(7, 3, rng=5, as_dataarray=True)
    assert da.dims == ("input", "run", "system")
    assert dict(da.sizes) == {"input": 7, "run": 3, "system": len(m.systems)}
    assert da.identical(df.evalci.to_xarray("correct"))
    acc = m.truth("accuracy")
    assert tuple(acc) == m.systems and all(0 < v < 1 for v in acc.values())


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize(
    "n_inputs, n_runs, arg",
    [(0, 3, "n_inputs"), (2.5, 3, "n_inputs"), (True, 3, "n_inputs"),
     (5, 0, "n_runs"), (5, "3", "n_runs")],
)  # fmt: skip
def test_protocol_bad_sizes_name_the_argument(name, n_inputs, n_runs, arg):
    with pytest.raises(ValueError, match=f"`{arg}`"):
        MODELS[name].sample(n_inputs, n_runs, rng=0)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_protocol_truth_errors(name):
    m = MODELS[name]
    with pytest.raises(ValueError, match="`metric`"):
        m.truth("f1")
    if len(m.systems) == 1:
        with pytest.raises(ValueError, match="two or more systems"):
            m.truth("gap")
    else:
        gap = m.truth("gap")
        acc = m.truth("accuracy")
        a, b = m.systems[:2]
        assert gap[(a, b)] == pytest.approx(acc[b] - acc[a], abs=1e-15)


# ----------------------------------------------------------- ConfusionModel


@pytest.mark.parametrize("seed", [0, 1, 123])
def test_confusion_model_equals_the_function(seed):
    """One system and the seed matrix: the same draws as ``confusion_model``."""
    got = simulate.ConfusionModel().sample(60, 4, rng=seed)
    want = simulate.confusion_model(60, 4, rng=seed)
    for col in ["input_id", "run", "label", "pred", "correct"]:
        np.testing.assert_array_equal(got[col].to_numpy(), want[col].to_numpy())
    assert (got.system == "A").all()


def test_confusion_model_truth_and_systems():
    m = simulate.ConfusionModel((simulate.SEED000_CONFUSION, CONF_B), ("old", "new"))
    assert m.systems == ("old", "new")
    assert m.truth() == {
        "old": simulate.true_accuracy(simulate.SEED000_CONFUSION),
        "new": simulate.true_accuracy(CONF_B),
    }
    assert m.truth("kappa")["new"] == simulate.true_kappa(CONF_B)
    one = simulate.ConfusionModel(n_systems=3)
    assert one.systems == ("A", "B", "C") and one.truth()["C"] == 0.7
    # the systems share each input's true label; correct = (pred == label)
    df = m.sample(300, 2, rng=0)
    lab = df.pivot_table(index=["input_id", "run"], columns="system", values="label")
    assert (lab["old"] == lab["new"]).all()
    assert (df.correct == (df.pred == df.label)).all()


def test_confusion_model_large_sample_matches_truth():
    """Accuracy per system and the gap on 20,000 inputs x 2 runs."""
    m = simulate.ConfusionModel((simulate.SEED000_CONFUSION, CONF_B))
    n, k = 20_000, 2
    da = m.sample(n, k, rng=11, as_dataarray=True)
    means = da.mean("run")  # per-input means, (input, system)
    for s, c in zip(m.systems, (simulate.SEED000_CONFUSION, CONF_B), strict=True):
        between, within = simulate.variance_components(c)
        se = np.sqrt((between + within / k) / n)  # exact SE of the mean
        # 4 SE, two-sided: false failure 6e-5 per system
        assert abs(float(means.sel(system=s).mean()) - m.truth()[s]) < 4 * se
    d = means.sel(system="B") - means.sel(system="A")
    # the gap's SE estimated from the same data (n = 20,000: SE of SE ~0.5%)
    se = float(d.std()) / np.sqrt(n)
    # 4 SE: false failure 6e-5
    assert abs(float(d.mean()) - m.truth("gap")[("A", "B")]) < 4 * se


def test_confusion_model_errors():
    with pytest.raises(ValueError, match="same row marginal"):
        simulate.ConfusionModel((simulate.SEED000_CONFUSION, np.eye(4)))
    with pytest.raises(ValueError, match="`n_systems` names 3 systems"):
        simulate.ConfusionModel((simulate.SEED000_CONFUSION, CONF_B), 3)
    with pytest.raises(ValueError, match="`confusion`"):
        simulate.ConfusionModel(np.ones((2, 3)))
    with pytest.raises(ValueError, match="`n_systems`"):
        simulate.ConfusionModel(n_systems=0)
    with pytest.raises(ValueError, match="`n_systems` must name distinct"):
        simulate.ConfusionModel(n_systems=("a", "a"))


# ------------------------------------------------------------ BetaBernoulli


def test_beta_bernoulli_parameters():
    m = simulate.BetaBernoulli(0.7, 0.3)
    a, b = m.a[0], m.b[0]
    assert a / (a + b) == pytest.approx(0.7, rel=1e-14)
    assert 1 / (a + b + 1) == pytest.approx(0.3, rel=1e-14)
    m2 = simulate.BetaBernoulli((0.7, 0.2), 0.1, n_systems=2)
    assert m2.truth() == {"A": 0.7, "B": 0.2}
    assert m2.truth("gap")[("A", "B")] == pytest.approx(-0.5, abs=1e-15)


def test_beta_bernoulli_reproduces_mean_and_icc():
    """evalci.icc on 20,000 inputs x 4 runs recovers each system's ICC and mean."""
    m = simulate.BetaBernoulli((0.7, 0.2), (0.3, 0.05), n_systems=2)
    n, k = 20_000, 4
    df = m.sample(n, k, rng=2)
    est = evalci.icc(df, "correct", "input_id", system="system").set_index("system")
    # SD of rho_raw, measured over 100 seeds at N = 5,000 (0.0091 and 0.0063),
    # scaled by sqrt(5,000 / 20,000); 5 measured SD: false failure < 1e-5 even
    # if the measured SD is 10% low (4.5 SD)
    for s, sd in (("A", 0.0091 / 2), ("B", 0.0063 / 2)):
        i = m.systems.index(s)
        assert abs(est.loc[s, "rho_raw"] - m.icc[i]) < 5 * sd
        mu, rho = m.accuracy[i], m.icc[i]
        se = np.sqrt(mu * (1 - mu) * (rho + (1 - rho) / k) / n)  # exact SE
        # 4 SE: false failure 6e-5
        assert abs(est.loc[s, "mean"] - mu) < 4 * se


@pytest.mark.parametrize(
    "kwargs, arg",
    [
        ({"accuracy": 0, "icc": 0.3}, "accuracy"),
        ({"accuracy": 1.2, "icc": 0.3}, "accuracy"),
        ({"accuracy": "x", "icc": 0.3}, "accuracy"),
        ({"accuracy": 0.5, "icc": 0}, "icc"),
        ({"accuracy": 0.5, "icc": 1}, "icc"),
        ({"accuracy": (0.5, 0.6, 0.7), "icc": 0.2, "n_systems": 2}, "accuracy"),
        ({"accuracy": 0.5, "icc": 0.2, "n_systems": -1}, "n_systems"),
    ],
)
def test_beta_bernoulli_errors(kwargs, arg):
    with pytest.raises(ValueError, match=f"`{arg}`"):
        simulate.BetaBernoulli(**kwargs)


# ------------------------------------------------------------ PairedSystems


def test_paired_systems_truth_is_exact():
    m = simulate.PairedSystems(0.6, 0.05, icc=0.4, correlation=0.7)
    assert m.truth("gap") == {("A", "B"): 0.05}
    assert m.truth() == {"A": 0.6, "B": 0.65}
    # independence needs copula correlation 0 (quadrature symmetric to 1e-9)
    m0 = simulate.PairedSystems(0.3, 0.2, icc=0.2, correlation=0.0)
    assert abs(m0.copula_correlation) < 1e-9


def test_paired_systems_latent_rates():
    """2e5 latent pairs: the means (gap), ICC-given variances and correlation."""
    m = simulate.PairedSystems(0.6, 0.05, icc=0.4, correlation=0.7)
    n = 200_000
    p = m.rates(n, rng=3)
    sd = np.sqrt(np.array([0.6 * 0.4, 0.65 * 0.35]) * 0.4)  # exact SDs of the rates
    # 4 SE of a mean: false failure 6e-5 each
    assert np.all(np.abs(p.mean(axis=1) - [0.6, 0.65]) < 4 * sd / np.sqrt(n))
    d = p[1] - p[0]
    assert abs(d.mean() - 0.05) < 4 * d.std() / np.sqrt(n)
    # SD of the sample correlation, measured over 100 seeds at this n: 0.00105;
    # 5 measured SD: false failure < 1e-5 even if that SD is 10% low
    assert abs(np.corrcoef(p)[0, 1] - 0.7) < 5 * 0.00105


def test_paired_systems_data_reproduce_gap_and_correlation():
    """From the 0/1 data alone (5,000 inputs x 4 runs): gap, and the rates'
    correlation as cov(per-input means) / (SD_A SD_B), run noise being
    independent across systems."""
    m = simulate.PairedSystems(0.6, 0.05, icc=0.4, correlation=0.7)
    n, k = 5_000, 4
    means = m.sample(n, k, rng=4, as_dataarray=True).mean("run").values  # (n, 2)
    sd = np.sqrt(np.array([0.6 * 0.4, 0.65 * 0.35]) * 0.4)
    d = means[:, 1] - means[:, 0]
    # exact SE of the gap: latent part plus run noise mu(1-mu)(1-icc)/k each
    var_d = sd @ sd - 2 * 0.7 * sd[0] * sd[1] + (0.24 + 0.2275) * 0.6 / k
    # 4 SE: false failure 6e-5
    assert abs(d.mean() - 0.05) < 4 * np.sqrt(var_d / n)
    corr = np.cov(means.T)[0, 1] / (sd[0] * sd[1])
    # SD measured over 100 seeds at this n, k: 0.0183; 5 measured SD: < 1e-5
    assert abs(corr - 0.7) < 5 * 0.0183


@pytest.mark.parametrize(
    "args, arg",
    [
        ((0.0, 0.1, 0.3, 0.5), "accuracy_a"),
        ((0.6, 0.5, 0.3, 0.5), "gap"),
        ((0.6, "big", 0.3, 0.5), "gap"),
        ((0.6, 0.1, 1.0, 0.5), "icc"),
        ((0.6, 0.1, 0.3, 1.0), "correlation"),
        ((0.3, 0.5, 0.7, 0.5), "correlation"),  # above the reachable 0.467
    ],
)
def test_paired_systems_errors(args, arg):
    with pytest.raises(ValueError, match=f"`{arg}`"):
        simulate.PairedSystems(*args)


# --------------------------------------------------------------- PilotModel


@pytest.fixture(scope="module")
def pilot():
    return evalci.load_example()


def test_pilot_truth_is_the_pilots_input_weighted_mean(pilot):
    m = simulate.PilotModel.from_data(pilot, "correct", "input_id", system="system")
    est = evalci.icc(pilot, "correct", "input_id", system="system")
    assert m.systems == tuple(est.system)
    assert m.truth() == pytest.approx(
        dict(zip(est.system, est["mean"], strict=True)), abs=1e-14
    )
    a, b = m.systems
    assert m.truth("gap")[(a, b)] == pytest.approx(
        est["mean"].iloc[1] - est["mean"].iloc[0], abs=1e-14
    )
    # the world's components, in closed form from the pilot's mean squares
    N, k = 198, 5
    comp = m.components()
    between, within = comp.sigma2_between.to_numpy(), comp.sigma2_within.to_numpy()
    np.testing.assert_allclose(between, (N - 1) / N * est.msb / k, rtol=1e-12)
    np.testing.assert_allclose(within, (k - 1) / k * est.msw, rtol=1e-12)


def test_pilot_keeps_systems_paired():
    """Inputs and run indices are drawn jointly: a pilot whose two systems are
    identical run by run simulates identical systems; one whose B is 1 - A
    simulates B = 1 - A."""
    base = simulate.BetaBernoulli(0.5, 0.3).sample(40, 3, rng=0)
    twin = pd.concat([base, base.assign(system="B")])
    flip = pd.concat([base, base.assign(system="B", correct=1 - base.correct)])
    for data, f in ((twin, lambda a: a), (flip, lambda a: 1 - a)):
        m = simulate.pilot_model(data, "correct", "input_id", system="system")
        da = m.sample(100, 6, rng=1, as_dataarray=True)
        np.testing.assert_array_equal(da.sel(system="B"), f(da.sel(system="A")))


def test_pilot_reproduces_its_world_icc_in_expectation(pilot):
    """Over 200 data sets of the pilot's own size (198 x 5), evalci.icc's mean
    estimates match the world's sigma2_B* and sigma2_W* (unbiased), and its rho
    averages near the world's rho* (truth("icc")), not the pilot's rho: the
    resampling world counts the pilot's per-input run noise as data noise
    (PilotModel Notes)."""
    m = simulate.pilot_model(pilot, "correct", "input_id", system="system")
    R = 200
    gen = np.random.default_rng(2026)
    cols = ["sigma2_between_raw", "sigma2_within", "rho_raw"]
    est = _icc_estimates(m, gen, R, cols)  # (R, system, stat)
    mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(R)
    comp = m.components()
    between, within = comp.sigma2_between.to_numpy(), comp.sigma2_within.to_numpy()
    rho_star = np.array(list(m.truth("icc").values()))
    # unbiased components: 4 SE, false failure 6e-5 per check (4 checks)
    assert np.all(np.abs(mean[:, 0] - between) < 4 * se[:, 0])
    assert np.all(np.abs(mean[:, 1] - within) < 4 * se[:, 1])
    # rho_raw is a ratio, biased by O(1/N): measured -0.0025 (about 1 SE) at
    # this size; 4 SE + 0.005 for that bias: false failure < 6e-5 per system
    assert np.all(np.abs(mean[:, 2] - rho_star) < 4 * se[:, 2] + 0.005)
    # and the world's rho really differs from the pilot's (0.607, 0.666):
    # the gap is 0.07 = 25 SE, so this cannot fail by chance (< 1e-100)
    pilot_rho = evalci.icc(pilot, "correct", "input_id", system="system").rho_raw
    assert np.all(mean[:, 2] - pilot_rho.to_numpy() > 10 * se[:, 2])


def test_pilot_unbalanced_one_system_and_errors(pilot):
    one = pilot[pilot.system == pilot.system.iloc[0]].drop(columns="system")
    uneven = one[~((one.run == 5) & (one.index % 3 == 0))]  # some inputs: 4 runs
    m = simulate.pilot_model(uneven, "correct", "input_id")
    assert m.systems == ("A",)
    assert set(np.unique(m.n_runs_per_input)) == {4, 5}
    df = m.sample(50, 7, rng=0)
    assert len(df) == 350 and df.correct.notna().all()
    per_input = uneven.groupby("input_id").correct.mean().mean()
    assert m.truth()["A"] == pytest.approx(per_input, abs=1e-14)
    with pytest.raises(ValueError, match="same number of runs in every system"):
        bad = pilot[~((pilot.run == 5) & (pilot.system == pilot.system.iloc[0]))]
        simulate.pilot_model(bad, "correct", "input_id", system="system")
    with pytest.raises(ValueError, match="`cluster`"):
        simulate.pilot_model(pilot, "correct", ["input_id"], system="system")


def test_pilot_icc_equals_evalci_icc(pilot):
    """The closed-form pilot rho (used by match_icc) is evalci.icc's rho_raw,
    balanced and with unequal runs (k0)."""
    code = pd.factorize(pilot.input_id)[0]
    uneven = pilot[~((pilot.run >= 4) & (code % 7 < 3))]  # some inputs: 3 runs
    assert uneven.groupby("input_id").size().nunique() == 2
    for data in (pilot, uneven):
        m = simulate.pilot_model(data, "correct", "input_id", system="system")
        want = evalci.icc(data, "correct", "input_id", system="system").rho_raw
        np.testing.assert_allclose(m.pilot_icc(), want.to_numpy(), rtol=1e-12)


def test_pilot_match_icc_reproduces_the_pilots_icc(pilot):
    """match_icc=True: the world's rho is the pilot's rho exactly, its total
    variance is kept, and over 200 data sets of the pilot's size evalci.icc's
    mean estimates match the world's components and the pilot's rho."""
    plain = simulate.pilot_model(pilot, "correct", "input_id", system="system")
    m = simulate.pilot_model(
        pilot, "correct", "input_id", system="system", match_icc=True
    )
    rho_hat = evalci.icc(pilot, "correct", "input_id", system="system").rho_raw
    comp, comp0 = m.components(), plain.components()
    np.testing.assert_allclose(comp.rho, rho_hat, rtol=1e-12)
    np.testing.assert_allclose(
        comp.sigma2_between + comp.sigma2_within,
        comp0.sigma2_between + comp0.sigma2_within,
        rtol=1e-12,
    )
    assert m.truth() == plain.truth()  # the mean is untouched
    assert all(0.9 < c < 1 for c in m.mixing)
    R = 200
    gen = np.random.default_rng(7)
    cols = ["sigma2_between_raw", "sigma2_within", "rho_raw"]
    est = _icc_estimates(m, gen, R, cols)
    mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(R)
    # unbiased components: 4 SE, false failure 6e-5 per check (4 checks)
    assert np.all(np.abs(mean[:, 0] - comp.sigma2_between.to_numpy()) < 4 * se[:, 0])
    assert np.all(np.abs(mean[:, 1] - comp.sigma2_within.to_numpy()) < 4 * se[:, 1])
    # rho_raw's O(1/N) ratio bias (measured -0.0027 here): 4 SE + 0.005,
    # false failure < 6e-5 per system; the uncorrected world (rho ~0.07
    # higher, 25 SE) would fail this
    assert np.all(np.abs(mean[:, 2] - rho_hat.to_numpy()) < 4 * se[:, 2] + 0.005)
    # outcomes stay the pilot's 0/1 values
    df = m.sample(50, 3, rng=0)
    assert set(df.correct.unique()) <= {0, 1}


def test_pilot_match_icc_needs_repeated_runs(pilot):
    first = pilot[pilot.run == 1]
    simulate.pilot_model(first, "correct", "input_id", system="system")  # fine
    with pytest.raises(ValueError, match="`match_icc=True` needs"):
        simulate.pilot_model(
            first, "correct", "input_id", system="system", match_icc=True
        )


def test_confusion_model_input_forms_and_no_side_effects():
    user = np.array(CONF_B)
    m = simulate.ConfusionModel(user)
    assert user.flags.writeable  # the caller's array is not frozen
    user[0, 0] = 0.0  # and later edits do not reach the model
    assert m.truth()["A"] == simulate.true_accuracy(CONF_B)
    stacked = simulate.ConfusionModel(np.stack([CONF_B, simulate.SEED000_CONFUSION]))
    nested = simulate.ConfusionModel(CONF_B.tolist(), n_systems=2)
    assert stacked.systems == nested.systems == ("A", "B")
    assert stacked.truth()["B"] == 0.7 and nested.truth()["B"] == m.truth()["A"]
