"""REML variance components of crossed random effects.

References: statsmodels' ``MixedLM`` fitted by REML (crossed effects as
variance components of one group), the closed-form ANOVA (expected mean
squares) estimates of a balanced design, and the REML formulas written with
the ``n``-square covariance matrix on a small design.
"""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from evalci.methods.facets.reml import RemlFit, reml

RTOL, ATOL = 1e-3, 1e-5


def crossed(seed, n_inputs=40, n_templates=6, sd=(1.0, 0.5, 0.4, 0.7), missing=0.2):
    """Inputs x templates with ``missing`` of the cells empty, 1-3 runs a cell."""
    rng = np.random.default_rng(seed)
    cells = [
        (i, t)
        for i in range(n_inputs)
        for t in range(n_templates)
        if rng.random() >= missing
    ]
    rows = np.repeat(np.array(cells), rng.integers(1, 4, len(cells)), axis=0)
    i, t = rows[:, 0], rows[:, 1]
    it = i * n_templates + t
    y = (
        0.6
        + rng.normal(0, sd[0], n_inputs)[i]
        + rng.normal(0, sd[1], n_templates)[t]
        + rng.normal(0, sd[2], n_inputs * n_templates)[it]
        + rng.normal(0, sd[3], len(i))
    )
    return pd.DataFrame({"y": y, "input": i, "template": t, "it": it})


def statsmodels_reml(df, names, formula="y ~ 1"):
    """statsmodels' REML fit: variances in ``names`` order, residual last.

    Nelder-Mead, then L-BFGS from its end point: L-BFGS alone stops short of
    the optimum on some of these designs (on the boundary case by 0.6 in the
    log-likelihood, with the input variance 0.76 instead of 0.96).
    """
    vc = {name: f"0 + C({name})" for name in names}
    model = sm.MixedLM.from_formula(
        formula, groups=np.ones(len(df)), vc_formula=vc, re_formula="0", data=df
    )
    res = model.fit(reml=True, method=["nm", "lbfgs"])
    assert res.converged
    order = sorted(names)  # vcomp follows the sorted keys of vc_formula
    var = [res.vcomp[order.index(name)] for name in names]
    return np.append(var, res.scale), res


def ours(df, names, X=None):
    return reml(df["y"].to_numpy(), {k: df[k].to_numpy() for k in names}, X)


@pytest.mark.parametrize("seed", [0, 1])
def test_unbalanced_two_way_matches_statsmodels(seed):
    df = crossed(seed)
    names = ("input", "template", "it")
    fit = ours(df, names)
    var, res = statsmodels_reml(df, names)
    assert isinstance(fit, RemlFit) and fit.converged
    assert fit.names == (*names, "residual")
    np.testing.assert_allclose(fit.variances, var, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(fit.fixed, res.fe_params, rtol=1e-5)
    se = np.sqrt(fit.fixed_cov[0, 0])
    np.testing.assert_allclose(se, res.bse["Intercept"], rtol=RTOL)
    assert fit.loglik == pytest.approx(res.llf, abs=1e-6)
    assert np.all(np.isfinite(fit.variance_cov))


def test_three_facets_match_statsmodels():
    rng = np.random.default_rng(7)
    n = 900
    df = pd.DataFrame(
        {"input": rng.integers(0, 60, n), "template": rng.integers(0, 5, n)}
    )
    df["judge"] = rng.integers(0, 4, n)
    df["y"] = (
        rng.normal(0, 1.0, 60)[df["input"]]
        + rng.normal(0, 0.6, 5)[df["template"]]
        + rng.normal(0, 0.5, 4)[df["judge"]]
        + rng.normal(0, 0.8, n)
    )
    names = ("input", "template", "judge")
    fit = ours(df, names)
    var, res = statsmodels_reml(df, names)
    np.testing.assert_allclose(fit.variances, var, rtol=RTOL, atol=ATOL)
    se = np.sqrt(fit.fixed_cov[0, 0])
    np.testing.assert_allclose(se, res.bse["Intercept"], rtol=RTOL)
    assert fit.loglik == pytest.approx(res.llf, abs=1e-6)


def test_covariate_in_X_matches_statsmodels():
    df = crossed(3, n_inputs=25)  # statsmodels takes seconds on these
    df["x"] = np.random.default_rng(3).normal(size=len(df))
    df["y"] += 0.3 * df["x"]
    names = ("input", "template", "it")
    X = np.column_stack([np.ones(len(df)), df["x"]])
    fit = ours(df, names, X)
    var, res = statsmodels_reml(df, names, "y ~ x")
    np.testing.assert_allclose(fit.variances, var, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(fit.fixed, res.fe_params, rtol=1e-4)
    se = np.sqrt(np.diag(fit.fixed_cov))
    # statsmodels inverts the observed information of the fixed effects and
    # the variances jointly; fixed_cov is (X'V^-1 X)^-1 (expected, block
    # diagonal), so the slope's standard errors differ by ~0.2% here
    np.testing.assert_allclose(se, res.bse[["Intercept", "x"]], rtol=5e-3)
    assert se[0] == pytest.approx(res.bse["Intercept"], rel=RTOL)
    assert fit.loglik == pytest.approx(res.llf, abs=1e-6)


def anova(df, n_inputs, n_templates, runs):
    """Two-way balanced ANOVA: the mean squares and their degrees of freedom."""
    y = df.sort_values(["input", "template"])["y"].to_numpy()
    y = y.reshape(n_inputs, n_templates, runs)
    grand, cell = y.mean(), y.mean(axis=2)
    mi, mt = y.mean(axis=(1, 2)), y.mean(axis=(0, 2))
    ss = np.array(
        [
            n_templates * runs * np.sum((mi - grand) ** 2),
            n_inputs * runs * np.sum((mt - grand) ** 2),
            runs * np.sum((cell - mi[:, None] - mt[None, :] + grand) ** 2),
            np.sum((y - cell[..., None]) ** 2),
        ]
    )
    dof = np.array(
        [
            n_inputs - 1,
            n_templates - 1,
            (n_inputs - 1) * (n_templates - 1),
            n_inputs * n_templates * (runs - 1),
        ]
    )
    return ss / dof, dof


def test_balanced_equals_anova_estimates_and_their_variances():
    N, T, r = 30, 5, 3
    df = crossed(11, N, T, missing=0.0)
    df = df.groupby(["input", "template"]).head(1)  # then exactly r runs a cell
    df = df.loc[df.index.repeat(r)].reset_index(drop=True)
    df["y"] += np.random.default_rng(12).normal(0, 0.7, len(df))
    ms, dof = anova(df, N, T, r)
    # sigma2 = A @ MS (expected mean squares solved)
    A = np.array(
        [
            [1, 0, -1, 0],
            [0, 1, -1, 0],
            [0, 0, 1, -1],
            [0, 0, 0, r],
        ]
    ) / np.array([[T * r], [N * r], [r], [r]])
    expected = A @ ms
    assert np.all(expected > 0)
    fit = ours(df, ("input", "template", "it"))
    np.testing.assert_allclose(fit.variances, expected, rtol=1e-6)
    # mean squares are independent scaled chi-squares: var(MS) = 2 MS^2 / dof
    cov = A @ np.diag(2 * ms**2 / dof) @ A.T
    np.testing.assert_allclose(fit.variance_cov, cov, rtol=1e-5, atol=1e-12)
    # balanced: var(grand mean) = (EMS_input + EMS_template - EMS_it) / (N T r)
    grand = (ms[0] + ms[1] - ms[2]) / (N * T * r)
    assert fit.fixed_cov[0, 0] == pytest.approx(grand, rel=1e-6)


def test_boundary_template_variance_is_zero():
    df = crossed(5, n_templates=4, sd=(1.0, 0.0, 0.4, 0.7))
    names = ("input", "template", "it")
    fit = ours(df, names)
    var, _ = statsmodels_reml(df, names)
    assert fit.converged
    assert fit.variances[1] == 0.0
    assert var[1] < ATOL
    np.testing.assert_allclose(fit.variances, var, rtol=RTOL, atol=ATOL)
    assert np.all(np.isnan(fit.variance_cov[1])) and np.all(
        np.isnan(fit.variance_cov[:, 1])
    )
    keep = [0, 2, 3]
    assert np.all(np.isfinite(fit.variance_cov[np.ix_(keep, keep)]))


def test_loglik_differences_match_statsmodels():
    df = crossed(8, n_inputs=25)
    full, reduced = ("input", "template", "it"), ("input", "template")
    ours_diff = ours(df, full).loglik - ours(df, reduced).loglik
    sm_diff = statsmodels_reml(df, full)[1].llf - statsmodels_reml(df, reduced)[1].llf
    assert ours_diff == pytest.approx(sm_diff, abs=1e-6)


def test_dense_formulas_on_a_small_design():
    """loglik, (X'V^-1 X)^-1 and the Fisher information from V itself."""
    df = crossed(4, n_inputs=12, n_templates=4)
    names = ("input", "template", "it")
    fit = ours(df, names)
    y, n = df["y"].to_numpy(), len(df)
    Z = [
        np.equal.outer(df[k].to_numpy(), np.unique(df[k])).astype(float) for k in names
    ]
    dV = [z @ z.T for z in Z] + [np.eye(n)]
    V = sum(v * d for v, d in zip(fit.variances, dV, strict=True))
    Vi = np.linalg.inv(V)
    xvx = Vi.sum()
    P = Vi - np.outer(Vi.sum(axis=1), Vi.sum(axis=0)) / xvx
    loglik = -0.5 * (
        np.linalg.slogdet(V)[1] + np.log(xvx) + y @ P @ y + (n - 1) * np.log(2 * np.pi)
    )
    assert fit.loglik == pytest.approx(loglik, abs=1e-8)
    assert fit.fixed_cov[0, 0] == pytest.approx(1 / xvx, rel=1e-8)
    assert fit.fixed[0] == pytest.approx(Vi.sum(axis=0) @ y / xvx, rel=1e-8)
    keep = np.flatnonzero(fit.variances > 0)  # here the interaction's is 0
    dV = [dV[k] for k in keep]
    info = 0.5 * np.array([[np.sum((P @ a) * (P @ b).T) for b in dV] for a in dV])
    cov = fit.variance_cov[np.ix_(keep, keep)]
    np.testing.assert_allclose(cov, np.linalg.inv(info), rtol=1e-6)
    assert np.isnan(fit.variance_cov).sum() == (2 * 4 - 1) * (4 - len(keep))


def test_unused_codes_and_arbitrary_labels_change_nothing():
    df = crossed(6)
    names = ("input", "template", "it")
    fit = ours(df, names)
    sparse = reml(df["y"], {k: 7 * df[k].to_numpy() + 100 for k in names})
    np.testing.assert_allclose(sparse.variances, fit.variances, rtol=1e-8)


@pytest.mark.parametrize(
    "y, effects",
    [
        ([1.0, np.nan, 2.0], {"a": [0, 1, 0]}),
        ([1.0, 2.0, 3.0], {}),
        ([1.0, 2.0, 3.0], {"a": [0, 1]}),
        ([1.0, 2.0, 3.0], {"a": [0.0, 1.0, 0.0]}),
    ],
)
def test_bad_arguments_raise(y, effects):
    with pytest.raises(ValueError):
        reml(y, effects)
