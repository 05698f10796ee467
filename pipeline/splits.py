"""Spark Load's input splits: the source files cut into pieces that executors read themselves.

Spark's text and Parquet sources hand every value to Python through Spark's row format (a
column of lines, or 17 typed columns, converted row by row on the JVM side); most of a load's
time went there. So the driver plans splits and each executor task reads its own:
  CSV      byte ranges of about `split_bytes` (Hadoop's rule for where a range's lines are: a
           split owns the lines that begin inside it, a line begins at 0 or right after a line
           delimiter), read with mmap and parsed by Stream Load's own reader
           (`server/http/load_source.read_source`);
  Parquet  one split per row group, read with pyarrow.
`plan_splits` returns None, and Spark's own reader is used, for what a task cannot read alone:
another file system (hdfs://, s3a://), compressed files, ORC, a brace pattern, or a pattern
matching nothing (Spark then fails the job with its own `[PATH_NOT_FOUND]` error).
"""

from __future__ import annotations

import glob
import mmap
import os

import pyarrow as pa
import pyarrow.parquet as pq

from catalog.errors import DataQualityError
from server.http.load_options import StreamLoadOptions
from server.http.load_source import SourceRows, read_source

MAX_SPLIT_BYTES = 32 << 20
MIN_SPLIT_BYTES = 4 << 20
_COMPRESSED = (".gz", ".bz2", ".lz4", ".zst", ".snappy", ".deflate", ".xz", ".zip")


def _local_path(url: str) -> str | None:
    if url.startswith("file://"):
        return url[len("file://"):]
    return url if url.startswith("/") else None


def _hidden(path: str) -> bool:
    """Spark's file listing skips names starting with '_' or '.' (_SUCCESS, .crc files)."""
    return os.path.basename(path).startswith(("_", "."))


def input_files(files: list[str]) -> list[str] | None:
    """The local files the patterns name (directories listed, hidden files skipped), or None
    when Spark's reader must resolve them."""
    out: list[str] = []
    for url in files:
        path = _local_path(url)
        if path is None or "{" in path:
            return None
        matched = sorted(glob.glob(path)) if glob.has_magic(path) else \
            ([path] if os.path.exists(path) else [])
        if not matched:
            return None
        for m in matched:
            if os.path.isdir(m):
                out += sorted(os.path.join(m, n) for n in os.listdir(m)
                              if not _hidden(n) and os.path.isfile(os.path.join(m, n)))
            elif not (glob.has_magic(path) and _hidden(m)):
                out.append(m)
    if any(p.lower().endswith(_COMPRESSED) for p in out):
        return None
    return out


def plan_splits(spec: dict, parallelism: int) -> list[tuple] | None:
    """The load's splits, ("csv", path, start, end) or ("parquet", path, row group), or None
    for Spark's reader (module docstring). CSV splits aim at two per core."""
    if spec["format"] not in ("csv", "parquet"):
        return None
    paths = input_files(spec["files"])
    if paths is None:
        return None
    if spec["format"] == "parquet":
        return [("parquet", p, g) for p in paths for g in range(pq.ParquetFile(p).num_row_groups)]
    sizes = [os.path.getsize(p) for p in paths]
    target = sum(sizes) // max(1, 2 * parallelism)
    size = min(MAX_SPLIT_BYTES, max(MIN_SPLIT_BYTES, target))
    return [("csv", p, start, min(start + size, n))
            for p, n in zip(paths, sizes) for start in range(0, n, size)]


def _line_start(data, pos: int, delimiter: bytes, size: int) -> int:
    """The first line beginning at or after `pos`."""
    if pos <= 0:
        return 0
    if pos >= size:
        return size
    i = data.find(delimiter, max(0, pos - len(delimiter)))
    return size if i < 0 else i + len(delimiter)


def read_csv_range(path: str, start: int, end: int, delimiter: bytes) -> bytes:
    """The whole lines that begin in [start, end) of the file."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return b""
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            begin = _line_start(data, start, delimiter, size)
            finish = _line_start(data, end, delimiter, size)
            return data[begin:finish] if finish > begin else b""


def read_split(split: tuple, spec: dict, opts: StreamLoadOptions, names: list[str],
               typed: dict | None = None) -> SourceRows:
    """The source rows of one split, named `names` as `etl` expects them; CSV columns in
    `typed` parsed straight to their type unless a value does not parse (then all as text)."""
    if split[0] == "csv":
        _, path, start, end = split
        body = read_csv_range(path, start, end, spec["line_delimiter"].encode())
        if typed:
            try:
                return read_source(body, opts, names, typed)
            except DataQualityError:
                pass
        return read_source(body, opts, names)
    _, path, group = split
    return typed_source(pq.ParquetFile(path).read_row_group(group), names)


def typed_source(table: pa.Table, names: list[str]) -> SourceRows:
    """Typed columns (Parquet) matched to `names` case-insensitively; a missing one is NULL."""
    by_lower = {c.lower(): c for c in table.column_names}
    columns = {n: table.column(by_lower[n.lower()]) if n.lower() in by_lower
               else pa.nulls(table.num_rows, pa.string()) for n in names}
    return SourceRows(pa.table(columns))
