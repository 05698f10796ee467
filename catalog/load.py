"""Loads: one transaction that routes rows to tablets, writes rowsets and publishes them at once.

The life of a load (`load_table`):
 1. `complete_columns`: the target columns get the load's values, the others their DEFAULT
    (or NULL); every column is cast to its type strictly (`catalog.values.coerce_array`);
 2. `route_rows` picks each row's partition, `bucket_ids` its bucket (the same hash everywhere);
 3. `write_rowsets`, without any lock: rows are grouped by (partition, bucket), and for each
    (index, partition, bucket) tablet touched a pending rowset is written: a small load
    (< SMALL_ROWSET_ROWS rows per touched tablet on average) writes one load file per index
    for all its tablets (one vectorised sort + merge, one file, one fsync; each tablet's rowset
    is a slice of it: storage/load_file.py), a larger one segment files per tablet
    (`Tablet.write_rowset`: memtable sort + model pre-aggregation + segments, fsynced);
 4. `Catalog.publish`, under the table's load lock and the catalog lock, journals every
    rowset with each touched partition's next version in one entry (one fsync) and applies
    it: readers see the whole load or none of it.
Any failure before step 4 leaves only unpublished files, removed at once or at the next start.
Loads into one table write concurrently; the per-table lock serialises only their publishes
(versions are allocated in order) with partition DDL, DELETE and compaction's swap.
"""

from __future__ import annotations

import threading
from collections import defaultdict

import numpy as np
import pyarrow as pa

from catalog.catalog import Catalog
from catalog.errors import AnalysisError, DataQualityError, LabelAlreadyUsed
from catalog.model import OlapTable
from catalog.partitions import route_rows
from catalog.values import coerce_array, parse_value
from storage import RowsetMeta, StorageEngine, bucket_ids
from storage import load_file
from storage.load_file import SMALL_ROWSET_ROWS
from storage.memtable import flush_grouped

_table_locks: dict[int, threading.Lock] = defaultdict(threading.Lock)


def table_lock(table_id: int) -> threading.Lock:
    """The lock that serialises loads into a table (and partition DDL with them)."""
    return _table_locks[table_id]


def complete_columns(table: OlapTable, data: pa.Table, now) -> pa.Table:
    n = data.num_rows
    given = {name.lower(): name for name in data.column_names}
    arrays, names = [], []
    for col in table.columns:
        if col.name.lower() in given:
            arr = data.column(given[col.name.lower()])
        elif col.default == "CURRENT_TIMESTAMP":
            arr = pa.array([now] * n, pa.timestamp("us")) if n else pa.array([], pa.timestamp("us"))
        elif col.default is not None:
            value = parse_value(col.type, col.default)
            arr = pa.array([value] * n, col.type.arrow())
        elif col.nullable:
            arr = pa.nulls(n, col.type.arrow())
        else:
            raise AnalysisError(f"Column has no default value. column: {col.name}")
        arrays.append(coerce_array(arr, col.type, col.nullable, col.name))
        names.append(col.name)
    return pa.Table.from_arrays(arrays, names=names)


def load_table(catalog: Catalog, db_name: str, table_name: str, data: pa.Table, now,
               label: str | None = None, txn_id: int | None = None) -> tuple[int, int]:
    """Load `data` (columns named as the table's, any subset) into the table.

    A `label` names the load: a database takes each label once (LabelAlreadyUsed otherwise);
    `txn_id`, when given, was taken by the caller (group commit). Returns (rows loaded,
    transaction id)."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
        db_name = catalog.get_db(db_name).name
    _check_label(catalog, db_name, label)
    for name in data.column_names:
        if table.column(name) is None:
            raise AnalysisError(f"Unknown column '{name}' in '{table.name}'")
    if data.num_rows == 0 and label is None:
        return 0, 0
    full = complete_columns(table, data, now)
    with catalog.lock:
        # Re-read: the table may have changed while we converted values.
        table = catalog.get_table(db_name, table_name)
        parts = table.sorted_partitions()
    part_idx = np.asarray(route_rows(table, full).to_numpy(zero_copy_only=False), dtype=np.int64)
    buckets = _buckets(table, full, parts, part_idx)
    txn_id = txn_id or catalog.begin_txn()
    shape = _storage_shape(table)
    # Rowsets are written without any lock (pending, invisible); only the publish serialises.
    rowsets = write_rowsets(catalog.engine, table, parts, full, part_idx, buckets, txn_id)
    try:
        with _table_locks[table.table_id]:
            with catalog.lock:
                current = catalog.get_table(db_name, table_name)
                touched = {pid for pid, _, _ in rowsets}
                if current is not table or not touched <= set(table.partitions) or \
                        _storage_shape(current) != shape:
                    raise AnalysisError(f"Table {table_name} changed during the load; "
                                        "load again")
                versions = {pid: table.partitions[pid].visible_version + 1 for pid in touched}
            # The label is checked again (and held) by the publish; its fsync runs without the
            # catalog lock.
            catalog.publish(db_name, table.name, txn_id, versions, rowsets, label)
    except BaseException:
        for _, tid, meta in rowsets:
            if catalog.engine.has_tablet(tid):
                catalog.engine.get_tablet(tid).abort_rowset(meta)
        raise
    return full.num_rows, txn_id


def write_rowsets(engine: StorageEngine, table: OlapTable, parts: list, full: pa.Table,
                  part_idx: np.ndarray, buckets: np.ndarray,
                  txn_id: int) -> list[tuple[int, int, RowsetMeta]]:
    """One pending rowset per (index, partition, bucket) tablet the rows touch.

    A small load (few rows per touched tablet on average) writes, per index, one load file for
    all its tablets (storage/load_file.py: one sort, one write, one fsync) and each tablet's
    rowset is a slice of it; a larger one writes segment files per tablet."""
    if not full.num_rows:
        return []
    keys = part_idx * (1 << 32) + buckets
    groups, group_of_row = np.unique(keys, return_inverse=True)
    targets = [(parts[int(k >> 32)], int(k & 0xFFFFFFFF)) for k in groups]
    small = full.num_rows < SMALL_ROWSET_ROWS * len(groups)
    order = None if small else np.argsort(group_of_row, kind="stable")
    bounds = np.searchsorted(group_of_row[order], np.arange(len(groups) + 1)) if not small else None
    rowsets = []
    try:
        for index_id in table.indexes:
            if small:
                name = load_file.file_name(txn_id, index_id)
                rows, group_col = flush_grouped(full, table.tablet_schema(index_id),
                                                pa.array(group_of_row.astype(np.int64)))
                size = engine.load_files.write(name, rows)
                starts = np.searchsorted(group_col.to_numpy(), np.arange(len(groups) + 1))
            for g, (p, b) in enumerate(targets):
                tablet = engine.get_tablet(p.tablets_by_index[index_id][b])
                if small:
                    count = int(starts[g + 1] - starts[g])
                    meta = tablet.adopt_load_slice(name, int(starts[g]), count,
                                                   size * count // max(rows.num_rows, 1), txn_id)
                else:
                    chunk = full.take(pa.array(order[bounds[g]:bounds[g + 1]]))
                    meta = tablet.write_rowset(chunk, txn_id)
                rowsets.append((p.partition_id, tablet.tablet_id, meta))
    except BaseException:
        for _, tid, meta in rowsets:
            engine.get_tablet(tid).abort_rowset(meta)
        raise
    return rowsets


def _storage_shape(table: OlapTable) -> tuple:
    """What the rowsets a load wrote depend on: the indexes (base, rollups) and the optional
    indexes their segments carry. A load whose table changed shape meanwhile is refused."""
    return (tuple(table.indexes), tuple(i.index_id for i in table.table_indexes),
            table.properties.get("bloom_filter_columns"))


def _check_label(catalog: Catalog, db_name: str, label: str | None) -> None:
    if label is None:
        return
    used = catalog.label_txn(db_name, label)
    if used is not None:
        raise LabelAlreadyUsed(label, used)


def _buckets(table: OlapTable, data: pa.Table, parts: list, part_idx: np.ndarray) -> np.ndarray:
    dist = table.distribution
    n = data.num_rows
    num_buckets = np.array([p.buckets for p in parts], dtype=np.int64)[part_idx]
    if dist.kind == "RANDOM" or not dist.columns:
        # Random distribution: spread rows round-robin, starting at a random bucket.
        start = np.random.randint(0, 1 << 30)
        return (np.arange(n, dtype=np.int64) + start) % num_buckets
    cols = [data.column(c).combine_chunks() for c in dist.columns]
    types = [table.column(c).type for c in dist.columns]
    # Hash once, then take the modulo per row's partition bucket count.
    if len(set(num_buckets.tolist())) == 1:
        return np.asarray(bucket_ids(cols, types, int(num_buckets[0])), dtype=np.int64)
    raw = np.asarray(bucket_ids(cols, types, 1 << 32), dtype=np.int64)  # the raw CRC
    return raw % num_buckets


__all__ = ["load_table", "DataQualityError"]
