"""One benchmark suite at one scale, prepared in both engines: what the tests and run_bench share.

`SuiteData(suite, sf, cache_dir)` holds the generated tables (`datagen`): SSB's as the paths of
its cached Parquet files (`sources`: Stream Load and DuckDB read them chunk by chunk, so SF 10
and beyond never sit in the client's memory), TPC-H's as Arrow tables; `tables` reads them all
into memory for the callers that want Arrow tables (INSERT loads, the smaller benches). `ensure_loaded(conn,
database)` creates the database and loads it through the wire unless it already holds every table
with the expected row count (so a benchmark data dir is loaded once and reused); `duckdb(threads)`
returns an in-memory DuckDB with the same tables. `run_minidoris`/`run_duckdb` execute one query
and return (column names, rows).
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from scripts.bench.datagen import generate_ssb, suite_tables
from scripts.bench.datagen.ssb import SSB_TABLES
from scripts.bench.load import (LoadStats, create_tables, duckdb_connect, load_tables,
                                stream_load_tables)


class SuiteData:
    def __init__(self, suite: str, sf: float, cache_dir: Path, log=None):
        self.suite, self.sf = suite, sf
        self.log = log or (lambda msg: None)
        began = time.perf_counter()
        if suite == "ssb":
            directory = generate_ssb(sf, Path(cache_dir))
            self.sources: dict[str, pa.Table | Path] = {
                name: directory / f"{name}.parquet" for name in SSB_TABLES}
        else:
            self.sources = suite_tables(suite, sf, Path(cache_dir))
        self.generate_seconds = time.perf_counter() - began
        self.load_stats: list[LoadStats] = []
        self._tables: dict[str, pa.Table] | None = None

    @property
    def tables(self) -> dict[str, pa.Table]:
        """Every table as an Arrow table (read once, and whole: for small scales only)."""
        if self._tables is None:
            self._tables = {name: pq.read_table(src) if isinstance(src, Path) else src
                            for name, src in self.sources.items()}
        return self._tables

    @property
    def row_counts(self) -> dict[str, int]:
        return {name: pq.ParquetFile(src).metadata.num_rows if isinstance(src, Path)
                else src.num_rows for name, src in self.sources.items()}

    def loaded_counts(self, conn, database: str) -> dict[str, int] | None:
        """Row counts of the suite's tables in `database`, or None if any table is missing."""
        counts = {}
        with conn.cursor() as cur:
            cur.execute("SHOW DATABASES")
            if database not in {r[0] for r in cur.fetchall()}:
                return None
            cur.execute(f"USE `{database}`")
            cur.execute("SHOW TABLES")
            present = {r[0].lower() for r in cur.fetchall()}
            if not set(self.sources) <= present:
                return None
            for name in self.sources:
                cur.execute(f"SELECT count(*) FROM {name}")
                counts[name] = int(cur.fetchone()[0])
        return counts

    def ensure_loaded(self, conn, database: str, *, reuse: bool = True,
                      http: tuple[str, int] | None = None) -> bool:
        """Load the suite into `database` unless it already holds it; True if it loaded.
        With `http` (host, http_port) the tables go in by Stream Load, else by INSERT."""
        if reuse and self.loaded_counts(conn, database) == self.row_counts:
            self.log(f"{database}: already loaded ({sum(self.row_counts.values()):,} rows)")
            return False
        create_tables(conn, self.suite, database)
        if http is not None:
            self.load_stats = stream_load_tables(*http, database, self.sources, log=self.log)
        else:
            self.load_stats = load_tables(conn, self.tables, log=self.log)
        return True

    def duckdb(self, threads: int | None = None):
        return duckdb_connect(self.sources, threads)


def run_minidoris(conn, sql: str) -> tuple[list[str], list[tuple]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        rows = list(cur.fetchall())
        names = [d[0] for d in cur.description or ()]
    return names, rows


def run_duckdb(con, sql: str) -> tuple[list[str], list[tuple]]:
    cur = con.execute(sql)
    rows = cur.fetchall()
    return [d[0] for d in cur.description or ()], rows
