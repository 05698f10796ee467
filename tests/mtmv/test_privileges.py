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


def test_stream_load_into_a_view_is_refused(server, fresh_db):
    import base64
    import json
    import urllib.request
    conn = server.connect(fresh_db)
    query(conn, "CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    query(conn, "CREATE MATERIALIZED VIEW mv BUILD DEFERRED DISTRIBUTED BY RANDOM BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1') AS SELECT k FROM t")
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.http_port}/api/{fresh_db}/mv/_stream_load", data=b"1\n",
        method="PUT", headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode()})
    with urllib.request.urlopen(req, timeout=60) as resp:
        reply = json.loads(resp.read())
    assert reply["Status"] == "Fail"
    assert "Not allowed to perform current operation on async materialized view" in \
        reply["Message"]
    assert query(conn, "SELECT COUNT(*) FROM mv") == [(0,)]
