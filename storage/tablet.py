"""Tablet: one bucket of one partition of one materialized index, as a list of versioned rowsets.

Owns writing loads as pending rowsets, publishing them at a version, snapshot reads, DELETE
versions and the optional indexes' files.

    write_rowset(rows, txn)  memtable.flush -> rowset.write_segments -> fsync files and directory
                             -> RowsetMeta (pending: no version, invisible)
    open_rowset_writer(txn)  the same in several flushes (a large load's memtables,
                             storage/rowset_writer.py)
    adopt_rowset(files, rows, txn) segment files written elsewhere (Spark Load) moved in as
                             a pending rowset
    write_delete(preds, txn) a delete rowset (no files): RowsetMeta with the DELETE's conjunction
    adopt_load_slice(...)    a pending rowset whose rows are a slice of a small load's load file
                             (storage/load_file.py: one file for all the tablets of the load)
    prepare_publish(meta, v) merge-on-write: the delete bitmap entries publishing meta at v adds,
                             into meta (journaled with it; storage/mow_tablet.py)
    publish(meta, v)         the rowset becomes visible at [v, v]; idempotent for replay; a
                             merge-on-write tablet adds the rowset's delete bitmap entries
    compact(inputs, txn)     consecutive rowsets merged into one pending rowset spanning their
                             versions (storage/compaction.py); replace_rowsets swaps it in and
                             the inputs become stale (carry_delete_bitmap first, on a
                             merge-on-write tablet)
    set_schema(schema)       indexes added or dropped (ALTER): new segments follow the schema
    build_bitmap_index(c, i) side index files for the segments that lack column c's index
    capture(v)               a TabletSnapshot: the rowsets of version v, referenced in the
                             reader registry until released (storage/snapshot.py)
    read(v, cols, preds)     capture(v), read (storage/tablet_reader.py), release

Concurrency: the published list is replaced, never mutated, under a lock; a snapshot copies
its rowsets under that lock and registers them (`_snapshots`, the reader registry). Published files are
never modified; writes only add new files; a stale rowset's files are deleted when the last
snapshot holding it is released (or at once when none does). The catalog serialises loads,
DELETEs and index changes of one table (its per-table load lock).
"""

from __future__ import annotations

import os
import shutil
import itertools
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from functools import partial
from typing import Iterator

import pyarrow as pa

from storage import load_version, mow_tablet, stale_sweeper, tablet_bloom
from storage.arrays import contiguous
from storage.compaction import COMPACTION_BATCH_ROWS, COMPACTION_WHOLE_ROWS, merge_runs
from storage.delete_bitmap import DeleteBitmap, DeleteBitmapView, decode_entries
from storage.compaction_policy import CompactionState, RowsetInfo, extend_view, tablet_view
from storage.errors import StorageError
from storage.load_file import LoadFileReader, LoadFiles
from storage.memtable import sort_by_key
from storage.durable import fsync_path
from storage.page_cache import DISABLED, PageCache
from storage.predicate import ColumnPredicate
from storage.rowset_summary import RowsetSummary
from storage.rowset import (DEFAULT_MAX_SEGMENT_SIZE, RowsetMeta, parse_file_name,
                            segment_file_name)
from storage.rowset_writer import RowsetWriter
from storage.schema import TabletSchema
from storage.segment import SegmentOptions, SegmentReader, side_index
from storage.segment.reader import IndexOptions
from storage.snapshot import TabletSnapshot, version_path
from storage.stats import ScanStats
from storage.column_mapping import delete_conjunctions, needs_mapping, read_mapped, \
    rowset_columns
from storage.tablet_reader import rows_only


_MISSING = object()
SNAPSHOT_FACTS = 64  # facts kept per tablet snapshot (a few fixed ones, then per predicate set)


@dataclass
class TabletOptions:
    segment: SegmentOptions
    max_segment_size: int = DEFAULT_MAX_SEGMENT_SIZE
    page_cache: PageCache = DISABLED  # decoded pages shared by the engine's tablets
    load_files: LoadFiles | None = None  # the engine's load files (small loads' slices)


class Tablet:
    changes = 0  # published-rowset changes of all tablets (a hint for the compaction producer)

    def __init__(self, tablet_id: int, schema: TabletSchema, directory: str,
                 options: TabletOptions | None = None):
        self.tablet_id = tablet_id
        self.schema = schema
        self.directory = directory
        self.options = options or TabletOptions(SegmentOptions())
        os.makedirs(directory, exist_ok=True)
        self._lock = threading.Lock()
        self._published: list[RowsetMeta] = []  # sorted by version; replaced, never mutated
        self._pending: set[int] = set()
        self._stale: dict[int, RowsetMeta] = {}  # compacted away, files kept while held
        self._snapshots: dict[int, tuple[int, ...]] = {}  # snapshot key -> rowset ids held
        self._dropped_keys: deque[int] = deque()  # snapshots collected, not yet unregistered
        self._snapshot_keys = itertools.count()
        self._readers: dict[int, list[SegmentReader]] = {}
        self._load_slices: dict[int, str] = {}  # rowset id -> load file it reads
        self._ids: tuple[list, set[int]] = (self._published, set())  # ids of that list
        # (that list, it as a tuple, its rowset ids, its summary): what a capture of the
        # latest version takes (storage/rowset_summary.py)
        self._whole_snapshot: tuple = (None, (), (), RowsetSummary())
        self._memo: tuple = (None, None, {})  # (rowsets tuple, schema, {key: fact})
        self._next_rowset_id = 1 + max([r for r, _ in self._files().values()] + [0])
        self.compaction = CompactionState()  # cumulative point, last success/failure times
        self.scans = 0  # snapshots taken: the producer's scan frequency
        self._destroyed = False  # dropped from the engine; files removed once no snapshot holds
        self._files_removed = False
        self.generation = 0  # bumped whenever the published rowsets change (score caches)
        self._view: tuple[list | None, list[RowsetInfo]] = (None, [])  # compaction_view's
        # merge-on-write (storage/mow_tablet.py): the rows later loads replaced, entries
        # computed before a publish is journaled, compactions' rowid conversions until the swap
        self.delete_bitmap = DeleteBitmap()
        self.prepared_bitmaps: dict[int, tuple[int, list]] = {}
        self.conversions: dict[int, object] = {}

    # -- writing -------------------------------------------------------------------------------
    def write_rowset(self, data: pa.Table, txn_id: int,
                     schema: TabletSchema | None = None) -> RowsetMeta:
        """Write `data` as a pending rowset (sorted, pre-aggregated, fsynced); not yet visible.
        `schema`: the one `data` was read with (compaction), else the tablet's current one."""
        writer = self.open_rowset_writer(txn_id, schema)
        writer.flush(data)
        return writer.finish()

    def open_rowset_writer(self, txn_id: int, schema: TabletSchema | None = None) -> RowsetWriter:
        """A pending rowset written by one or more memtable flushes (storage/rowset_writer.py);
        a failure or `abort()` leaves no file of it behind."""
        return RowsetWriter(self.directory, self.tablet_id, self._allocate_rowset_id(), txn_id,
                            schema or self.schema, self.options.segment,
                            self.options.max_segment_size, self._forget_pending)

    def _forget_pending(self, rowset_id: int) -> None:
        self._remove_rowset_files(rowset_id)
        with self._lock:
            self._pending.discard(rowset_id)

    def adopt_rowset(self, files: list[str], segment_rows: list[int], txn_id: int) -> RowsetMeta:
        """A pending rowset from segment files written elsewhere by `write_segments` with this
        tablet's schema (Spark Load's executors): moved into the tablet's directory under a new
        rowset id, fsynced; not yet visible. A failure leaves none of them here."""
        rowset_id = self._allocate_rowset_id()
        names, size, moved = [], 0, False
        try:
            for segment_no, src in enumerate(files):
                name = segment_file_name(rowset_id, segment_no)
                size += os.path.getsize(src)
                os.replace(src, self._path(name))
                names.append(name)
            fsync_path(self.directory)
            moved = True
        finally:
            if not moved:
                self._remove_rowset_files(rowset_id)
                with self._lock:
                    self._pending.discard(rowset_id)
        return RowsetMeta(rowset_id, self.tablet_id, txn_id, sum(segment_rows), size, names,
                          list(segment_rows), column_ids=self.schema.column_ids())

    def adopt_load_slice(self, name: str, offset: int, num_rows: int, size: int,
                         txn_id: int) -> RowsetMeta:
        """A pending rowset of rows [offset, offset + num_rows) of the load file `name` (written
        and fsynced by the caller, rows sorted and merged for this tablet's schema)."""
        rowset_id = self._allocate_rowset_id()
        self._hold_load_file(name, rowset_id)
        return RowsetMeta(rowset_id, self.tablet_id, txn_id, num_rows, size,
                          load_file=name, load_offset=offset, creation_time=time.time(),
                          column_ids=self.schema.column_ids())

    def abort_rowset(self, meta: RowsetMeta) -> None:
        """Forget a pending rowset that will never be published (its load failed)."""
        with self._lock:
            self._pending.discard(meta.rowset_id)
        self.prepared_bitmaps.pop(meta.rowset_id, None)
        if meta.load_file is None:
            self._remove_rowset_files(meta.rowset_id)
        self._release_load_files([meta.rowset_id])

    def hold_pending(self, meta: RowsetMeta) -> None:
        """A pending rowset written before a restart (a pre-committed load): its files are
        kept, a load-file slice's file stays referenced, and its id is never handed out."""
        with self._lock:
            self._pending.add(meta.rowset_id)
            self._next_rowset_id = max(self._next_rowset_id, meta.rowset_id + 1)
        if meta.load_file is not None:
            self._hold_load_file(meta.load_file, meta.rowset_id)

    def _hold_load_file(self, name: str, rowset_id: int) -> None:
        files = self._load_files()
        files.acquire(name, self.tablet_id, rowset_id)
        with self._lock:
            self._load_slices[rowset_id] = name

    def _release_load_files(self, rowset_ids) -> None:
        with self._lock:
            released = [(i, self._load_slices.pop(i)) for i in rowset_ids if i in self._load_slices]
        for rowset_id, name in released:
            self._load_files().release(name, self.tablet_id, rowset_id)

    def _published_ids(self) -> set[int]:
        """Ids of the published rowsets (call under the lock); cached per published list,
        which is replaced, never mutated."""
        if self._ids[0] is not self._published:
            self._ids = (self._published, {r.rowset_id for r in self._published})
        return self._ids[1]

    def _load_files(self) -> LoadFiles:
        if self.options.load_files is None:
            raise StorageError(f"Tablet {self.tablet_id} has no load file directory")
        return self.options.load_files

    def write_delete(self, predicates: list[ColumnPredicate], txn_id: int) -> RowsetMeta:
        """A pending delete rowset: rows of older versions matching all `predicates` go away."""
        if not predicates:
            raise StorageError("A delete needs at least one condition")
        for p in predicates:
            if not self.schema.has_column(p.column):
                raise StorageError(f"Unknown column '{p.column}' in tablet {self.tablet_id}")
        rowset_id = self._allocate_rowset_id()
        return RowsetMeta(rowset_id, self.tablet_id, txn_id, 0, 0,
                          delete_predicate=[p.to_dict() for p in predicates],
                          creation_time=time.time(), column_ids=self.schema.column_ids())

    def set_schema(self, schema: TabletSchema) -> None:
        """Adopt a new schema: other optional indexes, or a light schema change (columns added,
        dropped or renamed, found in older rowsets by unique id: storage/column_mapping.py);
        dropped indexes' side files are deleted. The keys must stay: a key change rewrites
        the data (a schema change job) instead."""
        if [c.type for c in self.schema.key_columns] != [c.type for c in schema.key_columns]:
            raise StorageError(f"Tablet {self.tablet_id}: a light schema change must keep the keys")
        with self._lock:
            flips = self.schema.merge_on_write != schema.merge_on_write
            self.schema = schema
        if flips:  # a schema change's new base index: its bitmap (or none) from its rowsets
            mow_tablet.recompute(self)
        self._remove_side_files(lambda rowset_id, index_id: index_id not in
                                schema_index_ids(schema))

    def build_bitmap_index(self, column: str, index_id: int) -> int:
        """Write side index files of `column` for published segments lacking its bitmap index;
        returns the bytes written. Call before the schema names the index."""
        dtype = self.schema.column(column).type
        written = 0
        for rs in self.rowsets():
            if rs.load_file is not None:  # a load file slice is scanned without indexes
                continue
            for segment_no, reader in enumerate(self._segments(rs)):
                if reader.columns[column].has_bitmap_index:
                    continue
                arr = reader.scan([column], [], ScanStats()).column(column)
                arr = contiguous(arr)
                path = self._path(side_index.file_name(rs.rowset_id, segment_no, index_id))
                written += side_index.write(path, arr, column, dtype, self.options.segment)
        fsync_path(self.directory)
        return written

    def build_inverted_index(self, column: str, index_id: int, properties: dict) -> int:
        """BUILD INDEX: write side files of `column`'s inverted index for published segments
        lacking it; returns the bytes written."""
        dtype = self.schema.column(column).type
        spec = {"index_id": index_id, "properties": dict(properties)}
        written = 0
        for rs in self.rowsets():
            if rs.load_file is not None:  # a load file slice is scanned without indexes
                continue
            for segment_no, reader in enumerate(self._segments(rs)):
                if column not in reader.columns or reader.columns[column].inverted_index_id \
                        == index_id:
                    continue
                path = self._path(side_index.file_name(rs.rowset_id, segment_no, index_id))
                if os.path.exists(path):
                    continue
                arr = contiguous(reader.scan([column], [], ScanStats()).column(column))
                written += side_index.write(path, arr, column, dtype, self.options.segment,
                                            spec)
        fsync_path(self.directory)
        return written

    def prepare_publish(self, meta: RowsetMeta, version: int) -> None:
        """Merge-on-write: compute the delete bitmap entries publishing `meta` at `version`
        adds, into `meta.delete_bitmap` (journaled with the version); call with the table's
        load lock held, before journaling the publish (storage/mow_tablet.py)."""
        mow_tablet.prepare(self, meta, version)

    def carry_delete_bitmap(self, output: RowsetMeta, inputs: list[RowsetMeta]) -> None:
        """Merge-on-write: the entries a compaction's `output` carries, into
        `output.delete_bitmap`; call at the swap, with the table's load lock held."""
        if self.schema.merge_on_write:
            mow_tablet.carry(self, output, inputs)

    def publish(self, meta: RowsetMeta, version: int) -> RowsetMeta:
        """Make `meta` visible at [version, version]; publishing it again is a no-op."""
        if meta.tablet_id != self.tablet_id:
            raise StorageError(f"Rowset {meta.rowset_id} belongs to tablet {meta.tablet_id}, "
                               f"not {self.tablet_id}")
        missing = [s for s in meta.segments if not os.path.exists(self._path(s))]
        if meta.load_file is not None and not self._load_files().exists(meta.load_file):
            missing.append(meta.load_file)
        # A compacted rowset (restored at start-up) keeps its version range [start, version].
        start = meta.start_version if meta.end_version == version and \
            meta.start_version is not None else version
        if meta.load_file is not None and not missing:
            self._hold_load_file(meta.load_file, meta.rowset_id)
        with self._lock:
            again = meta.rowset_id in self._published_ids()
        mow = not missing and not again and mow_tablet.applies(self.schema, meta)
        bitmap = mow_tablet.on_publish(self, meta, start, version, self.rowsets()) if mow \
            else None
        published = self._publish(meta, version, start, missing)
        if bitmap is not None:
            self.delete_bitmap.add(bitmap)
        elif mow:
            mow_tablet.recompute(self)  # published below newer versions
        return published

    def _publish(self, meta: RowsetMeta, version: int, start: int,
                 missing: list[str]) -> RowsetMeta:
        with self._lock:
            last = self._published[-1] if self._published else None
            if last is not None and last.end_version < start and not missing and \
                    meta.rowset_id not in self._published_ids():
                # The common case, a load after every published version: append.
                published = meta.published_at(version)
                published.start_version = start
                ids = self._published_ids() | {meta.rowset_id}
                before = self._published
                self._published = [*before, published]
                self._ids = (self._published, ids)
                whole = self._whole_snapshot
                if whole[0] is before:  # extend the latest capture's tuples by one
                    self._whole_snapshot = (self._published, whole[1] + (published,),
                                            whole[2] + (published.rowset_id,),
                                            whole[3].plus(published))
                self._pending.discard(meta.rowset_id)
                self._next_rowset_id = max(self._next_rowset_id, meta.rowset_id + 1)
                # The compaction scheduler's score cache keys on the generation. Tablet.changes
                # (wake the producer at once) is left alone on this path: a load only makes
                # the next full round worth running, and a rescan per load starves the server.
                self.generation += 1
                return published
            for rs in self._published:
                if rs.rowset_id == meta.rowset_id:
                    if rs.start_version == start:
                        return rs  # (a merge-on-write recompute is deterministic: harmless)
                    raise StorageError(f"Rowset {meta.rowset_id} of tablet {self.tablet_id} is "
                                       f"already published at version {rs.start_version}")
                if rs.start_version <= version and start <= rs.end_version:
                    raise StorageError(f"Tablet {self.tablet_id} already has version {version}")
            if missing:
                raise StorageError(f"Tablet {self.tablet_id} lacks segment file(s) "
                                   f"{', '.join(missing)} of rowset {meta.rowset_id}")
            published = meta.published_at(version)
            published.start_version = start
            self._published = sorted([*self._published, published],
                                     key=lambda r: r.start_version)
            self.generation += 1
            Tablet.changes += 1
            self._pending.discard(meta.rowset_id)
            self._next_rowset_id = max(self._next_rowset_id, meta.rowset_id + 1)
        return published

    # -- compaction (storage/compaction.py) ----------------------------------------------------
    def compact(self, inputs: list[RowsetMeta], txn_id: int,
                start_version: int | None = None) -> RowsetMeta:
        """Write the rows of the consecutive published rowsets `inputs` as one pending rowset
        spanning their versions; `replace_rowsets` makes it visible in their place. Delete
        rowsets among the inputs (base compaction) are applied to the older data rowsets and
        purged: the output carries no predicate. `start_version` widens the output's range
        down to the versions before the first input that the tablet holds no rowset of."""
        schema = self.schema  # a schema change meanwhile makes the caller drop the output
        stats = ScanStats()
        published = self.rowsets()
        base = bool(published) and published[0].rowset_id == inputs[0].rowset_id
        if schema.merge_on_write:  # live rows only; their rowid conversion kept for the swap
            data, source = mow_tablet.compact_rows(self, schema, inputs, base)
            meta = self.write_rowset(data, txn_id, schema)
            if meta.num_rows != len(source):
                self.discard_pending(meta)
                raise StorageError(f"Tablet {self.tablet_id}: a merge-on-write compaction "
                                   f"found a key twice among its inputs' live rows")
            self.conversions[meta.rowset_id] = source
        else:
            meta = self._compact_streaming(schema, inputs, txn_id, base, stats)
        meta.start_version = inputs[0].start_version if start_version is None else start_version
        meta.end_version = inputs[-1].end_version
        return meta

    def _compact_streaming(self, schema: TabletSchema, inputs: list[RowsetMeta], txn_id: int,
                           base: bool, stats: ScanStats) -> RowsetMeta:
        """The inputs merged as key-ordered runs, written a segment at a time (storage/
        compaction.py; small inputs in one merge)."""
        deletes = delete_conjunctions(inputs, schema)
        if sum(rs.num_rows for rs in inputs) <= COMPACTION_WHOLE_ROWS:
            # small inputs (many small loads): one merge of everything, fewer calls per run
            whole = self.concat([self.scan_rowset(schema, rs, deletes, schema.names, [], stats)
                                 for rs in inputs if rs.num_rows], schema.names, schema)
            runs = [iter([sort_by_key(whole, schema.merge_order())])]
        else:
            runs = [run for rs in inputs if rs.num_rows
                    for run in self.compaction_runs(schema, rs, deletes, stats)]
        writer = self.open_rowset_writer(txn_id, schema)
        try:
            for chunk in merge_runs(runs, schema, base):
                writer.add_sorted(chunk)
            return writer.finish()
        except BaseException:
            writer.abort()
            raise

    def compaction_runs(self, schema: TabletSchema, rowset: RowsetMeta, deletes: list,
                        stats: ScanStats) -> list[Iterator[pa.Table]]:
        """A compaction input's rows as key-ordered runs of batches (storage/compaction.py)."""
        names = schema.names
        if rowset.load_file is not None or load_version.applies(schema, rowset, names, []) \
                or needs_mapping(rowset_columns(schema, rowset), deletes):
            whole = self.scan_rowset(schema, rowset, deletes, names, [], stats)
            return [iter([sort_by_key(whole, schema.merge_order())])]
        later = [conj for v, conj in deletes if v > rowset.end_version]
        segments = [seg.scan_batches(names, stats, later, COMPACTION_BATCH_ROWS)
                    for seg in self._segments(rowset)]
        return segments if rowset.overlapping else [itertools.chain(*segments)]

    def discard_pending(self, meta: RowsetMeta) -> None:
        """Forget a pending rowset that will never be published (a compaction abandoned)."""
        with self._lock:
            self._pending.discard(meta.rowset_id)
        self.conversions.pop(meta.rowset_id, None)
        self._remove_rowset_files(meta.rowset_id)

    def replace_rowsets(self, input_ids: list[int], output: RowsetMeta) -> bool:
        """Publish the compacted `output` instead of the rowsets `input_ids`, which become
        stale (their files go when no snapshot holds them); False (nothing changed) if any
        input is gone."""
        wanted = set(input_ids)
        carried = []
        if self.schema.merge_on_write and output.delete_bitmap:
            carried = decode_entries(output.delete_bitmap)
        with self._lock:
            if output.rowset_id in {r.rowset_id for r in self._published}:
                return True  # replay of an applied swap
            if wanted - {r.rowset_id for r in self._published}:
                return False
            live = {r.rowset_id for r in self._published} - wanted | {output.rowset_id}
            # under the lock: a snapshot taken after the swap sees the output's entries
            self.delete_bitmap.add([e for e in carried if e.rowset_id in live])
            kept = [r for r in self._published if r.rowset_id not in wanted]
            for r in self._published:
                if r.rowset_id in wanted:
                    self._stale[r.rowset_id] = r
            self._published = sorted([*kept, output], key=lambda r: r.start_version)
            self.generation += 1
            Tablet.changes += 1
            self._pending.discard(output.rowset_id)
        self.sweep_stale()
        return True

    def sweep_stale(self) -> list[str]:
        """Delete the files of stale rowsets no snapshot holds; the names removed."""
        if self._destroyed:  # the whole directory goes with the last snapshot
            self._destroy_if_unheld()
            return []
        with self._lock:
            self._unregister_dropped()
            held = self._held_ids()
            doomed = {i for i in self._stale if i not in held}
            for rowset_id in doomed:
                del self._stale[rowset_id]
                self._readers.pop(rowset_id, None)
            self.delete_bitmap.remove_rowsets(doomed)
        self._release_load_files(doomed)
        removed = [name for name, (rowset_id, _) in self._files().items() if rowset_id in doomed]
        for name in removed:
            os.remove(self._path(name))
        return removed

    def stale_rowsets(self) -> list[RowsetMeta]:
        self.sweep_stale()
        with self._lock:
            return sorted(self._stale.values(), key=lambda r: r.start_version)

    def held_rowsets(self) -> dict[int, int]:
        """rowset id -> snapshots holding it (the reader registry)."""
        self.sweep_stale()
        with self._lock:
            return dict(Counter(i for ids in self._snapshots.values() for i in ids))

    def _held_ids(self) -> set[int]:
        # Snapshots of the whole published list share its ids tuple: each distinct tuple once.
        distinct = {id(ids): ids for ids in self._snapshots.values()}
        return {i for ids in distinct.values() for i in ids}

    # -- reading -------------------------------------------------------------------------------
    def rowsets(self, version: int | None = None) -> list[RowsetMeta]:
        """Published rowsets (up to `version`), in version order."""
        with self._lock:
            snapshot = self._published
        if version is None:
            return list(snapshot)
        return [r for r in snapshot if r.end_version <= version]

    def compaction_view(self) -> list[RowsetInfo]:
        """The compaction policy's view of the published rowsets (`tablet_view`), cached per
        published list and extended by one entry when a load appended one rowset, so that the
        producer's rounds cost no Python per rowset of tablets that only took loads. Callers
        must not change the list."""
        with self._lock:
            published = self._published
        cached, view = self._view
        if cached is published:
            return view
        if cached and len(published) == len(cached) + 1 and \
                published[:-1] == cached:
            view = extend_view(view, published[-1])
        else:
            view = tablet_view(published)
        self._view = (published, view)
        return view

    def version_count(self) -> int:
        """Published rowsets (Doris's tablet version count, max_tablet_version_num's measure)."""
        with self._lock:
            return len(self._published)

    @property
    def max_version(self) -> int:
        snapshot = self.rowsets()
        return snapshot[-1].end_version if snapshot else 0

    def capture(self, version: int) -> TabletSnapshot:
        """The rowsets of `version`, held until the snapshot is released."""
        with self._lock:
            live = self._published
            if live and live[-1].end_version <= version:  # the common case: all published
                cached = self._whole_snapshot
                if cached[0] is not live:  # the list is replaced on change, never mutated
                    cached = self._whole_snapshot = (
                        live, tuple(live), tuple([r.rowset_id for r in live]),
                        RowsetSummary.of(live))
                rowsets, ids = cached[1], cached[2]
            else:
                rowsets = tuple(version_path(live, list(self._stale.values()), version))
                ids = tuple([r.rowset_id for r in rowsets])
            key = next(self._snapshot_keys)
            self._snapshots[key] = ids
            schema = self.schema
            self.scans += 1
        return TabletSnapshot(self, version, rowsets, schema, key)

    def summary_of(self, rowsets: tuple) -> RowsetSummary:
        """The RowsetSummary of `rowsets`: kept with the published list when they are the
        tuple the latest capture shares, else one walk over them."""
        whole = self._whole_snapshot
        return whole[3] if rowsets is whole[1] else RowsetSummary.of(rowsets)

    def snapshot_memo(self, rowsets: tuple, schema, key, compute):
        """A fact about `rowsets` read under `schema` (TabletSnapshot.memo), cached while they
        are the very tuple the latest capture shares (at most SNAPSHOT_FACTS facts); computed
        afresh otherwise."""
        memo = self._memo
        if memo[0] is not rowsets or memo[1] is not schema:
            if rowsets is not self._whole_snapshot[1]:
                return compute()
            memo = self._memo = (rowsets, schema, {})
        found = memo[2].get(key, _MISSING)
        if found is _MISSING:
            found = compute()
            if len(memo[2]) < SNAPSHOT_FACTS:
                memo[2][key] = found
        return found

    def _release(self, key: int) -> None:
        """A snapshot released by its reader (`TabletSnapshot.release`)."""
        with self._lock:
            ids = self._snapshots.pop(key, ())
            freed = bool(self._stale) and any(i in self._stale for i in ids) or \
                bool(self._dropped_keys)
            destroyed = self._destroyed
        if destroyed:
            self._destroy_if_unheld()
        elif freed:
            self.sweep_stale()

    def _dropped(self, key: int) -> None:
        """A snapshot garbage-collected unreleased (its `__del__`): never waits for a lock, see
        storage/stale_sweeper.py; the sweeper thread unregisters it and sweeps."""
        self._dropped_keys.append(key)
        stale_sweeper.schedule(self)

    def _unregister_dropped(self) -> None:
        """Unregister the snapshots the collector dropped (call under the lock)."""
        while self._dropped_keys:
            self._snapshots.pop(self._dropped_keys.popleft(), None)

    def read(self, version: int, columns: list[str], predicates: list[ColumnPredicate],
             stats: ScanStats, merge: bool = True) -> pa.Table:
        """Rows visible at `version` satisfying the predicates, `columns` in that order
        (`merge`: see tablet_reader.read_rowsets)."""
        with self.capture(version) as snapshot:
            return snapshot.read(columns, predicates, stats, merge)

    def scan_rowset(self, schema: TabletSchema, rowset: RowsetMeta, deletes: list,
                    columns: list[str], predicates: list[ColumnPredicate],
                    stats: ScanStats, bitmap: DeleteBitmapView | None = None,
                    verdict: tablet_bloom.Verdict | None = None) -> pa.Table:
        """One rowset's rows (its segments concatenated), minus rows of later DELETEs and (a
        merge-on-write tablet) minus the rows `bitmap` deletes; `verdict`: what the tablet's
        bloom filters said of its segments (storage/tablet_bloom.py)."""
        if bitmap is not None and not bitmap.touches(rowset.rowset_id):
            bitmap = None
        if load_version.applies(schema, rowset, columns, predicates):
            return load_version.scan(partial(self._scan_rowset, bitmap=bitmap), schema, rowset,
                                     deletes, columns, predicates, stats)
        return self._scan_rowset(schema, rowset, deletes, columns, predicates, stats, bitmap,
                                 verdict)

    def _scan_rowset(self, schema: TabletSchema, rowset: RowsetMeta, deletes: list,
                     columns: list[str], predicates: list[ColumnPredicate],
                     stats: ScanStats, bitmap: DeleteBitmapView | None = None,
                     verdict: tablet_bloom.Verdict | None = None) -> pa.Table:
        def keep(segment_no: int, num_rows: int):  # the rows the delete bitmap leaves
            return None if bitmap is None else bitmap.keep(rowset.rowset_id, segment_no,
                                                           num_rows)

        if needs_mapping(rowset_columns(schema, rowset), deletes):
            return read_mapped(self, schema, rowset, deletes, columns, predicates, stats, keep)
        later = [conj for v, conj in deletes if v > rowset.end_version]
        bloom = frozenset(schema.bloom_filter_columns)
        parts = []
        for segment_no, seg in enumerate(self._segments(rowset)):
            key = (rowset.rowset_id, segment_no)
            bloom_column = verdict.segments.get(key) if verdict else None
            if bloom_column is not None:  # storage/tablet_bloom.py
                parts.append(seg.scan_ruled_out(columns, predicates, bloom_column, stats))
                continue
            if verdict and key in verdict.probed:  # read and filtered by Verdict.probe
                parts.append(seg.empty(columns))
                continue
            tested = verdict.pages.get(key) if verdict else None
            bitmap_files = tuple(
                (c, self._path(side_index.file_name(rowset.rowset_id, segment_no, i)))
                for c, i in schema.bitmap_indexes.items())
            inverted = tuple(
                (c, v["index_id"], self._path(side_index.file_name(rowset.rowset_id, segment_no,
                                                                   v["index_id"])))
                for c, v in schema.inverted_indexes.items())
            parts.append(seg.scan(columns, predicates, stats, later,
                                  IndexOptions(bloom, bitmap_files, inverted,
                                               (tested,) if tested else ()),
                                  keep(segment_no, seg.num_rows)))
        return self.concat(parts, columns, schema)

    def scan_all(self, schema: TabletSchema, snapshot: list[RowsetMeta], deletes: list,
                 columns: list[str], predicates: list[ColumnPredicate],
                 stats: ScanStats, bitmap: DeleteBitmapView | None = None) -> list[pa.Table]:
        """Each rowset's rows, in version order; a run of consecutive load file slices (small
        loads) with no DELETE between them and no row in `bitmap` is scanned as one table (one
        filter pass)."""
        parts: list[pa.Table] = []
        run: list[RowsetMeta] = []
        version_read = load_version.reads_version(columns, predicates)
        verdict = tablet_bloom.ruled_out(
            self, snapshot, predicates, schema,
            skip=lambda rs: needs_mapping(rowset_columns(schema, rs), deletes) or (
                version_read and load_version.applies(schema, rs, columns, predicates)))
        verdict.count_whole(columns, predicates, stats)
        verdict.probe(columns, predicates, stats)

        def flush_run() -> None:
            if len(run) == 1:
                parts.append(self.scan_rowset(schema, run[0], deletes, columns, predicates,
                                              stats))
            elif run:
                later = [conj for v, conj in deletes if v > run[0].end_version]
                rows = pa.concat_tables(self._slice_tables(run))
                parts.append(LoadFileReader(rows, schema).scan(columns, predicates, stats, later))
            run.clear()

        for rs in snapshot:
            if rs.load_file is not None and (
                    needs_mapping(rowset_columns(schema, rs), deletes)
                    or load_version.applies(schema, rs, columns, predicates)
                    or (bitmap is not None and bitmap.touches(rs.rowset_id))):
                flush_run()  # an older schema (column_mapping), its version column, its bitmap
                parts.append(self.scan_rowset(schema, rs, deletes, columns, predicates, stats,
                                              bitmap))
                continue
            if rs.load_file is None or (run and any(
                    run[-1].end_version < v <= rs.end_version for v, _ in deletes)):
                flush_run()
            if rs.load_file is None and rs.rowset_id in verdict.whole:
                continue  # every segment ruled out by the bloom filters: counted above
            if rs.load_file is None:
                parts.append(self.scan_rowset(schema, rs, deletes, columns, predicates, stats,
                                              bitmap, verdict))
            else:
                run.append(rs)
        flush_run()
        return parts

    def _slice_tables(self, run: list[RowsetMeta]) -> list[pa.Table]:
        """The rows of load file slices: the opened ones looked up under one lock."""
        with self._lock:
            found = [self._readers.get(rs.rowset_id) for rs in run]
        return [(readers or self._segments(rs))[0].table for readers, rs in zip(found, run)]

    def _segments(self, rowset: RowsetMeta) -> list[SegmentReader]:
        with self._lock:
            readers = self._readers.get(rowset.rowset_id)
        if readers is None and rowset.load_file is not None:
            rows = self._load_files().table(rowset.load_file).slice(rowset.load_offset,
                                                                     rowset.num_rows)
            readers = [LoadFileReader(rows, self.schema)]
            with self._lock:
                readers = self._readers.setdefault(rowset.rowset_id, readers)
        elif readers is None:
            readers = [SegmentReader(self._path(s), self.tablet_id, self.options.page_cache)
                       for s in rowset.segments]
            with self._lock:
                readers = self._readers.setdefault(rowset.rowset_id, readers)
        return readers

    def concat(self, tables: list[pa.Table], columns: list[str],
               schema: TabletSchema) -> pa.Table:
        """`tables` as one; none: an empty table of `columns` typed by `schema` (the reader's,
        a snapshot's, which may hold a column the tablet's current schema dropped)."""
        if not tables:
            types = [schema.column(c).type.arrow() for c in columns]
            return pa.Table.from_arrays([pa.array([], t) for t in types], names=list(columns))
        if len(tables) == 1:
            return tables[0]
        if not columns:  # zero-column tables: keep the row count
            return rows_only(sum(t.num_rows for t in tables))
        return pa.concat_tables(tables)

    # -- files ---------------------------------------------------------------------------------
    def remove_orphans(self) -> list[str]:
        """Delete segment files of rowsets neither published nor being written, and side index
        files of such rowsets or of indexes the schema lacks (crash debris)."""
        with self._lock:
            live = {r.rowset_id for r in self._published} | set(self._pending) | set(self._stale)
        removed = [name for name, (rowset_id, _) in self._files().items() if rowset_id not in live]
        for name in removed:
            os.remove(self._path(name))
        indexes = schema_index_ids(self.schema)
        removed += self._remove_side_files(lambda rowset_id, index_id: rowset_id not in live
                                           or index_id not in indexes)
        if removed:
            fsync_path(self.directory)
        return sorted(removed)

    def _remove_side_files(self, doomed) -> list[str]:
        """Delete side index files for which doomed(rowset_id, index_id) holds (and temp files)."""
        removed = []
        names = os.listdir(self.directory) if os.path.isdir(self.directory) else []
        for name in names:
            ids = side_index.parse_file_name(name)
            if ids is not None and (name.endswith(side_index.TMP_SUFFIX) or
                                    doomed(ids[0], ids[2])):
                os.remove(self._path(name))
                removed.append(name)
        return removed

    def destroy(self) -> None:
        """Remove the tablet's directory and everything in it (and its load file slices), at
        once or, while snapshots still hold its rowsets (a query captured it before a DROP,
        TRUNCATE, INSERT OVERWRITE's or a schema change's swap), when the last is released:
        the tablet is already gone from the engine, its readers finish on its files."""
        with self._lock:
            self._destroyed = True
        self._destroy_if_unheld()

    def _remove_files(self) -> None:
        with self._lock:
            if self._files_removed:
                return
            self._files_removed = True
            held = list(self._load_slices)
        self._release_load_files(held)
        shutil.rmtree(self.directory, ignore_errors=True)

    def _destroy_if_unheld(self) -> None:
        """A destroyed tablet whose rowsets no snapshot holds any more: its files go now."""
        with self._lock:
            self._unregister_dropped()
            if not self._destroyed or self._snapshots:
                return
        self._remove_files()

    def _files(self) -> dict[str, tuple[int, int]]:
        if not os.path.isdir(self.directory):
            return {}
        parsed = {name: parse_file_name(name) for name in os.listdir(self.directory)}
        return {name: ids for name, ids in parsed.items() if ids is not None}

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def _allocate_rowset_id(self) -> int:
        with self._lock:
            rowset_id = self._next_rowset_id
            self._next_rowset_id += 1
            self._pending.add(rowset_id)
        return rowset_id

    def _remove_rowset_files(self, rowset_id: int) -> None:
        for name, (owner, _) in self._files().items():
            if owner == rowset_id:
                os.remove(self._path(name))


def schema_index_ids(schema: TabletSchema) -> set[int]:
    """The ids of the indexes whose side files a tablet of `schema` keeps."""
    return {*schema.bitmap_indexes.values(),
            *(v["index_id"] for v in schema.inverted_indexes.values())}
