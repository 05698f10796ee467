"""Reading and writing minidoris from PySpark with the `doris` data source (the Spark Doris
Connector's options), and the same read through Spark JDBC.

    python -m server serve --port 9030 --http-port 8030 --data-dir /tmp/md &
    python scripts/examples/spark_connector.py --port 9030 --http-port 8030

Writes 50k rows into demo.connector_t with two-phase Stream Loads (committed once when the job
succeeds), reads them back with a filter the server prunes partitions and buckets with, and reads
the table again with Spark JDBC (MariaDB Connector/J) in 2 partitions.
"""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pymysql  # noqa: E402

from pipeline.source import DorisDataSource  # noqa: E402
from pipeline.spark_load import session_for  # noqa: E402

JAR = "/usr/share/java/mariadb-java-client.jar"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9030)
    ap.add_argument("--http-port", type=int, default=8030)
    args = ap.parse_args()
    conn = pymysql.connect(host=args.host, port=args.port, user="root", password="", autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS demo")
        cur.execute("DROP TABLE IF EXISTS demo.connector_t")
        cur.execute("""CREATE TABLE demo.connector_t (k INT, v VARCHAR(20), amount DOUBLE) DUPLICATE KEY(k)
            PARTITION BY RANGE(k) (PARTITION p0 VALUES LESS THAN (25000), PARTITION p1 VALUES LESS THAN (50000))
            DISTRIBUTED BY HASH(k) BUCKETS 4 PROPERTIES ("replication_num" = "1")""")
    conf = {"spark.sql.python.filterPushdown.enabled": "true"}
    if os.path.exists(JAR):
        conf["spark.jars"] = JAR
    spark = session_for("local[2]", conf, "minidoris-connector-example")
    spark.dataSource.register(DorisDataSource)
    common = {"doris.fenodes": f"{args.host}:{args.http_port}", "doris.table.identifier": "demo.connector_t",
              "user": "root", "password": ""}
    df = spark.range(50_000).selectExpr("CAST(id AS INT) AS k", "CONCAT('row-', id) AS v", "id * 0.5 AS amount")
    df.write.format("doris").options(**common).option("doris.sink.batch.size", "20000") \
        .option("doris.sink.label.prefix", "example_write").mode("append").save()
    read = spark.read.format("doris").options(**common).option("doris.read.fields", "k,v,amount").load()
    hot = read.filter("k >= 30000 AND k < 30010")
    print("rows:", read.count(), "| filtered:", hot.count(), "in", hot.rdd.getNumPartitions(), "Spark partitions")
    hot.show(3)
    if os.path.exists(JAR):
        jdbc = spark.read.format("jdbc").option("url", f"jdbc:mysql://{args.host}:{args.port}/demo") \
            .option("driver", "org.mariadb.jdbc.Driver").option("dbtable", "connector_t") \
            .option("user", "root").option("password", "").option("partitionColumn", "k") \
            .option("lowerBound", "0").option("upperBound", "50000").option("numPartitions", "2").load()
        print("jdbc rows:", jdbc.count())
    spark.stop()


if __name__ == "__main__":
    main()
