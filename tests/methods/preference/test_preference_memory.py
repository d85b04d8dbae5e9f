"""Issue 37: memory linear in models and battles, refusals up front.

The sparse Newton solver (conjugate gradients on the Hessian, a weighted
graph Laplacian) gives the dense solver's fit to the optimiser's
tolerance; read_arena's chunked JSON readers give the whole-file frame;
configurations that cannot fit are refused before any work, naming the
setting to change.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci import preference as P
from evalci.engine import passes
from evalci.io import arena as _arena
from evalci.methods.preference import fit as F
from evalci.methods.preference.boot import split_counts
from evalci.methods.preference.data import encode


def _sparse_board(g=40, seed=0, tie=0.0):
    """Battles on a sparse pair graph (a ring plus random pairs), prompts."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, g)
    m = np.arange(g)
    i = np.r_[m, rng.integers(0, g, 3 * g)]
    j = np.r_[(m + 1) % g, rng.integers(0, g, 3 * g)]
    keep = i != j
    a, b = np.repeat(i[keep], 12), np.repeat(j[keep], 12)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    x = rng.random(len(a))
    win = np.where(x < tie, 2, np.where(rng.random(len(a)) < p, 0, 1))
    names = np.array([f"m{k:02d}" for k in range(g)], dtype=object)
    return pd.DataFrame(
        {
            "question_id": rng.integers(0, len(a) // 3, len(a)),
            "model_a": names[a],
            "model_b": names[b],
            "winner": np.array(["model_a", "model_b", "tie"], dtype=object)[win],
        }
    )


@pytest.mark.parametrize(
    "model, prior, tie", [("bt", 0.0, 0.0), ("bt", 0.01, 0.0), ("davidson", 0.0, 0.2)]
)
def test_conjugate_gradients_give_the_dense_fit(model, prior, tie):
    battles = encode(_sparse_board(tie=tie), cluster="question_id")
    rng = np.random.default_rng(1)
    w = rng.poisson(1.0, size=(20, battles.n_units)).astype(float)
    y = np.asarray(battles.units.T @ w.T).T
    kind = "davidson" if model == "davidson" else "bradley-terry"
    wi, wj, t = split_counts(y, kind, "half")
    kw = dict(model=model, prior=prior, ref=3)
    dense = F.fit(wi, wj, t, battles.pairs, solver="dense", **kw)
    cg = F.fit(wi, wj, t, battles.pairs, solver="cg", **kw)
    assert dense[2].all() and cg[2].all()
    np.testing.assert_allclose(cg[0], dense[0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(cg[1], dense[1], rtol=0, atol=1e-10)
    if prior == 0:
        assert (cg[0][:, 3] == 0).all()


def test_sparse_incidence_is_the_dense_one():
    battles = encode(_sparse_board(), cluster="question_id")
    pairs = battles.pairs
    np.testing.assert_array_equal(pairs.sparse_incidence.toarray(), pairs.incidence)
    x = np.random.default_rng(0).normal(size=(3, len(pairs.i)))
    a = F._Sparse(pairs.sparse_incidence.T.tocsr())
    np.testing.assert_allclose(x @ a, x @ pairs.incidence, atol=1e-12)


def test_preference_ci_with_the_sparse_solver(monkeypatch):
    data = _sparse_board()
    want = P.preference_ci(data, n_resamples=64, rng=0)
    monkeypatch.setattr(F, "DENSE_MAX", 0)  # every fit by conjugate gradients
    monkeypatch.setattr(F, "_DENSE_INCIDENCE", 0)  # and a sparse incidence
    got = P.preference_ci(data, n_resamples=64, rng=0)
    np.testing.assert_allclose(
        got.scores.bootstrap_distribution,
        want.scores.bootstrap_distribution,
        atol=1e-8,  # Elo points; the fits agree to the Newton tolerance
    )


def test_preference_ci_refuses_what_cannot_fit(monkeypatch):
    data = _sparse_board()
    monkeypatch.setattr(passes, "_physical_memory", lambda: 64.0 * 2**20)
    with pytest.raises(ValueError, match=r"`n_resamples`=100,000 for 40 models"):
        P.preference_ci(data, n_resamples=100_000, rng=0)
    monkeypatch.setattr(passes, "_physical_memory", lambda: 2.0 * 2**10)
    with pytest.raises(ValueError, match=r"40 models in .* pairs .* rank fewer"):
        P.preference_ci(data, n_resamples=100, rng=0)


def test_suite_ci_refuses_what_cannot_fit(monkeypatch):
    df = pd.DataFrame(
        {
            "system": np.repeat(["a", "b"], 20),
            "task": np.tile(np.repeat(["t1", "t2"], 10), 2),
            "item": np.tile(np.arange(10), 4),
            "correct": np.random.default_rng(0).random(40) < 0.5,
        }
    )
    monkeypatch.setattr(passes, "_physical_memory", lambda: 2.0 * 2**20)
    with pytest.raises(ValueError, match=r"`n_resamples`=1,000,000 over 2 tasks"):
        evalci.suite_ci(df, "correct", task="task", cluster="item", n_resamples=10**6)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_read_arena_in_chunks_equals_whole(tmp_path, monkeypatch, suffix):
    rows = _sparse_board(g=6).head(23).to_dict("records")
    for k, r in enumerate(rows):
        r["conversation_a"] = [{"role": "user", "content": "x" * k}]
        if k % 4 == 0:
            r["judge"] = f"u{k}"  # a field some records lack
    path = tmp_path / f"b{suffix}"
    text = (
        json.dumps(rows, indent=1)
        if suffix == ".json"
        else "\n".join(map(json.dumps, rows))
    )
    path.write_text(text, encoding="utf-8")
    whole = evalci.read_arena(path)
    monkeypatch.setattr(_arena, "CHUNK_ROWS", 5)
    chunked = evalci.read_arena(path)
    pd.testing.assert_frame_equal(chunked, whole)
    assert list(whole.columns) == ["model_a", "model_b", "winner", "question_id", "judge"]
    assert whole.judge.isna().sum() == 17


def test_read_arena_json_errors_come_from_the_whole_file_reader(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"model_a": "x", "model_b": "y", "winner": "tie"}, 3]')
    with pytest.raises(ValueError, match=r"must be a list of objects"):
        evalci.read_arena(path)
    path.write_text('[{"model_a": "x", "model_b": "y", "winner": "tie"},]')
    with pytest.raises(ValueError, match=r"is not valid JSON"):
        evalci.read_arena(path)
