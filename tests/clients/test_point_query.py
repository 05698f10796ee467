"""Short-circuit key lookups through the wire (server/short_circuit.py): text and prepared
(COM_STMT_PREPARE/EXECUTE) lookups with parameters of several types return what the general
path returns (enable_short_circuit_query = false), result metadata included; a user without
SELECT gets Doris's error from the lookup, also after a cached check (GRANT, then REVOKE)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import mysql.connector
import pymysql

from server_process import unique_name

LOOKUPS = [  # (text with %s marks, parameters)
    ("SELECT * FROM pq WHERE k = %s", (1,)),
    ("SELECT * FROM pq WHERE k = %s", (-3,)),
    ("SELECT * FROM pq WHERE k = %s", (12345,)),           # missing
    ("SELECT * FROM pq WHERE k = %s", (None,)),            # NULL never equals
    ("SELECT s, d FROM pq WHERE k = %s AND s = %s", (1, "a")),
    ("SELECT s, d FROM pq WHERE k = %s AND s = %s", (1, "it's")),
    ("SELECT * FROM pq WHERE k = %s AND s = %s AND d = %s", (2, "b", dt.date(2024, 1, 2))),
    ("SELECT x, t FROM pq WHERE k = %s AND s = %s", (2, "b")),
    ("SELECT * FROM pq WHERE k = %s", (Decimal("1"),)),
]


def _setup(cur) -> None:
    cur.execute("CREATE TABLE pq (k INT, s VARCHAR(20), d DATE, x DECIMAL(10, 2), t DATETIME) "
                "UNIQUE KEY(k, s, d) DISTRIBUTED BY HASH(k) BUCKETS 4 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO pq VALUES (1, 'a', '2024-01-01', 1.50, '2024-01-01 10:00:00'), "
                "(1, 'it''s', NULL, NULL, NULL), (2, 'b', '2024-01-02', 99.99, NULL), "
                "(-3, 'neg', '2023-12-31', -1.00, '2023-12-31 23:59:59'), (NULL, 'n', NULL, 0, NULL)")
    cur.execute("INSERT INTO pq VALUES (2, 'b', '2024-01-02', 100.01, '2024-05-05 05:05:05')")


def _answers(conn, prepared: bool) -> list:
    out = []
    for sql, params in LOOKUPS:
        cur = conn.cursor(prepared=prepared)
        cur.execute(sql.replace("%s", "?") if prepared else sql, params)
        rows = cur.fetchall()
        out.append((sql, params, rows, [d[:2] for d in cur.description]))
        cur.close()
    return out


def test_lookups_equal_the_general_path(server, fresh_db):
    conn = mysql.connector.connect(host=server.host, port=server.port, user="root",
                                   database=fresh_db, use_pure=True, autocommit=True)
    try:
        _setup(conn.cursor())
        answers = {p: _answers(conn, p) for p in (False, True)}
        conn.cursor().execute("SET enable_short_circuit_query = false")
        general = {p: _answers(conn, p) for p in (False, True)}
    finally:
        conn.close()
    for prepared in (False, True):
        for got, expected in zip(answers[prepared], general[prepared]):
            assert got == expected, (prepared, got, expected)
    by_sql = {(s, p): rows for s, p, rows, _ in answers[True]}
    assert by_sql[LOOKUPS[0]] == [(1, "a", dt.date(2024, 1, 1), Decimal("1.50"),
                                   dt.datetime(2024, 1, 1, 10)), (1, "it's", None, None, None)]
    assert by_sql[LOOKUPS[7]] == [(Decimal("100.01"), dt.datetime(2024, 5, 5, 5, 5, 5))]
    assert by_sql[LOOKUPS[2]] == [] and by_sql[LOOKUPS[3]] == []


def _q(conn, sql: str) -> list:
    with conn.cursor() as cur:
        cur.execute(sql)
        return list(cur.fetchall())


def test_privileges_are_checked_on_the_short_path(server):
    root = server.connect()
    u, db = unique_name("pu"), unique_name("pdb")
    _q(root, f"CREATE DATABASE {db}")
    _q(root, f"CREATE TABLE {db}.t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) "
             "BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    _q(root, f"INSERT INTO {db}.t VALUES (1, 10)")
    _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 'pw'")
    conn = pymysql.connect(host=server.host, port=server.port, user=u, password="pw",
                           autocommit=True)
    lookup = f"SELECT * FROM {db}.t WHERE k = 1"
    denied = (1142, f"errCode = 2, detailMessage = SELECT command denied to user "
                    f"'{u}'@'127.0.0.1' for table 'internal: {db}: t'")
    try:
        for _ in range(2):  # the second time after a (refused) check
            try:
                _q(conn, lookup)
                raise AssertionError("expected a refusal")
            except pymysql.MySQLError as e:
                assert e.args[:2] == denied
        _q(root, f"GRANT SELECT_PRIV ON {db}.t TO '{u}'@'%'")
        assert _q(conn, lookup) == [(1, 10)]
        assert _q(conn, lookup) == [(1, 10)]  # the passed check is remembered
        _q(root, f"REVOKE SELECT_PRIV ON {db}.t FROM '{u}'@'%'")
        try:
            _q(conn, lookup)
            raise AssertionError("expected a refusal after REVOKE")
        except pymysql.MySQLError as e:
            assert e.args[:2] == denied
    finally:
        conn.close()
        _q(root, f"DROP USER '{u}'@'%'")
        _q(root, f"DROP DATABASE {db}")
        root.close()
