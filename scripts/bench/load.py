"""Load a benchmark suite into minidoris (Stream Load or INSERT through the wire), and DuckDB.

minidoris gets exactly what a Doris user would send: the suite's DDL (`ddl/<suite>.sql`), then
either Stream Load (`stream_load_tables`: each table as one CSV body PUT to
`/api/{db}/{table}/_stream_load`, the way Doris users bulk-load) or
`INSERT INTO t VALUES (...), (...)` statements of literal tuples (`load_tables`), which the server's bulk-insert
fast path parses without building an AST. The statement text is rendered column by column with
Arrow kernels (numbers and dates cast to text, strings escaped and quoted, NULL for nulls, then
the columns joined element-wise into tuples and the tuples into one string per batch): no Python
loop over rows. Each statement is one load transaction, so it adds one rowset per
(partition, bucket) it touches; batches are made large (`batch_bytes`) to keep rowsets few.

A table may also be given as the path of its Parquet file (`datagen` caches them): Stream Load
then reads it chunk by chunk (`stream_load_parquet`, one load per chunk) and DuckDB reads it
itself, so a table larger than the client's memory is never held whole.

DuckDB gets the same data (`duckdb_connect`), so both engines hold identical values.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from scripts.bench.schema import ddl_statements

DEFAULT_BATCH_BYTES = 48 * 1024 * 1024  # statement text per INSERT (PyMySQL splits packets)


@dataclass
class LoadStats:
    table: str
    rows: int
    statements: int
    seconds: float

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else float("inf")


def _literal_column(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """One column as SQL literal text: 12, 3.50, '1998-12-01', 'it\\'s', NULL."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    t = col.type
    if pa.types.is_integer(t) or pa.types.is_decimal(t) or pa.types.is_floating(t):
        text = col.cast(pa.string())
    elif pa.types.is_boolean(t):
        text = col.cast(pa.int8()).cast(pa.string())
    else:
        raw = col.cast(pa.string())
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            raw = pc.replace_substring(raw, "\\", "\\\\")
            raw = pc.replace_substring(raw, "'", "\\'")
        text = pc.binary_join_element_wise("'", raw, "'", "")
    return pc.fill_null(text, "NULL") if col.null_count else text


def render_tuples(table: pa.Table) -> pa.Array:
    """Each row of `table` as the text of one VALUES tuple: "(1,'a',2.50)"."""
    cols = [_literal_column(table.column(i)) for i in range(table.num_columns)]
    return pc.binary_join_element_wise("(", pc.binary_join_element_wise(*cols, ","), ")", "")


def _join_all(tuples: pa.Array) -> str:
    """All tuples joined with commas, in C (one list of all tuples through binary_join)."""
    as_list = pa.ListArray.from_arrays(pa.array([0, len(tuples)], pa.int32()), tuples)
    return pc.binary_join(as_list, ",")[0].as_py()


def insert_statements(name: str, table: pa.Table, batch_bytes: int = DEFAULT_BATCH_BYTES):
    """Yield (row count, INSERT statement) pairs covering `table`, about `batch_bytes` each."""
    header = f"INSERT INTO {name} ({', '.join(table.column_names)}) VALUES "
    chunk_rows = 65536
    for start in range(0, table.num_rows, chunk_rows * 64):
        part = table.slice(start, chunk_rows * 64)
        tuples = render_tuples(part)
        lengths = pc.binary_length(tuples).to_numpy().cumsum()
        begin = 0
        while begin < len(tuples):
            base = lengths[begin - 1] if begin else 0
            end = int((lengths <= base + batch_bytes).sum())
            end = max(end, begin + 1)
            yield end - begin, header + _join_all(tuples.slice(begin, end - begin))
            begin = end


def create_tables(conn, suite: str, database: str, *, drop: bool = True) -> None:
    """(Re)create `database` and the suite's tables in it, through the wire."""
    with conn.cursor() as cur:
        if drop:
            cur.execute(f"DROP DATABASE IF EXISTS `{database}`")
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
        cur.execute(f"USE `{database}`")
        for stmt in ddl_statements(suite):
            cur.execute(stmt)


def load_tables(conn, tables: dict[str, pa.Table], *, batch_bytes: int = DEFAULT_BATCH_BYTES,
                log=None) -> list[LoadStats]:
    """INSERT every table's rows into the current database; returns per-table statistics."""
    stats = []
    with conn.cursor() as cur:
        for name, table in tables.items():
            began, statements = time.perf_counter(), 0
            for rows, sql in insert_statements(name, table, batch_bytes):
                cur.execute(sql)
                if cur.rowcount not in (-1, rows):
                    raise RuntimeError(f"INSERT into {name} reported {cur.rowcount} rows, sent {rows}")
                statements += 1
            stat = LoadStats(name, table.num_rows, statements, time.perf_counter() - began)
            stats.append(stat)
            if log:
                log(f"loaded {name}: {stat.rows} rows in {stat.seconds:.1f} s "
                    f"({stat.rows_per_second:,.0f} rows/s, {statements} statements)")
    return stats


def csv_body(table: pa.Table) -> bytes:
    """The table as Doris CSV: \\x01-separated text, `\\N` for NULL, one line per row."""
    cols = []
    for name, col in zip(table.column_names, table.columns):
        col = col.combine_chunks()
        text = col.cast(pa.int8()).cast(pa.string()) if pa.types.is_boolean(col.type) else col.cast(pa.string())
        if pc.any(pc.match_substring_regex(text, "[\\x01\\n\\r]")).as_py():
            raise ValueError(f"column {name} holds a separator: load it with INSERT instead")
        cols.append(pc.fill_null(text, "\\N"))
    lines = pc.binary_join_element_wise(*cols, "\x01")
    as_list = pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines)
    return (pc.binary_join(as_list, "\n")[0].as_py() + "\n").encode() if len(lines) else b""


def _stream_load(host: str, http_port: int, database: str, name: str, part: pa.Table) -> None:
    """One Stream Load of `part` as a CSV body."""
    auth = "Basic " + base64.b64encode(b"root:").decode()
    req = urllib.request.Request(
        f"http://{host}:{http_port}/api/{database}/{name}/_stream_load",
        data=csv_body(part), method="PUT",
        headers={"Authorization": auth, "column_separator": "\\x01",
                 "columns": ", ".join(part.column_names)})
    with urllib.request.urlopen(req, timeout=3600) as resp:
        reply = json.loads(resp.read())
    if reply.get("Status") != "Success" or reply.get("NumberLoadedRows") != part.num_rows:
        raise RuntimeError(f"stream load into {name} failed: {reply}")


def _parquet_chunks(path: Path, rows: int):
    """A Parquet file as tables of about `rows` rows, read batch by batch (never whole)."""
    source = pq.ParquetFile(path)
    held, count = [], 0
    for batch in source.iter_batches(batch_size=min(rows, 1_000_000)):
        held.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield pa.Table.from_batches(held, source.schema_arrow)
            held, count = [], 0
    if held or source.metadata.num_rows == 0:
        yield pa.Table.from_batches(held, source.schema_arrow)


def stream_load_parquet(host: str, http_port: int, database: str, name: str, path: Path,
                        *, batch_rows: int = 4_000_000) -> int:
    """Stream Load a Parquet file into table `name`, one load per `batch_rows` rows read from
    the file (the client holds one load's rows and CSV at a time); returns the loads made."""
    loads = 0
    for part in _parquet_chunks(Path(path), batch_rows):
        _stream_load(host, http_port, database, name, part)
        loads += 1
    return loads


def stream_load_tables(host: str, http_port: int, database: str, tables: dict[str, pa.Table],
                       *, log=None, batch_rows: int = 4_000_000) -> list[LoadStats]:
    """Stream Load every table (one load per `batch_rows` rows); returns per-table statistics.
    A table may be an Arrow table or the path of a Parquet file (read chunk by chunk)."""
    stats = []
    for name, table in tables.items():
        began = time.perf_counter()
        if isinstance(table, pa.Table):
            rows, loads = table.num_rows, 0
            for start in range(0, max(table.num_rows, 1), batch_rows):
                _stream_load(host, http_port, database, name, table.slice(start, batch_rows))
                loads += 1
        else:
            rows = pq.ParquetFile(table).metadata.num_rows
            loads = stream_load_parquet(host, http_port, database, name, table,
                                        batch_rows=batch_rows)
        stat = LoadStats(name, rows, loads, time.perf_counter() - began)
        stats.append(stat)
        if log:
            log(f"stream-loaded {name}: {stat.rows} rows in {stat.seconds:.1f} s "
                f"({stat.rows_per_second:,.0f} rows/s, {loads} loads)")
    return stats


def duckdb_connect(tables: dict[str, pa.Table | Path], threads: int | None = None,
                   database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """A DuckDB (in memory unless `database` names a file) holding `tables`, typed as the Arrow
    tables are; a table given as a Parquet path is read by DuckDB itself (`read_parquet`, row
    group by row group), so the client never holds it."""
    con = duckdb.connect(str(database))
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    for name, table in tables.items():
        if isinstance(table, pa.Table):
            con.register("__src", table)
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM __src")
            con.unregister("__src")
        else:
            path = str(table).replace("'", "''")
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM read_parquet('{path}')")
    return con
