"""Fixtures of the Spark tests: one SparkSession (local[2]) for the whole run, and one private
server for Spark Load (its driver runs on a SparkSession inside the server process, so that
JVM stays out of the shared server). Spark's start-up (15-18 s) is paid once per process."""

from __future__ import annotations

import time

import pytest

from server_process import ServerProcess

MARIADB_JAR = "/usr/share/java/mariadb-java-client.jar"  # Debian's libmariadb-java (Spark JDBC)


@pytest.fixture(scope="session")
def spark():
    from pipeline.source import DorisDataSource
    from pipeline.spark_load import session_for
    # local[2, 2]: two cores, a failed task is retried once (plain local[n] never retries)
    session = session_for("local[2,2]", {"spark.sql.python.filterPushdown.enabled": "true",
                                       "spark.sql.shuffle.partitions": "4",
                                       "spark.jars": MARIADB_JAR},
                          "minidoris-tests")
    session.dataSource.register(DorisDataSource)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_load_server(tmp_path_factory):
    base = tmp_path_factory.mktemp("spark-load-server")
    proc = ServerProcess(base / "data", log_path=base / "server.log")
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def query(server, db: str, sql: str) -> list[tuple]:
    conn = server.connect(db)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


def show_load(server, db: str, label: str) -> dict:
    conn = server.connect(db)
    try:
        with conn.cursor() as cur:
            cur.execute(f'SHOW LOAD WHERE LABEL = "{label}"')
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
            return dict(zip(names, rows[-1])) if rows else {}  # the latest job of the label
    finally:
        conn.close()


def wait_load(server, db: str, label: str, timeout: float = 240) -> dict:
    """SHOW LOAD's row of the job once FINISHED or CANCELLED."""
    deadline = time.monotonic() + timeout
    job = {}
    while time.monotonic() < deadline:
        job = show_load(server, db, label)
        if job.get("State") in ("FINISHED", "CANCELLED"):
            return job
        time.sleep(0.5)
    raise AssertionError(f"load {label} did not finish: {job}")
