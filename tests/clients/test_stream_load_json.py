"""Stream Load into JSON columns, as Doris 2.1 loads them (regression-test/suites/jsonb_p0/
test_jsonb_load_and_function, test_jsonb_load_unique_key_and_function): CSV fields are JSON
text, normalized on load; text that is not JSON is a filtered row in any mode (the suites'
default load fails with "too many filtered rows", 7 of 25 filtered, and succeeds with
max_filter_ratio 0.3). In JSON format a field's value is the JSON value (`{"a":[1,2]}`) and a
string field is JSON text to parse (`"{\\"a\\":1}"`). Results come back with MySQL type JSON."""

from __future__ import annotations

import json

import pymysql
import pytest
from test_stream_load import _put, _rows


@pytest.fixture
def json_table(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE tj (id INT, j JSONB) UNIQUE KEY(id)
            DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ("replication_num" = "1")""")
    conn.close()
    return fresh_db


CSV = (b'1\t{"k1":"v31", "k2": 300}\n2\t[123, 456]\n3\t\\N\n4\tnull\n5\t"abcd"\n'
       b'6\tabc\n7\t{"a":1\n8\t18446744073709551615\n')


def test_csv_filters_invalid_json_in_any_mode(server, json_table):
    status, reply = _put(server, json_table, "tj", CSV)
    assert reply["Status"] == "Fail" and "too many filtered rows" in reply["Message"], reply
    assert reply["NumberTotalRows"] == 8 and reply["NumberFilteredRows"] == 2
    assert _rows(server, json_table, "SELECT count(*) FROM tj") == [(0,)]
    status, reply = _put(server, json_table, "tj", CSV, {"max_filter_ratio": "0.3"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 6, reply
    assert _rows(server, json_table, "SELECT id, j FROM tj ORDER BY id") == [
        (1, '{"k1":"v31","k2":300}'), (2, "[123,456]"), (3, None), (4, "null"),
        (5, '"abcd"'), (8, "18446744073709551615")]
    status, reply = _put(server, json_table, "tj", CSV, {"max_filter_ratio": "0.3",
                                                          "strict_mode": "true"})
    assert reply["Status"] == "Success" and reply["NumberFilteredRows"] == 2, reply


def test_json_format_values_and_string_form(server, json_table):
    body = json.dumps([{"id": 1, "j": {"a": [1, 2], "b": None}}, {"id": 2, "j": '{"a": 1}'},
                       {"id": 3, "j": 6.18}, {"id": 4, "j": None}, {"id": 5},
                       {"id": 6, "j": [True, "x"]}]).encode()
    status, reply = _put(server, json_table, "tj", body,
                         {"format": "json", "strip_outer_array": "true"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 6, reply
    assert _rows(server, json_table, "SELECT id, j, jsonb_extract(j, '$.a') FROM tj ORDER BY id") == [
        (1, '{"a":[1,2],"b":null}', "[1,2]"), (2, '{"a":1}', "1"), (3, "6.18", None),
        (4, None, None), (5, None, None), (6, '[true,"x"]', None)]
    lines = b'{"id": 7, "j": {"z": {"y": 1}}}\n{"id": 8, "j": "not json"}\n'
    status, reply = _put(server, json_table, "tj", lines,
                         {"format": "json", "read_json_by_line": "true",
                          "max_filter_ratio": "0.5"})
    assert reply["Status"] == "Success" and reply["NumberFilteredRows"] == 1, reply
    assert _rows(server, json_table, "SELECT j FROM tj WHERE id = 7") == [('{"z":{"y":1}}',)]


def test_result_column_type_is_json(server, json_table):
    _put(server, json_table, "tj", b'1\t{"a":1}\n')
    conn = server.connect(json_table)
    with conn.cursor() as cur:
        cur.execute("SELECT j, CAST(j AS STRING), jsonb_extract(j, '$.a') FROM tj")
        types = [d[1] for d in cur.description]
        assert cur.fetchall() == (('{"a":1}', '{"a":1}', "1"),)
    conn.close()
    assert types[0] == pymysql.constants.FIELD_TYPE.JSON
    assert types[1] != pymysql.constants.FIELD_TYPE.JSON
    assert types[2] == pymysql.constants.FIELD_TYPE.JSON
