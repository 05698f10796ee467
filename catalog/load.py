"""Loads: one transaction that routes rows to tablets, writes rowsets and publishes them at once.

The life of a load (`load_table`):
 1. `_complete_columns`: the target columns get the load's values, the others their DEFAULT
    (or NULL); every column is cast to its type strictly (`catalog.values.coerce_array`);
 2. `route_rows` picks each row's partition, `bucket_ids` its bucket (the same hash everywhere);
 3. rows are grouped by (partition, bucket) with one stable argsort, and each group is written
    as a rowset of the bucket's tablet in every materialized index of the partition (the base,
    each rollup, a rollup being built; `index_rows` adds a materialized view's computed
    columns; `Tablet.write_rowset`: the index's columns, memtable sort + model
    pre-aggregation by the index's keys + segment files, fsynced, not yet visible);
 4. `Catalog.publish` journals every rowset with each touched partition's next version and
    applies it: readers see the whole load or none of it.
Any failure before step 4 leaves only unpublished files, removed at the next start.
Loads into one table are serialised by a per-table lock (versions are allocated in order).
"""

from __future__ import annotations

import threading
from collections import defaultdict

import numpy as np
import pyarrow as pa

from catalog.catalog import Catalog
from catalog.errors import AnalysisError, DataQualityError, LabelAlreadyUsed
from catalog.index_rows import index_rows
from catalog.model import OlapTable
from catalog.partitions import route_rows
from catalog.values import coerce_array, parse_value
from storage import bucket_ids

_table_locks: dict[int, threading.Lock] = defaultdict(threading.Lock)


def table_lock(table_id: int) -> threading.Lock:
    """The lock that serialises loads into a table (and partition DDL with them)."""
    return _table_locks[table_id]


def _complete_columns(table: OlapTable, data: pa.Table, now) -> pa.Table:
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
               label: str | None = None) -> tuple[int, int]:
    """Load `data` (columns named as the table's, any subset) into the table.

    A `label` names the load: a database takes each label once (LabelAlreadyUsed otherwise).
    Returns (rows loaded, transaction id)."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
        db_name = catalog.get_db(db_name).name
    _check_label(catalog, db_name, label)
    for name in data.column_names:
        if table.column(name) is None:
            raise AnalysisError(f"Unknown column '{name}' in '{table.name}'")
    if data.num_rows == 0 and label is None:
        return 0, 0
    full = _complete_columns(table, data, now)
    with _table_locks[table.table_id]:
        with catalog.lock:
            # Re-read: the table may have changed while we converted values.
            table = catalog.get_table(db_name, table_name)
            parts = table.sorted_partitions()
        part_idx = np.asarray(route_rows(table, full).to_numpy(zero_copy_only=False), dtype=np.int64)
        buckets = _buckets(table, full, parts, part_idx)
        order = np.lexsort((buckets, part_idx))
        keys = part_idx[order] * (1 << 32) + buckets[order]
        bounds = np.flatnonzero(np.diff(keys)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [len(keys)]))
        txn_id = catalog.begin_txn()
        rowsets = []
        touched: set[int] = set()
        for s, e in zip(starts, ends) if full.num_rows else ():
            pi, b = int(part_idx[order[s]]), int(buckets[order[s]])
            p = parts[pi]
            chunk = full.take(pa.array(order[s:e]))
            for index_id, tablet_ids in p.tablets_by_index.items():  # base, rollups, shadows
                tid = tablet_ids[b]
                rows = index_rows(table, table.indexes[index_id], chunk)
                meta = catalog.engine.get_tablet(tid).write_rowset(rows, txn_id)
                rowsets.append((p.partition_id, tid, meta))
            touched.add(p.partition_id)
        versions = {pid: table.partitions[pid].visible_version + 1 for pid in touched}
        with catalog.lock:
            _check_label(catalog, db_name, label)  # a concurrent load may have taken it
            catalog.publish(db_name, table.name, txn_id, versions, rowsets, label)
    return full.num_rows, txn_id


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
