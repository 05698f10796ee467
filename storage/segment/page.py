"""Page framing: header, checksum and LZ4 compression around an encoded body.

Owns the byte layout shared by every page of a segment file (data pages and index pages alike).
Pages start at 8-byte aligned file offsets; a page pointer in the footer or an ordinal index is
(offset, size) with size = 24 + stored_size.

    offset  size  field
    0       4     crc32 (zlib) of bytes [4, 24 + stored_size): header rest + stored body
    4       1     page type      1 DATA, 2 ORDINAL_INDEX, 3 ZONE_MAP_INDEX, 4 SHORT_KEY,
                                 5 BLOOM_FILTER, 6 BITMAP_DICT, 7 BITMAP
    5       1     encoding       (encoding.py: 0 PLAIN, 1 BITS, 2 BINARY, 3 DICT) for data and
                                 BITMAP_DICT pages; 0 for other index pages
    6       1     compression    0 NONE, 1 LZ4 (LZ4 block format, no size prefix)
    7       1     flags          bit 0: the body starts with a validity bitmap (page has NULLs)
    8       4     num_values     rows in a data page, entries in an index page
    12      4     body_size      uncompressed body bytes
    16      4     stored_size    bytes that follow the header (== body_size when NONE)
    20      4     reserved, 0
    24      ...   stored body

A body is stored compressed only when LZ4 saves at least 1/8 of it (incompressible pages are not
worth the decompression on every read). Doris puts its checksum after the page; minidoris puts it
first so a reader validates before decoding anything.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import lz4.block
import pyarrow as pa

from storage.errors import CorruptionError

HEADER = struct.Struct("<IBBBBIIII")
HEADER_SIZE = HEADER.size  # 24

DATA = 1
ORDINAL_INDEX = 2
ZONE_MAP_INDEX = 3
SHORT_KEY = 4
BLOOM_FILTER = 5
BITMAP_DICT = 6
BITMAP = 7

NONE = 0
LZ4 = 1

HAS_NULLS = 1

_MIN_COMPRESS = 64


@dataclass
class Page:
    page_type: int
    encoding: int
    flags: int
    num_values: int
    body: pa.Buffer
    compressed: bool = False  # the body was decompressed (a fresh buffer, not a file view)

    @property
    def has_nulls(self) -> bool:
        return bool(self.flags & HAS_NULLS)


def frame(page_type: int, encoding: int, flags: int, num_values: int, body,
          compress: bool = True) -> bytes:
    """Header + (possibly compressed) body, as bytes ready to be written."""
    body_size = memoryview(body).nbytes
    stored, compression = body, NONE
    if compress and body_size >= _MIN_COMPRESS:
        packed = lz4.block.compress(body, store_size=False)
        if len(packed) * 8 <= body_size * 7:
            stored, compression = packed, LZ4
    stored_size = memoryview(stored).nbytes
    rest = HEADER.pack(0, page_type, encoding, compression, flags, num_values, body_size,
                       stored_size, 0)[4:]
    crc = zlib.crc32(stored, zlib.crc32(rest))
    return b"".join((struct.pack("<I", crc), rest, stored))


def parse(buf: pa.Buffer, expected_type: int, where: dict) -> Page:
    """Validate and unpack one page read from disk; `where` names it in a CorruptionError."""
    if buf.size < HEADER_SIZE:
        raise CorruptionError(f"page of {buf.size} bytes is shorter than its header", **where)
    view = memoryview(buf)
    crc, ptype, encoding, compression, flags, num_values, body_size, stored_size, _ = \
        HEADER.unpack_from(view)
    if stored_size != buf.size - HEADER_SIZE:
        raise CorruptionError(f"page stores {stored_size} bytes but its pointer covers "
                              f"{buf.size - HEADER_SIZE}", **where)
    if zlib.crc32(view[4:]) != crc:
        raise CorruptionError("page checksum mismatch", **where)
    if ptype != expected_type:
        raise CorruptionError(f"expected page type {expected_type}, found {ptype}", **where)
    body = buf.slice(HEADER_SIZE)
    if compression == LZ4:
        body = _decompress(view[HEADER_SIZE:], body_size, where)
    elif compression != NONE or body_size != stored_size:
        raise CorruptionError(f"unknown compression {compression}", **where)
    return Page(ptype, encoding, flags, num_values, body, compression == LZ4)


def _decompress(stored: memoryview, body_size: int, where: dict) -> pa.Buffer:
    try:
        raw = lz4.block.decompress(stored, uncompressed_size=body_size)
    except lz4.block.LZ4BlockError as exc:
        raise CorruptionError(f"LZ4 decompression failed: {exc}", **where) from exc
    if len(raw) != body_size:
        raise CorruptionError(f"page decompressed to {len(raw)} bytes, expected {body_size}",
                              **where)
    return pa.py_buffer(raw)
