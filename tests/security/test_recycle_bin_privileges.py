"""Who may use the recycle bin, as Doris checks it: RECOVER TABLE / PARTITION need ALTER or
CREATE (or ADMIN) on the table (RecoverTableCommand: PrivPredicate.ALTER_CREATE, 1142
"RECOVERY command denied"), RECOVER DATABASE the same on the database (1044), SHOW and DROP
CATALOG RECYCLE BIN need ADMIN (1227). A refused statement changes nothing."""

from __future__ import annotations

import pymysql
import pytest

from server_process import connect, unique_name

TABLE = ("(k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN "
         "(10), PARTITION p2 VALUES LESS THAN (20)) DISTRIBUTED BY HASH(k) BUCKETS 1 "
         "PROPERTIES ('replication_num' = '1')")


def _run(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def _refused(conn, sql: str, errno: int, text: str) -> None:
    with pytest.raises(pymysql.MySQLError) as e:
        _run(conn, sql)
    assert e.value.args[0] == errno and text in e.value.args[1], e.value.args


def test_recycle_bin_privileges(server):
    db = unique_name("rbp")
    root = server.connect()
    _run(root, f"CREATE DATABASE {db}")
    _run(root, f"CREATE TABLE {db}.t {TABLE}")
    _run(root, f"ALTER TABLE {db}.t DROP PARTITION p1")
    _run(root, f"DROP TABLE {db}.t")
    _run(root, f"CREATE DATABASE {db}_x")
    _run(root, f"DROP DATABASE {db}_x")
    user = f"{db}_u"
    _run(root, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
    _run(root, f"GRANT SELECT_PRIV, DROP_PRIV ON internal.{db}.* TO '{user}'@'%'")
    conn = connect(server.host, server.port, user=user, password="pw")
    try:
        _refused(conn, f"RECOVER TABLE {db}.t", 1142,
                 f"RECOVERY command denied to user '{user}'")
        _refused(conn, f"RECOVER DATABASE {db}_x", 1044, f"Access denied for user '{user}'")
        _refused(conn, "SHOW CATALOG RECYCLE BIN", 1227, "(ADMIN)")
        _refused(conn, "DROP CATALOG RECYCLE BIN WHERE 'DbId' = 1", 1227, "(ADMIN)")
        assert _run(root, f"SHOW CATALOG RECYCLE BIN WHERE NAME = '{db}_x'")  # still there
        _run(root, f"GRANT CREATE_PRIV ON internal.{db}.* TO '{user}'@'%'")
        _run(conn, f"RECOVER TABLE {db}.t")  # CREATE on the database suffices
        _refused(conn, f"RECOVER DATABASE {db}_x", 1044, f"Access denied for user '{user}'")
        _run(root, f"REVOKE CREATE_PRIV ON internal.{db}.* FROM '{user}'@'%'")
        _refused(conn, f"RECOVER PARTITION p1 FROM {db}.t", 1142, "RECOVERY command denied")
        _run(root, f"GRANT ALTER_PRIV ON internal.{db}.t TO '{user}'@'%'")
        _run(conn, f"RECOVER PARTITION p1 FROM {db}.t")  # ALTER on the table suffices
        _run(root, f"GRANT ALTER_PRIV ON internal.{db}_x.* TO '{user}'@'%'")
        _run(conn, f"RECOVER DATABASE {db}_x")
    finally:
        conn.close()
        _run(root, f"DROP USER '{user}'@'%'")
        _run(root, f"DROP DATABASE IF EXISTS {db} FORCE")
        _run(root, f"DROP DATABASE IF EXISTS {db}_x FORCE")
        root.close()
