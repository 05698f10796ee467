"""Memtable: a load's rows conformed to the tablet schema, sorted by key, pre-aggregated.

Owns what happens to rows between a load and a segment (seed 003 §1: the memtable keeps rows
sorted by key; seed 004: aggregation happens first "in the ETL phase of each load"). Doris's
memtable is a skip list filled row by row; here the whole batch is one Arrow table:

    conform   columns by name in schema order, cast (safely) to the schema's Arrow types,
              NULLs refused in NOT NULL columns
    sort      over the key columns, ascending, NULLs first (packed integer codes sorted by
              numpy where the keys allow, else pc.sort_indices); the sort is stable, so rows
              with equal keys keep their load order
    aggregate AGG_KEYS / UNIQUE_KEYS: merge.merge_sorted (last row wins for REPLACE/UNIQUE);
              DUP_KEYS: nothing
    flush_grouped  the same for the rows of many tablets at once, sorted by (tablet, key)

A load keeps each tablet's rows in a `MemTable` until it reaches `write_buffer_size` or the
process's memtables together pass the `MemTableLimiter`'s soft limit; then it is flushed into
the tablet's pending rowset (storage/rowset_writer.py), so a load's memory is bounded by
configuration, not by its size.
"""

from __future__ import annotations

import threading

import pyarrow as pa
import pyarrow.compute as pc

from storage.errors import StorageError
from storage.key_codes import sorted_order
from storage.merge import merge_sorted
from storage.schema import TabletSchema

GROUP_COLUMN = "__tablet"


def conform(data: pa.Table, schema: TabletSchema) -> pa.Table:
    """`data` with exactly the schema's columns, in order and type; raises StorageError."""
    present = set(data.column_names)  # a list built anew on every access
    missing = [c.name for c in schema.columns if c.name not in present]
    if missing:
        raise StorageError(f"Rows to load lack column(s) {', '.join(missing)}")
    arrays = []
    for col in schema.columns:
        arr = data.column(col.name)
        target = col.type.arrow()
        if arr.type != target:
            try:
                arr = arr.cast(target, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise StorageError(f"Column {col.name} cannot hold the loaded values "
                                   f"as {col.type}: {exc}") from exc
        if not col.nullable and arr.null_count:
            raise StorageError(f"Column {col.name} is NOT NULL but the load has NULL values")
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, names=schema.names).combine_chunks()


def sort_by_key(table: pa.Table, keys: list[str]) -> pa.Table:
    """Stable sort by the key columns, ascending, NULLs first: by packed integer codes where
    the keys allow it (storage/key_codes.py: linear on sorted runs), else by Arrow."""
    if table.num_rows <= 1:
        return table
    order = None
    if table.num_rows >= CODES_MIN_ROWS:
        if any(c.num_chunks > 1 for c in table.columns):  # rowsets concatenated: one copy,
            table = table.combine_chunks()  # then the codes and the take read flat arrays
        order = sorted_order(table, keys)
    if order is None:
        order = pc.sort_indices(table, sort_keys=[(k, "ascending", "at_start") for k in keys])
    return table.take(order)


CODES_MIN_ROWS = 512  # below, Arrow's sort costs less than the codes' fixed cost


def aggregations(schema: TabletSchema, names: list[str]) -> dict[str, str]:
    """How each non-key column among `names` merges."""
    return {n: schema.aggregation_of(n) for n in names if not schema.column(n).is_key}


def flush(data: pa.Table, schema: TabletSchema) -> pa.Table:
    """Rows ready to be written as segments: conformed, sorted and merged by the data model."""
    table = sort_by_key(conform(data, schema), schema.merge_order())
    if schema.merges_on_read:
        table = merge_sorted(table, schema.key_names, aggregations(schema, schema.names))
    return table


def flush_grouped(data: pa.Table, schema: TabletSchema, group: pa.Array) -> tuple[pa.Table, pa.Array]:
    """`flush` of the rows of many tablets at once: `group` names each row's tablet (int64);
    rows come out sorted by (group, key) and merged within a group. Returns (rows, groups)."""
    table = conform(data, schema).append_column(GROUP_COLUMN, group)
    keys = [GROUP_COLUMN, *schema.key_names]
    table = sort_by_key(table, [GROUP_COLUMN, *schema.merge_order()])
    if schema.merges_on_read:
        table = merge_sorted(table, keys, aggregations(schema, schema.names))
    groups = table.column(GROUP_COLUMN)
    return table.drop_columns([GROUP_COLUMN]), groups


DEFAULT_WRITE_BUFFER_SIZE = 200 * 1024 * 1024  # Doris's BE config write_buffer_size


class MemTable:
    """The rows of one tablet a load holds in memory until they are flushed: Arrow chunks as
    the load's batches delivered them (sorted and merged only at the flush, by `flush`)."""

    def __init__(self):
        self.chunks: list[pa.Table] = []
        self.nbytes = 0
        self.num_rows = 0

    def add(self, rows: pa.Table, size: int | None = None) -> int:
        """Keep `rows` (of about `size` bytes, measured when not given); returns the bytes
        they add."""
        size = rows.nbytes if size is None else size
        self.chunks.append(rows)
        self.nbytes += size
        self.num_rows += rows.num_rows
        return size

    def take(self) -> pa.Table | None:
        """All rows held (None when empty), leaving the memtable empty."""
        if not self.chunks:
            return None
        rows = pa.concat_tables(self.chunks) if len(self.chunks) > 1 else self.chunks[0]
        self.chunks, self.nbytes, self.num_rows = [], 0, 0
        return rows


class MemTableLimiter:
    """The bytes held by the memtables of every load in the process, against a soft limit
    (Doris's MemTableMemoryLimiter: mem_limit x load_process_max_memory_limit_percent x
    load_process_soft_mem_limit_percent). A load over the limit flushes its memtables (Doris
    flushes the largest; here all of the load's, catalog/load_sink.py says why); 0 means no
    limit."""

    def __init__(self, soft_limit: int = 0):
        self.soft_limit = soft_limit
        self._held = 0
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        return self._held

    def consume(self, nbytes: int) -> None:
        with self._lock:
            self._held += nbytes

    def release(self, nbytes: int) -> None:
        with self._lock:
            self._held -= nbytes

    def over_limit(self) -> bool:
        return bool(self.soft_limit) and self._held > self.soft_limit
