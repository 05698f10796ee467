"""MAP and STRUCT columns through Stream Load and server-side prepared statements: CSV text
(`{"a":1}`, `{a:1}`, a STRUCT by field name in any order or `{4, "sn4"}` by position) and JSON
objects load as Doris reads them, text that does not read is a NULL value (non-strict) or a
filtered row (strict mode); the binary protocol sends the values as the text protocol does."""

from __future__ import annotations

import json

import mysql.connector
import pytest
from test_stream_load import _put, _rows


@pytest.fixture
def nested_table(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE n (k INT, m MAP<STRING, INT>,
            s STRUCT<s_id:INT, s_name:STRING>, a ARRAY<STRUCT<x:INT>>) DUPLICATE KEY(k)
            DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    conn.close()
    return fresh_db


CSV = (b'1|{"a":1, "b":2}|{"s_id":1, "s_name":"sn1"}|[{"x":1}]\n'
       b'2|{a:3}|{s_id:2, s_name:sn2}|[]\n'
       b'3|\\N|{"s_name":"sn3", "s_id":3}|\\N\n'
       b'4|{"a":null}|{4, "sn4"}|[{"x":2}, null]\n'
       b'5|not a map|{5}|[1]\n')


def test_csv_maps_and_structs(server, nested_table):
    status, reply = _put(server, nested_table, "n", CSV, {"column_separator": "|"})
    assert status == 200 and reply["Status"] == "Success", reply
    assert reply["NumberLoadedRows"] == 5 and reply["NumberFilteredRows"] == 0
    assert _rows(server, nested_table, "SELECT k, m, s, a FROM n ORDER BY k") == [
        (1, '{"a":1, "b":2}', '{"s_id":1, "s_name":"sn1"}', '[{"x":1}]'),
        (2, '{"a":3}', '{"s_id":2, "s_name":"sn2"}', "[]"),
        (3, None, '{"s_id":3, "s_name":"sn3"}', None),
        (4, '{"a":null}', '{"s_id":4, "s_name":"sn4"}', '[{"x":2}, null]'),
        (5, None, '{"s_id":5, "s_name":null}', None)]


def test_strict_mode_filters_unreadable_rows(server, nested_table):
    headers = {"column_separator": "|", "strict_mode": "true", "max_filter_ratio": "0.5"}
    status, reply = _put(server, nested_table, "n", CSV, headers)
    assert reply["Status"] == "Success" and reply["NumberFilteredRows"] == 1, reply
    assert _rows(server, nested_table, "SELECT k FROM n ORDER BY k") == [(1,), (2,), (3,), (4,)]


def test_json_objects(server, nested_table):
    body = json.dumps([{"k": 10, "m": {"a": 1, "b": None}, "s": {"s_id": 10, "s_name": "j"},
                        "a": [{"x": 5}]},
                       {"k": 11, "m": {}, "s": None, "a": []}]).encode()
    status, reply = _put(server, nested_table, "n", body,
                         {"format": "json", "strip_outer_array": "true"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2, reply
    assert _rows(server, nested_table, "SELECT k, m, s, a, m['a'] FROM n ORDER BY k") == [
        (10, '{"a":1, "b":null}', '{"s_id":10, "s_name":"j"}', '[{"x":5}]', 1),
        (11, "{}", None, "[]", None)]


def test_prepared_statements_send_the_text(server, nested_table):
    conn = mysql.connector.connect(host=server.host, port=server.port, user="root",
                                   database=nested_table, use_pure=True)
    try:
        cur = conn.cursor(prepared=True)
        cur.execute("INSERT INTO n VALUES (?, {'a': 1}, named_struct('s_id', ?, 's_name', ?), "
                    "[{7}])", (1, 2, "it's"))
        cur.execute("SELECT k, m, s, a, m['a'], struct_element(s, 's_name') FROM n "
                    "WHERE k = ?", (1,))
        row = [v.decode() if isinstance(v, (bytes, bytearray)) else v for v in cur.fetchall()[0]]
        assert row == [1, '{"a":1}', '{"s_id":2, "s_name":"it\'s"}', '[{"x":7}]', 1, "it's"]
    finally:
        conn.close()


def test_json_arrays_of_maps_and_structs(server, fresh_db):
    # an ARRAY column holding MAPs / STRUCTs reads each JSON object as text too (Arrow's reader
    # would make every object a struct, and the load failed on the cast to MAP)
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE am (k INT, a ARRAY<MAP<STRING, INT>>,
            b ARRAY<STRUCT<x:INT>>) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1
            PROPERTIES ("replication_num" = "1")""")
    conn.close()
    lines = (b'{"k": 1, "a": [{"q": 1}, null, {"r": 2}], "b": [{"x": 5}]}\n'
             b'{"k": 2, "a": [], "b": null}\n')
    status, reply = _put(server, fresh_db, "am", lines,
                         {"format": "json", "read_json_by_line": "true"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2, reply
    assert _rows(server, fresh_db, "SELECT k, a, b FROM am ORDER BY k") == [
        (1, '[{"q":1}, null, {"r":2}]', '[{"x":5}]'), (2, "[]", None)]
