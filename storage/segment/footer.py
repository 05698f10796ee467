"""Segment file header and footer: how a reader finds everything in a segment.

Owns the file's first 8 bytes and its tail. Whole file:

    offset 0   8 bytes  b"MDSG" | u32 format version (1)
    offset 8   pages, each at an 8-byte aligned offset (page.py), column by column:
                 column 0: data pages..., [ordinal index page], zone map page,
                           [bloom filter page], [bitmap dictionary pages, bitmap pages]
                 column 1: ...
               short key page
    footer     UTF-8 JSON (below), footer_size bytes
    tail       u32 footer_size | u32 crc32(footer) | b"MDF1"      (last 12 bytes of the file)

Footer JSON (Doris keeps the same facts in its SegmentFooterPB):

    {"format_version": 1, "num_rows": N,
     "columns": [{"name": str, "type": DataType.to_dict(), "num_pages": k,
                  "data_page": [offset, size] | null,       # set iff k == 1 (seed 003 §3.1)
                  "ordinal_index": [offset, size] | null,   # set iff k > 1
                  "zone_map": [offset, size],               # ZONE_MAP_INDEX page, k entries
                  "segment_zone_map": base64 (zone_map.encode of one entry),
                  "data_bytes": stored bytes of the data pages,
                  "bloom_filter": [offset, size],           # only for bloom filter columns
                  "bitmap_index": {...}}],                  # only for bitmap index columns
                                                            #   (bitmap_index.py draws it)
     "short_key": {"page": [offset, size], "columns": [names], "widths": [bytes],
                   "interval": 1024, "num_entries": m} | null}
"""

from __future__ import annotations

import json
import os
import struct
import zlib

from storage.errors import CorruptionError

FORMAT_VERSION = 1
FILE_MAGIC = b"MDSG"
FOOTER_MAGIC = b"MDF1"
HEADER_SIZE = 8
TAIL = struct.Struct("<II4s")


def file_header(magic: bytes = FILE_MAGIC) -> bytes:
    return magic + struct.pack("<I", FORMAT_VERSION)


def encode_footer(footer: dict) -> bytes:
    body = json.dumps(footer, separators=(",", ":")).encode()
    return body + TAIL.pack(len(body), zlib.crc32(body), FOOTER_MAGIC)


def read_footer(fd: int, file_size: int, where: dict, magic: bytes = FILE_MAGIC) -> dict:
    """Read, check and parse the footer of the open segment file `fd`."""
    if file_size < HEADER_SIZE + TAIL.size:
        raise CorruptionError(f"file of {file_size} bytes is too short", **where)
    head = os.pread(fd, HEADER_SIZE, 0)
    if head[:4] != magic:
        raise CorruptionError("bad file magic", **where)
    version = struct.unpack_from("<I", head, 4)[0]
    if version != FORMAT_VERSION:
        raise CorruptionError(f"unsupported segment format version {version}", **where)
    size, crc, tail_magic = TAIL.unpack(os.pread(fd, TAIL.size, file_size - TAIL.size))
    if tail_magic != FOOTER_MAGIC:
        raise CorruptionError("bad footer magic", **where)
    if size > file_size - HEADER_SIZE - TAIL.size:
        raise CorruptionError(f"footer size {size} exceeds the file", **where)
    body = os.pread(fd, size, file_size - TAIL.size - size)
    if zlib.crc32(body) != crc:
        raise CorruptionError("footer checksum mismatch", **where)
    try:
        footer = json.loads(body)
    except ValueError as exc:
        raise CorruptionError(f"footer is not valid JSON: {exc}", **where) from exc
    if footer.get("format_version") != FORMAT_VERSION:
        raise CorruptionError("footer format version mismatch", **where)
    return footer
