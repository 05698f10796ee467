"""SHOW TABLET <id> finds a tablet's table, partition and index; ADMIN SHOW REPLICA
DISTRIBUTION counts every replica once; both need ADMIN, as in Doris."""

from __future__ import annotations

import pymysql
import pytest

from server_process import connect, unique_name


def _run(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def test_show_tablet_and_replica_distribution(server):
    db = unique_name("srep")
    root = server.connect()
    _run(root, f"CREATE DATABASE {db}")
    _run(root, f"CREATE TABLE {db}.t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3 "
               "PROPERTIES ('replication_num' = '1')")
    _run(root, f"INSERT INTO {db}.t VALUES (1), (2), (3), (4)")
    tablets = [r[0] for r in _run(root, f"SHOW TABLETS FROM {db}.t")]
    assert len(tablets) == 3
    row = _run(root, f"SHOW TABLET {tablets[1]}")[0]
    assert row[:4] == (db, "t", "t", "t") and row[9] == "1"
    assert row[11].startswith("SHOW PROC '/dbs/") and row[11].endswith(f"/{tablets[1]}';")
    dist = _run(root, f"ADMIN SHOW REPLICA DISTRIBUTION FROM {db}.t")
    assert sum(int(r[1]) for r in dist) == 3
    sizes = sum(int(r[2]) for r in dist)
    skew = _run(root, f"SHOW DATA SKEW FROM {db}.t")
    assert sum(int(r[3]) for r in skew) == sizes and sum(int(r[2]) for r in skew) == 4
    status = _run(root, f"ADMIN SHOW REPLICA STATUS FROM {db}.t")
    assert sorted(int(r[0]) for r in status) == sorted(int(t) for t in tablets)
    assert {r[12] for r in status} == {"OK"}
    user = f"{db}_u"
    _run(root, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
    _run(root, f"GRANT SELECT_PRIV ON internal.{db}.* TO '{user}'@'%'")
    conn = connect(server.host, server.port, user=user, password="pw")
    try:
        for sql in (f"SHOW TABLET {tablets[0]}", f"ADMIN SHOW REPLICA STATUS FROM {db}.t"):
            with pytest.raises(pymysql.MySQLError) as e:
                _run(conn, sql)
            assert e.value.args[0] == 1227, e.value.args
    finally:
        conn.close()
        root.close()
