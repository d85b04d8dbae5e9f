"""Forest plots: one interval per group or pair, drawn where the numbers say."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402


def test_result_plot_draws_each_interval(gpqa, tmp_path):
    res = gpqa.evalci.cluster_ci(
        "correct", "input_id", by="system", n_resamples=300, rng=0
    )
    ax = res.plot()
    (line,) = [c for c in ax.containers]  # one errorbar container
    xs = line.lines[0].get_xdata()
    np.testing.assert_allclose(sorted(xs), sorted(res.estimate))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == list(res.groups)
    ax.figure.savefig(tmp_path / "scores.png")


def test_comparison_plot_has_zero_and_mme_band(gpqa, tmp_path):
    gaps = gpqa.evalci.compare("correct", "input_id", mme=0.02, n_resamples=300, rng=0)
    ax = gaps.plot()
    assert any(np.allclose(l.get_xdata(), 0) for l in ax.lines)  # noqa: E741
    assert len(ax.patches) == 1  # the ±mme band
    ax.figure.savefig(tmp_path / "gaps.png")
    one = gpqa[gpqa.system == gpqa.system.iloc[0]].evalci.cluster_ci(
        "correct", "input_id", n_resamples=100, rng=0
    )
    assert [t.get_text() for t in one.plot().get_yticklabels()] == ["mean"]
