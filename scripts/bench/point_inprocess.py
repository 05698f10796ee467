"""A key lookup's CPU without the protocol (issue 14 item 4): a session in this process calling
the short path (`DorisSession.short_circuit`, server/short_circuit.py) on random keys of SSB
customer, against the same lookups through the general path (enable_short_circuit_query =
false), CPU time per lookup (`time.process_time`).

    python scripts/bench/point_inprocess.py [--sf 0.1] [--lookups 20000] [--profile]

The data is loaded as point_bench.py loads it (ddl/ssb.sql, Stream Load through a server
started here and stopped again), then opened in this process. `--profile` prints cProfile's
top functions of the short path.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from scripts.bench.load import create_tables, stream_load_tables  # noqa: E402
from scripts.bench.runner import SuiteData  # noqa: E402
from server.config import load_config  # noqa: E402
from server.main import open_services  # noqa: E402
from server.session import DorisSession  # noqa: E402
from server_process import ServerProcess  # noqa: E402

DEFAULT_CACHE = Path.home() / ".cache" / "minidoris-bench"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--lookups", type=int, default=20000)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    customer = SuiteData("ssb", args.sf, DEFAULT_CACHE, print).tables["customer"]
    data_dir = Path(tempfile.mkdtemp(prefix="point-inprocess-")) / "data"
    srv = ServerProcess(data_dir).start()
    try:
        conn = srv.connect()
        create_tables(conn, "ssb", "point")
        stream_load_tables("127.0.0.1", srv.http_port, "point", {"customer": customer})
        conn.close()
    finally:
        srv.stop()
    cfg = load_config(None)
    cfg.data_dir = str(data_dir)
    session = DorisSession(open_services(cfg))
    session.database = "point"
    rnd = random.Random(1)
    sqls = [f"SELECT * FROM customer WHERE c_custkey = {rnd.randint(1, customer.num_rows)}"
            for _ in range(args.lookups)]
    if session.short_circuit(sqls[0]) is None:
        raise SystemExit("the lookup was not short-circuited")
    for sql in sqls[:2000]:  # warm: plans, sorted keys, cached columns
        session.short_circuit(sql)
    began = time.process_time()
    for sql in sqls:
        session.short_circuit(sql)
    short = (time.process_time() - began) / len(sqls)
    session.variables.set("enable_short_circuit_query", False)
    few = sqls[:max(1, len(sqls) // 10)]
    for sql in few[:200]:
        session.execute(sql)
    began = time.process_time()
    for sql in few:
        session.execute(sql)
    general = (time.process_time() - began) / len(few)
    session.variables.set("enable_short_circuit_query", True)
    print(f"short path {short * 1e6:.1f} us CPU per lookup; general path "
          f"{general * 1e6:.1f} us ({len(sqls)} / {len(few)} lookups)")
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(lambda: [session.short_circuit(sql) for sql in sqls])
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
