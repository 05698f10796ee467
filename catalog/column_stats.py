"""Column statistics (Doris's ANALYZE TABLE): what `SHOW COLUMN STATS` and `SHOW TABLE STATS`
print, computed from a full read of the table's base index.

Per column: count, ndv (exact distinct count; Doris estimates), num_null, data_size (fixed
widths times rows; strings: their bytes), avg_size_byte, min, max. Kept per table id in
`Catalog.column_stats` and journaled:

    op            data
    column_stats  {table_id, row_count, time, columns: {name: {count, ndv, ...}}}
    drop_stats    {table_id, columns: [name] | null (all)}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from catalog.catalog import Catalog

_FIXED = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "LARGEINT": 16,
          "FLOAT": 4, "DOUBLE": 8, "DATE": 4, "DATETIME": 8, "DECIMAL": 16}


class ColumnAccumulator:
    """One column's statistics over the batches of a read."""

    def __init__(self, kind: str):
        self.kind = kind
        self.count = self.nulls = self.size = 0
        self.min = self.max = None
        self.distinct: list[pa.Array] = []

    def add(self, values: pa.ChunkedArray | pa.Array) -> None:
        self.count += len(values)
        self.nulls += values.null_count
        if len(values) == values.null_count:
            return
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type) or \
                pa.types.is_binary(values.type):
            self.size += int(pc.sum(pc.binary_length(values)).as_py() or 0)
        else:
            self.size += (len(values) - values.null_count) * _FIXED.get(self.kind, 8)
        if not (pa.types.is_binary(values.type)):
            bounds = pc.min_max(values)
            lo, hi = bounds["min"].as_py(), bounds["max"].as_py()
            self.min = lo if self.min is None or (lo is not None and lo < self.min) else self.min
            self.max = hi if self.max is None or (hi is not None and hi > self.max) else self.max
        self.distinct.append(pc.unique(values.combine_chunks()
                                       if isinstance(values, pa.ChunkedArray) else values))

    def result(self) -> dict:
        ndv = 0
        if self.distinct:
            ndv = len(pc.unique(pa.chunked_array(self.distinct).combine_chunks()).drop_null())
        quote = self.kind in ("CHAR", "VARCHAR", "STRING", "DATE", "DATETIME")

        def show(v):
            if v is None:
                return "NULL"
            return f"'{v}'" if quote else str(v)
        return {"count": self.count, "ndv": ndv, "num_null": self.nulls, "data_size": self.size,
                "avg_size_byte": self.size / self.count if self.count else 0.0,
                "min": show(self.min), "max": show(self.max)}


ANALYZE_RECORD_LIMIT = 20000  # Doris's FE config analyze_record_limit: jobs SHOW ANALYZE keeps


def record(cat: Catalog, table_id: int, row_count: int, columns: dict[str, dict],
           job: dict) -> int:
    """Journal an ANALYZE's statistics with its job (`job`: db, table, columns, sync,
    start_time); the job's id, allocated as Doris allocates ids."""
    with cat.lock:
        job_id = cat._alloc_id()
        cat._log("column_stats", {"table_id": table_id, "row_count": row_count,
                                  "time": cat.clock(), "columns": columns,
                                  "job": {**job, "job_id": job_id}})
        return job_id


def drop(cat: Catalog, table_id: int, columns: list[str] | None) -> None:
    with cat.lock:
        cat._log("drop_stats", {"table_id": table_id, "columns": columns})


def _apply_stats(cat: Catalog, data: dict) -> None:
    entry = cat.column_stats.setdefault(str(data["table_id"]), {"columns": {}})
    entry["row_count"], entry["time"] = data["row_count"], data["time"]
    for name, stats in data["columns"].items():
        entry["columns"][name] = {**stats, "time": data["time"]}
    job = data.get("job")
    if job is not None:  # SHOW ANALYZE's record (catalog images keep them)
        cat.next_id = max(cat.next_id, job["job_id"])
        cat.analyze_jobs.append({**job, "end_time": data["time"]})
        del cat.analyze_jobs[:-ANALYZE_RECORD_LIMIT]


def _apply_drop(cat: Catalog, data: dict) -> None:
    key = str(data["table_id"])
    if data["columns"] is None:
        cat.column_stats.pop(key, None)
    elif key in cat.column_stats:
        for name in data["columns"]:
            cat.column_stats[key]["columns"].pop(name, None)


APPLY = {"column_stats": _apply_stats, "drop_stats": _apply_drop}
