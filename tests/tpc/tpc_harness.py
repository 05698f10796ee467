"""Shared pieces of the TPC-H and SSB correctness tests: the scales, the per-query xfail params,
and `TpcSuite`, which runs one query in minidoris and DuckDB and fails with the difference.

Scales: TPC-H SF 0.01 (86,805 rows). SSB SF 0.1 (LINEORDER 600,572 rows): SSB's Q3.3 and Q3.4
pick two cities of one nation on both sides of the join (and Q3.4 one month), about one row in
1.2 million for Q3.4, so at SF 0.01 they come back empty; at SF 0.1 every SSB query returns rows.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pymysql
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from scripts.bench.compare import compare_results  # noqa: E402
from scripts.bench.runner import SuiteData, run_duckdb, run_minidoris  # noqa: E402
from scripts.bench.schema import query_names, query_text  # noqa: E402

SCALES = {"tpch": 0.01, "ssb": 0.1}


def query_params(suite: str, xfails: dict[str, str]) -> list:
    """One pytest param per query. The ones in `xfails` (name -> the engine's exact error) are
    strict xfails that expect a MySQL error, so a fix turns them red until the mark goes, and a
    query that runs but returns a wrong result fails outright."""
    unknown = set(xfails) - set(query_names(suite))
    assert not unknown, f"xfail marks for unknown queries {unknown}"
    return [pytest.param(name, id=name, marks=pytest.mark.xfail(
                strict=True, raises=pymysql.err.MySQLError, reason=xfails[name]))
            if name in xfails else pytest.param(name, id=name)
            for name in query_names(suite)]


class TpcSuite:
    def __init__(self, suite: str, data: SuiteData, conn, database: str):
        self.suite, self.data, self.conn, self.database = suite, data, conn, database
        self.duck = data.duckdb(threads=2)

    def check(self, name: str) -> None:
        sql = query_text(self.suite, name)
        columns, expected = run_duckdb(self.duck, sql)
        _, actual = run_minidoris(self.conn, sql)
        problem = compare_results(sql, columns, expected, actual)
        if problem:
            pytest.fail(f"{self.suite} {name} differs from DuckDB: {problem}", pytrace=False)
