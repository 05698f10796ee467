"""Stream Load into Unique tables as CDC tools run it: `merge_type` DELETE / MERGE with `delete`,
`__DORIS_DELETE_SIGN__` in `columns` or `hidden_columns`, the sequence column headers, and
Doris's refusals (StreamLoadPlanner.plan, DataDescription.checkMergeType /
analyzeSequenceCol; docs "Batch Delete" and "Sequence Column"; regression-test/suites/
data_model_p0/unique/test_unique_table_sequence.groovy). Each refusal loads nothing.
"""

from __future__ import annotations

import json

import pytest

from tests.clients.test_stream_load import _put, _rows


@pytest.fixture
def uniq(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE u (k INT NOT NULL, v VARCHAR(10)) UNIQUE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
        cur.execute("CREATE TABLE s (k INT NOT NULL, v VARCHAR(10)) UNIQUE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1', "
                    "'function_column.sequence_type' = 'int')")
    conn.close()
    return fresh_db


def _load(server, db, table, body: bytes, **headers) -> dict:
    _, reply = _put(server, db, table, body, dict(headers, column_separator=","))
    return reply


def test_delete_and_merge_types(server, uniq):
    assert _load(server, uniq, "u", b"1,a\n2,b\n3,c\n4,d\n")["Status"] == "Success"
    # DELETE: every key of the body goes, whatever its values.
    reply = _load(server, uniq, "u", b"1,zzz\n9,none\n", merge_type="DELETE")
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2, reply
    assert _rows(server, uniq, "SELECT k, v FROM u ORDER BY k") == [(2, "b"), (3, "c"), (4, "d")]
    # MERGE: the `delete` condition picks the deleted rows, the others are upserts.
    reply = _load(server, uniq, "u", b"2,x\n3,y\n5,z\n", merge_type="MERGE", delete="v = 'x'")
    assert reply["Status"] == "Success", reply
    assert _rows(server, uniq, "SELECT k, v FROM u ORDER BY k") == [(3, "y"), (4, "d"), (5, "z")]
    # APPEND with the sign as a column of the body (what Flink CDC sends).
    reply = _load(server, uniq, "u", b"3,y,1\n6,w,0\n", columns="k, v, __DORIS_DELETE_SIGN__")
    assert reply["Status"] == "Success", reply
    assert _rows(server, uniq, "SELECT k, v FROM u ORDER BY k") == [(4, "d"), (5, "z"), (6, "w")]
    # JSON with the sign named in `hidden_columns`; a deleted key comes back when loaded again.
    body = json.dumps([{"k": 4, "v": "d", "__DORIS_DELETE_SIGN__": 1},
                       {"k": 1, "v": "back", "__DORIS_DELETE_SIGN__": 0}]).encode()
    _, reply = _put(server, uniq, "u", body, {"format": "json", "strip_outer_array": "true",
                                              "hidden_columns": "__DORIS_DELETE_SIGN__"})
    assert reply["Status"] == "Success", reply
    assert _rows(server, uniq, "SELECT k, v FROM u ORDER BY k") == [
        (1, "back"), (5, "z"), (6, "w")]
    assert _rows(server, uniq, "SELECT count(*) FROM u WHERE k IN (3, 4)") == [(0,)]


def test_merge_condition_null_filters_the_row(server, uniq):
    reply = _load(server, uniq, "u", b"1,a\n2,\\N\n", merge_type="MERGE", delete="v = 'a'")
    assert reply["Status"] == "Fail" and reply["NumberFilteredRows"] == 1, reply
    reply = _load(server, uniq, "u", b"1,a\n2,\\N\n", merge_type="MERGE", delete="v = 'a'",
                  max_filter_ratio="0.5")
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 1, reply
    assert _rows(server, uniq, "SELECT count(*) FROM u") == [(0,)]


def test_sequence_type_table_takes_the_header_column(server, uniq):
    reply = _load(server, uniq, "s", b"1,a,5\n", columns="k, v, seq")
    assert reply["Status"] == "Fail", reply
    assert reply["Message"].endswith("Table s has sequence column, need to specify the "
                                     "sequence column"), reply
    headers = {"columns": "k, v, seq", "function_column.sequence_col": "seq"}
    reply = _load(server, uniq, "s", b"1,new,5\n1,old,3\n2,b,1\n", **headers)
    assert reply["Status"] == "Success", reply
    # A smaller sequence value loses even when loaded later; an equal one wins.
    assert _load(server, uniq, "s", b"1,stale,4\n2,same,1\n", **headers)["Status"] == "Success"
    assert _rows(server, uniq, "SELECT k, v FROM s ORDER BY k") == [(1, "new"), (2, "same")]
    # DELETE with the sequence: the delete row needs a value >= the current one (docs case 4).
    assert _load(server, uniq, "s", b"1,x,4\n2,x,7\n", merge_type="DELETE",
                 **headers)["Status"] == "Success"
    assert _rows(server, uniq, "SELECT k, v FROM s ORDER BY k") == [(1, "new")]
    conn = server.connect(uniq)
    with conn.cursor() as cur:
        cur.execute("SET show_hidden_columns = true")
        cur.execute("SELECT k, v, __DORIS_DELETE_SIGN__, __DORIS_SEQUENCE_COL__ FROM s "
                    "ORDER BY k")
        assert list(cur.fetchall()) == [(1, "new", 0, 5), (2, "x", 1, 7)]
    conn.close()


def test_refusals_load_nothing(server, uniq):
    conn = server.connect(uniq)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                    "BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    conn.close()
    cases = [
        ("d", {"merge_type": "DELETE"},
         "load by MERGE or DELETE is only supported in unique tables."),
        ("u", {"merge_type": "MERGE"}, "Excepted DELETE ON clause when merge type is MERGE."),
        ("u", {"delete": "k = 1"},
         "not support DELETE ON clause when merge type is not MERGE."),
        ("u", {"merge_type": "UPSERT"}, "unknown merge type UPSERT"),
        ("u", {"function_column.sequence_col": "v"}, "There is no sequence column in the table u"),
        ("s", {"columns": "k, v, seq", "function_column.sequence_col": "nope"},
         "There is no sequence column nope in the s or the COLUMNS and SET clause"),
    ]
    for table, headers, message in cases:
        reply = _load(server, uniq, table, b"1,2,3\n", **headers)
        assert reply["Status"] == "Fail" and reply["Message"].endswith(message), (headers, reply)
    for table in ("u", "s", "d"):
        assert _rows(server, uniq, f"SELECT count(*) FROM {table}") == [(0,)]


def test_hidden_columns_and_deletes_survive_kill9(server_factory):
    srv = server_factory("hidden").start()
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE d")
        cur.execute("CREATE TABLE d.s (k INT NOT NULL, v VARCHAR(10)) UNIQUE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1', "
                    "'function_column.sequence_type' = 'int')")
    conn.close()
    headers = {"columns": "k, v, seq", "function_column.sequence_col": "seq"}
    assert _load(srv, "d", "s", b"1,a,5\n2,b,5\n3,c,5\n", **headers)["Status"] == "Success"
    assert _load(srv, "d", "s", b"2,x,6\n3,x,4\n", merge_type="DELETE",
                 **headers)["Status"] == "Success"
    srv.kill9()
    srv.start()
    assert _rows(srv, "d", "SELECT k, v FROM s ORDER BY k") == [(1, "a"), (3, "c")]
    reply = _load(srv, "d", "s", b"4,d,1\n", columns="k, v, seq")
    assert reply["Message"].endswith("need to specify the sequence column"), reply
    conn = srv.connect("d")
    with conn.cursor() as cur:
        cur.execute("SET show_hidden_columns = true")
        cur.execute("DESC s")
        assert [r[0] for r in cur.fetchall()] == ["k", "v", "__DORIS_DELETE_SIGN__",
                                                  "__DORIS_VERSION_COL__",
                                                  "__DORIS_SEQUENCE_COL__"]
        cur.execute("SELECT k, __DORIS_DELETE_SIGN__, __DORIS_SEQUENCE_COL__ FROM s ORDER BY k")
        assert list(cur.fetchall()) == [(1, 0, 5), (2, 1, 6), (3, 0, 5)]
    conn.close()
