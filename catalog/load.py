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
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from catalog.catalog import Catalog
from catalog.compaction import check_version_count
from catalog.errors import AnalysisError, DataQualityError, LabelAlreadyUsed
from catalog.index_rows import index_rows
from catalog.model import OlapTable
from catalog.partitions import no_partition_error, route_rows
from catalog.values import coerce_array, parse_value
from storage import bucket_ids

_table_locks: dict[int, threading.RLock] = defaultdict(threading.RLock)


def table_lock(table_id: int) -> threading.RLock:
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


@dataclass
class PreparedLoad:
    """A load whose rowsets are written (fsynced, invisible) and not yet published."""

    db: str
    table: str
    txn_id: int
    rowsets: list = field(default_factory=list)  # (partition id, tablet id, RowsetMeta)
    num_rows: int = 0
    label: str | None = None


def load_table(catalog: Catalog, db_name: str, table_name: str, data: pa.Table, now,
               label: str | None = None,
               partition_ids: list[int] | None = None) -> tuple[int, int]:
    """Load `data` (columns named as the table's, any subset) into the table.

    A `label` names the load: a database takes each label once (LabelAlreadyUsed otherwise).
    `partition_ids` (INSERT INTO t PARTITION (...)): every row must belong to one of them.
    Returns (rows loaded, transaction id)."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
    if data.num_rows == 0 and label is None:
        for name in data.column_names:
            if table.column(name) is None:
                raise AnalysisError(f"Unknown column '{name}' in '{table.name}'")
        return 0, 0
    with _table_locks[table.table_id]:
        prepared = prepare_load(catalog, db_name, table_name, data, now, label, partition_ids)
        commit_load(catalog, prepared)
    return prepared.num_rows, prepared.txn_id


def target_partitions(table: OlapTable, partition_ids: list[int] | None = None) -> list:
    """The partitions a load's rows may go to: the table's, or the temporary partitions named by
    `INSERT INTO t TEMPORARY PARTITION (...)`."""
    temps = [p for p in table.temp_partitions.values()
             if p.partition_id in (partition_ids or ())]
    if temps:
        return sorted(temps, key=lambda p: p.partition_id)
    return table.sorted_partitions()


def place_rows(table: OlapTable, data: pa.Table, now, partition_ids: list[int] | None = None
               ) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """Every column of the table (defaults filled, values cast strictly), and each row's
    partition (index into `target_partitions(table, partition_ids)`) and bucket: the routing of
    every load. With `partition_ids` (`INSERT INTO t PARTITION (...)`) every row must belong to
    one of those partitions."""
    full = _complete_columns(table, data, now)
    parts = target_partitions(table, partition_ids)
    part_idx = np.asarray(route_rows(table, full, parts).to_numpy(zero_copy_only=False),
                          dtype=np.int64)
    if partition_ids is not None:
        _check_selected(table, full, parts, part_idx, partition_ids)
    return full, part_idx, _buckets(table, full, parts, part_idx)


def prepare_load(catalog: Catalog, db_name: str, table_name: str, data: pa.Table, now,
                 label: str | None = None,
                 partition_ids: list[int] | None = None) -> PreparedLoad:
    """Route `data` to tablets and write each (partition, bucket) group as a pending rowset of
    every index's tablet; nothing is visible until `commit_load`."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
        db_name = catalog.get_db(db_name).name
    _check_label(catalog, db_name, label)
    for name in data.column_names:
        if table.column(name) is None:
            raise AnalysisError(f"Unknown column '{name}' in '{table.name}'")
    with _table_locks[table.table_id]:
        with catalog.lock:
            # Re-read: the table may have changed while we converted values.
            table = catalog.get_table(db_name, table_name)
            parts = target_partitions(table, partition_ids)
        full, part_idx, buckets = place_rows(table, data, now, partition_ids)
        order = np.lexsort((buckets, part_idx))
        keys = part_idx[order] * (1 << 32) + buckets[order]
        bounds = np.flatnonzero(np.diff(keys)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [len(keys)]))
        if full.num_rows:  # max_tablet_version_num (Doris -235), before anything is written
            check_version_count(catalog, [ids[int(buckets[order[s]])] for s in starts
                                          for ids in parts[int(part_idx[order[s]])]
                                          .tablets_by_index.values()])
        prepared = PreparedLoad(db_name, table.name, catalog.begin_txn(), [], full.num_rows, label)
        for s, e in zip(starts, ends) if full.num_rows else ():
            pi, b = int(part_idx[order[s]]), int(buckets[order[s]])
            p = parts[pi]
            chunk = full.take(pa.array(order[s:e]))
            for index_id, tablet_ids in p.tablets_by_index.items():  # base, rollups, shadows
                tid = tablet_ids[b]
                rows = index_rows(table, table.indexes[index_id], chunk)
                meta = catalog.engine.get_tablet(tid).write_rowset(rows, prepared.txn_id)
                prepared.rowsets.append((p.partition_id, tid, meta))
    return prepared


def commit_load(catalog: Catalog, prepared: PreparedLoad) -> None:
    """Publish a prepared load: each touched partition's next version, one journal entry that
    also takes the label. Fails (nothing visible) when a partition went away meanwhile."""
    with catalog.lock:
        table = catalog.get_table(prepared.db, prepared.table)
    with _table_locks[table.table_id]:
        with catalog.lock:
            table = catalog.get_table(prepared.db, prepared.table)
            touched = {pid for pid, _, _ in prepared.rowsets}
            missing = [pid for pid in touched
                       if pid not in table.partitions and pid not in table.temp_partitions]
            if missing:
                raise AnalysisError(f"partition {missing[0]} of table {table.name} was dropped "
                                    f"during the load")
            versions = {pid: table.any_partition(pid).visible_version + 1 for pid in touched}
            _check_label(catalog, prepared.db, prepared.label)  # a concurrent load may have taken it
            catalog.publish(prepared.db, table.name, prepared.txn_id, versions,
                            prepared.rowsets, prepared.label)


def _check_selected(table: OlapTable, data: pa.Table, parts: list, part_idx: np.ndarray,
                    partition_ids: list[int]) -> None:
    """Rows routed outside the named partitions fail the load (Doris's sink knows only those)."""
    ids = np.array([p.partition_id for p in parts], dtype=np.int64)[part_idx]
    outside = ~np.isin(ids, np.array(partition_ids, dtype=np.int64))
    if outside.any():
        raise no_partition_error(table, data, int(np.argmax(outside)))


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


__all__ = ["load_table", "prepare_load", "commit_load", "place_rows", "PreparedLoad",
           "DataQualityError"]
