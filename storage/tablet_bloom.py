"""Bloom filters of all a tablet's segments tested at once, for `=` / `IN` on a bloom column.

After many small loads (before compaction) a tablet holds tens of small segments. A selective
equality on a bloom filter column then used to open a scan of every segment to test that
segment's page filters: ~60 us of Python per segment, more than the bloom filter saved over a
plain scan. Here the page filters of every segment of the tablet's snapshot whose filters are
already loaded (a segment's first scan loads them) are concatenated once per (column, rowsets)
into one `BloomFilters` (its pages tagged with their segment) and tested with one
`may_contain`. The `Verdict`: rowsets whose every segment is ruled out are skipped and counted
in one step (as a bloom-pruned scan counts them: rows and pages as BloomFilterFiltered), other
ruled-out segments are counted one by one (`SegmentReader.scan_ruled_out`), and the surviving
segments are scanned with the pages the test kept (not tested again). Segments without the
filter, with another column type (an older schema) or not loaded yet go the usual way, which
tests them page by page.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pyarrow as pa

from storage.predicate import ColumnPredicate, prepare
from storage.segment.bloom_filter import BloomFilters
from storage.segment.column_reader import SegmentIO
from storage.segment.filters import _value_hashes

MIN_SEGMENTS = 8  # below, the per-segment test costs less than building the combined one
_MEMO_ENTRIES = 4  # combined filters kept per tablet (columns x snapshots in use)


class _Combined:
    """The loaded page filters of some segments of a tablet, one column, concatenated."""

    def __init__(self, segments: list[tuple[tuple[int, int], BloomFilters, object]],
                 rowsets: list):
        self.keys = [key for key, _, _ in segments]
        parts = [f for _, f, _ in segments]
        self.readers = [reader for _, _, reader in segments]
        self.filters = BloomFilters(np.concatenate([f.sizes for f in parts]),
                                    np.concatenate([f.has_null for f in parts]),
                                    np.concatenate([f.data for f in parts]))
        self.bloom_pages = np.array([len(f) for f in parts], dtype=np.int64)
        self.page_starts = np.concatenate(([0], np.cumsum(self.bloom_pages)))
        self.owner = np.repeat(np.arange(len(parts)), self.bloom_pages)
        self.rows = np.array([r.num_rows for r in self.readers], dtype=np.int64)
        # the rowset of each segment, and which rowsets have every segment here
        index = {rs.rowset_id: i for i, rs in enumerate(rowsets)}
        self.rowset_ids = [rs.rowset_id for rs in rowsets]
        self.rowset_of = np.array([index[rs_id] for rs_id, _ in self.keys], dtype=np.int64)
        held = np.bincount(self.rowset_of, minlength=len(rowsets))
        self.complete = held == np.array([rs.num_segments for rs in rowsets], dtype=np.int64)
        self._pages_needed: dict[tuple, np.ndarray] = {}

    def pages_needed(self, needed: tuple) -> np.ndarray:
        """Pages per segment of the columns a scan reads (what a scan counts as PagesTotal)."""
        found = self._pages_needed.get(needed)
        if found is None:
            found = np.array([sum(r.columns[c].num_pages for c in needed if c in r.columns)
                              for r in self.readers], dtype=np.int64)
            self._pages_needed[needed] = found
        return found


class Verdict:
    """What the tablet's bloom filters say of a scan's segments (`ruled_out`):

    - `whole`: rowsets every segment of which is ruled out; they give no table at all and
      `count_whole` counts them as scanned and bloom-pruned in one step;
    - `segments`: (rowset id, segment no) -> bloom column of the other ruled-out segments;
    - `pages`: (rowset id, segment no) -> (bloom column, bool per page) of the surviving
      segments: the pages their filters keep, so that their scans need not test them again.
    """

    def __init__(self) -> None:
        self.whole: set[int] = set()
        self.segments: dict[tuple[int, int], str] = {}
        self.pages: dict[tuple[int, int], tuple[str, np.ndarray]] = {}
        self.probed: set[tuple[int, int]] = set()  # `probe` found no row in the kept pages
        self._counted: list[tuple[_Combined, np.ndarray]] = []
        self._readers: dict[tuple[int, int], object] = {}
        self._prepared: dict[str, object] = {}

    def __bool__(self) -> bool:
        return bool(self.whole or self.segments or self.pages)

    def count_whole(self, columns: list[str], predicates: list[ColumnPredicate],
                    stats) -> None:
        """The counters of the `whole` rowsets' segments, as `SegmentReader.count_ruled_out`
        counts one segment."""
        needed = tuple(dict.fromkeys([*columns, *(p.column for p in predicates)]))
        for combined, ruled in self._counted:
            n = int(np.count_nonzero(ruled))
            if not n:
                continue
            rows = int(combined.rows[ruled].sum())
            stats.segments_total += n
            stats.segments_read += n
            stats.rows_total += rows
            stats.rows_bloom_filter_filtered += rows
            stats.pages_total += int(combined.pages_needed(needed)[ruled].sum())
            stats.pages_bloom_filter_filtered += int(combined.bloom_pages[ruled].sum())

    def _add(self, combined: _Combined, column: str, pages: np.ndarray) -> None:
        alive = np.zeros(len(combined.keys), dtype=bool)
        alive[combined.owner[pages]] = True
        if not self._counted:  # whole rowsets from the first bloom column's test
            living = np.bincount(combined.rowset_of, weights=alive,
                                 minlength=len(combined.complete))
            whole = combined.complete & (living == 0)
            in_whole = whole[combined.rowset_of]
            self.whole = {combined.rowset_ids[i] for i in np.flatnonzero(whole).tolist()}
            self._counted.append((combined, in_whole))
        else:
            in_whole = np.array([rs_id in self.whole for rs_id, _ in combined.keys], dtype=bool)
        for i in np.flatnonzero(~alive & ~in_whole).tolist():
            key = combined.keys[i]
            self.segments.setdefault(key, column)
            self.pages.pop(key, None)  # an earlier column kept it: this one rules it out
        for i in np.flatnonzero(alive & ~in_whole).tolist():
            key = combined.keys[i]
            if key not in self.pages and key not in self.segments:
                lo, hi = combined.page_starts[i], combined.page_starts[i + 1]
                self.pages[key] = (column, pages[lo:hi])
                self._readers[key] = combined.readers[i]

    def probe(self, columns: list[str], predicates: list[ColumnPredicate], stats) -> None:
        """Decode the kept pages of the bloom column of every surviving segment and test
        the bloom column's predicate on all of them at once: the segments with no row
        satisfying it (the filters' false positives, ~5% of pages) join `probed` and are
        counted as a scan that read those pages and filtered every row. Each of them
        otherwise costs a segment scan of its own (~70 us of Python); a segment that does
        hold the value is scanned after the probe, its pages then in the page cache."""
        if not self.pages:
            return
        needed = tuple(dict.fromkeys([*columns, *(p.column for p in predicates)]))
        keys = [k for k, (column, _) in self.pages.items() if column in self._prepared]
        values, lengths = [], []
        for key in keys:
            column, keep = self.pages[key]
            seg = self._readers[key]
            col = seg.columns[column]
            with SegmentIO(seg.path, seg.tablet_id, stats, seg.cache, seg.owner) as io:
                ranges = col.page_ranges(io, keep)
                values.append(col.read_ranges(io, ranges))
            lengths.append(ranges.count)
        if not keys:
            return
        columns_of = [self.pages[k][0] for k in keys]
        hits = np.zeros(len(keys), dtype=np.int64)
        for column in dict.fromkeys(columns_of):
            which = [i for i, c in enumerate(columns_of) if c == column]
            arrays = [chunk for i in which for chunk in values[i].chunks]
            mask = self._prepared[column].evaluate_numpy(
                pa.chunked_array(arrays, values[which[0]].type))
            counts = np.asarray([lengths[i] for i in which], dtype=np.int64)
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            found = np.add.reduceat(mask.astype(np.int64), starts) if len(mask) else \
                np.zeros(len(which), np.int64)
            hits[which] = np.where(counts > 0, found, 0)
        for i in np.flatnonzero(hits == 0).tolist():
            key = keys[i]
            column, keep = self.pages[key]
            seg = self._readers[key]
            self.probed.add(key)
            read = lengths[i]
            stats.segments_total += 1
            stats.segments_read += 1
            stats.rows_total += seg.num_rows
            stats.pages_total += sum(seg.columns[c].num_pages for c in needed
                                     if c in seg.columns)
            stats.pages_bloom_filter_filtered += int(np.count_nonzero(~keep))
            stats.rows_bloom_filter_filtered += seg.num_rows - read
            stats.rows_read += read
            stats.rows_conditions_filtered += read


def ruled_out(tablet, rowsets: list, predicates: list[ColumnPredicate], schema,
              skip=lambda rowset: False) -> Verdict:
    """The Verdict of the bloom filters of the schema's bloom filter columns on the segments
    of `rowsets` (segment files, not load file slices; `skip` leaves out more) for the rows
    satisfying `predicates`."""
    verdict = Verdict()
    bloom_columns = schema.bloom_filter_columns
    usable = [p for p in predicates if p.op in ("=", "in") and p.column in bloom_columns]
    if not usable:
        return verdict
    candidates = [rs for rs in rowsets if rs.load_file is None and not skip(rs)]
    if sum(rs.num_segments for rs in candidates) < MIN_SEGMENTS:
        return verdict
    for pred in usable:
        dtype = schema.column(pred.column).type
        prepared = prepare(pred, dtype)
        if prepared.probe_values is None or prepared.never_true:
            continue
        combined = _combined(tablet, candidates, pred.column, dtype)
        if combined is not None:
            verdict._add(combined, pred.column,
                         combined.filters.may_contain(_value_hashes(prepared, dtype)))
            verdict._prepared.setdefault(pred.column, prepared)
    return verdict


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
                segments.append(((rs.rowset_id, segment_no), filters, seg))
            elif filters is None and col is not None and col.dtype == dtype \
                    and col.has_bloom_filter:
                settled = False
    with memo.lock:
        found = memo.entries.get(key)
        if found is not None and found[0] == len(segments):
            memo.entries[key] = (found[0], found[1], settled)
            memo.entries.move_to_end(key)
            return found[1]
    combined = _Combined(segments, rowsets) if segments else None
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
