"""A production-like dynamic-partition layout (issue 14 item 3): 365 daily partitions x 8
buckets (2,920 tablets) against the same rows in one partition x 8 buckets.

    python scripts/bench/daily_partitions_bench.py [--rows 2000000] [--runs 5]

One server (started here, fresh data dir). Two tables with the same columns (dt DATE, k BIGINT,
v INT, s VARCHAR(16)): `daily` with `FROM ("2024-01-01") TO ("2024-12-31") INTERVAL 1 DAY`
partitions, `flat` unpartitioned; --rows rows spread over the year, loaded by one Stream Load
each. Queries (median of --runs after a warm-up, alternating between the tables): a one-day
aggregate, a one-month aggregate and a full-table aggregate; DuckDB (2 threads) runs the same
queries on the same Arrow table. Targets: one-day <= 15 ms; full-table on `daily` <= 2x `flat`.
Timings on a shared machine are noisy: compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import urllib.request
import base64
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tests"))

from server_process import ServerProcess  # noqa: E402

COLUMNS = "(dt DATE NOT NULL, k BIGINT NOT NULL, v INT, s VARCHAR(16))"
TAIL = "DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ('replication_num' = '1')"
DDL = {
    "daily": f"CREATE TABLE daily {COLUMNS} DUPLICATE KEY(dt, k) PARTITION BY RANGE(dt) "
             f"(FROM ('2024-01-01') TO ('2024-12-31') INTERVAL 1 DAY) {TAIL}",
    "flat": f"CREATE TABLE flat {COLUMNS} DUPLICATE KEY(dt, k) {TAIL}",
}
QUERIES = {
    "one_day": "SELECT s, count(*), sum(v) FROM {t} WHERE dt = '2024-06-15' GROUP BY s",
    "one_month": "SELECT s, count(*), sum(v) FROM {t} WHERE dt >= '2024-06-01' "
                 "AND dt < '2024-07-01' GROUP BY s",
    "full": "SELECT s, count(*), sum(v) FROM {t} GROUP BY s",
}


def make_rows(n: int) -> pa.Table:
    rng = np.random.default_rng(7)
    days = rng.integers(0, 365, n)
    dt = np.datetime64("2024-01-01") + days.astype("timedelta64[D]")
    return pa.table({"dt": pa.array(dt), "k": pa.array(np.arange(n, dtype=np.int64)),
                     "v": pa.array(rng.integers(0, 1000, n, dtype=np.int32)),
                     "s": pa.array([f"s{i}" for i in range(16)])
                     .take(pa.array(rng.integers(0, 16, n)))})


def stream_load(srv, table: str, body: bytes) -> None:
    req = urllib.request.Request(
        f"http://{srv.host}:{srv.http_port}/api/b/{table}/_stream_load", data=body,
        method="PUT", headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(),
                               "column_separator": ","})
    with urllib.request.urlopen(req, timeout=3600) as resp:
        reply = resp.read().decode()
    if '"Success"' not in reply:
        raise RuntimeError(reply)


def timed(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rows = make_rows(args.rows)
    sink = pa.BufferOutputStream()
    pacsv.write_csv(rows, sink, pacsv.WriteOptions(include_header=False, quoting_style="none"))
    body = sink.getvalue().to_pybytes()
    with tempfile.TemporaryDirectory() as tmp:
        srv = ServerProcess(Path(tmp) / "data").start()
        try:
            conn = srv.connect()
            with conn.cursor() as cur:
                cur.execute("CREATE DATABASE b")
                cur.execute("USE b")
                for ddl in DDL.values():
                    cur.execute(ddl)
            for table in DDL:
                start = time.perf_counter()
                stream_load(srv, table, body)
                print(f"load {table}: {args.rows / (time.perf_counter() - start):,.0f} rows/s")
            import duckdb
            duck = duckdb.connect()
            duck.execute("SET threads = 2")
            duck.register("rows_t", rows)
            cur = conn.cursor()

            def run(sql: str):
                cur.execute(sql)
                return cur.fetchall()
            print(f"{'query':10} {'daily ms':>9} {'flat ms':>9} {'duckdb ms':>10} "
                  f"{'daily/flat':>10}")
            for name, sql in QUERIES.items():
                want = sorted(duck.execute(sql.format(t="rows_t")).fetchall())
                for t in DDL:
                    got = sorted(tuple(r) for r in run(sql.format(t=t)))
                    if [(a, int(b), int(c)) for a, b, c in got] != \
                            [(a, int(b), int(c)) for a, b, c in want]:
                        raise RuntimeError(f"{name} on {t} differs from DuckDB")
                daily = timed(lambda: run(sql.format(t="daily")), args.runs)
                flat = timed(lambda: run(sql.format(t="flat")), args.runs)
                ddb = timed(lambda: duck.execute(sql.format(t="rows_t")).fetchall(), args.runs)
                print(f"{name:10} {daily:9.1f} {flat:9.1f} {ddb:10.1f} {daily / flat:10.2f}")
        finally:
            srv.stop()


if __name__ == "__main__":
    main()
