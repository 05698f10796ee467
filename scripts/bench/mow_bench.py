"""Merge-on-write reads: a Unique table with 1 or 5 overlapping rowsets against a Duplicate one.

    python scripts/bench/mow_bench.py [--rows 1000000] [--runs 5] [--json out.json] [--wire]

In-process, storage only (one tablet: 1 partition x 1 bucket, page cache on as the server's
conf has it). Tables:
    dup-1    Duplicate keys, the --rows live rows in 1 rowset
    dup-5    Duplicate keys, the same 5 loads as uniq-5 (1.8x the rows, all of them counted:
             the same stored volume, without a delete bitmap)
    uniq-1   Unique keys, the same rows in 1 rowset
    uniq-5   Unique keys, 5 rowsets: the rows, then 4 loads each rewriting a random 20% of the
             keys (1.8x the rows stored; still --rows live rows)
Queries, each a snapshot read plus the aggregate in pyarrow (what the scan operator feeds):
    count(*)        no column
    sum(v)          column v
    filtered        sum(v) WHERE v < 100000 (10% of the rows; a value-column predicate)
Then, for the 5-rowset tables, the median time of 20 loads of 100 existing keys (the cost
merge-on-write moves to loads). Median of --runs runs after one warm-up (wall clock and process CPU time: the machine is
shared, CPU time is the steadier figure). Runs on whatever code is importable: on code without
merge-on-write (`TabletSchema` without `merge_on_write`) the Unique tablets merge on read, so
running it with PYTHONPATH at an older checkout gives the "before" figures.

--wire: the same through a server started from this checkout (tests/server_process.py, auto
compaction off so the rowsets stay), tables of 1 partition x 4 buckets filled by Stream Load
(CSV), the queries as SQL (`SELECT count(*)`, `SELECT sum(v)`, `SELECT count(*), sum(v) ...
WHERE v < 100000`) through PyMySQL.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage import ColumnPredicate, DataType, ScanStats, StorageEngine, TabletColumn, TabletSchema


def schema(keys_type: str) -> TabletSchema:
    cols = [TabletColumn("k", DataType.of("BIGINT"), True),
            TabletColumn("v", DataType.of("BIGINT"), False)]
    extra = {}
    if keys_type == "UNIQUE_KEYS" and "merge_on_write" in {
            f.name for f in dataclasses.fields(TabletSchema)}:
        extra["merge_on_write"] = True
    return TabletSchema(cols, keys_type, **extra)


def publish(tablet, data: pa.Table, version: int) -> None:
    meta = tablet.write_rowset(data, version)
    if hasattr(tablet, "prepare_publish"):
        tablet.prepare_publish(meta, version)
    tablet.publish(meta, version)


def build(engine, tablet_id: int, keys_type: str, rows: int, loads: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    tablet = engine.create_tablet(tablet_id, schema(keys_type))
    keys = np.arange(rows, dtype=np.int64)
    publish(tablet, pa.table({"k": keys, "v": rng.integers(0, 1_000_000, rows)}), 2)
    load_s = []
    for i in range(1, loads):
        part = np.sort(rng.choice(keys, rows // 5, replace=False))
        start = time.perf_counter()
        publish(tablet, pa.table({"k": part, "v": rng.integers(0, 1_000_000, len(part))}),
                2 + i)
        load_s.append(time.perf_counter() - start)
    return tablet, 1 + loads, load_s


QUERIES = {
    "count(*)": ([], [], lambda t: t.num_rows),
    "sum(v)": (["v"], [], lambda t: pc.sum(t.column("v")).as_py()),
    "filtered": (["v"], [ColumnPredicate("v", "<", (100_000,))],
                 lambda t: pc.sum(t.column("v")).as_py()),
}


def small_loads(tablet, version: int, loads: int = 20, rows: int = 100) -> float:
    """Median ms of `loads` loads of `rows` random existing keys (each one more rowset)."""
    rng = np.random.default_rng(3)
    times = []
    for i in range(loads):
        keys = np.sort(rng.choice(1_000_000, rows, replace=False))
        start = time.perf_counter()
        publish(tablet, pa.table({"k": keys, "v": keys}), version + 1 + i)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 1)


def measure(tablet, version: int, runs: int) -> dict:
    out = {}
    for name, (cols, preds, agg) in QUERIES.items():
        times, cpu, result = [], [], None
        for i in range(runs + 1):
            start, start_cpu = time.perf_counter(), time.process_time()
            with tablet.capture(version) as snap:
                result = agg(snap.read(cols, preds, ScanStats()))
            if i:
                times.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
        out[name] = {"ms": round(statistics.median(times) * 1000, 2),
                     "cpu_ms": round(statistics.median(cpu) * 1000, 2), "result": result}
    return out


SQL = {"count(*)": "SELECT count(*) FROM {t}", "sum(v)": "SELECT sum(v) FROM {t}",
       "filtered": "SELECT count(*), sum(v) FROM {t} WHERE v < 100000"}


def _csv(keys: np.ndarray, values: np.ndarray) -> bytes:
    out = io.StringIO()
    np.savetxt(out, np.column_stack([keys, values]), fmt="%d", delimiter=",")
    return out.getvalue().encode()


def wire(rows: int, runs: int) -> dict:
    # a server from this checkout; Stream Load as daily_partitions_bench does it (database b)
    from daily_partitions_bench import ServerProcess, stream_load

    rng = np.random.default_rng(1)
    keys = np.arange(rows, dtype=np.int64)
    loads = [_csv(keys, rng.integers(0, 1_000_000, rows))]
    for _ in range(4):
        part = np.sort(rng.choice(keys, rows // 5, replace=False))
        loads.append(_csv(part, rng.integers(0, 1_000_000, len(part))))
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "bench.conf"
        conf.write_text("disable_auto_compaction = true\n")
        srv = ServerProcess(Path(tmp) / "data", extra_args=("--config", str(conf))).start()
        try:
            conn = srv.connect()
            cur = conn.cursor()
            cur.execute("CREATE DATABASE b")
            cur.execute("USE b")
            for name, model, n in (("dup1", "DUPLICATE", 1), ("dup5", "DUPLICATE", 5),
                                   ("uniq1", "UNIQUE", 1), ("uniq5", "UNIQUE", 5)):
                cur.execute(f"CREATE TABLE {name} (k BIGINT NOT NULL, v BIGINT) {model} KEY(k) "
                            "DISTRIBUTED BY HASH(k) BUCKETS 4 PROPERTIES ('replication_num' = '1')")
                start = time.perf_counter()
                for body in loads[:n]:
                    stream_load(srv, name, body)
                result = {"load_s": round(time.perf_counter() - start, 2)}
                for q, sql in SQL.items():
                    cur.execute(sql.format(t=name))
                    cur.fetchall()
                    times = []
                    for _ in range(runs):
                        t0 = time.perf_counter()
                        cur.execute(sql.format(t=name))
                        got = cur.fetchall()
                        times.append(time.perf_counter() - t0)
                    result[q] = {"ms": round(statistics.median(times) * 1000, 1),
                                 "result": [str(x) for x in got[0]]}
                out[name] = result
                print(name, json.dumps(result), flush=True)
            conn.close()
        finally:
            srv.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--wire", action="store_true")
    args = ap.parse_args()
    if args.wire:
        report = {"load_average": os.getloadavg(), "rows": args.rows,
                  "wire": wire(args.rows, args.runs),
                  "load_average_after": os.getloadavg()}
        print("load average", report["load_average"], "->", report["load_average_after"])
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
        return
    report = {"load_average": os.getloadavg(), "rows": args.rows,
              "merge_on_write": "merge_on_write" in {f.name for f in
                                                     dataclasses.fields(TabletSchema)}}
    with tempfile.TemporaryDirectory() as tmp:
        engine = StorageEngine(tmp, page_cache_bytes=2 << 30)
        for tid, (name, keys_type, loads) in enumerate([("dup-1", "DUP_KEYS", 1),
                                                       ("dup-5", "DUP_KEYS", 5),
                                                       ("uniq-1", "UNIQUE_KEYS", 1),
                                                       ("uniq-5", "UNIQUE_KEYS", 5)], 1):
            tablet, version, load_s = build(engine, tid, keys_type, args.rows, loads)
            report[name] = measure(tablet, version, args.runs)
            if load_s:
                report[name]["overlapping_load_ms"] = [round(s * 1000) for s in load_s]
                report[name]["100_row_load_ms"] = small_loads(tablet, version)
            print(name, json.dumps(report[name]), flush=True)
            engine.drop_tablet(tid)
    report["load_average_after"] = os.getloadavg()
    print("load average", report["load_average"], "->", report["load_average_after"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
