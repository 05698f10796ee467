"""INSERT jobs in SHOW LOAD, as Doris's InsertLoadJob: Type INSERT, State FINISHED, the
label (given or generated) and the transaction of the INSERT; kept across a kill -9."""

from __future__ import annotations


def _run(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def test_insert_jobs_in_show_load(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    _run(conn, "CREATE DATABASE sl")
    _run(conn, "USE sl")
    _run(conn, "CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
               "PROPERTIES ('replication_num' = '1')")
    _run(conn, "INSERT INTO t WITH LABEL ins_a VALUES (1), (2)")
    _run(conn, "INSERT INTO t SELECT k + 10 FROM t")
    _run(conn, "INSERT INTO t SELECT k FROM t WHERE k > 100")  # no rows: no job, as Doris
    rows = _run(conn, "SHOW LOAD")
    assert [(r[1], r[2], r[4]) for r in rows][0] == ("ins_a", "FINISHED", "INSERT")
    assert len(rows) == 2 and rows[1][1].startswith("insert_")
    assert '"ScannedRows":2' in rows[0][14] and rows[0][17] == "root"
    (job,) = _run(conn, "SHOW LOAD WHERE LABEL = 'ins_a'")
    txn = _run(conn, "SHOW TRANSACTION WHERE LABEL = 'ins_a'")
    assert str(txn[0][0]) == str(job[15])
    srv.kill9()
    srv.start()
    conn = srv.connect("sl")
    assert [r[1] for r in _run(conn, "SHOW LOAD")] == [rows[0][1], rows[1][1]]
