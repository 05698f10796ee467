"""Loads: one transaction that routes rows to tablets, writes rowsets and publishes them at once.

The life of a load (`load_table`):
 1. `complete_columns`: the target columns get the load's values, the others their DEFAULT
    (or NULL); every column is cast to its type strictly (`catalog.values.coerce_array`);
 2. `route_rows` picks each row's partition, `bucket_ids` its bucket (the same hash everywhere);
 3. `write_rowsets`, without any lock: rows are grouped by (partition, bucket), and for each
    (index, partition, bucket) tablet touched (the base, each rollup, a rollup being built;
    `index_rows` adds a materialized view's computed columns) a pending rowset is written: a small load
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
from storage import RowsetMeta, StorageEngine, bucket_ids
from storage import load_file
from storage.load_file import SMALL_ROWSET_ROWS
from storage.memtable import flush_grouped

_table_locks: dict[int, threading.RLock] = defaultdict(threading.RLock)


def table_lock(table_id: int) -> threading.RLock:
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


@dataclass
class PreparedLoad:
    """A load whose rowsets are written (fsynced, invisible) and not yet published."""

    db: str
    table: str
    txn_id: int
    rowsets: list = field(default_factory=list)  # (partition id, tablet id, RowsetMeta)
    num_rows: int = 0
    label: str | None = None
    source: OlapTable | None = None  # the table object the rowsets were written for
    shape: tuple | None = None  # its _storage_shape then


def load_table(catalog: Catalog, db_name: str, table_name: str, data: pa.Table, now,
               label: str | None = None, partition_ids: list[int] | None = None,
               txn_id: int | None = None) -> tuple[int, int]:
    """Load `data` (columns named as the table's, any subset) into the table.

    A `label` names the load: a database takes each label once (LabelAlreadyUsed otherwise).
    `partition_ids` (INSERT INTO t PARTITION (...)): every row must belong to one of them.
    `txn_id`, when given, was taken by the caller (group commit). Returns (rows loaded,
    transaction id)."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
    if data.num_rows == 0 and label is None:
        for name in data.column_names:
            if table.column(name) is None:
                raise AnalysisError(f"Unknown column '{name}' in '{table.name}'")
        return 0, 0
    prepared = prepare_load(catalog, db_name, table_name, data, now, label, partition_ids, txn_id)
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
    full = complete_columns(table, data, now)
    parts = target_partitions(table, partition_ids)
    part_idx = np.asarray(route_rows(table, full, parts).to_numpy(zero_copy_only=False),
                          dtype=np.int64)
    if partition_ids is not None:
        _check_selected(table, full, parts, part_idx, partition_ids)
    return full, part_idx, _buckets(table, full, parts, part_idx)


def prepare_load(catalog: Catalog, db_name: str, table_name: str, data: pa.Table, now,
                 label: str | None = None, partition_ids: list[int] | None = None,
                 txn_id: int | None = None) -> PreparedLoad:
    """Route `data` to tablets and write a pending rowset in every touched tablet of every
    index, without any lock (`write_rowsets`); nothing is visible until `commit_load`."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
        db_name = catalog.get_db(db_name).name
    _check_label(catalog, db_name, label)
    for name in data.column_names:
        if table.column(name) is None:
            raise AnalysisError(f"Unknown column '{name}' in '{table.name}'")
    with catalog.lock:
        # Re-read: the table may have changed while we converted values.
        table = catalog.get_table(db_name, table_name)
        parts = target_partitions(table, partition_ids)
        shape = _storage_shape(table)
    full, part_idx, buckets = place_rows(table, data, now, partition_ids)
    if full.num_rows:  # max_tablet_version_num (Doris -235), before anything is written
        groups = np.unique(part_idx * (1 << 32) + buckets)
        check_version_count(catalog, [ids[int(k & 0xFFFFFFFF)] for k in groups
                                      for ids in parts[int(k >> 32)].tablets_by_index.values()])
    txn_id = txn_id or catalog.begin_txn()
    rowsets = write_rowsets(catalog.engine, table, parts, full, part_idx, buckets, txn_id)
    return PreparedLoad(db_name, table.name, txn_id, rowsets, full.num_rows, label, table, shape)


def commit_load(catalog: Catalog, prepared: PreparedLoad) -> None:
    """Publish a prepared load: each touched partition's next version, one journal entry that
    also takes the label. Fails (nothing visible, its rowsets aborted) when the table changed
    shape or lost a touched partition meanwhile."""
    try:
        with catalog.lock:
            table = catalog.get_table(prepared.db, prepared.table)
        with _table_locks[table.table_id]:
            with catalog.lock:
                table = catalog.get_table(prepared.db, prepared.table)
                touched = {pid for pid, _, _ in prepared.rowsets}
                missing = [pid for pid in touched
                           if pid not in table.partitions and pid not in table.temp_partitions]
                if (prepared.source is not None and table is not prepared.source) or \
                        (prepared.shape is not None and _storage_shape(table) != prepared.shape):
                    raise AnalysisError(f"Table {prepared.table} changed during the load; "
                                        "load again")
                if missing:
                    raise AnalysisError(f"partition {missing[0]} of table {table.name} was "
                                        f"dropped during the load")
                versions = {pid: table.any_partition(pid).visible_version + 1 for pid in touched}
            # The label is checked again (and held) by the publish; its fsync runs without the
            # catalog lock.
            catalog.publish(prepared.db, table.name, prepared.txn_id, versions,
                            prepared.rowsets, prepared.label)
    except BaseException:
        abort_load(catalog, prepared)
        raise


def abort_load(catalog: Catalog, prepared: PreparedLoad) -> None:
    """Drop a prepared load's pending rowsets (files and load-file references)."""
    for _, tid, meta in prepared.rowsets:
        if catalog.engine.has_tablet(tid):
            catalog.engine.get_tablet(tid).abort_rowset(meta)


def _check_selected(table: OlapTable, data: pa.Table, parts: list, part_idx: np.ndarray,
                    partition_ids: list[int]) -> None:
    """Rows routed outside the named partitions fail the load (Doris's sink knows only those)."""
    ids = np.array([p.partition_id for p in parts], dtype=np.int64)[part_idx]
    outside = ~np.isin(ids, np.array(partition_ids, dtype=np.int64))
    if outside.any():
        raise no_partition_error(table, data, int(np.argmax(outside)))


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
        # A snapshot of the indexes: an ALTER job may add or drop one while this load writes.
        for index_id, index in list(table.indexes.items()):
            if small:
                name = load_file.file_name(txn_id, index_id)
                rows, group_col = flush_grouped(index_rows(table, index, full),
                                                table.tablet_schema(index_id),
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
                    meta = tablet.write_rowset(index_rows(table, index, chunk), txn_id)
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


__all__ = ["load_table", "prepare_load", "commit_load", "place_rows", "PreparedLoad",
           "DataQualityError"]
