"""The D-study planner against a brute-force search over every design of a
grid (inputs included), on the same variance components."""

import numpy as np
import pytest
from facet_tables import crossed

import evalci


def brute(study, costs, dims, width=None, budget=None, max_levels=6, max_inputs=400):
    """Every design up to the bounds, evaluated at once: the cheapest reaching
    ``width``, or the narrowest within ``budget``."""
    var = study.components["variance"]
    z = 1.959963984540054
    axes = [np.arange(2, max_inputs + 1)] + [np.arange(1, max_levels + 1)] * len(dims)
    grid = dict(zip([*dims, "run"], np.meshgrid(*axes, indexing="ij"), strict=True))
    v = 0.0
    for name, s2 in var.items():
        parts = [*dims, "run"] if name == "residual" else name.split(":")
        v = v + s2 / np.prod([grid[d] for d in parts], axis=0)
    w = 2 * z * np.sqrt(v)
    cost = sum(costs.get(d, 0) * grid[d] for d in dims) + costs["run"] * np.prod(
        list(grid.values()), axis=0)
    ok = w <= width if width is not None else cost <= budget
    first, second = (cost, w) if width is not None else (w, cost)
    order = np.lexsort((second[ok], first[ok]))[0]
    pick = {d: int(g[ok][order]) for d, g in grid.items()}
    return (first[ok][order], second[ok][order]), pick


@pytest.mark.parametrize("goal", [{"target_width": 0.9}, {"budget": 600.0}])
def test_planner_optimum_equals_brute_force(goal):
    df = crossed(n=20, t=4, j=3, r=2, sd=(1.0, 0.5, 0.4, 0.5, 1.0), seed=12)
    g = evalci.g_study(df, "y", "input", ["template", "judge"])
    costs = {"input": 1.0, "template": 15.0, "judge": 25.0, "run": 0.05}
    plan = evalci.plan_facets(g, costs=costs, max_levels=6, **goal)
    key, design = brute(g, costs, ["input", "template", "judge"], max_levels=6,
                        width=goal.get("target_width"), budget=goal.get("budget"))
    if "budget" in goal:
        assert plan.width == pytest.approx(key[0], rel=1e-12)
        assert plan.cost <= goal["budget"]
    else:
        assert plan.cost == pytest.approx(key[0], rel=1e-12)
        assert plan.width <= goal["target_width"]
    assert plan.design == design


def test_plan_says_where_to_spend():
    df = crossed(n=40, t=3, r=2, sd=(1.0, 0.8, 0.2, 0.3, 1.0), seed=13)
    g = evalci.g_study(df, "y", "input", "template")
    plan = evalci.plan_facets(g, costs={"input": 1.0, "template": 5.0, "run": 0.01},
                              target_width=0.8)
    assert plan.spend_on == "template"  # templates dominate the mean's variance
    assert plan.design["template"] > 3
    assert plan.contributions["share"].sum() == pytest.approx(1.0)
    assert "spend on 'template'" in repr(plan)
    fixed = evalci.plan_facets(g, costs={"input": 1.0, "template": 5.0, "run": 0.01},
                               target_width=1.2, fixed={"template": 3})
    assert fixed.design["template"] == 3


def test_plan_from_data_with_facets_is_plan_facets():
    df = crossed(n=30, t=4, r=2, seed=14)
    costs = {"input": 1.0, "template": 5.0, "run": 0.01}
    a = evalci.plan_from_data(df, "y", "input", facets="template", costs=costs,
                              target_width=1.0)
    b = evalci.plan_facets(evalci.g_study(df, "y", "input", "template"), costs=costs,
                           target_width=1.0)
    assert a.design == b.design and a.cost == b.cost


def test_plan_refuses_what_it_cannot_do():
    g = evalci.g_study(crossed(n=10, t=3), "y", "input", "template")
    with pytest.raises(ValueError, match="exactly one"):
        evalci.plan_facets(g, costs={"run": 1.0})
    with pytest.raises(ValueError, match="not a dimension"):
        evalci.plan_facets(g, costs={"judge": 1.0, "run": 1.0}, budget=10)
    with pytest.raises(ValueError, match="no design"):
        evalci.plan_facets(g, costs={"run": 1.0}, target_width=1e-6, max_levels=2)
    with pytest.raises(TypeError, match="GStudy"):
        evalci.plan_facets({"input": 1.0}, costs={"run": 1.0}, budget=10)
