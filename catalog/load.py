"""Loads: one transaction that routes rows to tablets, writes rowsets and publishes them at once.

The life of a load (`load_table`):
 1. `complete_columns`: the target columns get the load's values, the others their DEFAULT
    (or NULL); every column is cast to its type strictly (`catalog.values.coerce_array`);
 2. `route_rows` picks each row's partition, `bucket_ids` its bucket (the same hash everywhere);
 3. without any lock, `OlapTableSink` (catalog/load_sink.py) puts each (index, partition,
    bucket) tablet's rows in its memtable (`index_rows` adds a materialized view's computed
    columns), batch by batch for a streamed load, and flushes memtables into pending rowsets
    at `write_buffer_size` or when loads' memtables pass their memory limit (segments:
    memtable sort + model pre-aggregation, fsynced); a small load (< SMALL_ROWSET_ROWS rows
    per touched tablet on average, never flushed) writes one load file per index for all its
    tablets instead (one vectorised sort + merge, one file, one fsync; each tablet's rowset is
    a slice of it: storage/load_file.py);
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
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from catalog import auto_increment
from catalog.catalog import Catalog
from catalog.debug_points import debug_point
from catalog.errors import AnalysisError, DataQualityError
from catalog.hidden_columns import fill_hidden
from catalog.model import OlapTable
from catalog.partitions import no_partition_error, route_rows
from catalog.unique_model import is_merge_on_write
from catalog.values import coerce_array, parse_value
from storage.objects import EMPTY_OBJECT
from storage.types import OBJECT_KINDS
from storage import bucket_ids, cpu_slots

_table_locks: dict[int, threading.RLock] = defaultdict(threading.RLock)


def table_lock(table_id: int) -> threading.RLock:
    """The lock that serialises loads into a table (and partition DDL with them)."""
    return _table_locks[table_id]


def complete_columns(table: OlapTable, data: pa.Table, now) -> pa.Table:
    n = data.num_rows
    given = {name.lower(): name for name in data.column_names}
    arrays, names = [], []
    for col in table.columns:
        if col.auto_increment:  # ids where none is given: catalog/auto_increment.py
            low = col.name.lower()
            arr = auto_increment.fill(table, col,
                                      data.column(given[low]) if low in given else None, n)
        elif col.name.lower() in given:
            arr = data.column(given[col.name.lower()])
        elif col.default == "CURRENT_TIMESTAMP":
            arr = pa.array([now] * n, pa.timestamp("us")) if n else pa.array([], pa.timestamp("us"))
        elif col.default is not None:
            value = parse_value(col.type, col.default)
            arr = pa.array([value] * n, col.type.arrow())
        elif col.type.kind in OBJECT_KINDS:  # Doris's forced default: the empty HLL / BITMAP
            arr = pa.array([EMPTY_OBJECT[col.type.kind]] * n, pa.string())
        elif col.nullable:
            arr = pa.nulls(n, col.type.arrow())
        else:
            raise AnalysisError(f"Column has no default value. column: {col.name}")
        arrays.append(coerce_array(arr, col.type, col.nullable, col.name))
        names.append(col.name)
    if table.hidden_columns:  # __DORIS_DELETE_SIGN__, ...: catalog/hidden_columns.py
        hidden = fill_hidden(table, {k: data.column(v) for k, v in given.items()},
                             dict(zip(names, arrays)), n)
        for col in table.hidden_columns:
            arrays.append(coerce_array(hidden[col.name], col.type, col.nullable, col.name))
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
    shape: tuple | None = None  # its storage_shape then
    gate: object = None  # its GatePass of the table's load gate (catalog/load_gate.py)
    source_type: str | None = None  # Doris's LoadJobSourceType (SHOW PROC '/transactions')

    def leave_gate(self) -> None:
        """The load is published or aborted: shape-changing DDL may go on (once)."""
        gate, self.gate = self.gate, None
        if gate is not None:
            gate.leave()


def load_table(catalog: Catalog, db_name: str, table_name: str, data: pa.Table, now,
               label: str | None = None, partition_ids: list[int] | None = None,
               txn_id: int | None = None) -> tuple[int, int]:
    """Load `data` (columns named as the table's, any subset) into the table.

    A `label` names the load: a database takes each label once (LabelAlreadyUsed otherwise).
    `partition_ids` (INSERT INTO t PARTITION (...)): every row must belong to one of them.
    `txn_id`, when given, was taken by the caller (group commit). Returns (rows loaded,
    transaction id)."""
    return load_batches(catalog, db_name, table_name, [data], now, label, partition_ids, txn_id)


def load_batches(catalog: Catalog, db_name: str, table_name: str, batches: Iterable[pa.Table],
                 now, label: str | None = None, partition_ids: list[int] | None = None,
                 txn_id: int | None = None, source_type: str | None = None) -> tuple[int, int]:
    """`load_table` of rows that arrive in batches (INSERT ... SELECT's result stream): each
    batch goes to the tablets' memtables as it comes (catalog/load_sink.py), so the load
    holds at most its memtables, whatever its size. One transaction, one version."""
    from catalog.load_sink import OlapTableSink  # it imports this module
    sink = OlapTableSink(catalog, db_name, table_name, now, label, partition_ids, txn_id)
    try:
        for data in batches:
            sink.write(data)
        if sink.num_rows == 0 and label is None:
            sink.abort()  # nothing to publish (Doris skips the transaction for 0 rows)
            return 0, 0
        prepared = sink.finish()
    except BaseException:
        sink.abort()
        raise
    prepared.source_type = source_type
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


def place_rows(table: OlapTable, data: pa.Table, now, partition_ids: list[int] | None = None,
               parts: list | None = None) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """Every column of the table (defaults filled, values cast strictly), and each row's
    partition (index into `parts`, by default `target_partitions(table, partition_ids)`) and
    bucket: the routing of every load. With `partition_ids` (`INSERT INTO t PARTITION (...)`)
    every row must belong to one of those partitions."""
    full = complete_columns(table, data, now)
    parts = target_partitions(table, partition_ids) if parts is None else parts
    part_idx = np.asarray(route_rows(table, full, parts).to_numpy(zero_copy_only=False),
                          dtype=np.int64)
    if partition_ids is not None:
        _check_selected(table, full, parts, part_idx, partition_ids)
    return full, part_idx, _buckets(table, full, parts, part_idx)


def prepare_load(catalog: Catalog, db_name: str, table_name: str, data: pa.Table, now,
                 label: str | None = None, partition_ids: list[int] | None = None,
                 txn_id: int | None = None) -> PreparedLoad:
    """Route `data` to tablets and write a pending rowset in every touched tablet of every
    index, without any lock (catalog/load_sink.py); nothing is visible until `commit_load`."""
    from catalog.load_sink import OlapTableSink  # it imports this module
    sink = OlapTableSink(catalog, db_name, table_name, now, label, partition_ids, txn_id)
    try:
        sink.write(data)
    except BaseException:
        sink.abort()
        raise
    return sink.finish()


def commit_load(catalog: Catalog, prepared: PreparedLoad) -> None:
    """Publish a prepared load: each touched partition's next version, one journal entry that
    also takes the label. Fails (nothing visible, its rowsets aborted) when the table changed
    shape or lost a touched partition meanwhile.

    Loads into one table publish in batches (flat combining): a load queues itself, then takes
    the table's load lock; whoever holds it publishes every load queued by then (versions in
    queue order, one journal write and fsync for all, catalog/catalog.py:publish_many), and
    the others find theirs done when they get the lock. With many concurrent writers the lock
    changes hands once per batch instead of once per load."""
    item = _QueuedPublish(prepared)
    try:
        debug_point("load.before_publish")  # the load's files written, nothing journaled
        with catalog.lock:
            table = catalog.get_table(prepared.db, prepared.table)
        queue = _publish_queues[table.table_id]
        lock = _table_locks[table.table_id]
        # A caller already holding the lock (a DELETE's sign rows) serialises its own read and
        # write against every other load: it publishes its load alone. So does a load of a
        # merge-on-write table: its delete bitmap is computed against the rowsets published
        # before it, which a batch would not have applied yet.
        alone = lock._is_owned() or is_merge_on_write(table)
        with queue.mutex:
            queue.items.append(item)
        if _take_unless_done(lock, item):
            try:
                with queue.mutex:
                    if alone:
                        queue.items.remove(item)
                        batch = [item]
                    else:
                        batch, queue.items = queue.items, []
                _publish_batch(catalog, batch)
            finally:
                lock.release()
        if item.error is not None:
            raise item.error
    except BaseException:
        if not item.durable:  # a durable publish is replayed at restart: its files stay
            abort_load(catalog, prepared)
        raise
    finally:
        prepared.leave_gate()


def _take_unless_done(lock: threading.RLock, item: _QueuedPublish) -> bool:
    """Take the table's load lock to publish `item`'s batch; False (the lock not held) when
    another load published it meanwhile. While the lock is busy (another load publishing,
    its journal fsync included) the caller's CPU slot serves another statement
    (storage/cpu_slots.py)."""
    if not lock.acquire(blocking=False):
        with cpu_slots.blocking():
            lock.acquire()
            if item.done:
                lock.release()
                return False
    if item.done:
        lock.release()
        return False
    return True


@dataclass
class _QueuedPublish:
    prepared: PreparedLoad
    done: bool = False
    error: BaseException | None = None
    durable: bool = False  # its publish entry is in the journal: never aborted after that


@dataclass
class _PublishQueue:
    mutex: threading.Lock = field(default_factory=threading.Lock)
    items: list[_QueuedPublish] = field(default_factory=list)


_publish_queues: dict[int, _PublishQueue] = defaultdict(_PublishQueue)


def _publish_batch(catalog: Catalog, batch: list[_QueuedPublish]) -> None:
    """Publish the queued loads of one table (with its load lock held): each checked and given
    its versions under the catalog lock, then all journaled at once; a load that fails its
    check fails alone, a journal failure fails them all. Marks every item done."""
    entries, taken = [], []
    try:
        with catalog.lock:
            next_version: dict[int, int] = {}
            for item in batch:
                p = item.prepared
                try:
                    table = catalog.get_table(p.db, p.table)
                    _check_publishable(catalog, table, p)
                    catalog.reserve_label(p.db, p.label, p.txn_id)
                except BaseException as exc:  # noqa: BLE001 - this load's own error
                    item.error = exc
                    continue
                versions = {}
                for pid in {pid for pid, _, _ in p.rowsets}:
                    versions[pid] = next_version.get(
                        pid, table.any_partition(pid).visible_version) + 1
                    next_version[pid] = versions[pid]
                entries.append(catalog.publish_data(p.db, table.name, p.txn_id, versions,
                                                    p.rowsets, p.label, p.source_type))
                taken.append(item)
        if entries:
            catalog.publish_many(entries, on_durable=lambda: _mark_durable(taken))
    except BaseException as exc:
        for item in taken:
            item.error = exc
        raise
    finally:
        for item in taken:
            catalog.release_label(item.prepared.db, item.prepared.label)
        for item in batch:
            item.done = True


def _mark_durable(items: list[_QueuedPublish]) -> None:
    for item in items:
        item.durable = True


def _check_publishable(catalog: Catalog, table: OlapTable, prepared: PreparedLoad) -> None:
    """Refuse a load whose table changed shape since its sink opened, or lost a partition it
    wrote; the caller holds the table's load lock and the catalog lock. Two changes are not
    refusals: an ALTER job's shadow index added meanwhile while the job is WAITING_TXN (it
    waits for this load, and converts its rows from the base: catalog/rollup_job.py), and a
    cancelled job's shadow index gone meanwhile (the load's rowsets of it are dropped here)."""
    touched = {pid for pid, _, _ in prepared.rowsets}
    missing = [pid for pid in touched
               if pid not in table.partitions and pid not in table.temp_partitions]
    if (prepared.source is not None and table is not prepared.source) or \
            (prepared.shape is not None and not _same_shape(catalog, table, prepared.shape)):
        raise AnalysisError(f"Table {prepared.table} changed during the load; load again")
    if missing:
        raise AnalysisError(f"partition {missing[0]} of table {table.name} was dropped "
                            f"during the load")
    if prepared.shape is not None and set(prepared.shape[0]) - set(table.indexes):
        kept, gone = [], []
        for r in prepared.rowsets:
            (kept if r[1] in table.any_partition(r[0]).tablets else gone).append(r)
        prepared.rowsets = kept
        for _, tid, meta in gone:
            if catalog.engine.has_tablet(tid):
                catalog.engine.get_tablet(tid).abort_rowset(meta)


def _same_shape(catalog: Catalog, table: OlapTable, shape: tuple) -> bool:
    """The load wrote every index the table has now but the shadow indexes of jobs still
    WAITING_TXN, the table has every index it wrote but cancelled jobs' shadow indexes, and
    the optional indexes its segments carry are the table's. (An index dropped or swapped out
    by a schema change still refuses it: its rows were made for the old schema.)"""
    now = storage_shape(table)
    if now == shape:
        return True
    if now[1:] != tuple(shape[1:]):
        return False
    added, gone = set(now[0]) - set(shape[0]), set(shape[0]) - set(now[0])
    jobs = [j for j in catalog.alter_jobs.values() if j.table_id == table.table_id]
    return added <= {j.index_id for j in jobs if j.state == "WAITING_TXN"} and \
        gone <= {j.index_id for j in jobs if j.state == "CANCELLED"}


def abort_load(catalog: Catalog, prepared: PreparedLoad) -> None:
    """Drop a prepared load's pending rowsets (files and load-file references)."""
    for _, tid, meta in prepared.rowsets:
        if catalog.engine.has_tablet(tid):
            catalog.engine.get_tablet(tid).abort_rowset(meta)
    prepared.leave_gate()


def _check_selected(table: OlapTable, data: pa.Table, parts: list, part_idx: np.ndarray,
                    partition_ids: list[int]) -> None:
    """Rows routed outside the named partitions fail the load (Doris's sink knows only those)."""
    ids = np.array([p.partition_id for p in parts], dtype=np.int64)[part_idx]
    outside = ~np.isin(ids, np.array(partition_ids, dtype=np.int64))
    if outside.any():
        raise no_partition_error(table, data, int(np.argmax(outside)))


def storage_shape(table: OlapTable) -> tuple:
    """What the rowsets a load wrote depend on: the indexes (base, rollups) and the optional
    indexes their segments carry. A load whose table changed shape meanwhile is refused."""
    return (tuple(table.indexes), tuple(i.index_id for i in table.table_indexes),
            table.properties.get("bloom_filter_columns"))


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
