"""A login that names a database: an unknown one is refused in the handshake itself (1049,
SQLSTATE 42000, in place of the OK packet, as Doris's MysqlProto.negotiate), so every driver
reports it at connect time; the refused session is closed and holds no connection slot."""

from __future__ import annotations

import pymysql
import pytest

from server_process import connect, unique_name


def _processlist_users(server) -> list[str]:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW PROCESSLIST")
            return [r[2] for r in cur.fetchall()]
    finally:
        conn.close()


def test_unknown_database_at_login(server):
    user = unique_name("lg")
    root = server.connect()
    with root.cursor() as cur:
        cur.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
        cur.execute(f"GRANT SELECT_PRIV ON *.*.* TO '{user}'@'%'")
        cur.execute(f"SET PROPERTY FOR '{user}' 'max_user_connections' = '2'")
    for _ in range(3):
        with pytest.raises(pymysql.MySQLError) as e:
            connect(server.host, server.port, "no_such_db", user=user, password="pw")
        assert e.value.args[0] == 1049 and "Unknown database 'no_such_db'" in e.value.args[1]
    assert user not in _processlist_users(server)  # no session left behind
    conn = connect(server.host, server.port, "information_schema", user=user, password="pw")
    try:
        with conn.cursor() as cur:  # the limit of 2 was not used up by the refused logins
            cur.execute("SELECT DATABASE()")
            assert cur.fetchall() == (("information_schema",),)
    finally:
        conn.close()
    root.close()
