"""The `local()` table-valued function (Doris's LocalTableValuedFunction) through the wire:
CSV / csv_with_names / csv_schema / JSON / Parquet files under `user_files_secure_path`,
wildcards and comma lists, INSERT ... SELECT from it, DESC FUNCTION, Doris's property errors,
ADMIN only, and no path outside the secure directory is ever read."""

from __future__ import annotations

import datetime
import decimal
import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pymysql
import pytest

BE = "'backend_id' = '10001'"


@pytest.fixture(scope="module")
def files_server(tmp_path_factory):
    from server_process import ServerProcess
    base = tmp_path_factory.mktemp("local_tvf")
    files = base / "files"
    (files / "logs").mkdir(parents=True)
    (files / "orders.csv").write_bytes(b'1,"a, b",2024-01-02\n2,c,2024-01-03\n')
    (files / "named.csv").write_bytes(b"id|name\n7|x\n8|y\n")
    (files / "logs" / "d1.json").write_bytes(b'{"id": 1, "tag": "2024-01-05"}\n{"id": 2}\n')
    (files / "logs" / "d2.json").write_bytes(gzip.compress(b'{"id": 3, "tag": "t"}\n'))
    pq.write_table(pa.table({"k": pa.array([1, 2, 3], pa.int32()),
                             "amt": pa.array([decimal.Decimal("1.50"), None,
                                              decimal.Decimal("-2.25")], pa.decimal128(9, 2))}),
                   files / "p.parquet")
    (base / "secret.csv").write_bytes(b"top,secret\n")
    conf = base / "be.conf"
    conf.write_text(f"user_files_secure_path = {files}\n")
    proc = ServerProcess(base / "data", log_path=base / "server.log",
                         extra_args=("--config", str(conf)))
    proc.start()
    conn = proc.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE lt")
        cur.execute("""CREATE TABLE lt.t (id INT, name VARCHAR(10), dt DATE)
            DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2
            PROPERTIES ("replication_num" = "1")""")
        cur.execute("CREATE USER plain IDENTIFIED BY 'pw'")
        cur.execute("GRANT SELECT_PRIV, LOAD_PRIV ON *.* TO plain")
    conn.close()
    proc.files = files
    yield proc
    proc.stop()


def _rows(server, sql: str, **kw) -> list[tuple]:
    conn = server.connect("lt", **kw)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


def _error(server, sql: str, **kw) -> tuple[int, str]:
    with pytest.raises(pymysql.MySQLError) as e:
        _rows(server, sql, **kw)
    return e.value.args[0], e.value.args[1]


def test_csv_columns_and_insert_select(files_server):
    csv = f"local('file_path' = 'orders.csv', {BE}, 'column_separator' = ',', 'enclose' = '\"')"
    assert _rows(files_server, f"SELECT * FROM {csv} ORDER BY c1") == [
        ("1", "a, b", "2024-01-02"), ("2", "c", "2024-01-03")]
    _rows(files_server, f"INSERT INTO t SELECT c1, c2, c3 FROM {csv}")
    assert _rows(files_server, "SELECT id, name, dt FROM t ORDER BY id") == [
        (1, "a, b", datetime.date(2024, 1, 2)), (2, "c", datetime.date(2024, 1, 3))]
    typed = (f"local('file_path' = 'orders.csv', {BE}, 'column_separator' = ',', "
             f"'enclose' = '\"', 'csv_schema' = 'id:int;name:varchar(10);dt:date')")
    assert _rows(files_server, f"SELECT id + 1, dt FROM {typed} WHERE dt > '2024-01-02'") == [
        (3, datetime.date(2024, 1, 3))]
    assert _rows(files_server, f"DESC FUNCTION {typed}") == [
        ("id", "INT", "Yes", "false", None, ""), ("name", "VARCHAR(10)", "Yes", "false", None, ""),
        ("dt", "DATE", "Yes", "false", None, "")]
    named = f"local('file_path' = 'named.csv', {BE}, 'format' = 'csv_with_names', " \
            f"'column_separator' = '|')"
    assert _rows(files_server, f"SELECT name, id FROM {named} ORDER BY id") == [("x", "7"),
                                                                                ("y", "8")]


def test_json_parquet_wildcards(files_server):
    logs = f"local('file_path' = 'logs/d1.json', {BE}, 'format' = 'json', " \
           f"'read_json_by_line' = 'true')"
    assert _rows(files_server, f"SELECT id, tag FROM {logs} ORDER BY id") == [
        (1, "2024-01-05"), (2, None)]
    gz = f"local('file_path' = 'logs/d2*', {BE}, 'format' = 'json', " \
         f"'read_json_by_line' = 'true', 'compress_type' = 'gz')"
    assert _rows(files_server, f"SELECT id, tag FROM {gz}") == [(3, "t")]
    pqt = f"local('file_path' = 'p.parquet, p.parquet', {BE}, 'format' = 'parquet')"
    assert _rows(files_server, f"SELECT count(*), sum(amt), min(k) FROM {pqt}") == [
        (6, decimal.Decimal("-1.50"), 1)]
    assert _rows(files_server, f"DESC FUNCTION {pqt}") == [
        ("k", "INT", "Yes", "false", None, ""), ("amt", "DECIMAL(9, 2)", "Yes", "false", None, "")]


def test_errors_and_confinement(files_server):
    cases = {
        f"local('file_path' = 'orders.csv')": "Configuration 'backend_id' is required.",
        f"local({BE})": "Configuration 'file_path' is required.",
        "local('file_path' = 'orders.csv', 'backend_id' = '1')":
            "backend not found with backend_id = 1",
        f"local('file_path' = 'orders.csv', {BE}, 'path' = 'x')": "path is invalid property",
        f"local('file_path' = 'nothing.csv', {BE})": "file not found: nothing.csv",
        f"local('file_path' = 'none*.csv', {BE})": "No files match file_path: none*.csv",
        f"local('file_path' = '../secret.csv', {BE})": "is not under user_files_secure_path",
        f"local('file_path' = '/etc/passwd', {BE})": "is not under user_files_secure_path",
        f"local('file_path' = 'orders.csv', {BE}, 'format' = 'xml')": "format:xml is not supported",
    }
    for tvf, message in cases.items():
        code, text = _error(files_server, f"SELECT * FROM {tvf}")
        assert message in text, (tvf, text)
    code, text = _error(files_server, "SELECT * FROM s3('uri' = 's3://b/k')")
    assert code == 1235 and "s3 is not supported" in text
    code, text = _error(files_server, f"SELECT * FROM local('file_path' = 'orders.csv', {BE})",
                        user="plain", password="pw")
    assert code == 1227 and "ADMIN" in text
    code, text = _error(files_server, f"INSERT INTO t SELECT c1, c2, c3 FROM "
                                      f"local('file_path' = 'orders.csv', {BE})",
                        user="plain", password="pw")
    assert code == 1227
    assert _rows(files_server, "SELECT count(*) FROM t") == [(2,)]
