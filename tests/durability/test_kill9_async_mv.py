"""Async materialized views under restart and kill -9: the definition, job state, refresh
record and task history survive; a refresh killed before its partitions are swapped in
leaves the previous contents (and the previous freshness record), and runs again cleanly."""

from __future__ import annotations

import pytest

SETUP = [
    "CREATE DATABASE amv",
    "USE amv",
    "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
    "PROPERTIES ('replication_num' = '1')",
    "CREATE TABLE d (k INT, name VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
    "PROPERTIES ('replication_num' = '1')",
    "INSERT INTO t VALUES (1, 10), (1, 5), (2, 7)",
    "INSERT INTO d VALUES (1, 'one'), (2, 'two')",
    "CREATE MATERIALIZED VIEW mv BUILD IMMEDIATE REFRESH COMPLETE ON SCHEDULE EVERY 1 DAY "
    "STARTS '2030-01-01 00:00:00' DISTRIBUTED BY RANDOM BUCKETS 2 "
    "PROPERTIES ('replication_num' = '1', 'grace_period' = '60') "
    "AS SELECT d.name, SUM(t.v) AS s FROM t JOIN d ON t.k = d.k GROUP BY d.name",
    "PAUSE MATERIALIZED VIEW JOB ON mv",
]
INFO = ("SELECT Name, RefreshState, RefreshInfo, MvProperties, SyncWithBaseTables "
        "FROM mv_infos('database' = 'amv')")


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()] if cur.description else cur.rowcount


def test_definition_and_refresh_survive_kill9(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    for sql in SETUP:
        query(conn, sql)
    rows = query(conn, "SELECT * FROM mv ORDER BY name")
    info = query(conn, INFO)
    jobs = query(conn, "SELECT MvName, ExecuteType, Status FROM jobs('type' = 'mv')")
    assert rows == [("one", 15), ("two", 7)]
    assert jobs == [("mv", "RECURRING", "PAUSED")]
    srv.kill9()
    srv.start()
    conn = srv.connect("amv")
    assert query(conn, "SELECT * FROM mv ORDER BY name") == rows
    assert query(conn, INFO) == info
    assert info[0][4] == 1  # still in sync: no base table changed
    assert query(conn, "SELECT MvName, ExecuteType, Status FROM jobs('type' = 'mv')") == jobs
    assert query(conn, "SELECT Status, RefreshMode FROM tasks('type' = 'mv')") == \
        [("SUCCESS", "COMPLETE")]
    with pytest.raises(Exception, match="Not allowed to perform current operation"):
        query(conn, "INSERT INTO mv VALUES ('x', 1)")


def test_refresh_killed_before_the_swap_keeps_the_old_contents(server_factory, monkeypatch):
    srv = server_factory().start()
    conn = srv.connect()
    for sql in SETUP:
        query(conn, sql)
    query(conn, "INSERT INTO t VALUES (2, 100)")
    assert query(conn, INFO)[0][4] == 0  # stale
    srv.stop()
    monkeypatch.setenv("MINIDORIS_DEBUG_POINTS", "insert_overwrite.before_replace")
    srv.start()
    conn = srv.connect("amv")
    with pytest.raises(Exception):  # the server dies inside the refresh
        query(conn, "REFRESH MATERIALIZED VIEW mv COMPLETE")
    srv.proc.wait(timeout=10)
    srv.kill9()
    monkeypatch.delenv("MINIDORIS_DEBUG_POINTS")
    srv.start()
    conn = srv.connect("amv")
    assert query(conn, "SELECT * FROM mv ORDER BY name") == [("one", 15), ("two", 7)]
    assert query(conn, "SHOW TEMPORARY PARTITIONS FROM mv") == []
    assert query(conn, INFO)[0][4] == 0  # still stale
    query(conn, "REFRESH MATERIALIZED VIEW mv AUTO")
    assert query(conn, "SELECT * FROM mv ORDER BY name") == [("one", 15), ("two", 107)]
    srv.kill9()
    srv.start()
    conn = srv.connect("amv")
    assert query(conn, "SELECT * FROM mv ORDER BY name") == [("one", 15), ("two", 107)]
    assert query(conn, INFO)[0][4] == 1
    query(conn, "DROP MATERIALIZED VIEW mv")
    srv.kill9()
    srv.start()
    conn = srv.connect("amv")
    assert query(conn, INFO) == []


def _wait_for(conn, sql, want, seconds=20.0):
    import time
    deadline = time.time() + seconds
    while True:
        got = query(conn, sql)
        if got == want or time.time() > deadline:
            return got
        time.sleep(0.2)


def test_on_commit_and_on_schedule_refresh_in_the_background(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    for sql in SETUP[:6]:
        query(conn, sql)
    query(conn, "CREATE MATERIALIZED VIEW mc BUILD IMMEDIATE REFRESH AUTO ON COMMIT "
                "DISTRIBUTED BY RANDOM BUCKETS 1 PROPERTIES ('replication_num' = '1') "
                "AS SELECT k, SUM(v) AS s FROM t GROUP BY k")
    query(conn, "CREATE MATERIALIZED VIEW ms BUILD DEFERRED REFRESH COMPLETE ON SCHEDULE EVERY 1 "
                "SECOND DISTRIBUTED BY RANDOM BUCKETS 1 PROPERTIES ('replication_num' = '1') "
                "AS SELECT COUNT(*) AS c FROM d")
    query(conn, "INSERT INTO t VALUES (3, 1)")  # a commit into mc's base table
    assert _wait_for(conn, "SELECT * FROM mc ORDER BY k", [(1, 15), (2, 7), (3, 1)]) == \
        [(1, 15), (2, 7), (3, 1)]
    assert _wait_for(conn, "SELECT * FROM ms", [(2,)]) == [(2,)]
    srv.kill9()  # the schedule is journaled: after a restart it runs again
    srv.start()
    conn = srv.connect("amv")
    query(conn, "INSERT INTO d VALUES (3, 'three')")
    assert _wait_for(conn, "SELECT * FROM ms", [(3,)]) == [(3,)]
    tasks = query(conn, "SELECT MvName, TaskContext FROM tasks('type' = 'mv') "
                        "WHERE MvName = 'mc' AND TaskContext LIKE '%COMMIT%'")
    assert tasks, "the ON COMMIT refresh is recorded as a COMMIT task"
