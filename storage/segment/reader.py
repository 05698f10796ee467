"""Segment reader: a pruned, exact scan of one segment file.

Owns the read path of seed 003 for one segment (counters in storage/stats.py):

    1. footer (read once at open, checked)          -> column metas, short key meta
    2. segment zone maps: a predicate no segment value can satisfy skips the whole file
    3. short key index: predicates on the leading key columns -> key ranges -> row ranges
       (binary search inside one index interval; key_range.py, short_key.py)
    4. page zone maps of each predicate column: keep pages per seed 003 §4.2, intersect
       their row ranges with the current ones (zone_map.py, row_ranges.py)
    5. bloom filters of `=` / `IN` / `IS NULL` predicate columns drop more pages (§6.2)
    6. bitmap indexes answer `=`, `!=`, `<`, `<=`, `>`, `>=`, `IN` exactly as row sets (§5.2);
       from here on the scan works on those row ids, and answered predicates are not evaluated
       again (filters.py holds steps 5 and 6)
    7. decode the remaining predicate columns over the surviving rows, evaluate the predicates
       exactly; DELETE predicates of later versions remove the rows they match
    8. decode the other wanted columns only for pages holding surviving rows, gather them

Each index is credited (in the counters) only with rows the cheaper steps before it left.
Doris applies bitmap indexes and bloom filters before zone maps; the rows dropped are the same.
Only needed columns and pages are read; index pages are loaded once and kept on the reader,
which is shared by concurrent scans (each scan has its own file handle and page cache).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa

from storage.arrays import contiguous
from storage.delete_bitmap import Keep
from storage.errors import CorruptionError, StorageError
from storage.page_cache import DISABLED, PageCache, new_owner
from storage.predicate import ColumnPredicate, PreparedPredicate, prepare
from storage.row_filter import row_mask
from storage.inverted import filter as inverted_filter
from storage.segment import bitmap_index, filters, footer, page, short_key, side_index, zone_map
from storage.segment.column_reader import ColumnReader, SegmentIO
from storage.segment.key_range import key_ranges
from storage.segment.row_ranges import RowRanges
from storage.stats import ScanStats

SHORT_KEY_ROWS = "\x00short_key"  # page-cache "column" of a segment's encoded key windows
DENSE_FRACTION = 16  # survivors >= 1/16 of the rows read: decode whole ranges, then filter


@dataclass(frozen=True)
class IndexOptions:
    """Which optional indexes a scan may use (the tablet schema's current ones).

    `bitmap` maps a column to the side index file to use when the segment has no bitmap index
    of that column inside (None: only an in-file index). `bloom_pages` gives, per bloom filter
    column, the pages its filters keep when the tablet tested them already
    (storage/tablet_bloom.py)."""

    bloom_filter_columns: frozenset = frozenset()
    bitmap: tuple = ()  # ((column, side file path | None), ...)
    inverted: tuple = ()  # ((column, index id, side file path | None), ...)
    bloom_pages: tuple = ()  # ((column, bool per page), ...)


@dataclass
class _Rows:
    """The rows still alive: ranges, or (after a bitmap index) explicit ascending row ids."""

    ranges: RowRanges
    ids: np.ndarray | None = None

    @property
    def count(self) -> int:
        return self.ranges.count if self.ids is None else len(self.ids)

    def indices(self) -> np.ndarray:
        return self.ranges.to_indices() if self.ids is None else self.ids


class SegmentReader:
    def __init__(self, path: str, tablet_id: int | None = None, cache: PageCache = DISABLED):
        self.path = path
        self.tablet_id = tablet_id
        self.cache, self.owner = cache, new_owner()
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
        self._side: dict = {}  # side file (or ("inverted", file)) -> its index or None
        self._empty: dict[tuple, pa.Table] = {}

    def read(self, columns: list[str], predicates: list[ColumnPredicate],
             stats: ScanStats, deletes: list[list[ColumnPredicate]] = (),
             indexes: IndexOptions | None = None,
             keep: Keep | None = None) -> pa.Table:
        """Rows satisfying every predicate, `columns` in that order."""
        table = self.scan(columns, predicates, stats, deletes, indexes, keep)
        stats.rows_returned += table.num_rows
        return table

    def scan(self, columns: list[str], predicates: list[ColumnPredicate], stats: ScanStats,
             deletes: list[list[ColumnPredicate]] = (),
             indexes: IndexOptions | None = None,
             keep: Keep | None = None) -> pa.Table:
        """`read` without counting RowsReturned (the tablet counts what it returns).

        `deletes`: DELETE conditions (each a conjunction) whose matching rows are removed.
        `indexes`: the optional indexes to use; None uses every index the segment holds.
        `keep`: the rows a merge-on-write delete bitmap leaves (storage/delete_bitmap.py; the
        others counted as RowsDelFiltered, as Doris's rows_del_by_bitmap is). A column read
        whole under it is kept in the page cache as its kept rows (the next read at a version
        applying the same bitmap entries reuses it, as a Duplicate segment's whole column)."""
        for name in [*columns, *(p.column for p in predicates),
                     *(p.column for conj in deletes for p in conj)]:
            if name not in self.columns:
                raise StorageError(f"Column {name} is not stored in segment {self.path}")
        prepared = [prepare(p, self.columns[p.column].dtype) for p in predicates]
        stats.segments_total += 1
        stats.rows_total += self.num_rows
        with SegmentIO(self.path, self.tablet_id, stats, self.cache, self.owner) as io:
            if not self._segment_may_match(io, prepared):
                stats.segments_filtered += 1
                stats.rows_zone_map_filtered += self.num_rows
                return self.empty(columns)
            stats.segments_read += 1
            # a predicate every row of the segment satisfies is not evaluated (Doris: the
            # segment zone map proves it always true)
            prepared = [p for p in prepared if not zone_map.always_true(
                self.columns[p.column].segment_zone_map(io), p)]
            live = [d for d in ([prepare(p, self.columns[p.column].dtype) for p in conj]
                                for conj in deletes) if self._segment_may_match(io, d)]
            needed = dict.fromkeys([*columns, *(p.column for p in prepared),
                                    *(p.column for conj in live for p in conj)])
            stats.pages_total += sum(self.columns[c].num_pages for c in needed)
            ranges = self._short_key_ranges(io, prepared)
            # bloom filters before page zone maps: on a selective equality they usually rule
            # out the whole segment, and the page zone maps are then not looked at
            ranges = filters.bloom_filter_ranges(self, io, prepared, ranges, indexes)
            ranges = filters.ngram_ranges(self, io, inverted_filter.active(), ranges)
            if ranges.is_empty:
                return self.empty(columns)
            ranges = self._zone_map_ranges(io, prepared, ranges)
            if ranges.is_empty:
                return self.empty(columns)
            ids, prepared = filters.bitmap_index_rows(self, io, prepared, ranges, indexes)
            matched = inverted_filter.segment_rows(self, io, indexes)
            if matched is not None:
                ids = filters.inverted_index_ids(io, matched, ranges, ids)
            rows = _Rows(ranges, ids)
            if rows.count == 0:
                return self.empty(columns)
            return self._materialize(io, columns, prepared, live, rows, keep)

    def scan_ruled_out(self, columns: list[str], predicates: list[ColumnPredicate],
                       bloom_column: str, stats: ScanStats) -> pa.Table:
        """No rows: a segment the tablet's bloom filters ruled out (storage/tablet_bloom.py),
        counted as a scan whose bloom filters on `bloom_column` drop every page."""
        self.count_ruled_out(columns, predicates, bloom_column, stats)
        return self.empty(columns)

    def count_ruled_out(self, columns: list[str], predicates: list[ColumnPredicate],
                        bloom_column: str, stats: ScanStats) -> None:
        """`scan_ruled_out`'s counters only (the page counts kept on the reader per scan
        shape: a tablet of many small rowsets counts them for every query)."""
        memo = self.__dict__.setdefault("_ruled_out_pages", {})
        key = (tuple(columns), tuple(p.column for p in predicates), bloom_column)
        pages = memo.get(key)
        if pages is None:
            needed = dict.fromkeys([*columns, *(p.column for p in predicates)])
            pages = memo[key] = (
                sum(self.columns[c].num_pages for c in needed if c in self.columns),
                self.columns[bloom_column].num_pages)
        stats.segments_total += 1
        stats.segments_read += 1
        stats.rows_total += self.num_rows
        stats.rows_bloom_filter_filtered += self.num_rows
        stats.pages_total += pages[0]
        stats.pages_bloom_filter_filtered += pages[1]

    def may_match(self, predicates: list[ColumnPredicate], stats: ScanStats) -> bool:
        """False when the segment zone maps prove no row satisfies all the predicates."""
        prepared = [prepare(p, self.columns[p.column].dtype) for p in predicates]
        with SegmentIO(self.path, self.tablet_id, stats, self.cache, self.owner) as io:
            return self._segment_may_match(io, prepared)

    def scan_batches(self, columns: list[str], stats: ScanStats,
                     deletes: list[list[ColumnPredicate]] = (),
                     batch_rows: int = 65536) -> Iterator[pa.Table]:
        """The segment's rows in their (key) order, `batch_rows` rows at a time, minus the rows
        matching `deletes`: how compaction reads its inputs (storage/compaction.py), decoding
        only the pages of the batch at hand."""
        for name in [*columns, *(p.column for conj in deletes for p in conj)]:
            if name not in self.columns:
                raise StorageError(f"Column {name} is not stored in segment {self.path}")
        live = [[prepare(p, self.columns[p.column].dtype) for p in conj] for conj in deletes]
        stats.segments_total += 1
        stats.segments_read += 1
        stats.rows_total += self.num_rows
        for start in range(0, self.num_rows, batch_rows):
            end = min(start + batch_rows, self.num_rows)
            with SegmentIO(self.path, self.tablet_id, stats, self.cache, self.owner) as io:
                table = self._materialize(io, columns, [], live,
                                          _Rows(RowRanges.of([start], [end])))
            if table.num_rows:
                yield table

    def empty(self, columns: list[str]) -> pa.Table:
        key = tuple(columns)
        table = self._empty.get(key)
        if table is None:  # pruned segments are common: build each shape once per reader
            table = pa.Table.from_arrays(
                [pa.array([], self.columns[c].dtype.arrow()) for c in columns], names=list(columns))
            self._empty[key] = table
        return table

    # -- index pruning -------------------------------------------------------------------------
    def _segment_may_match(self, io: SegmentIO, prepared: list[PreparedPredicate]) -> bool:
        return all(zone_map.keep(self.columns[p.column].segment_zone_map(io), p)[0]
                   for p in prepared)

    def _short_key_index(self, io: SegmentIO) -> short_key.ShortKeyIndex:
        if self._short_key is not None:
            io.stats.cached_pages_num += 1
        else:
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
        if names[0] not in {p.column for p in prepared}:
            return full  # the index orders by its first column: nothing to search without it
        types = [self.columns[n].dtype for n in names]
        total = sum(short_key.slot_width(t, w) for t, w in zip(types, widths))
        ranges = key_ranges(prepared, types, names, widths, total)
        if ranges is None:
            return full
        index = self._short_key_index(io)
        loaded: dict[tuple, np.ndarray] = {}  # an equality's bounds share their window

        def load_keys(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
            key = (starts.tobytes(), ends.tobytes())
            if key not in loaded:
                # the encoded keys of these rows stay in the page cache beside the pages:
                # the next lookup in the same interval of the segment encodes nothing
                cache_key = (io.owner, SHORT_KEY_ROWS, key)
                keys = io.cache.get(cache_key) if io.cache.enabled else None
                if keys is None:
                    window = RowRanges.of(starts, ends)
                    arrays = [self.columns[n].read_ranges(io, window) for n in names]
                    keys = short_key.as_sortable(short_key.encode_keys(arrays, types, widths))
                    keys.flags.writeable = False  # shared by every later lookup
                    if io.cache.enabled:
                        io.cache.put(cache_key, keys, keys.nbytes)
                loaded[key] = keys
            return loaded[key]

        lo = index.first_rows(ranges.lower, ranges.lower_strict, load_keys)
        hi = index.first_rows(ranges.upper, ranges.upper_strict, load_keys)
        result = RowRanges.of(lo, hi)
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

    def bitmap_index(self, column: str,
                     indexes: IndexOptions | None) -> tuple[bitmap_index.BitmapIndex, str] | None:
        """The bitmap index a scan may use for `column` and the file holding it, or None."""
        col = self.columns[column]
        side = None
        if indexes is not None:
            allowed = dict(indexes.bitmap)
            if column not in allowed:
                return None
            side = allowed[column]
        if col.has_bitmap_index:
            return col.bitmap_index(), self.path
        if side is None:
            return None
        if side not in self._side:
            self._side[side] = side_index.open_index(side, self.tablet_id, self.num_rows,
                                                     col.dtype)
        found = self._side[side]
        return (found, side) if found is not None else None

    def inverted_index(self, column: str, index_id: int, side: str | None):
        """(the inverted index of `column` with id `index_id`, the file holding it), or None."""
        col = self.columns[column]
        if col.inverted_index_id == index_id:
            return col.inverted_index(), self.path
        if side is None:
            return None
        key = ("inverted", side)
        if key not in self._side:
            self._side[key] = side_index.open_index(side, self.tablet_id, self.num_rows,
                                                    col.dtype, inverted=True)
        found = self._side[key]
        return (found, side) if found is not None else None

    # -- decoding ------------------------------------------------------------------------------
    def _read(self, io: SegmentIO, column: str, rows: _Rows):
        col = self.columns[column]
        return col.read_ranges(io, rows.ranges) if rows.ids is None else col.read_rows(io, rows.ids)

    def _materialize(self, io: SegmentIO, columns: list[str], prepared: list[PreparedPredicate],
                     deletes: list[list[PreparedPredicate]], rows: _Rows,
                     keep: Keep | None = None) -> pa.Table:
        count = rows.count
        io.stats.rows_read += count
        arrays: dict[str, pa.Array] = {}

        def column(name: str) -> pa.Array:  # decoded on first use, as one contiguous array
            arr = arrays.get(name)
            if arr is None:
                arr = self._read(io, name, rows)
                arr = contiguous(arr)
                arrays[name] = arr
            return arr

        mask = None
        before = count
        if keep is not None:
            mask = _rows_of(keep.mask, rows)
            before = int(np.count_nonzero(mask))
            io.stats.rows_del_filtered += count - before
        if prepared:
            live = row_mask(prepared, column, count)
            mask = live if mask is None else mask & live
            io.stats.rows_conditions_filtered += before - int(np.count_nonzero(mask))
        if deletes and (mask is None or mask.any()):
            deleted = np.zeros(count, dtype=bool)
            for conj in deletes:
                deleted |= row_mask(conj, column, count)
            if mask is not None:
                deleted &= mask
            io.stats.rows_del_filtered += int(np.count_nonzero(deleted))
            mask = ~deleted if mask is None else mask & ~deleted
        selected = count if mask is None else int(np.count_nonzero(mask))
        if selected == 0:
            return self.empty(columns)
        if not columns:  # count(*): the number of rows is all that is returned
            return self._table(columns, {}, selected)
        if selected == count:
            for c in dict.fromkeys(columns):
                if c not in arrays:
                    arrays[c] = self._read(io, c, rows)
            return self._table(columns, arrays, selected)
        # Dense survivors: every page is needed anyway, so decode the ranges and filter; sparse
        # ones: decode only the pages holding them and gather (late materialisation).
        dense = rows.ids is None and selected * DENSE_FRACTION >= count
        if dense:
            selector = pa.array(mask)
            if keep is not None and not prepared and not deletes and self.cache.enabled and \
                    rows.count == self.num_rows:  # every row minus the bitmap's: cache it
                return self._table(columns, {c: self._kept(io, c, rows, selector, keep)
                                             for c in dict.fromkeys(columns)}, selected)
        else:
            local = np.flatnonzero(mask)
            positions = pa.array(local)
            ids = rows.ids[local] if rows.ids is not None else rows.ranges.ids_at(local)
        out = {}
        for c in dict.fromkeys(columns):
            if c in arrays:
                out[c] = arrays[c].filter(selector) if dense else arrays[c].take(positions)
            elif dense:
                out[c] = self._read(io, c, rows).filter(selector)
            else:
                out[c] = self.columns[c].read_rows(io, ids)
        return self._table(columns, out, selected)

    def _kept(self, io: SegmentIO, column: str, rows: _Rows, selector: pa.Array,
              keep: Keep) -> pa.Array:
        key = (self.owner, column, "kept", keep.token)
        arr = self.cache.get(key)
        if arr is None:
            arr = contiguous(self._read(io, column, rows).filter(selector))
            self.cache.put(key, arr)
        else:
            io.stats.cached_pages_num += 1
        return arr

    @staticmethod
    def _table(columns: list[str], arrays: dict, num_rows: int) -> pa.Table:
        if not columns:  # e.g. count(*): no column, but the row count matters
            return pa.table({"_": pa.nulls(num_rows)}).select([])
        return pa.Table.from_arrays([arrays[c] for c in columns], names=list(columns))


def _rows_of(keep: np.ndarray, rows: _Rows) -> np.ndarray:
    """`keep` (a bool per segment row) at the alive rows, in `rows.indices()` order."""
    if rows.ids is None and len(rows.ranges) == 1:  # the common case: a slice, no copy
        return keep[int(rows.ranges.starts[0]):int(rows.ranges.ends[0])]
    return keep[rows.indices()]
