"""Spark Load on a laptop: a CSV file loaded by a Spark job the server runs (local[2]).

    python -m server serve --port 9030 --http-port 8030 --data-dir /tmp/md &
    python scripts/examples/spark_load.py --port 9030

Creates demo.spark_orders, a Spark resource, writes 100k rows (and two bad lines) to a CSV file,
runs `LOAD LABEL ... WITH RESOURCE 'spark0'`, polls SHOW LOAD until FINISHED, and prints the
job's row and what the table holds. The first job of a server starts its SparkSession (15-20 s).
"""

import argparse
import tempfile
import time
from pathlib import Path

import pymysql


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9030)
    args = ap.parse_args()
    path = Path(tempfile.mkdtemp()) / "orders.csv"
    with open(path, "w") as f:
        for i in range(100_000):
            f.write(f"{i},2024-0{i % 9 + 1}-15,{i % 97},{i % 1000}.25\n")
        f.write("oops,2024-01-01,1\n")          # too few columns: filtered
        f.write("7,not-a-date,1,1.5\n")         # NULL date in a NOT NULL column: filtered
    conn = pymysql.connect(host=args.host, port=args.port, user="root", password="", autocommit=True)
    label = f"orders_{int(time.time())}"
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS demo")
        cur.execute("USE demo")
        cur.execute("""CREATE TABLE IF NOT EXISTS spark_orders (id INT, dt DATE NOT NULL, customer INT,
            amount DECIMAL(10,2)) DUPLICATE KEY(id) PARTITION BY RANGE(dt) (
            PARTITION p2024h1 VALUES LESS THAN ('2024-07-01'), PARTITION p2024h2 VALUES LESS THAN ('2025-01-01'))
            DISTRIBUTED BY HASH(id) BUCKETS 4 PROPERTIES ("replication_num" = "1")""")
        cur.execute('CREATE RESOURCE IF NOT EXISTS "spark0" PROPERTIES ("type" = "spark", '
                    '"spark.master" = "local[2]", "spark.executor.memory" = "1g")')
        cur.execute(f'LOAD LABEL demo.{label} (DATA INFILE("file://{path}") INTO TABLE spark_orders '
                    f'COLUMNS TERMINATED BY "," (id, dt, customer, amount)) WITH RESOURCE "spark0" '
                    f'PROPERTIES ("max_filter_ratio" = "0.01", "timeout" = "3600")')
        while True:
            cur.execute(f'SHOW LOAD WHERE LABEL = "{label}"')
            names = [d[0] for d in cur.description]
            job = dict(zip(names, cur.fetchall()[-1]))
            print(f"{job['State']:<10} {job['Progress']}")
            if job["State"] in ("FINISHED", "CANCELLED"):
                break
            time.sleep(1)
        for k in ("EtlInfo", "ErrorMsg", "URL", "TransactionId"):
            print(f"{k}: {job[k]}")
        cur.execute("SELECT count(*), sum(amount) FROM spark_orders")
        print("table:", cur.fetchall())


if __name__ == "__main__":
    main()
