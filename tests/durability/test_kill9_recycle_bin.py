"""The recycle bin is journaled: after kill -9 (journal replay) and after a checkpoint image,
what was dropped without FORCE is still listed and recoverable with its rows, its tablets'
files stay on disk until the bin erases them, and DROP CATALOG RECYCLE BIN (by the ids SHOW
CATALOG RECYCLE BIN prints, as test_drop_catalog_recycle_bin.groovy does) deletes them."""

from __future__ import annotations

from pathlib import Path

import pymysql
import pytest


def _rows(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def _tablets(conn, table: str) -> set[int]:
    return {int(r[0]) for r in _rows(conn, f"SHOW TABLETS FROM {table}")}


def _on_disk(srv, tablets: set[int]) -> set[int]:
    data = Path(srv.data_dir) / "storage" / "data"
    return {t for t in tablets if (data / str(t)).is_dir()}


def _bin(conn, name: str):
    return _rows(conn, f"SHOW CATALOG RECYCLE BIN WHERE NAME = '{name}'")


def _setup(conn) -> dict[str, set[int]]:
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE d")
        cur.execute("USE d")
        cur.execute("CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
                    "(PARTITION p1 VALUES LESS THAN (10), PARTITION p2 VALUES LESS THAN (20)) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO t VALUES (1, 1), (15, 2)")
        cur.execute("CREATE TABLE u (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                    "PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO u VALUES (7)")
        cur.execute("CREATE DATABASE e")
        cur.execute("CREATE TABLE e.w (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                    "PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO e.w VALUES (3)")
    tablets = {"t": _tablets(conn, "d.t"), "u": _tablets(conn, "d.u"), "w": _tablets(conn, "e.w")}
    with conn.cursor() as cur:
        cur.execute("ALTER TABLE t DROP PARTITION p1")
        cur.execute("DROP TABLE u")
        cur.execute("DROP DATABASE e")
    return tablets


def test_recycle_bin_survives_kill9_and_erases_files(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    tablets = _setup(conn)
    every = tablets["t"] | tablets["u"] | tablets["w"]
    assert _on_disk(srv, every) == every  # nothing erased yet

    srv.kill9()
    srv.start()
    conn = srv.connect()
    assert [r[:2] for r in _bin(conn, "p1")] == [("Partition", "p1")]
    assert [r[:2] for r in _bin(conn, "u")] == [("Table", "u")]
    assert [r[:2] for r in _bin(conn, "e")] == [("Database", "e")]
    assert _on_disk(srv, every) == every  # start-up kept the recycled tablets
    with conn.cursor() as cur:
        cur.execute("RECOVER PARTITION p1 FROM d.t")
        cur.execute("RECOVER DATABASE e")
        cur.execute('ADMIN SET FRONTEND CONFIG ("edit_log_roll_num" = "1")')  # an image
    assert _rows(conn, "SELECT k FROM d.t ORDER BY k") == ((1,), (15,))
    assert _rows(conn, "SELECT k FROM e.w") == ((3,),)

    srv.kill9()
    srv.start()
    conn = srv.connect()
    assert _rows(conn, "SELECT k FROM d.t ORDER BY k") == ((1,), (15,))
    assert _rows(conn, "SELECT k FROM e.w") == ((3,),)
    [(_, _, db_id, table_id, _, _, size, _)] = _bin(conn, "u")
    # SHOW DATABASE | TABLE | PARTITION <id> name live objects only (the recovered p1 too)
    p1 = next(r[0] for r in _rows(conn, "SHOW PARTITIONS FROM d.t") if r[1] == "p1")
    t_id = _rows(conn, f"SHOW PARTITION {p1}")[0][4]
    assert _rows(conn, f"SHOW PARTITION {p1}") == (("d", "t", "p1", db_id, t_id),)
    assert _rows(conn, f"SHOW TABLE {t_id}") == (("d", "t", db_id),)
    assert _rows(conn, f"SHOW DATABASE {db_id}") == (("d",),)
    assert _rows(conn, f"SHOW TABLE {table_id}") == ()  # u is in the bin
    assert int(size) > 0
    with conn.cursor() as cur:
        cur.execute(f"DROP CATALOG RECYCLE BIN WHERE 'TableId' = {table_id}")
    assert _bin(conn, "u") == ()
    assert _on_disk(srv, tablets["u"]) == set()  # erased: its files are gone
    with conn.cursor() as cur:  # DROP ... FORCE: never in the bin, files gone at once
        cur.execute("DROP DATABASE e FORCE")
    assert _bin(conn, "e") == () and _on_disk(srv, tablets["w"]) == set()

    srv.kill9()
    srv.start()
    conn = srv.connect()
    assert _bin(conn, "u") == ()
    assert _on_disk(srv, tablets["t"]) == tablets["t"]
    with conn.cursor() as cur, pytest.raises(pymysql.err.OperationalError,
                                             match="Unknown table 'u' or table id '-1' in d"):
        cur.execute("RECOVER TABLE d.u")
