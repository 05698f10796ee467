"""INSERT OVERWRITE under kill -9: killed after its rows are loaded into the temporary
partitions but before they replace the targets, the restarted server shows the old rows,
no temporary partition is left, and the statement can simply run again."""

from __future__ import annotations

from datetime import date

import pytest


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()] if cur.description else cur.rowcount


def test_kill9_before_the_partitions_are_replaced(server_factory, monkeypatch):
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE io")
    query(conn, "USE io")
    query(conn, "CREATE TABLE t (d DATE, k INT) DUPLICATE KEY(d) PARTITION BY RANGE(d) "
                "(PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN "
                "('2024-03-01')) DISTRIBUTED BY HASH(k) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    query(conn, "INSERT INTO t VALUES ('2024-01-01', 1), ('2024-02-01', 2)")
    srv.stop()
    monkeypatch.setenv("MINIDORIS_DEBUG_POINTS", "insert_overwrite.before_replace")
    srv.start()
    conn = srv.connect("io")
    with pytest.raises(Exception):  # the server dies inside the statement
        query(conn, "INSERT OVERWRITE TABLE t SELECT d, k * 10 FROM t")
    srv.proc.wait(timeout=10)
    srv.kill9()
    monkeypatch.delenv("MINIDORIS_DEBUG_POINTS")
    srv.start()
    conn = srv.connect("io")
    assert query(conn, "SELECT d, k FROM t ORDER BY k") == [(date(2024, 1, 1), 1),
                                                           (date(2024, 2, 1), 2)]
    assert query(conn, "SHOW TEMPORARY PARTITIONS FROM t") == []
    query(conn, "INSERT OVERWRITE TABLE t SELECT d, k * 10 FROM t")
    assert [k for _, k in query(conn, "SELECT d, k FROM t ORDER BY k")] == [10, 20]
    srv.kill9()  # the replacement is journaled: it survives
    srv.start()
    conn = srv.connect("io")
    assert [k for _, k in query(conn, "SELECT d, k FROM t ORDER BY k")] == [10, 20]
    assert [r[1] for r in query(conn, "SHOW PARTITIONS FROM t")] == ["p1", "p2"]
