"""Fixtures for the TPC-H and SSB correctness tests: each suite loaded into minidoris and DuckDB.

The data is generated once per test session (`scripts/bench/datagen`) under a session temp dir,
or under MINIDORIS_TPC_CACHE when set (to reuse it across runs). Each suite is loaded through the
wire into its own database on the shared `server` and into an in-memory DuckDB from the same
Arrow tables (`tpc_harness.TpcSuite`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pymysql
import pytest

from server_process import unique_name
from tpc_harness import SCALES, SuiteData, TpcSuite


@pytest.fixture(scope="session")
def tpc_cache(tmp_path_factory) -> Path:
    custom = os.environ.get("MINIDORIS_TPC_CACHE")
    if custom:
        Path(custom).mkdir(parents=True, exist_ok=True)
        return Path(custom)
    return tmp_path_factory.mktemp("tpc-data")


def _suite_fixture(suite: str, server, cache: Path):
    data = SuiteData(suite, SCALES[suite], cache)
    database = unique_name(suite)
    conn = server.connect(read_timeout=600)
    data.ensure_loaded(conn, database, reuse=False, http=(server.host, server.http_port))
    try:
        yield TpcSuite(suite, data, conn, database)
    finally:
        try:
            with conn.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS `{database}`")
        except pymysql.err.MySQLError:  # cleanup only: the tests' results are what matter
            pass
        conn.close()


@pytest.fixture(scope="session")
def tpch(server, tpc_cache):
    yield from _suite_fixture("tpch", server, tpc_cache)


@pytest.fixture(scope="session")
def ssb(server, tpc_cache):
    yield from _suite_fixture("ssb", server, tpc_cache)
