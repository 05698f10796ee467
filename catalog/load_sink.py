"""OlapTableSink: a load's rows written batch by batch into per-tablet memtables, bounded memory.

Doris's write path (VOlapTableSink -> DeltaWriter -> MemTable -> RowsetWriter), in one process:

    sink = OlapTableSink(catalog, db, table, now, label, partition_ids)
    sink.write(batch)    for each batch of the load's rows: defaults, strict cast, partition
                         and bucket (`load.place_rows`); each (index, partition, bucket)
                         tablet's share goes into its DeltaWriter's memtable
                         (`storage.memtable.MemTable`, `index_rows` per materialized index)
    flushes              a memtable reaching `write_buffer_size` (engine, conf) is flushed into
                         its tablet's pending rowset (sorted, pre-aggregated, segment files:
                         storage/rowset_writer.py); when the memtables of all loads pass the
                         engine's `MemTableLimiter` soft limit, this load flushes all of its
                         own (a batch's rows are slices of one Arrow table: its memory goes
                         only when every slice does), so memory is bounded by configuration,
                         not by the load's size; flushes run two tablets at a time
    sink.finish()        -> PreparedLoad: every remaining memtable flushed, each touched
                         tablet's rowset finished (fsynced, invisible); `load.commit_load`
                         publishes them all at once (one version per partition)
    sink.abort()         every file written so far is removed
    mem_limit            between batches, a process over `mem_limit` (storage/process_memory.py)
                         flushes this load's memtables and the page cache; still over it, the
                         load fails with MEM_LIMIT_EXCEEDED and the server keeps serving

A load that never flushed and holds few rows per touched tablet (< SMALL_ROWSET_ROWS on
average) writes, per index, one load file for all its tablets instead (storage/load_file.py).
The table object and its storage shape (the indexes written) are fixed when the sink opens
(the partitions are read again per batch); `commit_load` refuses the load if the table changed
meanwhile, but for an ALTER job's shadow index added while the job waits for this load, or a
cancelled job's shadow index gone (its writers are dropped at the next batch).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from catalog.compaction import check_version_count
from catalog.errors import AnalysisError, LabelAlreadyUsed, MemLimitExceeded
from catalog.hidden_columns import hidden_column
from catalog.index_rows import index_rows
from catalog import auto_partition
from catalog.load import (PreparedLoad, complete_columns, place_rows, storage_shape,
                          target_partitions)
from catalog.database_alter import check_data_quota
from catalog.load_gate import load_gate
from storage import load_file
from storage.load_file import SMALL_ROWSET_ROWS
from storage.memtable import MemTable, flush_grouped
from storage.process_memory import release_unused, wait_for_memory

FLUSH_THREADS = 2  # tablets flushed at once
TRIM_AFTER_BYTES = 64 << 20  # flushes this large give freed memory back to the system


class DeltaWriter:
    """One tablet's part of a load: its memtable and, once it flushed, its pending rowset."""

    def __init__(self, tablet, partition_id: int, index_id: int, group: int):
        self.tablet, self.partition_id, self.index_id = tablet, partition_id, index_id
        self.group = group  # the (partition, bucket) it belongs to, in order of first sight
        self.memtable = MemTable()
        self.rowset = None  # RowsetWriter, opened by the first flush

    def flush(self, txn_id: int, limiter) -> None:
        held = self.memtable.nbytes
        rows = self.memtable.take()
        limiter.release(held)
        if rows is None:
            return
        if self.rowset is None:
            self.rowset = self.tablet.open_rowset_writer(txn_id)
        self.rowset.flush(rows)


class OlapTableSink:
    def __init__(self, catalog, db_name: str, table_name: str, now, label: str | None = None,
                 partition_ids: list[int] | None = None, txn_id: int | None = None):
        with catalog.lock:
            catalog.get_table(db_name, table_name)  # an unknown table: its error, now
            db_name = catalog.get_db(db_name).name
        check_data_quota(catalog, db_name)  # Doris checks it as the transaction begins
        if label is not None:
            used = catalog.label_txn(db_name, label)
            if used is not None:
                raise LabelAlreadyUsed(label, used)
        with catalog.lock:  # the table as the load writes it (commit_load checks it again)
            self.table = catalog.get_table(db_name, table_name)
            self.shape = storage_shape(self.table)
            # the indexes written: a snapshot (an ALTER job may add or drop one meanwhile;
            # commit_load then refuses the load, as the shape changed)
            self.indexes = dict(self.table.indexes)
        self.catalog, self.engine = catalog, catalog.engine
        self.db, self.now, self.label = db_name, now, label
        self.partition_ids, self.txn_id = partition_ids, txn_id
        self.num_rows = 0
        self._groups: dict[int, int] = {}  # partition << 32 | bucket -> group number
        self._writers: dict[tuple[int, int], DeltaWriter] = {}  # (index id, group) -> writer
        self._flushed = False
        self._gate = load_gate(self.table.table_id).enter()  # until published or aborted
        if storage_shape(self.table) != self.shape:  # a DDL ran while this load waited
            with catalog.lock:
                self.table = catalog.get_table(db_name, table_name)
                self.shape = storage_shape(self.table)
                self.indexes = dict(self.table.indexes)

    def write(self, data: pa.Table) -> None:
        """Route a batch of rows (columns named as the table's, any subset) to its tablets'
        memtables; flush those that are full, and all of them when memory is short."""
        for name in data.column_names:
            if self.table.column(name) is None and hidden_column(self.table, name) is None:
                raise AnalysisError(f"Unknown column '{name}' in '{self.table.name}'")
        if self.partition_ids is None and self.table.partition_info.auto:
            auto_partition.ensure(self.catalog, self.table,
                                  complete_columns(self.table, data, self.now))
        with self.catalog.lock:  # the partitions now (ADD PARTITION, auto partitions, ...)
            parts = target_partitions(self.table, self.partition_ids)
            self._forget_vanished_indexes()
        full, part_idx, buckets = place_rows(self.table, data, self.now, self.partition_ids,
                                             parts)
        if not full.num_rows:
            return
        # groups by partition id (not index: the partition list may change between batches)
        ids = np.array([p.partition_id for p in parts], dtype=np.int64)[part_idx]
        keys, group_of_row = np.unique(ids * (1 << 32) + buckets, return_inverse=True)
        self._open_groups(keys, {p.partition_id: p for p in parts})
        if self.txn_id is None:
            self.txn_id = self.catalog.begin_txn()
        order = np.argsort(group_of_row, kind="stable")
        bounds = np.searchsorted(group_of_row[order], np.arange(len(keys) + 1)).tolist()
        by_group = full.take(pa.array(order)).combine_chunks()  # one take; slices per tablet
        limiter = self.engine.memtables
        row_bytes = by_group.nbytes / max(by_group.num_rows, 1)  # measuring each slice is slow
        for g, key in enumerate(keys.tolist()):
            chunk = by_group.slice(bounds[g], bounds[g + 1] - bounds[g])
            group = self._groups[key]
            for index_id, index in self.indexes.items():
                writer = self._writers.get((index_id, group))
                if writer is None:
                    continue  # an index cancelled while this batch was routed
                rows = index_rows(self.table, index, chunk)
                limiter.consume(writer.memtable.add(rows, int(row_bytes * rows.num_rows)))
        self.num_rows += full.num_rows
        self._flush_if_needed()
        self._check_process_memory()

    def _check_process_memory(self) -> None:
        """mem_limit: over it, flush every memtable of this load and shrink the page cache
        first; still over it, fail the load (MEM_LIMIT_EXCEEDED) rather than the process."""
        memory = self.engine.process_memory
        if memory.exceeded_recently() is None:
            return
        self._flush_all([w for w in self._writers.values() if w.memtable.nbytes])
        message = wait_for_memory(self.engine)
        if message is not None:
            raise MemLimitExceeded(message)

    def _open_groups(self, keys: np.ndarray, parts: dict) -> None:
        """DeltaWriters for (partition id << 32 | bucket) groups seen for the first time, after
        Doris's max_tablet_version_num check (-235) of their tablets."""
        new = [k for k in keys.tolist() if k not in self._groups]
        if not new:
            return
        check_version_count(self.catalog, [ids[k & 0xFFFFFFFF] for k in new for ids in
                                           parts[k >> 32].tablets_by_index.values()])
        for key in new:
            group = self._groups[key] = len(self._groups)
            part = parts[key >> 32]
            for index_id in self.indexes:
                tablet_ids = part.tablets_by_index.get(index_id)
                if tablet_ids is None:
                    continue  # a shadow index cancelled meanwhile: its rows are not written
                tablet = self.engine.get_tablet(tablet_ids[key & 0xFFFFFFFF])
                self._writers[(index_id, group)] = DeltaWriter(tablet, part.partition_id,
                                                               index_id, group)

    def _forget_vanished_indexes(self) -> None:
        """Indexes of the snapshot the table no longer has (an ALTER job cancelled: its shadow
        index went): their writers' memtables and files go; caller holds the catalog lock.
        commit_load drops any rowset of theirs left."""
        vanished = [i for i in self.indexes if i not in self.table.indexes]
        for index_id in vanished:
            del self.indexes[index_id]
        for key in [k for k in self._writers if k[0] in vanished]:
            writer = self._writers.pop(key)
            self.engine.memtables.release(writer.memtable.nbytes)
            writer.memtable.take()
            if writer.rowset is not None:
                writer.rowset.abort()

    def _flush_if_needed(self) -> None:
        full = [w for w in self._writers.values()
                if w.memtable.nbytes >= self.engine.write_buffer_size]
        if self.engine.memtables.over_limit():
            # All of this load's memtables, not only the largest (Doris): a batch's rows are
            # slices of one Arrow table, freed only when every tablet let go of its slice.
            full = [w for w in self._writers.values() if w.memtable.nbytes]
        self._flush_all(full)

    def _flush_all(self, writers: list[DeltaWriter]) -> None:
        if not writers:
            return
        self._flushed = True
        flushed = sum(w.memtable.nbytes for w in writers)
        if len(writers) == 1:
            writers[0].flush(self.txn_id, self.engine.memtables)
        else:
            with ThreadPoolExecutor(FLUSH_THREADS, thread_name_prefix="flush") as pool:
                # fsync, LZ4 and Arrow's kernels release the GIL: tablets flush side by side
                list(pool.map(lambda w: w.flush(self.txn_id, self.engine.memtables), writers))
        if flushed >= TRIM_AFTER_BYTES:
            release_unused()  # a few ms: only after large flushes

    def finish(self) -> PreparedLoad:
        """Flush what is left and finish every touched tablet's pending rowset."""
        if self.txn_id is None:
            self.txn_id = self.catalog.begin_txn()
        with self.catalog.lock:
            self._forget_vanished_indexes()
        rowsets: list = []
        try:
            if not self._writers:
                pass  # no rows: the publish only takes the label
            elif not self._flushed and self.num_rows < SMALL_ROWSET_ROWS * max(len(self._groups), 1):
                rowsets = self._write_load_files()
            else:
                writers = list(self._writers.values())
                self._flush_all([w for w in writers if w.memtable.nbytes])
                for writer in writers:
                    if writer.rowset is not None:
                        rowsets.append((writer.partition_id, writer.tablet.tablet_id,
                                        writer.rowset.finish()))
        except BaseException:
            self.abort()  # the rowsets of a load file were aborted by _write_load_files
            raise
        prepared = PreparedLoad(self.db, self.table.name, self.txn_id, rowsets, self.num_rows,
                                self.label, self.table, self.shape, gate=self._gate)
        self._gate = None  # the PreparedLoad leaves the gate when published or aborted
        return prepared

    def _write_load_files(self) -> list:
        """A small load: per index, one load file for all its tablets (each tablet's rowset a
        slice of it), one sort and one fsync."""
        rowsets = []
        try:
            for index_id in self.indexes:
                writers = [w for (i, _), w in self._writers.items() if i == index_id]
                if not writers:
                    continue
                writers.sort(key=lambda w: w.group)
                counts = [w.memtable.num_rows for w in writers]
                held = sum(w.memtable.nbytes for w in writers)
                chunks = [w.memtable.take() for w in writers]
                self.engine.memtables.release(held)
                groups = np.repeat(np.arange(len(writers), dtype=np.int64), counts)
                name = load_file.file_name(self.txn_id, index_id)
                rows, group_col = flush_grouped(pa.concat_tables(chunks),
                                                self.table.tablet_schema(index_id),
                                                pa.array(groups))
                size = self.engine.load_files.write(name, rows)
                starts = np.searchsorted(group_col.to_numpy(), np.arange(len(writers) + 1))
                for g, writer in enumerate(writers):
                    count = int(starts[g + 1] - starts[g])
                    meta = writer.tablet.adopt_load_slice(
                        name, int(starts[g]), count, size * count // max(rows.num_rows, 1),
                        self.txn_id)
                    rowsets.append((writer.partition_id, writer.tablet.tablet_id, meta))
        except BaseException:
            for _, tid, meta in rowsets:
                self.engine.get_tablet(tid).abort_rowset(meta)
            raise
        return rowsets

    def abort(self) -> None:
        """Remove every file the load wrote and give its memtables' memory back."""
        for writer in self._writers.values():
            self.engine.memtables.release(writer.memtable.nbytes)
            writer.memtable.take()
            if writer.rowset is not None:
                writer.rowset.abort()
                writer.rowset = None
        gate, self._gate = self._gate, None
        if gate is not None:
            gate.leave()
