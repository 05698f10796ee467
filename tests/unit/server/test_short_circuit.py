"""server/short_circuit.py: a key lookup answered by the light plan returns exactly what the
general path returns (rows in order, column names, types), is taken only for the shapes it
owns, and its cached plan follows DDL (ADD/DROP COLUMN, TRUNCATE, DROP PARTITION, DROP and
re-CREATE). One in-process server (Services over a temporary data dir), sessions called
directly: `short_circuit(sql)` is the light path, `execute(sql)` with the session variable
enable_short_circuit_query = false the general one."""

from __future__ import annotations

import pyarrow as pa
import pytest

from server import short_circuit
from server.results import RowsResult
from server.session import DorisSession
from session_testutil import run


@pytest.fixture
def session(services):
    s = DorisSession(services)
    run(s, "CREATE DATABASE IF NOT EXISTS sc")
    s.database = "sc"
    short_circuit.clear()
    return s


def materialized(result: RowsResult) -> tuple[list, pa.Table]:
    batches = list(result.batches)
    table = pa.concat_tables(batches) if batches else None
    return [(c.name, c.type.sql()) for c in result.columns], table


def general(s: DorisSession, sql: str) -> tuple[list, pa.Table]:
    s.variables.set("enable_short_circuit_query", False)
    try:
        return materialized(run(s, sql))
    finally:
        s.variables.set("enable_short_circuit_query", True)


def light(s: DorisSession, sql: str) -> tuple[list, pa.Table]:
    got = s.short_circuit(sql)
    assert got is not None, f"not short-circuited: {sql}"
    return materialized(got[0])


def same(s: DorisSession, sql: str) -> pa.Table:
    """The light path's answer, checked equal to the general path's (names, types, rows)."""
    expected_cols, expected = general(s, sql)
    cols, table = light(s, sql)
    assert cols == expected_cols, sql
    assert table.to_pylist() == expected.to_pylist(), sql
    assert [f.type for f in table.schema] == [f.type for f in expected.schema], sql
    return table


def test_duplicate_table_keys_prefix_missing_and_repeated(session):
    run(session, "DROP TABLE IF EXISTS d")
    run(session, """CREATE TABLE d (k1 INT, k2 VARCHAR(20), v DECIMAL(10, 2), dt DATE)
        DUPLICATE KEY(k1, k2) DISTRIBUTED BY HASH(k1) BUCKETS 3
        PROPERTIES ("replication_num" = "1")""")
    run(session, "INSERT INTO d VALUES (1, 'a', 1.50, '2024-01-01'), (1, 'b', 2.00, NULL), "
                 "(2, 'a', NULL, '2024-02-02'), (1, 'a', 3.25, '2024-03-03'), (NULL, 'n', 9, NULL)")
    run(session, "INSERT INTO d VALUES (1, 'a', 4.00, '2024-04-04'), (-7, 'neg', 1, NULL)")
    assert same(session, "SELECT * FROM d WHERE k1 = 1").num_rows == 4  # repeated keys
    assert same(session, "SELECT * FROM d WHERE k1 = 1 AND k2 = 'a'").num_rows == 3
    assert same(session, "SELECT v, k2 AS name FROM d WHERE k2 = 'b' AND k1 = 1").num_rows == 1
    assert same(session, "SELECT * FROM d WHERE k1 = 42").num_rows == 0  # missing key
    assert same(session, "SELECT * FROM d WHERE k1 = -7").num_rows == 1
    assert same(session, "select d.k1, d.v from d where d.k1 = 2").num_rows == 1
    assert session.short_circuit("select D.v from d where d.k1 = 2") is None  # unknown 'D'
    assert same(session, "SELECT * FROM d x WHERE x.k1 = 1 AND x.k2 = 'zz'").num_rows == 0


def test_not_taken_outside_its_shape(session):
    run(session, "DROP TABLE IF EXISTS s")
    run(session, """CREATE TABLE s (k1 INT, k2 INT, v INT) DUPLICATE KEY(k1, k2)
        DISTRIBUTED BY HASH(k1) BUCKETS 2 PROPERTIES ("replication_num" = "1")""")
    run(session, "INSERT INTO s VALUES (1, 2, 3), (NULL, 5, 6)")
    for sql in ["SELECT * FROM s WHERE k2 = 2",              # not a key prefix
                "SELECT * FROM s WHERE v = 3",                # a value column
                "SELECT * FROM s WHERE k1 = 1 LIMIT 1",       # LIMIT
                "SELECT * FROM s WHERE k1 = 1 ORDER BY k2",
                "SELECT k1 + 1 FROM s WHERE k1 = 1",          # an expression
                "SELECT * FROM s WHERE k1 > 1",
                "SELECT * FROM s WHERE k1 = NULL",            # NULL: the general path
                "SELECT * FROM s WHERE k1 IS NULL",
                "SELECT * FROM s WHERE k1 = 1 OR k1 = 2",
                "SELECT * FROM s WHERE k1 = 1 AND k1 = 1",
                "SELECT * FROM s WHERE k1 = 1.5",             # not exactly an INT: general
                "SELECT * FROM s WHERE k1 = '1'",             # needs an implicit cast
                "SELECT /*+ SET_VAR(query_timeout = 1) */ * FROM s WHERE k1 = 1",
                "SELECT * FROM s WHERE k1 = @x",
                "SELECT * FROM s WHERE k1 = 1; SELECT 1",
                "SELECT * FROM nosuch WHERE k = 1",
                "SELECT * FROM s, s t2 WHERE s.k1 = 1"]:
        assert session.short_circuit(sql) is None, sql
    run(session, "SET show_hidden_columns = true")
    try:
        assert session.short_circuit("SELECT * FROM s WHERE k1 = 1") is None
    finally:
        run(session, "SET show_hidden_columns = false")
    assert session.short_circuit("SELECT * FROM s WHERE k1 = 1") is not None


def test_unique_table_delete_sign_and_sequence_column(session):
    run(session, "DROP TABLE IF EXISTS u")
    run(session, """CREATE TABLE u (k INT NOT NULL, v VARCHAR(10), ts INT) UNIQUE KEY(k)
        DISTRIBUTED BY HASH(k) BUCKETS 2
        PROPERTIES ("replication_num" = "1", "function_column.sequence_col" = "ts")""")
    run(session, "INSERT INTO u VALUES (1, 'new', 20), (2, 'b', 5), (3, 'c', 1)")
    run(session, "INSERT INTO u (k, v, ts) VALUES (1, 'old', 10), (3, 'c2', 2)")
    run(session, "INSERT INTO u (k, v, ts, __DORIS_DELETE_SIGN__) VALUES (1, 'x', 19, 1), "
                 "(2, 'x', 5, 1)")
    assert same(session, "SELECT * FROM u WHERE k = 1").to_pylist() == \
        [{"k": 1, "v": "new", "ts": 20}]  # the delete row's sequence value lost
    assert same(session, "SELECT * FROM u WHERE k = 2").num_rows == 0  # deleted
    assert same(session, "SELECT v FROM u WHERE k = 3").to_pylist() == [{"v": "c2"}]
    run(session, "DELETE FROM u WHERE k = 3")
    assert same(session, "SELECT * FROM u WHERE k = 3").num_rows == 0


def test_aggregate_table_merges(session):
    run(session, "DROP TABLE IF EXISTS a")
    run(session, """CREATE TABLE a (k INT, s BIGINT SUM, m INT MAX) AGGREGATE KEY(k)
        DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")""")
    run(session, "INSERT INTO a VALUES (1, 10, 3), (2, 1, 1)")
    run(session, "INSERT INTO a VALUES (1, 5, 7)")
    assert same(session, "SELECT * FROM a WHERE k = 1").to_pylist() == [{"k": 1, "s": 15, "m": 7}]
    run(session, "DROP TABLE IF EXISTS b")
    run(session, """CREATE TABLE b (k INT, u BITMAP BITMAP_UNION) AGGREGATE KEY(k)
        DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    assert session.short_circuit("SELECT * FROM b WHERE k = 1") is None  # BITMAP: general path
    assert session.short_circuit("SELECT u FROM b WHERE k = 1") is None
    assert session.short_circuit("SELECT k FROM b WHERE k = 1") is not None


def test_partitions_schema_change_truncate_and_drop(session):
    run(session, "DROP TABLE IF EXISTS p")
    run(session, """CREATE TABLE p (dt DATE, id BIGINT, v VARCHAR(8)) DUPLICATE KEY(dt, id)
        PARTITION BY RANGE(dt) (PARTITION p1 VALUES LESS THAN ('2024-02-01'),
                                PARTITION p2 VALUES LESS THAN ('2024-03-01'))
        DISTRIBUTED BY HASH(id) BUCKETS 4 PROPERTIES ("replication_num" = "1")""")
    run(session, "INSERT INTO p VALUES ('2024-01-05', 1, 'a'), ('2024-02-05', 1, 'b'), "
                 "('2024-02-05', 2, 'c')")
    lookup = "SELECT * FROM p WHERE dt = '2024-02-05' AND id = 1"
    assert same(session, lookup).to_pylist() == [
        {"dt": __import__("datetime").date(2024, 2, 5), "id": 1, "v": "b"}]
    assert same(session, "SELECT id, v FROM p WHERE dt = '2024-01-05'").num_rows == 1
    run(session, "ALTER TABLE p ADD COLUMN extra INT DEFAULT '7'")
    assert [c for c, _ in light(session, lookup)[0]] == ["dt", "id", "v", "extra"]
    assert same(session, lookup).column("extra").to_pylist() == [7]
    run(session, "ALTER TABLE p DROP COLUMN v")
    assert [c for c, _ in same_cols(session, lookup)] == ["dt", "id", "extra"]
    assert session.short_circuit("SELECT v FROM p WHERE dt = '2024-02-05'") is None  # gone
    run(session, "ALTER TABLE p DROP PARTITION p2")
    assert same(session, lookup).num_rows == 0
    assert same(session, "SELECT * FROM p WHERE dt = '2024-01-05'").num_rows == 1
    run(session, "TRUNCATE TABLE p")
    assert same(session, "SELECT * FROM p WHERE dt = '2024-01-05'").num_rows == 0
    run(session, "DROP TABLE p")
    assert session.short_circuit(lookup) is None  # the general path reports the error
    run(session, """CREATE TABLE p (dt DATE, id BIGINT, w INT) DUPLICATE KEY(dt, id)
        DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    run(session, "INSERT INTO p VALUES ('2024-02-05', 1, 99)")
    assert same(session, lookup).to_pylist()[0]["w"] == 99  # the new table's plan


def same_cols(s: DorisSession, sql: str) -> list:
    same(s, sql)
    return light(s, sql)[0]


def test_plan_cache_follows_the_catalog_epoch(session):
    run(session, "DROP TABLE IF EXISTS e")
    run(session, """CREATE TABLE e (k INT, v INT) DUPLICATE KEY(k)
        DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    run(session, "INSERT INTO e VALUES (1, 1)")
    catalog = session.services.catalog
    assert session.short_circuit("SELECT * FROM e WHERE k = 1") is not None
    before = catalog.ddl_epoch
    run(session, "INSERT INTO e VALUES (1, 2)")  # a load leaves cached plans alone
    assert catalog.ddl_epoch == before
    assert light(session, "SELECT v FROM e WHERE k = 1")[1].num_rows == 2
    run(session, "ALTER TABLE e RENAME COLUMN v w")
    assert catalog.ddl_epoch > before
    assert session.short_circuit("SELECT v FROM e WHERE k = 1") is None
    assert same_cols(session, "SELECT w FROM e WHERE k = 1") == [("w", "int")]


def test_a_held_catalog_lock_is_not_waited_for_nor_remembered(session):
    run(session, "DROP TABLE IF EXISTS h")
    run(session, """CREATE TABLE h (k INT, v INT) DUPLICATE KEY(k)
        DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    run(session, "INSERT INTO h VALUES (1, 1)")
    import threading
    held, release = threading.Event(), threading.Event()

    def hold():
        with session.services.catalog.lock:
            held.set()
            release.wait(10)
    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    try:
        assert session.short_circuit("SELECT * FROM h WHERE k = 1") is None  # not planned now
    finally:
        release.set()
        t.join()
    assert session.short_circuit("SELECT * FROM h WHERE k = 1") is not None  # planned later


def test_constant_queries_answered_from_the_first_result(session):
    sql = "SELECT 1, 'x' AS a, -2.5"
    assert session.short_circuit(sql) is None  # not seen yet: the general way
    cols, expected = materialized(run(session, sql))
    got_cols, got = light(session, sql)
    assert got_cols == cols and got.to_pylist() == expected.to_pylist()
    for sql in ("SELECT NOW()", "SELECT DATABASE()", "SELECT @@version_comment"):
        run(session, sql)
        assert session.short_circuit(sql) is None, sql  # not constants, even once inlined


def test_string_keys_with_quotes_take_the_short_path(session):
    """A doubled quote in a string key (`'O''Brien'`) is one quote: the lookup is light and
    equals the general path; a backslash escape is left to the general path."""
    run(session, "DROP TABLE IF EXISTS q")
    run(session, "CREATE TABLE q (name VARCHAR(20), k INT, v INT) DUPLICATE KEY(name, k) "
                 "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    run(session, "INSERT INTO q VALUES ('O''Brien', 1, 10), ('''', 2, 20), ('x''''y', 3, 30), "
                 "('O', 1, 40)")
    assert same(session, "SELECT v FROM q WHERE name = 'O''Brien' AND k = 1").to_pylist() == \
        [{"v": 10}]
    assert same(session, "SELECT v FROM q WHERE name = '''' AND k = 2").to_pylist() == [{"v": 20}]
    assert same(session, "SELECT v FROM q WHERE name = 'x''''y'").to_pylist() == [{"v": 30}]
    assert same(session, "SELECT v FROM q WHERE name = 'O''Brie'").to_pylist() == []
    assert session.short_circuit("SELECT v FROM q WHERE name = 'O\\'Brien'") is None
    assert general(session, "SELECT v FROM q WHERE name = 'O\\'Brien'")[1].to_pylist() == \
        [{"v": 10}]
