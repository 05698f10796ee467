"""Spilling operators (executor/spill/) give the in-memory operators' results, on data with
NULLs, strings, decimals and duplicate keys, with every input spilled (enable_force_spill) into
a few partitions; their files are gone afterwards."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from executor.env import ExecEnv
from executor.expressions import EvalContext
from executor.operators.aggregate import run_aggregate
from executor.operators.join import run_join
from executor.operators.sort import run_sort
from executor.spill import QuerySpill, SpillOptions, merge_runs, spill_aggregate, spill_join, \
    spill_sort
from executor.spill.partition import partition_ids
from planner import logical as L

FORCE = SpillOptions(enable_force_spill=True, spill_sort_batch_bytes=2048,
                     spill_aggregation_partition_count=5, spill_hash_join_partition_count=3)


@pytest.fixture
def env(tmp_path):
    pool = ThreadPoolExecutor(2)
    e = ExecEnv(None, EvalContext(now=datetime(2024, 1, 1)), pool)
    e.spill = QuerySpill(str(tmp_path / "spill"), "q1", FORCE)
    yield e
    e.spill.cleanup()
    pool.shutdown()


def data(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = rng.integers(0, n // 4 + 1, n)
    s = np.array(["a", "bb", "ccc", "", "é", "zz"], dtype=object)[rng.integers(0, 6, n)]
    d = rng.integers(-10**6, 10**6, n)
    return pa.table({
        "k": pa.array(k, mask=rng.random(n) < 0.05),
        "s": pa.array(list(s), mask=rng.random(n) < 0.05),
        "d": pa.array([Decimal(int(x)) / 100 for x in d], pa.decimal128(12, 2),
                      mask=rng.random(n) < 0.1),
        "v": pa.array(rng.integers(0, 100, n).astype(np.int32)),
        "f": pa.array(rng.random(n)),
    })


def batches(table: pa.Table, size: int = 500):
    return [table.slice(i, size) for i in range(0, max(table.num_rows, 1), size)]


def canonical(table: pa.Table) -> list:
    rows = table.to_pylist()
    return sorted(rows, key=lambda r: [(v is None, repr(v)) for v in r.values()])


def spill_files(env) -> list[str]:
    path = env.spill.path
    return os.listdir(path) if os.path.isdir(path) else []


CALLS = [L.AggCall("count_all", None, "c"), L.AggCall("sum", "d", "sd"),
         L.AggCall("mean", "d", "ad"), L.AggCall("min", "s", "mi"), L.AggCall("max", "v", "mv"),
         L.AggCall("count", "d", "cd")]


@pytest.mark.parametrize("keys", [["k"], ["s", "k"], ["d"], []])
def test_partitioned_aggregate_equals_one_pass(env, keys):
    table = data(4000)
    node = L.Aggregate(L.InlineTable(table, "t"), keys, CALLS)
    spilled = list(spill_aggregate(node, iter(batches(table)), env))
    if keys:
        assert len(spilled) > 1  # one result per partition: it did spill
        assert env.spill.bytes_written > 0
    got = pa.concat_tables(spilled)
    want = run_aggregate(table, keys, CALLS)
    assert got.schema == want.schema
    assert canonical(got) == canonical(want)
    assert spill_files(env) == []


def test_partitioned_aggregate_of_calls_that_do_not_split(env):
    """DISTINCT and float sums aggregate the raw rows of each partition in one pass."""
    table = data(3000, seed=1)
    calls = [L.AggCall("count_distinct", "s", "cs"), L.AggCall("sum", "f", "sf"),
             L.AggCall("group_concat", "s", "gs", distinct=True)]
    node = L.Aggregate(L.InlineTable(table, "t"), ["k"], calls)
    got = pa.concat_tables(list(spill_aggregate(node, iter(batches(table)), env)))
    want = run_aggregate(table, ["k"], calls)
    assert got.num_rows == want.num_rows
    g = {r["k"]: r for r in got.to_pylist()}
    for r in want.to_pylist():
        assert g[r["k"]]["cs"] == r["cs"]
        assert g[r["k"]]["sf"] == pytest.approx(r["sf"])
        assert sorted((g[r["k"]]["gs"] or "").split(", ")) == sorted((r["gs"] or "").split(", "))


def test_small_aggregate_does_not_spill(env, tmp_path):
    env.spill = QuerySpill(str(tmp_path / "s2"), "q2", SpillOptions())
    table = data(1000)
    node = L.Aggregate(L.InlineTable(table, "t"), ["k"], CALLS)
    got = list(spill_aggregate(node, iter(batches(table)), env))
    assert len(got) == 1 and env.spill.bytes_written == 0
    assert not os.path.exists(env.spill.path)


SORTS = [
    [L.SortKey("k", False)],
    [L.SortKey("s", True), L.SortKey("k", False, nulls_first=False)],
    [L.SortKey("d", False, nulls_first=False), L.SortKey("s", False), L.SortKey("v", True)],
]


@pytest.mark.parametrize("keys", SORTS)
def test_external_sort_equals_in_memory_sort(env, keys):
    table = data(5000, seed=2)
    node = L.Sort(L.InlineTable(table, "t"), keys)
    got = pa.concat_tables(list(spill_sort(node, iter(batches(table, 700)), env)))
    want = run_sort(table, keys, None)
    names = [k.name for k in keys]
    assert got.select(names).to_pylist() == want.select(names).to_pylist()
    assert canonical(got) == canonical(want)
    assert env.spill.bytes_written > 0
    assert spill_files(env) == []


def test_top_n_stays_in_memory(env):
    table = data(5000, seed=3)
    keys = [L.SortKey("d", True), L.SortKey("k", False)]
    node = L.Sort(L.InlineTable(table, "t"), keys, limit=7)
    got = pa.concat_tables(list(spill_sort(node, iter(batches(table)), env)))
    want = run_sort(table, keys, 7)
    assert got.select(["d", "k"]).to_pylist() == want.select(["d", "k"]).to_pylist()
    assert env.spill.bytes_written == 0


def test_merge_of_runs_with_equal_keys_across_batch_edges():
    keys = [L.SortKey("a", False)]
    runs = [pa.table({"a": [1, 1, 1, 2, 2, 5]}), pa.table({"a": [None, 1, 2, 2, 2, 9]}),
            pa.table({"a": pa.array([], pa.int64())}), pa.table({"a": [2, 2, 2, 2]})]
    its = [iter(batches(r, 2)) for r in runs]
    got = pa.concat_tables(list(merge_runs(its, keys))).column("a").to_pylist()
    assert got == [None, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 5, 9]


def _stream_in_batches(node, env):
    yield from batches(node.table, 300)


@pytest.mark.parametrize("kind", ["inner", "left outer", "right outer", "full outer",
                                  "left semi", "left anti", "right semi", "right anti"])
def test_grace_hash_join_equals_in_memory_join(env, kind):
    left = data(2000, seed=4).rename_columns(["lk", "ls", "ld", "lv", "lf"])
    right = data(1500, seed=5).rename_columns(["rk", "rs", "rd", "rv", "rf"])
    right = right.set_column(0, "rk", right.column("rk").cast(pa.int32()))  # keys cast to meet
    node = L.Join(L.InlineTable(left, "l"), L.InlineTable(right, "r"), kind,
                  ["lk", "ls"], ["rk", "rs"])
    got = pa.concat_tables(list(spill_join(node, _stream_in_batches, env)),
                           promote_options="permissive")
    want = run_join(left, right, node, env.eval_ctx)
    assert got.num_rows == want.num_rows
    assert canonical(got.select(want.column_names)) == canonical(want)
    assert env.spill.bytes_written > 0
    assert spill_files(env) == []


def test_partition_ids_agree_across_key_types():
    a = pa.array([1, 2, None, 4, 2], pa.int32())
    b = pa.array([1, 2, None, 4, 2], pa.int64())
    assert list(partition_ids([a.cast(pa.int64())], 7)) == list(partition_ids([b], 7))
    ids = partition_ids([pa.array(np.arange(10000))], 8)
    assert np.bincount(ids, minlength=8).min() > 1000  # spread over every partition


def test_top_n_past_the_threshold_sorts_externally(env):
    """ORDER BY ... LIMIT with a limit whose rows pass the threshold (a large OFFSET)."""
    env.spill.options = SpillOptions(enable_force_spill=True, spill_min_revocable_mem=1000,
                                     spill_sort_batch_bytes=2048)
    table = data(4000, seed=6)
    keys = [L.SortKey("s", True), L.SortKey("k", False), L.SortKey("v", False)]
    node = L.Sort(L.InlineTable(table, "t"), keys, limit=1500)
    got = pa.concat_tables(list(spill_sort(node, iter(batches(table, 300)), env)))
    want = run_sort(table, keys, 1500)
    assert got.select(["s", "k", "v"]).to_pylist() == want.select(["s", "k", "v"]).to_pylist()
    assert env.spill.bytes_written > 0


def test_start_up_sweeps_spill_files_left_by_a_crash(tmp_path):
    from storage import StorageEngine
    left = tmp_path / "spill" / "0123-4567"
    left.mkdir(parents=True)
    (left / "0.arrow").write_bytes(b"partial")
    engine = StorageEngine(str(tmp_path))
    assert engine.spill_dir == str(tmp_path / "spill")
    assert not (tmp_path / "spill").exists()
    assert (tmp_path / "data").is_dir()


def test_partitions_over_the_threshold_are_split_again(env):
    """Partitions still larger than the threshold are split by another hash, recursively;
    results stay exact (aggregate and join)."""
    env.spill.options = SpillOptions(enable_force_spill=True, spill_min_revocable_mem=3000,
                                     spill_aggregation_partition_count=3,
                                     spill_hash_join_partition_count=3)
    table = data(3000, seed=7)
    node = L.Aggregate(L.InlineTable(table, "t"), ["k", "s"], CALLS)
    got = pa.concat_tables(list(spill_aggregate(node, iter(batches(table)), env)))
    assert canonical(got) == canonical(run_aggregate(table, ["k", "s"], CALLS))
    assert env.spill.files > 3 + 9  # two levels below the first
    files = env.spill.files
    left = data(2000, seed=8).rename_columns(["lk", "ls", "ld", "lv", "lf"])
    right = data(1500, seed=9).rename_columns(["rk", "rs", "rd", "rv", "rf"])
    join = L.Join(L.InlineTable(left, "l"), L.InlineTable(right, "r"), "full outer",
                  ["lk"], ["rk"])
    got = pa.concat_tables(list(spill_join(join, _stream_in_batches, env)),
                           promote_options="permissive")
    want = run_join(left, right, join, env.eval_ctx)
    assert canonical(got.select(want.column_names)) == canonical(want)
    assert env.spill.files > files + 2 * (3 + 9)
    assert spill_files(env) == []
