"""Deterministic benchmark data: TPC-H from tpchgen-cli, SSB derived from it (see each module).

`suite_tables(suite, sf, cache_dir)` returns a suite's tables as Arrow tables typed as in the
suite's DDL; the files are cached under `cache_dir` and reused by later runs.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from scripts.bench.datagen.ssb import SSB_TABLES, generate_ssb, ssb_tables
from scripts.bench.datagen.tpch import TPCH_TABLES, generate_tpch, tpch_tables

__all__ = ["SSB_TABLES", "TPCH_TABLES", "generate_ssb", "generate_tpch", "ssb_tables",
           "suite_tables", "tpch_tables"]


def suite_tables(suite: str, sf: float, cache_dir: Path) -> dict[str, pa.Table]:
    if suite == "tpch":
        return tpch_tables(sf, cache_dir)
    if suite == "ssb":
        return ssb_tables(sf, cache_dir)
    raise ValueError(f"unknown suite {suite!r} (tpch or ssb)")
