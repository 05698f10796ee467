"""ODBC: MariaDB Connector/ODBC (Debian's odbc-mariadb, under unixODBC) through pyodbc, the path
of Tableau, Power BI, Excel and other ODBC tools.

At connect the driver sets MySQL's session-tracking variables (`SET session_track_schema= ON;
SET session_track_system_variables='autocommit,...'`); then DDL, INSERT, SELECT, statements
with parameters, result metadata (SQLDescribeCol), SQLTables, and an error that leaves the
connection usable.
"""

from __future__ import annotations

import datetime
import os
from decimal import Decimal

import pytest

DRIVER = "MariaDB Unicode"  # the name odbc-mariadb registers in /etc/odbcinst.ini


@pytest.fixture(scope="module")
def pyodbc():
    try:
        import pyodbc as module
    except ImportError:
        module = None
    if module is None or DRIVER not in module.drivers():
        if os.environ.get("CI"):
            pytest.fail("ODBC test needs pyodbc and odbc-mariadb in CI (.ci/run installs them)")
        pytest.skip("pyodbc or MariaDB Connector/ODBC missing (apt-get install odbc-mariadb unixodbc-dev)")
    return module


def connect(pyodbc, server, db: str = ""):
    return pyodbc.connect(f"DRIVER={{{DRIVER}}};SERVER={server.host};PORT={server.port};"
                          f"UID=root;PWD=;DATABASE={db}", autocommit=True, timeout=10)


def test_odbc_ddl_load_query_metadata(pyodbc, server, fresh_db):
    conn = connect(pyodbc, server, fresh_db)
    cur = conn.cursor()
    cur.execute("CREATE TABLE o (k INT, name VARCHAR(20), amount DECIMAL(10, 2), d DATE, "
                "ts DATETIME) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO o VALUES (1, 'it''s', 1.50, '2024-01-02', '2024-01-02 03:04:05'), "
                "(2, 'b', NULL, NULL, NULL)")
    cur.execute("SELECT k, name, amount, d, ts FROM o ORDER BY k")
    assert [c[0] for c in cur.description] == ["k", "name", "amount", "d", "ts"]
    assert [c[1] for c in cur.description] == [int, str, Decimal, datetime.date, datetime.datetime]
    assert cur.description[2][4:6] == (10, 2)  # DECIMAL(10, 2): precision, scale
    assert [tuple(r) for r in cur.fetchall()] == [
        (1, "it's", Decimal("1.50"), datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5)),
        (2, "b", None, None, None)]
    cur.execute("INSERT INTO o (k, name, amount) VALUES (?, ?, ?)", 3, "q'uote", Decimal("2.25"))
    cur.execute("SELECT k, name, amount FROM o WHERE name = ? AND k > ?", "q'uote", 1)
    assert [tuple(r) for r in cur.fetchall()] == [(3, "q'uote", Decimal("2.25"))]
    assert "o" in [t.table_name for t in cur.tables(tableType="TABLE")]
    with pytest.raises(pyodbc.Error, match="Unknown column 'nope'"):
        cur.execute("SELECT nope FROM o")
    cur.execute("SELECT count(*) FROM o")  # the connection outlived the error
    assert cur.fetchone()[0] == 3
    conn.close()


def test_odbc_session_tracking_variables(pyodbc, server):
    conn = connect(pyodbc, server)
    cur = conn.cursor()
    cur.execute("SELECT @@session_track_schema, @@autocommit")
    assert tuple(cur.fetchone()) == (1, 1)
    conn.close()
