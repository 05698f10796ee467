"""A query over Arrow Flight SQL with ADBC (`pip install adbc-driver-flightsql`), as with Doris 2.1.

    python -m server serve --port 9030 --http-port 8030 --arrow-flight-sql-port 9090 --data-dir /tmp/md &
    python scripts/examples/flight_sql.py --flight-port 9090

(or set `arrow_flight_sql_port = 9090` in conf/minidoris.conf)
"""

import argparse

import adbc_driver_flightsql.dbapi as flight_sql


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--flight-port", type=int, default=9090)
    args = ap.parse_args()
    conn = flight_sql.connect(f"grpc://{args.host}:{args.flight_port}",
                              db_kwargs={"username": "root", "password": ""})
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS demo")
    cur.execute("USE demo")
    cur.execute("""CREATE TABLE IF NOT EXISTS flight_t (k INT, d DATE, v DECIMAL(10,2)) DUPLICATE KEY(k)
        DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")""")
    cur.execute("INSERT INTO flight_t VALUES (1, '2024-01-01', 1.25), (2, '2024-01-02', 2.50)")
    cur.execute("SELECT k, d, v FROM flight_t ORDER BY k")
    table = cur.fetch_arrow_table()
    print(table.schema)
    print(table.to_pandas())
    cur.close()
    conn.close()


if __name__ == "__main__":
    main()
