"""Bitmap index: a sorted dictionary of a column's values plus a Roaring bitmap per value (§5).

Owns building a column's bitmap index for one segment, its pages, and answering predicates with
it (§5.2). Example from the seed: [x, x, y, y, y, z, y, x, z, x] -> dictionary {x, y, z},
bitmaps x [0, 1, 7, 9], y [2, 3, 4, 6], z [5, 8]; NULL rows get one more bitmap.

Pages (framed by page.py; the column meta in the footer, or a side file, points at them):

    BITMAP_DICT page (type 6), LZ4-compressed when that pays: a slice of the sorted dictionary
        encoded as a data page body (encoding.py, PLAIN or BINARY), about page_size bytes each;
        page i holds dictionary ordinals [dict_first[i], dict_first[i+1])
    BITMAP page (type 7), stored uncompressed as in Doris: consecutive serialized bitmaps
        u32 count | u32 0 | (count + 1) x u64 offsets into the blob | blob of Roaring bitmaps
        in the portable format (pyroaring `serialize`); bitmap ordinal i is dictionary value i,
        ordinal dict_count is the NULL bitmap; page j starts at ordinal bitmap_first[j]

    meta = {"dict_count": K, "dict_pages": [[offset, size, first_ordinal], ...],
            "bitmap_pages": [[offset, size, first_ordinal], ...]}

Lookups (seed §5.2; `ordinal` = position of the first dictionary value >= v):

    x = v     bitmap(ordinal) if dict[ordinal] == v, else no row
    x != v    every non-NULL row minus bitmap(v)   (NULL rows never satisfy !=)
    x < v     bitmaps [0, ordinal)            x <= v   [0, ordinal + (dict[ordinal] == v))
    x > v     [ordinal + (dict[ordinal] == v), K)     x >= v   [ordinal, K)
    x IN (..) union of bitmap(vi) for each vi found

A range is served by whichever side is smaller: the union of its bitmaps, or all non-NULL rows
minus the union of the others. Answers are exact, so an answered predicate is not evaluated
again. The reader loads the whole dictionary on first use (all dict pages) and the bitmap pages
it needs, and keeps them on the segment reader. Doris adds a value index page above the
dictionary pages so that a lookup reads one dictionary page; minidoris reads them all once.
"""

from __future__ import annotations

import array
import bisect
import struct
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from storage.segment import encoding, page
from storage.types import DataType

_HEAD = struct.Struct("<II")


def _bitmap(rows: np.ndarray) -> BitMap:
    return BitMap(array.array("I", rows.astype(np.uint32).tobytes()))


def rows_of(bm: BitMap) -> np.ndarray:
    """Row ids of a bitmap, ascending (int64)."""
    return np.frombuffer(bm.to_array(), dtype=np.uint32).astype(np.int64)


def build(arr: pa.Array, dtype: DataType) -> tuple[pa.Array, list[bytes]]:
    """Sorted dictionary and serialized bitmaps (one per value, then the NULL bitmap)."""
    values = arr.drop_null() if arr.null_count else arr
    uniq = pc.unique(values)
    uniq = uniq.take(pc.array_sort_indices(uniq))
    if len(uniq) == 0:
        codes = np.full(len(arr), 0, dtype=np.int64)
    else:
        codes = np.asarray(pc.fill_null(pc.index_in(arr, value_set=uniq), len(uniq)))
    codes = codes.astype(np.int64)
    order = np.argsort(codes, kind="stable")  # row ids grouped by code, ascending within one
    bounds = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=len(uniq) + 1))])
    blobs = [_bitmap(order[a:b]).serialize()
             for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    return uniq, blobs


def write(arr: pa.Array, dtype: DataType, page_size: int, compress: bool,
          write_page: Callable[[bytes], tuple[int, int]]) -> dict:
    """Build the index of one segment column and write its pages; returns the meta dict."""
    uniq, blobs = build(arr, dtype)
    return write_pages(uniq, blobs, dtype, page_size, compress, write_page)


def write_pages(uniq: pa.Array, blobs: list[bytes], dtype: DataType, page_size: int,
                compress: bool, write_page: Callable[[bytes], tuple[int, int]]) -> dict:
    """Write a sorted dictionary and its serialized bitmaps (one per entry, then one more) as
    BITMAP_DICT and BITMAP pages (also the layout of an inverted index's terms)."""
    dict_pages = []
    for start, end in _chunks(_dict_sizes(uniq, dtype), page_size):
        enc = encoding.encode(uniq.slice(start, end - start), dtype, allow_dict=False)
        pointer = write_page(page.frame(page.BITMAP_DICT, enc.encoding, 0, end - start,
                                        enc.body(), compress))
        dict_pages.append([*pointer, start])
    bitmap_pages = []
    sizes = np.array([len(b) for b in blobs], dtype=np.int64)
    for start, end in _chunks(sizes, page_size):
        part = blobs[start:end]
        offsets = np.concatenate([[0], np.cumsum([len(b) for b in part])]).astype("<u8")
        body = b"".join([_HEAD.pack(end - start, 0), offsets.tobytes(), *part])
        pointer = write_page(page.frame(page.BITMAP, 0, 0, end - start, body, False))
        bitmap_pages.append([*pointer, start])
    return {"dict_count": len(uniq), "dict_pages": dict_pages, "bitmap_pages": bitmap_pages}


def _dict_sizes(uniq: pa.Array, dtype: DataType) -> np.ndarray:
    if dtype.is_string:
        raw = np.frombuffer(uniq.buffers()[1], np.int32)
        offsets = raw[uniq.offset:uniq.offset + len(uniq) + 1]
        return np.diff(offsets.astype(np.int64)) + 4
    return np.full(len(uniq), encoding.FIXED_WIDTH.get(dtype.kind, 1), dtype=np.int64)


def _chunks(sizes: np.ndarray, page_size: int) -> list[tuple[int, int]]:
    """[start, end) item ranges of about page_size bytes each (at least one, even if empty)."""
    n = len(sizes)
    if n == 0:
        return [(0, 0)]
    page_no = (np.cumsum(sizes) - sizes) // max(page_size, 1)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(page_no)) + 1]).tolist()
    return list(zip(starts, starts[1:] + [n]))


def decode_bitmap_page(body: pa.Buffer) -> list[bytes]:
    count, _ = _HEAD.unpack_from(body)
    offsets = np.frombuffer(body, "<u8", count + 1, _HEAD.size).astype(np.int64)
    base = _HEAD.size + 8 * (count + 1)
    if np.any(np.diff(offsets) < 0) or base + int(offsets[-1]) > body.size:
        raise ValueError("bitmap offsets do not fit the page")
    raw = memoryview(body)
    return [bytes(raw[base + a:base + b]) for a, b in zip(offsets[:-1].tolist(),
                                                           offsets[1:].tolist())]


Loader = Callable[[list, int], page.Page]  # (pointer, page type) -> checked page


@dataclass
class BitmapIndex:
    """One segment column's index; pages are read through the scan's loader on first use and
    kept (the object lives on the segment reader, shared by scans)."""

    meta: dict
    dtype: DataType
    num_rows: int
    _dictionary: list | None = None
    _bitmaps: dict[int, BitMap] = field(default_factory=dict)

    @property
    def dict_count(self) -> int:
        return int(self.meta["dict_count"])

    def dictionary(self, load: Loader) -> list:
        if self._dictionary is None:
            values: list = []
            for offset, size, _ in self.meta["dict_pages"]:
                pg = load([offset, size], page.BITMAP_DICT)
                arr = encoding.decode(pg.encoding, False, pg.body, pg.num_values, self.dtype)
                values.extend(arr.to_pylist())
            if len(values) != self.dict_count:
                raise ValueError("bitmap dictionary size differs from its meta")
            self._dictionary = values
        return self._dictionary

    def bitmap(self, ordinal: int, load: Loader) -> BitMap:
        if ordinal not in self._bitmaps:
            pages = self.meta["bitmap_pages"]
            firsts = [p[2] for p in pages]
            j = bisect.bisect_right(firsts, ordinal) - 1
            offset, size, first = pages[j]
            blobs = decode_bitmap_page(load([offset, size], page.BITMAP).body)
            for k, blob in enumerate(blobs):
                self._bitmaps[first + k] = BitMap.deserialize(blob)
        return self._bitmaps[ordinal]

    def _union(self, lo: int, hi: int, load: Loader) -> BitMap:
        """Rows whose value has an ordinal in [lo, hi)."""
        if hi <= lo:
            return BitMap()
        if hi - lo > self.dict_count // 2:  # the smaller side: all non-NULL rows minus the rest
            rest = [*range(0, lo), *range(hi, self.dict_count)]
            return self._non_null(load) - BitMap.union(BitMap(), *[self.bitmap(i, load)
                                                                   for i in rest])
        return BitMap.union(BitMap(), *[self.bitmap(i, load) for i in range(lo, hi)])

    def _non_null(self, load: Loader) -> BitMap:
        everything = BitMap()
        everything.add_range(0, self.num_rows)
        return everything - self.bitmap(self.dict_count, load)

    def lookup(self, op: str, values: list, load: Loader) -> BitMap:
        """Rows satisfying `x op value(s)` exactly (values are of the column's Python type)."""
        words = self.dictionary(load)
        k = self.dict_count

        def find(v) -> tuple[int, bool]:
            i = bisect.bisect_left(words, v)
            return i, i < k and words[i] == v

        if op == "in":
            hits = [i for i, found in map(find, values) if found]
            return BitMap.union(BitMap(), *[self.bitmap(i, load) for i in hits])
        i, found = find(values[0])
        if op == "=":
            return BitMap(self.bitmap(i, load)) if found else BitMap()
        if op == "!=":
            non_null = self._non_null(load)
            return non_null - self.bitmap(i, load) if found else non_null
        lo, hi = {"<": (0, i), "<=": (0, i + found), ">": (i + found, k), ">=": (i, k)}[op]
        return self._union(lo, hi, load)
