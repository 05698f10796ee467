"""Benchmark minidoris against DuckDB on SSB or TPC-H, end to end through the MySQL protocol.

    python scripts/bench/run_bench.py --suite ssb --sf 1 [--json out.json]
    python scripts/bench/run_bench.py --suite tpch --sf 1 --host 127.0.0.1 --port 9030

Steps: generate the data (cached under --cache-dir), start a minidoris server on a free port with
its data dir under the cache (or use --host/--port), load the suite through the wire unless the
database already holds it (so the load happens once per cache), load the same Arrow tables into
an in-memory DuckDB with `SET threads = 2`, then for every query: one warm-up run and three timed
runs in each engine (wall time of execute + fetchall, the median kept), and a comparison of the
results (`compare.py`). Prints one line per query and the geometric mean of the
minidoris/DuckDB ratios over the queries minidoris ran; --json writes everything, with the
machine's description, to a file.

Safety: a query that exceeds --timeout seconds, or makes the server started here grow past
--max-server-gb of resident memory, is recorded as failed and the server is restarted (a server
given by --host/--port is only ever connected to). --skip names queries not to run at all.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

import pymysql  # noqa: E402

from scripts.bench.compare import compare_results  # noqa: E402
from scripts.bench.datagen.tpch import sf_label  # noqa: E402
from scripts.bench.runner import SuiteData, run_duckdb, run_minidoris  # noqa: E402
from scripts.bench.schema import query_names, query_text  # noqa: E402
from server_process import ExternalServer, ServerProcess  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "minidoris-bench"


def machine_description() -> dict:
    import duckdb
    import numpy
    import pyarrow
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    mem_kb = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                  if ln.startswith("MemTotal"))
    return {"nproc": os.cpu_count(), "memory_gib": round(mem_kb / 2**20, 1), "cpu": cpu,
            "python": platform.python_version(), "pyarrow": pyarrow.__version__,
            "numpy": numpy.__version__, "duckdb": duckdb.__version__, "os": platform.platform()}


class MemoryGuard:
    """Kills the server started here when its resident memory passes a limit (a runaway plan
    must not take the machine down); `tripped` says whether it did."""

    def __init__(self, server: ServerProcess, limit_gb: float):
        self.server, self.limit_kb = server, int(limit_gb * 2**20)
        self.tripped, self.peak_kb, self._stop = False, 0, threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            proc = self.server.proc
            if proc is None:
                continue
            try:
                status = Path(f"/proc/{proc.pid}/status").read_text()
            except OSError:
                continue
            rss = next((int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("VmRSS")), 0)
            self.peak_kb = max(self.peak_kb, rss)
            if rss > self.limit_kb:
                self.tripped = True
                self.server.kill9()

    def stop(self) -> None:
        self._stop.set()


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def timed(fn, runs: int) -> tuple[float, object]:
    """Median wall time (s) of `runs` calls and the last result."""
    times, result = [], None
    for _ in range(runs):
        began = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times), result


class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.cache = Path(args.cache_dir)
        self.database = f"{args.suite}_sf{sf_label(args.sf).replace('.', '_')}"
        self.own: ServerProcess | None = None
        self.guard: MemoryGuard | None = None
        if args.port:
            self.server = ExternalServer(args.host, args.port)
        else:
            data_dir = self.cache / f"server-{args.suite}-sf{sf_label(args.sf)}"
            self.own = ServerProcess(data_dir, log_path=data_dir.parent / f"{data_dir.name}.log")
            self.server = self.own

    def log(self, msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    def start(self) -> None:
        if self.own is not None:
            self.own.start(timeout=120)
            self.guard = MemoryGuard(self.own, self.args.max_server_gb)

    def connect(self):
        return self.server.connect(self.database, read_timeout=self.args.timeout)

    def restart(self) -> None:
        if self.own is None:
            raise RuntimeError("the server at --host/--port stopped answering")
        self.log("restarting the server")
        self.own.stop()
        self.guard.tripped = False
        self.own.start(timeout=120)

    def run(self) -> dict:
        began = time.perf_counter()
        data = SuiteData(self.args.suite, self.args.sf, self.cache, log=self.log)
        self.log(f"data ready in {data.generate_seconds:.1f} s: {data.row_counts}")
        self.start()
        try:
            return self._run(data, began)
        finally:
            if self.guard:
                self.guard.stop()
            if self.own is not None:
                self.own.stop()

    def _run(self, data: SuiteData, began: float) -> dict:
        conn = self.server.connect(read_timeout=3600)
        load_began = time.perf_counter()
        http = None if self.args.insert else (self.server.host, self.args.http_port or self.server.http_port)
        loaded = data.ensure_loaded(conn, self.database, http=http)
        load_seconds = time.perf_counter() - load_began
        conn.close()
        duck = data.duckdb(threads=2)
        names = self.args.queries or query_names(self.args.suite)
        results = [self._one(name, duck) for name in names]
        ran = [r for r in results if r.get("ratio")]
        return {
            "suite": self.args.suite, "sf": self.args.sf, "machine": machine_description(),
            "rows": data.row_counts, "loaded_now": loaded,
            "load_seconds": round(load_seconds, 1) if loaded else None,
            "load": [vars(s) for s in data.load_stats],
            "queries": results, "geomean_ratio": geomean([r["ratio"] for r in ran]),
            "geomean_minidoris_s": geomean([r["minidoris_s"] for r in ran]),
            "geomean_duckdb_s": geomean([r["duckdb_s"] for r in ran]),
            "ran": len(ran), "matched": sum(r.get("match") is True for r in results),
            "total": len(results), "wall_seconds": round(time.perf_counter() - began, 1),
            "server_peak_rss_gib": round(self.guard.peak_kb / 2**20, 2) if self.guard else None,
        }

    def _one(self, name: str, duck) -> dict:
        sql = query_text(self.args.suite, name)
        columns, expected = run_duckdb(duck, sql)  # warm-up
        duck_s, _ = timed(lambda: run_duckdb(duck, sql), self.args.runs)
        out = {"query": name, "duckdb_s": duck_s, "rows": len(expected)}
        if name in self.args.skip:
            out["error"] = "skipped (--skip)"
            self.log(f"{name}: skipped")
            return out
        conn = None
        try:
            conn = self.connect()
            _, actual = run_minidoris(conn, sql)  # warm-up; its result is the one compared
            out["match"] = compare_results(sql, columns, expected, actual) is None
            out["minidoris_s"], _ = timed(lambda: run_minidoris(conn, sql), self.args.runs)
            out["ratio"] = out["minidoris_s"] / duck_s
        except pymysql.err.MySQLError as e:
            tripped = self.guard is not None and self.guard.tripped
            out["error"] = (f"server killed above {self.args.max_server_gb} GB RSS" if tripped
                            else str(e))
            if tripped or isinstance(e, pymysql.err.OperationalError) and e.args[0] in (2006, 2013):
                self.restart()
        finally:
            if conn is not None:
                try:
                    conn.close()
                except pymysql.err.MySQLError:
                    pass
        self.log(format_row(out))
        return out


def format_row(r: dict) -> str:
    md = f"{r['minidoris_s'] * 1000:10.1f}" if "minidoris_s" in r else f"{'-':>10}"
    ratio = f"{r['ratio']:8.2f}" if "ratio" in r else f"{'-':>8}"
    match = {True: "yes", False: "NO"}.get(r.get("match"), "-")
    tail = f"  {r['error'][:100]}" if "error" in r else ""
    return f"{r['query']:<6}{md}{r['duckdb_s'] * 1000:10.1f}{ratio}  {match:<5}{tail}"


def print_report(report: dict) -> None:
    print(f"{report['suite'].upper()} SF {report['sf']}: minidoris (through the wire) vs DuckDB "
          f"(threads=2), median of {report.get('runs', 3)} runs after a warm-up")
    print(f"{'query':<6}{'mini ms':>10}{'duck ms':>10}{'ratio':>8}  match")
    for r in report["queries"]:
        print(format_row(r))
    g = report["geomean_ratio"]
    if g is None:
        print("no query ran in minidoris")
    else:
        print(f"geometric mean of ratios: {g:.2f} over {report['ran']}/{report['total']} queries "
              f"(minidoris {report['geomean_minidoris_s'] * 1000:.1f} ms, DuckDB "
              f"{report['geomean_duckdb_s'] * 1000:.1f} ms); "
              f"{report['matched']}/{report['total']} results match DuckDB")
    if report["loaded_now"]:
        print(f"load through the wire: {report['load_seconds']} s for "
              f"{sum(report['rows'].values()):,} rows")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", choices=("ssb", "tpch"), required=True)
    p.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, help="use this running server instead of starting one")
    p.add_argument("--http-port", type=int, help="the running server's HTTP port (default 8030)")
    p.add_argument("--insert", action="store_true",
                   help="load with INSERT ... VALUES through the MySQL port instead of Stream Load")
    p.add_argument("--cache-dir", default=str(DEFAULT_CACHE),
                   help=f"generated data and the server's data dir (default {DEFAULT_CACHE})")
    p.add_argument("--runs", type=int, default=3, help="timed runs per query (default 3)")
    p.add_argument("--queries", nargs="*", help="only these queries (e.g. q01 q06)")
    p.add_argument("--skip", nargs="*", default=[], help="queries not to run in minidoris")
    p.add_argument("--timeout", type=int, default=600, help="seconds per minidoris query")
    p.add_argument("--max-server-gb", type=float, default=12.0,
                   help="kill and restart the server started here above this RSS (default 12)")
    p.add_argument("--json", help="also write the report to this JSON file")
    args = p.parse_args(argv)
    report = Bench(args).run()
    report["runs"] = args.runs
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
