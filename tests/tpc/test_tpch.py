"""TPC-H: all 22 queries (scripts/bench/queries/tpch) at SF 0.01, each compared with DuckDB.

A query the engine cannot run yet is a strict xfail carrying the engine's exact error: it turns
red when the engine is fixed, and the mark must then go (see tpc_harness.query_params).
"""

from __future__ import annotations

import pytest

from tpc_harness import query_params

XFAIL: dict[str, str] = {}


@pytest.mark.parametrize("name", query_params("tpch", XFAIL))
def test_tpch_query(tpch, name):
    tpch.check(name)
