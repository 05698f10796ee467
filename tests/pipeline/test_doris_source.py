"""The PySpark data source `doris` against a running server: reads planned by the server
(snapshot versions, partition and bucket pruning, filters pushed down) and streamed per tablet
as Arrow; writes through two-phase Stream Loads that commit once, also when a task is retried,
and leave nothing when the job fails."""

from __future__ import annotations

import json
import urllib.request
import base64
from datetime import date, datetime
from decimal import Decimal

import pytest

from conftest import query
from server_process import unique_name

pytest.importorskip("pyspark")


@pytest.fixture
def db(server):
    name = unique_name("src")
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
        cur.execute(f"""CREATE TABLE {name}.t (k INT, d DATE, s VARCHAR(20), v DECIMAL(10,2),
            ts DATETIME, f DOUBLE) DUPLICATE KEY(k)
            PARTITION BY RANGE(k) (PARTITION p0 VALUES LESS THAN (100), PARTITION p1 VALUES LESS THAN (200),
            PARTITION p2 VALUES LESS THAN (1000))
            DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1")""")
        values = ", ".join(f"({i}, '2024-01-{i % 28 + 1:02d}', {'NULL' if i % 10 == 0 else repr('s' + str(i))}, "
                           f"{i}.25, '2024-02-03 04:05:{i % 60:02d}', {i / 4})" for i in range(300))
        cur.execute(f"INSERT INTO {name}.t VALUES {values}")
    conn.close()
    yield name
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE {name}")
    conn.close()


def _reader(spark, server, db, **options):
    r = spark.read.format("doris").option("doris.fenodes", f"127.0.0.1:{server.http_port}") \
        .option("doris.table.identifier", f"{db}.t").option("user", "root").option("password", "")
    for k, v in options.items():
        r = r.option(k.replace("_", "."), v)
    return r.load()


def test_read_whole_table_with_doris_types(spark, server, db):
    df = _reader(spark, server, db)
    assert [f.dataType.simpleString() for f in df.schema.fields] == \
        ["int", "date", "string", "decimal(10,2)", "timestamp_ntz", "double"]
    rows = sorted(df.collect(), key=lambda r: r.k)
    assert len(rows) == 300
    assert rows[7].asDict() == {"k": 7, "d": date(2024, 1, 8), "s": "s7", "v": Decimal("7.25"),
                                "ts": datetime(2024, 2, 3, 4, 5, 7), "f": 1.75}
    assert rows[10].s is None
    # one input partition per tablet by default (doris.request.tablet.size = 1): 3 x 3 tablets
    assert df.rdd.getNumPartitions() == 9


def test_read_fields_filter_query_and_tablet_size(spark, server, db):
    df = _reader(spark, server, db, **{"doris.read.fields": "k,s", "doris.filter.query": "k >= 150 AND k < 180",
                                       "doris.request.tablet.size": "2", "doris.batch.size": "7"})
    assert df.columns == ["k", "s"]
    assert sorted(r.k for r in df.collect()) == list(range(150, 180))
    # partition pruning: only p1's 3 tablets are planned (one per backend: 3 input partitions)
    assert df.rdd.getNumPartitions() == 3
    # tablets are grouped by backend, at most doris.request.tablet.size per input partition
    whole = _reader(spark, server, db, **{"doris.request.tablet.size": "3"})
    assert whole.rdd.getNumPartitions() == 3 and whole.count() == 300


def test_filter_pushdown_prunes_the_plan(spark, server, db):
    df = _reader(spark, server, db).filter("k = 42").select("k", "s")
    assert [tuple(r) for r in df.collect()] == [(42, "s42")]
    # pushed down: the plan reads one partition and one bucket (one tablet, one Spark partition)
    assert df.rdd.getNumPartitions() == 1
    df2 = _reader(spark, server, db).filter("s IS NULL AND k < 100")
    assert sorted(r.k for r in df2.collect()) == list(range(0, 100, 10))
    df3 = _reader(spark, server, db).filter("s LIKE 's29%' AND k IN (29, 290, 291, 5)")
    assert sorted(r.k for r in df3.collect()) == [29, 291]  # s of 290 is NULL


def test_read_is_a_snapshot(spark, server, db):
    from pipeline.source import DorisReader
    df = _reader(spark, server, db)
    reader = DorisReader({"doris.fenodes": f"127.0.0.1:{server.http_port}",
                          "doris.table.identifier": f"{db}.t"}, df.schema)
    parts = reader.partitions()
    query(server, db, "INSERT INTO t (k) VALUES (1), (2), (3)")  # after planning
    rows = [r for p in parts for b in reader.read(p) for r in b.to_pylist()]
    assert len(rows) == 300  # read at the planned versions
    assert _reader(spark, server, db).count() == 303


def test_plan_errors_are_doris_errors(spark, server, db):
    from pipeline.source import DorisError
    with pytest.raises(Exception, match="does not exist"):
        spark.read.format("doris").option("doris.fenodes", f"127.0.0.1:{server.http_port}") \
            .option("doris.table.identifier", f"{db}.nope").load().collect()
    with pytest.raises(Exception, match="Unknown column|unknown column"):
        _reader(spark, server, db, **{"doris.read.fields": "k,zz"}).collect()
    auth = base64.b64encode(b"root:").decode()
    req = urllib.request.Request(f"http://127.0.0.1:{server.http_port}/api/{db}/t/_query_plan",
                                 data=json.dumps({"sql": f"select k, count(*) from {db}.t group by k"}).encode(),
                                 method="POST", headers={"Authorization": f"Basic {auth}"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req)
    assert "only support single table" in json.loads(e.value.read())["msg"]
    assert DorisError


def test_jdbc_read_with_partition_column(spark, server, db):
    jar = "/usr/share/java/mariadb-java-client.jar"
    import os
    if not os.path.exists(jar):
        pytest.fail(f"{jar} is missing (Debian package libmariadb-java)")
    df = spark.read.format("jdbc").option("url", f"jdbc:mysql://127.0.0.1:{server.port}/{db}") \
        .option("driver", "org.mariadb.jdbc.Driver").option("dbtable", "t").option("user", "root") \
        .option("password", "").option("partitionColumn", "k").option("lowerBound", "0") \
        .option("upperBound", "300").option("numPartitions", "3").load()
    assert df.rdd.getNumPartitions() == 3
    rows = df.select("k", "s").collect()
    assert len(rows) == 300 and sorted(r.k for r in rows) == list(range(300))


# -- writing -----------------------------------------------------------------------------------
def _writer(df, server, db, **options):
    w = df.write.format("doris").mode("append").option("doris.fenodes", f"127.0.0.1:{server.http_port}") \
        .option("doris.table.identifier", f"{db}.w").option("user", "root").option("password", "")
    for k, v in options.items():
        w = w.option(k, v)
    return w


@pytest.fixture
def wdb(server, db):
    query(server, db, """CREATE TABLE w (k INT, s VARCHAR(20), v DECIMAL(10,2), d DATE) UNIQUE KEY(k)
        DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")""")
    return db


def _frame(spark, n, fail=None):
    """n rows over 2 partitions; `fail(partition, attempt, k)` may raise inside the job."""
    import pyarrow as pa

    df = spark.range(0, n, numPartitions=2).selectExpr(
        "CAST(id AS INT) AS k", "CONCAT('v', CAST(id AS STRING)) AS s",
        "CAST(id * 1.5 AS DECIMAL(10,2)) AS v", "DATE_ADD(DATE'2024-01-01', CAST(id AS INT)) AS d")
    if fail is None:
        return df

    def check(batches):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        for b in batches:
            for k in b.column("k").to_pylist():
                fail(ctx.partitionId(), ctx.attemptNumber(), k)
            yield b
    return df.mapInArrow(check, df.schema)


def test_write_appends_through_two_phase_commit(spark, server, wdb):
    _writer(_frame(spark, 100), server, wdb, **{"doris.sink.batch.size": "30",
                                                 "sink.properties.max_filter_ratio": "0"}).save()
    assert query(server, wdb, "SELECT count(*), sum(k), sum(v) FROM w") == [(100, 4950, Decimal("7425.00"))]
    assert query(server, wdb, "SELECT k, s, d FROM w WHERE k = 31") == [(31, "v31", date(2024, 2, 1))]
    # read back through the data source
    back = spark.read.format("doris").option("doris.fenodes", f"127.0.0.1:{server.http_port}") \
        .option("doris.table.identifier", f"{wdb}.w").load()
    assert back.count() == 100


def test_retried_task_commits_once(spark, server, wdb):
    def fail(partition, attempt, k):
        if partition == 1 and attempt == 0 and k == 95:  # after 40 of its rows were pre-committed
            raise RuntimeError("injected task failure")
    _writer(_frame(spark, 100, fail), server, wdb, **{"doris.sink.batch.size": "20",
                                                       "doris.sink.label.prefix": "retry_job"}).save()
    assert query(server, wdb, "SELECT count(*), count(DISTINCT k) FROM w") == [(100, 100)]
    # the same job run again (same label prefix) finds every label committed: nothing twice
    _writer(_frame(spark, 100), server, wdb, **{"doris.sink.batch.size": "20",
                                                 "doris.sink.label.prefix": "retry_job"}).save()
    assert query(server, wdb, "SELECT count(*) FROM w") == [(100,)]


def test_dead_attempt_left_a_precommitted_label(spark, server, wdb):
    # an attempt that died after pre-committing leaves its label held: the next attempt aborts it
    auth = base64.b64encode(b"root:").decode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.http_port}/api/{wdb}/w/_stream_load", data=b"999,x,1,2024-01-01\n",
        method="PUT", headers={"Authorization": f"Basic {auth}", "label": "dead_0_0",
                               "column_separator": ",", "two_phase_commit": "true"})
    reply = json.loads(urllib.request.urlopen(req).read())
    assert reply["Status"] == "Success" and reply["TwoPhaseCommit"] == "true"
    assert query(server, wdb, "SELECT count(*) FROM w") == [(0,)]  # pre-committed: invisible
    _writer(_frame(spark, 10), server, wdb, **{"doris.sink.label.prefix": "dead"}).save()
    assert query(server, wdb, "SELECT count(*), max(k) FROM w") == [(10, 9)]


def test_failed_job_leaves_nothing(spark, server, wdb):
    def fail(partition, attempt, k):
        if partition == 1 and k == 90:
            raise RuntimeError("injected job failure")
    with pytest.raises(Exception, match="injected job failure"):
        _writer(_frame(spark, 100, fail), server, wdb, **{"doris.sink.batch.size": "10"}).save()
    assert query(server, wdb, "SELECT count(*) FROM w") == [(0,)]


def test_two_phase_endpoint_errors(server, wdb):
    auth = base64.b64encode(b"root:").decode()

    def call(path, headers, data=b""):
        req = urllib.request.Request(f"http://127.0.0.1:{server.http_port}{path}", data=data,
                                     method="PUT", headers={"Authorization": f"Basic {auth}", **headers})
        return json.loads(urllib.request.urlopen(req).read())
    reply = call(f"/api/{wdb}/w/_stream_load", {"label": "tp1", "column_separator": ",",
                                                "two_phase_commit": "true"}, b"1,a,1,2024-01-01\n")
    txn = reply["TxnId"]
    again = call(f"/api/{wdb}/w/_stream_load", {"label": "tp1", "column_separator": ","}, b"2,b,1,2024-01-01\n")
    assert again["Status"] == "Label Already Exists" and again["ExistingJobStatus"] == "PRECOMMITTED"
    assert call(f"/api/{wdb}/_stream_load_2pc", {"txn_id": str(txn), "txn_operation": "commit"}) == \
        {"status": "Success", "msg": f"transaction [{txn}] commit successfully."}
    assert query(server, wdb, "SELECT k FROM w") == [(1,)]
    twice = call(f"/api/{wdb}/_stream_load_2pc", {"txn_id": str(txn), "txn_operation": "abort"})
    assert twice["status"] == "Fail" and "is already VISIBLE, could not abort" in twice["msg"]
    missing = call(f"/api/{wdb}/_stream_load_2pc", {"txn_id": "987654", "txn_operation": "commit"})
    assert missing["status"] == "Fail" and "transaction [987654] not found" in missing["msg"]
