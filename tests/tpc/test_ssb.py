"""Star Schema Benchmark: all 13 queries (scripts/bench/queries/ssb) at SF 0.1, each compared
with DuckDB. Strict xfails carry the engine's exact error (see tpc_harness.query_params).
"""

from __future__ import annotations

import pytest

from tpc_harness import query_params

XFAIL: dict[str, str] = {}


@pytest.mark.parametrize("name", query_params("ssb", XFAIL))
def test_ssb_query(ssb, name):
    ssb.check(name)
