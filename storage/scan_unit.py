"""Scan units: the snapshots of many small tablets read as one (Doris's scanner scheduler gives
one scanner several tablets of a backend; issue 14).

A table laid out as Doris's tooling writes it (7 partitions x 48 buckets) has hundreds of
tablets of a few thousand rows each; reading them one by one costs the per-segment work
(predicate checks against each segment's indexes, column reads, masks, a table per segment)
hundreds of times for little data. A unit reads its snapshots' segments together:

    eligible(snapshot)   the snapshot reads without merging: no DELETE among its rowsets, one
                         data rowset (not overlapping: one flush, or merged) or a
                         Duplicate-key (or merge-on-write Unique) table,
                         segment rowsets (no load file
                         slices) of at most UNIT_SEGMENT_ROWS rows each, or of any size (a
                         tablet of at most UNIT_TABLET_ROWS rows) when
                         no page-level index serves the scan's predicates
                         (`page_indexes_serve`: the first sort column, bloom filter, bitmap,
                         inverted index, page zone maps that skip pages)
    read_unit(snapshots, columns, predicates, stats) -> (rows, rows per snapshot)
        1. the segment zone maps of all the unit's segments, combined per column (cached per
           unit): one `zone_map.keep` per predicate drops the segments that cannot match;
        2. the surviving segments' columns, each read whole and concatenated once (the
           concatenation kept in the page cache under the unit's key, the segments' pages
           not: the same rows twice in the cache would halve what it holds);
        3. the predicates evaluated once over the concatenated rows (`row_filter.row_mask`),
           and a merge-on-write tablet's delete bitmap at the snapshot's version (its
           segments' keep-masks concatenated), the rows filtered once, with the count of rows
           each snapshot gave (callers slice per tablet).

The rows are exactly those `TabletSnapshot.read` returns (the same segments in the same order,
the same exact predicates); the page-level indexes (short key, page zone maps, bloom filter,
bitmap) are not consulted: for segments this small they cost more than the rows they skip, and
for larger ones they skip nothing when no predicate is on a column they index.
The profile counts segments and rows as the per-segment path does, without its index counters.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pyarrow as pa

from storage.arrays import contiguous
from storage.errors import StorageError
from storage.predicate import MAX_PROBE_VALUES, ColumnPredicate, prepare, values_key
from storage.row_filter import row_mask
from storage.segment import zone_map
from storage.segment.column_reader import SegmentIO
from storage.segment.reader import SegmentReader
from storage.segment.row_ranges import RowRanges
from storage.snapshot import TabletSnapshot
from storage.stats import ScanStats

UNIT_SEGMENT_ROWS = 65_536  # larger segments are worth their own page-level index checks...
UNIT_TABLET_ROWS = 4_194_304  # ...when an index serves the scan; else tablets up to this size
ZONE_MAP_KEEPS = 0.5  # page zone maps keeping at most this share of pages serve a scan
ZONE_MAP_SAMPLES = 64  # segments looked at for one the segment zone maps keep
SIGNATURE_VALUES = 1024  # larger value sets (runtime filters) are not memoised per tablet
_UNITS_KEPT = 256  # unit descriptions (segment lists, combined zone maps) kept across queries


def eligible(snapshot: TabletSnapshot, any_size: bool = False) -> bool:
    """True when `snapshot` reads as a plain concatenation of small segments (`any_size`: of
    segments of any size, for scans whose predicates no page-level index serves)."""
    summary = snapshot.summary  # storage/rowset_summary.py
    if summary.deletes:
        return False
    if snapshot.schema.merges_when_read and (len(summary.data) > 1 or summary.overlapping):
        return False  # keys repeat across rowsets, or across one load's flushes: merge them
    if any_size and summary.rows > UNIT_TABLET_ROWS:
        return False  # its columns are not concatenated whole: read segment by segment
    return summary.segmented == len(summary.data) and \
        (any_size or summary.largest_segmented <= UNIT_SEGMENT_ROWS)


def page_indexes_serve(snapshots: list[TabletSnapshot], predicates: list[ColumnPredicate],
                       inverted_matches: bool = False) -> bool:
    """Whether a page-level index can skip rows for these predicates in tablets like these:
    one on the first sort column (short key index, zone maps of sorted pages), on a column with
    a bloom filter, bitmap or inverted index (or MATCHes an inverted index answers), or one
    whose page zone maps skip pages (a column that follows the sort key, as a load time often
    does: checked on a segment the segment zone maps keep). Otherwise a segment's page checks
    and late materialisation cost more than reading its columns whole: SSB SF 10 (7 x 48
    tablets of ~180k rows, no such predicate) ran 1.9x faster read as units."""
    if inverted_matches:
        return True
    if not snapshots:
        return False
    schema = snapshots[0].schema
    probed = {*schema.bloom_filter_columns, *schema.bitmap_indexes, *schema.inverted_indexes}
    first_key = schema.key_names[:1]
    if any(p.column in first_key or p.column in probed and _probed(p) for p in predicates):
        return True
    return bool(predicates) and _zone_maps_prune(snapshots, predicates)


def _probed(p: ColumnPredicate) -> bool:
    """Whether an index probes this predicate's values (not a set of more than
    MAX_PROBE_VALUES, a runtime filter's, checked on the rows instead)."""
    return p.array is None or len(p.array) <= MAX_PROBE_VALUES


def _zone_maps_prune(snapshots: list[TabletSnapshot], predicates: list[ColumnPredicate]) -> bool:
    """On the first segment (of at most ZONE_MAP_SAMPLES) that every predicate's segment zone
    map keeps, some predicate's page zone maps keep at most ZONE_MAP_KEEPS of its pages (the
    zone map pages stay loaded on the column reader, for the per-segment path to use).

    What a tablet's segments say is kept on its snapshot memo per predicate signature
    (`_signature`): a kept plan's scan asks again on every run, and a runtime filter on the
    partition column (SSB's date join over 7 x 48 tablets) prunes the leading partitions'
    segments whole, so that the sample walked 64 segments (~2 ms) each time."""
    signature = _signature(predicates)
    looked = 0
    for snap in snapshots:
        if signature is None:
            verdict, seen = _tablet_zone_pages(snap, predicates, ZONE_MAP_SAMPLES - looked)
        else:
            verdict, seen = snap.memo(("zone_pages", signature), lambda s: _tablet_zone_pages(
                s, predicates, ZONE_MAP_SAMPLES))
        if verdict is not None:
            return verdict
        looked += seen
        if looked >= ZONE_MAP_SAMPLES:
            return False
    return False


def _tablet_zone_pages(snap: TabletSnapshot, predicates: list[ColumnPredicate],
                       limit: int) -> tuple[bool | None, int]:
    """(`_zone_maps_prune`'s verdict on the first of at most `limit` segments of `snap` that
    the segment zone maps keep, or None when they prune every one; segments looked at)."""
    segments = [seg for seg in snap.memo("segments", _segments_of)
                if isinstance(seg, SegmentReader)]
    seen = 0
    for seg in segments[:limit]:
        seen += 1
        with SegmentIO(seg.path, seg.tablet_id, ScanStats(), seg.cache, seg.owner) as io:
            cols = [(seg.columns.get(p.column), p) for p in predicates]
            prepared = [(col, prepare(p, col.dtype)) for col, p in cols if col is not None]
            if not all(zone_map.keep(col.segment_zone_map(io), pred)[0]
                       for col, pred in prepared):
                continue  # pruned whole: says nothing of its pages
            return any(col.num_pages > 1 and np.count_nonzero(
                keep := zone_map.keep(col.zone_maps(io), pred)) <= ZONE_MAP_KEEPS * len(keep)
                for col, pred in prepared), seen
    return None, seen


def _signature(predicates: list[ColumnPredicate]) -> tuple | None:
    """A hashable key of the predicates' columns, operators and values, or None (an array of
    more than SIGNATURE_VALUES values, a value that does not hash)."""
    out = []
    for p in predicates:
        if p.array is not None:
            if len(p.array) > SIGNATURE_VALUES:
                return None
            values = tuple(p.array.to_pylist())
        else:
            values = p.values
        out.append((p.column, p.op, values_key(values)))
    key = tuple(out)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _keep_mask(snapshots: list[TabletSnapshot], segments: list[SegmentReader],
               survive: np.ndarray) -> np.ndarray | None:
    """The surviving segments' rows a merge-on-write delete bitmap keeps (each snapshot at its
    version), concatenated in unit order; None when no segment has deleted rows."""
    if not any(snap.schema.merge_on_write for snap in snapshots):
        return None
    keeps = []
    for snap in snapshots:
        view = snap.tablet.delete_bitmap.at(snap.version) if snap.schema.merge_on_write \
            else None
        for r in snap.rowsets:
            if r.num_rows:
                for no, seg in enumerate(snap.tablet._segments(r)):
                    touched = view is not None and view.touches(r.rowset_id)
                    keeps.append(view.keep(r.rowset_id, no, seg.num_rows) if touched else None)
    if all(k is None for k in keeps):
        return None
    parts = [k.mask if k is not None else np.ones(seg.num_rows, dtype=bool)
             for k, seg, kept in zip(keeps, segments, survive) if kept]
    return np.concatenate(parts) if parts else None


def snapshot_rows(snapshot: TabletSnapshot) -> int:
    return snapshot.summary.rows


class _Unit:
    """The segments of a list of snapshots, in read order, and their combined zone maps."""

    def __init__(self, segments: list[SegmentReader], owners: tuple[int, ...]):
        self.segments = segments
        self.owners = owners
        self.rows = np.array([s.num_rows for s in segments], dtype=np.int64)
        self._zone_maps: dict[str, zone_map.ZoneMaps] = {}
        self._types: dict = {}  # column -> its one type in every segment, or None
        self._lock = threading.Lock()

    def uniform(self, columns) -> bool:
        """Every segment stores each of `columns`, all in one type."""
        for name in columns:
            if name not in self._types:
                found = {seg.columns[name].dtype if name in seg.columns else None
                         for seg in self.segments}
                self._types[name] = found.pop() if len(found) == 1 else None
            if self._types[name] is None:
                return False
        return True

    def zone_maps(self, column: str, stats: ScanStats) -> zone_map.ZoneMaps:
        with self._lock:
            zm = self._zone_maps.get(column)
        if zm is None:
            maps = []
            for seg in self.segments:
                with SegmentIO(seg.path, seg.tablet_id, stats, seg.cache, seg.owner) as io:
                    maps.append(seg.columns[column].segment_zone_map(io))
            zm = zone_map.ZoneMaps(pa.concat_arrays([m.mins for m in maps]),
                                   pa.concat_arrays([m.maxs for m in maps]),
                                   np.concatenate([m.has_null for m in maps]),
                                   np.concatenate([m.has_not_null for m in maps]))
            with self._lock:
                self._zone_maps[column] = zm
        return zm


_units: OrderedDict[tuple[int, ...], _Unit] = OrderedDict()
_units_lock = threading.Lock()


def _segments_of(snap: TabletSnapshot) -> list[SegmentReader]:
    return [seg for r in snap.rowsets if r.num_rows for seg in snap.tablet._segments(r)]


def _unit_of(snapshots: list[TabletSnapshot]) -> tuple[_Unit, list[int]]:
    """The unit of `snapshots` (cached by its segments' reader tokens: segment files are
    immutable and a token is never reused) and each snapshot's segment count."""
    segments, counts = [], []
    for snap in snapshots:
        segs = snap.memo("segments", _segments_of)
        segments.extend(segs)
        counts.append(len(segs))
    owners = tuple(s.owner for s in segments)
    with _units_lock:
        unit = _units.get(owners)
        if unit is not None:
            _units.move_to_end(owners)
            return unit, counts
    unit = _Unit(segments, owners)
    with _units_lock:
        _units[owners] = unit
        while len(_units) > _UNITS_KEPT:
            _units.popitem(last=False)
    return unit, counts


def read_unit(snapshots: list[TabletSnapshot], columns: list[str],
              predicates: list[ColumnPredicate],
              stats: ScanStats) -> tuple[pa.Table, np.ndarray] | None:
    """The snapshots' rows satisfying `predicates`, `columns` in order, snapshot after
    snapshot, and how many rows each snapshot gave (see the module docstring); every snapshot
    must be `eligible`. None (nothing read) when the segments
    store a column in different types (a schema change in between): read them one by one."""
    names = [*columns, *(p.column for p in predicates)]
    checked = set()  # schema objects (one per table version) whose columns were checked
    for snap in snapshots:
        if snap.released:
            raise StorageError(f"Snapshot of tablet {snap.tablet.tablet_id} at version "
                               f"{snap.version} was released")
        if id(snap.schema) in checked:
            continue
        for name in names:
            if not snap.schema.has_column(name):
                raise StorageError(f"Unknown column '{name}' in tablet {snap.tablet.tablet_id}")
        checked.add(id(snap.schema))
    unit, counts = _unit_of(snapshots)
    segments = unit.segments
    needed = dict.fromkeys(names)
    if not unit.uniform(needed):
        return None
    stats.rowsets_read += sum(1 for s in snapshots for r in s.rowsets if r.num_rows)
    stats.segments_total += len(segments)
    stats.rows_total += int(unit.rows.sum())
    types = {p.column: segments[0].columns[p.column].dtype for p in predicates} if segments else {}
    prepared = [prepare(p, types[p.column]) for p in predicates]
    survive = np.ones(len(segments), dtype=bool)
    for p in prepared:
        survive &= zone_map.keep(unit.zone_maps(p.column, stats), p)
    stats.segments_filtered += int((~survive).sum())
    stats.rows_zone_map_filtered += int(unit.rows[~survive].sum())
    stats.segments_read += int(survive.sum())
    kept_rows = np.where(survive, unit.rows, 0)
    count = int(kept_rows.sum())
    stats.rows_read += count
    key = ("unit", unit.owners, survive.tobytes())
    arrays: dict[str, pa.Array] = {}

    def column(name: str) -> pa.Array:  # the surviving segments' rows, one contiguous array
        arr = arrays.get(name)
        if arr is None:
            cache = segments[0].cache
            arr = cache.get((*key, name))
            if arr is None:
                parts = []
                for seg, keep in zip(segments, survive):
                    if keep:
                        with SegmentIO(seg.path, seg.tablet_id, stats, seg.cache, seg.owner) as io:
                            parts.extend(seg.columns[name].read_ranges(
                                io, RowRanges.full(seg.num_rows), cache=False).chunks)
                dtype = segments[0].columns[name].dtype.arrow()
                arr = contiguous(pa.chunked_array(parts, type=dtype))
                cache.put((*key, name), arr)
            arrays[name] = arr
        return arr

    mask = _keep_mask(snapshots, segments, survive) if count else None
    alive = count
    if mask is not None:
        alive = int(np.count_nonzero(mask))
        stats.rows_del_filtered += count - alive
    if prepared and count:
        passed = row_mask(prepared, column, count)
        mask = passed if mask is None else mask & passed
        stats.rows_conditions_filtered += alive - int(np.count_nonzero(mask))
    # the rows each snapshot contributes, before and after the predicates
    owner_of = np.repeat(np.arange(len(snapshots)), counts)
    snap_rows = np.bincount(owner_of, weights=kept_rows, minlength=len(snapshots)).astype(np.int64)
    if mask is not None:  # a count per snapshot (a cumulative sum of the mask costs more)
        bounds = np.concatenate(([0], np.cumsum(snap_rows))).tolist()
        out_rows = np.array([np.count_nonzero(mask[a:b]) for a, b in zip(bounds, bounds[1:])],
                            dtype=np.int64)
    else:
        out_rows = snap_rows
    if not columns:
        table = pa.table({"_": pa.nulls(int(out_rows.sum()))}).select([])
    elif count == 0:
        table = pa.Table.from_arrays(
            [pa.array([], snapshots[0].schema.column(c).type.arrow()) for c in columns],
            names=list(columns))
    else:
        table = pa.Table.from_arrays([column(c) for c in columns], names=list(columns))
        if mask is not None:
            table = table.filter(pa.array(mask))
    stats.rows_returned += table.num_rows
    return table, out_rows
