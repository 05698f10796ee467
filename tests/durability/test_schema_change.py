"""Schema change under kill -9: a light change is durable once acknowledged, a heavy change's
job leaves either the old schema or the complete new one.

A light ADD / DROP / RENAME COLUMN is one journal entry: after a restart the table has the new
schema and older rowsets still read through it (column unique ids). A heavy change (MODIFY
COLUMN type) is a job: killed mid-conversion, the server resumes it at start-up and the new
tablets then hold every acknowledged row, loaded before or during the job."""

from __future__ import annotations

DDL = """
CREATE TABLE big (k INT NOT NULL, d INT NOT NULL, v INT, s VARCHAR(10))
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 16 PROPERTIES ("replication_num" = "1")
"""


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def _loaded(srv, db: str, copies: int):
    """A connection to `db` holding `big`: 1000 rows doubled `copies` times."""
    conn = srv.connect()
    query(conn, f"CREATE DATABASE {db}")
    query(conn, f"USE {db}")
    query(conn, DDL)
    rows = ", ".join(f"({i}, {i % 7}, {i}, 's{i % 3}')" for i in range(1000))
    query(conn, f"INSERT INTO big VALUES {rows}")
    for n in (1000 << i for i in range(copies)):
        query(conn, f"INSERT INTO big SELECT k + {n}, d, v, s FROM big")
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
    assert jobs == [("big", "big", "RUNNING")], jobs  # the kill came mid-job

    srv.start()
    conn = srv.connect("hsc")
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _jobs(conn) == [("big", "big", "FINISHED")]
    assert [r[1] for r in query(conn, "DESC big") if r[0] == "v"] == ["BIGINT"]
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
