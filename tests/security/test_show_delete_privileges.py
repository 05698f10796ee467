"""SHOW DELETE lists a DELETE only to users who may LOAD into its table (DeleteHandler
.getDeleteInfosByDb checks PrivPredicate.LOAD per record); the statement itself needs some
privilege on the database (1044 otherwise)."""

from __future__ import annotations

import pymysql
import pytest

from server_process import connect, unique_name

TABLE = ("(k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
         "PROPERTIES ('replication_num' = '1')")


def _run(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def test_show_delete_lists_loadable_tables_only(server):
    db = unique_name("sdp")
    root = server.connect()
    _run(root, f"CREATE DATABASE {db}")
    _run(root, f"CREATE TABLE {db}.b {TABLE}")
    _run(root, f"CREATE TABLE {db}.a {TABLE}")
    for t in ("b", "a"):
        _run(root, f"INSERT INTO {db}.{t} VALUES (1, 1), (2, 2)")
        _run(root, f"DELETE FROM {db}.{t} WHERE k = 1")
    assert [r[0] for r in _run(root, f"SHOW DELETE FROM {db}")] == ["b", "a"]
    user = f"{db}_u"
    _run(root, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
    conn = connect(server.host, server.port, user=user, password="pw")
    try:
        with pytest.raises(pymysql.MySQLError) as e:
            _run(conn, f"SHOW DELETE FROM {db}")
        assert e.value.args[0] == 1044
        _run(root, f"GRANT SELECT_PRIV ON internal.{db}.* TO '{user}'@'%'")
        assert _run(conn, f"SHOW DELETE FROM {db}") == ()
        _run(root, f"GRANT LOAD_PRIV ON internal.{db}.a TO '{user}'@'%'")
        rows = _run(conn, f"SHOW DELETE FROM {db}")
        assert [(r[0], r[1], r[3], r[4]) for r in rows] == [("a", "*", 'k EQ "1"', "FINISHED")]
    finally:
        conn.close()
