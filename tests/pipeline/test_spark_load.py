"""Spark Load through the wire: `CREATE RESOURCE ... "type" = "spark"`, `LOAD LABEL ... WITH
RESOURCE`, SHOW LOAD's states and fields, ErrorURL, CANCEL LOAD, the timeout, a Spark failure and
kill -9 of the server in the middle of a job: a job publishes everything in one version or
nothing at all."""

from __future__ import annotations

import base64
import time
import urllib.request
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import query, show_load, wait_load
from server_process import unique_name

pytest.importorskip("pyspark")


def _setup(server, table_sql: str) -> str:
    db = unique_name("sl")
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"USE {db}")
        cur.execute(table_sql)
        cur.execute('CREATE RESOURCE IF NOT EXISTS "spark0" PROPERTIES ("type" = "spark", '
                    '"spark.master" = "local[2]", "spark.executor.memory" = "1g")')
    conn.close()
    return db


_PARTITIONED = """CREATE TABLE t (k INT NOT NULL, g INT, s VARCHAR(8), v DECIMAL(10,2))
    DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION p0 VALUES LESS THAN (500),
    PARTITION p1 VALUES LESS THAN (1000)) DISTRIBUTED BY HASH(k) BUCKETS 3
    PROPERTIES ("replication_num" = "1")"""


def _csv(path, rows: int, bad: list[str] = ()) -> str:
    with open(path, "w") as f:
        for i in range(rows):
            f.write(f"{i},{i % 7},s{i % 100},{i}.5\n")
        for line in bad:
            f.write(line + "\n")
    return f"file://{path}"


def _load(server, db: str, label: str, clause: str, props: str = "") -> None:
    conn = server.connect(db)
    with conn.cursor() as cur:
        cur.execute(f"LOAD LABEL {db}.{label} ({clause}) WITH RESOURCE 'spark0' "
                    f"{('PROPERTIES (' + props + ')') if props else ''}")
    conn.close()


def _versions(server, db: str) -> list[int]:
    conn = server.connect(db)
    with conn.cursor() as cur:
        cur.execute("SHOW PARTITIONS FROM t")
        rows = cur.fetchall()
    conn.close()
    return [int(r[2]) for r in rows]


def test_csv_load_publishes_one_version(spark_load_server, tmp_path):
    server = spark_load_server
    db = _setup(server, _PARTITIONED)
    url = _csv(tmp_path / "a.csv", 900, ["1,2", "2000,1,x,1", "3,1,toolongvalue,1"])
    _load(server, db, "l1", f'DATA INFILE("{url}") INTO TABLE t COLUMNS TERMINATED BY "," (k, g, s, v)',
          '"max_filter_ratio" = "0.01", "timeout" = "600"')
    job = wait_load(server, db, "l1")
    print("resumed job:", job)
    assert job["State"] == "FINISHED", job
    assert job["Type"] == "SPARK" and job["Progress"] == "ETL:100%; LOAD:100%"
    assert job["EtlInfo"] == "unselected.rows=0; dpp.abnorm.ALL=3; dpp.norm.ALL=900"
    assert job["TaskInfo"] == "cluster:spark0; timeout(s):600; max_filter_ratio:0.01"
    assert job["ErrorMsg"] is None and job["LoadFinishTime"]
    assert query(server, db, "SELECT count(*), sum(k), count(DISTINCT g), sum(v) FROM t") == \
        [(900, 404550, 7, Decimal("405000.00"))]
    assert _versions(server, db) == [2, 2]  # both partitions: one new version, one transaction
    auth = base64.b64encode(b"root:").decode()
    req = urllib.request.Request(job["URL"], headers={"Authorization": f"Basic {auth}"})
    errors = urllib.request.urlopen(req).read().decode()
    assert "actual column number in csv file is less than schema column number" in errors
    assert "no partition for this tuple" in errors
    assert "the length of input is too long than schema" in errors
    # the label is taken
    with pytest.raises(Exception, match=r"Label \[l1\] has already been used"):
        _load(server, db, "l1", f'DATA INFILE("{url}") INTO TABLE t COLUMNS TERMINATED BY ","')


def test_rollup_and_sync_mv_get_their_rows(spark_load_server, tmp_path):
    # each materialized index's tablets get the rows that index stores (a sync MV's computed
    # COUNT column included): queries the rollup / MV serve agree with the base rows
    server = spark_load_server
    db = _setup(server, _PARTITIONED)
    conn = server.connect(db)
    with conn.cursor() as cur:
        cur.execute("ALTER TABLE t ADD ROLLUP r_g (g, k)")
        cur.execute("ADMIN WAIT ALTER TABLE")  # one ALTER job at a time per table, as Doris
        cur.execute("CREATE MATERIALIZED VIEW mv_g AS SELECT g, SUM(v), COUNT(s) FROM t GROUP BY g")
        cur.execute("ADMIN WAIT ALTER TABLE")
    conn.close()
    url = _csv(tmp_path / "m.csv", 900)
    with open(tmp_path / "m.csv", "a") as f:
        f.write("901,3,\\N,1.0\n")
    _load(server, db, "lm", f'DATA INFILE("{url}") INTO TABLE t COLUMNS TERMINATED BY "," (k, g, s, v)')
    job = wait_load(server, db, "lm")
    print("resumed job:", job)
    assert job["State"] == "FINISHED", job
    conn = server.connect(db)
    with conn.cursor() as cur:
        cur.execute("EXPLAIN SELECT g, sum(v), count(s) FROM t GROUP BY g")
        assert "(mv_g)" in "\n".join(r[0] for r in cur.fetchall())
        cur.execute("EXPLAIN SELECT g, k FROM t WHERE g = 3")
        assert "(r_g)" in "\n".join(r[0] for r in cur.fetchall())
    conn.close()
    expect = {g: (sum(Decimal(f"{i}.5") for i in range(900) if i % 7 == g)
                  + (Decimal("1.00") if g == 3 else 0), sum(1 for i in range(900) if i % 7 == g))
              for g in range(7)}
    assert query(server, db, "SELECT g, sum(v), count(s) FROM t GROUP BY g ORDER BY g") == \
        [(g, expect[g][0], expect[g][1]) for g in range(7)]
    assert query(server, db, "SELECT count(*), sum(k) FROM t WHERE g = 3") == \
        [(sum(1 for i in range(900) if i % 7 == 3) + 1, sum(i for i in range(900) if i % 7 == 3) + 901)]


def test_too_many_filtered_rows_publish_nothing(spark_load_server, tmp_path):
    server = spark_load_server
    db = _setup(server, _PARTITIONED)
    url = _csv(tmp_path / "b.csv", 50, [f"x{i},1,a,zz" for i in range(10)])
    clause = f'DATA INFILE("{url}") INTO TABLE t COLUMNS TERMINATED BY ","'
    _load(server, db, "l2", clause, '"max_filter_ratio" = "0.1"')
    job = wait_load(server, db, "l2")
    assert job["State"] == "CANCELLED"
    assert job["ErrorMsg"] == "type:ETL_QUALITY_UNSATISFIED; msg:quality not good enough to cancel"
    assert job["URL"] and "dpp.abnorm.ALL=10" in job["EtlInfo"]
    assert query(server, db, "SELECT count(*) FROM t") == [(0,)]
    assert _versions(server, db) == [1, 1]
    # a cancelled job's label may be used again
    _load(server, db, "l2", clause, '"max_filter_ratio" = "0.2"')
    assert wait_load(server, db, "l2")["State"] == "FINISHED"
    assert query(server, db, "SELECT count(*) FROM t") == [(50,)]
    states = query(server, db, 'SHOW LOAD WHERE LABEL = "l2" ORDER BY JobId')
    assert [r[2] for r in states] == ["CANCELLED", "FINISHED"]


def test_parquet_set_where_partition_aggregate(spark_load_server, tmp_path):
    server = spark_load_server
    db = _setup(server, """CREATE TABLE t (k INT, d VARCHAR(10), cnt BIGINT SUM, total DECIMAL(12,2) SUM,
        hi INT MAX) AGGREGATE KEY(k, d) PARTITION BY RANGE(k) (PARTITION p0 VALUES LESS THAN (10),
        PARTITION p1 VALUES LESS THAN (100)) DISTRIBUTED BY HASH(k) BUCKETS 2
        PROPERTIES ("replication_num" = "1")""")
    n = 2000
    pq.write_table(pa.table({"k": pa.array([i % 40 for i in range(n)], pa.int64()),
                             "amount": pa.array([float(i % 13) for i in range(n)]),
                             "tag": pa.array(["a" if i % 3 else "b" for i in range(n)])}),
                   tmp_path / "part-0.parquet")
    pq.write_table(pa.table({"k": pa.array([5, 50], pa.int64()), "amount": pa.array([1.0, 2.0]),
                             "tag": pa.array(["a", "a"])}), tmp_path / "part-1.parquet")
    _load(server, db, "l3",
          f'DATA INFILE("file://{tmp_path}/part-*.parquet") INTO TABLE t PARTITION (p1) '
          f'FORMAT AS "parquet" (k, amount, tag) '
          f'SET (d = concat(tag, "-x"), cnt = 1, total = amount * 2, hi = k) WHERE d = "a-x"',
          '"max_filter_ratio" = "0.5"')
    job = wait_load(server, db, "l3")
    print("resumed job:", job)
    assert job["State"] == "FINISHED", job
    # rows of p0 (k < 10) are outside the load's partitions: filtered, not loaded
    assert query(server, db, "SELECT count(*) FROM t WHERE k < 10") == [(0,)]
    got = query(server, db, "SELECT k, d, cnt, total, hi FROM t WHERE k IN (12, 50) ORDER BY k")
    expect = {}
    for i in range(n):
        if i % 3 and 10 <= i % 40:
            k = i % 40
            c, t = expect.get(k, (0, 0.0))
            expect[k] = (c + 1, t + 2 * float(i % 13))
    assert got == [(12, "a-x", expect[12][0], Decimal(f"{expect[12][1]:.2f}"), 12),
                   (50, "a-x", 1, Decimal("4.00"), 50)]
    assert "unselected.rows=" in job["EtlInfo"]


def test_spark_failure_cancels_the_job(spark_load_server, tmp_path):
    server = spark_load_server
    db = _setup(server, _PARTITIONED)
    _load(server, db, "l4", f'DATA INFILE("file://{tmp_path}/missing-*.csv") INTO TABLE t '
                            f'COLUMNS TERMINATED BY ","')
    job = wait_load(server, db, "l4")
    assert job["State"] == "CANCELLED"
    assert job["ErrorMsg"].startswith("type:ETL_RUN_FAIL; msg:") and "PATH_NOT_FOUND" in job["ErrorMsg"]
    assert query(server, db, "SELECT count(*) FROM t") == [(0,)]
    assert not [p for p in (server.data_dir / "spark_load").iterdir() if p.name != "errors"]


def test_cancel_load_and_timeout(spark_load_server, tmp_path):
    server = spark_load_server
    db = _setup(server, _PARTITIONED)
    url = _csv(tmp_path / "big.csv", 400000)
    clause = f'DATA INFILE("{url}") INTO TABLE t COLUMNS TERMINATED BY ","'
    _load(server, db, "l5", clause.replace("big.csv", "big.csv"), '"max_filter_ratio" = "1"')
    try:
        query(server, db, 'CANCEL LOAD WHERE LABEL = "l5"')
        refused = False
    except Exception as e:  # the job reached LOADING or FINISHED first (a fast machine)
        assert "committing" in str(e) or "no uncompleted job" in str(e), e
        refused = True
    job = wait_load(server, db, "l5")
    if refused:  # a refused cancel changes nothing: the load is whole
        assert job["State"] == "FINISHED"
        query(server, db, "TRUNCATE TABLE t")
    else:  # an accepted cancel is never followed by a publish
        assert job["State"] == "CANCELLED" and \
            job["ErrorMsg"] == "type:USER_CANCEL; msg:user cancel"
    with pytest.raises(Exception, match="There is no uncompleted job"):
        query(server, db, 'CANCEL LOAD WHERE LABEL = "l5"')
    # A job that cannot finish within the 1 s timeout: it waits 2 s after its ETL (a test
    # hook; 3M rows once finished within the second on a quiet machine with Spark warm).
    slow = f'DATA INFILE("{_csv(tmp_path / "bigger.csv", 100000)}") INTO TABLE t ' \
        'COLUMNS TERMINATED BY ","'
    query(server, db, 'ADMIN SET FRONTEND CONFIG ("spark_load_etl_delay_ms" = "2000")')
    try:
        _load(server, db, "l6", slow, '"max_filter_ratio" = "1", "timeout" = "1"')
        job = wait_load(server, db, "l6")
    finally:
        query(server, db, 'ADMIN SET FRONTEND CONFIG ("spark_load_etl_delay_ms" = "0")')
    assert job["State"] == "CANCELLED" and job["ErrorMsg"] == "type:TIMEOUT; msg:loading timeout to cancel"
    assert query(server, db, "SELECT count(*) FROM t") == [(0,)]
    assert _versions(server, db) == [1, 1]


def _slow_etl(server, db: str, ms: int) -> None:
    """The test hook that holds a job between its ETL and LOADING for `ms` milliseconds."""
    query(server, db, f'ADMIN SET FRONTEND CONFIG ("spark_load_etl_delay_ms" = "{ms}")')


def test_add_rollup_during_the_job_waits_for_it(spark_load_server, tmp_path):
    # A Spark Load is a load of its table from LOAD LABEL to its publish, as Doris's
    # transaction is: an ADD ROLLUP issued meanwhile waits for it (WAITING_TXN) and then
    # converts its rows too; a rollup built without them would answer wrong.
    server = spark_load_server
    db = _setup(server, _PARTITIONED)
    query(server, db, "INSERT INTO t VALUES (1, 1, 'a', 1.0), (600, 2, 'b', 2.0)")
    url = _csv(tmp_path / "r.csv", 900)
    _slow_etl(server, db, 3000)
    try:
        _load(server, db, "lr", f'DATA INFILE("{url}") INTO TABLE t COLUMNS TERMINATED BY ","')
        query(server, db, "ALTER TABLE t ADD ROLLUP r_g (g, v)")
        # while the load has not ended, the job waits for it (read in that order: a load not
        # ended after the job's state was read had not ended when it was read)
        for _ in range(10):
            rollup_state = query(server, db, "SHOW ALTER TABLE ROLLUP")[0][8]
            if show_load(server, db, "lr")["State"] in ("FINISHED", "CANCELLED"):
                break
            assert rollup_state == "WAITING_TXN"
            time.sleep(0.2)
        job = wait_load(server, db, "lr")
    finally:
        _slow_etl(server, db, 0)
    assert job["State"] == "FINISHED", job
    query(server, db, "ADMIN WAIT ALTER TABLE")
    assert [r[8] for r in query(server, db, "SHOW ALTER TABLE ROLLUP")] == ["FINISHED"]
    explain = "\n".join(r[0] for r in query(server, db, "EXPLAIN SELECT g, sum(v) FROM t GROUP BY g"))
    assert "(r_g)" in explain, explain
    expect = {}
    for i in range(900):
        expect[i % 7] = expect.get(i % 7, Decimal(0)) + Decimal(f"{i}.5")
    expect[1] += Decimal("1.00")
    expect[2] += Decimal("2.00")
    assert query(server, db, "SELECT g, sum(v) FROM t GROUP BY g ORDER BY g") == \
        [(g, expect[g]) for g in range(7)]
    assert query(server, db, "SELECT count(*) FROM t") == [(902,)]


def test_table_made_again_during_the_job_gets_nothing(spark_load_server, tmp_path):
    # DROP TABLE and CREATE TABLE of the same name while the job runs: its files were made for
    # the dropped table's tablets; the job is cancelled and the new table stays empty.
    server = spark_load_server
    db = _setup(server, _PARTITIONED)
    url = _csv(tmp_path / "d.csv", 300)
    _slow_etl(server, db, 3000)
    try:
        _load(server, db, "ld", f'DATA INFILE("{url}") INTO TABLE t COLUMNS TERMINATED BY ","')
        query(server, db, "DROP TABLE t FORCE")
        query(server, db, _PARTITIONED)
        job = wait_load(server, db, "ld")
    finally:
        _slow_etl(server, db, 0)
    assert job["State"] == "CANCELLED", job
    assert job["ErrorMsg"] == "type:LOAD_RUN_FAIL; msg:Table t changed during the load; load again"
    assert query(server, db, "SELECT count(*) FROM t") == [(0,)]
    assert _versions(server, db) == [1, 1]
    assert not [p for p in (server.data_dir / "spark_load").iterdir()
                if p.name != "errors" and p.name == str(job["JobId"])]


def test_kill9_during_etl_resumes_the_job_and_publishes_once(server_factory, tmp_path):
    server = server_factory("killed")
    server.start()
    db = _setup(server, _PARTITIONED)
    url = _csv(tmp_path / "k.csv", 1000000)
    _load(server, db, "l7", f'DATA INFILE("{url}") INTO TABLE t COLUMNS TERMINATED BY ","',
          '"max_filter_ratio" = "1"')
    deadline = time.monotonic() + 120
    while show_load(server, db, "l7")["State"] != "ETL" and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(4)  # Spark is starting or running the job's stages
    assert show_load(server, db, "l7")["State"] in ("ETL", "LOADING", "FINISHED")
    server.kill9()
    server.start()
    # As Doris's FE after a restart, the job goes on: started again from PENDING (its partial
    # output discarded, a new transaction), it publishes all its rows in one version.
    job = wait_load(server, db, "l7")
    assert job["State"] == "FINISHED", job
    # the table's partitions hold k < 1000: the other 999,000 rows are filtered (ratio 1)
    assert job["EtlInfo"] == "unselected.rows=0; dpp.abnorm.ALL=999000; dpp.norm.ALL=1000"
    assert query(server, db, "SELECT count(*) FROM t")[0][0] == 1000
    assert _versions(server, db) == [2, 2]  # one publish, of the second attempt only
    assert not [p for p in (server.data_dir / "spark_load").iterdir() if p.name != "errors"]
    server.kill9()
    server.start()
    assert query(server, db, "SELECT count(*) FROM t")[0][0] == 1000
