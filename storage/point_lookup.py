"""Point lookups: the rows of one tablet snapshot whose first key column equals a constant,
without the scan machinery (issue 14 item 4; Doris 2.x's short-circuit read through its primary
key index and row cache).

    lookup(snapshot, columns, predicates, stats)   the rows, or None: read the usual way
                                                   (TabletSnapshot.read)

Per segment (segments are immutable, so nothing here is ever invalidated):

    1. the segment's first sort-key column, decoded once into a sorted numpy array and kept in
       the page cache beside the pages (key `(owner, column, "sorted")`, bounded and evicted
       with them): the rows holding the constant are one `searchsorted` pair, in place of the
       short key index search (key ranges, encoded prefixes, windows of encoded keys)
    2. each wanted column's rows in that range sliced from the segment's wanted columns kept
       whole (a small segment: its file at most 1/256 of the cache) or from its decoded page
       (page cache); the other predicates (key columns after the first, the delete sign)
       evaluated exactly on those few rows with the scan's own row filter, and the
       merge-on-write delete bitmap applied

Taken only where a plain scan of the snapshot would concatenate its segments' rows unmerged
(Duplicate tables, merge-on-write Unique tables, a merge-on-read table with one
non-overlapping rowset), with no DELETE rowset, no rowset of an older schema, no version
column read; the first key column an integer, DATE or string
column fixed by `=` with a constant of its type. A segment whose first key column holds NULLs
is scanned the usual way (its NULLs' place in the order is not assumed here), as is a small
load's slice of a load file (its rows are in memory already: one vectorised filter).
"""

from __future__ import annotations

import bisect

import numpy as np
import pyarrow as pa

from storage import load_version
from storage.load_file import LoadFileReader
from storage.column_mapping import delete_conjunctions, needs_mapping, rowset_columns
from storage.page_cache import DISABLED
from storage.predicate import ColumnPredicate, prepare
from storage.row_filter import row_mask
from storage.segment.column_reader import SegmentIO
from storage.segment.reader import IndexOptions, SegmentReader
from storage.segment.row_ranges import RowRanges
from storage.stats import ScanStats

INT_KINDS = {"TINYINT": (-(2**7), 2**7 - 1), "SMALLINT": (-(2**15), 2**15 - 1),
             "INT": (-(2**31), 2**31 - 1), "BIGINT": (-(2**63), 2**63 - 1)}
SORTED = "sorted"  # the page-cache "page number" of a segment's first key column as numpy
ROWS = "rows"  # ... and of a small segment's wanted columns as one table
WHOLE_SEGMENT_SHARE = 256  # a segment kept whole by lookups: its file <= 1/256 of the cache
_NO_NULLS = object()


def lookup(snapshot, columns: list[str], predicates: list[ColumnPredicate],
           stats: ScanStats) -> pa.Table | None:
    """The rows of `snapshot` matching every predicate, `columns` in order, or None when the
    snapshot or the predicates are not of the shape in the module docstring."""
    tablet, schema = snapshot.tablet, snapshot.schema
    plan = snapshot.memo("point_lookup", _eligible)
    if not plan:
        return None
    rowsets, first = plan
    for name in [*columns, *(p.column for p in predicates)]:
        if not schema.has_column(name):
            return None  # the usual read raises the error
    if load_version.reads_version(columns, predicates):
        return None
    key = next((p for p in predicates if p.column == first and p.op == "="), None)
    if key is None:
        return None
    dtype = schema.column(first).type
    probe = _probe(key.values[0], dtype)
    if probe is None:
        prepared_key = prepare(key, dtype)
        if prepared_key.never_true:
            return _empty(schema, columns)
        if not isinstance(prepared_key.exact, list) or not _searchable(dtype.arrow()):
            return None
        probe = _as_numpy(pa.array(prepared_key.exact, dtype.arrow()))[0]
    # the search decides the key's equality exactly: the other predicates are evaluated
    others = [p for p in predicates if p is not key]
    bitmap = tablet.delete_bitmap.at(snapshot.version) if schema.merge_on_write else None
    stats.rowsets_read += len(rowsets)
    parts = []
    for rowset in rowsets:
        touched = bitmap is not None and bitmap.touches(rowset.rowset_id)
        for segment_no, seg in enumerate(tablet._segments(rowset)):  # noqa: SLF001
            keep = bitmap.keep(rowset.rowset_id, segment_no, seg.num_rows) if touched else None
            if isinstance(seg, LoadFileReader):  # a small load's rows, in memory: scanned
                part = seg.scan(columns, predicates, stats, [], None, keep)
            else:
                part = _segment(seg, first, probe, columns, predicates, others, stats, keep,
                                schema)
            if part is not None and part.num_rows:
                parts.append(part)
    if not parts:
        return _empty(schema, columns)
    table = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
    stats.rows_returned += table.num_rows
    return table


def _eligible(snapshot) -> tuple | bool:
    """(data rowsets, first key column) when a point lookup of this snapshot may skip the
    scan, else False (kept per published rowset list: TabletSnapshot.memo)."""
    schema = snapshot.schema
    keys = schema.key_names
    data = [r for r in snapshot.rowsets if r.num_rows]
    if not keys or delete_conjunctions(list(snapshot.rowsets), schema):
        return False
    if schema.merges_when_read and (len(data) > 1 or any(r.overlapping for r in data)):
        return False
    if any(needs_mapping(rowset_columns(schema, r), []) for r in data):
        return False
    return data, keys[0]


def _segment(seg: SegmentReader, first: str, probe, columns: list[str],
             predicates: list[ColumnPredicate], others: list[ColumnPredicate],
             stats: ScanStats, keep, schema) -> pa.Table | None:
    """The segment's rows holding `probe` in `first` and matching `others` (`predicates`
    are all of them, for a segment scanned the usual way)."""
    meta = seg._short_key_meta  # noqa: SLF001 - the segment's sort order is its short key's
    if meta is None or not meta["columns"] or meta["columns"][0] != first or \
            seg.cache is DISABLED:
        return _scan(seg, columns, predicates, stats, keep, schema)
    stats.segments_total += 1
    stats.rows_total += seg.num_rows
    with SegmentIO(seg.path, seg.tablet_id, stats, seg.cache, seg.owner) as io:
        keys = _sorted_keys(seg, io, first)
        if keys is _NO_NULLS:
            return _scan(seg, columns, predicates, stats, keep, schema)
        probe = _of_dtype(probe, keys.dtype)
        if probe is None:  # outside the stored type's range: no row holds it
            return None
        lo = int(keys.searchsorted(probe, "left"))
        hi = int(keys.searchsorted(probe, "right"))
        stats.rows_short_key_filtered += seg.num_rows - (hi - lo)
        if lo == hi:
            return None
        stats.segments_read += 1
        stats.rows_read += hi - lo
        rows = _cached_rows(seg, io, columns)
        # a small segment's wanted columns, decoded once: the row is one slice of them
        table = rows.slice(lo, hi - lo) if rows is not None else None
        arrays: dict[str, pa.Array] = {}

        def column(name: str) -> pa.Array:
            arr = arrays.get(name)
            if arr is None:
                arr = arrays[name] = table.column(columns.index(name)).chunk(0) \
                    if table is not None and name in columns else _rows(seg, io, name, lo, hi)
            return arr

        mask = None
        if keep is not None:
            mask = keep.mask[lo:hi]
            stats.rows_del_filtered += int((hi - lo) - np.count_nonzero(mask))
        if others:
            prepared = [prepare(p, seg.columns[p.column].dtype) for p in others]
            hit = row_mask(prepared, column, hi - lo)
            stats.rows_conditions_filtered += int((hi - lo) - np.count_nonzero(hit))
            mask = hit if mask is None else mask & hit
        if table is None:
            table = pa.Table.from_arrays([column(c) for c in columns], names=list(columns)) \
                if columns else pa.table({"_": pa.nulls(hi - lo)}).select([])
        if mask is not None and not mask.all():
            table = table.filter(pa.array(mask))
        return table


def _cached_rows(seg: SegmentReader, io: SegmentIO, columns: list[str]) -> pa.Table | None:
    """All rows of `columns` of a small segment as one table of single-chunk columns, kept in
    the page cache (Doris's row cache in spirit: a lookup's row is then one slice per column,
    no page search); None for a segment too large to keep whole (its rows come from pages)."""
    if not columns or seg.file_size * WHOLE_SEGMENT_SHARE > seg.cache.capacity:
        return None
    cache_key = (seg.owner, tuple(columns), ROWS)
    table = seg.cache.get(cache_key)
    if table is None:
        full = RowRanges.full(seg.num_rows)
        table = pa.Table.from_arrays(
            [seg.columns[c].read_ranges(io, full).combine_chunks() for c in columns],
            names=list(columns))
        seg.cache.put(cache_key, table, table.get_total_buffer_size())
    return table


def _sorted_keys(seg: SegmentReader, io: SegmentIO, first: str):
    """The segment's first key column as a sorted numpy array (page cache), or _NO_NULLS."""
    cache_key = (seg.owner, first, SORTED)
    keys = seg.cache.get(cache_key)
    if keys is None:
        col = seg.columns[first]
        whole = col.read_ranges(io, RowRanges.full(seg.num_rows)).combine_chunks()
        if whole.null_count:
            keys = _NO_NULLS
            size = 64
        else:
            keys = _as_numpy(whole)
            if keys.dtype == object:
                keys.flags.writeable = False
            size = max(keys.nbytes, whole.get_total_buffer_size() + 8 * len(whole))
        seg.cache.put(cache_key, keys, size)
    return keys


def _rows(seg: SegmentReader, io: SegmentIO, name: str, lo: int, hi: int) -> pa.Array:
    """Rows [lo, hi) of one column: a slice of its decoded page (page cache) when one page
    holds them, else the usual range read."""
    col = seg.columns[name]
    locs = col.locations(io)
    firsts = locs.first_rows_list
    p = bisect.bisect_right(firsts, lo) - 1
    if hi <= locs.ends_list[p]:
        page = seg.cache.get((seg.owner, name, p))
        if page is None:
            page = col._decode_pages(io, np.array([p], dtype=np.int64))[p]  # noqa: SLF001
        else:
            io.stats.cached_pages_num += 1
        return page.slice(lo - firsts[p], hi - lo)
    return col.read_ranges(io, RowRanges.of([lo], [hi])).combine_chunks()


def _scan(seg: SegmentReader, columns, predicates, stats, keep, schema) -> pa.Table:
    """The segment scanned the usual way (no sorted key column to search)."""
    return seg.scan(columns, predicates, stats, [],
                    IndexOptions(frozenset(schema.bloom_filter_columns)), keep)


def _probe(value, dtype):
    """`value` as the searched key when it is plainly of the column's type (an int in range
    of an integer column, a str for a VARCHAR/STRING column), else None (prepare decides)."""
    if type(value) is int and dtype.kind in INT_KINDS:
        lo, hi = INT_KINDS[dtype.kind]
        return value if lo <= value <= hi else None
    if type(value) is str and dtype.kind in ("VARCHAR", "STRING"):
        return value
    return None


def _of_dtype(probe, dtype: np.dtype):
    """A Python int probe as a scalar of the sorted keys' integer dtype (numpy would otherwise
    cast the whole key array to int64 for each search: 5% of a prepared lookup's server CPU),
    None when out of that dtype's range; other probes as they are."""
    if type(probe) is not int or dtype.kind not in "iu":
        return probe
    bounds = _INT_BOUNDS.get(dtype)
    if bounds is None:
        info = np.iinfo(dtype)
        bounds = _INT_BOUNDS[dtype] = (int(info.min), int(info.max))
    return dtype.type(probe) if bounds[0] <= probe <= bounds[1] else None


_INT_BOUNDS: dict = {}


def _searchable(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_date32(t) or pa.types.is_string(t) or \
        pa.types.is_large_string(t)


def _as_numpy(arr: pa.Array) -> np.ndarray:
    """Integers and days as numbers, strings as Python str (code point order = the byte order
    the segments are sorted in)."""
    if pa.types.is_date32(arr.type):
        arr = arr.view(pa.int32())
    return arr.to_numpy(zero_copy_only=False)


def _empty(schema, columns: list[str]) -> pa.Table:
    return pa.Table.from_arrays([pa.array([], schema.column(c).type.arrow()) for c in columns],
                                names=list(columns))
