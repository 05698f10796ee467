"""Stream Load into Unique tables: `partial_columns: true` updates only the named columns of a
merge-on-write table (docs "Partial Column Update"), and a sequence column decides the winner
whatever the load order (docs "Sequence Column")."""

from __future__ import annotations

from test_stream_load import _put, _rows


def _exec(server, db: str, *sqls: str) -> None:
    conn = server.connect(db)
    try:
        with conn.cursor() as cur:
            for sql in sqls:
                cur.execute(sql)
    finally:
        conn.close()


def test_partial_columns_keep_the_other_columns(server, fresh_db):
    _exec(server, fresh_db,
          "CREATE TABLE u (id INT NOT NULL, status VARCHAR(10), amount INT DEFAULT '0') "
          "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ('replication_num' = '1')",
          "INSERT INTO u VALUES (1, 'new', 100), (2, 'new', 200)")
    status, reply = _put(server, fresh_db, "u", b"1,paid\n3,new\n",
                         {"column_separator": ",", "columns": "id,status",
                          "partial_columns": "true"})
    assert status == 200 and reply["Status"] == "Success", reply
    assert _rows(server, fresh_db, "SELECT id, status, amount FROM u ORDER BY id") == [
        (1, "paid", 100), (2, "new", 200), (3, "new", 0)]
    # without the header the load replaces whole rows
    status, reply = _put(server, fresh_db, "u", b"2,done\n",
                         {"column_separator": ",", "columns": "id,status"})
    assert reply["Status"] == "Success", reply
    assert _rows(server, fresh_db, "SELECT id, status, amount FROM u WHERE id = 2") == [
        (2, "done", 0)]


def test_sequence_column_decides_across_loads(server, fresh_db):
    _exec(server, fresh_db,
          "CREATE TABLE s (id INT NOT NULL, v VARCHAR(10), ver BIGINT) UNIQUE KEY(id) "
          "DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1', "
          "'function_column.sequence_col' = 'ver')")
    for body in (b"1,b,2\n2,x,9\n", b"1,a,1\n2,y,10\n"):
        status, reply = _put(server, fresh_db, "s", body, {"column_separator": ","})
        assert reply["Status"] == "Success", reply
    assert _rows(server, fresh_db, "SELECT id, v, ver FROM s ORDER BY id") == [
        (1, "b", 2), (2, "y", 10)]


def test_load_into_a_temporary_partition(server, fresh_db):
    _exec(server, fresh_db,
          "CREATE TABLE t (d DATE NOT NULL, k INT NOT NULL) DUPLICATE KEY(d, k) "
          "PARTITION BY RANGE(d) (PARTITION p1 VALUES LESS THAN ('2024-02-01')) "
          "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')",
          "INSERT INTO t VALUES ('2024-01-05', 1)",
          "ALTER TABLE t ADD TEMPORARY PARTITION tp1 VALUES [('2024-01-01'), ('2024-02-01'))")
    status, reply = _put(server, fresh_db, "t", b"2024-01-09,9\n2024-03-01,8\n",
                         {"column_separator": ",", "temporary_partitions": "tp1",
                          "max_filter_ratio": "0.5"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 1, reply
    assert _rows(server, fresh_db, "SELECT k FROM t") == [(1,)]
    assert _rows(server, fresh_db, "SELECT k FROM t TEMPORARY PARTITION (tp1)") == [(9,)]
    _exec(server, fresh_db, "ALTER TABLE t REPLACE PARTITION (p1) WITH TEMPORARY PARTITION (tp1)"
          " PROPERTIES ('strict_range' = 'false')")
    assert _rows(server, fresh_db, "SELECT k FROM t") == [(9,)]


def test_partial_columns_rules(server, fresh_db):
    """Doris's refusals (StreamLoadPlanner): partial update only on merge-on-write tables, every
    key column named; with strict_mode a new key's row is filtered (counted, max_filter_ratio
    decides), without it the row is inserted with defaults."""
    _exec(server, fresh_db,
          "CREATE TABLE mor (id INT NOT NULL, a INT, b INT) UNIQUE KEY(id) "
          "DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1', "
          "'enable_unique_key_merge_on_write' = 'false')",
          "INSERT INTO mor VALUES (1, 1, 1)",
          "CREATE TABLE mow (k1 INT NOT NULL, k2 INT NOT NULL, a INT, b INT) UNIQUE KEY(k1, k2) "
          "DISTRIBUTED BY HASH(k1) BUCKETS 1 PROPERTIES ('replication_num' = '1')",
          "INSERT INTO mow VALUES (1, 1, 10, 100)")
    partial = {"column_separator": ",", "partial_columns": "true"}
    status, reply = _put(server, fresh_db, "mor", b"1,5\n", {**partial, "columns": "id,a"})
    assert reply["Status"] == "Fail" and \
        "Only unique key merge on write support partial update" in reply["Message"], reply
    assert _rows(server, fresh_db, "SELECT id, a, b FROM mor") == [(1, 1, 1)]
    status, reply = _put(server, fresh_db, "mow", b"1,5\n", {**partial, "columns": "k1,a"})
    assert reply["Status"] == "Fail" and \
        "Partial update should include all key columns, missing: k2" in reply["Message"], reply
    status, reply = _put(server, fresh_db, "mow", b"1,1,7\n2,2,8\n",
                         {**partial, "columns": "k1,k2,a", "strict_mode": "true"})
    assert reply["Status"] == "Fail" and reply["NumberFilteredRows"] == 1, reply
    status, reply = _put(server, fresh_db, "mow", b"1,1,7\n2,2,8\n",
                         {**partial, "columns": "k1,k2,a", "strict_mode": "true",
                          "max_filter_ratio": "0.5"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 1, reply
    status, reply = _put(server, fresh_db, "mow", b"3,3,9\n", {**partial, "columns": "k1,k2,a"})
    assert reply["Status"] == "Success", reply
    assert _rows(server, fresh_db, "SELECT k1, k2, a, b FROM mow ORDER BY k1") == [
        (1, 1, 7, 100), (3, 3, 9, None)]


def test_sequence_col_table_needs_the_column_in_columns(server, fresh_db):
    """A `function_column.sequence_col` table: a load whose `columns` leaves the column out
    fails ("need to specify the sequence column"), nothing loaded."""
    _exec(server, fresh_db,
          "CREATE TABLE sq (id INT NOT NULL, score INT, t BIGINT) UNIQUE KEY(id) "
          "DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1', "
          "'function_column.sequence_col' = 't')")
    status, reply = _put(server, fresh_db, "sq", b"1,200\n",
                         {"column_separator": ",", "columns": "id,score"})
    assert reply["Status"] == "Fail" and \
        "Table sq has sequence column, need to specify the sequence column" in reply["Message"]
    assert _rows(server, fresh_db, "SELECT count(*) FROM sq") == [(0,)]
