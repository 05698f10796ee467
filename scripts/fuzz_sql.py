"""Run the differential SQL fuzzer (tests/fuzz/) for long, against a running server or one
it starts, and print what it found.

    python3 scripts/fuzz_sql.py --count 100000 --seed 7            # starts its own server
    python3 scripts/fuzz_sql.py --port 23456 --count 5000          # a running server

Each finding is printed with its SQL; turn it into a golden test (tests/sql/*.test) and a fix.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")]

from fuzz_oracles import Fuzzer, summary  # noqa: E402
from server_process import ServerProcess, connect  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, help="a running server (default: start one)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=10000, help="oracle checks to run")
    ap.add_argument("--batch", type=int, default=2000, help="checks per seed (new tables)")
    args = ap.parse_args()
    proc = None
    if args.port is None:
        proc = ServerProcess(Path(tempfile.mkdtemp()) / "data")
        proc.start()
        host, port = proc.host, proc.port
    else:
        host, port = args.host, args.port
    total_checks = total_queries = 0
    findings = 0
    try:
        seed = args.seed
        while total_checks < args.count:
            conn = connect(host, port)
            fuzzer = Fuzzer(conn, seed, db=f"fuzz_{seed % 1000}")
            report = fuzzer.run(min(args.batch, args.count - total_checks))
            conn.close()
            total_checks += report.checks + report.skipped
            total_queries += report.queries
            findings += len(report.findings)
            print(f"seed {seed}: {summary(report)}", flush=True)
            seed += 1
    finally:
        if proc is not None:
            tracebacks = proc.tracebacks()
            proc.stop()
            for tb in tracebacks:
                print(f"server traceback:\n{tb}")
    print(f"total: {total_checks} checks, {total_queries} server queries, {findings} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
