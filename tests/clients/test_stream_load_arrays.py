"""Stream Load into ARRAY columns: CSV array text (`[1,2]`, `["a","b"]`) and JSON arrays, as
Doris reads them; rows whose array text does not read (or, in strict mode, lose an element to
the element type) are filtered like any bad row and count against max_filter_ratio."""

from __future__ import annotations

import json

import pytest
from test_stream_load import _put, _rows


@pytest.fixture
def arr_table(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE arr (k INT, a ARRAY<INT>, s ARRAY<STRING>) DUPLICATE KEY(k)
            DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    conn.close()
    return fresh_db


CSV = (b'1|[1,2,3]|["a","b"]\n2|[]|["x, y", null]\n3|\\N|[]\n'
       b'4|[1,abc]|["q"]\n5|not an array|["z"]\n')


def test_csv_arrays_load_and_print_as_doris_does(server, arr_table):
    status, reply = _put(server, arr_table, "arr", CSV, {"column_separator": "|",
                                                         "max_filter_ratio": "0.5"})
    assert status == 200 and reply["Status"] == "Success", reply
    # non-strict: `not an array` is a NULL array, `abc` a NULL element
    assert reply["NumberLoadedRows"] == 5 and reply["NumberFilteredRows"] == 0
    assert _rows(server, arr_table, "SELECT k, a, s FROM arr ORDER BY k") == [
        (1, "[1, 2, 3]", '["a", "b"]'), (2, "[]", '["x, y", null]'), (3, None, "[]"),
        (4, "[1, null]", '["q"]'), (5, None, '["z"]')]


def test_strict_mode_filters_unreadable_and_lossy_rows(server, arr_table):
    headers = {"column_separator": "|", "strict_mode": "true"}
    status, reply = _put(server, arr_table, "arr", CSV, headers)
    assert reply["Status"] == "Fail" and "too many filtered rows" in reply["Message"]
    assert reply["NumberFilteredRows"] == 2
    assert _rows(server, arr_table, "SELECT count(*) FROM arr") == [(0,)]
    status, reply = _put(server, arr_table, "arr", CSV, headers | {"max_filter_ratio": "0.4"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 3, reply
    assert _rows(server, arr_table, "SELECT k FROM arr ORDER BY k") == [(1,), (2,), (3,)]


def test_json_arrays(server, arr_table):
    body = json.dumps([{"k": 10, "a": [7, 8], "s": ["j", "k"]}, {"k": 11, "a": None, "s": []},
                       {"k": 12, "a": [2147483648], "s": None}]).encode()
    status, reply = _put(server, arr_table, "arr", body,
                         {"format": "json", "strip_outer_array": "true"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 3, reply
    assert _rows(server, arr_table, "SELECT k, a, s, size(a) FROM arr ORDER BY k") == [
        (10, "[7, 8]", '["j", "k"]', 2), (11, None, "[]", None), (12, "[null]", None, 1)]
