"""Kept plans (server/handlers/plan_cache.py, planner/plan_cache.py): a query run again takes
the plan its last run bound, reads the data published since, and is bound anew after any DDL,
under other session variables, or (with joins) once a table's rows changed by 2x."""

from __future__ import annotations

import pyarrow as pa
import pytest

from server.handlers import plan_cache
from session_testutil import run, sessions

DDL = """CREATE TABLE {name} (k INT NOT NULL, g INT NOT NULL, v BIGINT SUM DEFAULT "0")
AGGREGATE KEY(k, g)
PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("100"), PARTITION p2 VALUES LESS THAN ("200"))
DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1")"""


def rows(result) -> list[tuple]:
    batches = list(result.batches)
    return [] if not batches else sorted(tuple(r.values()) for r in
                                         pa.concat_tables(batches).to_pylist())


@pytest.fixture
def s(services):
    plan_cache.clear()
    session, = sessions(services, "kept_plans")
    run(session, "DROP TABLE IF EXISTS t")
    run(session, "DROP TABLE IF EXISTS d")
    run(session, DDL.format(name="t"))
    run(session, "INSERT INTO t VALUES (1, 1, 10), (150, 2, 20)")
    return session


def _counted(fn) -> tuple[int, int, object]:
    before = dict(plan_cache.stats)
    out = fn()
    return (plan_cache.stats["hits"] - before["hits"],
            plan_cache.stats["misses"] - before["misses"], out)


Q = "SELECT g, count(*), sum(v) FROM t GROUP BY g"


def test_a_second_run_reuses_the_plan_and_sees_new_rows(s):
    assert rows(run(s, Q)) == [(1, 1, 10), (2, 1, 20)]
    run(s, "INSERT INTO t VALUES (2, 1, 5), (1, 1, 1)")
    hits, misses, out = _counted(lambda: rows(run(s, Q)))
    assert (hits, misses) == (1, 0)
    assert out == [(1, 2, 16), (2, 1, 20)]


def test_ddl_binds_again(s):
    run(s, Q)
    run(s, "ALTER TABLE t DROP PARTITION p2")
    hits, misses, out = _counted(lambda: rows(run(s, Q)))
    assert (hits, misses, out) == (0, 1, [(1, 1, 10)])
    run(s, "ALTER TABLE t ADD PARTITION p3 VALUES LESS THAN (\"300\")")
    run(s, "INSERT INTO t VALUES (250, 3, 30)")
    assert rows(run(s, Q)) == [(1, 1, 10), (3, 1, 30)]
    assert rows(run(s, "SELECT * FROM t")) == [(1, 1, 10), (250, 3, 30)]
    run(s, "ALTER TABLE t ADD COLUMN w INT MAX DEFAULT \"7\"")  # a light schema change
    assert rows(run(s, "SELECT * FROM t")) == [(1, 1, 10, 7), (250, 3, 30, 7)]


def test_pruned_partitions_are_kept_with_the_plan_until_ddl(s):
    q = "SELECT k, v FROM t WHERE k >= 100"
    assert rows(run(s, q)) == [(150, 20)]
    run(s, "INSERT INTO t VALUES (160, 1, 1), (5, 1, 1)")
    hits, _, out = _counted(lambda: rows(run(s, q)))
    assert hits == 1 and out == [(150, 20), (160, 1)]


def test_session_values_and_variables(s):
    run(s, "SET @x = 1")
    q = "SELECT k FROM t WHERE g = @x"
    assert rows(run(s, q)) == [(1,)]
    run(s, "SET @x = 2")
    hits, _, out = _counted(lambda: rows(run(s, q)))
    assert hits == 0 and out == [(150,)]  # never kept: @x was inlined when bound
    run(s, Q)
    run(s, "SET show_hidden_columns = true")
    hits, misses, _ = _counted(lambda: run(s, Q))
    assert (hits, misses) == (0, 1)  # other variables: another entry


def test_a_join_is_bound_again_when_a_table_grows(s):
    run(s, "CREATE TABLE d (g INT NOT NULL, name VARCHAR(10)) DUPLICATE KEY(g) "
           "DISTRIBUTED BY HASH(g) BUCKETS 2 PROPERTIES (\"replication_num\" = \"1\")")
    run(s, "INSERT INTO d VALUES (1, 'a'), (2, 'b')")
    q = "SELECT d.name, sum(t.v) FROM t JOIN d ON t.g = d.g GROUP BY d.name"
    assert rows(run(s, q)) == [("a", 10), ("b", 20)]
    run(s, "INSERT INTO t VALUES (3, 1, 1)")  # 2 -> 3 rows: the plan stays
    hits, misses, out = _counted(lambda: rows(run(s, q)))
    assert (hits, misses, out) == (1, 0, [("a", 11), ("b", 20)])
    run(s, "INSERT INTO t VALUES " + ", ".join(f"({i}, 2, 1)" for i in range(10, 20)))
    hits, misses, out = _counted(lambda: rows(run(s, q)))
    assert (hits, misses, out) == (0, 1, [("a", 11), ("b", 30)])  # 3 -> 13 rows: bound again
    hits, misses, out = _counted(lambda: rows(run(s, q)))
    assert (hits, misses) == (1, 0)


def test_concurrent_runs_of_one_kept_plan_read_consistent_snapshots(services):
    """Readers share one kept plan while a writer loads: each run reads its own snapshot (every
    total a whole number of loads, never going down), and the last run sees every load."""
    import threading

    plan_cache.clear()
    writer, *readers = sessions(services, "kept_plans_mt", 4)
    run(writer, "DROP TABLE IF EXISTS t")
    run(writer, DDL.format(name="t"))
    run(writer, "INSERT INTO t VALUES (1, 1, 10), (150, 2, 10)")
    failures: list[str] = []

    def read(session) -> None:
        last = 0
        for _ in range(25):
            total = sum(r[2] for r in rows(run(session, Q)))
            if total < last or total % 20:
                failures.append(f"total {total} after {last}")
            last = total

    threads = [threading.Thread(target=read, args=(s,)) for s in readers]
    for t in threads:
        t.start()
    for i in range(20):  # each load adds 20 to the total, in both partitions
        run(writer, f"INSERT INTO t VALUES ({2 + i}, 1, 10), ({160 + i}, 2, 10)")
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    assert plan_cache.stats["hits"] > 0
    assert sum(r[2] for r in rows(run(readers[0], Q))) == 20 * 21
