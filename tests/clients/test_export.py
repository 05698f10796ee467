"""EXPORT TABLE to local files, as Doris 2.1's export job: refused without
enable_outfile_to_local (and before any job is recorded), then a job per statement whose files
read back as the table's rows (PARTITION, WHERE, columns, separators, formats), SHOW EXPORT
with Doris's columns and filters, labels used once, CANCEL EXPORT of an ended job refused,
records kept across a kill -9 (tests/unit/catalog/test_export_jobs.py: a job a crash
interrupted is CANCELLED at start-up)."""

from __future__ import annotations

import glob
import json

import pyarrow.parquet as pq
import pymysql
import pytest


def _q(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()] if cur.description else None


def _refused(conn, sql, text):
    with pytest.raises(pymysql.MySQLError) as e:
        _q(conn, sql)
    assert text in e.value.args[1], e.value.args


def test_export_refused_without_the_config(server, fresh_db, tmp_path):
    conn = server.connect(fresh_db)
    _q(conn, "CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
             "PROPERTIES ('replication_num' = '1')")
    _refused(conn, f"EXPORT TABLE t TO 'file://{tmp_path}/x_'", "enable_outfile_to_local=true")
    assert _q(conn, "SHOW EXPORT") == []
    assert not list(tmp_path.iterdir())


def test_export_jobs(server_factory, tmp_path):
    conf = tmp_path / "ex.conf"
    conf.write_text("enable_outfile_to_local = true\n")
    srv = server_factory(extra_args=("--config", str(conf))).start()
    conn = srv.connect()
    _q(conn, "CREATE DATABASE e")
    _q(conn, "USE e")
    _q(conn, "CREATE TABLE t (k INT, s VARCHAR(10), d DATE) DUPLICATE KEY(k) PARTITION BY "
             "RANGE(d) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS "
             "THAN ('2024-03-01')) DISTRIBUTED BY HASH(k) BUCKETS 2 "
             "PROPERTIES ('replication_num' = '1')")
    _q(conn, "INSERT INTO t VALUES (1, 'a', '2024-01-01'), (2, NULL, '2024-01-02'), "
             "(3, 'c', '2024-02-03')")
    out = tmp_path / "out"
    out.mkdir()
    _q(conn, f"EXPORT TABLE t TO 'file://{out}/all_' PROPERTIES ('label' = 'l1', "
             "'column_separator' = ',')")
    [job] = _q(conn, "SHOW EXPORT WHERE LABEL = 'l1'")
    assert job[1:4] == ("l1", "FINISHED", "100%") and job[10] is None
    info = json.loads(job[11])[0][0]
    assert info["totalRows"] == "3" and info["url"].startswith(f"file://{out}/all_")
    [csv] = glob.glob(f"{out}/all_*.csv")
    assert sorted(open(csv).read().splitlines()) == ["1,a,2024-01-01", "2,\\N,2024-01-02",
                                                     "3,c,2024-02-03"]
    _q(conn, f"EXPORT TABLE t PARTITION (p1) WHERE k > 1 TO 'file://{out}/pq_' PROPERTIES "
             "('label' = 'l2', 'format' = 'parquet', 'columns' = 'k,d')")
    [pq_file] = glob.glob(f"{out}/pq_*.parquet")
    table = pq.read_table(pq_file)
    assert table.column_names == ["k", "d"] and table.column("k").to_pylist() == [2]
    assert [r[1] for r in _q(conn, "SHOW EXPORT WHERE STATE = 'FINISHED' ORDER BY JobId")] == \
        ["l1", "l2"]
    _refused(conn, f"EXPORT TABLE t TO 'file://{out}/x_' PROPERTIES ('label' = 'l1')",
             "Label [l1] has already been used.")
    _refused(conn, f"EXPORT TABLE t TO 'file://{out}/x_' PROPERTIES ('columns' = 'nope')",
             "unknown column [nope] in table [t]")
    _refused(conn, f"EXPORT TABLE t TO 'file://{tmp_path}/missing/x_'",
             "The directory of the outfile path does not exist")
    _refused(conn, "CANCEL EXPORT WHERE LABEL = 'l1'", "Export job has finished or been cancelled")
    _refused(conn, "CANCEL EXPORT WHERE LABEL = 'nope'", "Export job not exist")
    assert len(_q(conn, "SHOW EXPORT")) == 2  # the refused statements recorded nothing
    srv.kill9()
    srv.start()
    conn = srv.connect("e")
    assert [r[2] for r in _q(conn, "SHOW EXPORT ORDER BY JobId")] == ["FINISHED", "FINISHED"]
