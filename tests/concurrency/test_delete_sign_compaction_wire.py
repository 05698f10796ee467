"""The delete sign through compaction, over the wire: loads with and without the sign, DELETE on
a merge-on-write table (delete-sign rows) and a sequence column, then ADMIN COMPACT cumulative and
base: every answer stays the same, and after the base compaction the deleted keys are gone from
storage too (show_hidden_columns no longer shows them; Doris's base compaction drops them)."""

from __future__ import annotations

import pytest

from tests.concurrency.test_compaction_wire import CONF, query


@pytest.fixture
def srv(server_factory, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(CONF)
    return server_factory(extra_args=("--config", str(conf))).start()


QUERIES = ["SELECT k, v, s FROM u ORDER BY k", "SELECT count(*), sum(v) FROM u",
           "SELECT k FROM u WHERE v > 15 ORDER BY k"]


def answers(conn) -> list:
    return [query(conn, q) for q in QUERIES]


def test_compaction_keeps_answers_and_base_drops_deleted_keys(srv):
    conn = srv.connect()
    query(conn, "CREATE DATABASE w")
    query(conn, "USE w")
    query(conn, "CREATE TABLE u (k INT NOT NULL, v INT, s INT) UNIQUE KEY(k) DISTRIBUTED BY "
                "HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1', "
                "'function_column.sequence_col' = 's')")
    query(conn, "INSERT INTO u VALUES (1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1)")
    query(conn, "INSERT INTO u (k, v, s, __DORIS_DELETE_SIGN__) VALUES (1, 0, 1, 1), "
                "(2, 0, 0, 1), (5, 50, 1, 0)")  # key 2's delete has a smaller sequence: loses
    query(conn, "DELETE FROM u WHERE v = 30")
    query(conn, "INSERT INTO u VALUES (4, 44, 2), (6, 60, 1)")
    expected = answers(conn)
    assert expected[0] == ((2, 20, 1), (4, 44, 2), (5, 50, 1), (6, 60, 1))
    query(conn, "SET show_hidden_columns = true")
    signed = query(conn, "SELECT k FROM u WHERE __DORIS_DELETE_SIGN__ = 1 ORDER BY k")
    assert signed == ((1,), (3,))
    query(conn, "SET show_hidden_columns = false")

    query(conn, "ADMIN COMPACT TABLE u PARTITION u WHERE type = 'CUMULATIVE'")
    assert answers(conn) == expected
    version_count = int(query(conn, "SHOW TABLETS FROM u")[0][15])
    query(conn, "INSERT INTO u VALUES (7, 70, 1)")
    query(conn, "INSERT INTO u (k, v, s, __DORIS_DELETE_SIGN__) VALUES (7, 0, 1, 1)")
    query(conn, "ADMIN COMPACT TABLE u PARTITION u WHERE type = 'CUMULATIVE'")
    query(conn, "ADMIN COMPACT TABLE u PARTITION u WHERE type = 'BASE'")
    assert answers(conn) == expected
    assert int(query(conn, "SHOW TABLETS FROM u")[0][15]) < version_count + 2
    query(conn, "SET show_hidden_columns = true")
    assert query(conn, "SELECT count(*) FROM u WHERE __DORIS_DELETE_SIGN__ = 1") == ((0,),)
    assert query(conn, "SELECT k FROM u ORDER BY k") == ((2,), (4,), (5,), (6,))
    conn.close()
