"""Stream Load bodies beyond plain text: `compress_type` (gz, bz2, lz4, deflate; what the Kafka
and Flink connectors send by default) and the typed formats parquet, orc and arrow (Doris's
`format` values; columns matched by name, a column the file lacks gets its default). Also a
JSON field that no object has: the column's default, as Doris's JSON reader fills it."""

from __future__ import annotations

import bz2
import datetime
import decimal
import gzip
import io
import json
import zlib

import lz4.frame
import pyarrow as pa
import pyarrow.orc as paorc
import pyarrow.parquet as pq
import pytest
from test_stream_load import _put, _rows

CSV = b"k,name,dt,amt\n1,ann,2024-01-02,1.50\n2,\"b,c\",2024-01-03,\\N\n"
COMPRESS = {"gz": gzip.compress, "bz2": bz2.compress, "lz4": lz4.frame.compress,
            "deflate": zlib.compress}


@pytest.fixture
def fmt_table(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE f (k INT NOT NULL, name VARCHAR(8), dt DATE,
            amt DECIMAL(10, 2) DEFAULT "9.99", cnt BIGINT DEFAULT "7")
            DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2
            PROPERTIES ("replication_num" = "1")""")
    conn.close()
    return fresh_db


@pytest.mark.parametrize("codec", sorted(COMPRESS))
def test_compressed_csv(server, fmt_table, codec):
    status, reply = _put(server, fmt_table, "f", COMPRESS[codec](CSV),
                         {"format": "csv_with_names", "column_separator": ",", "enclose": '"',
                          "columns": "k,name,dt,amt", "compress_type": codec.upper()})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2, reply
    assert _rows(server, fmt_table, "SELECT k, name, dt, amt, cnt FROM f ORDER BY k") == [
        (1, "ann", datetime.date(2024, 1, 2), decimal.Decimal("1.50"), 7),
        (2, "b,c", datetime.date(2024, 1, 3), None, 7)]


def test_compressed_chunked_and_json(server, fmt_table):
    big = b"".join(b"%d,n%d,2024-02-01,%d.25\n" % (i, i % 100, i) for i in range(50000))
    status, reply = _put(server, fmt_table, "f", gzip.compress(big),
                         {"column_separator": ",", "columns": "k,name,dt,amt",
                          "compress_type": "gz"}, chunked=True)
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 50000, reply
    lines = b'{"k": 60000, "name": "j", "amt": 2.5}\n{"k": 60001, "dt": "2024-03-01"}\n'
    status, reply = _put(server, fmt_table, "f", gzip.compress(lines),
                         {"format": "json", "read_json_by_line": "true", "compress_type": "gz"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2, reply
    assert _rows(server, fmt_table, "SELECT count(*), sum(amt) FROM f WHERE k < 60000") == [
        (50000, decimal.Decimal(sum(range(50000))) + decimal.Decimal("12500.00"))]
    # cnt is in no object: its default; name and amt are missing in one object only: NULL
    assert _rows(server, fmt_table, "SELECT k, name, dt, amt, cnt FROM f WHERE k >= 60000 "
                                    "ORDER BY k") == [
        (60000, "j", None, decimal.Decimal("2.50"), 7),
        (60001, None, datetime.date(2024, 3, 1), None, 7)]


def test_bad_compressed_bodies_change_nothing(server, fmt_table):
    status, reply = _put(server, fmt_table, "f", CSV, {"compress_type": "gz"})
    assert reply["Status"] == "Fail" and "failed to decompress the gz body" in reply["Message"]
    rows = b"".join(b"%d,n,2024-01-01,1.5\n" % i for i in range(20000))
    status, reply = _put(server, fmt_table, "f", gzip.compress(rows)[:20000],
                         {"compress_type": "gz", "column_separator": ",",
                          "columns": "k,name,dt,amt"})
    assert reply["Status"] == "Fail" and "failed to decompress" in reply["Message"], reply
    status, reply = _put(server, fmt_table, "f", CSV, {"compress_type": "lzo"})
    assert reply["Status"] == "Fail" and "compress_type lzo is not supported" in reply["Message"]
    status, reply = _put(server, fmt_table, "f", CSV, {"compress_type": "zip"})
    assert reply["Status"] == "Fail" and "unknown compress_type: zip" in reply["Message"]
    status, reply = _put(server, fmt_table, "f", CSV, {"compress_type": "gz",
                                                       "format": "parquet"})
    assert reply["Status"] == "Fail" and "not supported for the parquet format" in reply["Message"]
    assert _rows(server, fmt_table, "SELECT count(*) FROM f") == [(0,)]


def _typed() -> pa.Table:
    return pa.table({
        "K": pa.array([1, 2, 3], pa.int32()),
        "name": pa.array(["x", None, "zz"]).dictionary_encode(),
        "dt": pa.array([datetime.date(2024, 5, 1), None, datetime.date(2024, 5, 3)]),
        "amt": pa.array([decimal.Decimal("1.25"), decimal.Decimal("-3.5"), None],
                        pa.decimal128(12, 3)),
        "ignored": pa.array([1.0, 2.0, 3.0])})


def _body(fmt: str, table: pa.Table) -> bytes:
    sink = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(table, sink, row_group_size=2)
    elif fmt == "orc":
        paorc.write_table(table.set_column(1, "name", table["name"].cast(pa.string())), sink)
    elif fmt == "arrow_file":
        with pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
    else:
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table, max_chunksize=2)
    return sink.getvalue()


@pytest.mark.parametrize("fmt", ["parquet", "orc", "arrow", "arrow_file"])
def test_typed_formats(server, fmt_table, fmt):
    header = "arrow" if fmt == "arrow_file" else fmt
    status, reply = _put(server, fmt_table, "f", _body(fmt, _typed()), {"format": header})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 3, reply
    assert _rows(server, fmt_table, "SELECT k, name, dt, amt, cnt FROM f ORDER BY k") == [
        (1, "x", datetime.date(2024, 5, 1), decimal.Decimal("1.25"), 7),
        (2, None, None, decimal.Decimal("-3.50"), 7),
        (3, "zz", datetime.date(2024, 5, 3), None, 7)]


def test_typed_format_columns_header_and_errors(server, fmt_table):
    body = _body("parquet", _typed())
    status, reply = _put(server, fmt_table, "f", body,
                         {"format": "parquet", "columns": "k, amt, cnt"})
    assert reply["Status"] == "Success", reply
    # named in `columns` but not in the file: NULL, not the default
    assert _rows(server, fmt_table, "SELECT k, name, amt, cnt FROM f ORDER BY k") == [
        (1, None, decimal.Decimal("1.25"), None), (2, None, decimal.Decimal("-3.50"), None),
        (3, None, None, None)]
    status, reply = _put(server, fmt_table, "f", b"k,name\n1,a\n", {"format": "parquet"})
    assert reply["Status"] == "Fail" and "failed to read the parquet body" in reply["Message"]
    status, reply = _put(server, fmt_table, "f", body[: len(body) // 2], {"format": "parquet"})
    assert reply["Status"] == "Fail", reply
    status, reply = _put(server, fmt_table, "f", b"not arrow", {"format": "arrow"})
    assert reply["Status"] == "Fail" and "failed to read the arrow body" in reply["Message"]
    nulls = pa.table({"k": pa.array([None, 5], pa.int64())})
    status, reply = _put(server, fmt_table, "f", _body("parquet", nulls), {"format": "parquet"})
    assert reply["Status"] == "Fail" and "too many filtered rows" in reply["Message"], reply
    assert _rows(server, fmt_table, "SELECT count(*) FROM f") == [(3,)]
    status, reply = _put(server, fmt_table, "f", json.dumps({"k": 9}).encode(),
                         {"format": "avro"})
    assert reply["Status"] == "Fail" and "format:avro is not supported" in reply["Message"]
