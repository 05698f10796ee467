"""Rollups through the other front doors: Stream Load writes every index in one transaction,
partition DDL gives new partitions rollup tablets, SHOW QUERY PROFILE names the index read."""

from __future__ import annotations

import base64
import json
import urllib.request

import pymysql
import pytest


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def _stream_load(server, db: str, table: str, body: bytes) -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.http_port}/api/{db}/{table}/_stream_load", data=body,
        method="PUT", headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(),
                               "column_separator": ","})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def _index(conn, sql: str) -> str:
    plan = "\n".join(r[0] for r in query(conn, "EXPLAIN " + sql))
    return next(ln.split("rollup: ")[1].strip() for ln in plan.splitlines() if "rollup: " in ln)


def test_stream_load_partitions_and_profile(server, fresh_db):
    conn = server.connect(fresh_db)
    query(conn, "CREATE TABLE t (d INT, k INT, v BIGINT SUM) AGGREGATE KEY(d, k) "
                "PARTITION BY RANGE(d) (PARTITION p1 VALUES LESS THAN (\"10\")) "
                "DISTRIBUTED BY HASH(k) BUCKETS 2 ROLLUP (r_k (k, v)) "
                "PROPERTIES (\"replication_num\" = \"1\")")
    reply = _stream_load(server, fresh_db, "t", b"1,1,10\n2,1,5\n3,2,7\n")
    assert reply["Status"] == "Success", reply
    sql = "SELECT k, sum(v) FROM t GROUP BY k ORDER BY k"
    assert _index(conn, sql) == "r_k"
    assert query(conn, sql) == ((1, 15), (2, 7))

    # A new partition gets a tablet per bucket in every index; TRUNCATE keeps the rollup.
    query(conn, "ALTER TABLE t ADD PARTITION p2 VALUES LESS THAN (\"20\")")
    tablets = query(conn, "SHOW TABLETS FROM t")
    assert len(tablets) == 2 * 2 * 2  # partitions x buckets x indexes
    reply = _stream_load(server, fresh_db, "t", b"15,1,100\n16,3,1\n")
    assert reply["Status"] == "Success", reply
    assert query(conn, sql) == ((1, 115), (2, 7), (3, 1))
    query(conn, "TRUNCATE TABLE t PARTITION (p1)")
    assert _index(conn, sql) == "r_k"
    assert query(conn, sql) == ((1, 100), (3, 1))

    query(conn, "SET enable_profile = true")
    query(conn, sql)
    listed = query(conn, 'SHOW QUERY PROFILE "/"')
    query_id = next(r[0] for r in listed if r[3] == sql)
    (text,), = query(conn, f'SHOW QUERY PROFILE "/{query_id}"')
    assert f"- Table: {fresh_db}.t(r_k)" in text
    conn.close()


def _http(server, path: str, headers: dict, body: bytes = b"") -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.http_port}{path}", data=body, method="PUT",
        headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(), **headers})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def test_add_rollup_waits_for_loads_in_flight(server, fresh_db):
    """ADD ROLLUP returns at once with its job WAITING_TXN while a load begun before it is in
    flight (a two-phase Stream Load, pre-committed); once that load commits the job runs, and
    the rollup holds its rows."""
    conn = server.connect(fresh_db)
    query(conn, "CREATE TABLE t (k INT, g INT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                "BUCKETS 2 PROPERTIES (\"replication_num\" = \"1\")")
    query(conn, "INSERT INTO t VALUES (1, 1, 10), (2, 2, 20)")
    reply = _http(server, f"/api/{fresh_db}/t/_stream_load",
                  {"column_separator": ",", "two_phase_commit": "true", "label": "in_flight"},
                  b"3,1,5\n4,2,7\n")
    assert reply["Status"] == "Success", reply
    query(conn, "ALTER TABLE t ADD ROLLUP r_g (g, v)")
    rows = query(conn, "SHOW ALTER TABLE ROLLUP")
    assert [(r[5], r[8]) for r in rows] == [("r_g", "WAITING_TXN")], rows
    assert int(rows[0][7]) > reply["TxnId"]  # the watershed transaction comes after the load's
    with pytest.raises(pymysql.err.MySQLError, match=r"state\(ROLLUP\) is not NORMAL"):
        query(conn, "ALTER TABLE t ADD ROLLUP r_k (k, v)")
    assert _index(conn, "SELECT g, sum(v) FROM t GROUP BY g") == "t"  # not visible yet
    done = _http(server, f"/api/{fresh_db}/_stream_load_2pc",
                 {"txn_id": str(reply["TxnId"]), "txn_operation": "commit"})
    assert done["status"] == "Success", done
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert [r[8] for r in query(conn, "SHOW ALTER TABLE ROLLUP")] == ["FINISHED"]
    sql = "SELECT g, sum(v) FROM t GROUP BY g ORDER BY g"
    assert _index(conn, sql) == "r_g"
    assert [tuple(r) for r in query(conn, sql)] == [(1, 15), (2, 27)]
