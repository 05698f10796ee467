"""SSB with and without rollups, and DuckDB, in one run (issue 11).

    python scripts/bench/rollup_bench.py --sf 1 [--runs 3] [--json out.json]

Steps: generate and load SSB (cached like run_bench.py, in its own server data dir), drop any
rollup left by an earlier run, time every query without rollups, add one rollup per query family
on lineorder's referenced columns (ROLLUPS below; each ADD ROLLUP is the asynchronous job, timed
until it finishes), time every query again, and DuckDB (threads=2) on the same Arrow tables.
Each timing is the median of --runs after a warm-up; results are compared with DuckDB's. Prints
per query: without, with, the index EXPLAIN chose, DuckDB, the speed-up and the ratio to DuckDB;
then the geometric means.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from scripts.bench.compare import compare_results  # noqa: E402
from scripts.bench.datagen.tpch import sf_label  # noqa: E402
from scripts.bench.run_bench import DEFAULT_CACHE, geomean, machine_description, timed  # noqa: E402
from scripts.bench.runner import SuiteData, run_duckdb, run_minidoris  # noqa: E402
from scripts.bench.schema import query_names, query_text  # noqa: E402
from server_process import ServerProcess  # noqa: E402

# One rollup per SSB query family: the lineorder columns the family reads. Q1's rollup leads
# with its range-filtered columns (a prefix-index match); the others keep lo_orderdate first as
# the base does: led by a join key instead, the runtime filter's IN set of thousands of keys
# becomes as many key ranges, and Q2.1 ran 10x slower at SF 0.1 (docs/performance.md).
ROLLUPS = {
    "r_q1": "lo_discount, lo_quantity, lo_orderdate, lo_extendedprice",
    "r_q2": "lo_orderdate, lo_partkey, lo_suppkey, lo_revenue",
    "r_q3": "lo_orderdate, lo_custkey, lo_suppkey, lo_revenue",
    "r_q4": "lo_orderdate, lo_custkey, lo_suppkey, lo_partkey, lo_revenue, lo_supplycost",
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def chosen_index(conn, sql: str) -> str:
    _, rows = run_minidoris(conn, "EXPLAIN " + sql)
    lines = [r[0] for r in rows]
    return next((ln.split("(", 1)[1].split(")")[0] for ln in lines
                 if "TABLE:" in ln and "lineorder(" in ln), "?")


def time_all(conn, names: list[str], runs: int, expected: dict) -> dict:
    out = {}
    for name in names:
        sql = query_text("ssb", name)
        _, actual = run_minidoris(conn, sql)  # warm-up, compared
        seconds, _ = timed(lambda: run_minidoris(conn, sql), runs)
        cols, rows = expected[name]
        out[name] = {"s": seconds, "match": compare_results(sql, cols, rows, actual) is None,
                     "index": chosen_index(conn, sql)}
        log(f"{name}: {seconds * 1000:.1f} ms ({out[name]['index']})")
    return out


def set_rollups(conn, database: str) -> float:
    """Add ROLLUPS to lineorder and wait for the jobs; the seconds they took."""
    with conn.cursor() as cur:
        cur.execute(f"USE `{database}`")
        began = time.perf_counter()
        cur.execute("ALTER TABLE lineorder ADD ROLLUP " +
                    ", ".join(f"{n} ({cols})" for n, cols in ROLLUPS.items()))
        cur.execute("ADMIN WAIT ALTER TABLE")
        return time.perf_counter() - began


def drop_rollups(conn) -> None:
    with conn.cursor() as cur:
        cur.execute("DESC lineorder ALL")
        existing = [r[0] for r in cur.fetchall() if r[0] and r[0] != "lineorder"]
        if existing:
            cur.execute(f"ALTER TABLE lineorder DROP ROLLUP {', '.join(existing)}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sf", type=float, default=1.0)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cache-dir", default=str(DEFAULT_CACHE))
    p.add_argument("--queries", nargs="*")
    p.add_argument("--json")
    args = p.parse_args(argv)
    cache = Path(args.cache_dir)
    database = f"ssb_sf{sf_label(args.sf).replace('.', '_')}"
    data = SuiteData("ssb", args.sf, cache, log=log)
    data_dir = cache / f"server-rollups-ssb-sf{sf_label(args.sf)}"
    server = ServerProcess(data_dir, log_path=data_dir.parent / f"{data_dir.name}.log")
    server.start(timeout=300)
    try:
        conn = server.connect(read_timeout=3600)
        data.ensure_loaded(conn, database, http=(server.host, server.http_port))
        conn.close()
        conn = server.connect(database, read_timeout=3600)
        names = args.queries or query_names("ssb")
        duck = data.duckdb(threads=2)
        expected, duck_s = {}, {}
        for name in names:
            sql = query_text("ssb", name)
            expected[name] = run_duckdb(duck, sql)
            duck_s[name], _ = timed(lambda: run_duckdb(duck, sql), args.runs)
        drop_rollups(conn)
        without = time_all(conn, names, args.runs, expected)
        build_s = set_rollups(conn, database)
        log(f"rollups built in {build_s:.1f} s")
        with_ = time_all(conn, names, args.runs, expected)
    finally:
        server.stop()
    rows = []
    print(f"SSB SF {args.sf}: minidoris without / with rollups (through the wire) vs DuckDB "
          f"(threads=2), median of {args.runs} runs after a warm-up")
    print(f"{'query':<6}{'without':>10}{'with':>10}{'index':>10}{'duck':>10}{'speedup':>9}"
          f"{'vs duck':>9}  match")
    for name in names:
        a, b, d = without[name]["s"], with_[name]["s"], duck_s[name]
        rows.append({"query": name, "without_s": a, "with_s": b, "duckdb_s": d,
                     "index": with_[name]["index"], "speedup": a / b, "ratio": b / d,
                     "match": without[name]["match"] and with_[name]["match"]})
        print(f"{name:<6}{a * 1000:10.1f}{b * 1000:10.1f}{with_[name]['index']:>10}"
              f"{d * 1000:10.1f}{a / b:9.2f}{b / d:9.2f}  {'yes' if rows[-1]['match'] else 'NO'}")
    report = {"sf": args.sf, "machine": machine_description(), "rollups": ROLLUPS,
              "rollup_build_s": build_s, "queries": rows,
              "geomean_without_ratio": geomean([r["without_s"] / r["duckdb_s"] for r in rows]),
              "geomean_with_ratio": geomean([r["ratio"] for r in rows]),
              "geomean_speedup": geomean([r["speedup"] for r in rows])}
    print(f"rollups built in {build_s:.1f} s; geomean vs DuckDB: without "
          f"{report['geomean_without_ratio']:.2f}, with {report['geomean_with_ratio']:.2f}; "
          f"geomean speed-up {report['geomean_speedup']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
