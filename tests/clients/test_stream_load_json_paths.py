"""Stream Load's `jsonpaths` and `json_root` headers (Doris's JSON load docs: "JSON Path 和
Columns 的关系"): nested fields mapped to the `columns` header's names, or without it to the
table's columns in order; the rows taken from under a root node; bad paths refused."""

from __future__ import annotations

from test_stream_load import _put, _rows
from test_stream_load_unique import _exec


def test_jsonpaths_and_json_root(server, fresh_db):
    _exec(server, fresh_db,
          "CREATE TABLE n (k2 INT, k1 INT, n1 INT, n2 INT) DUPLICATE KEY(k2) "
          "DISTRIBUTED BY HASH(k2) BUCKETS 1 PROPERTIES ('replication_num' = '1')",
          "CREATE TABLE p (a INT, b VARCHAR(20)) DUPLICATE KEY(a) "
          "DISTRIBUTED BY HASH(a) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    body = b'{"k1": 1, "k2": 2, "k3": {"k1": 31, "k1_nested": {"k1": 32}}}'
    status, reply = _put(server, fresh_db, "n", body, {
        "format": "json", "jsonpaths": '["$.k2", "$.k1", "$.k3.k1", "$.k3.k1_nested.k1"]',
        "columns": "k2, k1, n1, n2"})
    assert reply["Status"] == "Success", reply
    assert _rows(server, fresh_db, "SELECT * FROM n") == [(2, 1, 31, 32)]
    # without columns: the table's columns in order; an object's field is its JSON text
    status, reply = _put(server, fresh_db, "p", b'{"a": 10, "c": {"z": 1}}\n{"a": 11}',
                         {"format": "json", "read_json_by_line": "true",
                          "jsonpaths": '["$.a", "$.c"]'})
    assert reply["Status"] == "Success", reply
    status, reply = _put(server, fresh_db, "p",
                         b'{"events": [{"a": 1, "b": "p"}, {"a": 2, "b": "q"}]}',
                         {"format": "json", "json_root": "$.events",
                          "strip_outer_array": "true"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2, reply
    assert _rows(server, fresh_db, "SELECT a, b FROM p ORDER BY a") == [
        (1, "p"), (2, "q"), (10, '{"z":1}'), (11, None)]
    status, reply = _put(server, fresh_db, "p", b'{"a": 3}',
                         {"format": "json", "jsonpaths": "$.a"})
    assert reply["Status"] == "Fail" and "Invalid jsonpaths: $.a" in reply["Message"], reply
