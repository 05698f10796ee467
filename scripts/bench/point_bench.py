"""Per-query fixed cost (issue 14 item 4): `SELECT 1` and a primary-key lookup, queries per
second with 1 and 4 clients, text and prepared protocols, minidoris vs MariaDB.

    python scripts/bench/point_bench.py [--sf 0.1] [--seconds 5] [--clients 1 4]
        [--port P]            a running minidoris (default: start one, SSB customer loaded)
        [--mariadb-port P]    a running MariaDB/MySQL (default: start `mariadbd` if installed)

The table is SSB's customer at --sf (ddl/ssb.sql: DUPLICATE KEY(c_custkey), 4 buckets; in
MariaDB the same columns with PRIMARY KEY(c_custkey), InnoDB). Each client is its own process
(mysql-connector-python, pure-Python protocol, so client overhead is in every figure equally)
looping over random keys for --seconds; every reply is checked to hold one row. Prepared:
`cursor(prepared=True)`, one COM_STMT_PREPARE, then COM_STMT_EXECUTE per lookup.
With the server's pid (started here, or --pid) the report adds the server's CPU time per
query, steadier than q/s on a busy machine. Timings on a shared machine are noisy: compare
figures of one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from scripts.bench.load import create_tables, stream_load_tables  # noqa: E402
from scripts.bench.runner import SuiteData  # noqa: E402
from server_process import ServerProcess, free_port  # noqa: E402
from scripts.bench.proc_cpu import cpu_seconds  # noqa: E402

DEFAULT_CACHE = Path.home() / ".cache" / "minidoris-bench"
CASES = ("select1", "pk_text", "pk_prepared")


def _client(args: tuple) -> float:
    """One client process: lookups for `seconds`; returns its rate (queries per second)."""
    import mysql.connector
    host, port, user, db, case, seconds, max_key, seed = args
    conn = mysql.connector.connect(host=host, port=port, user=user, database=db,
                                   use_pure=True, autocommit=True)
    rnd = random.Random(seed)
    cur = conn.cursor(prepared=(case == "pk_prepared"))
    done, began = 0, time.perf_counter()
    deadline = began + seconds
    while time.perf_counter() < deadline:
        if case == "select1":
            cur.execute("SELECT 1")
        elif case == "pk_prepared":
            cur.execute("SELECT * FROM customer WHERE c_custkey = %s", (rnd.randint(1, max_key),))
        else:
            cur.execute(f"SELECT * FROM customer WHERE c_custkey = {rnd.randint(1, max_key)}")
        if len(cur.fetchall()) != 1:
            raise RuntimeError(f"{case}: expected one row")
        done += 1
    rate = done / (time.perf_counter() - began)
    conn.close()
    return rate




def measure(host: str, port: int, user: str, db: str, case: str, clients: int, seconds: float,
            max_key: int, pid: int | None) -> tuple[float, float | None]:
    """(queries per second, server CPU milliseconds per query or None without a pid)."""
    with mp.get_context("spawn").Pool(clients) as pool:
        pool.map(time.sleep, [0.0] * clients)  # the workers are up before the clock starts
        began_cpu = cpu_seconds(pid)
        rates = pool.map(_client, [(host, port, user, db, case, seconds, max_key, i)
                                   for i in range(clients)])
        cpu = cpu_seconds(pid) - began_cpu
    qps = sum(rates)
    return qps, (cpu * 1e3 / (qps * seconds) if pid and qps else None)


class MariaDB:
    """A throwaway mariadbd on a free port (datadir in a temp dir), or None if not installed."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="point-bench-mariadb-"))
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @staticmethod
    def available() -> bool:
        return shutil.which("mariadbd") is not None and shutil.which("mariadb-install-db") is not None

    def start(self) -> MariaDB:
        data = self.dir / "data"
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=root",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True)
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={data}", "--user=root",
             f"--port={self.port}", "--bind-address=127.0.0.1",
             f"--socket={self.dir / 'sock'}", "--skip-grant-tables",
             "--innodb-buffer-pool-size=256M"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import pymysql
        for _ in range(100):
            try:
                pymysql.connect(host="127.0.0.1", port=self.port, user="root").close()
                return self
            except pymysql.err.OperationalError:
                time.sleep(0.2)
        raise RuntimeError("mariadbd did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)
        shutil.rmtree(self.dir, ignore_errors=True)


def load_mariadb(port: int, customer) -> None:
    import pymysql
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    cols = ", ".join(f"`{f.name}` {'INT' if str(f.type).startswith('int') else 'VARCHAR(64)'}"
                     for f in customer.schema)
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS bench")
        cur.execute("USE bench")
        cur.execute("DROP TABLE IF EXISTS customer")
        cur.execute(f"CREATE TABLE customer ({cols}, PRIMARY KEY (c_custkey)) ENGINE=InnoDB")
        rows = customer.to_pylist()
        names = ", ".join(customer.column_names)
        marks = ", ".join(["%s"] * len(customer.column_names))
        for start in range(0, len(rows), 5000):
            cur.executemany(f"INSERT INTO customer ({names}) VALUES ({marks})",
                            [tuple(r.values()) for r in rows[start:start + 5000]])
    conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", type=int, nargs="*", default=[1, 4])
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--port", type=int, default=None)
    ap.add_argument("--http-port", type=int, default=None)
    ap.add_argument("--pid", type=int, default=None, help="the running server's pid (its CPU)")
    ap.add_argument("--mariadb-port", type=int, default=None)
    ap.add_argument("--no-mariadb", action="store_true")
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    data = SuiteData("ssb", args.sf, args.cache_dir, log)
    customer = data.tables["customer"]
    max_key = customer.num_rows
    srv = None
    if args.port is None:
        srv = ServerProcess(Path(tempfile.mkdtemp(prefix="point-bench-")) / "data").start()
        port, http_port = srv.port, srv.http_port
    else:
        port, http_port = args.port, args.http_port
    engines = [("minidoris", "127.0.0.1", port, "point")]
    pids = {"minidoris": srv.proc.pid if srv else args.pid}
    maria = None
    report: dict = {"sf": args.sf, "seconds": args.seconds, "rows": max_key, "results": {}}
    try:
        conn = (srv.connect() if srv else __import__("pymysql").connect(
            host="127.0.0.1", port=port, user="root"))
        create_tables(conn, "ssb", "point")
        stream_load_tables("127.0.0.1", http_port, "point", {"customer": customer})
        conn.close()
        if not args.no_mariadb:
            if args.mariadb_port:
                engines.append(("mariadb", "127.0.0.1", args.mariadb_port, "bench"))
            elif MariaDB.available():
                maria = MariaDB().start()
                engines.append(("mariadb", "127.0.0.1", maria.port, "bench"))
                pids["mariadb"] = maria.proc.pid
            else:
                log("MariaDB is not installed (apt-get install mariadb-server): minidoris only")
            if len(engines) > 1:
                load_mariadb(engines[1][2], customer)
        for name, host, p, db in engines:
            for case in args.cases:
                for n in args.clients:
                    qps, cpu = measure(host, p, "root", db, case, n, args.seconds, max_key,
                                       pids.get(name))
                    report["results"][f"{name}/{case}/{n}"] = {"qps": qps, "server_cpu_ms": cpu}
                    log(f"{name:9} {case:12} {n} client(s): {qps:8,.0f} q/s" +
                        (f"  server CPU {cpu:.2f} ms/query" if cpu is not None else ""))
        if args.json:
            args.json.write_text(json.dumps(report, indent=1))
    finally:
        if srv:
            srv.stop()
        if maria:
            maria.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
