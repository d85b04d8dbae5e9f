"""Plots: each drawn where the numbers say, readable at 2, 16 and 31 rows.

References: the result objects' own numbers (estimates, ends, decisions),
``evalci.predict_width`` at ``evalci.icc``'s components for the width
curve (a different route from the table's width factor), and the rendered
PNG (non-empty, not one flat colour).
"""

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import evalci  # noqa: E402
from evalci import plotting  # noqa: E402
from evalci._base.figures import DECISION_STYLE  # noqa: E402

from conftest import shared_data  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def swe():
    """SWE-bench Lite: 300 inputs x 16 systems, k=1 (PROVENANCE.md)."""
    return shared_data("swebench_lite_k1_clustered.csv")


@pytest.fixture(scope="module")
def crux():
    """CRUXEval-output: 800 inputs x 31 systems x 10 runs, counts (PROVENANCE.md)."""
    return shared_data("cruxeval_output_T0.2_counts.csv")


@pytest.fixture(scope="module")
def swe_scores(swe):
    return swe.evalci.cluster_ci(
        "correct", "input_id", by="system", n_resamples=200, rng=0
    )


def png(ax) -> np.ndarray:
    """The figure rendered to PNG in memory, read back as pixels."""
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png")
    assert buf.tell() > 5_000  # a real picture, not an empty canvas
    buf.seek(0)
    pixels = mpimg.imread(buf)
    assert pixels.std() > 0.01  # not one flat colour
    return pixels


def rows(ax) -> dict:
    """{label: (x of the marker, left end, right end)} read back from the Axes."""
    labels = {round(t.get_position()[1]): t.get_text() for t in ax.get_yticklabels()}
    markers = [ln for ln in ax.lines if ln.get_marker() not in ("None", None, "")]
    segments = ax.collections  # one LineCollection of intervals per marker line
    assert len(markers) == len(segments)
    out = {}
    for marker, bars in zip(markers, segments, strict=True):
        for x, y, seg in zip(
            marker.get_xdata(), marker.get_ydata(), bars.get_segments(), strict=True
        ):
            assert seg[0][1] == seg[1][1] == y  # the segment is on its marker's row
            out[labels[round(y)]] = (x, seg[0][0], seg[1][0])
    return out


def top_to_bottom(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()][::-1]


def test_forest_draws_each_group_where_its_numbers_are(swe_scores):
    ax = plotting.intervals(swe_scores)
    png(ax)
    assert len(ax.get_yticklabels()) == 16
    drawn = rows(ax)
    frame = swe_scores.to_frame().set_index("system")
    for name, (x, lo, hi) in drawn.items():
        assert (x, lo, hi) == pytest.approx(
            tuple(frame.loc[name, ["estimate", "low", "high"]])
        )
    # sorted by estimate, best at the top (pandas' sort as the reference)
    expected = frame.estimate.sort_values(ascending=False, kind="stable").index
    assert top_to_bottom(ax) == list(expected)
    # sort=False keeps the result's order, first group at the top
    kept = plotting.intervals(swe_scores, sort=False)
    assert top_to_bottom(kept) == list(swe_scores.groups)
    assert top_to_bottom(kept) != top_to_bottom(ax)  # the data are not pre-sorted


def test_result_plot_forwards_to_the_function(gpqa, swe_scores):
    ax = swe_scores.plot()
    assert top_to_bottom(ax) == top_to_bottom(plotting.intervals(swe_scores))
    assert top_to_bottom(swe_scores.plot(sort=False)) == list(swe_scores.groups)
    comp = gpqa.evalci.compare("correct", "input_id", mme=0.02, n_resamples=300, rng=0)
    assert top_to_bottom(comp.plot()) == top_to_bottom(plotting.gaps(comp))
    one = gpqa[gpqa.system == gpqa.system.iloc[0]].evalci.cluster_ci(
        "correct", "input_id", n_resamples=100, rng=0
    )
    assert [t.get_text() for t in one.plot().get_yticklabels()] == ["mean"]


def _overlaps(ax) -> int:
    """How many pairs of neighbouring y tick labels overlap once drawn."""
    ax.figure.canvas.draw()
    boxes = sorted(
        (t.get_window_extent() for t in ax.get_yticklabels()), key=lambda b: b.y0
    )
    return sum(a.y1 > b.y0 + 0.5 for a, b in zip(boxes, boxes[1:], strict=False))


def test_figure_grows_with_the_rows_and_labels_never_overlap(gpqa, swe_scores, crux):
    few = gpqa.evalci.cluster_ci("correct", "input_id", by="system", n_resamples=100)
    many = crux.evalci.cluster_ci(
        None,
        "input_id",
        by="system",
        successes="n_correct",
        trials="n_runs",
        n_resamples=100,
        rng=0,
    )
    axes = [plotting.intervals(r) for r in (few, swe_scores, many)]
    assert [len(a.get_yticklabels()) for a in axes] == [2, 16, 31]
    heights = [a.figure.get_figheight() for a in axes]
    assert heights[0] < heights[1] < heights[2]
    assert [_overlaps(a) for a in axes] == [0, 0, 0]
    png(axes[2])
    # the check can fail: 31 rows squeezed into a fixed 4-inch figure overlap
    squeezed = plt.subplots(figsize=(6.4, 4))[1]
    assert _overlaps(plotting.intervals(many, ax=squeezed)) > 0


def test_gaps_zero_line_mme_band_and_colour_by_decision(swe):
    comp = swe.evalci.compare(
        "correct", "input_id", baseline="20241028_agentless-1.5_gpt4o", mme=0.02,
        n_resamples=300, rng=0,
    )  # fmt: skip
    ax = plotting.gaps(comp)
    png(ax)
    assert len(ax.get_yticklabels()) == 15  # one row per pair
    assert any(np.allclose(line.get_xdata(), 0) for line in ax.lines)
    (band,) = ax.patches  # the ±mme band, and nothing else
    assert band.get_x() == pytest.approx(-0.02)
    assert band.get_x() + band.get_width() == pytest.approx(0.02)
    # sorted by gap, the largest at the top
    t = comp.table.assign(
        label=[f"{b} - {a}" for a, b in zip(comp.table.a, comp.table.b, strict=True)]
    )
    want = t.sort_values("gap", ascending=False, kind="stable").label
    assert top_to_bottom(ax) == list(want)
    # each decision in its own colour, each pair in its decision's colour
    decisions = t.set_index("label").decision
    assert decisions.nunique() == 3  # better, worse, inconclusive: colour can be wrong
    legend = [x.get_text() for x in ax.get_legend().get_texts()]
    assert set(decisions) <= set(legend)
    labels = {round(tk.get_position()[1]): tk.get_text() for tk in ax.get_yticklabels()}
    markers = [ln for ln in ax.lines if ln.get_marker() not in ("None", None, "")]
    assert sorted(m.get_label() for m in markers) == sorted(set(decisions))
    for marker, bars in zip(markers, ax.collections, strict=True):
        colour, shape = DECISION_STYLE[marker.get_label()]
        assert marker.get_marker() == shape
        assert matplotlib.colors.same_color(marker.get_color(), colour)
        assert matplotlib.colors.same_color(bars.get_color(), colour)
        for y in marker.get_ydata():
            assert decisions[labels[round(y)]] == marker.get_label()
    drawn = rows(ax)
    for row in t.itertuples():
        assert drawn[row.label] == pytest.approx((row.gap, row.low, row.high))


def test_an_estimate_outside_its_interval_is_drawn_as_it_is():
    # an exact bound or BCa can leave the estimate outside [low, high];
    # errorbar would refuse (negative error), the plot must not
    ax = plotting.forest(["a", "b"], [0.5, 0.2], [0.6, 0.1], [0.7, 0.3])
    assert rows(ax) == {"a": (0.5, 0.6, 0.7), "b": (0.2, 0.1, 0.3)}


def test_gaps_without_mme_have_no_band(gpqa):
    comp = gpqa.evalci.compare("correct", "input_id", n_resamples=200, rng=0)
    ax = plotting.gaps(comp)
    assert len(ax.patches) == 0 and len(ax.get_yticklabels()) == 1


def test_width_curve_is_the_predicted_width_and_points_are_observed(crux):
    two = crux[crux.system.isin(["codellama-34b", "codellama-34b+cot"])]
    kw = dict(successes="n_correct", trials="n_runs")
    tab = evalci.width_table(
        two, cluster="input_id", by="system", ks=[1, 2, 3, 5, 10],
        observed=True, n_resamples=300, rng=0, **kw,
    )  # fmt: skip
    ax = plotting.widths(tab)
    png(ax)
    assert ax.get_xlabel() == "runs per input k"
    assert ax.get_ylabel() == "interval width"
    est = evalci.icc(two, cluster="input_id", system="system", **kw)
    est = est.set_index("system")
    curves = [
        ln for ln in ax.lines if ln.get_linestyle() == "-" and len(ln.get_xdata())
    ]
    points = [ln for ln in ax.lines if ln.get_marker() == "o" and len(ln.get_xdata())]
    assert len(curves) == 2 and len(points) == 2
    for curve, dots, (name, part) in zip(
        curves, points, tab.groupby("system", sort=False), strict=True
    ):
        assert curve.get_label() == name
        k = curve.get_xdata()
        assert k.min() == 1 and k.max() == 10
        comp = est.loc[name]
        want = evalci.predict_width(
            comp.sigma2_between, comp.sigma2_within, comp.n_inputs, k
        )
        np.testing.assert_allclose(curve.get_ydata(), want, rtol=1e-12)
        np.testing.assert_array_equal(dots.get_xdata(), part.k)
        np.testing.assert_array_equal(dots.get_ydata(), part.observed_width)
    rel = plotting.widths(tab, y="factor")
    assert rel.get_ylabel() == "width relative to k = 1"
    assert [ln.get_ydata()[0] for ln in rel.lines if len(ln.get_xdata()) == 200] == [
        pytest.approx(1.0)
    ] * 2
    # a predicted-only table has curves and no observed points
    bare = plotting.widths(tab.drop(columns=["observed_width", "observed_factor"]))
    assert not [
        ln for ln in bare.lines if ln.get_marker() == "o" and len(ln.get_xdata())
    ]


def test_distribution_marks_the_estimate_and_interval(gpqa):
    res = gpqa.evalci.cluster_ci(
        "correct", "input_id", by="system", n_resamples=400, rng=0
    )
    name = res.groups[1]
    ax = plotting.distribution(res, name)
    png(ax)
    est, lo, hi = (ln.get_xdata()[0] for ln in ax.lines)
    assert (est, lo, hi) == (res.estimate[name], res.low[name], res.high[name])
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == 400  # every replicate of that group, once
    counts, _ = np.histogram(res.bootstrap_distribution[1], bins="auto")
    assert heights == list(counts)
    single = gpqa[gpqa.system == name].evalci.cluster_ci(
        "correct", "input_id", n_resamples=100, rng=0
    )
    assert plotting.distribution(single).lines[0].get_xdata()[0] == single.estimate


def test_plot_errors_name_the_argument(gpqa, swe_scores):
    with pytest.raises(ValueError, match=r"`group` must name one of"):
        plotting.distribution(swe_scores)
    with pytest.raises(ValueError, match=r"`group` must be one of .* got 'nope'"):
        plotting.distribution(swe_scores, "nope")
    with pytest.raises(TypeError, match=r"`sort` must be True .* or False"):
        plotting.intervals(swe_scores, sort="estimate")
    with pytest.raises(ValueError, match=r"one entry per row; got lengths 2, 1"):
        plotting.forest(["a", "b"], [0.1], [0.0], [0.2])
    with pytest.raises(ValueError, match=r"got lengths 1, 1, 1, 1, 2"):
        plotting.forest(["a"], [0.1], [0.0], [0.2], categories=["x", "y"])
    with pytest.raises(TypeError, match=r"`table` must be the DataFrame"):
        plotting.widths([1, 2])
    with pytest.raises(ValueError, match=r"`table` lacks the columns \['rho'"):
        plotting.widths(swe_scores.to_frame().assign(k=1))
    tab = evalci.width_table(gpqa, "correct", "input_id", ks=[1, 2])
    with pytest.raises(ValueError, match=r"`y` must be 'width' .* got 'ratio'"):
        plotting.widths(tab, y="ratio")


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.floats(-1, 1, allow_nan=False).map(lambda v: round(v, 2)),
        min_size=1,
        max_size=12,
    )
)
def test_any_estimates_are_sorted_top_down_and_every_row_is_drawn(est):
    # reference: Python's sorted() (stable) of the estimates, largest first
    labels = [f"g{i}" for i in range(len(est))]
    est = np.asarray(est)
    ax = plotting.forest(labels, est, est - 0.1, est + 0.1)
    want = [labels[i] for i in sorted(range(len(est)), key=lambda i: -est[i])]
    assert top_to_bottom(ax) == want
    drawn = rows(ax)
    assert {k: v[0] for k, v in drawn.items()} == dict(zip(labels, est, strict=True))
    plt.close("all")


# --- names with "$": drawn as written, never mathtext (issue 24) ---------------
DOLLAR_NAMES = ["$\\frac$", "$x$", "a$b"]


@pytest.fixture(scope="module")
def dollars():
    """Three systems named like mathtext, 30 inputs x 3 runs each."""
    import pandas as pd

    rng = np.random.default_rng(5)
    n, k = 30, 3
    p = rng.beta(3, 2, n)
    rows = [
        pd.DataFrame(
            {
                "input_id": np.repeat(np.arange(n), k),
                "run": np.tile(np.arange(k), n),
                "system": name,
                "correct": (rng.random(n * k) < np.repeat(p, k) - 0.1 * i).astype(int),
            }
        )
        for i, name in enumerate(DOLLAR_NAMES)
    ]
    return pd.concat(rows, ignore_index=True)


def _drawn_texts(fig) -> list[str]:
    """Draw ``fig`` (mathtext would parse here), then every text it shows."""
    from matplotlib import cbook
    from matplotlib.text import Text

    fig.savefig(io.BytesIO(), format="png")  # old code: ValueError on $\frac$
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_text()]
    math = [t for t in texts if cbook.is_math_text(t)]
    assert not math, f"read as mathtext: {math}"
    # matplotlib draws each \$ as $: what the reader sees
    return [t.replace(r"\$", "$") for t in texts]


def _shows_every_name(texts, names=DOLLAR_NAMES):
    for name in names:
        assert any(name in t for t in texts), (name, texts)


def test_dollar_names_in_every_result_plot(dollars):
    res = dollars.evalci.cluster_ci(
        "correct", "input_id", by="system", n_resamples=200, rng=0
    )
    _shows_every_name(_drawn_texts(res.plot().figure))
    _shows_every_name(_drawn_texts(plotting.intervals(res).figure))
    for name in DOLLAR_NAMES:
        ax = plotting.distribution(res, name)
        assert name in _drawn_texts(ax.figure)  # the title
    comp = dollars.evalci.compare(
        "correct", "input_id", n_resamples=200, rng=0, mme=0.02
    )
    _shows_every_name(_drawn_texts(comp.plot().figure))
    board = dollars.evalci.leaderboard("correct", "input_id", n_resamples=200, rng=0)
    _shows_every_name(_drawn_texts(board.plot().figure))
    tab = evalci.width_table(
        dollars, "correct", "input_id", by="system", observed=True,
        n_resamples=100, rng=0,
    )  # fmt: skip
    _shows_every_name(_drawn_texts(plotting.widths(tab).figure))  # the legend


def test_dollar_strings_in_forest_labels_title_and_legend():
    ax = plotting.forest(
        DOLLAR_NAMES, [0.5, 0.6, 0.7], [0.4, 0.5, 0.6], [0.6, 0.7, 0.8],
        xlabel="$\\alpha$ (points)", title="a $50 $gap$", categories=["$c$"] * 3,
    )  # fmt: skip
    texts = _drawn_texts(ax.figure)
    _shows_every_name(texts, [*DOLLAR_NAMES, "$\\alpha$ (points)", "a $50 $gap$"])
    assert "$c$" in texts  # the legend entry


def test_dollar_names_in_the_html_report_and_the_command(dollars, tmp_path, capsys):
    import html

    from evalci.reporting import cli

    rep = dollars.evalci.report("correct", "input_id", n_resamples=200, rng=0)
    page = rep.to_html()  # old code: matplotlib's mathtext ParseException
    assert page.count("<svg") == 2
    for name in DOLLAR_NAMES:
        assert html.escape(name) in page
    path = tmp_path / "dollars.csv"
    dollars.to_csv(path, index=False)
    capsys.readouterr()
    code = cli.main(["report", str(path), "--format", "html", "--n-resamples", "200"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.count("<svg") == 2 and html.escape("$\\frac$") in out
