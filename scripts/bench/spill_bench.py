"""Bounded memory for large queries and compactions (issue 20 items 3 and 4).

Queries: starts a server of this tree with a small `mem_limit` (default 1G) on a fresh data
directory, Stream Loads --rows rows of `t(k BIGINT, v INT, s VARCHAR(40))` (8 buckets), then
runs a large GROUP BY, a large self-join and a large ORDER BY (each reduced to a few result
rows) with `enable_spill` off and on, exec_mem_limit out of the way (only the process budget
applies). For each: wall time, the server's peak resident set during the query (VmHWM, reset
before each query through /proc/<pid>/clear_refs) and the result or the error.

Compaction: in a child process per variant, writes --compaction-rowsets rowsets of
--compaction-rows rows each into one AGGREGATE tablet (overlapping keys), then compacts them
all, either as before issue 20 item 4 (every input read whole, concatenated, sorted, merged,
written: `--old`) or streamed (Tablet.compact); reports the peak resident set during the
compaction alone and its time.

    python scripts/bench/spill_bench.py --rows 6000000 --mem-limit 1G
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pymysql

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scripts.bench.stream_load_bench import free_port, vm  # noqa: E402

DDL = """CREATE TABLE t (k BIGINT NOT NULL, v INT, s VARCHAR(40)) DUPLICATE KEY(k)
DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ("replication_num" = "1")"""
QUERIES = {
    "group by (rows/2 groups)": "SELECT count(*), sum(c), max(mx) FROM (SELECT k DIV 2 AS g, "
                                "count(*) AS c, max(s) AS mx FROM t GROUP BY k DIV 2) x",
    "join (rows x rows)": "SELECT count(*), sum(length(b.s)), max(a.s) "
                          "FROM t a JOIN t b ON a.k = b.k",
    "order by (all rows)": "SELECT k, s FROM t ORDER BY s DESC, k LIMIT 3 OFFSET {offset}",
}


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def load(port: int, rows: int) -> float:
    auth = {"Authorization": "Basic " + base64.b64encode(b"root:").decode()}
    start = time.perf_counter()
    step = 1_000_000
    for part, first in enumerate(range(0, rows, step)):
        body = b"".join(b"%d\t%d\tsome_longer_text_%d\n" % (i, i % 1000, i)
                        for i in range(first, min(rows, first + step)))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        conn.request("PUT", "/api/b/t/_stream_load", body=body,
                     headers={**auth, "label": f"p{part}", "Content-Length": str(len(body))})
        reply = json.loads(conn.getresponse().read())
        assert reply["Status"] == "Success", reply
    return rows / (time.perf_counter() - start)


def bench_queries(args, tmp: Path) -> None:
    conf = tmp / "bench.conf"
    conf.write_text(f"mem_limit = {args.mem_limit}\n")
    port, http_port = free_port(), free_port()
    log = open(tmp / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "server", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--http-port", str(http_port), "--data-dir",
                             str(tmp / "data"), "--config", str(conf)], cwd=REPO,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(300):
            try:
                conn = pymysql.connect(host="127.0.0.1", port=port, user="root",
                                       autocommit=True)
                break
            except pymysql.err.OperationalError:
                time.sleep(0.1)
        cur = conn.cursor()
        cur.execute("CREATE DATABASE b")
        cur.execute("USE b")
        cur.execute(DDL)
        rate = load(http_port, args.rows)
        print(f"loaded {args.rows:,} rows at {rate:,.0f} rows/s; idle resident set "
              f"{vm(proc.pid, 'VmRSS') >> 20} MB; mem_limit {args.mem_limit}")
        cur.execute("SET exec_mem_limit = 68719476736")
        print("| query | enable_spill | time s | peak RSS MB | result |")
        print("|---|---|---|---|---|")
        for name, sql in QUERIES.items():
            sql = sql.format(offset=args.rows - 10)
            for spill in ("false", "true"):
                cur.execute(f"SET enable_spill = {spill}")
                time.sleep(0.2)
                reset_peak(proc.pid)
                start = time.perf_counter()
                try:
                    cur.execute(sql)
                    result = str(cur.fetchall()[0])[:60]
                except pymysql.err.OperationalError as exc:
                    result = exc.args[1].split("detailMessage = ")[-1][:60]
                took = time.perf_counter() - start
                print(f"| {name} | {spill} | {took:.2f} | {vm(proc.pid, 'VmHWM') >> 20} "
                      f"| {result} |", flush=True)
    finally:
        proc.terminate()
        proc.wait(30)


def compaction_child(args) -> None:
    """One compaction in this process: prints its peak resident set (MB) and seconds."""
    import numpy as np
    import pyarrow as pa

    from storage import ScanStats, StorageEngine
    from storage.column_mapping import delete_conjunctions
    from storage.compaction import merge_rows
    from storage.process_memory import release_unused
    from tests.unit.storage.storage_testutil import column
    from storage.schema import TabletSchema
    schema = TabletSchema([column("k", "BIGINT", key=True), column("s", "VARCHAR", 32, key=True),
                           column("v", "BIGINT", agg="SUM"), column("m", "INT", agg="MAX")],
                          "AGG_KEYS")
    tablet = StorageEngine(args.dir).create_tablet(1, schema)
    rng = np.random.default_rng(1)
    metas = []
    n = args.compaction_rows
    for version in range(2, 2 + args.compaction_rowsets):
        k = rng.integers(0, n * 2, n)
        data = pa.table({"k": k, "s": pa.array(np.char.add("key_", k.astype(str)).astype(object)),
                         "v": rng.integers(0, 100, n), "m": rng.integers(0, 1000, n).astype(np.int32)})
        metas.append(tablet.publish(tablet.write_rowset(data, version), version))
        del data, k
    release_unused()
    base_rss = vm(os.getpid(), "VmRSS")
    reset_peak(os.getpid())
    start = time.perf_counter()
    if args.old:
        stats = ScanStats()
        deletes = delete_conjunctions(metas, schema)
        tables = [tablet.scan_rowset(schema, rs, deletes, schema.names, [], stats) for rs in metas]
        out = tablet.write_rowset(merge_rows(tables, schema, True), 99)
    else:
        out = tablet.compact(metas, 99)
    took = time.perf_counter() - start
    print(json.dumps({"peak_mb": vm(os.getpid(), "VmHWM") >> 20, "before_mb": base_rss >> 20,
                      "seconds": round(took, 2), "rows_out": out.num_rows}))


def bench_compaction(args, tmp: Path) -> None:
    print(f"\ncompaction of {args.compaction_rowsets} rowsets x {args.compaction_rows:,} rows "
          "(AGGREGATE, keys k BIGINT, s VARCHAR; values SUM, MAX)")
    print("| merge | time s | resident before MB | peak RSS MB | rows out |")
    print("|---|---|---|---|---|")
    for old in (True, False):
        d = tmp / f"compaction_{old}"
        cmd = [sys.executable, __file__, "--child", "--dir", str(d),
               "--compaction-rows", str(args.compaction_rows),
               "--compaction-rowsets", str(args.compaction_rowsets)] + (["--old"] if old else [])
        env = {**os.environ, "MIMALLOC_PURGE_DELAY": "0", "MIMALLOC_ARENA_EAGER_COMMIT": "0"}
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True,
                                        cwd=REPO, env=env).stdout.strip().splitlines()[-1])
        print(f"| {'whole inputs (before)' if old else 'streaming k-way (after)'} | "
              f"{out['seconds']} | {out['before_mb']} | {out['peak_mb']} | {out['rows_out']:,} |")
        shutil.rmtree(d, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=6_000_000)
    ap.add_argument("--mem-limit", default="1G")
    ap.add_argument("--compaction-rows", type=int, default=1_500_000)
    ap.add_argument("--compaction-rowsets", type=int, default=4)
    ap.add_argument("--skip-queries", action="store_true")
    ap.add_argument("--skip-compaction", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--old", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args(argv)
    if args.child:
        compaction_child(args)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="spill_bench_", dir=args.tmp))
    try:
        print(f"load average: {os.getloadavg()}")
        if not args.skip_queries:
            bench_queries(args, tmp)
        if not args.skip_compaction:
            bench_compaction(args, tmp)
        print(f"load average: {os.getloadavg()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
