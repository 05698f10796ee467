"""The optional-index steps of a segment scan: bloom filters (seed 003 §6.2), bitmap indexes
(§5.2).

Owns deciding which predicates each index can serve and what it prunes:

- bloom filters: `x = v`, `x IN (..)` with values exactly representable in the column type (so
  their bytes hash as the stored values do), and `x IS NULL` (the page's null flag); a page is
  dropped when none of the values may be in its filter. Counted as PagesBloomFilterFiltered
  (pages that still held live rows) and RowsBloomFilterFiltered.
- bitmap indexes: `=`, `!=`, `<`, `<=`, `>`, `>=`, `IN` with exactly representable values;
  each answers its predicate exactly as a Roaring bitmap; the bitmaps of all answered
  predicates are intersected, then with the surviving row ranges. The answered predicates are
  dropped from exact evaluation. Counted as RowsBitmapIndexFiltered.
- inverted indexes: MATCH filters (storage/inverted/filter.py) narrow the rows further;
  counted as RowsInvertedIndexFiltered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np
from pyroaring import BitMap

from storage.errors import CorruptionError
from storage.predicate import PreparedPredicate
from storage.segment import bitmap_index, murmur, ngram_bloom
from storage.segment.column_reader import SegmentIO
from storage.segment.row_ranges import RowRanges

if TYPE_CHECKING:
    from storage.segment.reader import IndexOptions, SegmentReader

BLOOM_OPS = ("=", "in", "is_null")
BITMAP_OPS = ("=", "!=", "<", "<=", ">", ">=", "in")


def _bloom_usable(reader: SegmentReader, pred: PreparedPredicate,
                  indexes: IndexOptions | None) -> bool:
    if pred.op not in BLOOM_OPS or not reader.columns[pred.column].has_bloom_filter:
        return False
    if indexes is not None and pred.column not in indexes.bloom_filter_columns:
        return False
    return pred.op == "is_null" or (pred.probe_values is not None and not pred.never_true)


def _value_hashes(pred: PreparedPredicate, dtype) -> np.ndarray:
    """The bloom hashes of the predicate's constants, computed once per prepared predicate
    and column type (prepared predicates are shared by every segment a scan reads)."""
    memo = pred.__dict__.setdefault("_bloom_hashes", {})
    hashes = memo.get(dtype)
    if hashes is None:
        hashes = memo[dtype] = murmur.hash_values(pred.probe_values, dtype)
    return hashes


def _tested_pages(indexes: IndexOptions | None, pred: PreparedPredicate) -> np.ndarray | None:
    if indexes is None or not indexes.bloom_pages or pred.op == "is_null":
        return None
    for column, keep in indexes.bloom_pages:
        if column == pred.column:
            return keep
    return None


def bloom_filter_ranges(reader: SegmentReader, io: SegmentIO, prepared: list[PreparedPredicate],
                        ranges: RowRanges, indexes: IndexOptions | None) -> RowRanges:
    usable = [p for p in prepared if _bloom_usable(reader, p, indexes)]
    if not usable:
        return ranges
    before = ranges.count
    for pred in usable:
        if ranges.is_empty:
            break
        col = reader.columns[pred.column]
        tested = _tested_pages(indexes, pred)
        if tested is not None:  # the tablet's test of all its segments (storage/tablet_bloom.py)
            keep = tested
        elif pred.op == "is_null":
            keep = col.bloom_filters(io).has_null.copy()
        else:
            keep = col.bloom_filters(io).may_contain(_value_hashes(pred, col.dtype))
        if keep.all():
            continue
        starts, ends = col.page_bounds(io)
        if not keep.any():  # no page may hold the values: nothing of the segment is read
            whole = len(ranges) == 1 and ranges.starts[0] <= starts[0] and \
                ranges.ends[0] >= ends[-1]  # every page still holds live rows
            io.stats.pages_bloom_filter_filtered += len(starts) if whole else \
                int((ranges.count_within(starts, ends) > 0).sum())
            ranges = RowRanges.empty()
            continue
        dropped = np.flatnonzero(~keep)
        alive = ranges.count_within(starts[dropped], ends[dropped]) > 0
        io.stats.pages_bloom_filter_filtered += int(alive.sum())
        ranges = ranges.intersect(col.page_ranges(io, keep))
    io.stats.rows_bloom_filter_filtered += before - ranges.count
    return ranges


def ngram_ranges(reader: SegmentReader, io: SegmentIO, active: tuple,
                 ranges: RowRanges) -> RowRanges:
    """The ranges left after the NGRAM_BF filters of the active `NgramFilter`s (`col LIKE
    'pattern'`, segment/ngram_bloom.py); pages and rows dropped count as bloom filter ones, as
    Doris counts its ngram bloom filter index."""
    before = ranges.count
    for f in active:
        if ranges.is_empty:
            break
        if not isinstance(f, ngram_bloom.NgramFilter) or f.column not in reader.columns:
            continue
        col = reader.columns[f.column]
        found = col.ngram_filters(io)
        if found is None:
            continue
        keep = ngram_bloom.pages_kept(found, f.pattern, int(col.meta["ngram_bf"]["gram_size"]))
        if keep.all():
            continue
        starts, ends = col.page_bounds(io)
        dropped = np.flatnonzero(~keep)
        io.stats.pages_bloom_filter_filtered += int(
            (ranges.count_within(starts[dropped], ends[dropped]) > 0).sum())
        ranges = ranges.intersect(col.page_ranges(io, keep)) if keep.any() else RowRanges.empty()
    io.stats.rows_bloom_filter_filtered += before - ranges.count
    return ranges


def answer(reader: SegmentReader, io: SegmentIO, path: str, column: str, kind: str,
           lookup: Callable[[Callable], BitMap]) -> BitMap:
    """`lookup(load)` of an index held in `path` (the segment or a side file), its pages read
    through the scan's IO; undecodable pages are a CorruptionError."""
    target = io if path == reader.path else io.other(path)

    def load(pointer, page_type):
        return target.read_page(pointer, page_type, column)

    try:
        return lookup(load)
    except (ValueError, IndexError, KeyError) as exc:
        raise CorruptionError(f"undecodable {kind} index: {exc}", **target.where(column)) from exc


def bitmap_index_rows(reader: SegmentReader, io: SegmentIO, prepared: list[PreparedPredicate],
                      ranges: RowRanges, indexes: IndexOptions | None
                      ) -> tuple[np.ndarray | None, list[PreparedPredicate]]:
    """(row ids left after the bitmap indexes or None if none applied, predicates left)."""
    answered: BitMap | None = None
    remaining = []
    for pred in prepared:
        found = None
        if pred.op in BITMAP_OPS and pred.probe_values is not None and not pred.never_true:
            found = reader.bitmap_index(pred.column, indexes)
        if found is None:
            remaining.append(pred)
            continue
        index, path = found
        rows = answer(reader, io, path, pred.column, "bitmap",
                      lambda load: index.lookup(pred.op, pred.probe_values, load))
        answered = rows if answered is None else answered & rows
    if answered is None:
        return None, prepared
    ids = bitmap_index.rows_of(answered)
    ids = ids[ranges.contains(ids)]
    io.stats.rows_bitmap_index_filtered += ranges.count - len(ids)
    return ids, remaining


def inverted_index_ids(io: SegmentIO, matched: BitMap, ranges: RowRanges,
                       ids: np.ndarray | None) -> np.ndarray:
    """The row ids left after the inverted indexes' answer `matched` (storage/inverted/
    filter.py), within the surviving ranges and bitmap index ids; counted as
    RowsInvertedIndexFiltered."""
    found = bitmap_index.rows_of(matched)
    before = ranges.count if ids is None else len(ids)
    found = found[ranges.contains(found)]
    if ids is not None:
        found = np.intersect1d(found, ids, assume_unique=True)
    io.stats.rows_inverted_index_filtered += before - len(found)
    return found
