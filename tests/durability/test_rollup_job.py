"""ADD ROLLUP under kill -9: a restart leaves either no rollup or a complete one.

The job is journaled when it starts (the shadow index and its tablets), loads that arrive while
it runs are written to the shadow tablets too, and one journal entry publishes the converted
rowsets. Killed mid-conversion, the server resumes the job at start-up: the rollup then holds
every acknowledged row, loaded before or during the job."""

from __future__ import annotations

DDL = """
CREATE TABLE big (k INT NOT NULL, d INT NOT NULL, v BIGINT SUM DEFAULT "0")
AGGREGATE KEY(k, d) DISTRIBUTED BY HASH(k) BUCKETS 16 PROPERTIES ("replication_num" = "1")
"""


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def _states(conn) -> list[str]:
    return [r[8] for r in query(conn, "SHOW ALTER TABLE ROLLUP")]


def _loaded(srv, db: str, groups: int, value, copies: int):
    """A connection to `db` holding `big`: 2000 rows doubled `copies` times."""
    conn = srv.connect()
    query(conn, f"CREATE DATABASE {db}")
    query(conn, f"USE {db}")
    query(conn, DDL)
    rows = ", ".join(f"({i}, {i % groups}, {value(i)})" for i in range(2000))
    query(conn, f"INSERT INTO big VALUES {rows}")
    for n in (2000 << i for i in range(copies)):
        query(conn, f"INSERT INTO big SELECT k + {n}, d, v FROM big")
    return conn


def test_kill9_mid_rollup_job_resumes(server_factory):
    srv = server_factory().start()
    conn = _loaded(srv, "rj", 7, lambda i: i, 7)
    # 16 tablets x 100 ms: the job is still converting when the server dies.
    query(conn, 'ADMIN SET FRONTEND CONFIG ("rollup_job_tablet_delay_ms" = "100")')
    query(conn, "ALTER TABLE big ADD ROLLUP r_d (d, v)")
    query(conn, "INSERT INTO big VALUES (1, 100, 5), (2, 101, 6)")  # during the job
    states = _states(conn)
    expected = query(conn, "SELECT d, sum(v) FROM big GROUP BY d ORDER BY d")
    srv.kill9()
    assert states == ["RUNNING"], states  # the kill came mid-job

    srv.start()
    conn = srv.connect("rj")
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _states(conn) == ["FINISHED"]
    plan = "\n".join(r[0] for r in query(conn, "EXPLAIN SELECT d, sum(v) FROM big GROUP BY d"))
    assert "rollup: r_d" in plan
    assert query(conn, "SELECT d, sum(v) FROM big GROUP BY d ORDER BY d") == expected
    assert len(expected) == 9
    assert expected[0] == (0, 128 * sum(i for i in range(2000) if i % 7 == 0))


def test_kill9_after_cancel_leaves_no_rollup(server_factory):
    srv = server_factory().start()
    conn = _loaded(srv, "rc", 5, lambda i: 1, 6)
    query(conn, 'ADMIN SET FRONTEND CONFIG ("rollup_job_tablet_delay_ms" = "100")')
    query(conn, "ALTER TABLE big ADD ROLLUP r_d (d, v)")
    query(conn, "CANCEL ALTER TABLE ROLLUP FROM big")
    srv.kill9()
    srv.start()
    conn = srv.connect("rc")
    rows = query(conn, "SHOW ALTER TABLE ROLLUP")
    assert [(r[8], r[9]) for r in rows] == [("CANCELLED", "user cancelled")]
    desc = query(conn, "DESC big ALL")
    assert [r[0] for r in desc if r[0]] == ["big"]
    assert query(conn, "SELECT count(*), sum(v) FROM big") == ((128000, 128000),)


def _two_phase(srv, path: str, headers: dict, body: bytes = b"") -> dict:
    import base64
    import json
    import urllib.request

    req = urllib.request.Request(
        f"http://{srv.host}:{srv.http_port}{path}", data=body, method="PUT",
        headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(), **headers})
    return json.loads(urllib.request.urlopen(req, timeout=60).read())


def test_kill9_while_waiting_for_a_load(server_factory):
    """A job WAITING_TXN for a pre-committed load survives kill -9 still waiting (the restored
    load holds its table again); the commit then lets it run, and the rollup has the load."""
    srv = server_factory().start()
    conn = _loaded(srv, "wt", 7, lambda i: i, 0)
    reply = _two_phase(srv, "/api/wt/big/_stream_load",
                       {"column_separator": ",", "two_phase_commit": "true"},
                       b"".join(b"%d,%d,100\n" % (i, i % 3) for i in range(5000, 5300)))
    assert reply["Status"] == "Success", reply
    query(conn, "ALTER TABLE big ADD ROLLUP r_d (d, v)")
    assert _states(conn) == ["WAITING_TXN"]
    srv.kill9()
    srv.start()
    conn = srv.connect("wt")
    assert _states(conn) == ["WAITING_TXN"]
    done = _two_phase(srv, "/api/wt/_stream_load_2pc",
                      {"txn_id": str(reply["TxnId"]), "txn_operation": "commit"})
    assert done["status"] == "Success", done
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _states(conn) == ["FINISHED"]
    want = [(d, sum(i for i in range(2000) if i % 7 == d) + (100 * 100 if d < 3 else 0))
            for d in range(7)]
    assert [tuple(r) for r in query(conn, "SELECT d, sum(v) FROM big GROUP BY d ORDER BY d")] \
        == want
    plan = "\n".join(r[0] for r in query(conn, "EXPLAIN SELECT d, sum(v) FROM big GROUP BY d"))
    assert "rollup: r_d" in plan
