"""Rowsets: the segments one load (or, later, one compaction) adds to a tablet.

Owns `RowsetMeta` (what the catalog journals for a published rowset) and writing a flushed
memtable as segment files. Files live in the tablet's directory, named by integers only:

    <root>/data/<tablet_id>/<rowset_id>_<segment_no>.dat

A rowset is written "pending" (files on disk, no version) and becomes visible when the tablet
publishes it at a version [v, v]. A small load's rowset may instead be a slice of a load
file shared by the load's tablets (`load_file`, `load_offset`: storage/load_file.py).
A DELETE adds a *delete rowset*: no rows and no files, only
`delete_predicate` (a conjunction of column predicates, JSON form): reads at versions >= v
remove the rows of older rowsets that match it (seed 002's delete versions).

Rows are split into segments so that no segment exceeds
`max_segment_size` (seed 003: segments of at most 256 MB): the split is computed from each
row's uncompressed size, which bounds the file size (compression only shrinks pages; 10% of the
budget is left for headers and indexes). Within an AGG/UNIQUE rowset written by one flush keys
are unique, so no key spans two segments; a rowset of several flushes (a large load,
storage/rowset_writer.py) is `overlapping` and read merged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa

from storage.arrays import contiguous
from storage.schema import TabletSchema
from storage.segment import SegmentOptions, write_segment
from storage.types import json_storage

DEFAULT_MAX_SEGMENT_SIZE = 256 * 1024 * 1024


@dataclass
class RowsetMeta:
    rowset_id: int
    tablet_id: int
    txn_id: int
    num_rows: int
    data_size: int
    segments: list[str] = field(default_factory=list)
    segment_rows: list[int] = field(default_factory=list)
    start_version: int | None = None
    end_version: int | None = None
    delete_predicate: list[dict] | None = None  # ColumnPredicate.to_dict() of each conjunct
    creation_time: float = 0.0  # unix seconds when written (the compaction skip window)
    load_file: str | None = None  # rows are a slice of this load file (storage/load_file.py)
    load_offset: int = 0  # ... starting at this row
    # column name -> unique id under the schema the rowset was written with (None: the
    # schema had no unique ids); storage/column_mapping.py maps it to the current schema.
    column_ids: dict[str, int] | None = None
    overlapping: bool = False  # several flushes: keys may repeat across its segments
    # merge-on-write: the delete bitmap entries publishing this rowset added (for a compaction
    # output: the ones it carries over), storage/delete_bitmap.py's JSON form; None: none
    # computed (not merge-on-write, or a rowset published before the tablet kept bitmaps)
    delete_bitmap: list[list] | None = None

    @property
    def is_published(self) -> bool:
        return self.end_version is not None

    @property
    def is_delete(self) -> bool:
        return self.delete_predicate is not None

    @property
    def num_segments(self) -> int:
        """Segment files, or 1 for a slice of a load file (it reads as one segment: compaction
        scores and SHOW TABLETS count it so)."""
        return len(self.segments) or (1 if self.load_file is not None else 0)

    def published_at(self, version: int) -> RowsetMeta:
        return replace(self, start_version=version, end_version=version,
                       segments=list(self.segments), segment_rows=list(self.segment_rows))

    def to_dict(self) -> dict:
        d = {"rowset_id": self.rowset_id, "tablet_id": self.tablet_id, "txn_id": self.txn_id,
             "num_rows": self.num_rows, "data_size": self.data_size,
             "segments": list(self.segments), "segment_rows": list(self.segment_rows),
             "start_version": self.start_version, "end_version": self.end_version,
             "creation_time": self.creation_time}
        if self.delete_predicate is not None:
            d["delete_predicate"] = list(self.delete_predicate)
        if self.load_file is not None:
            d["load_file"], d["load_offset"] = self.load_file, self.load_offset
        if self.column_ids is not None:
            d["column_ids"] = dict(self.column_ids)
        if self.overlapping:
            d["overlapping"] = True
        if self.delete_bitmap is not None:
            d["delete_bitmap"] = [list(e) for e in self.delete_bitmap]
        return d

    @staticmethod
    def from_dict(d: dict) -> RowsetMeta:
        return RowsetMeta(int(d["rowset_id"]), int(d["tablet_id"]), int(d["txn_id"]),
                          int(d["num_rows"]), int(d["data_size"]), list(d.get("segments", [])),
                          list(d.get("segment_rows", [])), d.get("start_version"),
                          d.get("end_version"), d.get("delete_predicate"),
                          float(d.get("creation_time", 0.0)), d.get("load_file"),
                          int(d.get("load_offset", 0)), d.get("column_ids"),
                          bool(d.get("overlapping", False)), d.get("delete_bitmap"))


def segment_file_name(rowset_id: int, segment_no: int) -> str:
    return f"{int(rowset_id)}_{int(segment_no)}.dat"


def parse_file_name(name: str) -> tuple[int, int] | None:
    """(rowset_id, segment_no) of a segment file name, or None for anything else."""
    stem, dot, ext = name.partition(".")
    rowset, _, segment = stem.partition("_")
    if ext != "dat" or not rowset.isdigit() or not segment.isdigit():
        return None
    return int(rowset), int(segment)


def row_bytes(table: pa.Table) -> np.ndarray:
    """Uncompressed bytes each row occupies in data pages (int64 per row)."""
    sizes = np.zeros(table.num_rows, dtype=np.int64)
    for col in table.columns:
        arr = json_storage(contiguous(col))  # a JSON column: its texts
        if pa.types.is_string(arr.type):
            offsets = np.frombuffer(arr.buffers()[1], np.int32)
            offsets = offsets[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
            sizes += np.diff(offsets) + 4
        elif pa.types.is_nested(arr.type):  # ARRAY / MAP / STRUCT: average bytes per row
            sizes += max(1, arr.nbytes // max(len(arr), 1))
        else:
            sizes += max(1, arr.type.bit_width // 8)
    return sizes


def segment_bounds(table: pa.Table, max_segment_size: int) -> list[tuple[int, int]]:
    """[start, end) rows of each segment so that every segment stays under the size limit."""
    n = table.num_rows
    budget = max(1, int(max_segment_size * 0.9))
    sizes = row_bytes(table)
    segment_no = (np.cumsum(sizes) - sizes) // budget
    starts = np.concatenate([[0], np.flatnonzero(np.diff(segment_no)) + 1]).tolist()
    return list(zip(starts, starts[1:] + [n]))


def write_segments(directory: str, rowset_id: int, table: pa.Table, schema: TabletSchema,
                   options: SegmentOptions,
                   max_segment_size: int,
                   first_segment: int = 0) -> tuple[list[str], list[int], int]:
    """Write `table` (flushed) as segment files numbered from `first_segment`; returns (file
    names, rows per file, bytes)."""
    if table.num_rows == 0:
        return [], [], 0
    names, rows, total = [], [], 0
    for i, (start, end) in enumerate(segment_bounds(table, max_segment_size)):
        name = segment_file_name(rowset_id, first_segment + i)
        info = write_segment(os.path.join(directory, name), table.slice(start, end - start),
                             schema, options)
        names.append(name)
        rows.append(info.num_rows)
        total += info.size
    return names, rows, total

