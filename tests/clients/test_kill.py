"""SHOW PROCESSLIST lists every connection; KILL QUERY stops another session's statement;
KILL [CONNECTION] closes it; an unknown id is error 1094, as in Doris and MySQL."""

from __future__ import annotations

import pymysql
import pymysql.cursors
import pytest


def _one(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


@pytest.fixture
def big_table(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE big (k BIGINT, v VARCHAR(20)) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO big VALUES " + ", ".join(f"({i}, 'row {i}')" for i in range(20000)))
        for _ in range(4):
            cur.execute("INSERT INTO big SELECT k + (SELECT max(k) + 1 FROM big), v FROM big")
    conn.close()
    return fresh_db


def test_processlist_shows_other_connections(server, fresh_db):
    a, b = server.connect(fresh_db), server.connect()
    try:
        a_id = _one(a, "SELECT CONNECTION_ID()")[0][0]
        rows = {int(r[1]): r for r in _one(b, "SHOW PROCESSLIST")}
        assert a_id in rows
        assert rows[a_id][0] == "No" and rows[a_id][6] == fresh_db and rows[a_id][7] == "Sleep"
        me = [r for r in rows.values() if r[0] == "Yes"]
        assert len(me) == 1 and me[0][11] == "SHOW PROCESSLIST"
    finally:
        a.close()
        b.close()


def _kill_while_reading(server, db: str, sql: str) -> tuple[int, int]:
    """Read `sql` row by row on one connection and KILL QUERY it from another after 100 rows:
    (the error number the reader got, rows it had seen). The reader stays usable."""
    a = server.connect(db, cursorclass=pymysql.cursors.SSCursor)
    b = server.connect()
    try:
        a_id = _one(a, "SELECT CONNECTION_ID()")[0][0]
        cur = a.cursor()
        cur.execute(sql)
        seen = 0
        with pytest.raises(pymysql.err.OperationalError) as err:
            for seen, _ in enumerate(cur, 1):
                if seen == 100:
                    _one(b, f"KILL QUERY {a_id}")
        assert list(_one(a, "SELECT 1")) == [(1,)]  # the connection stays usable
        return err.value.args[0], seen
    finally:
        a.close()
        b.close()


def test_kill_query_stops_a_streaming_result(server, big_table):
    code, seen = _kill_while_reading(server, big_table, "SELECT * FROM big WHERE k >= 0")
    assert code == 1317
    assert 100 <= seen < 320000


def test_kill_connection_and_unknown_id(server):
    a, b = server.connect(), server.connect()
    try:
        a_id = _one(a, "SELECT CONNECTION_ID()")[0][0]
        with pytest.raises(pymysql.err.MySQLError) as err:
            _one(b, "KILL 4242424242")
        assert err.value.args[0] == 1094 and "Unknown thread id" in err.value.args[1]
        _one(b, f"KILL {a_id}")
        with pytest.raises(pymysql.err.OperationalError):
            _one(a, "SELECT 1")
        ids = {int(r[1]) for r in _one(b, "SHOW PROCESSLIST")}
        assert a_id not in ids
    finally:
        b.close()


def test_kill_query_stops_a_materialised_result(server, big_table):
    code, seen = _kill_while_reading(
        server, big_table, "SELECT k, v FROM big UNION ALL SELECT k, v FROM big ORDER BY k")
    assert code == 1317
    assert seen < 640000


def test_kill_query_aborts_an_insert_select_whole(server, big_table):
    """KILL QUERY of a running INSERT ... SELECT aborts the load: error 1317, no row of it."""
    import threading
    import time
    conn, killer = server.connect(big_table), server.connect(big_table)
    _one(conn, "CREATE TABLE big2 (k BIGINT, v VARCHAR(20)) DUPLICATE KEY(k) "
               "DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ('replication_num' = '1')")
    victim = _one(conn, "SELECT CONNECTION_ID()")[0][0]
    outcome: list = []

    def run():
        try:
            _one(conn, "INSERT INTO big2 SELECT b1.k * 100 + b2.k, b1.v FROM big b1 "
                       "CROSS JOIN (SELECT k FROM big WHERE k < 40) b2")
            outcome.append("finished")
        except pymysql.MySQLError as e:
            outcome.append(e.args[0])
    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # wait until the INSERT is running
        rows = _one(killer, "SHOW PROCESSLIST")
        if any(int(r[1]) == victim and "INSERT" in (r[11] or "") for r in rows):
            break
        time.sleep(0.05)
    time.sleep(0.3)
    _one(killer, f"KILL QUERY {victim}")
    t.join(timeout=120)
    assert outcome == [1317], outcome
    assert _one(killer, "SELECT count(*) FROM big2")[0][0] == 0
    killer.close()
    conn.close()
