"""Stream Load over HTTP, as Doris users run it: `curl -u root: -T data.csv .../_stream_load`.

Each test checks Doris's JSON reply and then the table through the MySQL protocol: filtered
rows and the filter ratio, labels taken once (also after a restart), column mappings with
derived columns and WHERE, JSON bodies, chunked bodies, and auth.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from datetime import date
from decimal import Decimal

import pytest


def _put(server, db: str, table: str, body: bytes, headers: dict | None = None,
         auth: str | None = "root:", chunked: bool = False) -> tuple[int, dict]:
    url = f"http://127.0.0.1:{server.http_port}/api/{db}/{table}/_stream_load"
    h = dict(headers or {})
    if auth is not None:
        h["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    data = iter([body[: len(body) // 2], body[len(body) // 2:]]) if chunked else body
    if chunked:
        h["Transfer-Encoding"] = "chunked"
    req = urllib.request.Request(url, data=data, method="PUT", headers=h)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _rows(server, db: str, sql: str) -> list[tuple]:
    conn = server.connect(db)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


@pytest.fixture
def sl_table(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE sl (k INT NOT NULL, name VARCHAR(5), dt DATE, amt DECIMAL(10, 2))
            DUPLICATE KEY(k) PARTITION BY RANGE(dt) (PARTITION p2020 VALUES LESS THAN ("2021-01-01"),
            PARTITION p2021 VALUES LESS THAN ("2022-01-01"))
            DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1")""")
    conn.close()
    return fresh_db


BAD_CSV = (b"1,abc,2020-01-01,1.5\n"
           b"2,toolongname,2020-02-01,2\n"      # VARCHAR(5) overflow: filtered
           b"3,x,2023-01-01,3\n"                # no partition: filtered
           b"4,\\N,2021-05-05,abc\n"            # NULL name; 'abc' -> NULL amount (not strict)
           b"5,y\n")                            # too few fields: filtered


def test_filtered_rows_fail_the_load_by_default(server, sl_table):
    status, reply = _put(server, sl_table, "sl", BAD_CSV, {"column_separator": ","})
    assert status == 200
    assert reply["Status"] == "Fail"
    assert reply["Message"] == "[DATA_QUALITY_ERROR]too many filtered rows"
    assert (reply["NumberTotalRows"], reply["NumberFilteredRows"]) == (5, 3)
    with urllib.request.urlopen(reply["ErrorURL"], timeout=10) as resp:
        log = resp.read().decode()
    assert "the length of input is too long than schema" in log
    assert "no partition for this tuple" in log
    assert "actual column number in csv file is less than schema column number" in log
    assert _rows(server, sl_table, "SELECT count(*) FROM sl") == [(0,)]


def test_max_filter_ratio_loads_the_good_rows_once_per_label(server, sl_table):
    headers = {"column_separator": ",", "max_filter_ratio": "0.8", "label": "batch_1"}
    status, reply = _put(server, sl_table, "sl", BAD_CSV, headers)
    assert reply["Status"] == "Success", reply
    assert reply["Message"] == "OK"
    assert (reply["NumberLoadedRows"], reply["NumberFilteredRows"]) == (2, 3)
    assert reply["TxnId"] > 0 and reply["Label"] == "batch_1"
    assert _rows(server, sl_table, "SELECT k, name, dt, amt FROM sl ORDER BY k") == [
        (1, "abc", date(2020, 1, 1), Decimal("1.50")),
        (4, None, date(2021, 5, 5), None)]
    status, again = _put(server, sl_table, "sl", BAD_CSV, headers)
    assert again["Status"] == "Label Already Exists"
    assert again["ExistingJobStatus"] == "FINISHED"
    assert f"relate to txn [{reply['TxnId']}]" in again["Message"]
    assert _rows(server, sl_table, "SELECT count(*) FROM sl") == [(2,)]


def test_strict_mode_filters_values_that_do_not_convert(server, sl_table):
    body = b"10|a|2020-01-01|1\n11|b|2020-01-02|x\n"
    _, reply = _put(server, sl_table, "sl", body, {"column_separator": "|", "strict_mode": "true"})
    assert reply["Status"] == "Fail" and reply["NumberFilteredRows"] == 1
    _, reply = _put(server, sl_table, "sl", body, {"column_separator": "|"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2
    assert _rows(server, sl_table, "SELECT k, amt FROM sl ORDER BY k") == [
        (10, Decimal("1.00")), (11, None)]


def test_columns_mapping_where_and_header_line(server, sl_table):
    body = b"k|raw|dt|amt\n10|a|2020-01-01|1\n11|b|2020-01-02|2.5\n12|c|2021-03-01|7\n"
    headers = {"column_separator": "|", "format": "csv_with_names",
               "columns": "k, raw, dt, amt, name = concat('n_', raw)", "where": "k > 10"}
    _, reply = _put(server, sl_table, "sl", body, headers)
    assert reply["Status"] == "Success", reply
    assert (reply["NumberTotalRows"], reply["NumberLoadedRows"], reply["NumberUnselectedRows"]) == (3, 2, 1)
    assert _rows(server, sl_table, "SELECT k, name FROM sl ORDER BY k") == [(11, "n_b"), (12, "n_c")]


def test_json_array_and_chunked_body(server, sl_table):
    body = json.dumps([{"k": 20, "name": "j", "dt": "2021-01-01", "amt": 9.99},
                       {"k": 21, "dt": "2021-02-02"}]).encode()
    _, reply = _put(server, sl_table, "sl", body, {"format": "json", "strip_outer_array": "true"},
                    chunked=True)
    assert reply["Status"] == "Success", reply
    assert _rows(server, sl_table, "SELECT k, name, amt FROM sl ORDER BY k") == [
        (20, "j", Decimal("9.99")), (21, None, None)]


def test_auth_unknown_table_and_bad_headers(server, sl_table):
    status, reply = _put(server, sl_table, "sl", b"1\n", auth=None)
    assert status == 401
    status, reply = _put(server, sl_table, "sl", b"1\n", auth="bob:secret")
    assert status == 401
    _, reply = _put(server, sl_table, "nope", b"1\n")
    assert reply["Status"] == "Fail" and "nope" in reply["Message"]
    _, reply = _put(server, sl_table, "sl", b"1\n", {"max_filter_ratio": "2"})
    assert reply["Status"] == "Fail" and "max_filter_ratio" in reply["Message"]
    _, reply = _put(server, sl_table, "sl", b"1\n", {"format": "parquetx"})
    assert reply["Status"] == "Fail" and "format" in reply["Message"]
    # The batch delete sign exists on Unique tables only (test_stream_load_merge_type.py).
    for headers in ({"merge_type": "DELETE"}, {"merge_type": "MERGE", "delete": "k = 1"}):
        _, reply = _put(server, sl_table, "sl", b"1,a,2020-01-01,1,1\n",
                        dict(headers, column_separator=","))
        assert reply["Status"] == "Fail", reply
        assert reply["Message"].endswith("load by MERGE or DELETE is only supported in unique "
                                         "tables."), reply
    _, reply = _put(server, sl_table, "sl", b"1,a,2020-01-01,1,1\n",
                    {"column_separator": ",",
                     "columns": "k, name, dt, amt, __DORIS_DELETE_SIGN__"})
    assert reply["Status"] == "Success", reply  # a source column the table lacks: ignored
    assert _rows(server, sl_table, "SELECT count(*) FROM sl") == [(1,)]


def test_labels_survive_a_restart(server_factory):
    srv = server_factory("labels").start()
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE d")
        cur.execute("CREATE TABLE d.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                    "BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    conn.close()
    _, reply = _put(srv, "d", "t", b"1\t2\n3\t4\n", {"label": "once"})
    assert reply["Status"] == "Success", reply
    srv.kill9()
    srv.start()
    _, reply = _put(srv, "d", "t", b"5\t6\n", {"label": "once"})
    assert reply["Status"] == "Label Already Exists"
    assert _rows(srv, "d", "SELECT k, v FROM t ORDER BY k") == [(1, 2), (3, 4)]


def test_curl(server, sl_table, tmp_path):
    if shutil.which("curl") is None:
        if os.environ.get("CI"):
            pytest.fail("curl is not on PATH in CI: .ci/run must install it")
        pytest.skip("curl is not installed (apt-get install curl); required only in CI")
    data = tmp_path / "data.csv"
    data.write_bytes(b"".join(b"%d,n%d,2020-06-01,%d.25\n" % (i, i % 7, i) for i in range(1000)))
    out = subprocess.run(
        ["curl", "-sS", "--location-trusted", "-u", "root:", "-H", "label:curl_1",
         "-H", "column_separator:,", "-T", str(data),
         f"http://127.0.0.1:{server.http_port}/api/{sl_table}/sl/_stream_load"],
        capture_output=True, timeout=60, check=True)
    reply = json.loads(out.stdout)
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 1000
    assert _rows(server, sl_table, "SELECT count(*), sum(amt) FROM sl") == [
        (1000, Decimal("499750.00"))]


def test_dates_as_people_type_them(server, fresh_db):
    """Non-padded, slashed, compact and two-digit-year dates load as Doris's cast reads them."""
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE dd (k INT, d DATE, ts DATETIME) DUPLICATE KEY(k) "
                    'DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")')
    conn.close()
    body = (b"1,2024-1-2,2024-01-02 3:04:05\n2,2024/1/3,2024/1/3 3:4:5\n"
            b"3,20240104,20240104030405\n4,24-1-5,24-01-05 03:04\n5,2024-13-01,2024-01-01\n")
    status, reply = _put(server, fresh_db, "dd", body,
                         {"column_separator": ",", "strict_mode": "true", "max_filter_ratio": "0.5"})
    assert status == 200 and reply["Status"] == "Success", reply
    assert (reply["NumberLoadedRows"], reply["NumberFilteredRows"]) == (4, 1)
    got = _rows(server, fresh_db, "SELECT k, CAST(d AS STRING), CAST(ts AS STRING) FROM dd ORDER BY k")
    assert got == [(1, "2024-01-02", "2024-01-02 03:04:05"), (2, "2024-01-03", "2024-01-03 03:04:05"),
                   (3, "2024-01-04", "2024-01-04 03:04:05"), (4, "2024-01-05", "2024-01-05 03:04:00")]


def test_stream_load_creates_auto_partitions(server, fresh_db):
    """An AUTO PARTITION table: the load's rows create their partitions (no row is filtered
    for want of one); a later load reuses them and adds only the new ones."""
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE ev (dt DATE NOT NULL, k INT, v INT) DUPLICATE KEY(dt) "
                    "AUTO PARTITION BY RANGE (date_trunc(dt, 'month')) () "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    conn.close()
    status, reply = _put(server, fresh_db, "ev", b"2024-01-05,1,10\n2024-03-01,2,20\n"
                         b"2024-01-31,3,30\n", {"column_separator": ","})
    assert status == 200 and reply["Status"] == "Success", reply
    assert reply["NumberLoadedRows"] == 3 and reply["NumberFilteredRows"] == 0
    status, reply = _put(server, fresh_db, "ev", b"2024-03-09,4,40\n2024-07-01,5,50\n",
                         {"column_separator": ","})
    assert reply["Status"] == "Success", reply
    names = _rows(server, fresh_db, "SELECT PARTITION_NAME FROM information_schema.partitions "
                                    "WHERE TABLE_NAME = 'ev' ORDER BY 1")
    assert [n for (n,) in names] == ["p20240101000000", "p20240301000000", "p20240701000000"]
    assert _rows(server, fresh_db, "SELECT count(*), sum(v) FROM ev WHERE dt < '2024-04-01'") \
        == [(4, 100)]
