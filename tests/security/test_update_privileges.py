"""UPDATE needs LOAD on its table (Doris runs it as INSERT INTO t SELECT ... FROM t) and
SELECT on every table it reads, the target included; a refused UPDATE changes nothing."""

from __future__ import annotations

import pymysql
import pytest

from server_process import connect, unique_name

TABLE = ("(k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
         "PROPERTIES ('replication_num' = '1')")


def _run(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def _setup(server, prefix: str, privileges: str):
    """A database with tables t (1, 10), (2, 20) and src (1, 5), and a user holding
    `privileges` on t: (db, user, root's connection, the user's connection)."""
    db = unique_name(prefix)
    root = server.connect()
    _run(root, f"CREATE DATABASE {db}")
    _run(root, f"CREATE TABLE {db}.t {TABLE}")
    _run(root, f"CREATE TABLE {db}.src {TABLE}")
    _run(root, f"INSERT INTO {db}.t VALUES (1, 10), (2, 20)")
    _run(root, f"INSERT INTO {db}.src VALUES (1, 5)")
    user = f"{db}_u"
    _run(root, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
    _run(root, f"GRANT {privileges} ON internal.{db}.t TO '{user}'@'%'")
    return db, user, root, connect(server.host, server.port, user=user, password="pw")


def test_update_needs_load_and_select(server):
    db, user, root, conn = _setup(server, "upp", "SELECT_PRIV")
    try:
        with pytest.raises(pymysql.MySQLError) as e:
            _run(conn, f"UPDATE {db}.t SET v = 0 WHERE k = 1")
        assert e.value.args[0] == 1142 and "LOAD command denied" in e.value.args[1], e.value.args
        _run(root, f"GRANT LOAD_PRIV ON internal.{db}.t TO '{user}'@'%'")
        _run(conn, f"UPDATE {db}.t SET v = 0 WHERE k = 1")
        with pytest.raises(pymysql.MySQLError) as e:  # reads src without SELECT on it
            _run(conn, f"UPDATE {db}.t SET v = {db}.src.v FROM {db}.src WHERE t.k = src.k")
        assert e.value.args[0] == 1142 and "SELECT command denied" in e.value.args[1], \
            e.value.args
        assert _run(root, f"SELECT k, v FROM {db}.t ORDER BY k") == ((1, 0), (2, 20))
    finally:
        conn.close()
        root.close()


def test_delete_of_selected_rows_needs_select_on_what_it_reads(server):
    """DELETE ... USING (and a DELETE whose WHERE has a subquery) is an INSERT ... SELECT in
    Doris: LOAD on the target, SELECT on the target and on every table it reads."""
    db, user, root, conn = _setup(server, "delp", "SELECT_PRIV, LOAD_PRIV")
    try:
        for sql in (f"DELETE FROM {db}.t USING {db}.src WHERE t.k = src.k",
                    f"DELETE FROM {db}.t WHERE k IN (SELECT k FROM {db}.src)"):
            with pytest.raises(pymysql.MySQLError) as e:
                _run(conn, sql)
            assert e.value.args[0] == 1142 and "SELECT command denied" in e.value.args[1], \
                e.value.args
        assert _run(root, f"SELECT k, v FROM {db}.t ORDER BY k") == ((1, 10), (2, 20))
        _run(root, f"GRANT SELECT_PRIV ON internal.{db}.src TO '{user}'@'%'")
        _run(conn, f"DELETE FROM {db}.t USING {db}.src WHERE t.k = src.k")
        assert _run(root, f"SELECT k, v FROM {db}.t ORDER BY k") == ((2, 20),)
    finally:
        conn.close()
        root.close()
