"""A heavy schema change is a job that waits for the loads begun before it (WAITING_TXN), as
Doris's SchemaChangeJobV2: the ALTER returns at once, SHOW ALTER TABLE COLUMN shows the job
WAITING_TXN with its watershed transaction while a two-phase Stream Load is pre-committed, a
second ALTER gets SchemaChangeHandler's refusal, queries see the old schema, and CANCEL ends the
wait (new loads then go in at once, and the pending load still commits)."""

from __future__ import annotations

import base64
import json
import time
import urllib.request

import pymysql
import pytest


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def _http(server, path: str, headers: dict, body: bytes = b"") -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.http_port}{path}", data=body, method="PUT",
        headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(), **headers})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def _pre_commit(server, db: str, label: str, body: bytes) -> int:
    reply = _http(server, f"/api/{db}/t/_stream_load",
                  {"column_separator": ",", "two_phase_commit": "true", "label": label}, body)
    assert reply["Status"] == "Success", reply
    return reply["TxnId"]


def _commit(server, db: str, txn_id: int) -> None:
    done = _http(server, f"/api/{db}/_stream_load_2pc",
                 {"txn_id": str(txn_id), "txn_operation": "commit"})
    assert done["status"] == "Success", done


def _jobs(conn) -> list[tuple]:
    """(IndexName, TransactionId, State, Msg) per job of SHOW ALTER TABLE COLUMN."""
    return [(r[4], int(r[8]), r[9], r[10]) for r in query(conn, "SHOW ALTER TABLE COLUMN")]


DDL = ("CREATE TABLE t (k INT, g INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
       "ROLLUP (r_g (g, v)) PROPERTIES (\"replication_num\" = \"1\")")


def test_heavy_change_waits_for_loads_in_flight(server, fresh_db):
    conn = server.connect(fresh_db)
    query(conn, DDL)
    query(conn, "INSERT INTO t VALUES (1, 1, 10), (2, 2, 20)")
    txn = _pre_commit(server, fresh_db, "before_alter", b"3,1,5\n4,2,7\n")

    started = time.monotonic()
    query(conn, "ALTER TABLE t MODIFY COLUMN v BIGINT")
    assert time.monotonic() - started < 5  # returned at once, not after the load
    jobs = _jobs(conn)
    # one job per index holding v (base and rollup), one watershed after the load's txn
    assert [(j[0], j[2]) for j in jobs] == [("t", "WAITING_TXN"), ("r_g", "WAITING_TXN")], jobs
    assert jobs[0][1] == jobs[1][1] > txn
    assert [r[0] for r in query(conn, "SHOW ALTER TABLE COLUMN WHERE State = 'WAITING_TXN' "
                                      "ORDER BY JobId DESC LIMIT 1")] == \
        [max(r[0] for r in query(conn, "SHOW ALTER TABLE COLUMN"))]
    # SchemaChangeHandler: a table under a job takes no other ALTER
    # (an index or bloom filter added meanwhile would also be lost at the swap)
    for sql in ("ALTER TABLE t ADD COLUMN x INT", "ALTER TABLE t ADD ROLLUP r_k (k, v)",
                "ALTER TABLE t ORDER BY (k, v, g)", "CREATE INDEX i_g ON t (g) USING BITMAP",
                'ALTER TABLE t SET ("bloom_filter_columns" = "g")'):
        with pytest.raises(pymysql.err.OperationalError) as err:
            query(conn, sql)
        assert err.value.args == (1105, "errCode = 2, detailMessage = Table[t]'s "
                                        "state(SCHEMA_CHANGE) is not NORMAL. Do not allow "
                                        "doing ALTER ops"), err.value.args
    # the old schema until the swap
    assert [r[1] for r in query(conn, "DESC t") if r[0] == "v"] == ["INT"]
    assert query(conn, "SELECT k, g, v FROM t ORDER BY k") == ((1, 1, 10), (2, 2, 20))

    _commit(server, fresh_db, txn)
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert [(j[0], j[2]) for j in _jobs(conn)] == [("t", "FINISHED"), ("r_g", "FINISHED")]
    assert [r[1] for r in query(conn, "DESC t") if r[0] == "v"] == ["BIGINT"]
    query(conn, "INSERT INTO t VALUES (5, 1, 99999999999)")
    assert query(conn, "SELECT k, g, v FROM t ORDER BY k") == (
        (1, 1, 10), (2, 2, 20), (3, 1, 5), (4, 2, 7), (5, 1, 99999999999))
    plan = "\n".join(r[0] for r in query(conn, "EXPLAIN SELECT g, sum(v) FROM t GROUP BY g"))
    assert "rollup: r_g" in plan
    assert query(conn, "SELECT g, sum(v) FROM t GROUP BY g ORDER BY g") == \
        ((1, 100000000014), (2, 27))


def test_cancel_while_waiting_lets_loads_in(server, fresh_db):
    conn = server.connect(fresh_db)
    query(conn, DDL)
    query(conn, "INSERT INTO t VALUES (1, 1, 10)")
    txn = _pre_commit(server, fresh_db, "held", b"2,2,20\n")
    query(conn, "ALTER TABLE t ADD COLUMN k2 INT KEY DEFAULT \"0\" AFTER k")
    assert [j[2] for j in _jobs(conn)] == ["WAITING_TXN"]
    query(conn, f"CANCEL ALTER TABLE COLUMN FROM {fresh_db}.t")
    assert [(j[2], j[3]) for j in _jobs(conn)] == [("CANCELLED", "user cancelled")]
    with pytest.raises(pymysql.err.OperationalError, match="is not under SCHEMA_CHANGE"):
        query(conn, "CANCEL ALTER TABLE COLUMN FROM t")
    # the cancelled job no longer holds the load gate (it would for up to 30 s)
    started = time.monotonic()
    query(conn, "INSERT INTO t VALUES (3, 1, 30)")
    assert time.monotonic() - started < 5
    _commit(server, fresh_db, txn)  # the shape did not change: the load publishes
    assert [r[0] for r in query(conn, "DESC t")] == ["k", "g", "v"]
    assert query(conn, "SELECT k, g, v FROM t ORDER BY k") == ((1, 1, 10), (2, 2, 20), (3, 1, 30))
    query(conn, "ALTER TABLE t ADD COLUMN k2 INT KEY DEFAULT \"0\" AFTER k")  # NORMAL again
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert query(conn, "SELECT * FROM t ORDER BY k") == ((1, 0, 1, 10), (2, 0, 2, 20),
                                                         (3, 0, 1, 30))
