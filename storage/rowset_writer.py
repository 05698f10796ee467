"""RowsetWriter: one pending rowset written by several memtable flushes (Doris's BetaRowsetWriter).

A load hands a tablet's rows to its rowset in pieces: each `flush(rows)` sorts and
pre-aggregates one memtable (memtable.flush) and appends its segments to the rowset's files
(`<rowset_id>_<n>.dat`, n continuing across flushes); `finish()` fsyncs the tablet directory
and returns the pending `RowsetMeta`. A rowset written by more than one flush is *overlapping*
(Doris's OVERLAPPING segments): its segments are each sorted, but keys may repeat across them,
so readers of AGGREGATE/UNIQUE tables merge its segments as they merge rowsets
(storage/tablet_reader.py), in segment order (a later flush holds later rows). `abort()`
removes every file written so far.
"""

from __future__ import annotations

import time
from typing import Callable

import pyarrow as pa

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

    def flush(self, rows: pa.Table) -> None:
        """Sort, pre-aggregate and write `rows` as the rowset's next segment(s)."""
        table = flush(rows, self.schema)
        try:
            names, counts, size = write_segments(self.directory, self.rowset_id, table,
                                                 self.schema, self.options,
                                                 self.max_segment_size, len(self.segments))
        except BaseException:
            self.abort()
            raise
        if names:
            self.flushes += 1
        self.segments += names
        self.segment_rows += counts
        self.data_size += size

    def finish(self) -> RowsetMeta:
        """The pending rowset (files fsynced with their directory); not yet visible."""
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
