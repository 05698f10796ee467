"""Scan statistics kept across statements (planner/statistics.py memoized(epoch)): a statement
planned at the same catalog data epoch reuses the sums, and every applied journal entry (a
load, a compaction, DDL) moves the epoch, so EXPLAIN's cardinality follows each load."""

from __future__ import annotations

import re

import pyarrow as pa

from planner import statistics
from server.session import DorisSession
from session_testutil import run, sessions


def cardinality(s: DorisSession, sql: str) -> int:
    batches = list(run(s, f"EXPLAIN {sql}").batches)
    text = "\n".join(str(v) for v in pa.concat_tables(batches).column(0).to_pylist())
    return int(re.search(r"cardinality=(\d+)", text).group(1))


def test_statistics_are_shared_per_epoch_and_follow_loads(services, monkeypatch):
    s, = sessions(services, "memo")
    run(s, "DROP TABLE IF EXISTS t FORCE")
    run(s, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3 "
           "PROPERTIES (\"replication_num\" = \"1\")")
    run(s, "INSERT INTO t VALUES (1, 1), (2, 2)")
    sums = []
    real = statistics._scan_statistics

    def counted(*args):
        sums.append(args[1])
        return real(*args)

    monkeypatch.setattr(statistics, "_scan_statistics", counted)
    sql = "SELECT * FROM t a JOIN t b ON a.k = b.k"
    assert cardinality(s, sql) == 2
    first = len(sums)
    assert first > 0
    assert cardinality(s, sql) == 2
    assert len(sums) == first  # the same epoch: nothing summed again
    run(s, "INSERT INTO t VALUES (3, 3), (4, 4), (5, 5)")
    assert cardinality(s, sql) == 5  # the load moved the epoch
    assert len(sums) > first
