"""A clean restart: stop with SIGTERM, start on the same data dir, everything is still there.

Each test runs its own private server (the `server_factory` fixture) in a temporary directory.
"""

from __future__ import annotations

from server_process import port_accepts

AGG_DDL = """
CREATE TABLE visits (
    `user_id` LARGEINT NOT NULL,
    `date` DATE NOT NULL,
    `city` VARCHAR(20),
    `cost` BIGINT SUM DEFAULT "0",
    `last` DATETIME REPLACE
)
AGGREGATE KEY(`user_id`, `date`, `city`)
DISTRIBUTED BY HASH(`user_id`) BUCKETS 2
PROPERTIES ("replication_num" = "1")
"""

DUP_DDL = """
CREATE TABLE log (k INT NOT NULL, msg VARCHAR(100))
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")
"""


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def snapshot(conn, db):
    """What a restart must preserve: databases, tables, their DDL and their rows."""
    query(conn, f"USE {db}")
    tables = sorted(r[0] for r in query(conn, "SHOW TABLES"))
    return {
        "databases": sorted(r[0] for r in query(conn, "SHOW DATABASES") if r[0] in (db, "restart_other")),
        "tables": tables,
        "ddl": {t: query(conn, f"SHOW CREATE TABLE {t}")[0][1] for t in tables},
        "visits": query(conn, "SELECT * FROM visits ORDER BY user_id, date, city"),
        "log": query(conn, "SELECT * FROM log ORDER BY k, msg"),
        "count": query(conn, "SELECT count(*) FROM visits")[0][0],
    }


def test_sigterm_restart_keeps_catalog_and_rows(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE restart_db")
    query(conn, "CREATE DATABASE restart_other")
    query(conn, "USE restart_db")
    query(conn, AGG_DDL)
    query(conn, DUP_DDL)
    query(conn, "INSERT INTO visits VALUES (10000, '2017-10-01', '北京', 20, '2017-10-01 06:00:00'), "
                "(10000, '2017-10-01', '北京', 15, '2017-10-01 07:00:00'), (10001, '2017-10-01', NULL, 2, NULL)")
    query(conn, "INSERT INTO visits VALUES (10001, '2017-10-01', NULL, 3, '2017-10-02 00:00:00')")
    query(conn, "INSERT INTO log VALUES (1, 'a'), (1, 'a'), (2, NULL)")
    query(conn, "DROP DATABASE restart_other")
    before = snapshot(conn, "restart_db")
    assert before["count"] == 2 and len(before["log"]) == 3
    conn.close()

    code = srv.stop()
    assert srv.graceful, "the server did not exit within the grace period after SIGTERM"
    assert code in (0, -15), f"exit code after SIGTERM: {code}"
    assert not port_accepts(srv.host, srv.port), "port still open after stop"

    srv.start()
    conn = srv.connect()
    after = snapshot(conn, "restart_db")
    assert after == before

    # The restarted server keeps working: a new load merges with the rows loaded before the restart.
    query(conn, "INSERT INTO visits VALUES (10000, '2017-10-01', '北京', 5, '2017-10-03 00:00:00')")
    assert query(conn, "SELECT cost FROM visits WHERE user_id = 10000")[0][0] == 40
    query(conn, "CREATE TABLE after_restart (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES (\"replication_num\" = \"1\")")
    conn.close()

    # And a second restart sees the work of the first session after restart too.
    srv.restart()
    conn = srv.connect("restart_db")
    assert query(conn, "SELECT cost FROM visits WHERE user_id = 10000")[0][0] == 40
    assert "after_restart" in [r[0] for r in query(conn, "SHOW TABLES")]
    conn.close()


def test_restart_of_an_empty_data_dir(server_factory):
    srv = server_factory().start()
    srv.restart()
    conn = srv.connect()
    assert query(conn, "SELECT 1") == ((1,),)
    conn.close()


def test_restart_after_drop_and_recreate(server_factory):
    """The journal replays a table that was loaded and then dropped (its files are gone) and a
    new table with the same name: the restart succeeds and only the new rows remain."""
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE redo")
    query(conn, "USE redo")
    query(conn, DUP_DDL)
    query(conn, "INSERT INTO log VALUES (1, 'old')")
    query(conn, "DROP TABLE log")
    query(conn, DUP_DDL)
    query(conn, "INSERT INTO log VALUES (2, 'new')")
    query(conn, "DROP DATABASE redo")
    query(conn, "CREATE DATABASE redo")
    query(conn, "USE redo")
    query(conn, DUP_DDL)
    query(conn, "INSERT INTO log VALUES (3, 'newest')")
    conn.close()
    srv.kill9()
    srv.start()
    conn = srv.connect("redo")
    assert query(conn, "SELECT * FROM log") == ((3, "newest"),)
