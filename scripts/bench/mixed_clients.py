"""Throughput under concurrent clients (issue 19): writers inserting small batches while readers
aggregate the same table, through the wire, on loopback.

    python scripts/bench/mixed_clients.py --clients 8 --seconds 30
    python scripts/bench/mixed_clients.py --clients 8 32 --seconds 30 --json mixed.json

For each client count C: a fresh database holds an Aggregate table with 8 buckets
(`g INT, k INT, v BIGINT SUM`); C/2 writers loop `INSERT INTO t VALUES` of `--batch` rows (100)
and C/2 readers loop `SELECT g, count(*), sum(v) FROM t GROUP BY g`, for `--seconds` (bounded:
also at most `--max-statements` per client). Printed per run: inserts/s, aggregate queries/s,
and anomalies: a reader whose total sum(v) went down between two of its queries (only inserts
run, so totals may only grow), and at the end a final total that differs from what the writers
had acknowledged. Starts its own server (a temporary data dir, free ports) unless --port is given.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

import pymysql  # noqa: E402

from server_process import ServerProcess  # noqa: E402

DDL = """CREATE TABLE t (g INT NOT NULL, k INT NOT NULL, v BIGINT SUM DEFAULT "0")
AGGREGATE KEY(g, k) DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ("replication_num" = "1")"""
QUERY = "SELECT g, count(*), sum(v) FROM t GROUP BY g"


def connect(host: str, port: int, db: str | None = None):
    return pymysql.connect(host=host, port=port, user="root", database=db, autocommit=True,
                           read_timeout=300)


def run(host: str, port: int, clients: int, seconds: float, batch: int, max_statements: int,
        variables: dict[str, str]) -> dict:
    db = f"mixed_{clients}_{random.randrange(1 << 30)}"
    with connect(host, port) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"USE {db}")
        cur.execute(DDL)
    writers, readers = clients // 2, clients - clients // 2
    acked_sum = [0] * writers
    inserts = [0] * writers
    queries = [0] * readers
    anomalies: list[str] = []
    errors: list[str] = []
    start = threading.Barrier(clients + 1)
    deadline = [0.0]

    def writer(i: int) -> None:
        rng = random.Random(i)
        try:
            with connect(host, port, db) as conn, conn.cursor() as cur:
                for name, value in variables.items():
                    cur.execute(f"SET {name} = {value}")
                start.wait()
                for n in range(max_statements):
                    if time.monotonic() >= deadline[0]:
                        break
                    rows = [(rng.randrange(10), rng.randrange(1_000_000), rng.randrange(1, 100))
                            for _ in range(batch)]
                    cur.execute("INSERT INTO t VALUES " + ",".join(f"({g},{k},{v})" for g, k, v in rows))
                    acked_sum[i] += sum(v for _, _, v in rows)
                    inserts[i] += 1
        except Exception as e:  # reported, not raised: the run goes on
            errors.append(f"writer {i}: {e}")

    def reader(i: int) -> None:
        try:
            with connect(host, port, db) as conn, conn.cursor() as cur:
                start.wait()
                last = -1
                for n in range(max_statements):
                    if time.monotonic() >= deadline[0]:
                        break
                    cur.execute(QUERY)
                    total = sum(int(r[2] or 0) for r in cur.fetchall())
                    if total < last:
                        anomalies.append(f"reader {i}: total went down {last} -> {total}")
                    last = total
                    queries[i] += 1
        except Exception as e:
            errors.append(f"reader {i}: {e}")

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)] + \
              [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
    for t in threads:
        t.start()
    deadline[0] = time.monotonic() + seconds
    began = time.monotonic()
    start.wait()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    with connect(host, port, db) as conn, conn.cursor() as cur:
        for name, value in variables.items():
            if name == "group_commit":  # a sync insert waits for every earlier group
                cur.execute("SET group_commit = sync_mode")
                cur.execute("INSERT INTO t VALUES (0, -1, 0)")
        cur.execute("SELECT sum(v) FROM t")
        final = int(cur.fetchone()[0] or 0)
        cur.execute(f"DROP DATABASE {db}")
    if final != sum(acked_sum):
        anomalies.append(f"final total {final} != acknowledged {sum(acked_sum)}")
    return {"clients": clients, "writers": writers, "readers": readers,
            "seconds": round(elapsed, 2), "inserts": sum(inserts), "queries": sum(queries),
            "inserts_per_s": round(sum(inserts) / elapsed, 1),
            "queries_per_s": round(sum(queries) / elapsed, 1),
            "anomalies": anomalies, "errors": errors[:5], "variables": variables}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--max-statements", type=int, default=100_000)
    ap.add_argument("--group-commit", default=None, help="writers' group_commit mode")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=None, help="a running server (else one is started)")
    ap.add_argument("--config", default=None, help="config file for the started server")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        ap.error("loopback only")
    variables = {"group_commit": args.group_commit} if args.group_commit else {}
    server = None
    if args.port is None:
        extra = ("--config", args.config) if args.config else ()
        server = ServerProcess(Path(tempfile.mkdtemp(prefix="mixed-")) / "data",
                               extra_args=extra).start()
    port = args.port or server.port
    results = []
    try:
        for clients in args.clients:
            r = run(args.host, port, clients, args.seconds, args.batch, args.max_statements,
                    variables)
            results.append(r)
            print(f"{clients:3d} clients ({r['writers']} writers, {r['readers']} readers), "
                  f"{r['seconds']} s: {r['inserts_per_s']} inserts/s, {r['queries_per_s']} "
                  f"aggregate queries/s, anomalies {len(r['anomalies'])}, errors {len(r['errors'])}")
            for a in r["anomalies"][:5] + r["errors"]:
                print("   ", a)
    finally:
        if server is not None:
            server.stop()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
