"""Segment writer: one sorted Arrow table -> one immutable segment file.

Owns the order in which a segment file is laid out (footer.py draws the whole file): the file
header, then per column its data pages (~page_size bytes of values each, before compression),
its ordinal index page (only when it has several pages) and its zone map page; then the short
key page, the footer and the tail. The caller hands rows already sorted by key (and
pre-aggregated by the data model); the writer never reorders. Page splits, zone maps and short
key entries are computed over whole arrays (pages are sliced, never built row by row).

Columns the schema gives a bloom filter get a BLOOM_FILTER page after their zone map page
(bloom_filter.py); columns with a bitmap index get their BITMAP_DICT and BITMAP pages there too
(bitmap_index.py), and columns with an inverted index the pages of their terms
(storage/inverted/index.py).
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from storage.arrays import contiguous
from storage.durable import fsync
from storage.inverted import index as inverted_index
from storage.schema import TabletSchema
from storage.segment import (bitmap_index, bloom_filter, encoding, footer, murmur, ngram_bloom,
                             ordinal, page, short_key, zone_map)
from storage.types import DataType, json_storage

DEFAULT_PAGE_SIZE = 64 * 1024
DEFAULT_SHORT_KEY_INTERVAL = 1024


@dataclass
class SegmentOptions:
    page_size: int = DEFAULT_PAGE_SIZE
    short_key_interval: int = DEFAULT_SHORT_KEY_INTERVAL
    compress: bool = True


@dataclass
class SegmentInfo:
    num_rows: int
    size: int


class _File:
    """Sequential writer that tracks offsets and pads pages to 8-byte boundaries."""

    def __init__(self, f):
        self.f = f
        self.offset = 0

    def write(self, data: bytes) -> tuple[int, int]:
        pad = (-self.offset) % 8
        if pad:
            self.f.write(bytes(pad))
            self.offset += pad
        start = self.offset
        self.f.write(data)
        self.offset += len(data)
        return start, len(data)


def write_segment(path: str, table: pa.Table, schema: TabletSchema,
                  options: SegmentOptions) -> SegmentInfo:
    """Write `table` (sorted by key, schema's columns and types) to `path` and fsync it."""
    num_rows = table.num_rows
    if num_rows == 0:
        raise ValueError("a segment holds at least one row")
    with open(path, "xb") as f:
        out = _File(f)
        out.write(footer.file_header())
        columns = []
        for c in schema.columns:
            arr = _array(table, c.name)
            meta = _write_column(out, arr, c.name, c.type, options)
            if c.name in schema.bloom_filter_columns:
                meta["bloom_filter"] = _write_bloom_filter(out, arr, c.type, options,
                                                           schema.bloom_filter_fpp)
            if c.name in schema.bitmap_indexes:
                meta["bitmap_index"] = bitmap_index.write(arr, c.type, options.page_size,
                                                          options.compress, out.write)
            ngram = schema.ngram_bf_indexes.get(c.name)
            if ngram is not None:
                meta["ngram_bf"] = _write_ngram_bf(out, arr, c.type, options, ngram)
            inverted = schema.inverted_indexes.get(c.name)
            if inverted is not None:
                meta["inverted_index"] = inverted_index.write(
                    arr, inverted["index_id"], inverted["properties"], options.page_size,
                    options.compress, out.write)
            columns.append(meta)
        meta = {"format_version": footer.FORMAT_VERSION, "num_rows": num_rows,
                "columns": columns, "short_key": _write_short_key(out, table, schema, options)}
        out.write(footer.encode_footer(meta))
        f.flush()
        fsync(f.fileno())
        return SegmentInfo(num_rows, out.offset)


def _array(table: pa.Table, name: str) -> pa.Array:
    col = table.column(name)
    return contiguous(col)


def page_bounds(arr: pa.Array, dtype: DataType, page_size: int) -> tuple[np.ndarray, np.ndarray]:
    """[start, end) row bounds of the pages: about `page_size` value bytes each."""
    n = len(arr)
    if dtype.is_nested:  # rows per page from the column's average bytes per row
        per_row = max(1, arr.nbytes // max(n, 1))
        starts = np.arange(0, n, max(1, page_size // per_row), dtype=np.int64)
    elif dtype.is_string or dtype.is_json:
        arr = json_storage(arr)
        offsets = np.frombuffer(arr.buffers()[1], np.int32)[arr.offset:arr.offset + n + 1]
        sizes = np.diff(offsets.astype(np.int64)) + 4
        page_no = (np.cumsum(sizes) - sizes) // page_size
        starts = np.concatenate([[0], np.flatnonzero(np.diff(page_no)) + 1]).astype(np.int64)
    else:
        per_page = page_size * 8 if dtype.kind == "BOOLEAN" else page_size // \
            encoding.FIXED_WIDTH[dtype.kind]
        starts = np.arange(0, n, max(1, per_page), dtype=np.int64)
    return starts, np.append(starts[1:], n).astype(np.int64)


def _write_column(out: _File, arr: pa.Array, name: str, dtype: DataType,
                  options: SegmentOptions) -> dict:
    starts, ends = page_bounds(arr, dtype, options.page_size)
    offsets, sizes, data_bytes = [], [], 0
    for start, end in zip(starts.tolist(), ends.tolist()):
        enc = encoding.encode(arr.slice(start, end - start), dtype)
        flags = page.HAS_NULLS if enc.has_nulls else 0
        framed = page.frame(page.DATA, enc.encoding, flags, end - start, enc.body(),
                            options.compress)
        offset, size = out.write(framed)
        offsets.append(offset)
        sizes.append(size)
        data_bytes += size
    meta = {"name": name, "type": dtype.to_dict(), "num_pages": len(starts),
            "data_page": None, "ordinal_index": None, "data_bytes": data_bytes}
    if len(starts) == 1:
        meta["data_page"] = [offsets[0], sizes[0]]
    else:
        locations = ordinal.PageLocations(starts, np.array(offsets), np.array(sizes), len(arr))
        meta["ordinal_index"] = list(out.write(page.frame(
            page.ORDINAL_INDEX, 0, 0, len(starts), ordinal.encode(locations), options.compress)))
    zones = zone_map.compute(arr, starts, ends, dtype)
    zones_body = zone_map.encode(zones, dtype)
    meta["zone_map"] = list(out.write(page.frame(
        page.ZONE_MAP_INDEX, 0, 0, len(zones), zones_body, options.compress)))
    # one page: the segment's zone map is that page's (the same bytes)
    segment_zone = zones_body if len(zones) == 1 else \
        zone_map.encode(zone_map.merge(zones, dtype), dtype)
    meta["segment_zone_map"] = base64.b64encode(segment_zone).decode()
    return meta


def _write_bloom_filter(out: _File, arr: pa.Array, dtype: DataType, options: SegmentOptions,
                        fpp: float) -> list[int]:
    starts, ends = page_bounds(arr, dtype, options.page_size)
    valid = np.asarray(arr.is_valid()) if arr.null_count else None
    filters, has_null = bloom_filter.compute(murmur.hash_array(arr, dtype), valid, starts, ends,
                                             fpp)
    body = bloom_filter.encode(filters, has_null)
    return list(out.write(page.frame(page.BLOOM_FILTER, 0, 0, len(filters), body,
                                     options.compress)))


def _write_ngram_bf(out: _File, arr: pa.Array, dtype: DataType, options: SegmentOptions,
                    ngram: dict) -> dict:
    starts, ends = page_bounds(arr, dtype, options.page_size)
    body = ngram_bloom.compute(arr, starts, ends, ngram["gram_size"], ngram["bf_size"])
    pointer = out.write(page.frame(page.BLOOM_FILTER, 0, 0, len(starts), body, options.compress))
    return {"gram_size": ngram["gram_size"], "bf_size": ngram["bf_size"], "page": list(pointer)}


def _write_short_key(out: _File, table: pa.Table, schema: TabletSchema,
                     options: SegmentOptions) -> dict | None:
    columns = schema.short_key_columns
    if not columns:
        return None
    interval = options.short_key_interval
    rows = pa.array(np.arange(0, table.num_rows, interval, dtype=np.int64))
    sampled = [_array(table, c.name).take(rows) for c in columns]
    entries = short_key.encode_keys(sampled, [c.type for c in columns], schema.short_key_widths)
    body = short_key.build_page_body(entries, interval, table.num_rows)
    location = out.write(page.frame(page.SHORT_KEY, 0, 0, len(rows), body, options.compress))
    return {"page": list(location), "columns": [c.name for c in columns],
            "widths": list(schema.short_key_widths), "interval": interval,
            "num_entries": len(rows)}
