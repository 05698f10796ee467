"""Async materialized view statements check privileges as Doris does: CREATE on the view and
SELECT on what its query reads to create it, ALTER on it to refresh / alter / pause it, DROP
to drop it."""

from __future__ import annotations

import pymysql
import pytest


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()] if cur.description else cur.rowcount


def test_privileges(server, fresh_db):
    root = server.connect(fresh_db)
    query(root, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                "BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    query(root, "INSERT INTO t VALUES (1, 2)")
    query(root, "CREATE MATERIALIZED VIEW mv BUILD IMMEDIATE DISTRIBUTED BY RANDOM BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1') AS SELECT k, SUM(v) AS s FROM t GROUP BY k")
    query(root, f"CREATE USER mv_reader_{fresh_db}")
    query(root, f"GRANT SELECT_PRIV ON {fresh_db}.* TO mv_reader_{fresh_db}")
    user = pymysql.connect(host="127.0.0.1", port=server.port, user=f"mv_reader_{fresh_db}",
                           database=fresh_db)
    assert query(user, "SELECT * FROM mv") == [(1, 2)]
    for sql in ["REFRESH MATERIALIZED VIEW mv COMPLETE", "PAUSE MATERIALIZED VIEW JOB ON mv",
                "ALTER MATERIALIZED VIEW mv SET ('grace_period' = '1')",
                "DROP MATERIALIZED VIEW mv",
                "CREATE MATERIALIZED VIEW mv2 BUILD DEFERRED DISTRIBUTED BY RANDOM BUCKETS 1 "
                "AS SELECT k FROM t"]:
        with pytest.raises(pymysql.err.OperationalError, match="denied"):
            query(user, sql)
    query(root, f"DROP USER mv_reader_{fresh_db}")
