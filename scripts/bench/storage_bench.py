"""Storage benchmark: load rate, point lookups, and what each index buys over a full scan.

    python scripts/bench/storage_bench.py                 # 10M rows in-process, 1M through the wire
    python scripts/bench/storage_bench.py --rows 1000000 --wire-rows 200000 --json out.json

In-process (catalog + storage engine in this process, no server):
 1. load: `catalog.load.load_table` of --rows rows (the internal Arrow path: defaults and casts,
    partition and bucket routing, `Tablet.write_rowset` per bucket = sort + encode + LZ4 +
    fsync, one journaled publish), into a table without optional indexes and into one with a
    bloom filter and a bitmap index; rows/s of each.
 2. point lookup: `k = x` on the sorted key of one tablet (the bucket of x, as bucket pruning
    picks it), median latency.
 3. selective scans, each pruning ~99% of the pages of the table with one index, against a full
    scan of the same data (every tablet read with the same columns and no predicate, then the
    same predicate applied with pyarrow):
      short key   k >= a AND k < a + 1%          (k is the sorted key)
      zone map    z >= a AND z < a + 1%          (z follows k but is not a key)
      bloom       u = one value                  (u is random: zone maps cannot prune)
      bitmap      c = 'm'                        (1% of rows, clustered; every page spans a..z)
    median of 5 runs each, the counters of one run, and the speed-up.
Through the wire (a server started here on a free port, data dir in a temporary directory):
    --wire-rows rows built with INSERT ... SELECT doubling, then median latency of a point lookup
    (`SELECT k, v ... WHERE k = x`) and of `SELECT count(*), sum(v) ... WHERE c = 'm'` with its
    bitmap index and again after DROP INDEX (an aggregate keeps the client's row parsing out).
Indexes must win (issue 14 item 5; --index-rows, default 2.4M; a server started here):
    table `ix` (k BIGINT sorted key, s and s2 the same random strings, bloom filter on s only,
    v DOUBLE; 8 buckets) loaded in one Stream Load, and `ix_small`, the same rows in
    --small-loads Stream Loads with auto compaction off (that many rowsets per tablet); hot
    median latency of `s = 'x'` (bloom filter) vs `s2 = 'x'` (none), and of `k = x` (short
    key) vs `k + 0 = x` (a full scan with the same result), on both tables.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from catalog.catalog import Catalog  # noqa: E402
from catalog.load import load_table  # noqa: E402
from server.parser.create_table import parse_create_table  # noqa: E402
from server.parser.tokens import TokenCursor  # noqa: E402
from storage import ColumnPredicate, ScanStats, StorageEngine, bucket_ids  # noqa: E402
from storage.types import DataType  # noqa: E402

BUCKETS = 8
DDL = """CREATE TABLE {name} (k BIGINT NOT NULL, z INT, u BIGINT, c VARCHAR(4), v DOUBLE{index})
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS {buckets}
PROPERTIES ("replication_num" = "1"{props})"""


def make_data(rows: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = np.arange(rows, dtype=np.int64)
    c = np.where(k % 2 == 0, "a", "z").astype(object)
    lo = rows // 2
    c[lo:lo + rows // 100][1::2] = "m"  # 0.5% of rows, all within 1% of the key range
    return pa.table({"k": k, "z": (k // 3).astype(np.int32),
                     "u": rng.integers(0, 1 << 40, rows, dtype=np.int64),
                     "c": pa.array(c, pa.string()), "v": rng.random(rows)})


def median_ms(fn, runs: int = 5) -> float:
    fn()  # warm: index pages loaded, file cache hot
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


class InProcess:
    def __init__(self, root: str):
        self.engine = StorageEngine(str(Path(root) / "storage"))
        self.catalog = Catalog(Path(root) / "meta", self.engine, backend_num=1,
                               edit_log_roll_num=100000)
        self.catalog.open()
        self.catalog.create_database("bench")

    def create(self, name: str, indexed: bool) -> None:
        index = ", INDEX idx_c (c) USING BITMAP" if indexed else ""
        props = ', "bloom_filter_columns" = "u", "bloom_filter_fpp" = "0.001"' if indexed else ""
        sql = DDL.format(name=name, index=index, buckets=BUCKETS, props=props)
        self.catalog.create_table("bench", parse_create_table(TokenCursor(sql)))

    def load(self, name: str, data: pa.Table) -> float:
        t0 = time.perf_counter()
        load_table(self.catalog, "bench", name, data, datetime.now())
        return data.num_rows / (time.perf_counter() - t0)

    def tablets(self, name: str) -> list:
        table = self.catalog.get_table("bench", name)
        (p,) = table.partitions.values()
        return [(self.engine.get_tablet(t), p.visible_version)
                for t in p.tablets_by_index[table.base_index_id]]

    def read(self, name: str, columns: list[str], preds: list[ColumnPredicate],
             stats: ScanStats, only: list | None = None) -> pa.Table:
        parts = [t.read(v, columns, preds, stats) for t, v in (only or self.tablets(name))]
        return pa.concat_tables(parts)


def selective_scans(bench: InProcess, data: pa.Table, rows: int) -> list[dict]:
    a = rows // 3
    u = int(data.column("u")[rows // 4].as_py())
    cases = [
        ("short key", "plain", [ColumnPredicate("k", ">=", (a,)),
                                ColumnPredicate("k", "<", (a + rows // 100,))]),
        ("zone map", "plain", [ColumnPredicate("z", ">=", (a // 3,)),
                               ColumnPredicate("z", "<", (a // 3 + rows // 300,))]),
        ("bloom filter", "indexed", [ColumnPredicate("u", "=", (u,))]),
        ("bitmap index", "indexed", [ColumnPredicate("c", "=", ("m",))]),
    ]
    out = []
    for label, name, preds in cases:
        columns = ["k", "v"]
        needed = list(dict.fromkeys(columns + [p.column for p in preds]))

        def full():
            table = bench.read(name, needed, [], ScanStats())
            mask = None
            for p in preds:
                op = {">=": pc.greater_equal, "<": pc.less, "=": pc.equal}[p.op]
                m = op(table.column(p.column), p.values[0])
                mask = m if mask is None else pc.and_(mask, m)
            return table.filter(mask).select(columns)

        def indexed():
            return bench.read(name, columns, preds, ScanStats())

        expected = full()
        stats = ScanStats()
        got = bench.read(name, columns, preds, stats)
        assert got.num_rows == expected.num_rows, (label, got.num_rows, expected.num_rows)
        full_ms, index_ms = median_ms(full), median_ms(indexed)
        pages = stats.pages_total
        out.append({"index": label, "rows": got.num_rows, "full_ms": round(full_ms, 2),
                    "indexed_ms": round(index_ms, 2), "speedup": round(full_ms / index_ms, 1),
                    "pages_read": stats.pages_read, "pages_total": pages,
                    "counters": {k: v for k, v in stats.profile().items() if v}})
    return out


def point_lookup(bench: InProcess, rows: int) -> float:
    key = rows // 2 + 12345
    col = pa.array([key], pa.int64())
    bucket = int(bucket_ids([col], [DataType.of("BIGINT")], BUCKETS)[0])
    only = [bench.tablets("plain")[bucket]]
    pred = [ColumnPredicate("k", "=", (key,))]
    got = bench.read("plain", ["k", "v"], pred, ScanStats(), only)
    assert got.num_rows == 1
    return median_ms(lambda: bench.read("plain", ["k", "v"], pred, ScanStats(), only), runs=50)


def wire(rows: int) -> dict:
    from server_process import ServerProcess

    with tempfile.TemporaryDirectory() as tmp:
        srv = ServerProcess(Path(tmp) / "data").start()
        try:
            conn = srv.connect()
            cur = conn.cursor()
            cur.execute("CREATE DATABASE wb")
            cur.execute("USE wb")
            for name, indexed in (("plain", False), ("indexed", True)):
                index = ", INDEX idx_c (c) USING BITMAP" if indexed else ""
                cur.execute(DDL.format(name=name, index=index, buckets=BUCKETS, props=""))
            seed = ", ".join(f"({i}, {i // 3}, {i * 7919 % 1000003}, '{'az'[i % 2]}', {i}.5)"
                             for i in range(1000))
            cur.execute(f"INSERT INTO plain VALUES {seed}")
            n = 1000
            while n < rows:
                cur.execute(f"INSERT INTO plain SELECT k + {n}, (k + {n}) DIV 3, u, c, v "
                            f"FROM plain WHERE k < {rows - n}")
                n = min(2 * n, rows)
            lo = rows // 2
            hi = lo + rows // 100
            cur.execute(f"INSERT INTO indexed SELECT k, z, u, "
                        f"IF(k >= {lo} AND k < {hi} AND k % 2 = 1, 'm', c), v FROM plain")

            def timed(sql: str, runs: int) -> float:
                cur.execute(sql)
                cur.fetchall()
                times = []
                for _ in range(runs):
                    t0 = time.perf_counter()
                    cur.execute(sql)
                    cur.fetchall()
                    times.append((time.perf_counter() - t0) * 1000)
                return round(statistics.median(times), 2)

            key = rows // 2 + 777
            point = timed(f"SELECT k, v FROM plain WHERE k = {key}", 30)
            cur.execute("SELECT count(*) FROM indexed WHERE c = 'm'")
            rare = cur.fetchall()[0][0]
            selective = "SELECT count(*), sum(v) FROM indexed WHERE c = 'm'"
            bitmap = timed(selective, 5)
            cur.execute("DROP INDEX idx_c ON indexed")
            no_index = timed(selective, 5)
            full = timed("SELECT count(*), sum(v) FROM plain", 5)
            conn.close()
            return {"rows": rows, "point_lookup_ms": point, "bitmap_rows": rare,
                    "bitmap_select_ms": bitmap, "same_without_index_ms": no_index,
                    "speedup": round(no_index / bitmap, 1), "full_scan_count_sum_ms": full}
        finally:
            srv.stop()


def in_process(rows: int, result: dict) -> None:
    """Load rate, point lookup and selective scans in this process (module docstring 1-3)."""
    with tempfile.TemporaryDirectory() as tmp:
        bench = InProcess(tmp)
        data = make_data(rows)
        bench.create("plain", False)
        bench.create("indexed", True)
        result["load_rows_per_s"] = round(bench.load("plain", data))
        result["load_indexed_rows_per_s"] = round(bench.load("indexed", data))
        print(f"load {rows:,} rows: {result['load_rows_per_s']:,} rows/s "
              f"(with bloom filter + bitmap index: {result['load_indexed_rows_per_s']:,} rows/s)")
        result["point_lookup_ms"] = round(point_lookup(bench, rows), 3)
        print(f"point lookup k = x (one tablet of {rows // BUCKETS:,} rows): "
              f"{result['point_lookup_ms']} ms")
        result["scans"] = selective_scans(bench, data, rows)
        for s in result["scans"]:
            print(f"{s['index']:<13} {s['rows']:>8,} rows  full {s['full_ms']:>8.1f} ms  "
                  f"indexed {s['indexed_ms']:>7.1f} ms  x{s['speedup']:<6} "
                  f"pages {s['pages_read']}/{s['pages_total']}")
        bench.catalog.close()


IX_DDL = """CREATE TABLE {name} (k BIGINT, s VARCHAR(32), s2 VARCHAR(32), v DOUBLE)
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 8
PROPERTIES ("replication_num" = "1", "bloom_filter_columns" = "s",
            "disable_auto_compaction" = "{no_compaction}")"""


def indexes_win(rows: int, small_loads: int, runs: int = 15) -> dict:
    """Bloom filter and short key against the same predicates without them (module docstring)."""
    from scripts.bench.load import stream_load_tables
    from server_process import ServerProcess

    rng = np.random.default_rng(11)
    strings = pa.array([f"s{x:012d}" for x in rng.integers(0, 10**12, rows)], pa.string())
    data = pa.table({"k": np.arange(rows, dtype=np.int64), "s": strings, "s2": strings,
                     "v": rng.random(rows)})
    probe = rows // 3 + 12345
    value = strings[probe].as_py()
    out: dict = {"rows": rows, "buckets": 8, "small_loads": small_loads}
    with tempfile.TemporaryDirectory() as tmp:
        srv = ServerProcess(Path(tmp) / "data").start()
        try:
            conn = srv.connect()
            cur = conn.cursor()
            cur.execute("CREATE DATABASE ib")
            cur.execute("USE ib")
            cur.execute(IX_DDL.format(name="ix", no_compaction="false"))
            cur.execute(IX_DDL.format(name="ix_small", no_compaction="true"))
            stream_load_tables("127.0.0.1", srv.http_port, "ib", {"ix": data})
            stream_load_tables("127.0.0.1", srv.http_port, "ib", {"ix_small": data},
                               batch_rows=-(-rows // small_loads))

            def timed(sql: str) -> float:
                cur.execute(sql)
                expected = cur.fetchall()
                assert len(expected) == 1, (sql, expected)
                times = []
                for _ in range(runs):
                    t0 = time.perf_counter()
                    cur.execute(sql)
                    cur.fetchall()
                    times.append((time.perf_counter() - t0) * 1000)
                return round(statistics.median(times), 2)

            for name in ("ix", "ix_small"):
                case = {
                    "bloom_ms": timed(f"SELECT k, v FROM {name} WHERE s = '{value}'"),
                    "no_bloom_ms": timed(f"SELECT k, v FROM {name} WHERE s2 = '{value}'"),
                    "short_key_ms": timed(f"SELECT k, v FROM {name} WHERE k = {probe}"),
                    "no_short_key_ms": timed(f"SELECT k, v FROM {name} WHERE k + 0 = {probe}"),
                }
                case["bloom_speedup"] = round(case["no_bloom_ms"] / case["bloom_ms"], 1)
                case["short_key_speedup"] = round(case["no_short_key_ms"] / case["short_key_ms"], 1)
                out[name] = case
            conn.close()
        finally:
            srv.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--wire-rows", type=int, default=1_000_000, help="0 skips the wire part")
    ap.add_argument("--index-rows", type=int, default=2_400_000, help="0 skips indexes_win")
    ap.add_argument("--small-loads", type=int, default=40)
    ap.add_argument("--only-indexes", action="store_true", help="run only indexes_win")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.only_indexes:
        args.rows = 0
        args.wire_rows = 0
    result: dict = {"rows": args.rows, "buckets": BUCKETS}
    if args.rows:
        in_process(args.rows, result)
    if args.wire_rows:
        result["wire"] = wire(args.wire_rows)
        print("through the wire:", json.dumps(result["wire"]))
    if args.index_rows:
        result["indexes_win"] = indexes_win(args.index_rows, args.small_loads)
        print("indexes must win:", json.dumps(result["indexes_win"]))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
