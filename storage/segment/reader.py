"""Segment reader: a pruned, exact scan of one segment file.

Owns the read path of seed 003 for one segment (counters in storage/stats.py):

    1. footer (read once at open, checked)          -> column metas, short key meta
    2. segment zone maps: a predicate no segment value can satisfy skips the whole file
    3. short key index: predicates on the leading key columns -> key ranges -> row ranges
       (binary search inside one index interval; key_range.py, short_key.py)
    4. page zone maps of each predicate column: keep pages per seed 003 §4.2, intersect
       their row ranges with the current ones (zone_map.py, row_ranges.py)
    5. decode the predicate columns over the surviving ranges, evaluate the predicates exactly
    6. decode the other wanted columns only for pages holding surviving rows, gather them

Only needed columns and pages are read; index pages are loaded once and kept on the reader,
which is shared by concurrent scans (each scan has its own file handle and page cache).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from storage.errors import CorruptionError, StorageError
from storage.predicate import ColumnPredicate, PreparedPredicate, combined_mask, prepare
from storage.segment import footer, page, short_key, zone_map
from storage.segment.column_reader import ColumnReader, SegmentIO
from storage.segment.key_range import key_ranges
from storage.segment.row_ranges import RowRanges
from storage.stats import ScanStats


class SegmentReader:
    def __init__(self, path: str, tablet_id: int | None = None):
        self.path = path
        self.tablet_id = tablet_id
        where = {"tablet_id": tablet_id, "path": path}
        fd = os.open(path, os.O_RDONLY)
        try:
            self.file_size = os.fstat(fd).st_size
            meta = footer.read_footer(fd, self.file_size, where)
        finally:
            os.close(fd)
        try:
            self.num_rows: int = meta["num_rows"]
            self.columns = {m["name"]: ColumnReader(m, self.num_rows) for m in meta["columns"]}
            self._short_key_meta: dict | None = meta["short_key"]
        except (KeyError, TypeError) as exc:
            raise CorruptionError(f"footer lacks {exc}", **where) from exc
        self._short_key: short_key.ShortKeyIndex | None = None

    def read(self, columns: list[str], predicates: list[ColumnPredicate],
             stats: ScanStats) -> pa.Table:
        """Rows satisfying every predicate, `columns` in that order."""
        table = self.scan(columns, predicates, stats)
        stats.rows_returned += table.num_rows
        return table

    def scan(self, columns: list[str], predicates: list[ColumnPredicate],
             stats: ScanStats) -> pa.Table:
        """`read` without counting RowsReturned (the tablet counts what it returns)."""
        for name in [*columns, *(p.column for p in predicates)]:
            if name not in self.columns:
                raise StorageError(f"Column {name} is not stored in segment {self.path}")
        prepared = [prepare(p, self.columns[p.column].dtype) for p in predicates]
        stats.segments_total += 1
        stats.rows_total += self.num_rows
        with SegmentIO(self.path, self.tablet_id, stats) as io:
            if not self._segment_may_match(io, prepared):
                stats.segments_filtered += 1
                stats.rows_zone_map_filtered += self.num_rows
                return self.empty(columns)
            stats.segments_read += 1
            needed = list(dict.fromkeys([*columns, *(p.column for p in prepared)]))
            stats.pages_total += sum(self.columns[c].num_pages for c in needed)
            ranges = self._short_key_ranges(io, prepared)
            ranges = self._zone_map_ranges(io, prepared, ranges)
            if ranges.is_empty:
                return self.empty(columns)
            return self._materialize(io, columns, prepared, ranges)

    def empty(self, columns: list[str]) -> pa.Table:
        return pa.Table.from_arrays([pa.array([], self.columns[c].dtype.arrow()) for c in columns],
                                    names=list(columns))

    # -- index pruning -------------------------------------------------------------------------
    def _segment_may_match(self, io: SegmentIO, prepared: list[PreparedPredicate]) -> bool:
        return all(zone_map.keep(self.columns[p.column].segment_zone_map(io), p)[0]
                   for p in prepared)

    def _short_key_index(self, io: SegmentIO) -> short_key.ShortKeyIndex:
        if self._short_key is None:
            body = io.read_page(self._short_key_meta["page"], page.SHORT_KEY, None).body
            try:
                index = short_key.ShortKeyIndex.parse(body)
            except ValueError as exc:
                raise CorruptionError(str(exc), **io.where()) from exc
            if index.num_rows != self.num_rows:
                raise CorruptionError("short key index row count differs", **io.where())
            self._short_key = index
        return self._short_key

    def _short_key_ranges(self, io: SegmentIO, prepared: list[PreparedPredicate]) -> RowRanges:
        full = RowRanges.full(self.num_rows)
        meta = self._short_key_meta
        if meta is None or not prepared:
            return full
        names, widths = meta["columns"], meta["widths"]
        types = [self.columns[n].dtype for n in names]
        total = sum(short_key.slot_width(t, w) for t, w in zip(types, widths))
        ranges = key_ranges(prepared, types, names, widths, total)
        if ranges is None:
            return full
        index = self._short_key_index(io)

        def load_keys(start: int, end: int) -> np.ndarray:
            window = RowRanges.of([start], [end])
            arrays = [self.columns[n].read_ranges(io, window) for n in names]
            return short_key.as_sortable(short_key.encode_keys(arrays, types, widths))

        result = RowRanges.empty()
        for kr in ranges:
            lo = index.first_row(kr.lower.key, kr.lower.strict, load_keys)
            hi = index.first_row(kr.upper.key, kr.upper.strict, load_keys)
            result = result.union(RowRanges.of([lo], [hi]))
        io.stats.rows_short_key_filtered += self.num_rows - result.count
        return result

    def _zone_map_ranges(self, io: SegmentIO, prepared: list[PreparedPredicate],
                         ranges: RowRanges) -> RowRanges:
        before = ranges.count
        for pred in prepared:
            col = self.columns[pred.column]
            if col.num_pages == 1:
                continue  # its only page's zone map is the segment zone map, already passed
            keep = zone_map.keep(col.zone_maps(io), pred)
            io.stats.pages_zone_map_filtered += int((~keep).sum())
            if not keep.all():
                ranges = ranges.intersect(col.page_ranges(io, keep))
        io.stats.rows_zone_map_filtered += before - ranges.count
        return ranges

    # -- decoding ------------------------------------------------------------------------------
    def _materialize(self, io: SegmentIO, columns: list[str],
                     prepared: list[PreparedPredicate], ranges: RowRanges) -> pa.Table:
        io.stats.rows_read += ranges.count
        if not prepared:
            return self._table(columns, {c: self.columns[c].read_ranges(io, ranges)
                                         for c in dict.fromkeys(columns)}, ranges.count)
        arrays = {p.column: self.columns[p.column].read_ranges(io, ranges) for p in prepared}
        mask = _bool_numpy(combined_mask(prepared, arrays))
        selected = int(mask.sum())
        io.stats.rows_conditions_filtered += ranges.count - selected
        if selected == 0:
            return self.empty(columns)
        if selected == ranges.count:
            for c in dict.fromkeys(columns):
                if c not in arrays:
                    arrays[c] = self.columns[c].read_ranges(io, ranges)
            return self._table(columns, arrays, selected)
        rows = ranges.to_indices()[mask]
        selector = pa.array(mask)
        out = {}
        for c in dict.fromkeys(columns):
            out[c] = arrays[c].filter(selector) if c in arrays else \
                self.columns[c].read_rows(io, rows)
        return self._table(columns, out, selected)

    @staticmethod
    def _table(columns: list[str], arrays: dict, num_rows: int) -> pa.Table:
        if not columns:  # e.g. count(*): no column, but the row count matters
            return pa.table({"_": pa.nulls(num_rows)}).select([])
        return pa.Table.from_arrays([arrays[c] for c in columns], names=list(columns))


def _bool_numpy(mask) -> np.ndarray:
    if isinstance(mask, pa.ChunkedArray):
        mask = mask.combine_chunks() if mask.num_chunks != 1 else mask.chunk(0)
    return mask.to_numpy(zero_copy_only=False)
