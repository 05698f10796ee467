"""Result encoding: how fast a large result reaches real clients, minidoris against MariaDB.

Starts a minidoris server and a throwaway MariaDB server (mariadbd with its own datadir made by
mariadb-install-db, TCP on a free port, socket in /tmp), loads the same table into both

    t (a INT, b BIGINT, c VARCHAR(32), d DECIMAL(15,2)), --rows rows (1M by default)

with INSERT ... VALUES batches of 10k rows, and measures, median of --runs runs:

- the `mysql` CLI in batch mode: `mysql -N -B -e 'SELECT a, b, c, d FROM t' > /dev/null`, wall
  time -> rows/s, for each server;
- PyMySQL `fetchall()` rows/s for each server, and the ratio minidoris / MariaDB;
- the minidoris server's CPU time (user + system) per row during the CLI query;
- that both servers print the same rows (the CLI's output lines, sorted, hashed);
- streaming in minidoris: with an unbuffered cursor (PyMySQL SSCursor) the time until the first
  row arrives against the time of the whole result, and the server's peak RSS growth while it
  sends the result (the server is restarted after the load so the load's peak does not count).

    python scripts/bench/result_bench.py [--rows 1000000] [--runs 3] [--json out.json]
    python scripts/bench/result_bench.py --doris-port P [--doris-pid PID] --mariadb-port Q

(the second form measures servers already running with bench.t loaded). The runs interleave the
two servers, so that other work on the machine slows both alike.

Needs the `mysql` client and MariaDB (`apt-get install -y mariadb-server`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import pymysql
import pymysql.cursors

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.server_process import ServerProcess, free_port  # noqa: E402
from scripts.bench.proc_cpu import cpu_seconds  # noqa: E402

QUERY = "SELECT a, b, c, d FROM t"
BATCH = 10_000
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def rows(n: int):
    """The table's rows, deterministic: INT, BIGINT, VARCHAR(1..32), DECIMAL(15,2)."""
    for i in range(n):
        c = f"{WORDS[i % 8]}-{i * 7919 % 1000003}"[: 1 + i % 32]
        yield i, i * 1_000_003 - 500_000_000_000, c, Decimal(i * 37 % 100_000_000) / 100


def load(conn, ddl: str, n: int) -> float:
    started = time.perf_counter()
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS t")
        cur.execute(ddl)
        batch = []
        for r in rows(n):
            batch.append("(%d,%d,'%s',%s)" % r)
            if len(batch) == BATCH:
                cur.execute("INSERT INTO t VALUES " + ",".join(batch))
                batch = []
        if batch:
            cur.execute("INSERT INTO t VALUES " + ",".join(batch))
        cur.execute("SELECT count(*) FROM t")
        assert cur.fetchone()[0] == n, "load lost rows"
    return time.perf_counter() - started


DORIS_DDL = ("CREATE TABLE t (a INT, b BIGINT, c VARCHAR(32), d DECIMAL(15,2)) "
             "DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 8 "
             "PROPERTIES ('replication_num' = '1')")
MARIADB_DDL = "CREATE TABLE t (a INT, b BIGINT, c VARCHAR(32), d DECIMAL(15,2)) ENGINE=InnoDB"


class MariaDB:
    """A throwaway mariadbd: own datadir, TCP on a free port, no grant tables."""

    def __init__(self, root: Path):
        self.root, self.port = root, free_port()
        self.datadir, self.socket = root / "mariadb-data", f"/tmp/result_bench_{os.getpid()}.sock"
        self.proc = None

    def start(self) -> "MariaDB":
        mariadbd = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
        if not Path(mariadbd).exists():
            sys.exit("mariadbd not found: apt-get install -y mariadb-server")
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.datadir}",
                        "--user=root", "--auth-root-authentication-method=normal"],
                       check=True, capture_output=True)
        log = open(self.root / "mariadb.log", "wb")
        self.proc = subprocess.Popen(
            [mariadbd, "--no-defaults", f"--datadir={self.datadir}", "--user=root",
             f"--port={self.port}", "--bind-address=127.0.0.1", f"--socket={self.socket}",
             "--skip-grant-tables", "--skip-log-bin", "--innodb-buffer-pool-size=512M",
             "--innodb-flush-log-at-trx-commit=0", f"--pid-file={self.root / 'mariadb.pid'}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                self.connect().close()
                return self
            except pymysql.err.MySQLError:
                if self.proc.poll() is not None:
                    sys.exit(f"mariadbd exited; see {self.root / 'mariadb.log'}")
                time.sleep(0.2)
        sys.exit("mariadbd did not start in 60 s")

    def connect(self, **kw):
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", autocommit=True, **kw)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def cli_seconds(port: int, db: str) -> float:
    cmd = ["mysql", "-h127.0.0.1", f"-P{port}", "-uroot", "-N", "-B", db, "-e", QUERY]
    started = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def cli_digest(port: int, db: str) -> str:
    """sha256 of the CLI's output lines, sorted (the servers return rows in different orders)."""
    cmd = ["mysql", "-h127.0.0.1", f"-P{port}", "-uroot", "-N", "-B", db, "-e", QUERY]
    lines = subprocess.run(cmd, capture_output=True, check=True).stdout.splitlines()
    return hashlib.sha256(b"\n".join(sorted(lines))).hexdigest()


def pymysql_seconds(connect, db: str, n: int) -> float:
    conn = connect(database=db)
    try:
        with conn.cursor() as cur:
            started = time.perf_counter()
            cur.execute(QUERY)
            got = len(cur.fetchall())
            elapsed = time.perf_counter() - started
    finally:
        conn.close()
    assert got == n, f"{got} rows, expected {n}"
    return elapsed


def streaming(connect, db: str) -> tuple[float, float]:
    """(seconds to the first row, seconds to the last) with an unbuffered cursor."""
    conn = connect(database=db, cursorclass=pymysql.cursors.SSCursor)
    try:
        with conn.cursor() as cur:
            started = time.perf_counter()
            cur.execute(QUERY)
            cur.fetchone()
            first = time.perf_counter() - started
            for _ in cur.fetchall_unbuffered():
                pass
            return first, time.perf_counter() - started
    finally:
        conn.close()


def rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0




def reset_peak(pid: int) -> bool:
    try:  # Linux >= 4.0: writing 5 resets VmHWM to the current RSS
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


class Running:
    """A server someone else started, with bench.t loaded (--doris-port / --mariadb-port)."""

    def __init__(self, port: int, pid: int | None = None):
        self.port, self.pid = port, pid

    def connect(self, **kw):
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", autocommit=True, **kw)


def start_doris(tmp: Path, n: int, out: dict) -> ServerProcess:
    doris = ServerProcess(tmp / "doris")
    doris.start()
    with doris.connect() as conn:
        conn.cursor().execute("CREATE DATABASE bench")
    with doris.connect("bench") as conn:
        out["minidoris_load_s"] = round(load(conn, DORIS_DDL, n), 2)
    doris.restart()  # the load's memory peak must not hide the result's
    doris.pid = doris.proc.pid
    return doris


def start_mariadb(tmp: Path, n: int, out: dict) -> MariaDB:
    maria = MariaDB(tmp).start()
    with maria.connect() as conn:
        conn.cursor().execute("CREATE DATABASE bench")
    with maria.connect(database="bench") as conn:
        out["mariadb_load_s"] = round(load(conn, MARIADB_DDL, n), 2)
    return maria


def measure(doris, maria, n: int, runs: int, out: dict) -> None:
    """Runs interleaved (minidoris, then MariaDB, in each round) so that load from other work
    on the machine hits both alike; the PyMySQL ratio is the median of the per-round ratios."""
    pymysql_seconds(doris.connect, "bench", n)  # warm caches
    if maria:
        pymysql_seconds(maria.connect, "bench", n)
    pid = getattr(doris, "pid", None)
    rss_before = rss_kib(pid, "VmRSS") if pid else 0
    peak_reset = bool(pid) and reset_peak(pid)
    rounds = []
    for _ in range(runs):
        r = {"stream": streaming(doris.connect, "bench")}
        cpu = cpu_seconds(pid)
        r["d_cli"] = cli_seconds(doris.port, "bench")
        r["d_cpu"] = cpu_seconds(pid) - cpu
        r["d_py"] = pymysql_seconds(doris.connect, "bench", n)
        if maria:
            r["m_cli"] = cli_seconds(maria.port, "bench")
            r["m_py"] = pymysql_seconds(maria.connect, "bench", n)
        rounds.append(r)
    med = lambda key: statistics.median(r[key] for r in rounds)  # noqa: E731
    out["minidoris_first_row_s"] = round(statistics.median(r["stream"][0] for r in rounds), 4)
    out["minidoris_unbuffered_total_s"] = round(statistics.median(r["stream"][1] for r in rounds), 3)
    out["minidoris_rss_growth_mib"] = round((rss_kib(pid, "VmHWM") - rss_before) / 1024, 1) \
        if peak_reset else None
    out["minidoris_cli_rows_s"] = round(n / med("d_cli"))
    out["minidoris_pymysql_rows_s"] = round(n / med("d_py"))
    if pid:
        out["minidoris_server_cpu_us_per_row"] = round(med("d_cpu") / n * 1e6, 3)
    if maria:
        out["mariadb_cli_rows_s"] = round(n / med("m_cli"))
        out["mariadb_pymysql_rows_s"] = round(n / med("m_py"))
        out["pymysql_ratio"] = round(statistics.median(r["m_py"] / r["d_py"] for r in rounds), 3)
        out["same_output"] = cli_digest(doris.port, "bench") == cli_digest(maria.port, "bench")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--skip-mariadb", action="store_true")
    ap.add_argument("--doris-port", type=int, help="use this running minidoris (bench.t loaded)")
    ap.add_argument("--doris-pid", type=int, help="its pid, for the RSS figure")
    ap.add_argument("--mariadb-port", type=int, help="use this running MariaDB (bench.t loaded)")
    args = ap.parse_args()
    n, out = args.rows, {"rows": args.rows, "runs": args.runs, "query": QUERY}
    out["machine"] = f"{os.cpu_count()} CPU {platform.processor() or platform.machine()}, " \
                     f"Python {platform.python_version()}"
    tmp = Path(tempfile.mkdtemp(prefix="result_bench_"))
    doris = maria = None
    try:
        doris = Running(args.doris_port, args.doris_pid) if args.doris_port \
            else start_doris(tmp, n, out)
        if args.mariadb_port:
            maria = Running(args.mariadb_port)
        elif not args.skip_mariadb:
            maria = start_mariadb(tmp, n, out)
        measure(doris, maria, n, args.runs, out)
    finally:
        for server in (doris, maria):
            if hasattr(server, "stop"):
                server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


def report(o: dict) -> None:
    print(f"{o['rows']:,} rows x (INT, BIGINT, VARCHAR(32), DECIMAL(15,2)); median of {o['runs']}; {o['machine']}")
    print(f"{'':32} {'minidoris':>12} {'MariaDB':>12}")
    print(f"{'mysql -N -B > /dev/null, rows/s':32} {o['minidoris_cli_rows_s']:>12,} {o.get('mariadb_cli_rows_s', 0):>12,}")
    print(f"{'PyMySQL fetchall, rows/s':32} {o['minidoris_pymysql_rows_s']:>12,} {o.get('mariadb_pymysql_rows_s', 0):>12,}")
    if "same_output" in o:
        print("same rows from both servers (sorted CLI output):", o["same_output"])
    if "pymysql_ratio" in o:
        print(f"PyMySQL minidoris / MariaDB: {o['pymysql_ratio']:.2f}")
    if o.get("minidoris_server_cpu_us_per_row") is not None:
        print(f"minidoris server CPU during the CLI query: {o['minidoris_server_cpu_us_per_row']} us/row")
    print(f"minidoris SSCursor: first row after {o['minidoris_first_row_s'] * 1000:.1f} ms, "
          f"last after {o['minidoris_unbuffered_total_s']:.2f} s; "
          f"server peak RSS growth {o['minidoris_rss_growth_mib']} MiB")


if __name__ == "__main__":
    main()
