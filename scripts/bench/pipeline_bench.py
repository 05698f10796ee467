"""The data pipeline benchmark: SSB lineorder loaded three ways, read back two ways, and a
large result over Arrow Flight SQL vs the MySQL protocol.

    python scripts/bench/pipeline_bench.py --sf 1 [--json out.json]

Starts its own server (Flight SQL on), derives SSB at the scale (cached, as run_bench.py does),
then, each end to end and measured once (the machine is shared: figures are noisy):
  load   Spark Load (`LOAD LABEL ... WITH RESOURCE`, spark.master local[2], the CSV file;
         the time from the statement to FINISHED): twice, the first ("cold") including the
         server's SparkSession start-up and Spark's first job, the second ("warm") on that
         session; Stream Load (the same CSV in 4M-row bodies) and INSERT ... VALUES batches
         (PyMySQL, 8 MB statements), each into its own copy of lineorder; rows/s
         (`--parts` picks what runs besides Spark Load)
  read   the lineorder copy into a Spark DataFrame (local[2]) through the `doris` data source
         and through Spark JDBC (MariaDB Connector/J, partitionColumn lo_orderkey, 2
         partitions), every row materialised (`write.format("noop")`), after a first job of
         Spark's own (session warm-up), two rounds, the order swapped in the second; rows/s
         and the CPU seconds of the server and of Spark (JVM + Python workers) per read
  result SELECT of 4 lineorder columns (the two Spark Load copies, at most 10M rows) fetched
         whole by ADBC Flight SQL (fetch_arrow_table) and by PyMySQL (fetchall); rows/s
The load average (os.getloadavg) is recorded before and after each part.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

import pymysql  # noqa: E402

from scripts.bench.datagen.ssb import ssb_tables  # noqa: E402
from scripts.bench.proc_cpu import cpu_seconds, spent, tree_cpu  # noqa: E402
from scripts.bench.load import csv_body, load_tables, stream_load_tables  # noqa: E402
from scripts.bench.schema import ddl_statements  # noqa: E402
from server_process import ServerProcess, free_port  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "minidoris-bench"
JAR = "/usr/share/java/mariadb-java-client.jar"


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _lineorder_ddl(name: str) -> str:
    ddl = next(s for s in ddl_statements("ssb") if "CREATE TABLE lineorder" in s)
    return ddl.replace("CREATE TABLE lineorder", f"CREATE TABLE {name}", 1)


def _exec(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def _load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def spark_load(server, conn, db: str, csv_path: Path, rows: int, table: str, label: str) -> dict:
    """One Spark Load of the CSV, timed from the LOAD statement to FINISHED (SHOW LOAD polled
    every 0.2 s); the first one in the server includes the start of its SparkSession."""
    _exec(conn, 'CREATE RESOURCE IF NOT EXISTS "bench_spark" PROPERTIES ("type" = "spark", '
                '"spark.master" = "local[2]", "spark.driver.memory" = "2g")')
    before = _load_average()
    began = time.perf_counter()
    _exec(conn, f'LOAD LABEL {db}.{label} (DATA INFILE("file://{csv_path}") INTO TABLE {table} '
                f'COLUMNS TERMINATED BY "\\\\x01") WITH RESOURCE "bench_spark" '
                f'PROPERTIES ("timeout" = "7200")')
    while True:
        row = _exec(conn, f'SHOW LOAD WHERE LABEL = "{label}"')[-1]
        if row[2] in ("FINISHED", "CANCELLED"):
            break
        time.sleep(0.2)
    seconds = time.perf_counter() - began
    if row[2] != "FINISHED":
        import urllib.request
        errors = urllib.request.urlopen(row[13]).read()[:2000] if row[13] else b""
        raise RuntimeError(f"spark load failed: {row[7]} {row[5]} {errors!r}")
    loaded = _exec(conn, f"SELECT count(*) FROM {table}")[0][0]
    assert loaded == rows, (loaded, rows)
    return {"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds,
            "etl": [row[9], row[10]], "loading": [row[11], row[12]],
            "load_average": [before, _load_average()]}


def spark_reads(server, db: str, rows: int) -> dict:
    from pipeline.source import DorisDataSource
    from pipeline.spark_load import session_for
    conn = server.connect(db)
    top = _exec(conn, "SELECT max(lo_orderkey) FROM lo_spark")[0][0] + 1
    conn.close()
    began = time.perf_counter()
    spark = session_for("local[2]", {"spark.jars": JAR, "spark.driver.memory": "2g"},
                        "minidoris-pipeline-bench")
    startup = time.perf_counter() - began
    spark.dataSource.register(DorisDataSource)
    out = {"spark_startup_s": startup, "load_average_at_start": _load_average()}
    doris = spark.read.format("doris").option("doris.fenodes", f"127.0.0.1:{server.http_port}") \
        .option("doris.table.identifier", f"{db}.lo_spark").option("user", "root") \
        .option("doris.request.tablet.size", "4").option("doris.batch.size", "65536")
    jdbc = spark.read.format("jdbc").option("url", f"jdbc:mysql://127.0.0.1:{server.port}/{db}") \
        .option("driver", "org.mariadb.jdbc.Driver").option("dbtable", "lo_spark") \
        .option("user", "root").option("password", "").option("partitionColumn", "lo_orderkey") \
        .option("lowerBound", "0").option("upperBound", str(top)).option("numPartitions", "2") \
        .option("fetchsize", "10000")
    try:
        # Spark's own first job (JVM class loading and JIT, code generation, the Python
        # daemon) belongs to the session's start-up, not to either reader.
        began = time.perf_counter()
        spark.range(0, 1000, 1, 2).selectExpr("id", "cast(id as string) s") \
            .write.format("noop").mode("overwrite").save()
        out["spark_first_job_s"] = time.perf_counter() - began
        # Two rounds, the order swapped in the second: the first reader of a round pays the
        # server's cold page cache and its reader's first Python workers.
        me = os.getpid()
        for round_, order in ((1, ("datasource", "jdbc")), (2, ("jdbc", "datasource"))):
            for name in order:
                reader = doris if name == "datasource" else jdbc
                cpu_server, cpu_spark = cpu_seconds(server.proc.pid), tree_cpu(me, (server.proc.pid,))
                began = time.perf_counter()
                reader.load().write.format("noop").mode("overwrite").save()
                s = time.perf_counter() - began
                out[f"{name}_{round_}"] = {
                    "rows": rows, "seconds": s, "rows_per_s": rows / s,
                    "server_cpu_s": cpu_seconds(server.proc.pid) - cpu_server,
                    "spark_cpu_s": spent(cpu_spark, tree_cpu(me, (server.proc.pid,)))}
                _log(f"read {name} round {round_}: {rows / s:,.0f} rows/s "
                     f"(server CPU {out[f'{name}_{round_}']['server_cpu_s']:.2f} s, Spark JVM "
                     f"+ Python workers {out[f'{name}_{round_}']['spark_cpu_s']:.2f} s)")
            out[f"speedup_{round_}"] = out[f"datasource_{round_}"]["rows_per_s"] / \
                out[f"jdbc_{round_}"]["rows_per_s"]
        out["load_average_at_end"] = _load_average()
    finally:
        spark.stop()
    return out


def result_transfer(server, flight_port: int, db: str) -> dict:
    import adbc_driver_flightsql.dbapi as fs
    # up to 10M rows: the two Spark Load copies of lineorder one after the other (12M at SF 1)
    cols = "lo_orderkey, lo_linenumber, lo_quantity, lo_revenue"
    sql = (f"SELECT {cols} FROM (SELECT {cols} FROM {db}.lo_spark UNION ALL "
           f"SELECT {cols} FROM {db}.lo_spark_warm) t LIMIT 10000000")
    out = {}
    with fs.connect(f"grpc://127.0.0.1:{flight_port}",
                    db_kwargs={"username": "root", "password": ""}) as conn, conn.cursor() as cur:
        began = time.perf_counter()
        cur.execute(sql)
        n = cur.fetch_arrow_table().num_rows
        s = time.perf_counter() - began
        out["flight_sql"] = {"rows": n, "seconds": s, "rows_per_s": n / s}
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="")
    began = time.perf_counter()
    with conn.cursor() as cur:
        cur.execute(sql)
        n = len(cur.fetchall())
    s = time.perf_counter() - began
    conn.close()
    out["pymysql"] = {"rows": n, "seconds": s, "rows_per_s": n / s}
    out["speedup"] = out["flight_sql"]["rows_per_s"] / out["pymysql"]["rows_per_s"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE))
    parser.add_argument("--json", default=None)
    parser.add_argument("--parts", default="stream,insert,read,result",
                        help="besides Spark Load (always): stream,insert,read,result")
    args = parser.parse_args(argv)
    lineorder = ssb_tables(args.sf, Path(args.cache_dir))["lineorder"]
    rows = lineorder.num_rows
    tmp = Path(tempfile.mkdtemp(prefix="pipeline-bench-"))
    csv_path = tmp / "lineorder.csv"
    csv_path.write_bytes(csv_body(lineorder))
    _log(f"lineorder SF {args.sf}: {rows} rows, CSV {csv_path.stat().st_size >> 20} MB")
    flight_port = free_port()
    server = ServerProcess(tmp / "data", log_path=tmp / "server.log",
                           extra_args=("--arrow-flight-sql-port", str(flight_port)))
    server.start()
    report: dict = {"sf": args.sf, "rows": rows, "cores": os.cpu_count(),
                    "load_average_at_start": _load_average()}
    try:
        conn = server.connect()
        _exec(conn, "CREATE DATABASE bench")
        _exec(conn, "USE bench")
        for name in ("lo_spark", "lo_spark_warm", "lo_stream", "lo_insert"):
            _exec(conn, _lineorder_ddl(name))
        report["layout"] = "7 range partitions x 4 hash buckets (28 tablets), DUPLICATE KEY"
        report["spark_load"] = spark_load(server, conn, "bench", csv_path, rows, "lo_spark",
                                          "spark_cold")
        _log(f"spark load (cold): {json.dumps(report['spark_load'])}")
        report["spark_load_warm"] = spark_load(server, conn, "bench", csv_path, rows,
                                               "lo_spark_warm", "spark_warm")
        _log(f"spark load (warm): {json.dumps(report['spark_load_warm'])}")
        if "stream" in args.parts:
            before = _load_average()
            st = stream_load_tables("127.0.0.1", server.http_port, "bench", {"lo_stream": lineorder})[0]
            report["stream_load"] = {"rows": rows, "seconds": st.seconds,
                                     "rows_per_s": st.rows_per_second,
                                     "load_average": [before, _load_average()]}
            _log(f"stream load: {json.dumps(report['stream_load'])}")
        if "insert" in args.parts:
            before = _load_average()
            # statements under the server's max_allowed_packet (16 MB, Doris's default)
            ins = load_tables(conn, {"lo_insert": lineorder}, batch_bytes=8 << 20)[0]
            report["insert"] = {"rows": rows, "seconds": ins.seconds,
                                "rows_per_s": ins.rows_per_second,
                                "load_average": [before, _load_average()]}
            _log(f"insert: {json.dumps(report['insert'])}")
        conn.close()
        if "read" in args.parts:
            report["read"] = spark_reads(server, "bench", rows)
            _log(f"reads: {json.dumps(report['read'])}")
        if "result" in args.parts:
            before = _load_average()
            report["result"] = result_transfer(server, flight_port, "bench")
            report["result"]["load_average"] = [before, _load_average()]
            _log(f"result: {json.dumps(report['result'])}")
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
