"""Crash safety: after `kill -9`, everything the server acknowledged is there on restart.

An acknowledged statement is one whose OK packet reached the client. The server may lose only the
statement in flight when it died, and then all of it (a load is one transaction: all rows or none).
"""

from __future__ import annotations

import threading
import time

import pymysql

AGG_DDL = """
CREATE TABLE acc (k INT NOT NULL, v BIGINT SUM DEFAULT "0")
AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1")
"""
DUP_DDL = """
CREATE TABLE events (k INT NOT NULL, batch INT NOT NULL, note VARCHAR(20))
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")
"""


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def test_kill9_keeps_acknowledged_statements(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE crash_db")
    query(conn, "USE crash_db")
    query(conn, AGG_DDL)
    query(conn, DUP_DDL)
    for i in range(10):  # ten separate loads, each acknowledged before the next
        query(conn, f"INSERT INTO acc VALUES ({i % 3}, {i + 1}), ({100 + i}, 1)")
        query(conn, f"INSERT INTO events VALUES ({i}, {i}, 'n{i}'), ({i}, {i}, 'n{i}')")
    tables = sorted(r[0] for r in query(conn, "SHOW TABLES"))
    ddl = {t: query(conn, f"SHOW CREATE TABLE {t}")[0][1] for t in tables}
    acc = query(conn, "SELECT k, v FROM acc ORDER BY k")
    events = query(conn, "SELECT k, batch, note FROM events ORDER BY k, batch")
    assert len(acc) == 13 and len(events) == 20
    # k=0 got loads 1, 4, 7, 10 -> 22; k=1: 2, 5, 8 -> 15; k=2: 3, 6, 9 -> 18.
    assert acc[:3] == ((0, 22), (1, 15), (2, 18))
    conn.close()

    srv.kill9()
    srv.start()
    conn = srv.connect("crash_db")
    assert sorted(r[0] for r in query(conn, "SHOW TABLES")) == tables
    assert {t: query(conn, f"SHOW CREATE TABLE {t}")[0][1] for t in tables} == ddl
    assert query(conn, "SELECT k, v FROM acc ORDER BY k") == acc
    assert query(conn, "SELECT k, batch, note FROM events ORDER BY k, batch") == events
    assert query(conn, "SELECT count(*) FROM acc")[0][0] == 13

    # Still writable, and a second crash keeps the new load too.
    query(conn, "INSERT INTO acc VALUES (0, 100)")
    conn.close()
    srv.kill9()
    srv.start()
    conn = srv.connect("crash_db")
    assert query(conn, "SELECT v FROM acc WHERE k = 0")[0][0] == 122
    conn.close()


def test_kill9_right_after_ddl(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE ddl_crash")
    query(conn, "USE ddl_crash")
    query(conn, DUP_DDL)
    query(conn, "CREATE TABLE gone (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES (\"replication_num\" = \"1\")")
    query(conn, "DROP TABLE gone")
    conn.close()
    srv.kill9()
    srv.start()
    conn = srv.connect("ddl_crash")
    assert [r[0] for r in query(conn, "SHOW TABLES")] == ["events"]
    assert query(conn, "SELECT count(*) FROM events")[0][0] == 0
    conn.close()


def test_kill9_during_a_stream_of_inserts(server_factory):
    """A writer inserts one batch per statement until the server dies. After restart every
    acknowledged batch is complete, and the only other batch that may appear is the one in flight,
    also complete."""
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE stream_db")
    query(conn, "USE stream_db")
    query(conn, DUP_DDL)
    conn.close()

    rows_per_batch = 5
    acknowledged: list[int] = []
    attempted: list[int] = []
    stop = threading.Event()

    def writer():
        c = srv.connect("stream_db")
        try:
            for batch in range(10_000):  # bounded; normally ends when the server is killed
                if stop.is_set():
                    return
                values = ", ".join(f"({batch * rows_per_batch + i}, {batch}, 'b{batch}')" for i in range(rows_per_batch))
                attempted.append(batch)
                query(c, f"INSERT INTO events VALUES {values}")
                acknowledged.append(batch)
        except pymysql.err.MySQLError:
            return  # the server died mid-statement

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while len(acknowledged) < 20 and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(acknowledged) >= 20, f"only {len(acknowledged)} batches acknowledged in 20 s"
    srv.kill9()
    stop.set()
    t.join(timeout=30)
    assert not t.is_alive()

    srv.start()
    conn = srv.connect("stream_db")
    counts = dict(query(conn, "SELECT batch, count(*) FROM events GROUP BY batch"))
    missing = [b for b in acknowledged if counts.get(b) != rows_per_batch]
    assert not missing, f"acknowledged batches lost or partial after kill -9: {missing[:10]}"
    extra = set(counts) - set(acknowledged)
    in_flight = set(attempted) - set(acknowledged)
    assert extra <= in_flight, f"batches present that were never sent: {sorted(extra - in_flight)}"
    for b in extra:
        assert counts[b] == rows_per_batch, f"in-flight batch {b} is partial: {counts[b]} rows"
    conn.close()
