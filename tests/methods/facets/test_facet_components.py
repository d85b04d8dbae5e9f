"""Variance components per facet (the G-study) against independent references:
closed-form ANOVA estimators computed here by hand (Brennan 2001, Table 3.2
for the two-facet crossed design; the expected mean squares of a p x i
design with replications) and statsmodels' MixedLM (REML) on unbalanced
designs."""

import numpy as np
import pandas as pd
import pytest
from facet_tables import crossed

import evalci
from evalci.methods.facets import cells_of
from evalci.methods.facets.components import fit_group


def hand_two_way(df):
    """sigma2 of input, template, input:template, residual by the EMS equations."""
    n, t = df.input.nunique(), df.template.nunique()
    r = len(df) // (n * t)
    grand = df.y.mean()
    mi = df.groupby("input").y.mean()
    mt = df.groupby("template").y.mean()
    cell = df.groupby(["input", "template"]).y.mean()
    ms_i = t * r * ((mi - grand) ** 2).sum() / (n - 1)
    ms_t = n * r * ((mt - grand) ** 2).sum() / (t - 1)
    inter = cell - mi.reindex(cell.index, level=0).values \
        - mt.reindex(cell.index, level=1).values + grand
    ms_it = r * (inter**2).sum() / ((n - 1) * (t - 1))
    resid = df.y - cell.reindex(pd.MultiIndex.from_frame(df[["input", "template"]])).values
    ms_e = (resid**2).sum() / (n * t * (r - 1))
    return {
        "input": (ms_i - ms_it) / (t * r),
        "template": (ms_t - ms_it) / (n * r),
        "input:template": (ms_it - ms_e) / r,
        "residual": ms_e,
    }


def test_balanced_two_way_equals_hand_anova():
    df = crossed(n=30, t=5, r=3)
    g = evalci.g_study(df, "y", "input", "template")
    assert g.estimator == "anova"
    want = hand_two_way(df)
    got = g.components["raw"]
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-10, abs=1e-12)
    assert g.estimate == pytest.approx(df.y.mean(), rel=1e-12)
    # Var(mean) = s_i/N + s_t/T + s_it/(NT) + s_e/(NTr) with the truncated components
    s = g.components["variance"]
    var = s["input"] / 30 + s["template"] / 5 + s["input:template"] / 150 + s["residual"] / 450
    assert g.mean_variance == pytest.approx(var, rel=1e-12)


def test_one_run_per_cell_merges_the_top_interaction_into_the_residual():
    df = crossed(n=20, t=4, r=1)
    g = evalci.g_study(df, "y", "input", "template")
    assert list(g.components.index) == ["input", "template", "residual"]
    n, t = 20, 4
    grand = df.y.mean()
    mi, mt = df.groupby("input").y.mean(), df.groupby("template").y.mean()
    ms_i = t * ((mi - grand) ** 2).sum() / (n - 1)
    ms_t = n * ((mt - grand) ** 2).sum() / (t - 1)
    res = df.y - mi[df.input].values - mt[df.template].values + grand
    ms_res = (res**2).sum() / ((n - 1) * (t - 1))
    raw = g.components["raw"]
    assert raw["input"] == pytest.approx((ms_i - ms_res) / t, rel=1e-10)
    assert raw["template"] == pytest.approx((ms_t - ms_res) / n, rel=1e-10)
    assert raw["residual"] == pytest.approx(ms_res, rel=1e-10)


def test_three_facets_balanced_match_a_brute_force_ems_solution():
    """input x template x judge, 2 runs: the EMS system solved by least squares
    on mean squares computed from explicit effect arrays."""
    df = crossed(n=12, t=4, j=3, r=2, seed=3)
    g = evalci.g_study(df, "y", "input", ["template", "judge"])
    arr = df.sort_values(["input", "template", "judge", "run"]).y.to_numpy().reshape(12, 4, 3, 2)
    m = arr.mean(axis=3)
    dims = {"input": 0, "template": 1, "judge": 2}
    sizes = m.shape
    names = list(g.components.index[:-1])
    ms, coef = [], []
    for name in names:
        eff = [dims[d] for d in name.split(":")]
        # effect array by explicit inclusion-exclusion over subsets
        from itertools import combinations
        term = np.zeros_like(m)
        for k in range(len(eff) + 1):
            for sub in combinations(eff, k):
                rest = tuple(d for d in range(3) if d not in sub)
                term += (-1) ** (len(eff) - k) * m.mean(axis=rest, keepdims=True)
        df_e = np.prod([sizes[d] - 1 for d in eff])
        ms.append(2 * (term**2).sum() / df_e)
        row = []
        for other in names:
            oeff = [dims[d] for d in other.split(":")]
            row.append(2 * np.prod([sizes[d] for d in range(3) if d not in oeff])
                       if set(eff) <= set(oeff) else 0.0)
        coef.append([*row, 1.0])
    ms.append(((arr - m[..., None]) ** 2).sum() / (m.size * 1))
    coef.append([0.0] * len(names) + [1.0])
    want = np.linalg.solve(np.array(coef), np.array(ms))
    np.testing.assert_allclose(g.components["raw"].to_numpy(), want, rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_unbalanced_equals_statsmodels_reml():
    sm = pytest.importorskip("statsmodels.api")
    df = crossed(n=25, t=4, r=2, seed=5)
    df = df.sample(frac=0.8, random_state=1).reset_index(drop=True)  # empty cells, uneven runs
    g = evalci.g_study(df, "y", "input", "template")
    assert g.estimator == "reml" and g.n_empty_cells > 0
    df["it"] = df.input.astype(str) + "_" + df.template.astype(str)
    model = sm.MixedLM.from_formula(
        "y ~ 1", groups=np.ones(len(df)), re_formula="0",
        vc_formula={"a_input": "0 + C(input)", "b_template": "0 + C(template)",
                    "c_it": "0 + C(it)"}, data=df)
    fit = model.fit(reml=True, method=["lbfgs"])
    ref = dict(zip(["input", "template", "input:template"], fit.vcomp, strict=True))
    ref["residual"] = fit.scale
    got = g.components["variance"]
    for name, value in ref.items():
        assert got[name] == pytest.approx(value, rel=2e-3, abs=2e-4), name


def test_components_intervals_cover_the_estimate_and_shares_sum_to_one():
    g = evalci.g_study(crossed(seed=7), "y", "input", "template")
    c = g.components
    assert (c["low"] <= c["variance"]).all() and (c["variance"] <= c["high"]).all()
    assert c["share"].sum() == pytest.approx(1.0)
    assert c["share_of_mean"].sum() == pytest.approx(1.0)


def test_groups_are_fitted_apart():
    one = crossed(seed=1).assign(system="a")
    two = crossed(seed=2).assign(system="b", y=lambda d: 2 * d.y)
    g = evalci.g_study(pd.concat([one, two]), "y", "input", "template", by="system")
    a = evalci.g_study(one, "y", "input", "template")
    pd.testing.assert_series_equal(g.components.loc["a", "variance"],
                                   a.components["variance"], check_names=False)
    assert g.estimate["b"] == pytest.approx(two.y.mean(), rel=1e-12)


def test_fit_group_weights_match_the_design():
    cells = cells_of(crossed(n=10, t=3, r=2), "y", "input", "template")
    fit = fit_group(cells, 0)
    np.testing.assert_allclose(fit.weight, [1 / 10, 1 / 3, 1 / 30, 1 / 60])
