"""Dask reduction of whole numbers: the client receives pattern summaries (issue 39).

Each input block is kept on the workers and summarised there into its
distinct inputs (``evalci-summary``: one representative per signature and
how many inputs share it); the client builds the pass from those when the
pattern kernel serves every unit, else gathers the blocks' cells as before.
The reference is the pandas path on the same rows, bit for bit (estimates,
every replicate, endpoints, acceleration, counts, kernel, repr); the path
taken is asserted (the full cells are never gathered on the summary path),
and the fallback is checked to be today's path. ``block_signatures`` is
checked against a brute-force loop over inputs.
"""

from collections import Counter

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import evalci
from evalci._base.warnings import MissingDataWarning
from evalci.engine import args as _args
from evalci.engine import cell_patterns
from evalci.engine import cells as _cells
from evalci.frames import dask_cells, dask_frame

from conftest import local_cluster  # noqa: E402

FIELDS = (
    "estimate",
    "low",
    "high",
    "standard_error",
    "bootstrap_distribution",
    "acceleration",
    "z0",
    "n_inputs",
    "n_runs",
    "n_clusters",
)
KW = dict(n_resamples=1100, rng=7)


def identical(a, b):
    for f in FIELDS:
        x, y = np.asarray(getattr(a, f)), np.asarray(getattr(b, f))
        assert x.shape == y.shape and np.array_equal(x, y, equal_nan=True), f
    assert a.kernel == b.kernel
    assert repr(a) == repr(b)


def table(n=1500, k=3, systems=2, top=1, keys="int", equal_k=True, seed=0):
    """Outcomes 0..``top`` of ``n`` inputs x ``k`` runs (1..k when not
    ``equal_k``) x ``systems``, a subject per input; rows shuffled."""
    rng = np.random.default_rng(seed)
    frames = []
    for s in range(systems):
        runs = np.full(n, k) if equal_k else rng.integers(1, k + 1, n)
        ids = np.repeat(np.arange(n), runs)
        p = rng.beta(2, 2, n)[ids]
        frames.append(
            pd.DataFrame(
                {
                    "input_id": ids,
                    "system": f"sys{s}",
                    "subject": ids % 3,
                    "correct": rng.binomial(top, p).astype(np.int32),
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)
    if keys == "str":
        df["input_id"] = "q" + df["input_id"].astype(str)
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)


@pytest.fixture
def paths(monkeypatch):
    """What :func:`pass_of_signatures` returned (a pass, or None) per call."""
    seen = []
    build = cell_patterns.pass_of_signatures

    def spy(*args, **kwargs):
        p = build(*args, **kwargs)
        seen.append(p is not None)
        return p

    monkeypatch.setattr(cell_patterns, "pass_of_signatures", spy)
    return seen


@pytest.fixture
def no_gather(monkeypatch):
    """Fail if the client gathers the blocks' cells to merge them (or the
    shuffle runs)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the full cells were gathered")

    monkeypatch.setattr(dask_cells, "merged", refuse)
    monkeypatch.setattr(dask_frame, "cell_parts", refuse)


def on_dask(df, npartitions, **kw):
    ddf = dd.from_pandas(df, npartitions=npartitions, sort=False)
    return evalci.cluster_ci(ddf, "correct", "input_id", **KW, **kw)


# the pattern kernel serves every unit: built from the summaries alone
SUMMARY_CASES = [
    (dict(), dict(systems=1), 1),
    (dict(by="system"), dict(), 7),
    (dict(by="system", strata="subject", method="bca"), dict(n=2400, keys="str"), 11),
    (dict(by="system", weight="run"), dict(equal_k=False, k=2), 24),
    (dict(by="system", paired=False, method="bca"), dict(systems=3, top=1), 5),
]


@pytest.mark.parametrize("kw, data, npartitions", SUMMARY_CASES)
def test_summaries_equal_pandas_bit_for_bit(kw, data, npartitions, paths, no_gather):
    df = table(**data)
    ref = evalci.cluster_ci(df, "correct", "input_id", **KW, **kw)
    with local_cluster(n_workers=2, processes=False):
        got = on_dask(df, npartitions, **kw)
    assert ref.kernel == "patterns" and paths == [True]
    identical(ref, got)


def test_systems_on_different_inputs_and_a_sync_scheduler(paths, no_gather):
    # sys1 lacks a third of the inputs: two draw units (units by presence)
    df = table(n=2400, systems=3, seed=3)
    df = df[~((df.system == "sys1") & (df.input_id % 3 == 0))]
    kw = dict(by="system", method="bca")
    ref = evalci.cluster_ci(df, "correct", "input_id", **KW, **kw)
    with dask.config.set(scheduler="sync"):
        got = on_dask(df, 6, **kw)
    assert paths == [True]
    identical(ref, got)
    assert ref.n_inputs.tolist() == [2400, 1600, 2400]


def test_missing_drop_and_counts_on_processes(paths):
    df = table(n=1200, k=1, top=2, seed=4).astype({"correct": float})
    df.loc[df.sample(frac=0.02, random_state=1).index, "correct"] = np.nan
    kw = dict(by="system", missing="drop", weight="run")
    with pytest.warns(MissingDataWarning, match="left out"):
        ref = evalci.cluster_ci(df, "correct", "input_id", **KW, **kw)
    with (
        local_cluster(n_workers=2, processes=True),
        pytest.warns(MissingDataWarning, match="left out"),
    ):
        got = on_dask(df, 9, **kw)
    assert paths and all(paths)
    identical(ref, got)


# the index kernel (many patterns), or totals that depend on the order:
# the blocks' cells are gathered, as before summaries existed
FALLBACK_CASES = [
    (dict(), dict(systems=1, k=1, top=60, n=900)),  # P * 32 > N: index
    (dict(by="system"), dict(equal_k=False, k=4)),  # unequal k, many patterns
    # the pattern kernel, but weight="input" at unequal k: thirds, whose
    # total depends on the order of the inputs
    (dict(method="bca"), dict(systems=1, equal_k=False, k=3)),
]


@pytest.mark.parametrize("kw, data", FALLBACK_CASES)
def test_the_fallback_gathers_the_cells_and_equals_pandas(kw, data, paths, monkeypatch):
    merged = []
    merge = dask_cells.merged
    monkeypatch.setattr(
        dask_cells, "merged", lambda *a: merged.append(len(a[0])) or merge(*a)
    )
    df = table(**data)
    ref = evalci.cluster_ci(df, "correct", "input_id", **KW, **kw)
    with local_cluster(n_workers=2, processes=False):
        got = on_dask(df, 8, **kw)
    identical(ref, got)
    assert merged == [1]  # the one block's cells, gathered
    assert paths in ([False], [])  # the engine said no, or a block had no summary


def test_a_block_without_a_summary_takes_the_fallback(paths, monkeypatch):
    # every input its own signature: the blocks send no summary
    df = table(n=300, systems=1, k=1, top=10**6, seed=5)
    ref = evalci.cluster_ci(df, "correct", "input_id", **KW)
    with dask.config.set(scheduler="sync"):
        got = on_dask(df, 3)
    assert paths == [] and ref.kernel == "index"
    identical(ref, got)


def test_the_lazy_path_has_no_summaries():
    df = table(n=800, seed=6)
    ref = evalci.cluster_ci(df, "correct", "input_id", by="system", **KW)
    ddf = dd.from_pandas(df, npartitions=5, sort=False)
    lazy = ddf.evalci.cluster_ci(
        "correct", "input_id", by="system", compute=False, **KW
    )
    assert not any("evalci-summary" in str(k) for k in lazy.dask)
    with dask.config.set(scheduler="sync"):
        identical(ref, lazy.compute())


def brute_signatures(cells, args):
    """Per input, its cells as a sorted tuple (group, statistics, runs,
    stratum): a loop over inputs."""
    stats = [c for c in cells.columns if c.startswith("__evalci_s")]
    cols = [*args.by, *stats, "__evalci_runs__", *args.strata]
    out = {}
    for key, rows in cells.groupby(list(args.cluster), sort=False):
        out[key] = tuple(sorted(map(tuple, rows[cols].to_numpy().tolist())))
    return Counter(out.values())


@pytest.mark.parametrize(
    "systems, strata, data",
    [(1, False, dict(top=2, equal_k=False)), (3, True, dict(k=2))],
)
def test_block_signatures_against_a_loop(systems, strata, data):
    df = table(n=600, systems=systems, seed=8, **data)
    df = df[~((df.system == "sys2") & (df.input_id % 4 == 0))]
    given = dict(value="correct", cluster="input_id", by="system")
    if strata:
        given["strata"] = "subject"
    args = _args.bootstrap_iv_of(df.iloc[:0], given)
    cells = _cells.cell_statistics(df, args).sample(frac=1, random_state=0)
    reps, most, n = cell_patterns.block_signatures(cells, args)
    assert n == df.input_id.nunique() and most == cells["__evalci_runs__"].max()
    weights = reps.groupby("input_id")[cell_patterns.INPUTS].first()
    got = Counter()
    # one representative per signature
    assert set(brute_signatures(reps, args).values()) == {1}
    for key, rows in reps.groupby("input_id"):
        got[next(iter(brute_signatures(rows, args)))] += int(weights[key])
    assert got == brute_signatures(cells, args)


def test_block_signatures_refuse_an_input_in_two_strata():
    df = table(n=400, systems=2, seed=9)
    df.loc[(df.system == "sys1") & (df.input_id == 3), "subject"] = 2
    given = dict(value="correct", cluster="input_id", by="system", strata="subject")
    args = _args.bootstrap_iv_of(df.iloc[:0], given)
    cells = _cells.cell_statistics(df, args)
    assert cell_patterns.block_signatures(cells, args)[0] is None
    ddf = dd.from_pandas(df, npartitions=3, sort=False)
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match="varies"):
        ddf.evalci.cluster_ci("correct", "input_id", by="system", strata="subject")
    assert cell_patterns.block_signatures(None, args) == (None, None, 0)
    empty = cell_patterns.block_signatures(cells.iloc[:0], args)
    assert len(empty[0]) == 0 and empty[1:] == (0.0, 0)


def test_summaries_table_needs_every_block():
    s = dask_cells.Summaries([], [pd.DataFrame({"a": [1]}), None])
    assert s.table() is None
    assert dask_cells.Summaries([], [pd.DataFrame({"a": []})]).table() is None
