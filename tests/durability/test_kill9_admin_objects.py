"""SQL block rules, workload groups, encrypt keys, partition properties (MODIFY PARTITION,
replication, compaction) and MODIFY DISTRIBUTION survive kill -9, replayed from the journal and
carried by an image checkpoint; a block rule still blocks after the restart."""

from __future__ import annotations

import pymysql
import pytest


def _rows(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def test_admin_objects_survive_kill9(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    _rows(conn, "CREATE DATABASE a0")
    _rows(conn, "CREATE TABLE a0.t (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
                "(PARTITION p1 VALUES LESS THAN ('10')) DISTRIBUTED BY HASH(k) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    _rows(conn, "CREATE TABLE a0.u (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    _rows(conn, "CREATE SQL_BLOCK_RULE r1 PROPERTIES ('sql' = 'from a0\\\\.blocked', "
                "'global' = 'true')")
    _rows(conn, "ALTER SQL_BLOCK_RULE r1 PROPERTIES ('enable' = 'true')")
    _rows(conn, "CREATE WORKLOAD GROUP g1 PROPERTIES ('cpu_share' = '16')")
    _rows(conn, "ALTER WORKLOAD GROUP g1 PROPERTIES ('memory_limit' = '10%')")
    _rows(conn, "CREATE ENCRYPTKEY a0.k1 AS 'secret'")
    _rows(conn, "ALTER TABLE a0.t MODIFY PARTITION p1 SET ('storage_medium' = 'SSD')")
    _rows(conn, "ALTER TABLE a0.t MODIFY DISTRIBUTION DISTRIBUTED BY HASH(k) BUCKETS 5")
    _rows(conn, "ALTER TABLE a0.u SET ('compaction_policy' = 'time_series')")
    for image in (False, True):
        srv.kill9()
        srv.start()
        conn = srv.connect()
        rules = _rows(conn, "SHOW SQL_BLOCK_RULE")
        assert [(r[0], r[1], r[6], r[7]) for r in rules] == [("r1", "from a0\\.blocked", "true",
                                                               "true")]
        with pytest.raises(pymysql.MySQLError) as e:
            _rows(conn, "SELECT * from a0.blocked")
        assert "sql match regex sql block rule: r1" in e.value.args[1]
        groups = {r[1]: r for r in _rows(conn, "SHOW WORKLOAD GROUPS")}
        assert set(groups) == {"normal", "g1"}
        assert (groups["g1"][2], groups["g1"][3]) == ("16", "10%")
        assert _rows(conn, "SHOW ENCRYPTKEYS FROM a0") == (("a0.k1", "secret"),)
        part = _rows(conn, "SHOW PARTITIONS FROM a0.t")[0]
        assert (part[1], part[10]) == ("p1", "SSD")
        _rows(conn, f"ALTER TABLE a0.t ADD PARTITION p{int(image) + 2} VALUES LESS THAN "
                    f"('{20 + 10 * int(image)}')")
        assert _rows(conn, "SHOW PARTITIONS FROM a0.t")[-1][8] == "5"
        assert '"compaction_policy" = "time_series"' in \
            _rows(conn, "SHOW CREATE TABLE a0.u")[0][1]
        if not image:
            _rows(conn, 'ADMIN SET FRONTEND CONFIG ("edit_log_roll_num" = "1")')
            _rows(conn, "CREATE DATABASE a_image")  # an entry, then an image
    _rows(conn, "DROP SQL_BLOCK_RULE r1")
    assert _rows(conn, "SHOW SQL_BLOCK_RULE") == ()
    srv.stop()
