"""``evalci ci --facet``: the command prints what :func:`evalci.facet_ci` and
:func:`evalci.g_study` give on the same file."""

from __future__ import annotations

import json

import pytest

import evalci
from cli_calls import call


@pytest.fixture
def mgsm(tmp_path):
    df = evalci.load_example("metaprompting")
    df = df[df.task == "MGSM_TE"].drop(columns="task")
    path = tmp_path / "mgsm.csv"
    df.to_csv(path, index=False)
    return df, path


@pytest.mark.parametrize("method", ["components", "multiway", "pigeonhole"])
def test_ci_facet_matches_facet_ci(mgsm, method, capsys):
    df, path = mgsm
    code, out, err = call("ci", path, "--facet", "template", "--facet-method", method,
                          "--n-resamples", 500, "--format", "json", capsys=capsys)
    assert code == 0, err
    got = json.loads(out)
    ref = evalci.facet_ci(df, "correct", "input_id", "template", by="system",
                          method=method, n_resamples=500, rng=0)
    row = got["intervals"][0]
    for key in ("estimate", "low", "high", "standard_error", "naive_standard_error"):
        assert row[key] == pytest.approx(getattr(ref, key).iloc[0], rel=1e-12), key
    comp = [c["variance"] for c in got["components"]]  # the reader names the input "input"
    want = ref.g_study.components["variance"].tolist()
    assert comp == pytest.approx(want, rel=1e-12)


def test_ci_facet_table_and_refusals(mgsm, capsys):
    _, path = mgsm
    code, out, _ = call("ci", path, "--facet", "template", capsys=capsys)
    assert code == 0 and "variance components per facet" in out
    assert "over new inputs and new template" in out
    code, _, err = call("ci", path, "--facet", "nope", capsys=capsys)
    assert code != 0 and "nope" in err
    code, _, err = call("ci", path, "--facet", "template", "--metric", "pass@2",
                        capsys=capsys)
    assert code != 0 and "--metric" in err
