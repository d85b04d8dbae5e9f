"""The check before a reduction without a shuffle (issue 39's no-shuffle path).

0/1 outcomes are summed where their rows lie, partition by partition, then
block by block of inputs: one ``evalci-sum`` task adds every partition's
cells of its block. Before this check, 10^7 rows read from 8 Parquet row
groups made one block, which the shuffle's rule let start on 360 MB workers
and which killed four workers in turn (``KilledWorker`` after the work had
begun); 300 MB workers paused for good. The rule
(:mod:`evalci.frames.dask_memory`) is fitted to those runs; here it must
refuse such a table before any task runs, name a number of partitions that
fits, and let that table run to pandas' numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine import args as _args
from evalci.engine import scaleout
from evalci.frames import dask_memory

from conftest import local_cluster  # noqa: E402

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

MiB = 2**20


def test_the_rule_refuses_every_measured_failure_and_no_measured_success():
    """The runs in dask_memory's docstring that failed, and the one that
    finished with the least room (10^7 rows of 9 bytes, 32-byte cells, 2
    workers): the room the rule asks against the room each had. The block
    counts of the runs were set by hand then; the rule is applied to the
    same partitions and blocks."""

    def asks(parts, blocks):
        extra = dask_memory._need(10**7, parts, 9, 32, blocks)[0]
        return (scaleout.REDUCE_ROOM + extra) / MiB

    failed = [(8, 1, 127), (8, 1, 518), (8, 8, 74), (8, 32, 85), (32, 32, 51)]
    finished = [(32, 32, 74)]
    for parts, blocks, room in failed:
        assert asks(parts, blocks) > room, (parts, blocks, room)
    for parts, blocks, room in finished:
        assert asks(parts, blocks) < room, (parts, blocks, room)
    # and the default blocks are the measured ones
    assert [dask_memory.block_count(p) for p in (8, 64, 200)] == [1, 8, 16]


def test_a_cell_counts_its_keys_and_its_statistics():
    df = pd.DataFrame(
        {
            "input_id": np.arange(4, dtype=np.int64),
            "system": pd.Series(list("abab"), dtype=object),
            "correct": np.zeros(4, dtype=np.int8),
        }
    )
    args = _args.bootstrap_iv(
        df, "correct", "input_id", "cluster", "mean", "system", None,
        "percentile", 0.95, 100, "input", False,
    )  # fmt: skip
    stats = np.asarray(args.metric.statistics({"correct": df["correct"]}, "correct"))
    m = stats.shape[1]
    # 8 (int64 id) + 16 (an object key) + the statistics and runs as float64
    assert dask_memory.cell_bytes(df.iloc[:0], args) == 8 + 16 + 8 * (m + 1)


def _write(path, n_inputs: int, groups: int, k: int = 5) -> pd.DataFrame:
    gen = np.random.default_rng(39)
    df = pd.DataFrame(
        {
            "input_id": np.repeat(np.arange(n_inputs, dtype=np.int64), k),
            "correct": (gen.random(n_inputs * k) < 0.6).astype(np.int8),
        }
    )
    df = df.iloc[gen.permutation(len(df))].reset_index(drop=True)
    df.to_parquet(path, row_group_size=-(-len(df) // groups), index=False)
    return df


def test_one_block_too_large_is_refused_before_any_task_and_the_advice_runs(tmp_path):
    """A table whose single input block needs ~1.3x the room beyond the
    fixed part: refused before any task (the shuffle's rule would have let
    it start), with a number of partitions; the same rows in that many row
    groups run to the numbers of pandas."""
    with local_cluster(n_workers=2, processes=True, memory_limit="300MB") as (_, c):
        room = scaleout._tightest(c)[3]
        beyond = room - scaleout.REDUCE_ROOM - dask_memory.IN_PLACE_ROOM
        assert beyond > 0, room / MiB
        cell = 32  # int64 id, two statistics and the runs as float64
        rows = int(beyond / (dask_memory.SUM_CELLS_PER_ROW * cell) * 1.3)
        n_inputs = rows // 5
        df = _write(tmp_path / "one.parquet", n_inputs, 8)
        ddf = dd.read_parquet(tmp_path / "one.parquet", split_row_groups=True)
        assert ddf.npartitions == 8 and scaleout.known_rows(ddf) == len(df)
        shuffle = scaleout.SHUFFLE_ROOM_PER_BYTE * len(df) * 9 / 2
        assert scaleout.REDUCE_ROOM + shuffle < room  # the old rule: no refusal
        with pytest.raises(ValueError, match="nothing has been computed") as err:
            evalci.cluster_ci(ddf, "correct", "input_id", rng=0, n_resamples=500)
        msg = str(err.value)
        assert not c.cluster.scheduler.task_groups  # no task ran
        assert f"an input block's cells ({len(df):,} rows" in msg
        parts = int(re.search(r"split the table into ([\d,]+) partitions", msg)[1])
        assert parts > 8 and parts % dask_memory.BLOCK_PARTITIONS == 0
        # the advice: the same rows in that many partitions
        _write(tmp_path / "many.parquet", n_inputs, parts)
        many = dd.read_parquet(tmp_path / "many.parquet", split_row_groups=True)
        assert many.npartitions == parts
        got = evalci.cluster_ci(many, "correct", "input_id", rng=0, n_resamples=500)
    want = evalci.cluster_ci(df, "correct", "input_id", rng=0, n_resamples=500)
    assert (got.estimate, got.low, got.high) == (want.estimate, want.low, want.high)


def test_what_is_sized_rows_known_or_not_whole_or_not(tmp_path):
    """Parquet rows of integers: the in-place tasks; the same rows filtered
    (not counted, no pass spent on the check): nothing beyond REDUCE_ROOM;
    float outcomes computed at once: the larger of the in-place tasks and
    the shuffle (they may not be whole); missing="drop" and lazy floats:
    the shuffle's rule (share None)."""
    from evalci.engine.bootstrap import bootstrap as pandas_bootstrap
    from evalci.frames.dask_bootstrap import _in_place_share
    from evalci.frames.dask_frame import _bind

    df = _write(tmp_path / "t.parquet", 200_000, 8)
    ddf = dd.read_parquet(tmp_path / "t.parquet", split_row_groups=True)

    def share(frame, **kw):
        given = _bind(pandas_bootstrap, frame, "correct", "input_id", **kw)
        given.setdefault("missing", "raise")
        return _in_place_share(frame, given, 2, 10 * MiB)

    need, what, _ = share(ddf)
    assert "input block's cells (1,000,000 rows" in what
    assert need == dask_memory.IN_PLACE_ROOM + 10**6 * 2.5 * 32
    assert share(ddf[ddf.correct >= 0]) == (0.0, "", "")
    df.astype({"correct": float}).to_parquet(
        tmp_path / "f.parquet", row_group_size=125_000
    )
    floats = dd.read_parquet(tmp_path / "f.parquet", split_row_groups=True)
    need_f, what_f, _ = share(floats)
    assert need_f == max(need, scaleout.SHUFFLE_ROOM_PER_BYTE * len(df) * 16 / 2)
    assert share(floats, compute=False) is None
    assert share(ddf, missing="drop") is None
