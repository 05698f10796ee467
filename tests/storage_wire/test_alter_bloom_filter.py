"""ALTER TABLE SET ("bloom_filter_columns"): validated like CREATE TABLE, journaled, and from
then on every new segment carries the filters, which prune pages (SHOW QUERY PROFILE);
segments written before keep none; "" removes them; a restart keeps the property."""

from __future__ import annotations

import random

import pymysql
import pytest

from test_scan_profile import profiled

ROWS = 60_000


def _run(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def _load(conn, us: list[int], offset: int) -> None:
    values = ", ".join(f"({offset + k}, {u})" for k, u in enumerate(us))
    _run(conn, f"INSERT INTO t VALUES {values}")


def test_alter_bloom_filter_columns(server_factory):
    srv = server_factory("bloom").start()
    conn = srv.connect()
    _run(conn, "CREATE DATABASE d")
    _run(conn, "USE d")
    _run(conn, "CREATE TABLE t (k INT NOT NULL, u BIGINT) DUPLICATE KEY(k) "
               "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    rng = random.Random(7)
    old = [rng.randrange(1 << 40) for _ in range(ROWS)]
    new = [rng.randrange(1 << 40) for _ in range(ROWS)]
    _load(conn, old, 0)
    _run(conn, "SET enable_profile = true")

    with pytest.raises(pymysql.err.MySQLError, match="invalid column: nope"):
        _run(conn, "ALTER TABLE t SET ('bloom_filter_columns' = 'nope')")
    with pytest.raises(pymysql.err.MySQLError, match="Bloom filter fpp should in"):
        _run(conn, "ALTER TABLE t SET ('bloom_filter_columns' = 'u', 'bloom_filter_fpp' = '0.5')")
    _run(conn, "ALTER TABLE t SET ('bloom_filter_columns' = 'u', 'bloom_filter_fpp' = '0.01')")
    (ddl,), = [r[1:] for r in _run(conn, "SHOW CREATE TABLE t")]
    assert '"bloom_filter_columns" = "u"' in ddl and '"bloom_filter_fpp" = "0.01"' in ddl

    _load(conn, new, ROWS)
    rows, c = profiled(conn, f"SELECT k FROM t WHERE u = {new[777]}")
    assert rows == [(ROWS + 777,)]
    assert c["PagesBloomFilterFiltered"] >= 1  # the new segment's pages, pruned
    rows, c = profiled(conn, f"SELECT k FROM t WHERE u = {old[777]}")
    assert rows == [(777,)]  # the old segment has no filter: read, still the right answer

    srv.restart()
    conn = srv.connect("d")
    (ddl,), = [r[1:] for r in _run(conn, "SHOW CREATE TABLE t")]
    assert '"bloom_filter_columns" = "u"' in ddl
    _run(conn, "ALTER TABLE t SET ('bloom_filter_columns' = '')")
    (ddl,), = [r[1:] for r in _run(conn, "SHOW CREATE TABLE t")]
    assert "bloom_filter_columns" not in ddl
    _run(conn, "SET enable_profile = true")
    rows, c = profiled(conn, f"SELECT k FROM t WHERE u = {new[777]}")
    assert rows == [(ROWS + 777,)] and c.get("PagesBloomFilterFiltered", 0) == 0
