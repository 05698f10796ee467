"""JDBC (MariaDB Connector/J, Debian's libmariadb-java) against the server: connect, metadata,
typed results, updates, client-side prepared statements with quoting, DatabaseMetaData through
information_schema. Spark JDBC reads use the same driver and the same code paths."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.clients.jdbc_support import JAR, require_java

SOURCE = Path(__file__).parent / "java" / "JdbcClient.java"
_require_java = require_java


@pytest.fixture(scope="module")
def jdbc_client(tmp_path_factory):
    _require_java()
    out = tmp_path_factory.mktemp("jdbc")
    subprocess.run(["javac", "-cp", str(JAR), "-d", str(out), str(SOURCE)], check=True)

    def run(url: str, *statements: str) -> list[str]:
        proc = subprocess.run(["java", "-cp", f"{JAR}:{out}", "JdbcClient", url, *statements],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout.splitlines()
    return run


def test_jdbc_queries_metadata_and_updates(server, fresh_db, jdbc_client):
    url = f"jdbc:mysql://{server.host}:{server.port}/{fresh_db}?user=root"
    lines = jdbc_client(
        url,
        "CREATE TABLE t (k INT, name VARCHAR(20), amount DECIMAL(10, 2), d DATE) "
        "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')",
        "INSERT INTO t VALUES (1, 'it''s', 1.50, '2024-01-02'), (2, 'b', NULL, NULL)",
        "SELECT k, name, amount, d FROM t ORDER BY k",
        "SELECT count(*) AS n, sum(amount) AS s FROM t",
        "prepared:SELECT k FROM t WHERE name = ? AND k >= ?",
        f"tables:{fresh_db}",
        f"columns:{fresh_db}.t",
    )
    assert lines[0] == "product=MySQL 5.7.99"
    assert lines[1] == "update=0"
    assert lines[2] == "update=2"
    assert lines[3] == "k:INTEGER\tname:VARCHAR\tamount:DECIMAL\td:DATE"
    assert lines[4:6] == ["1\tit's\t1.50\t2024-01-02", "2\tb\tnull\tnull"]
    assert lines[6] == "n:BIGINT\ts:DECIMAL"
    assert lines[7] == "2\t1.50"
    assert lines[8:10] == ["k:INTEGER", "1"]
    assert "table=t" in lines
    assert [x for x in lines if x.startswith("column=")] == [
        "column=k INT", "column=name VARCHAR", "column=amount DECIMAL", "column=d DATE"]


def test_jdbc_server_prepared_statement_metadata(server, fresh_db, jdbc_client):
    """useServerPrepStmts=true (BI tools, Spark): COM_STMT_PREPARE of a SELECT carries the result's
    column definitions, so ResultSetMetaData is known before execute; a bad query fails."""
    url = f"jdbc:mysql://{server.host}:{server.port}/{fresh_db}?user=root&useServerPrepStmts=true"
    lines = jdbc_client(
        url,
        "CREATE TABLE p (k INT, name VARCHAR(20), amount DECIMAL(10, 2), ts DATETIME(3)) "
        "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')",
        "INSERT INTO p VALUES (1, 'it''s', 1.50, '2024-01-02 03:04:05.123'), (2, 'b', NULL, NULL)",
        "describe:SELECT k, name, amount, ts, k + 1 AS k1 FROM p WHERE name = ? ORDER BY k",
        "describe:SELECT count(*) AS n FROM p WHERE name <> ?",
    )
    # VARCHAR(20) is 80 bytes of utf8mb4 in the column definition
    assert lines[3] == ("described=k:INTEGER(11,0)\tname:VARCHAR(80,0)\tamount:DECIMAL(10,2)\t"
                        "ts:DATETIME(23,3)\tk1:BIGINT(20,0)")
    assert lines[4:6] == ["k:INTEGER\tname:VARCHAR\tamount:DECIMAL\tts:DATETIME\tk1:BIGINT",
                          "1\tit's\t1.50\t2024-01-02 03:04:05.123\t2"]
    assert lines[6] == "described=n:BIGINT(20,0)"
    assert lines[7:9] == ["n:BIGINT", "1"]


def test_jdbc_server_prepared_key_lookup(server, fresh_db, jdbc_client):
    """A key lookup through Connector/J's server-side prepared statements (answered in the
    socket's callback: server/protocol/fast_commands.py) returns what the text protocol does,
    before and after a row is added under the same key."""
    url = f"jdbc:mysql://{server.host}:{server.port}/{fresh_db}?user=root&useServerPrepStmts=true"
    lookup = "SELECT k, name, amount FROM u WHERE name = ? AND k = ?"
    lines = jdbc_client(
        url,
        "CREATE TABLE u (name VARCHAR(20), k INT, amount DECIMAL(10, 2)) "
        "DUPLICATE KEY(name, k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
        "PROPERTIES ('replication_num' = '1')",
        "INSERT INTO u VALUES ('it''s', 1, 1.50), ('it''s', 2, 2.50), ('b', 1, NULL)",
        f"prepared:{lookup}",
        "SELECT k, name, amount FROM u WHERE name = 'it''s' AND k = 1",
        "INSERT INTO u VALUES ('it''s', 1, 7.25)",
        f"prepared:{lookup}",
    )
    assert lines[2] == "update=3"
    assert lines[3:5] == ["k:INTEGER\tname:VARCHAR\tamount:DECIMAL", "1\tit's\t1.50"]
    assert lines[5:7] == lines[3:5]  # the text protocol's answer
    assert lines[7] == "update=1"
    assert lines[8] == lines[3] and sorted(lines[9:11]) == ["1\tit's\t1.50", "1\tit's\t7.25"]
