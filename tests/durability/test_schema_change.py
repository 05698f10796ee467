"""Schema change under kill -9: a light change is durable once acknowledged, a heavy change's
job leaves either the old schema or the complete new one.

A light ADD / DROP / RENAME COLUMN is one journal entry: after a restart the table has the new
schema and older rowsets still read through it (column unique ids). A heavy change (MODIFY
COLUMN type) is a job per index (the base and a rollup holding the column): killed
mid-conversion, the server resumes them at start-up and the new tablets then hold every
acknowledged row, loaded before or during the jobs."""

from __future__ import annotations

DDL = """
CREATE TABLE big (k INT NOT NULL, d INT NOT NULL, v INT, s VARCHAR(10))
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 16 ROLLUP (r_d (d, v))
PROPERTIES ("replication_num" = "1")
"""


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def _loaded(srv, db: str, copies: int):
    """A connection to `db` holding `big`: 1000 << copies rows (k, k % 7, k % 1000, ...),
    loaded 4000 rows per INSERT."""
    conn = srv.connect()
    for sql in (f"CREATE DATABASE {db}", f"USE {db}", DDL):
        query(conn, sql)
    total = 1000 << copies
    for start in range(0, total, 4000):
        values = [f"({i}, {i % 7}, {i % 1000}, 's{i % 3}')"
                  for i in range(start, min(total, start + 4000))]
        query(conn, "INSERT INTO big VALUES " + ", ".join(values))
    return conn


def test_kill9_after_light_schema_changes(server_factory):
    srv = server_factory().start()
    conn = _loaded(srv, "lsc", 2)
    query(conn, 'ALTER TABLE big ADD COLUMN c INT DEFAULT "7"')
    query(conn, "INSERT INTO big (k, d, v, s, c) VALUES (100000, 1, 1, 'new', 8)")
    query(conn, "ALTER TABLE big DROP COLUMN s")
    query(conn, "ALTER TABLE big RENAME COLUMN v v2")
    query(conn, "ALTER TABLE big ADD COLUMN s VARCHAR(10)")  # the dropped name: a new column
    expected = query(conn, "SELECT c, count(*), sum(v2), count(s) FROM big GROUP BY c ORDER BY c")
    assert expected == ((7, 4000, 4 * sum(range(1000)), 0), (8, 1, 1, 0))
    srv.kill9()

    srv.start()
    conn = srv.connect("lsc")
    assert [r[0] for r in query(conn, "DESC big")] == ["k", "d", "v2", "c", "s"]
    # each light change is a FINISHED job, as Doris records them
    assert [(r[1], r[9]) for r in query(conn, "SHOW ALTER TABLE COLUMN")] == \
        [("big", "FINISHED")] * 4
    assert query(conn, "SELECT c, count(*), sum(v2), count(s) FROM big GROUP BY c "
                       "ORDER BY c") == expected
    # compaction writes the new schema; the rows stay the same
    query(conn, "ADMIN COMPACT TABLE big PARTITION big WHERE type = 'BASE'")
    assert query(conn, "SELECT c, count(*), sum(v2), count(s) FROM big GROUP BY c "
                       "ORDER BY c") == expected
    srv.kill9()
    srv.start()
    conn = srv.connect("lsc")
    assert query(conn, "SELECT c, count(*), sum(v2), count(s) FROM big GROUP BY c "
                       "ORDER BY c") == expected


def _jobs(conn) -> list[tuple]:
    return [(r[1], r[4], r[9]) for r in query(conn, "SHOW ALTER TABLE COLUMN")]


def test_kill9_mid_schema_change_job_resumes(server_factory):
    srv = server_factory().start()
    conn = _loaded(srv, "hsc", 5)
    # 16 tablets x 100 ms: the job is still converting when the server dies.
    query(conn, 'ADMIN SET FRONTEND CONFIG ("rollup_job_tablet_delay_ms" = "100")')
    query(conn, "ALTER TABLE big MODIFY COLUMN v BIGINT")
    query(conn, "INSERT INTO big VALUES (1, 100, 9999999, 'during')")  # during the job
    jobs = _jobs(conn)
    assert [r[0] for r in query(conn, "DESC big") if r[0] == "v"] == ["v"]
    assert [r[1] for r in query(conn, "DESC big") if r[0] == "v"] == ["INT"]  # not yet
    expected = query(conn, "SELECT d, count(*), sum(v) FROM big GROUP BY d ORDER BY d")
    srv.kill9()
    # one job per index (the base and the rollup holding v); the kill came mid-job
    assert jobs == [("big", "big", "RUNNING"), ("big", "r_d", "RUNNING")], jobs

    srv.start()
    conn = srv.connect("hsc")
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _jobs(conn) == [("big", "big", "FINISHED"), ("big", "r_d", "FINISHED")]
    assert [r[3] for r in query(conn, "DESC big ALL") if r[2] == "v"] == ["BIGINT", "BIGINT"]
    plan = "\n".join(r[0] for r in query(conn, "EXPLAIN SELECT d, sum(v) FROM big GROUP BY d"))
    assert "rollup: r_d" in plan
    assert query(conn, "SELECT d, count(*), sum(v) FROM big GROUP BY d ORDER BY d") == expected
    assert expected[-1] == (100, 1, 9999999)
    query(conn, "INSERT INTO big VALUES (2, 100, 99999999999, 'big')")
    assert query(conn, "SELECT max(v) FROM big") == ((99999999999,),)


def test_cancel_schema_change_job_keeps_old_schema(server_factory):
    srv = server_factory().start()
    conn = _loaded(srv, "csc", 4)
    query(conn, 'ADMIN SET FRONTEND CONFIG ("rollup_job_tablet_delay_ms" = "100")')
    query(conn, "ALTER TABLE big ADD COLUMN k2 INT KEY DEFAULT \"1\" AFTER k")
    try:
        query(conn, "ALTER TABLE big ADD COLUMN x INT")
        raise AssertionError("a second ALTER during the job must be refused")
    except Exception as e:  # noqa: BLE001 - pymysql's error carries Doris's message
        assert "Table[big]'s state(SCHEMA_CHANGE) is not NORMAL. Do not allow doing ALTER ops" \
            in str(e), e
    query(conn, "CANCEL ALTER TABLE COLUMN FROM big")
    srv.kill9()
    srv.start()
    conn = srv.connect("csc")
    rows = query(conn, "SHOW ALTER TABLE COLUMN")
    assert [(r[9], r[10]) for r in rows] == [("CANCELLED", "user cancelled")]
    assert [r[0] for r in query(conn, "DESC big")] == ["k", "d", "v", "s"]
    assert query(conn, "SELECT count(*), sum(v) FROM big") == ((16000, 16 * sum(range(1000))),)


def _two_phase(srv, path: str, headers: dict, body: bytes = b"") -> dict:
    import base64
    import json
    import urllib.request

    req = urllib.request.Request(
        f"http://{srv.host}:{srv.http_port}{path}", data=body, method="PUT",
        headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(), **headers})
    return json.loads(urllib.request.urlopen(req, timeout=60).read())


def test_kill9_while_schema_change_waits_for_a_load(server_factory):
    """A heavy change WAITING_TXN for a pre-committed load survives kill -9 still waiting,
    with the old schema readable; loads begun after the ALTER go in meanwhile (before and
    after the restart) and write the new tablets too; the commit then lets its jobs run, and
    the new tablets hold every row once, also after another restart."""
    srv = server_factory().start()
    conn = _loaded(srv, "wsc", 1)
    reply = _two_phase(srv, "/api/wsc/big/_stream_load",
                       {"column_separator": ",", "two_phase_commit": "true"},
                       b"".join(b"%d,%d,%d,p\n" % (i, i % 7, 5000) for i in range(5000, 5300)))
    assert reply["Status"] == "Success", reply
    query(conn, "ALTER TABLE big MODIFY COLUMN v BIGINT")
    waiting = [("big", "big", "WAITING_TXN"), ("big", "r_d", "WAITING_TXN")]
    assert _jobs(conn) == waiting
    query(conn, "INSERT INTO big VALUES " + ", ".join(f"({8000 + i}, {i % 7}, 1, 'n')"
                                                      for i in range(100)))
    srv.kill9()

    srv.start()
    conn = srv.connect("wsc")
    assert _jobs(conn) == waiting
    assert [r[1] for r in query(conn, "DESC big") if r[0] == "v"] == ["INT"]
    assert query(conn, "SELECT count(*), sum(v) FROM big") == \
        ((2100, 2 * sum(range(1000)) + 100),)
    query(conn, "INSERT INTO big VALUES " + ", ".join(f"({9000 + i}, {i % 7}, 2, 'm')"
                                                      for i in range(50)))
    done = _two_phase(srv, "/api/wsc/_stream_load_2pc",
                      {"txn_id": str(reply["TxnId"]), "txn_operation": "commit"})
    assert done["status"] == "Success", done
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _jobs(conn) == [("big", "big", "FINISHED"), ("big", "r_d", "FINISHED")]
    assert [r[3] for r in query(conn, "DESC big ALL") if r[2] == "v"] == ["BIGINT", "BIGINT"]
    want = (2450, 2 * sum(range(1000)) + 300 * 5000 + 100 + 100)
    for restart in (False, True):
        if restart:
            srv.stop()
            conn = srv.start().connect("wsc")
        assert query(conn, "SELECT count(*), sum(v) FROM big") == (want,)
        plan = "\n".join(r[0] for r in query(conn, "EXPLAIN SELECT d, sum(v) FROM big "
                                                    "GROUP BY d"))
        assert "rollup: r_d" in plan
        assert sum(r[1] for r in query(conn, "SELECT d, sum(v) FROM big GROUP BY d")) == want[1]


def test_kill9_after_cancel_while_waiting(server_factory):
    """CANCEL of a job WAITING_TXN is journaled: after kill -9 the job is CANCELLED with its
    Msg, the old schema stays, and the held load still commits."""
    srv = server_factory().start()
    conn = _loaded(srv, "xsc", 1)
    reply = _two_phase(srv, "/api/xsc/big/_stream_load",
                       {"column_separator": ",", "two_phase_commit": "true"}, b"9000,1,1,q\n")
    assert reply["Status"] == "Success", reply
    query(conn, "ALTER TABLE big MODIFY COLUMN v BIGINT")  # base and rollup: two jobs
    query(conn, "CANCEL ALTER TABLE COLUMN FROM big")
    srv.kill9()
    srv.start()
    conn = srv.connect("xsc")
    assert [(r[9], r[10]) for r in query(conn, "SHOW ALTER TABLE COLUMN")] == \
        [("CANCELLED", "user cancelled")] * 2
    assert [(r[0], r[1]) for r in query(conn, "DESC big")] == \
        [("k", "INT"), ("d", "INT"), ("v", "INT"), ("s", "VARCHAR(10)")]
    done = _two_phase(srv, "/api/xsc/_stream_load_2pc",
                      {"txn_id": str(reply["TxnId"]), "txn_operation": "commit"})
    assert done["status"] == "Success", done
    assert query(conn, "SELECT count(*) FROM big") == ((2001,),)
