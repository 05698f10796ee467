"""SELECT ... INTO OUTFILE to local files: refused by default (Doris's enable_outfile_to_local),
then CSV (separators, names and types, \\N for NULL), PARQUET and ORC files that read back as
the query's rows, with Doris's FileNumber / TotalRows / FileSize / URL reply."""

from __future__ import annotations

import glob

import pyarrow.orc as orc
import pyarrow.parquet as pq
import pymysql
import pytest


def _q(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()] if cur.description else None


def test_outfile_refused_without_the_config(server, fresh_db, tmp_path):
    conn = server.connect(fresh_db)
    with pytest.raises(pymysql.err.OperationalError, match="enable_outfile_to_local=true"):
        _q(conn, f"SELECT 1 INTO OUTFILE 'file://{tmp_path}/x_'")
    assert not list(tmp_path.iterdir())


def test_outfile_formats(server_factory, tmp_path):
    conf = tmp_path / "of.conf"
    conf.write_text("enable_outfile_to_local = true\n")
    srv = server_factory(extra_args=("--config", str(conf))).start()
    conn = srv.connect()
    _q(conn, "CREATE DATABASE o")
    _q(conn, "USE o")
    _q(conn, "CREATE TABLE t (k INT, s VARCHAR(10), d DATE) DUPLICATE KEY(k) "
             "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    _q(conn, "INSERT INTO t VALUES (1, 'a', '2024-01-01'), (2, NULL, '2024-01-02'), "
             "(3, 'c', NULL)")
    out = tmp_path / "out"
    out.mkdir()
    [(files, rows, size, url)] = _q(
        conn, f"SELECT k, s, d FROM t ORDER BY k INTO OUTFILE 'file://{out}/csv_' "
              "FORMAT AS CSV_WITH_NAMES_AND_TYPES PROPERTIES ('column_separator' = ',', "
              "'success_file_name' = 'SUCCESS')")
    assert (files, rows) == (1, 3) and url.startswith(f"file://{out}/csv_")
    [path] = glob.glob(f"{out}/csv_*_0.csv")
    text = open(path).read()
    assert len(text.encode()) == size
    assert text == "k,s,d\nINT,VARCHAR(10),DATE\n1,a,2024-01-01\n2,\\N,2024-01-02\n3,c,\\N\n"
    assert (out / "SUCCESS").exists()
    _q(conn, f"SELECT * FROM t INTO OUTFILE 'file://{out}/pq_' FORMAT AS PARQUET")
    [path] = glob.glob(f"{out}/pq_*_0.parquet")
    assert sorted(pq.read_table(path).column("k").to_pylist()) == [1, 2, 3]
    _q(conn, f"SELECT k, s FROM t WHERE k > 1 INTO OUTFILE 'file://{out}/orc_' FORMAT AS ORC")
    [path] = glob.glob(f"{out}/orc_*_0.orc")
    assert sorted(orc.read_table(path).column("k").to_pylist()) == [2, 3]
    with pytest.raises(pymysql.err.OperationalError, match="does not exist"):
        _q(conn, f"SELECT 1 INTO OUTFILE 'file://{tmp_path}/missing/dir/x_'")
    with pytest.raises(pymysql.err.OperationalError, match="format:json is not supported"):
        _q(conn, f"SELECT 1 INTO OUTFILE 'file://{out}/j_' FORMAT AS JSON")
