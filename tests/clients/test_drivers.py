"""Python drivers over the wire: PyMySQL and MySQL Connector/Python (pure-Python protocol).

Each driver connects as a BI tool or an application would, runs the statements such clients send
on their own (DATABASE(), SHOW VARIABLES, SET NAMES, SET autocommit, SHOW WARNINGS), then DDL,
INSERT and SELECT, and reads typed values back: int, Decimal, date, datetime, str, None.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

import mysql.connector
import pymysql
import pytest

from server_process import unique_name


def connect_pymysql(server):
    return pymysql.connect(
        host=server.host, port=server.port, user="root", password="", charset="utf8mb4",
        autocommit=True, connect_timeout=10, read_timeout=60,
    )


def connect_connector(server):
    return mysql.connector.connect(
        host=server.host, port=server.port, user="root", password="", use_pure=True,
        autocommit=True, connection_timeout=10,
    )


DRIVERS = {"pymysql": connect_pymysql, "mysql-connector": connect_connector}


@pytest.fixture(params=sorted(DRIVERS))
def conn(request, server):
    c = DRIVERS[request.param](server)
    yield c
    c.close()


def rows(conn, sql, params=None):
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        return list(cur.fetchall()) if cur.description else []
    finally:
        cur.close()


def test_session_statements(conn):
    # No database selected: MySQL says NULL; Doris's FE keeps an empty current database.
    assert rows(conn, "SELECT DATABASE()") in ([(None,)], [("",)])
    variables = {r[0]: r[1] for r in rows(conn, "SHOW VARIABLES LIKE 'version%'")}
    assert "version" in variables and "version_comment" in variables, variables
    assert rows(conn, "SET NAMES utf8mb4") == []
    assert rows(conn, "SET autocommit=1") == []
    assert rows(conn, "SELECT @@autocommit") == [(1,)]
    warnings = rows(conn, "SHOW WARNINGS")
    assert isinstance(warnings, list)


def test_use_database(conn, server):
    db = unique_name("drv")
    try:
        rows(conn, f"CREATE DATABASE {db}")
        rows(conn, f"USE {db}")
        assert rows(conn, "SELECT DATABASE()") == [(db,)]
        assert rows(conn, "SHOW TABLES") == []
    finally:
        rows(conn, f"DROP DATABASE IF EXISTS {db}")


def test_ddl_insert_select_typed_values(conn):
    db = unique_name("drv")
    try:
        rows(conn, f"CREATE DATABASE {db}")
        rows(conn, f"USE {db}")
        rows(conn, """
            CREATE TABLE typed (
                id INT NOT NULL,
                big BIGINT,
                price DECIMAL(10, 2),
                day DATE,
                ts DATETIME,
                name VARCHAR(20),
                note STRING
            )
            DUPLICATE KEY(id)
            DISTRIBUTED BY HASH(id) BUCKETS 1
            PROPERTIES ("replication_num" = "1")
        """)
        cur = conn.cursor()
        cur.execute(
            "INSERT INTO typed VALUES "
            "(1, 9007199254740993, 12.34, '2024-02-29', '2024-02-29 23:59:58', '北京', 'x'), "
            "(2, NULL, NULL, NULL, NULL, NULL, NULL)"
        )
        assert cur.rowcount == 2
        cur.close()
        got = rows(conn, "SELECT id, big, price, day, ts, name, note FROM typed ORDER BY id")
        assert got == [
            (1, 9007199254740993, Decimal("12.34"), datetime.date(2024, 2, 29),
             datetime.datetime(2024, 2, 29, 23, 59, 58), "北京", "x"),
            (2, None, None, None, None, None, None),
        ]
        one = got[0]
        assert [type(v) for v in one] == [int, int, Decimal, datetime.date, datetime.datetime, str, str]
        # Client-side parameter interpolation, as both drivers do it.
        assert rows(conn, "SELECT name FROM typed WHERE id = %s", (1,)) == [("北京",)]
        cur = conn.cursor()
        cur.execute("SELECT id, price FROM typed WHERE id = 1")
        assert [d[0] for d in cur.description] == ["id", "price"]
        cur.fetchall()
        cur.close()
    finally:
        rows(conn, f"DROP DATABASE IF EXISTS {db}")


def test_error_keeps_connection_usable(conn):
    error_class = pymysql.err.MySQLError if isinstance(conn, pymysql.connections.Connection) else mysql.connector.Error
    with pytest.raises(error_class) as info:
        rows(conn, "USE nope_driver_db")
    errno = info.value.args[0] if isinstance(conn, pymysql.connections.Connection) else info.value.errno
    assert errno == 1049
    assert rows(conn, "SELECT 1") == [(1,)]


def test_show_create_table_round_trip(server, fresh_db):
    """SHOW CREATE TABLE prints a statement that recreates the same table."""
    conn = server.connect(fresh_db)
    try:
        with conn.cursor() as cur:
            cur.execute("""
                CREATE TABLE rt (
                    `user_id` LARGEINT NOT NULL COMMENT "用户id",
                    `date` DATE NOT NULL,
                    `city` VARCHAR(20),
                    `cost` BIGINT SUM DEFAULT "0",
                    `last` DATETIME REPLACE
                )
                AGGREGATE KEY(`user_id`, `date`, `city`)
                DISTRIBUTED BY HASH(`user_id`) BUCKETS 2
                PROPERTIES ("replication_num" = "1")
            """)
            cur.execute("SHOW CREATE TABLE rt")
            assert [d[0] for d in cur.description] == ["Table", "Create Table"]
            (name, first), = cur.fetchall()
            assert name == "rt"
            cur.execute("DROP TABLE rt")
            cur.execute(first)
            cur.execute("SHOW CREATE TABLE rt")
            (_, second), = cur.fetchall()
            assert second == first
            cur.execute("INSERT INTO rt VALUES (1, '2024-01-01', 'x', 5, '2024-01-01 00:00:00'), "
                        "(1, '2024-01-01', 'x', 6, '2024-01-02 00:00:00')")
            cur.execute("SELECT cost, `last` FROM rt")
            assert cur.fetchall() == ((11, datetime.datetime(2024, 1, 2)),)
    finally:
        conn.close()
