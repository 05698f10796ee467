"""Server-side prepared statements (COM_STMT_PREPARE/EXECUTE) with mysql-connector-python:
parameters of every common type are bound as quoted literals (no injection, `it's` works), DML
reports its affected rows, results come back in the binary protocol with their types."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import mysql.connector


def test_prepared_statements_round_trip(server, fresh_db):
    conn = mysql.connector.connect(host=server.host, port=server.port, user="root",
                                   database=fresh_db, use_pure=True)
    try:
        plain = conn.cursor()
        plain.execute("CREATE TABLE p (k INT, s VARCHAR(40), d DATE, t DATETIME, x DECIMAL(10, 2), "
                      "f DOUBLE) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                      "PROPERTIES ('replication_num' = '1')")
        cur = conn.cursor(prepared=True)
        row = (1, "it's; DROP TABLE p; --", dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5),
               Decimal("12.50"), 0.25)
        cur.execute("INSERT INTO p VALUES (?, ?, ?, ?, ?, ?)", row)
        assert cur.rowcount == 1
        cur.execute("INSERT INTO p VALUES (?, ?, ?, ?, ?, ?)", (2, None, None, None, None, None))
        cur.execute("SELECT k, s, d, t, x, f FROM p WHERE k >= ? ORDER BY k", (1,))
        rows = cur.fetchall()
        assert rows[0] == row
        assert rows[1] == (2, None, None, None, None, None)
        cur.execute("SELECT count(*) FROM p WHERE s = ?", ("it's; DROP TABLE p; --",))
        assert cur.fetchall() == [(1,)]
    finally:
        conn.close()
