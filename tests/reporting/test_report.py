"""Flaky inputs and the comparison report."""

import html
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import evalci

from conftest import shared_data


def test_flaky_matches_direct_computation(gpqa):
    table = gpqa.evalci.flaky("correct", cluster="input_id", by="system")
    direct = gpqa.groupby(["system", "input_id"]).correct.agg(["mean", "var", "size"])
    merged = table.set_index(["system", "input_id"]).join(direct)
    np.testing.assert_allclose(merged.pass_rate, merged["mean"])
    np.testing.assert_allclose(merged.variance, merged["var"], atol=1e-12)
    assert (merged.flaky == ((merged["mean"] > 0) & (merged["mean"] < 1))).all()
    # shares of each system's run-to-run variance add up to 1
    np.testing.assert_allclose(table.groupby("system").share.sum(), 1.0)
    # ordered within each system by share, largest first
    for _, part in table.groupby("system"):
        assert part.share.is_monotonic_decreasing


def test_flaky_share_weights_by_runs():
    # input 0: 2 runs [0, 1] (var 0.5, /2); input 1: 4 runs [0, 0, 1, 1] (var 1/3, /4)
    df = pd.DataFrame({"q": [0, 0, 1, 1, 1, 1, 2, 2], "y": [0, 1, 0, 0, 1, 1, 1, 1]})
    t = evalci.flaky(df, "y", "q")
    assert list(t.q) == [0, 1, 2]
    c0, c1 = 0.5 / 2, (1 / 3) / 4
    np.testing.assert_allclose(t.share, [c0 / (c0 + c1), c1 / (c0 + c1), 0.0])
    assert list(t.flaky) == [True, True, False]


def test_flaky_errors(gpqa):
    with pytest.raises(ValueError, match=r"`value`: column 'ok'"):
        gpqa.evalci.flaky("ok", cluster="input_id")
    with pytest.raises(ValueError, match=r"must be numeric"):
        gpqa.evalci.flaky("system", cluster="input_id")


def test_report_has_seed002_five_things(gpqa):
    rep = gpqa.evalci.report(
        "correct", cluster="input_id", mme=0.02, n_resamples=2000, rng=0
    )
    text = rep.to_text()
    assert "Inputs N = 198" in text and "k=5" in text
    assert "Minimum meaningful effect: 2.0" in text
    assert "in percentage points (0.02 = 2.0 points)" in text
    assert "Flaky inputs" in text and "Decision:" in text
    assert "excludes 0" in text and "does not clear" in text
    md = rep.to_markdown()
    assert "| system | score | interval |" in md
    assert "<table>" in rep.to_html()
    frame = rep.to_frame()
    assert list(frame.kind) == ["score", "score", "gap"]
    assert (frame.units == "points").all()
    # the report's numbers are those of the functions it is built from
    comp = gpqa.evalci.compare(
        "correct", cluster="input_id", mme=0.02, n_resamples=2000, rng=0
    )
    assert frame.estimate[2] == pytest.approx(100 * comp.table.gap[0])
    frac = gpqa.evalci.report(
        "correct",
        cluster="input_id",
        mme=0.02,
        n_resamples=2000,
        rng=0,
        units="fraction",
    ).to_frame()
    assert frac.estimate[2] == comp.table.gap[0] and frac.low[2] == comp.table.low[0]
    scores = gpqa.evalci.cluster_ci(
        "correct", cluster="input_id", by="system", n_resamples=2000, rng=0
    )
    np.testing.assert_array_equal(frac.low[:2], scores.low.to_numpy())
    # the scores and the gap come from the same draws
    np.testing.assert_array_equal(
        rep.scores.bootstrap_distribution[1] - rep.scores.bootstrap_distribution[0],
        rep.comparison.gap_distribution[0],
    )


def test_report_without_mme_asks_for_one(gpqa):
    rep = gpqa.evalci.report("correct", cluster="input_id", n_resamples=500, rng=0)
    assert "not set (set it before running the comparison)" in repr(rep)


# --- issue 8: no silent wrong answers ---------------------------------------


@pytest.fixture(scope="module")
def biology():
    """MMLU-Pro biology: 717 inputs x 4 systems, k=1 (PROVENANCE.md)."""
    df = shared_data("mmlu_pro_4sys_k1.csv")
    return df[df.category == "biology"]


def test_report_under_holm_prints_adjusted_pvalues_and_floors(biology):
    kw = dict(cluster="input_id", n_resamples=10_000, rng=0)
    rep = biology.evalci.report("correct", adjust="holm", **kw)
    t = rep.comparison.table
    text, md, page = rep.to_text(), rep.to_markdown(), rep.to_html()
    assert "p (holm-adjusted)" in text and "p (holm-adjusted)" in md
    lines = [ln for ln in text.splitlines() if ", p = " in ln]
    assert len(lines) == 6
    for line, row in zip(lines, t.itertuples(), strict=True):
        shown = line.split(", p = ")[1].split(" (")[0]
        if row.pvalue_adjusted_at_floor:
            # a bound from the 1/B floor, never printed as if exact
            assert shown == f"< {row.pvalue_adjusted:.2g}"
        else:
            assert shown == f"{row.pvalue_adjusted:.3g}"
    assert t.pvalue_adjusted_at_floor.sum() == 4  # no replicate crosses 0
    # the adjusted, not the raw, p-value (Holm doubles the second largest)
    exact = t[~t.pvalue_adjusted_at_floor]
    moved = exact[exact.pvalue_adjusted > 1.5 * exact.pvalue]
    assert len(moved) == 1
    for row in moved.itertuples():
        assert f"p = {row.pvalue_adjusted:.3g} (" in text
        assert f"p = {row.pvalue:.3g} (" not in text
    assert "= 0.0006" not in text and "< 0.0006" in text
    assert "| &lt; 0.0006 |" in md and "<td>&lt; 0.0006</td>" in page
    frame = rep.to_frame()
    gaps = frame[frame.kind == "gap"]
    assert (
        gaps.p == "< 0.0006"
    ).sum() == 4 and gaps.pvalue_adjusted_at_floor.sum() == 4
    # without an adjustment the raw floor is 1/B = 0.0001
    plain = biology.evalci.report("correct", **kw)
    assert "< 0.0001" in plain.to_text() and "= 0.0001" not in plain.to_text()


def test_report_at_k1_says_run_to_run_variation_is_not_measured(biology):
    rep = biology.evalci.report("correct", cluster="input_id", n_resamples=500, rng=0)
    text = rep.to_text()
    assert "k=1: run-to-run variation cannot be measured" in text
    assert "0 of 717" not in text and "most run-to-run variance" not in text


def test_report_from_a_counts_table_matches_the_tidy_report(gpqa):
    counts = (
        gpqa.groupby(["system", "input_id"])
        .correct.agg(n_correct="sum", n_runs="size")
        .reset_index()
    )
    kw = dict(mme=0.02, n_resamples=2000, rng=0)
    tidy = gpqa.evalci.report("correct", "input_id", **kw)
    rep = evalci.report(
        counts, cluster="input_id", successes="n_correct", trials="n_runs", **kw
    )
    a, b = tidy.to_frame(), rep.to_frame()
    cols = ["estimate", "low", "high", "pvalue"]
    np.testing.assert_allclose(a[cols].astype(float), b[cols].astype(float))
    assert tidy.to_text().splitlines()[2:] == rep.to_text().splitlines()[2:]
    assert "69 of 198" in rep.to_text()  # flaky inputs from the counts
    table = evalci.flaky(
        counts, None, "input_id", by="system", successes="n_correct", trials="n_runs"
    )
    ref = gpqa.evalci.flaky("correct", cluster="input_id", by="system")
    pd.testing.assert_frame_equal(table, ref, check_dtype=False)


def test_report_uses_one_unit(gpqa):
    kw = dict(cluster="input_id", mme=0.02, n_resamples=2000, rng=0)
    points = gpqa.evalci.report("correct", **kw).to_text()
    frac = gpqa.evalci.report("correct", units="fraction", **kw).to_text()
    # GPQA gap -0.0586 [-0.1132, -0.0040] (evalci.compare, rng=0, B=2000)
    assert "-5.9 [-11.3, -0.4]" in points and "minimum meaningful effect 2.0" in points
    assert (
        "-0.0586 [-0.1132, -0.0040]" in frac
        and "minimum meaningful effect 0.0200" in frac
    )
    assert "Minimum meaningful effect: 0.0200" in frac and "points" not in frac
    body = points.split("\n", 2)[2]  # after the header and the units line
    assert "%" not in body and "0.02" not in body
    # a significant regression larger than the mme is "worse", in both
    assert "-> worse" in points and "-> worse" in frac
    with pytest.raises(ValueError, match=r"`units` must be 'points'"):
        gpqa.evalci.report("correct", units="percent", **kw)
    sim = evalci.simulate.confusion_model(60, 2, rng=1)
    both = pd.concat([sim.assign(system="a"), sim.assign(system="b", pred=sim.label)])
    with pytest.raises(ValueError, match=r"`units`='points' .* units='fraction'"):
        both.evalci.report(
            "pred",
            "input_id",
            metric=evalci.metrics.kappa(truth="label"),
            units="points",
            n_resamples=200,
        )


def test_report_errors_name_the_argument(gpqa):
    for bad in ("0.02", np.nan, np.inf, -0.02):
        with pytest.raises(ValueError, match=r"^`mme` \(minimum meaningful effect\)"):
            gpqa.evalci.report("correct", cluster="input_id", mme=bad)
    # a list of cluster columns, as compare takes
    kw = dict(mme=0.02, n_resamples=500, rng=0)
    listed = gpqa.evalci.report("correct", cluster=["input_id"], **kw)
    single = gpqa.evalci.report("correct", cluster="input_id", **kw)
    assert listed.to_text() == single.to_text()


def test_report_escapes_names_in_markdown_and_html():
    rng = np.random.default_rng(3)
    n, k = 40, 3
    evil = "<script>alert(1)</script>|x"
    df = pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(np.arange(n), k), 2),
            "system": [evil] * (n * k) + ["B"] * (n * k),
            "correct": (rng.random(2 * n * k) < 0.6).astype(int),
        }
    )
    mean = evalci.metrics.get_metric("mean")
    metric = evalci.Metric("a|*b*", statistics=mean.statistics, finalize=mean.finalize)
    rep = df.evalci.report(
        "correct", "input_id", metric=metric, mme=0.05, n_resamples=300, rng=0
    )
    md, page = rep.to_markdown(), rep.to_html()
    for out in (md, page, rep.comparison._repr_html_()):
        assert "<script>" not in out
    assert html.escape(evil) in page and html.escape("a|*b*") in page
    assert r"&lt;script&gt;alert(1)&lt;/script&gt;\|x" in md
    assert r"a\|\*b\*" in md
    # every table row keeps its number of cells (unescaped pipes only)
    for line in md.splitlines():
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line)[1:-1]
            assert len(cells) in (3, 5), line


def test_flaky_and_report_refuse_inf(gpqa):
    bad = gpqa.assign(correct=gpqa.correct.astype(float))
    bad.loc[3, "correct"] = np.inf
    with pytest.raises(ValueError, match=r"`value` column 'correct' has 1 infinite"):
        bad.evalci.flaky("correct", cluster="input_id", by="system")
    with pytest.raises(ValueError, match=r"`value` column 'correct' has 1 infinite"):
        bad.evalci.report("correct", cluster="input_id", n_resamples=100)
    counts = pd.DataFrame({"q": [1, 2], "s": [1.0, np.inf], "n": [2.0, 2.0]})
    with pytest.raises(ValueError, match=r"`successes/trials` column 's' has 1"):
        evalci.flaky(counts, None, "q", successes="s", trials="n")


def test_report_warnings_point_at_the_callers_line(gpqa):
    holes = gpqa[~((gpqa.system == gpqa.system.iloc[0]) & (gpqa.input_id < "recB"))]
    kw = dict(cluster="input_id", missing="drop", n_resamples=100, rng=0)
    for call in (
        lambda: holes.evalci.report("correct", **kw),
        lambda: evalci.report(holes, "correct", **kw),
    ):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            rep = call()
        assert len(w) == 1 and w[0].category is evalci.MissingInputsWarning
        assert w[0].filename == __file__
    assert rep.n_inputs == rep.comparison.table.n_inputs[0] < 198


def test_report_does_not_claim_equivalence_from_a_zero_width_interval():
    # both systems right on every input: the bootstrap gap is [0, 0]; the
    # exact bound 1 - 0.025**(1/n) (Clopper-Pearson, 0 differing of n) is
    # 0.1157 for n = 30 (> mme: inconclusive), 0.0183 for n = 200 (< 0.02)
    for n, decision in [(30, "inconclusive"), (200, "equivalent within ±mme")]:
        ids = np.arange(n)
        df = pd.DataFrame(
            {
                "input_id": np.r_[ids, ids],
                "system": ["A"] * n + ["B"] * n,
                "correct": np.ones(2 * n, int),
            }
        )
        # the gap's warning (and core's, for each 100% score)
        with pytest.warns(evalci.DegenerateDataWarning) as rec:
            rep = df.evalci.report("correct", "input_id", mme=0.02, n_resamples=300)
        assert any("gap B - A has no spread" in str(w.message) for w in rec)
        text = rep.to_text()
        assert f"-> {decision}:" in text and "zero width" in text
        bound = 100 * (1 - 0.025 ** (1 / n))
        assert f"[{-bound:+.1f}, {bound:+.1f}]" in text
