"""Delete bitmap: the rows of a merge-on-write Unique tablet that later loads overwrote.

Doris's `DeleteBitmap` (BE tablet meta): for each (rowset id, segment no, version) a roaring
bitmap of row ordinals of that segment which the load published at `version` replaced (or
which lost to an older row with a larger sequence value). A read at version V removes from each
segment the union of its bitmaps with version <= V, so snapshots stay consistent while loads
add bitmaps of newer versions. storage/mow.py computes the entries; this module keeps them.

    DeleteBitmap.add(entries)           entries of one publish (or a compaction's re-base)
    DeleteBitmap.at(version)            a DeleteBitmapView: the rows deleted at `version`
    DeleteBitmap.rows(rowset, seg, v)   the rows deleted at v: sorted uint32 ordinals, or None
    DeleteBitmapView.keep(rowset, seg, n)  a read's Keep: a read-only bool mask of the
                                        segment's rows (False: deleted), cached for the next
                                        reads, and a token naming it
    DeleteBitmap.remove_rowsets(ids)    a stale rowset's entries go with its files

Durability: the entries a publish computed travel in the published rowset's meta
(`RowsetMeta.delete_bitmap`, `encode_entries`), journaled with the load's version in the same
entry, so they are restored with the rowset (storage/tablet.py `publish`). A compaction's output
carries the entries of its inputs that still matter (catalog/compaction.py).
"""

from __future__ import annotations

import array
import base64
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from pyroaring import BitMap

_CACHED_UNIONS = 1024  # (rowset, segment, version) unions kept as numpy arrays
_CACHED_MASK_BYTES = 64 << 20  # ... and as keep-masks (one byte per row) for reads


@dataclass(frozen=True)
class Keep:
    """A segment's rows a read keeps (`mask`, read-only, False: deleted) and a token naming
    that set: (rowset id, segment no, the newest entry version the read applies); reads at
    versions that apply the same entries share it (storage/segment/reader.py caches a
    column's kept rows under it)."""
    mask: np.ndarray
    token: tuple


@dataclass(frozen=True)
class Entry:
    rowset_id: int
    segment_no: int
    version: int
    rows: BitMap


def bitmap_of(rows: np.ndarray) -> BitMap:
    """A BitMap of the (non-negative, < 2**32) row ordinals in `rows` (LIBRARY-FACTS: build
    from an array('I'), 5x faster than from numpy directly)."""
    return BitMap(array.array("I", np.asarray(rows, dtype=np.uint32).tobytes()))


def encode_entries(entries: list[Entry]) -> list[list]:
    """JSON form: [rowset id, segment no, version, base64 of the portable roaring bytes]."""
    out = []
    for e in entries:
        e.rows.run_optimize()
        out.append([e.rowset_id, e.segment_no, e.version,
                    base64.b64encode(e.rows.serialize()).decode("ascii")])
    return out


def decode_entries(data: list[list] | None) -> list[Entry]:
    return [Entry(int(r), int(s), int(v), BitMap.deserialize(base64.b64decode(b)))
            for r, s, v, b in (data or [])]


class DeleteBitmap:
    """One tablet's delete bitmap: (rowset id, segment no) -> {version: BitMap}."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict[tuple[int, int], dict[int, BitMap]] = {}
        self._rowsets: set[int] = set()
        self._all: dict[tuple[int, int], BitMap] = {}  # the union of every version's rows
        self._unions: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()
        self._masks: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()
        self._mask_bytes = 0

    def add(self, entries: list[Entry]) -> None:
        with self._lock:
            for e in entries:
                if not e.rows:
                    continue
                versions = self._entries.setdefault((e.rowset_id, e.segment_no), {})
                old = versions.get(e.version)
                versions[e.version] = e.rows if old is None else old | e.rows
                key = (e.rowset_id, e.segment_no)
                self._all[key] = self._all[key] | e.rows if key in self._all else BitMap(e.rows)
                self._rowsets.add(e.rowset_id)
                self._forget(lambda k: k[0] == e.rowset_id and k[1] == e.segment_no
                             and k[2] >= e.version)

    def remove_rowsets(self, rowset_ids) -> None:
        ids = set(rowset_ids)
        with self._lock:
            for key in [k for k in self._entries if k[0] in ids]:
                del self._entries[key]
                self._all.pop(key, None)
            self._forget(lambda k: k[0] in ids)
            self._rowsets -= ids

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._all.clear()
            self._forget(lambda k: True)
            self._rowsets.clear()

    def _forget(self, doomed) -> None:
        """Drop cached unions and masks whose (rowset, segment, version) key is doomed (call
        under the lock): an entry was added at or below their version, or their rowset went."""
        for k in [k for k in self._unions if doomed(k)]:
            del self._unions[k]
        for k in [k for k in self._masks if doomed(k)]:
            self._mask_bytes -= self._masks.pop(k).nbytes

    def has_rowset(self, rowset_id: int) -> bool:
        return rowset_id in self._rowsets

    def entries(self, rowset_ids=None) -> list[Entry]:
        """Every entry (of the given target rowsets), in (rowset, segment, version) order."""
        with self._lock:
            items = [(k, dict(v)) for k, v in self._entries.items()
                     if rowset_ids is None or k[0] in rowset_ids]
        return [Entry(r, s, ver, bm) for (r, s), versions in sorted(items)
                for ver, bm in sorted(versions.items())]

    def deleted_among(self, rowset_id: int, segment_no: int, rows: np.ndarray) -> np.ndarray:
        """Which of `rows` (row ordinals of the segment) any version deletes: a roaring
        intersection, no work per deleted row (a publish checks the rows its keys found)."""
        with self._lock:
            every = self._all.get((rowset_id, segment_no))
        if every is None or len(rows) == 0:
            return np.zeros(len(rows), dtype=bool)
        hits = np.frombuffer((every & bitmap_of(rows)).to_array(), dtype=np.uint32)
        return np.isin(rows, hits)

    def cardinality(self, version: int | None = None) -> int:
        """Rows deleted at `version` (all versions when None)."""
        with self._lock:
            return sum(len(bm) for versions in self._entries.values()
                       for v, bm in versions.items() if version is None or v <= version)

    def at(self, version: int) -> DeleteBitmapView:
        return DeleteBitmapView(self, version)

    def rows(self, rowset_id: int, segment_no: int, version: int) -> np.ndarray | None:
        found = self._union(rowset_id, segment_no, version)
        return None if found is None else found[1]

    def _union(self, rowset_id: int, segment_no: int,
               version: int) -> tuple[tuple, np.ndarray] | None:
        """(key, the union of the entries of versions <= `version` as sorted uint32), keyed by
        the newest of those versions; None when there is none."""
        if rowset_id not in self._rowsets:
            return None
        with self._lock:
            versions = self._entries.get((rowset_id, segment_no))
            applied = [v for v in versions if v <= version] if versions else []
            if not applied:
                return None
            key = (rowset_id, segment_no, max(applied))
            found = self._unions.get(key)
            if found is not None:
                self._unions.move_to_end(key)
                return key, found
            parts = [versions[v] for v in applied]
        union = parts[0] if len(parts) == 1 else BitMap.union(*parts)
        rows = np.frombuffer(union.to_array(), dtype=np.uint32)
        with self._lock:
            self._unions[key] = rows
            while len(self._unions) > _CACHED_UNIONS:
                self._unions.popitem(last=False)
        return key, rows


    def keep(self, rowset_id: int, segment_no: int, version: int,
             num_rows: int) -> Keep | None:
        found = self._union(rowset_id, segment_no, version)
        if found is None:
            return None
        key, rows = found
        with self._lock:
            mask = self._masks.get(key)
            if mask is not None:
                self._masks.move_to_end(key)
                return Keep(mask, key)
        mask = np.ones(num_rows, dtype=bool)
        mask[rows] = False
        mask.flags.writeable = False  # shared by concurrent reads
        with self._lock:
            if key not in self._masks:
                self._masks[key] = mask
                self._mask_bytes += mask.nbytes
            while self._mask_bytes > _CACHED_MASK_BYTES and len(self._masks) > 1:
                self._mask_bytes -= self._masks.popitem(last=False)[1].nbytes
        return Keep(mask, key)


class DeleteBitmapView:
    """A tablet's delete bitmap as a read at one version sees it."""

    def __init__(self, bitmap: DeleteBitmap, version: int):
        self.bitmap, self.version = bitmap, version

    def keep(self, rowset_id: int, segment_no: int, num_rows: int) -> Keep | None:
        return self.bitmap.keep(rowset_id, segment_no, self.version, num_rows)

    def touches(self, rowset_id: int) -> bool:
        """The rowset may have deleted rows at this version."""
        return self.bitmap.has_rowset(rowset_id)
