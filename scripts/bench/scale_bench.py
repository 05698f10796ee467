"""SSB at a large scale factor through the wire, in bounded memory (issue 20 item 5).

    python3 -m scripts.bench.scale_bench --sf 10 [--runs 3] [--json out.json]

Steps, each in bounded memory on the client side (nothing holds LINEORDER whole):

1. Data: `datagen/ssb.py` at --sf (cached under --cache-dir; LINEORDER derived in chunks).
2. DuckDB first, alone on the machine: a DuckDB database file under --work built from the
   Parquet files (`read_parquet`), `SET threads = 2`; every query run once as a warm-up and
   --runs times (median kept); its results are kept for the comparison. DuckDB is closed before
   the server starts, so the two never compete for memory or CPU.
3. CSV: LINEORDER written from Parquet batches into files of --rows-per-load rows (`|`-separated,
   the way a user prepares Stream Load files), before any load is timed.
4. Server: a fresh server of this tree (default conf unless --conf: `mem_limit` is Doris's 90%
   of the machine), the dimension tables of `ddl/ssb.sql` and LINEORDER of Doris's tooling DDL
   (`ddl/ssb_doris_lineorder.sql`: 7 partitions x 48 buckets). The dimensions are Stream Loaded
   (small), then each LINEORDER file as one Stream Load read from disk as it is sent. Load
   rows/s = LINEORDER rows / wall time from the first PUT to the last reply.
5. Compaction is left to settle (rowsets per tablet unchanged for --settle-quiet seconds, at
   most --settle-max), then every query: a warm-up, whose result is compared with DuckDB's
   (`compare.py`), then --runs timed runs (median kept).

Memory: the server's peak resident set is read from `VmHWM` after each phase (load, settle,
queries), the peak being reset between phases (`/proc/<pid>/clear_refs` = 5); a sampler also
records the highest VmRSS seen every 0.2 s. The 1-minute load average is printed with each phase
(the machine is shared). The CSV files and the server's data directory are deleted at the end
unless --keep.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import math
import os
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

import duckdb
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from scripts.bench.compare import compare_results  # noqa: E402
from scripts.bench.datagen.ssb import SSB_TABLES, generate_ssb  # noqa: E402
from scripts.bench.datagen.tpch import sf_label  # noqa: E402
from scripts.bench.load import stream_load_parquet  # noqa: E402
from scripts.bench.proc_cpu import cpu_seconds  # noqa: E402
from scripts.bench.runner import run_duckdb, run_minidoris  # noqa: E402
from scripts.bench.schema import DDL_DIR, ddl_statements, query_names, query_text  # noqa: E402
from server_process import ServerProcess  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "minidoris-bench"
DIMENSIONS = ("customer", "supplier", "part", "dates")


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} [load avg {os.getloadavg()[0]:.1f}] {msg}",
          file=sys.stderr, flush=True)


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


class RssSampler:
    """The highest VmRSS of a process seen every 0.2 s, and its kernel-kept peak (VmHWM) per
    phase: `phase()` returns both for the phase that ends and resets them for the next."""

    def __init__(self, pid: int):
        self.pid, self.peak_kb, self._stop = pid, 0, threading.Event()
        self.reset()
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            try:
                self.peak_kb = max(self.peak_kb, status_kb(self.pid, "VmRSS"))
            except OSError:
                return

    def reset(self) -> None:
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
        self.peak_kb = status_kb(self.pid, "VmRSS")

    def phase(self) -> dict:
        out = {"vmhwm_mib": status_kb(self.pid, "VmHWM") >> 10,
               "sampled_peak_mib": self.peak_kb >> 10,
               "rss_end_mib": status_kb(self.pid, "VmRSS") >> 10}
        self.reset()
        return out

    def stop(self) -> None:
        self._stop.set()


def timed_runs(fn, runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times), times


def duckdb_phase(data: Path, work: Path, names: list[str], runs: int) -> dict:
    """Every query in DuckDB (threads = 2) over a database file built from the Parquet files."""
    path = work / "duck.duckdb"
    path.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    con.execute("SET threads = 2")
    began = time.perf_counter()
    for table in SSB_TABLES:
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet('{data / table}.parquet')")
    log(f"duckdb: tables built in {time.perf_counter() - began:.1f} s")
    out = {}
    for name in names:
        sql = query_text("ssb", name)
        columns, rows = run_duckdb(con, sql)  # warm-up
        median, times = timed_runs(lambda: run_duckdb(con, sql), runs)
        out[name] = {"columns": columns, "rows": rows, "s": median, "times": times}
        log(f"duckdb {name}: {median * 1000:.1f} ms")
    con.close()
    path.unlink(missing_ok=True)
    return out


def write_csv_files(lineorder: Path, out: Path, rows_per_file: int) -> list[tuple[Path, int]]:
    """LINEORDER as `|`-separated files of about `rows_per_file` rows, as many as that
    needs and of even sizes (by whole batches of 100,000 rows), from Parquet batches."""
    out.mkdir(parents=True, exist_ok=True)
    source = pq.ParquetFile(lineorder)
    total = source.metadata.num_rows
    rows_per_file = math.ceil(total / max(1, round(total / rows_per_file)))
    opts = pacsv.WriteOptions(include_header=False, delimiter="|", quoting_style="none")
    files, writer, rows = [], None, 0
    for batch in source.iter_batches(batch_size=100_000):
        if writer is None:
            files.append((out / f"lineorder-{len(files):03d}.csv", 0))
            writer = pacsv.CSVWriter(str(files[-1][0]), source.schema_arrow, write_options=opts)
        writer.write_batch(batch)
        rows += batch.num_rows
        if rows >= rows_per_file:
            writer.close()
            files[-1], writer, rows = (files[-1][0], rows), None, 0
    if writer is not None:
        writer.close()
        files[-1] = (files[-1][0], rows)
    return files


def put_file(host: str, port: int, database: str, table: str, path: Path, columns: list[str],
             label: str) -> dict:
    """One Stream Load of a CSV file, streamed from disk with its Content-Length (as curl -T)."""
    web = http.client.HTTPConnection(host, port, timeout=7200, blocksize=1 << 20)
    auth = "Basic " + base64.b64encode(b"root:").decode()
    with open(path, "rb") as body:
        web.request("PUT", f"/api/{database}/{table}/_stream_load", body=body,
                    headers={"Authorization": auth, "Content-Length": str(path.stat().st_size),
                             "label": label, "column_separator": "|",
                             "columns": ", ".join(columns)})
        reply = json.loads(web.getresponse().read())
    web.close()
    return reply


def create_tables(conn, database: str) -> None:
    doris_lineorder = (DDL_DIR / "ssb_doris_lineorder.sql").read_text()
    lines = [ln for ln in doris_lineorder.splitlines() if not ln.lstrip().startswith("--")]
    statements = ["\n".join(lines).strip().rstrip(";")]
    statements += [s for s in ddl_statements("ssb") if "TABLE lineorder" not in s]
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{database}`")
        cur.execute(f"USE `{database}`")
        for stmt in statements:
            cur.execute(stmt)


def rowsets_per_tablet(conn) -> dict:
    with conn.cursor() as cur:
        cur.execute("SHOW TABLETS FROM lineorder")
        names = [d[0] for d in cur.description]
        counts = [int(r[names.index("VersionCount")]) for r in cur.fetchall()]
    return {"tablets": len(counts), "total": sum(counts), "min": min(counts), "max": max(counts),
            "mean": round(sum(counts) / len(counts), 2)}


def settle(conn, quiet: float, limit: float) -> tuple[float, dict]:
    """Wait until no tablet's rowset count has changed for `quiet` seconds (at most `limit`)."""
    began = last_change = time.perf_counter()
    state = rowsets_per_tablet(conn)
    while time.perf_counter() - last_change < quiet and time.perf_counter() - began < limit:
        time.sleep(5)
        now = rowsets_per_tablet(conn)
        if now != state:
            state, last_change = now, time.perf_counter()
            log(f"compaction: rowsets per tablet {now}")
    return time.perf_counter() - began, state


class ScaleBench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.cache = Path(args.cache_dir)
        self.work = Path(args.work or self.cache / f"scale-ssb-sf{sf_label(args.sf)}")
        self.database = "ssb"
        self.report: dict = {"sf": args.sf, "runs": args.runs, "conf": args.conf}

    def run(self) -> dict:
        args, report = self.args, self.report
        began = time.perf_counter()
        data = generate_ssb(args.sf, self.cache, log=log)
        report["generate_s"] = round(time.perf_counter() - began, 1)
        report["rows"] = {t: pq.ParquetFile(data / f"{t}.parquet").metadata.num_rows
                          for t in SSB_TABLES}
        log(f"data at {data}: {report['rows']}")
        if self.work.exists():
            shutil.rmtree(self.work)
        self.work.mkdir(parents=True)
        names = args.queries or query_names("ssb")
        duck = duckdb_phase(data, self.work, names, args.runs)
        files = []
        if not args.reuse_data:
            began = time.perf_counter()
            files = write_csv_files(data / "lineorder.parquet", self.work / "csv",
                                    args.rows_per_load)
            report["csv"] = {"files": len(files), "seconds": round(time.perf_counter() - began, 1),
                             "gib": round(sum(f.stat().st_size for f, _ in files) / 2**30, 2)}
            log(f"csv: {report['csv']}")
        server = self._server()
        try:
            server.start(timeout=120)
            self._server_phase(server, data, files, names, duck)
        finally:
            server.stop(timeout=120)
            if not args.keep and not args.reuse_data:
                shutil.rmtree(self.work / "csv", ignore_errors=True)
                shutil.rmtree(self.work / "data", ignore_errors=True)
        report["wall_s"] = round(time.perf_counter() - began, 1)
        return report

    def _server(self) -> ServerProcess:
        extra = ()
        if self.args.conf:
            conf = self.work / "bench.conf"
            conf.write_text("".join(f"{c.replace('=', ' = ', 1)}\n" for c in self.args.conf))
            extra = ("--config", str(conf))
        data_dir = Path(self.args.reuse_data) if self.args.reuse_data else self.work / "data"
        return ServerProcess(data_dir, log_path=self.work / "server.log", extra_args=extra)

    def _server_phase(self, server: ServerProcess, data: Path, files, names, duck) -> None:
        args, report = self.args, self.report
        sampler = RssSampler(server.proc.pid)
        report["rss_idle_mib"] = status_kb(server.proc.pid, "VmRSS") >> 10
        conn = server.connect(read_timeout=args.timeout)
        if args.reuse_data:
            self._check_loaded(conn)
        else:
            self._load(conn, server, sampler, data, files)
        cpu0 = cpu_seconds(server.proc.pid)
        settle_s, rowsets = settle(conn, args.settle_quiet, args.settle_max)
        report["settle"] = {"seconds": round(settle_s, 1), "rowsets": rowsets,
                            "server_cpu_s": round(cpu_seconds(server.proc.pid) - cpu0, 1),
                            "memory": sampler.phase(), "load_avg": os.getloadavg()}
        log(f"settled: {report['settle']}")
        report["queries"] = [self._query(conn, name, duck[name]) for name in names]
        report["query_memory"] = sampler.phase()
        report["query_load_avg"] = os.getloadavg()
        sampler.stop()
        conn.close()

    def _check_loaded(self, conn) -> None:
        """--reuse-data: the data dir must hold every table with the generated row count."""
        with conn.cursor() as cur:
            cur.execute(f"USE `{self.database}`")
            for table, rows in self.report["rows"].items():
                cur.execute(f"SELECT count(*) FROM {table}")
                counted = cur.fetchone()[0]
                if counted != rows:
                    raise RuntimeError(f"{table} holds {counted} rows, {rows} were generated")
        log(f"reusing {self.args.reuse_data}: every table holds its rows")

    def _load(self, conn, server: ServerProcess, sampler: RssSampler, data: Path, files) -> None:
        args, report = self.args, self.report
        create_tables(conn, self.database)
        sampler.reset()
        began = time.perf_counter()
        for table in DIMENSIONS:
            stream_load_parquet(server.host, server.http_port, self.database, table,
                                data / f"{table}.parquet")
        report["dimensions_load_s"] = round(time.perf_counter() - began, 1)
        columns = pq.ParquetFile(data / "lineorder.parquet").schema_arrow.names
        cpu0, began, loads = cpu_seconds(server.proc.pid), time.perf_counter(), []
        for i, (path, rows) in enumerate(files):
            t0 = time.perf_counter()
            reply = put_file(server.host, server.http_port, self.database, "lineorder", path,
                             columns, f"lineorder_{i}")
            if reply.get("Status") != "Success" or reply.get("NumberLoadedRows") != rows:
                raise RuntimeError(f"load {i} of lineorder failed: {reply}")
            loads.append(round(time.perf_counter() - t0, 1))
            log(f"load {i + 1}/{len(files)}: {rows:,} rows in {loads[-1]} s "
                f"(RSS now {status_kb(server.proc.pid, 'VmRSS') >> 10} MiB)")
        seconds = time.perf_counter() - began
        lo_rows = report["rows"]["lineorder"]
        report["load"] = {"lineorder_rows": lo_rows, "loads": len(files), "seconds": round(seconds, 1),
                          "rows_per_s": round(lo_rows / seconds),
                          "server_cpu_s": round(cpu_seconds(server.proc.pid) - cpu0, 1),
                          "each_s": loads, "load_avg": os.getloadavg(),
                          "rowsets": rowsets_per_tablet(conn), "memory": sampler.phase()}
        log(f"load: {report['load']}")
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM lineorder")
            counted = cur.fetchone()[0]
        if counted != lo_rows:
            raise RuntimeError(f"lineorder holds {counted} rows, {lo_rows} were loaded")

    def _query(self, conn, name: str, expected: dict) -> dict:
        sql = query_text("ssb", name)
        began = time.perf_counter()
        _, actual = run_minidoris(conn, sql)  # warm-up; its result is the one compared
        warm = time.perf_counter() - began
        problem = compare_results(sql, expected["columns"], expected["rows"], actual)
        median, times = timed_runs(lambda: run_minidoris(conn, sql), self.args.runs)
        out = {"query": name, "minidoris_s": median, "times": times, "warmup_s": warm,
               "duckdb_s": expected["s"], "ratio": median / expected["s"],
               "match": problem is None, "rows": len(actual), "load_avg": os.getloadavg()[0]}
        if problem:
            out["problem"] = str(problem)[:500]
        log(f"{name}: {median * 1000:.1f} ms, DuckDB {expected['s'] * 1000:.1f} ms, "
            f"ratio {out['ratio']:.2f}, {'match' if problem is None else 'MISMATCH ' + str(problem)[:200]}")
        return out


def print_report(r: dict) -> None:
    if "load" in r:
        print(f"SSB SF {r['sf']:g}: lineorder {r['rows']['lineorder']:,} rows in "
              f"{r['load']['loads']} Stream Loads, {r['load']['seconds']} s = "
              f"{r['load']['rows_per_s']:,} rows/s (server CPU {r['load']['server_cpu_s']} s, "
              f"load avg {r['load']['load_avg'][0]:.1f})")
        print(f"rowsets per tablet after load {r['load']['rowsets']}")
        print(f"server peak RSS during the load: {r['load']['memory']}")
    else:
        print(f"SSB SF {r['sf']:g}: queries on the data dir of an earlier run ({r['conf']})")
    print(f"after {r['settle']['seconds']} s of compaction: rowsets per tablet "
          f"{r['settle']['rowsets']}, peak RSS {r['settle']['memory']}")
    print(f"server peak RSS during the queries: {r['query_memory']}")
    print(f"{'query':<6}{'mini ms':>10}{'duck ms':>10}{'ratio':>8}  match")
    for q in r["queries"]:
        print(f"{q['query']:<6}{q['minidoris_s'] * 1000:10.1f}{q['duckdb_s'] * 1000:10.1f}"
              f"{q['ratio']:8.2f}  {'yes' if q['match'] else 'NO'}")
    ratios = [q["ratio"] for q in r["queries"]]
    geo = statistics.geometric_mean(ratios)
    print(f"geomean ratio {geo:.2f}; {sum(q['match'] for q in r['queries'])}/{len(ratios)} match")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sf", type=float, required=True)
    p.add_argument("--runs", type=int, default=3, help="timed runs per query after a warm-up")
    p.add_argument("--queries", nargs="*", help="only these queries (q11 ... q43)")
    p.add_argument("--rows-per-load", type=int, default=6_000_000,
                   help="LINEORDER rows per Stream Load (default 6,000,000: SF 1 per load)")
    p.add_argument("--conf", action="append", default=[], help="server setting key=value")
    p.add_argument("--cache-dir", default=str(DEFAULT_CACHE))
    p.add_argument("--work", help="CSV files, the server's data dir and log "
                   "(default <cache>/scale-ssb-sf<SF>)")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per statement")
    p.add_argument("--settle-quiet", type=float, default=60)
    p.add_argument("--settle-max", type=float, default=1800)
    p.add_argument("--keep", action="store_true", help="keep the CSV files and the data dir")
    p.add_argument("--reuse-data", help="run the queries on this data dir of an earlier run "
                   "(--keep) instead of loading: no CSV, no load figures")
    p.add_argument("--json", help="also write the report to this file")
    args = p.parse_args(argv)
    report = ScaleBench(args).run()
    report["geomean_ratio"] = statistics.geometric_mean([q["ratio"] for q in report["queries"]])
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str) + "\n")
    return 0 if all(q["match"] for q in report["queries"]) else 1


if __name__ == "__main__":
    sys.exit(main())
