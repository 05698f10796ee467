"""Temporary partitions, REPLACE PARTITION and REPLACE WITH TABLE are journaled: after kill -9
and a restart (journal replay), and after a checkpoint image, the table reads the same."""

from __future__ import annotations


def _rows(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def _setup(conn) -> None:
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE d")
        cur.execute("USE d")
        cur.execute("CREATE TABLE t (d DATE NOT NULL, k INT NOT NULL) DUPLICATE KEY(d, k) "
                    "PARTITION BY RANGE(d) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), "
                    "PARTITION p2 VALUES LESS THAN ('2024-03-01')) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO t VALUES ('2024-01-05', 1), ('2024-02-05', 2)")
        cur.execute("ALTER TABLE t ADD TEMPORARY PARTITION tp2 "
                    "VALUES [('2024-02-01'), ('2024-03-01'))")
        cur.execute("INSERT INTO t TEMPORARY PARTITION (tp2) VALUES ('2024-02-09', 9)")
        cur.execute("ALTER TABLE t ADD TEMPORARY PARTITION tp1 "
                    "VALUES [('2024-01-01'), ('2024-02-01'))")
        cur.execute("INSERT INTO t TEMPORARY PARTITION (tp1) VALUES ('2024-01-07', 7)")
        cur.execute("ALTER TABLE t REPLACE PARTITION (p2) WITH TEMPORARY PARTITION (tp2)")
        cur.execute("CREATE TABLE u (d DATE NOT NULL, k INT NOT NULL) DUPLICATE KEY(d, k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO u VALUES ('2024-05-05', 5)")


def _check(conn) -> None:
    assert _rows(conn, "SELECT k FROM d.t ORDER BY k") == ((1,), (9,))
    assert _rows(conn, "SELECT k FROM d.t PARTITION p2") == ((9,),)
    assert _rows(conn, "SELECT k FROM d.t TEMPORARY PARTITION (tp1)") == ((7,),)
    assert _rows(conn, "SELECT k FROM d.u") == ((5,),)


def test_temp_partitions_survive_kill9(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    _setup(conn)
    _check(conn)
    with conn.cursor() as cur:
        cur.execute("ALTER TABLE d.t REPLACE WITH TABLE u")
    srv.kill9()
    srv.start()
    conn = srv.connect()
    assert _rows(conn, "SELECT k FROM d.t") == ((5,),)
    with conn.cursor() as cur:
        cur.execute("ALTER TABLE d.t REPLACE WITH TABLE u")  # swap back
    _check(conn)
    # the tablets of the replaced partition p2 are gone, the others are there
    srv.stop()
    srv.start()
    _check(srv.connect())


def test_temp_partitions_survive_a_checkpoint(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute('ADMIN SET FRONTEND CONFIG ("edit_log_roll_num" = "1")')  # image every entry
    _setup(conn)
    assert (srv.data_dir / "meta" / "image.json").exists()
    srv.kill9()
    srv.start()
    _check(srv.connect())
