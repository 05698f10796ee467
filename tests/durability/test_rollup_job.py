"""ADD ROLLUP under kill -9: a restart leaves either no rollup or a complete one.

The job is journaled when it starts (the shadow index and its tablets), loads that arrive while
it runs are written to the shadow tablets too, and one journal entry publishes the converted
rowsets. Killed mid-conversion, the server resumes the job at start-up: the rollup then holds
every acknowledged row, loaded before or during the job."""

from __future__ import annotations

import time

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


def _pre_commit(srv, db: str) -> dict:
    """A two-phase Stream Load of 300 rows (d = i % 3, v = 100) into `big`, pre-committed."""
    reply = _two_phase(srv, f"/api/{db}/big/_stream_load",
                       {"column_separator": ",", "two_phase_commit": "true"},
                       b"".join(b"%d,%d,100\n" % (i, i % 3) for i in range(5000, 5300)))
    assert reply["Status"] == "Success", reply
    return reply


def _commit(srv, db: str, txn_id: int) -> None:
    done = _two_phase(srv, f"/api/{db}/_stream_load_2pc",
                      {"txn_id": str(txn_id), "txn_operation": "commit"})
    assert done["status"] == "Success", done


def test_kill9_while_waiting_for_a_load(server_factory):
    """A job WAITING_TXN for a pre-committed load survives kill -9 still waiting (the restored
    load holds its table again); the commit then lets it run, and the rollup has the load."""
    srv = server_factory().start()
    conn = _loaded(srv, "wt", 7, lambda i: i, 0)
    reply = _pre_commit(srv, "wt")
    query(conn, "ALTER TABLE big ADD ROLLUP r_d (d, v)")
    assert _states(conn) == ["WAITING_TXN"]
    srv.kill9()
    srv.start()
    conn = srv.connect("wt")
    assert _states(conn) == ["WAITING_TXN"]
    _commit(srv, "wt", reply["TxnId"])
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _states(conn) == ["FINISHED"]
    want = [(d, sum(i for i in range(2000) if i % 7 == d) + (100 * 100 if d < 3 else 0))
            for d in range(7)]
    assert [tuple(r) for r in query(conn, "SELECT d, sum(v) FROM big GROUP BY d ORDER BY d")] \
        == want
    plan = "\n".join(r[0] for r in query(conn, "EXPLAIN SELECT d, sum(v) FROM big GROUP BY d"))
    assert "rollup: r_d" in plan


def _by_d(conn) -> tuple[tuple, tuple]:
    """(the rollup's answer, the base's answer): `k >= 0` needs k, which r_d lacks."""
    rollup = "SELECT d, sum(v) FROM big GROUP BY d ORDER BY d"
    base = "SELECT d, sum(v) FROM big WHERE k >= 0 GROUP BY d ORDER BY d"
    assert "rollup: r_d" in "\n".join(r[0] for r in query(conn, "EXPLAIN " + rollup))
    assert "rollup: big" in "\n".join(r[0] for r in query(conn, "EXPLAIN " + base))
    return query(conn, rollup), query(conn, base)


def test_kill9_with_new_loads_while_waiting(server_factory):
    """Loads begun while the job waits for an older (pre-committed) load go in at once and
    write the shadow index; kill -9 then (WAITING_TXN) and again mid-conversion (RUNNING): the
    finished rollup answers exactly as the base, and still does after another restart."""
    srv = server_factory().start()
    conn = _loaded(srv, "nl", 7, lambda i: i, 0)
    reply = _pre_commit(srv, "nl")
    query(conn, "ALTER TABLE big ADD ROLLUP r_d (d, v)")
    query(conn, "INSERT INTO big VALUES " + ", ".join(f"({6000 + i}, {i % 7}, 1)"
                                                      for i in range(50)))
    query(conn, "DELETE FROM big WHERE d = 6")
    assert _states(conn) == ["WAITING_TXN"]
    srv.kill9()

    srv.start()
    conn = srv.connect("nl")
    assert _states(conn) == ["WAITING_TXN"]
    query(conn, "INSERT INTO big VALUES " + ", ".join(f"({7000 + i}, {i % 7}, 2)"
                                                      for i in range(50)))
    query(conn, 'ADMIN SET FRONTEND CONFIG ("rollup_job_tablet_delay_ms" = "200")')
    _commit(srv, "nl", reply["TxnId"])
    for _ in range(100):
        if _states(conn) == ["RUNNING"]:
            break
        time.sleep(0.05)
    assert _states(conn) == ["RUNNING"]  # 16 tablets x 200 ms: killed mid-conversion
    srv.kill9()

    srv.start()
    conn = srv.connect("nl")
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _states(conn) == ["FINISHED"]
    want = [(d, sum(i for i in range(2000) if i % 7 == d)
             + sum(1 for i in range(50) if i % 7 == d) + 2 * sum(1 for i in range(50)
                                                                   if i % 7 == d)
             + (100 * 100 if d < 3 else 0)) for d in range(6)]
    want.append((6, 2 * sum(1 for i in range(50) if i % 7 == 6)))
    rollup, base = _by_d(conn)
    assert rollup == base
    assert [tuple(r) for r in rollup] == want
    srv.stop()
    srv.start()
    conn = srv.connect("nl")
    assert _by_d(conn) == (rollup, base)
