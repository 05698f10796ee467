"""SSB on two lineorder layouts (issue 14 item 2): does the tablet count matter?

    python scripts/bench/layout_bench.py [--sf 0.1] [--runs 5] [--data-dir DIR] [--keep]

One server (started here, data dir under --cache-dir, reused when already loaded), the SSB
tables twice: database `l28` with ddl/ssb.sql (lineorder 7 partitions x 4 buckets = 28
tablets) and `l336` with Doris's tooling DDL for lineorder (ddl/ssb_doris_lineorder.sql, 7 x 48
= 336 tablets), the same rows. Each query runs once per layout as a warm-up (its result checked
against DuckDB), then --runs times alternating between the layouts; the report gives the
medians, the geomean ratio 336/28 and each layout's geomean ratio to DuckDB (2 threads).
Timings on a shared machine are noisy: compare ratios taken in one run. `--port` (and
`--http-port` to load) uses a server started by hand, e.g. under py-spy.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from scripts.bench.compare import compare_results  # noqa: E402
from scripts.bench.load import stream_load_tables  # noqa: E402
from scripts.bench.runner import SuiteData, run_duckdb, run_minidoris  # noqa: E402
from scripts.bench.schema import DDL_DIR, ddl_statements, query_names, query_text  # noqa: E402
from server_process import ExternalServer, ServerProcess  # noqa: E402

DEFAULT_CACHE = Path.home() / ".cache" / "minidoris-bench"
LAYOUTS = ("l28", "l336")


def layout_ddl(database: str) -> list[str]:
    """The SSB DDL of one layout: ddl/ssb.sql, with Doris's tooling lineorder for l336."""
    stmts = ddl_statements("ssb")
    if database == "l28":
        return stmts
    text = (DDL_DIR / "ssb_doris_lineorder.sql").read_text()
    lineorder = "\n".join(ln for ln in text.splitlines() if not ln.startswith("--"))
    return [s for s in stmts if "lineorder" not in s.split("(")[0]] + [lineorder.strip().rstrip(";")]


def ensure_layout(conn, srv, data: SuiteData, database: str, log) -> None:
    if data.loaded_counts(conn, database) == data.row_counts:
        log(f"{database}: already loaded")
        return
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {database}")
        cur.execute(f"CREATE DATABASE {database}")
        cur.execute(f"USE {database}")
        for stmt in layout_ddl(database):
            cur.execute(stmt)
    stream_load_tables(srv.host, srv.http_port, database, data.tables, log=log)


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def once(fn) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--queries", nargs="*", default=None)
    ap.add_argument("--port", type=int, default=None, help="use this running server")
    ap.add_argument("--http-port", type=int, default=None, help="its HTTP port (for loading)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    data = SuiteData("ssb", args.sf, args.cache_dir, log)
    duck = data.duckdb(threads=2)
    data_dir = args.cache_dir / f"server-layouts-sf{args.sf:g}"
    if args.port:
        srv = ExternalServer("127.0.0.1", args.port)
        srv.http_port = args.http_port
    else:
        srv = ServerProcess(data_dir, log_path=data_dir.parent / f"{data_dir.name}.log").start()
    names = args.queries or query_names("ssb")
    report: dict = {"sf": args.sf, "runs": args.runs, "queries": {}}
    try:
        conn = srv.connect()
        for db in LAYOUTS:
            ensure_layout(conn, srv, data, db, log)
        conns = {db: srv.connect(db) for db in LAYOUTS}
        for name in names:
            sql = query_text("ssb", name)
            _, expected = run_duckdb(duck, sql)
            duck_s = statistics.median(once(lambda: run_duckdb(duck, sql)) for _ in range(args.runs))
            row = {"duckdb": duck_s}
            for db in LAYOUTS:
                cols, rows = run_minidoris(conns[db], sql)
                problem = compare_results(sql, cols, expected, rows)
                if problem:
                    raise SystemExit(f"{name} on {db}: wrong result: {problem}")
            times = {db: [] for db in LAYOUTS}
            for _ in range(args.runs):
                for db in LAYOUTS:
                    times[db].append(once(lambda: run_minidoris(conns[db], sql)))
            row.update({db: statistics.median(times[db]) for db in LAYOUTS})
            report["queries"][name] = row
            log(f"{name}: l28 {row['l28'] * 1e3:7.1f} ms  l336 {row['l336'] * 1e3:7.1f} ms  "
                f"ratio {row['l336'] / row['l28']:.2f}  duckdb {duck_s * 1e3:6.1f} ms")
        q = report["queries"].values()
        report["geomean_ms"] = {k: geomean(r[k] for r in q) * 1e3 for k in ("l28", "l336", "duckdb")}
        report["ratio_336_28"] = geomean(r["l336"] / r["l28"] for r in q)
        report["ratio_duckdb"] = {db: geomean(r[db] / r["duckdb"] for r in q) for db in LAYOUTS}
        g = report["geomean_ms"]
        log(f"geomean: l28 {g['l28']:.1f} ms, l336 {g['l336']:.1f} ms, duckdb {g['duckdb']:.1f} ms; "
            f"336/28 = {report['ratio_336_28']:.2f}x; vs DuckDB: l28 "
            f"{report['ratio_duckdb']['l28']:.2f}x, l336 {report['ratio_duckdb']['l336']:.2f}x")
        if args.json:
            args.json.write_text(json.dumps(report, indent=1))
    finally:
        if not args.port:
            srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
