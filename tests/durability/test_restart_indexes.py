"""Indexes and DELETE versions survive restarts and kill -9: bitmap indexes added to a table with
data (side index files), dropped ones stay dropped, DELETEs keep hiding exactly the rows loaded
before them, and the bitmap index still prunes after the restart (its counters)."""

from __future__ import annotations

import re

DDL = """CREATE TABLE t (k INT NOT NULL, c VARCHAR(8), n INT, INDEX idx_n (n) USING BITMAP)
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2
PROPERTIES ("replication_num" = "1", "bloom_filter_columns" = "c")"""


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def profile_counter(conn, sql: str, counter: str) -> int:
    """The value of a scan counter in the profile of running `sql`."""
    query(conn, "SET enable_profile = true")
    query(conn, sql)
    qid = next(r[0] for r in query(conn, 'SHOW QUERY PROFILE "/"') if r[3] == sql)
    text = query(conn, f'SHOW QUERY PROFILE "/{qid}"')[0][0]
    return int(re.search(rf"- {counter}: (\d+)", text).group(1))


def bitmap_filtered(conn, sql: str) -> int:
    return profile_counter(conn, sql, "RowsBitmapIndexFiltered")


def test_indexes_and_deletes_survive_restart_and_kill9(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE idx_db")
    query(conn, "USE idx_db")
    query(conn, DDL)
    query(conn, "INSERT INTO t VALUES " + ", ".join(
        f"({i}, '{'xyz'[i % 3]}', {i % 5})" for i in range(3000)))
    query(conn, "ALTER TABLE t ADD INDEX idx_c (c) USING BITMAP COMMENT 'c'")  # side files
    query(conn, "CREATE INDEX idx_k ON t (k)")
    query(conn, "DROP INDEX idx_k ON t")
    query(conn, "DELETE FROM t WHERE n = 0 AND c = 'x'")
    query(conn, "INSERT INTO t VALUES (0, 'x', 0), (3000, 'x', 0)")
    expected = query(conn, "SELECT count(*), sum(k) FROM t WHERE c = 'x'")
    indexes = query(conn, "SHOW INDEX FROM t")
    versions = [r[2] for r in query(conn, "SHOW PARTITIONS FROM t")]
    assert [r[2] for r in indexes] == ["idx_n", "idx_c"] and versions == ["4"]
    assert bitmap_filtered(conn, "SELECT count(*) FROM t WHERE c = 'x'") > 1900
    conn.close()

    for crash in (srv.restart, lambda: (srv.kill9(), srv.start())):
        crash()
        conn = srv.connect("idx_db")
        assert query(conn, "SELECT count(*), sum(k) FROM t WHERE c = 'x'") == expected
        assert query(conn, "SHOW INDEX FROM t") == indexes
        assert [r[2] for r in query(conn, "SHOW PARTITIONS FROM t")] == versions
        assert bitmap_filtered(conn, "SELECT count(*) FROM t WHERE c = 'x'") > 1900
        conn.close()
    # idx_c's side files for the first load's segment in each of the 2 tablets; idx_k's are gone
    side_files = {p.name.rsplit("_", 1)[1] for p in srv.data_dir.rglob("*.idx")}
    assert len(list(srv.data_dir.rglob("*.idx"))) == 2 and len(side_files) == 1
