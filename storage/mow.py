"""Merge-on-write: which rows a publish deletes (Doris's `Tablet::calc_delete_bitmap`).

A merge-on-write Unique tablet never merges keys when read: each key has one live row, and
the rows a later load replaced are listed in the tablet's delete bitmap
(storage/delete_bitmap.py). This module computes the entries, vectorised (Arrow hash joins over
the key columns, numpy over row ordinals; never a loop over rows):

    calc_delete_bitmap(tablet, schema, rowset, version, older, bitmap, deletes)
        1. the new rowset's keys (+ sequence column) with their row ordinals; in a rowset of
           several flushes (`overlapping`) a key may repeat across segments: the later flush
           wins (the larger sequence first), the others are deleted at `version`
        2. the keys of the older published rowsets' live rows: minus their delete bitmap and
           minus rows a DELETE predicate of a later version hides; a rowset none of whose
           segments' zone maps reach the new keys' range (first key column) is skipped
        3. the new keys looked up among them: by binary search in each older segment's sorted
           keys, checking only the rows found against the bitmap and the DELETEs (one
           fixed-width key column), else one hash join on the key columns (NULL equals NULL,
           as in merging); for each key found, the
           older row is deleted at `version` unless the table has a sequence column and the
           new row's value is smaller (NULL smallest), in which case the NEW row is deleted
    live_mask(...)      the rows of one rowset a read at some version keeps (compaction)
    convert(...)        a compaction's rowid conversion applied to the inputs' entries of
                        versions after its end version (loads published meanwhile included)

A row with the delete sign is an ordinary row here: it deletes the older row of its key and is
itself filtered by the reader's `__DORIS_DELETE_SIGN__ = 0` predicate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.arrays import contiguous
from storage.column_mapping import DROPPED, rowset_columns
from storage.delete_bitmap import DeleteBitmap, Entry, bitmap_of
from storage.memtable import sort_by_key
from storage.merge import group_starts
from storage.predicate import ColumnPredicate, fixed_width_numpy, prepare
from storage.row_filter import row_mask
from storage.rowset import RowsetMeta
from storage.schema import TabletSchema
from storage.stats import ScanStats

if TYPE_CHECKING:
    from storage.tablet import Tablet

POS = "__mow_pos"  # a row's ordinal in its rowset (segments in order)
SOURCE = "__mow_source"  # which older rowset a row comes from
_SEQ_NEW, _SEQ_OLD = "__mow_seq_new", "__mow_seq_old"
LATEST = 1 << 62  # a version after every published one


def segment_starts(rowset: RowsetMeta) -> np.ndarray:
    """The rowset ordinal of each segment's first row, and the total (a load file slice reads
    as one segment)."""
    rows = rowset.segment_rows or [rowset.num_rows]
    return np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)


def entries_of(rowset: RowsetMeta, positions: np.ndarray, version: int) -> list[Entry]:
    """`positions` (rowset ordinals) as one entry per segment they fall in."""
    if len(positions) == 0:
        return []
    positions = np.sort(positions)
    starts = segment_starts(rowset)
    seg = np.searchsorted(starts, positions, side="right") - 1
    bounds = np.searchsorted(seg, np.arange(len(starts)))
    out = []
    for s in np.unique(seg).tolist():
        part = positions[bounds[s]:bounds[s + 1]] - starts[s]
        out.append(Entry(rowset.rowset_id, int(s), version, bitmap_of(part)))
    return out


def _key_names(schema: TabletSchema) -> list[str]:
    return schema.merge_order()


def read_keys(tablet: Tablet, schema: TabletSchema, rowset: RowsetMeta,
              extra: list[str] = ()) -> pa.Table:
    """Every row's keys (+ sequence, + `extra`) of `rowset`, in ordinal order, with POS."""
    names = list(dict.fromkeys([*_key_names(schema), *extra]))
    table = tablet.scan_rowset(schema, rowset, [], names, [], ScanStats())
    return table.append_column(POS, pa.array(np.arange(table.num_rows, dtype=np.int64)))


def live_mask(tablet: Tablet, schema: TabletSchema, rowset: RowsetMeta, rows: pa.Table | None,
              bitmap: DeleteBitmap, version: int, deletes: list) -> np.ndarray:
    """Which rows of `rowset` a read at `version` keeps: not in the delete bitmap at `version`,
    not matched by a DELETE of a version in (rowset's end, version]. `rows`: the rowset's rows
    in ordinal order holding the DELETE predicates' columns (read here when None)."""
    n = rowset.num_rows
    keep = np.ones(n, dtype=bool)
    starts = segment_starts(rowset)
    for s in range(len(starts) - 1):
        deleted = bitmap.rows(rowset.rowset_id, s, version)
        if deleted is not None:
            keep[starts[s] + deleted.astype(np.int64)] = False
    later = [conj for v, conj in deletes if rowset.end_version < v <= version
             and not any(p.column.startswith(DROPPED) for p in conj)]
    if later:
        needed = list(dict.fromkeys(p.column for conj in later for p in conj))
        if rows is None or any(c not in rows.column_names for c in needed):
            rows = tablet.scan_rowset(schema, rowset, [], needed, [], ScanStats())
        arrays = {c: rows.column(c).combine_chunks() for c in needed}
        for conj in later:
            prepared = [prepare(p, schema.column(p.column).type) for p in conj]
            keep &= ~row_mask(prepared, arrays.__getitem__, n)
    return keep


def calc_delete_bitmap(tablet: Tablet, schema: TabletSchema, rowset: RowsetMeta, version: int,
                       older: list[RowsetMeta], bitmap: DeleteBitmap,
                       deletes: list) -> list[Entry]:
    """The entries publishing `rowset` at `version` adds (see the module docstring); `older`:
    the tablet's published rowsets before it, `deletes`: their DELETE conjunctions."""
    if rowset.num_rows == 0 or rowset.is_delete:
        return []
    keys = schema.key_names
    seq = schema.sequence_column
    new = read_keys(tablet, schema, rowset)
    entries: list[Entry] = []
    if rowset.overlapping:
        new, losers = _dedup(new, schema)
        entries += entries_of(rowset, losers, version)
    if new.num_rows == 0:
        return entries
    bounds = _key_bounds(new, keys[0])
    candidates = [(i, rs) for i, rs in enumerate(older) if rs.num_rows and not rs.is_delete
                  and _may_hold(tablet, schema, rs, bounds)]
    matched = _lookup_sorted(tablet, schema, new, candidates, bitmap, deletes)
    if matched is None:
        olds = []
        for i, rs in candidates:
            extra = [p.column for v, conj in deletes if v > rs.end_version for p in conj
                     if not p.column.startswith(DROPPED)]
            t = read_keys(tablet, schema, rs, extra)
            keep = live_mask(tablet, schema, rs, t, bitmap, LATEST, deletes)
            t = t.select([*_key_names(schema), POS]).filter(pa.array(keep))
            olds.append(t.append_column(SOURCE, pa.array(np.full(t.num_rows, i, np.int32))))
        if not olds:
            return entries
        matched = _join(new, pa.concat_tables(olds), keys, seq)
    if matched.num_rows == 0:
        return entries
    new_wins = _new_wins(matched) if seq else np.ones(matched.num_rows, dtype=bool)
    new_pos = matched.column(POS).to_numpy()
    old_pos = matched.column(f"{POS}_old").to_numpy()
    source = matched.column(SOURCE).to_numpy()
    entries += entries_of(rowset, new_pos[~new_wins], version)
    for i in np.unique(source[new_wins]).tolist():
        entries += entries_of(older[i], old_pos[new_wins & (source == i)], version)
    return entries


def _key_bounds(table: pa.Table, key: str) -> list[ColumnPredicate]:
    """`key >= min AND key <= max` of the new rows' first key column ([] with NULLs: a NULL
    key may sit in any segment)."""
    col = table.column(key)
    if col.null_count or table.num_rows == 0:
        return []
    lo, hi = pc.min_max(col).values()
    return [ColumnPredicate(key, ">=", (lo.as_py(),)), ColumnPredicate(key, "<=", (hi.as_py(),))]


def _may_hold(tablet: Tablet, schema: TabletSchema, rowset: RowsetMeta,
              bounds: list[ColumnPredicate]) -> bool:
    """Whether a segment of `rowset` may hold a key within `bounds` (its segment zone maps
    of the first key column; Doris checks each segment's key bounds before its primary key
    index). A load file slice, or a rowset storing the key under another name, may."""
    if not bounds or rowset.load_file is not None or rowset_columns(schema, rowset) is not None:
        return True
    stats = ScanStats()
    return any(seg.may_match(bounds, stats) for seg in tablet._segments(rowset))


def _dedup(table: pa.Table, schema: TabletSchema) -> tuple[pa.Table, np.ndarray]:
    """One row per key (the merge winner: the largest sequence, then the latest ordinal) and
    the ordinals of the others."""
    ordered = sort_by_key(table, [*schema.merge_order(), POS])
    starts = group_starts(ordered, schema.key_names)
    last = np.append(starts[1:], ordered.num_rows) - 1
    lose = np.ones(ordered.num_rows, dtype=bool)
    lose[last] = False
    losers = ordered.column(POS).to_numpy()[lose]
    return ordered.take(pa.array(last)), losers


def _sorted_key(table: pa.Table, keys: list[str]) -> np.ndarray | None:
    """A single fixed-width key column without NULLs as numpy (its storage order is numpy's),
    or None."""
    if len(keys) != 1 or table.column(keys[0]).null_count:
        return None
    arr = fixed_width_numpy(contiguous(table.column(keys[0])))
    return None if arr is None or arr.dtype.kind == "f" else arr


def _lookup_sorted(tablet: Tablet, schema: TabletSchema, new: pa.Table,
                   candidates: list[tuple[int, RowsetMeta]], bitmap: DeleteBitmap,
                   deletes: list) -> pa.Table | None:
    """`_join`'s result by binary search, as Doris looks keys up in each segment's primary key
    index: a segment's keys are sorted and unique (a flush sorts and merges), so the new keys
    are found with np.searchsorted in each older segment's whole key column (the page cache
    keeps it), and only the rows found are checked against the delete bitmap and later
    DELETEs: no work per stored row. None when the key is not one NULL-free fixed-width
    column, or a segment is not strictly ascending (the caller joins instead)."""
    keys, seq = schema.key_names, schema.sequence_column
    new_keys = _sorted_key(new, keys)
    if new_keys is None:
        return None
    found_new, found_old, found_source, old_seqs = [], [], [], []
    for i, rs in candidates:
        table = tablet.scan_rowset(schema, rs, [], _key_names(schema), [], ScanStats())
        starts = segment_starts(rs)
        later = [conj for v, conj in deletes if v > rs.end_version
                 and not any(p.column.startswith(DROPPED) for p in conj)]
        for s in range(len(starts) - 1):
            a, b = int(starts[s]), int(starts[s + 1])
            seg = _sorted_key(table.slice(a, b - a), keys)
            if seg is None or seg.dtype != new_keys.dtype or \
                    not _ascending(tablet._segments(rs)[s], seg):
                return None
            idx = np.searchsorted(seg, new_keys)
            hit = idx < len(seg)
            hit[hit] = seg[idx[hit]] == new_keys[hit]
            rows = idx[hit]
            live = ~bitmap.deleted_among(rs.rowset_id, s, rows)
            if later and len(rows):
                live &= ~_hidden(tablet, schema, rs, later, a + rows)
            found_new.append(np.flatnonzero(hit)[live])
            found_old.append(a + rows[live])
            found_source.append(np.full(int(live.sum()), i, np.int32))
            if seq:
                old_seqs.append(table.column(seq).take(pa.array(a + rows[live])))
    if not found_new:
        return _matched(new, np.zeros(0, np.int64), np.zeros(0, np.int64),
                        np.zeros(0, np.int32), None, seq)
    take = np.concatenate(found_new)
    old_seq = pa.chunked_array([c for a in old_seqs for c in (a.chunks if isinstance(
        a, pa.ChunkedArray) else [a])], new.column(seq).type) if seq else None
    return _matched(new, take, np.concatenate(found_old), np.concatenate(found_source),
                    old_seq, seq)


_ASCENDING: dict[int, bool] = {}  # segment reader token -> its keys strictly ascend


def _ascending(reader, keys: np.ndarray) -> bool:
    """The segment's keys strictly ascend: checked once per segment reader (a segment file
    never changes; its reader's page cache token is never reused), each time for a load file
    slice (small)."""
    owner = getattr(reader, "owner", None)
    found = _ASCENDING.get(owner) if owner is not None else None
    if found is None:
        found = len(keys) < 2 or bool(np.all(keys[1:] > keys[:-1]))
        if owner is not None:
            if len(_ASCENDING) > 100_000:
                _ASCENDING.clear()
            _ASCENDING[owner] = found
    return found


def _hidden(tablet: Tablet, schema: TabletSchema, rowset: RowsetMeta, later: list,
            positions: np.ndarray) -> np.ndarray:
    """Which rows (rowset ordinals) of `rowset` a later DELETE predicate matches."""
    needed = list(dict.fromkeys(p.column for conj in later for p in conj))
    rows = tablet.scan_rowset(schema, rowset, [], needed, [], ScanStats())
    rows = rows.take(pa.array(positions))
    arrays = {c: rows.column(c).combine_chunks() for c in needed}
    hidden = np.zeros(len(positions), dtype=bool)
    for conj in later:
        prepared = [prepare(p, schema.column(p.column).type) for p in conj]
        hidden |= row_mask(prepared, arrays.__getitem__, len(positions))
    return hidden


def _matched(new: pa.Table, take: np.ndarray, old_pos: np.ndarray, source: np.ndarray,
             old_seq, seq: str | None) -> pa.Table:
    cols = {POS: new.column(POS).take(pa.array(take)), f"{POS}_old": pa.array(old_pos),
            SOURCE: pa.array(source)}
    if seq:
        cols[_SEQ_NEW] = new.column(seq).take(pa.array(take))
        cols[_SEQ_OLD] = old_seq if old_seq is not None else pa.array([], new.column(seq).type)
    return pa.table(cols)


def _join_keys(table: pa.Table, keys: list[str]) -> tuple[pa.Table, list[str]]:
    """Key columns a hash join can match with NULL equal to NULL: a nullable key becomes its
    value with NULLs filled plus an is-NULL flag."""
    names = []
    for k in keys:
        col = table.column(k)
        if col.null_count == 0:
            names.append(k)
            continue
        flag = f"__mow_null_{k}"
        table = table.append_column(flag, pc.is_null(col))
        valid = pc.drop_null(col)
        filler = valid[0] if len(valid) else None
        if filler is None:  # all NULL: any value of the type, the flag decides
            table = table.set_column(table.column_names.index(k), k,
                                     pa.nulls(table.num_rows, pa.int8()))
        else:
            table = table.set_column(table.column_names.index(k), k, pc.fill_null(col, filler))
        names += [k, flag]
    return table, names


def _join(new: pa.Table, old: pa.Table, keys: list[str], seq: str | None) -> pa.Table:
    """New rows with their older live row of the same key: POS, SOURCE, POS_old (+ seqs)."""
    left = new.select([*keys, POS, *([seq] if seq else [])])
    right = old.select([*keys, POS, SOURCE, *([seq] if seq else [])])
    if seq:
        left = left.rename_columns([*keys, POS, _SEQ_NEW])
        right = right.rename_columns([*keys, f"{POS}_old", SOURCE, _SEQ_OLD])
    else:
        right = right.rename_columns([*keys, f"{POS}_old", SOURCE])
    if any(left.column(k).null_count or right.column(k).null_count for k in keys):
        both, names = _join_keys(pa.concat_tables([left.select(keys), right.select(keys)]), keys)
        n = left.num_rows
        for name in names:
            col = both.column(name)
            left = _put(left, name, col.slice(0, n))
            right = _put(right, name, col.slice(n))
        keys = names
    else:
        for k in keys:  # both sides in the schema's type (a chunked column joins as is)
            right = _put(right, k, right.column(k).cast(left.column(k).type))
    return left.join(right, keys, join_type="inner", use_threads=False)


def _put(table: pa.Table, name: str, col) -> pa.Table:
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, col)
    return table.append_column(name, col)


def _new_wins(matched: pa.Table) -> np.ndarray:
    """The new row wins ties and anything over a NULL sequence; loses to a larger value."""
    new, old = matched.column(_SEQ_NEW), matched.column(_SEQ_OLD)
    ge = pc.fill_null(pc.greater_equal(new, old), False).to_numpy(zero_copy_only=False)
    old_null = pc.is_null(old).to_numpy(zero_copy_only=False)
    return ge | old_null


def convert(inputs: list[RowsetMeta], after: int, output: RowsetMeta, source: np.ndarray,
            bitmap: DeleteBitmap) -> list[Entry]:
    """A compaction's rowid conversion: the inputs' bitmap entries of versions > `after` (the
    output's end version) as entries of `output`. `source[j]` is the input ordinal (inputs'
    rows numbered in order) of the output's row j."""
    total = sum(r.num_rows for r in inputs)
    target = np.full(total, -1, dtype=np.int64)
    target[source] = np.arange(len(source), dtype=np.int64)
    by_version: dict[int, list[np.ndarray]] = {}
    offset = 0
    for rs in inputs:
        starts = segment_starts(rs)
        for e in bitmap.entries({rs.rowset_id}):
            if e.version > after:
                rows = np.frombuffer(e.rows.to_array(), dtype=np.uint32).astype(np.int64)
                out = target[offset + starts[e.segment_no] + rows]
                by_version.setdefault(e.version, []).append(out[out >= 0])
        offset += rs.num_rows
    entries = []
    for v, parts in sorted(by_version.items()):
        entries += entries_of(output, np.concatenate(parts), v)
    return entries
