"""Bloom filters of all a tablet's segments tested at once, for `=` / `IN` on a bloom column.

After many small loads (before compaction) a tablet holds tens of small segments. A selective
equality on a bloom filter column then used to open a scan of every segment to test that
segment's page filters: ~60 us of Python per segment, more than the bloom filter saved over a
plain scan. Here the page filters of every segment of the tablet's snapshot whose filters are
already loaded (a segment's first scan loads them) are concatenated once per (column, rowsets)
into one `BloomFilters` (its pages tagged with their segment) and tested with one
`may_contain`; the segments whose every page is ruled out are not scanned
(`SegmentReader.scan_ruled_out` counts them as a bloom-pruned scan does, rows and pages as
BloomFilterFiltered). Segments without the filter, with another column type (an older schema)
or not loaded yet go the usual way, which tests them page by page.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from storage.predicate import ColumnPredicate, prepare
from storage.segment.bloom_filter import BloomFilters
from storage.segment.filters import _value_hashes

MIN_SEGMENTS = 8  # below, the per-segment test costs less than building the combined one
_MEMO_ENTRIES = 4  # combined filters kept per tablet (columns x snapshots in use)


class _Combined:
    """The loaded page filters of some segments of a tablet, one column, concatenated."""

    def __init__(self, segments: list[tuple[tuple[int, int], BloomFilters]]):
        self.keys = [key for key, _ in segments]
        parts = [f for _, f in segments]
        self.filters = BloomFilters(np.concatenate([f.sizes for f in parts]),
                                    np.concatenate([f.has_null for f in parts]),
                                    np.concatenate([f.data for f in parts]))
        self.owner = np.repeat(np.arange(len(parts)), [len(f) for f in parts])

    def ruled_out(self, hashes: np.ndarray) -> list[tuple[int, int]]:
        pages = self.filters.may_contain(hashes)
        alive = np.zeros(len(self.keys), dtype=bool)
        alive[self.owner[pages]] = True
        return [self.keys[i] for i in np.flatnonzero(~alive).tolist()]


def ruled_out(tablet, rowsets: list, predicates: list[ColumnPredicate], schema,
              skip=lambda rowset: False) -> dict[tuple[int, int], str]:
    """(rowset id, segment no) -> bloom column, of the segments of `rowsets` (segment files,
    not load file slices; `skip` leaves out more) that no row satisfying `predicates` can be
    in, by the bloom filters of the schema's bloom filter columns."""
    bloom_columns = schema.bloom_filter_columns
    usable = [p for p in predicates if p.op in ("=", "in") and p.column in bloom_columns]
    if not usable:
        return {}
    candidates = [rs for rs in rowsets if rs.load_file is None and not skip(rs)]
    if sum(rs.num_segments for rs in candidates) < MIN_SEGMENTS:
        return {}
    out: dict[tuple[int, int], str] = {}
    for pred in usable:
        dtype = schema.column(pred.column).type
        prepared = prepare(pred, dtype)
        if prepared.probe_values is None or prepared.never_true:
            continue
        combined = _combined(tablet, candidates, pred.column, dtype)
        if combined is not None:
            for segment in combined.ruled_out(_value_hashes(prepared, dtype)):
                out.setdefault(segment, pred.column)
    return out


def _combined(tablet, rowsets: list, column: str, dtype) -> _Combined | None:
    """The combined filters of the segments whose filters are loaded, kept per (column,
    rowsets) and built again only when more of them have been loaded since (a segment its
    zone maps ruled out never loads them: it stays out and goes the per-segment way)."""
    key = (column, dtype, tuple(rs.rowset_id for rs in rowsets))
    memo = _memo(tablet)
    with memo.lock:
        found = memo.entries.get(key)
        if found is not None and found[2]:  # every segment settled: nothing more can load
            memo.entries.move_to_end(key)
            return found[1]
    segments = []
    settled = True  # every segment's filters loaded, or the segment has none to load
    for rs in rowsets:
        for segment_no, seg in enumerate(tablet._segments(rs)):
            col = getattr(seg, "columns", {}).get(column)
            filters = None if col is None or col.dtype != dtype else col._bloom_filters
            if filters is not None and len(filters):
                segments.append(((rs.rowset_id, segment_no), filters))
            elif filters is None and col is not None and col.dtype == dtype \
                    and col.has_bloom_filter:
                settled = False
    with memo.lock:
        found = memo.entries.get(key)
        if found is not None and found[0] == len(segments):
            memo.entries[key] = (found[0], found[1], settled)
            memo.entries.move_to_end(key)
            return found[1]
    combined = _Combined(segments) if segments else None
    with memo.lock:
        memo.entries[key] = (len(segments), combined, settled)
        while len(memo.entries) > _MEMO_ENTRIES:
            memo.entries.popitem(last=False)
    return combined


class _Memo:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: OrderedDict = OrderedDict()


def _memo(tablet) -> _Memo:
    memo = tablet.__dict__.get("_bloom_memo")
    if memo is None:
        memo = tablet.__dict__.setdefault("_bloom_memo", _Memo())
    return memo
