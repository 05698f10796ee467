"""Two trees of minidoris on the same benchmark data, each query run alternately on both.

For measuring a change on a machine that other work shares: each tree gets its own server on
its own copy of an already loaded data dir (a data dir has one server at a time), every query
runs once on each as a warm-up (results compared), then `--runs` times alternately (before,
after, after, before, ...), and the medians of wall time (execute + fetch through PyMySQL) and
of the server process's CPU time (`/proc/<pid>/stat`, Linux) are printed per query. CPU time
moves much less with the machine's load than wall time.

    cp -a ~/.cache/minidoris-bench/server-tpch-sf1 /tmp/before-tpch   # once per copy
    cp -a ~/.cache/minidoris-bench/server-tpch-sf1 /tmp/after-tpch
    git worktree add /tmp/before <commit>
    python scripts/bench/ab_bench.py --suite tpch --before /tmp/before /tmp/before-tpch \\
        --after . /tmp/after-tpch --runs 5 --json ab.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.server_process import free_port  # noqa: E402
from scripts.bench.proc_cpu import cpu_seconds  # noqa: E402

QUERIES = Path(__file__).resolve().parent / "queries"
DATABASES = {"tpch": "tpch_sf1", "ssb": "ssb_sf1"}


def _cpu_ms(pid: int) -> float:
    return cpu_seconds(pid) * 1000


def _start(tree: str, data_dir: str, port: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "server", "serve", "--port", str(port),
                             "--http-port", "0", "--data-dir", data_dir],
                            cwd=tree, stdout=subprocess.DEVNULL, stderr=log.open("w"))


def _connect(port: int, database: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return pymysql.connect(host="127.0.0.1", port=port, user="root", database=database)
        except pymysql.err.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", choices=sorted(DATABASES), required=True)
    p.add_argument("--before", nargs=2, metavar=("TREE", "DATA_DIR"), required=True)
    p.add_argument("--after", nargs=2, metavar=("TREE", "DATA_DIR"), required=True)
    p.add_argument("--queries", nargs="*", help="only these (e.g. q09 q21)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", help="also write the medians to this file")
    a = p.parse_args()
    database = DATABASES[a.suite]
    sides = {"before": a.before, "after": a.after}
    procs, conns = {}, {}
    try:
        for name, (tree, data_dir) in sides.items():
            port = free_port()
            procs[name] = _start(tree, data_dir, port, Path(data_dir).with_suffix(".ab.log"))
            conns[name] = _connect(port, database)
        names = a.queries or sorted(f.stem for f in (QUERIES / a.suite).glob("*.sql"))
        report = {}
        for q in names:
            sql = (QUERIES / a.suite / f"{q}.sql").read_text().strip().rstrip(";")
            rows = {}
            for name, conn in conns.items():
                with conn.cursor() as cur:
                    cur.execute(sql)
                    rows[name] = sorted(map(repr, cur.fetchall()))
            samples = {name: {"wall": [], "cpu": []} for name in sides}
            for i in range(a.runs):
                for name in (("before", "after") if i % 2 == 0 else ("after", "before")):
                    with conns[name].cursor() as cur:
                        cpu, wall = _cpu_ms(procs[name].pid), time.perf_counter()
                        cur.execute(sql)
                        cur.fetchall()
                        samples[name]["wall"].append((time.perf_counter() - wall) * 1000)
                        samples[name]["cpu"].append(_cpu_ms(procs[name].pid) - cpu)
            med = {n: {m: statistics.median(v) for m, v in s.items()} for n, s in samples.items()}
            med["same_result"] = rows["before"] == rows["after"]
            report[q] = med
            b, f = med["before"], med["after"]
            print(f"{q:5s} wall {b['wall']:8.0f} -> {f['wall']:8.0f}  cpu {b['cpu']:8.0f} -> "
                  f"{f['cpu']:8.0f}  x{b['cpu'] / max(f['cpu'], 1):5.2f}  "
                  f"{'same' if med['same_result'] else 'DIFFERENT RESULT'}", flush=True)
        if a.json:
            Path(a.json).write_text(json.dumps(report, indent=1))
        return 0 if all(r["same_result"] for r in report.values()) else 1
    finally:
        for proc in procs.values():
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    raise SystemExit(main())
