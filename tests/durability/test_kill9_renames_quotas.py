"""ALTER DATABASE RENAME / SET DATA | REPLICA QUOTA, ALTER TABLE RENAME PARTITION and alias
functions survive kill -9, replayed from the journal and carried by an image checkpoint."""

from __future__ import annotations

import pymysql
import pytest


def _rows(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def test_renames_and_quotas_survive_kill9(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    _rows(conn, "CREATE DATABASE r0")
    _rows(conn, "CREATE TABLE r0.t (k INT, d DATE) DUPLICATE KEY(k) PARTITION BY RANGE(d) "
                "(PARTITION p1 VALUES LESS THAN ('2024-02-01')) DISTRIBUTED BY HASH(k) "
                "BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    _rows(conn, "INSERT INTO r0.t WITH LABEL before_rename VALUES (1, '2024-01-02')")
    _rows(conn, "CREATE ALIAS FUNCTION r0.plus1(INT) WITH PARAMETER(x) AS x + 1")
    _rows(conn, "ALTER DATABASE r0 RENAME r1")
    _rows(conn, "ALTER TABLE r1.t RENAME PARTITION p1 jan")
    _rows(conn, "ALTER DATABASE r1 SET DATA QUOTA 10")
    _rows(conn, "CREATE ALIAS FUNCTION r1.twice(INT) WITH PARAMETER(x) AS x * 2")
    for image in (False, True):
        srv.kill9()
        srv.start()
        conn = srv.connect()
        assert _rows(conn, "SELECT * FROM r1.t PARTITION (jan)")[0][0] == 1
        with pytest.raises(pymysql.MySQLError) as e:
            _rows(conn, "INSERT INTO r1.t VALUES (2, '2024-01-03')")
        assert "Database[r1] data size exceeds quota[10.000 ]" in e.value.args[1]
        _rows(conn, "USE r1")
        assert _rows(conn, "SELECT twice(21), plus1(1)") == ((42, 2),)
        assert [r[1] for r in _rows(conn, "SHOW LOAD")] == ["before_rename"]
        if not image:
            _rows(conn, 'ADMIN SET FRONTEND CONFIG ("edit_log_roll_num" = "1")')
            _rows(conn, "CREATE DATABASE r_image")  # an entry, then an image
