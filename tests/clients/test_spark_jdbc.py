"""PySpark's JDBC source and sink (MariaDB Connector/J, Spark's MySQL dialect) against the server.

`df.write.jdbc(..., mode="append")` into a table that does not exist makes Spark probe it
(`SELECT 1 FROM t WHERE 1=0`), set the transaction isolation, send its own CREATE TABLE (MySQL
type names, no key, no distribution) and insert with batched prepared statements; then a
partitioned read brings the rows back.
"""

from __future__ import annotations

import datetime
import os
import shutil
import sys
from decimal import Decimal
from pathlib import Path

import pytest

JAR = Path("/usr/share/java/mariadb-java-client.jar")


@pytest.fixture(scope="module")
def spark():
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        SparkSession = None
    missing = [w for w, ok in (("pyspark", SparkSession), ("java", shutil.which("java")),
                               (str(JAR), JAR.exists())) if not ok]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"Spark JDBC test needs {', '.join(missing)} in CI")
        pytest.skip(f"missing {', '.join(missing)}")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[1]").appName("minidoris-jdbc")
               .config("spark.jars", str(JAR)).config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_writes_a_new_table_and_reads_it_back(spark, server, fresh_db):
    from pyspark.sql.types import (BooleanType, DateType, DecimalType, DoubleType, IntegerType,
                                   LongType, StringType, StructField, StructType, TimestampType)
    schema = StructType([
        StructField("id", IntegerType()), StructField("big", LongType()),
        StructField("name", StringType()), StructField("score", DoubleType()),
        StructField("flag", BooleanType()), StructField("d", DateType()),
        StructField("ts", TimestampType()), StructField("amt", DecimalType(10, 2))])
    rows = [(i, i * 10, f"n{i}", i / 2, i % 2 == 0, datetime.date(2024, 1, i),
             datetime.datetime(2024, 1, i, 3, 4, 5), Decimal(f"{i}.25")) for i in range(1, 6)]
    url = f"jdbc:mysql://{server.host}:{server.port}/{fresh_db}"
    props = {"user": "root", "password": "", "driver": "org.mariadb.jdbc.Driver"}
    spark.createDataFrame(rows, schema).write.jdbc(url, "spark_new", mode="append", properties=props)

    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("SHOW CREATE TABLE spark_new")
        ddl = cur.fetchone()[1]
    conn.close()
    assert "DUPLICATE KEY(`id`, `big`)" in ddl and "DISTRIBUTED BY RANDOM BUCKETS AUTO" in ddl, ddl
    assert "`name` text NULL" in ddl and "`score` double NULL" in ddl and "`flag` boolean" in ddl

    back = spark.read.jdbc(url, "spark_new", column="id", lowerBound=1, upperBound=6,
                           numPartitions=2, properties=props)
    got = sorted(tuple(r) for r in back.collect())
    assert got == rows
