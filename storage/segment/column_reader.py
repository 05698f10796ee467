"""Column reader: one column of one segment, from page pointers to Arrow arrays.

Owns locating a column's pages (ordinal index or the footer's single page pointer), loading its
zone maps, bloom filters and bitmap index, and decoding only the pages that hold wanted rows.
Reads go through `SegmentIO`, one per scan of a segment: it holds the open file (and any side
index file the scan opens), counts bytes and pages into the scan's stats, and caches decoded
pages so that a page used by the short key search is not decoded twice. Consecutive pages are
fetched with one pread and sliced. Index structures, once loaded, stay on the reader; each reuse
counts as a cached page (CachedPagesNum), as does a decoded page reused within the scan or
found in the process's page cache (storage/page_cache.py), which keeps decoded pages across scans.
"""

from __future__ import annotations

import base64
import bisect
import os
import struct

import numpy as np
import pyarrow as pa

from storage.errors import CorruptionError
from storage.page_cache import DISABLED, PageCache
from storage.segment import bitmap_index, bloom_filter, encoding, ordinal, page, zone_map
from storage.segment.row_ranges import RowRanges
from storage.stats import ScanStats
from storage.types import DataType


WHOLE_COLUMN = -1  # the page-cache "page number" of a column's rows as one array


class SegmentIO:
    """The open file of one segment scan, with its stats and decoded-page cache."""

    def __init__(self, path: str, tablet_id: int | None, stats: ScanStats,
                 cache: PageCache = DISABLED, owner: int = 0):
        self.path = path
        self.tablet_id = tablet_id
        self.stats = stats
        self.pages: dict[tuple[str, int], pa.Array] = {}
        self.cache, self.owner = cache, owner  # the process's page cache, this file's token
        self._fd: int | None = None  # opened on the first read (a cached scan reads nothing)
        self._others: dict[str, SegmentIO] = {}

    @property
    def fd(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        for other in self._others.values():
            other.close()

    def other(self, path: str) -> SegmentIO:
        """The open side file `path` (closed with this one), counting into the same stats."""
        if path not in self._others:
            self._others[path] = SegmentIO(path, self.tablet_id, self.stats)
        return self._others[path]

    def __enter__(self) -> SegmentIO:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def where(self, column: str | None = None) -> dict:
        return {"tablet_id": self.tablet_id, "path": self.path, "column": column}

    def read(self, offset: int, size: int, column: str | None) -> pa.Buffer:
        data = os.pread(self.fd, size, offset)
        if len(data) != size:
            raise CorruptionError(f"short read at offset {offset}: {len(data)} of {size} bytes",
                                  **self.where(column))
        self.stats.bytes_read += size
        return pa.py_buffer(data)

    def read_page(self, pointer, page_type: int, column: str | None) -> page.Page:
        offset, size = pointer
        return page.parse(self.read(offset, size, column), page_type, self.where(column))


class ColumnReader:
    """Page locations, zone maps and page decoding of one column (shared by concurrent scans)."""

    def __init__(self, meta: dict, num_rows: int):
        self.meta = meta
        self.name: str = meta["name"]
        self.dtype = DataType.from_dict(meta["type"])
        self.num_rows = num_rows
        self.num_pages: int = meta["num_pages"]
        self._locations: ordinal.PageLocations | None = None
        self._zone_maps: zone_map.ZoneMaps | None = None
        self._segment_zone_map: zone_map.ZoneMaps | None = None
        self._bloom_filters: bloom_filter.BloomFilters | None = None
        self._ngram_filters: bloom_filter.BloomFilters | None = None
        self._bitmap_index: bitmap_index.BitmapIndex | None = None
        self._inverted_index = None

    @property
    def has_bloom_filter(self) -> bool:
        return self.meta.get("bloom_filter") is not None

    @property
    def inverted_index_id(self) -> int | None:
        """The index id of the in-file inverted index, or None."""
        meta = self.meta.get("inverted_index")
        return None if meta is None else int(meta["index_id"])

    @property
    def has_bitmap_index(self) -> bool:
        return self.meta.get("bitmap_index") is not None

    # -- indexes (loaded once, then cached on the reader) --------------------------------------
    def locations(self, io: SegmentIO) -> ordinal.PageLocations:
        if self._locations is None:
            if self.meta["data_page"] is not None:
                offset, size = self.meta["data_page"]
                locs = ordinal.single(offset, size, self.num_rows)
            else:
                body = io.read_page(self.meta["ordinal_index"], page.ORDINAL_INDEX, self.name).body
                locs = self._guard(io, lambda: ordinal.decode(body, self.num_rows))
            problem = locs.validate()
            if problem or locs.num_pages != self.num_pages:
                raise CorruptionError(problem or "page count differs from the footer",
                                      **io.where(self.name))
            self._locations = locs
        return self._locations

    def zone_maps(self, io: SegmentIO) -> zone_map.ZoneMaps:
        if self._zone_maps is not None:
            io.stats.cached_pages_num += 1
        else:
            body = io.read_page(self.meta["zone_map"], page.ZONE_MAP_INDEX, self.name).body
            zones = self._guard(io, lambda: zone_map.decode(body, self.dtype))
            if len(zones) != self.num_pages:
                raise CorruptionError("zone map entries differ from the page count",
                                      **io.where(self.name))
            self._zone_maps = zones
        return self._zone_maps

    def bloom_filters(self, io: SegmentIO) -> bloom_filter.BloomFilters:
        if self._bloom_filters is not None:
            io.stats.cached_pages_num += 1
        else:
            body = io.read_page(self.meta["bloom_filter"], page.BLOOM_FILTER, self.name).body
            filters = self._guard(io, lambda: bloom_filter.decode(body))
            if len(filters) != self.num_pages:
                raise CorruptionError("bloom filter entries differ from the page count",
                                      **io.where(self.name))
            self._bloom_filters = filters
        return self._bloom_filters

    def ngram_filters(self, io: SegmentIO) -> bloom_filter.BloomFilters | None:
        """The NGRAM_BF index's page filters (segment/ngram_bloom.py), or None without one."""
        meta = self.meta.get("ngram_bf")
        if meta is None:
            return None
        if self._ngram_filters is not None:
            io.stats.cached_pages_num += 1
        else:
            body = io.read_page(meta["page"], page.BLOOM_FILTER, self.name).body
            filters = self._guard(io, lambda: bloom_filter.decode(body))
            if len(filters) != self.num_pages:
                raise CorruptionError("ngram bloom filter entries differ from the page count",
                                      **io.where(self.name))
            self._ngram_filters = filters
        return self._ngram_filters

    def inverted_index(self):
        """The in-file inverted index (storage/inverted/index.py), kept on the reader."""
        if self._inverted_index is None:
            from storage.inverted.index import InvertedIndex

            self._inverted_index = InvertedIndex(self.meta["inverted_index"], self.num_rows)
        return self._inverted_index

    def bitmap_index(self) -> bitmap_index.BitmapIndex:
        """The in-file bitmap index (pages are loaded by its lookups)."""
        if self._bitmap_index is None:
            self._bitmap_index = bitmap_index.BitmapIndex(self.meta["bitmap_index"], self.dtype,
                                                          self.num_rows)
        return self._bitmap_index

    def segment_zone_map(self, io: SegmentIO) -> zone_map.ZoneMaps:
        if self._segment_zone_map is None:
            raw = pa.py_buffer(base64.b64decode(self.meta["segment_zone_map"]))
            self._segment_zone_map = self._guard(io, lambda: zone_map.decode(raw, self.dtype))
        return self._segment_zone_map

    def page_bounds(self, io: SegmentIO) -> tuple[np.ndarray, np.ndarray]:
        locs = self.locations(io)
        return locs.first_rows, locs.ends

    def page_ranges(self, io: SegmentIO, keep: np.ndarray) -> RowRanges:
        locs = self.locations(io)
        return RowRanges.of_sorted(locs.first_rows[keep], locs.ends[keep])

    def _guard(self, io: SegmentIO, decode):
        try:
            return decode()
        except (ValueError, IndexError, KeyError, struct.error, pa.ArrowInvalid) as exc:
            raise CorruptionError(f"undecodable page: {exc}", **io.where(self.name)) from exc

    # -- data ----------------------------------------------------------------------------------
    def read_ranges(self, io: SegmentIO, ranges: RowRanges, cache: bool = True) -> pa.ChunkedArray:
        """The rows of `ranges`, in order, as slices of the decoded pages (no copy). All rows
        of a column of several pages come as one contiguous array, kept in the page cache
        instead of its pages (scans that read every row then copy nothing). With `cache`
        false nothing read here is put in the cache (the caller keeps a copy of its own there,
        `scan_unit.py`'s concatenation), though what is there already is used."""
        if self.num_pages > 1 and io.cache.enabled and len(ranges) == 1 \
                and ranges.starts[0] == 0 and ranges.ends[0] == self.num_rows:
            if cache:
                return pa.chunked_array([self._whole(io)], type=self.dtype.arrow())
            whole = io.cache.get((io.owner, self.name, WHOLE_COLUMN))
            if whole is not None:
                io.stats.cached_pages_num += self.num_pages
                return pa.chunked_array([whole], type=self.dtype.arrow())
        return self._read_ranges(io, ranges, cache_pages=cache)

    def _whole(self, io: SegmentIO) -> pa.Array:
        """Every row as one array, from the page cache when it is there. Only the whole array
        goes into the cache, not its pages as well: the same rows kept twice halved what the
        cache held (SSB SF 10's four-column scans no longer fitted in 2 GB and were decoded
        again on every run)."""
        key = (io.owner, self.name, WHOLE_COLUMN)
        whole = io.cache.get(key)
        if whole is None:
            whole = self._read_ranges(io, RowRanges.full(self.num_rows),
                                      cache_pages=False).combine_chunks()
            io.cache.put(key, whole)
        else:
            io.stats.cached_pages_num += self.num_pages
        return whole

    def _read_ranges(self, io: SegmentIO, ranges: RowRanges,
                     cache_pages: bool = True) -> pa.ChunkedArray:
        locs = self.locations(io)
        if len(ranges) == 1:  # a key lookup's rows: bisect in Python, no numpy set operations
            return self._read_range(io, locs, int(ranges.starts[0]), int(ranges.ends[0]),
                                    cache_pages)
        ends = locs.ends
        first = locs.page_of_rows(ranges.starts)
        last = locs.page_of_rows(ranges.ends - 1)
        wanted = np.unique(np.concatenate(
            [np.arange(a, b + 1) for a, b in zip(first.tolist(), last.tolist())] or [[]]))
        pages = self._decode_pages(io, wanted.astype(np.int64), cache_pages)
        chunks = []
        for start, end, a, b in zip(ranges.starts.tolist(), ranges.ends.tolist(),
                                    first.tolist(), last.tolist()):
            for p in range(a, b + 1):
                lo = max(start, int(locs.first_rows[p]))
                hi = min(end, int(ends[p]))
                chunks.append(pages[p].slice(lo - int(locs.first_rows[p]), hi - lo))
        return pa.chunked_array(chunks, type=self.dtype.arrow())

    def _read_range(self, io: SegmentIO, locs: ordinal.PageLocations, start: int,
                    end: int, cache_pages: bool = True) -> pa.ChunkedArray:
        firsts, ends = locs.first_rows_list, locs.ends_list
        a = bisect.bisect_right(firsts, start) - 1
        b = bisect.bisect_right(firsts, end - 1) - 1
        pages = self._decode_pages(io, np.arange(a, b + 1, dtype=np.int64), cache_pages)
        chunks = []
        for p in range(a, b + 1):
            lo, hi = max(start, firsts[p]), min(end, ends[p])
            chunks.append(pages[p].slice(lo - firsts[p], hi - lo))
        return pa.chunked_array(chunks, type=self.dtype.arrow())

    def read_rows(self, io: SegmentIO, rows: np.ndarray) -> pa.Array:
        """The given ascending row ids, decoding only the pages that hold them."""
        locs = self.locations(io)
        page_of = locs.page_of_rows(rows)
        change = np.empty(len(page_of), dtype=bool)  # rows ascending: pages ascending too
        change[:1] = True
        np.not_equal(page_of[1:], page_of[:-1], out=change[1:])
        wanted = page_of[change]
        if self.num_pages > 1 and io.cache.enabled and 2 * len(wanted) > self.num_pages:
            # most pages hold a wanted row: gather from the whole column, no page concat
            return self._whole(io).take(pa.array(rows))
        pages = self._decode_pages(io, wanted)
        arrays = [pages[p] for p in wanted.tolist()]
        lengths = np.array([len(a) for a in arrays], dtype=np.int64)
        # row r of page p sits at r - first_rows[p] + (rows of the wanted pages before p)
        shift = np.cumsum(lengths) - lengths - locs.first_rows[wanted]
        local = rows + shift[np.cumsum(change) - 1]
        merged = arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)
        return merged.take(pa.array(local))

    def _decode_pages(self, io: SegmentIO, wanted: np.ndarray,
                      cache_pages: bool = True) -> dict[int, pa.Array]:
        """Decoded arrays of the wanted page numbers, fetching runs of adjacent pages at once;
        the pages decoded here go into the page cache when `cache_pages`."""
        out = {p: io.pages[(self.name, p)] for p in wanted.tolist() if (self.name, p) in io.pages}
        if io.cache.enabled:
            for p in wanted.tolist():
                if p not in out:
                    hit = io.cache.get((io.owner, self.name, p))
                    if hit is not None:
                        out[p] = io.pages[(self.name, p)] = hit
        io.stats.cached_pages_num += len(out)
        missing = np.array([p for p in wanted.tolist() if p not in out], dtype=np.int64)
        if len(missing) == 0:
            return out
        locs = self.locations(io)
        breaks = np.flatnonzero(np.diff(missing) != 1) + 1
        for run in np.split(missing, breaks):
            start = int(locs.offsets[run[0]])
            end = int(locs.offsets[run[-1]] + locs.sizes[run[-1]])
            blob = io.read(start, end - start, self.name)
            for p in run.tolist():
                offset = int(locs.offsets[p]) - start
                out[p] = self._decode_page(io, blob.slice(offset, int(locs.sizes[p])), p, locs)
                io.pages[(self.name, p)] = out[p]
                if cache_pages and io.cache.enabled:
                    io.cache.put((io.owner, self.name, p), out[p])
        return out

    def _decode_page(self, io: SegmentIO, buf: pa.Buffer, p: int,
                     locs: ordinal.PageLocations) -> pa.Array:
        pg = page.parse(buf, page.DATA, io.where(self.name))
        expected = int(locs.ends[p] - locs.first_rows[p])
        if pg.num_values != expected:
            raise CorruptionError(f"page {p} holds {pg.num_values} rows, index says {expected}",
                                  **io.where(self.name))
        io.stats.pages_read += 1
        io.stats.uncompressed_bytes_read += pg.body.size
        if io.cache.enabled and not pg.compressed:
            # a view into the read blob of a run of pages: cache a copy, not the whole run
            pg.body = pa.py_buffer(pg.body.to_pybytes())
        arr = self._guard(io, lambda: encoding.decode(pg.encoding, pg.has_nulls, pg.body,
                                                      pg.num_values, self.dtype))
        return arr
