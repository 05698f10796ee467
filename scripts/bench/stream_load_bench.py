"""One large Stream Load, as a user sends it: rows/s and the server's peak memory (issue 20).

Writes a CSV file (narrow rows: `k BIGINT, v INT, d DATE`, or SSB's lineorder at a scale factor
from datagen/ssb.py into the Doris tooling DDL, ddl/ssb_doris_lineorder.sql) under --tmp, starts
a server of this tree on a fresh data directory there (with the given conf settings), PUTs the
file as one Stream Load body (read from disk as it is sent: the client holds none of it), then
reads the server's VmHWM (peak resident set) and the load's CPU seconds (user + system, less
noisy than wall time on a shared machine) from /proc and checks count(*). The CSV and the
data directory are deleted at the end unless --keep.

    python scripts/bench/stream_load_bench.py --narrow 60000000
    python scripts/bench/stream_load_bench.py --lineorder-sf 2 --conf mem_limit=4G
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pymysql

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scripts.bench.proc_cpu import cpu_seconds  # noqa: E402

NARROW_DDL = """CREATE TABLE narrow (k BIGINT NOT NULL, v INT, d DATE) DUPLICATE KEY(k)
DISTRIBUTED BY HASH(k) BUCKETS 16 PROPERTIES ("replication_num" = "1")"""


def write_narrow(path: Path, rows: int, chunk: int = 2_000_000) -> None:
    rng = np.random.default_rng(20)
    opts = pacsv.WriteOptions(include_header=False, delimiter="\t")
    schema = pa.schema([("k", pa.int64()), ("v", pa.int32()), ("d", pa.date32())])
    with pacsv.CSVWriter(str(path), schema, write_options=opts) as out:
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            out.write_table(pa.table({
                "k": pa.array(np.arange(start, start + n, dtype=np.int64)),
                "v": pa.array(rng.integers(0, 1 << 30, n, dtype=np.int32)),
                "d": pa.array(rng.integers(8000, 11000, n, dtype=np.int32)).cast(pa.date32())},
                schema=schema))


def write_lineorder(path: Path, sf: float, cache_dir: Path) -> tuple[int, list[str]]:
    from scripts.bench.datagen.ssb import generate_ssb
    parquet = pq.ParquetFile(generate_ssb(sf, cache_dir) / "lineorder.parquet")
    opts = pacsv.WriteOptions(include_header=False, delimiter="|", quoting_style="none")
    with pacsv.CSVWriter(str(path), parquet.schema_arrow, write_options=opts) as out:
        for batch in parquet.iter_batches(batch_size=1_000_000):
            out.write_batch(batch)
    return parquet.metadata.num_rows, parquet.schema_arrow.names


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def vm(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0




def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--narrow", type=int, default=0, help="rows of the narrow table")
    ap.add_argument("--lineorder-sf", type=float, default=0, help="SSB scale factor")
    ap.add_argument("--conf", action="append", default=[], help="server setting key=value")
    ap.add_argument("--tmp", default="/tmp", help="where the CSV and the data dir go")
    ap.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "minidoris-bench"))
    ap.add_argument("--keep", action="store_true", help="keep the CSV and the data dir")
    ap.add_argument("--repo", default=str(REPO), help="the tree whose server runs (e.g. main's)")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="stream-load-bench-", dir=args.tmp))
    csv = work / "body.csv"
    began = time.perf_counter()
    if args.lineorder_sf:
        rows, names = write_lineorder(csv, args.lineorder_sf, Path(args.cache_dir))
        table, ddl = "lineorder", (REPO / "scripts/bench/ddl/ssb_doris_lineorder.sql").read_text()
        headers = {"column_separator": "|", "columns": ", ".join(names)}
    else:
        rows = args.narrow
        write_narrow(csv, rows)
        table, ddl, headers = "narrow", NARROW_DDL, {}
    size = csv.stat().st_size
    print(f"generated {rows:,} rows, {size / 2**30:.2f} GiB of CSV in "
          f"{time.perf_counter() - began:.0f} s", flush=True)
    conf = work / "bench.conf"
    conf.write_text("".join(f"{c.replace('=', ' = ', 1)}\n" for c in args.conf))
    port, http_port = free_port(), free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--http-port", str(http_port), "--data-dir", str(work / "data"), "--config", str(conf)],
        cwd=args.repo, stdout=open(work / "server.log", "w"), stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            try:
                conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
                break
            except pymysql.err.OperationalError:
                time.sleep(0.1)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE bench")
            cur.execute("USE bench")
            cur.execute("\n".join(line for line in ddl.splitlines()
                                  if not line.startswith("--")).strip().rstrip(";"))
        rss_before = vm(server.pid, "VmRSS")
        web = http.client.HTTPConnection("127.0.0.1", http_port, timeout=7200,
                                          blocksize=1 << 20)
        auth = "Basic " + base64.b64encode(b"root:").decode()
        began, cpu_before = time.perf_counter(), cpu_seconds(server.pid)
        with open(csv, "rb") as body:
            web.request("PUT", f"/api/bench/{table}/_stream_load", body=body,
                         headers={"Authorization": auth, "Content-Length": str(size),
                                  "label": "bench", **headers})
            reply = json.loads(web.getresponse().read())
        seconds = time.perf_counter() - began
        cpu = cpu_seconds(server.pid) - cpu_before
        peak = vm(server.pid, "VmHWM")
        with conn.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {table}")
            counted = cur.fetchone()[0]
        result = {"table": table, "rows": rows, "csv_bytes": size, "seconds": round(seconds, 1),
                  "rows_per_second": round(rows / seconds),
                  "server_cpu_seconds": round(cpu, 2), "status": reply.get("Status"),
                  "loaded": reply.get("NumberLoadedRows"), "counted": counted,
                  "peak_rss_mb": peak >> 20, "rss_before_mb": rss_before >> 20,
                  "conf": args.conf, "repo": args.repo, "message": reply.get("Message")}
        print(json.dumps(result), flush=True)
        return 0 if reply.get("Status") == "Success" and counted == rows else 1
    finally:
        server.terminate()
        server.wait(60)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
