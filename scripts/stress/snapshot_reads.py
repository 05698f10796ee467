"""Writers and readers on one Aggregate table while compaction runs: do reads stay consistent?

The mix of issue 19: `--writers` clients insert 100-row batches into an Aggregate table with
`--buckets` buckets, `--readers` clients run `SELECT g, count(*), sum(v) FROM t GROUP BY g` in a
loop. Every batch adds exactly ROWS_PER_GROUP new keys with v = 1 to each of the GROUPS groups,
so a read at any published version shows, for every group, count = sum = ROWS_PER_GROUP * n
for one n (the batches visible). An anomaly is any read where

    - the groups disagree (a torn read: some tablets at another version, or rowsets missing),
    - n is below the batches acknowledged before the query started or above those started
      before it ended,
    - n is below the reader's previous n (a total that went down).

Usage (starts its own server with compaction forced often, unless --host/--port are given):

    python3 -m scripts.stress.snapshot_reads --seconds 60 --writers 4 --readers 4

It prints clients, seconds, statements/s and the anomalies, and exits 1 if there were any.
`run_mix` is what tests/concurrency uses with a short duration.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pymysql

GROUPS = 10
ROWS_PER_GROUP = 10  # a batch is GROUPS * ROWS_PER_GROUP = 100 rows
REPO_ROOT = Path(__file__).resolve().parents[2]
QUERY = "SELECT g, count(*), sum(v) FROM t GROUP BY g"
# Compaction as often as the policy allows: two rowsets make a cumulative compaction.
STRESS_CONFIG = {
    "cumulative_compaction_min_deltas": "2",
    "cumulative_compaction_skip_window_seconds": "0",
    "generate_compaction_tasks_min_interval_ms": "50",
    "base_compaction_num_cumulative_deltas": "2",
    "base_compaction_interval_seconds_since_last_operation": "1",
    "cumulative_compaction_rounds_for_each_base_compaction_round": "2",
}


@dataclass
class MixResult:
    writers: int
    readers: int
    seconds: float
    inserts: int = 0
    queries: int = 0
    anomalies: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    final_batches: int = -1

    def summary(self) -> str:
        return (f"clients={self.writers + self.readers} (writers {self.writers}, readers "
                f"{self.readers}) seconds={self.seconds:.1f} inserts={self.inserts} "
                f"({self.inserts / self.seconds:.1f}/s) queries={self.queries} "
                f"({self.queries / self.seconds:.1f}/s) statements/s="
                f"{(self.inserts + self.queries) / self.seconds:.1f} "
                f"anomalies={len(self.anomalies)} errors={len(self.errors)}")


class _Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.started = 0   # batches whose INSERT was sent
        self.acked = 0     # batches whose INSERT returned OK
        self.next_batch = itertools.count()


def _connect(host: str, port: int, db: str | None = None):
    return pymysql.connect(host=host, port=port, user="root", password="", database=db,
                           autocommit=True, connect_timeout=10, read_timeout=120)


def batch_sql(batch: int) -> str:
    rows = [f"({batch * 1000 + g * ROWS_PER_GROUP + i}, {g}, 1)"
            for g in range(GROUPS) for i in range(ROWS_PER_GROUP)]
    return "INSERT INTO t (k, g, v) VALUES " + ", ".join(rows)


def check_read(rows, low: int, high: int, previous: int) -> tuple[int, str | None]:
    """The number of batches a read shows, and what is wrong with it (None if nothing)."""
    by_group = {int(g): (int(c), int(s)) for g, c, s in rows}
    counts = {by_group.get(g, (0, 0)) for g in range(GROUPS)}
    if len(counts) != 1 or len(by_group) not in (0, GROUPS):
        return previous, f"torn read: {sorted(by_group.items())}"
    count, total = counts.pop()
    if count != total or count % ROWS_PER_GROUP:
        return previous, f"count {count} / sum {total} is no whole number of batches"
    n = count // ROWS_PER_GROUP
    if n < previous:
        return n, f"total went down: {previous} -> {n} batches"
    if not low <= n <= high:
        return n, f"{n} batches visible, outside [{low} acknowledged, {high} started]"
    return n, None


def _writer(host, port, db, counters: _Counters, stop: threading.Event, result: MixResult):
    conn = _connect(host, port, db)
    try:
        while not stop.is_set():
            with counters.lock:
                batch = next(counters.next_batch)
                counters.started += 1
            try:
                conn.cursor().execute(batch_sql(batch))
            except pymysql.MySQLError as e:  # a failed load is not visible: not counted
                with counters.lock:
                    result.errors.append(f"insert {batch}: {e}")
                continue
            with counters.lock:
                counters.acked += 1
                result.inserts += 1
    finally:
        conn.close()


def _reader(host, port, db, counters: _Counters, stop: threading.Event, result: MixResult):
    conn = _connect(host, port, db)
    previous = 0
    try:
        while not stop.is_set():
            with counters.lock:
                low = counters.acked
            cur = conn.cursor()
            try:
                cur.execute(QUERY)
                rows = cur.fetchall()
            except pymysql.MySQLError as e:
                with counters.lock:
                    result.errors.append(f"query: {e}")
                continue
            with counters.lock:
                high = counters.started
                result.queries += 1
            previous, problem = check_read(rows, low, high, previous)
            if problem:
                with counters.lock:
                    result.anomalies.append(problem)
    finally:
        conn.close()


def create_table(host: str, port: int, db: str, buckets: int) -> None:
    conn = _connect(host, port)
    cur = conn.cursor()
    cur.execute(f"CREATE DATABASE IF NOT EXISTS `{db}`")
    cur.execute(f"USE `{db}`")
    cur.execute("DROP TABLE IF EXISTS t")
    cur.execute(f"CREATE TABLE t (k INT NOT NULL, g INT NOT NULL, v BIGINT SUM DEFAULT '0') "
                f"AGGREGATE KEY(k, g) DISTRIBUTED BY HASH(k) BUCKETS {buckets} "
                f"PROPERTIES ('replication_num' = '1')")
    conn.close()


def run_mix(host: str, port: int, db: str, seconds: float, writers: int = 4, readers: int = 4,
            buckets: int = 8) -> MixResult:
    """Run the mix for `seconds` against a server; the result lists every anomaly."""
    create_table(host, port, db, buckets)
    result = MixResult(writers, readers, seconds)
    counters = _Counters()
    stop = threading.Event()
    threads = [threading.Thread(target=_writer, args=(host, port, db, counters, stop, result))
               for _ in range(writers)]
    threads += [threading.Thread(target=_reader, args=(host, port, db, counters, stop, result))
                for _ in range(readers)]
    started = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=180)
    result.seconds = time.monotonic() - started
    conn = _connect(host, port, db)
    cur = conn.cursor()
    cur.execute(QUERY)
    final, problem = check_read(cur.fetchall(), counters.acked, counters.acked, 0)
    conn.close()
    result.final_batches = final
    if problem:
        result.anomalies.append(f"final read: {problem}")
    return result


class LocalServer:
    """A private server for the run: temp data dir, a config forcing frequent compaction."""

    def __init__(self, config: dict[str, str], port: int, http_port: int):
        self.dir = tempfile.mkdtemp(prefix="minidoris-stress-")
        self.port, self.http_port = port, http_port
        conf = Path(self.dir) / "stress.conf"
        conf.write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
        self.log = open(Path(self.dir) / "server.log", "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", "--config", str(conf), "--port", str(port),
             "--http-port", str(http_port), "--data-dir", str(Path(self.dir) / "data")],
            cwd=REPO_ROOT, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                _connect("127.0.0.1", port).close()
                return
            except pymysql.MySQLError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise RuntimeError("server did not start") from None
                time.sleep(0.1)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--buckets", type=int, default=8)
    ap.add_argument("--host", help="use a running server instead of starting one")
    ap.add_argument("--port", type=int)
    ap.add_argument("--no-compaction", action="store_true",
                    help="start the server with disable_auto_compaction = true")
    args = ap.parse_args(argv)
    server = None
    host, port = args.host or "127.0.0.1", args.port
    if args.host is None:
        config = dict(STRESS_CONFIG)
        if args.no_compaction:
            config["disable_auto_compaction"] = "true"
        port = _free_port()
        server = LocalServer(config, port, _free_port())
    try:
        result = run_mix(host, port, f"stress_{os.getpid()}", args.seconds, args.writers,
                         args.readers, args.buckets)
    finally:
        if server is not None:
            server.close()
    print(result.summary())
    for line in result.anomalies[:20] + result.errors[:10]:
        print("  ", line)
    return 1 if result.anomalies or result.errors else 0


if __name__ == "__main__":
    sys.exit(main())
