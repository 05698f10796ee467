"""Side index files: a bitmap index (ADD INDEX) or an inverted index (BUILD INDEX) built for a
segment that was written without it.

Segment files are immutable, so `ALTER TABLE ... ADD INDEX` (or CREATE INDEX) on a table that
already holds data writes, next to each existing segment, a small file with that segment
column's bitmap index. Segments written after the index exists carry it inside (writer.py).

    <tablet dir>/<rowset_id>_<segment_no>_<index_id>.idx

    offset 0   8 bytes  b"MDSI" | u32 format version (1)
    offset 8   BITMAP_DICT pages, BITMAP pages (bitmap_index.py), 8-byte aligned
    footer     JSON {"format_version": 1, "num_rows": N, "column": name,
                     "type": DataType.to_dict(), "bitmap_index": meta}
               (an inverted index: "inverted_index": meta, storage/inverted/index.py)
    tail       u32 footer_size | u32 crc32(footer) | b"MDF1"       (as a segment's, footer.py)

The file is written under a temporary name (`.idx.tmp`), fsynced, then renamed, so a crash
leaves either nothing or a whole file; files whose index the catalog never recorded are removed
at start-up with the other orphans (tablet.py).
"""

from __future__ import annotations

import os

import pyarrow as pa

from storage.durable import fsync
from storage.errors import CorruptionError
from storage.inverted import index as inverted_index
from storage.segment import bitmap_index, footer
from storage.segment.writer import SegmentOptions, _File
from storage.types import DataType

MAGIC = b"MDSI"
SUFFIX = ".idx"
TMP_SUFFIX = ".idx.tmp"


def file_name(rowset_id: int, segment_no: int, index_id: int) -> str:
    return f"{int(rowset_id)}_{int(segment_no)}_{int(index_id)}{SUFFIX}"


def parse_file_name(name: str) -> tuple[int, int, int] | None:
    """(rowset_id, segment_no, index_id) of a side index file name (also `.idx.tmp`)."""
    for suffix in (TMP_SUFFIX, SUFFIX):
        if name.endswith(suffix):
            parts = name[:-len(suffix)].split("_")
            if len(parts) == 3 and all(p.isdigit() for p in parts):
                return int(parts[0]), int(parts[1]), int(parts[2])
    return None


def write(path: str, arr: pa.Array, column: str, dtype: DataType,
          options: SegmentOptions, inverted: dict | None = None) -> int:
    """Write the bitmap index of one segment column to `path` (or, given `inverted` =
    {"index_id", "properties"}, its inverted index); returns the file size."""
    tmp = path[:-len(SUFFIX)] + TMP_SUFFIX
    with open(tmp, "wb") as f:
        out = _File(f)
        out.write(footer.file_header(MAGIC))
        if inverted is None:
            key = "bitmap_index"
            meta = bitmap_index.write(arr, dtype, options.page_size, options.compress,
                                      out.write)
        else:
            key = "inverted_index"
            meta = inverted_index.write(arr, inverted["index_id"], inverted["properties"],
                                        options.page_size, options.compress, out.write)
        out.write(footer.encode_footer({"format_version": footer.FORMAT_VERSION,
                                        "num_rows": len(arr), "column": column,
                                        "type": dtype.to_dict(), key: meta}))
        f.flush()
        fsync(f.fileno())
        size = out.offset
    os.replace(tmp, path)
    return size


def open_index(path: str, tablet_id: int | None, num_rows: int, dtype: DataType,
               inverted: bool = False):
    """The bitmap index (or inverted index) in side file `path`, or None if there is no such
    file."""
    where = {"tablet_id": tablet_id, "path": path}
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        meta = footer.read_footer(fd, os.fstat(fd).st_size, where, MAGIC)
    finally:
        os.close(fd)
    try:
        matches = meta["num_rows"] == num_rows and DataType.from_dict(meta["type"]) == dtype
        index_meta = meta["inverted_index" if inverted else "bitmap_index"]
    except (KeyError, TypeError) as exc:
        raise CorruptionError(f"side index footer lacks {exc}", **where) from exc
    if not matches:
        raise CorruptionError("side index does not match its segment", **where)
    if inverted:
        return inverted_index.InvertedIndex(index_meta, num_rows)
    return bitmap_index.BitmapIndex(index_meta, dtype, num_rows)
