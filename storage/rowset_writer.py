"""RowsetWriter: one pending rowset written by several memtable flushes (Doris's BetaRowsetWriter).

A load hands a tablet's rows to its rowset in pieces: each `flush(rows)` sorts and
pre-aggregates one memtable (memtable.flush) and appends its segments to the rowset's files
(`<rowset_id>_<n>.dat`, n continuing across flushes); `finish()` fsyncs the tablet directory
and returns the pending `RowsetMeta`. A rowset written by more than one flush is *overlapping*
(Doris's OVERLAPPING segments): its segments are each sorted, but keys may repeat across them,
so readers of AGGREGATE/UNIQUE tables merge its segments as they merge rowsets
(storage/tablet_reader.py), in segment order (a later flush holds later rows). A compaction
hands its merged rows in key order instead (`add_sorted`): written as they come, a segment at a
time, non-overlapping. `abort()` removes every file written so far.
"""

from __future__ import annotations

import time
from typing import Callable

import pyarrow as pa

from storage.compaction import COMPACTION_SEGMENT_BYTES
from storage.durable import fsync_path
from storage.memtable import flush
from storage.rowset import RowsetMeta, write_segments
from storage.schema import TabletSchema
from storage.segment import SegmentOptions


class RowsetWriter:
    def __init__(self, directory: str, tablet_id: int, rowset_id: int, txn_id: int,
                 schema: TabletSchema, options: SegmentOptions, max_segment_size: int,
                 on_abort: Callable[[int], None]):
        self.directory, self.tablet_id, self.rowset_id = directory, tablet_id, rowset_id
        self.txn_id, self.schema = txn_id, schema
        self.options, self.max_segment_size = options, max_segment_size
        self._on_abort = on_abort  # the tablet removes the files and forgets the pending id
        self.segments: list[str] = []
        self.segment_rows: list[int] = []
        self.data_size = 0
        self.flushes = 0
        self._sorted: list[pa.Table] = []  # add_sorted's rows not yet written
        self._sorted_bytes = 0

    def flush(self, rows: pa.Table) -> None:
        """Sort, pre-aggregate and write `rows` as the rowset's next segment(s)."""
        if self._write(flush(rows, self.schema)):
            self.flushes += 1

    def add_sorted(self, rows: pa.Table) -> None:
        """Rows already flushed, each call's keys after the previous call's (a compaction's
        merged chunks): held until they make a segment of `COMPACTION_SEGMENT_BYTES` (at most
        max_segment_size), then written. The rowset stays non-overlapping."""
        self._sorted.append(rows)
        self._sorted_bytes += rows.nbytes
        if self._sorted_bytes >= min(COMPACTION_SEGMENT_BYTES, self.max_segment_size):
            self._write_sorted()

    def _write_sorted(self) -> None:
        if self._sorted:
            table = pa.concat_tables(self._sorted) if len(self._sorted) > 1 else self._sorted[0]
            self._sorted, self._sorted_bytes = [], 0
            self._write(table)

    def _write(self, table: pa.Table) -> bool:
        """Write flushed rows as the next segment(s); False if there were none."""
        try:
            names, counts, size = write_segments(self.directory, self.rowset_id, table,
                                                 self.schema, self.options,
                                                 self.max_segment_size, len(self.segments))
        except BaseException:
            self.abort()
            raise
        self.segments += names
        self.segment_rows += counts
        self.data_size += size
        return bool(names)

    def finish(self) -> RowsetMeta:
        """The pending rowset (files fsynced with their directory); not yet visible."""
        self._write_sorted()
        try:
            fsync_path(self.directory)
        except BaseException:
            self.abort()
            raise
        return RowsetMeta(self.rowset_id, self.tablet_id, self.txn_id, sum(self.segment_rows),
                          self.data_size, list(self.segments), list(self.segment_rows),
                          creation_time=time.time(), column_ids=self.schema.column_ids(),
                          overlapping=self.flushes > 1)

    def abort(self) -> None:
        self._on_abort(self.rowset_id)
