"""A Stream Load body's `compress_type`: the body read through its decompressor, as it arrives.

Doris's names (BE util/load_util.cpp, case-insensitive): `gz` (gzip, several members allowed),
`bz2`, `lz4` (the LZ4 frame format), `deflate` (a zlib stream, as Doris's DeflateDecompressor
reads it with inflateInit). `lzo`, `lzop`, `lz4_block` and `snappy_block` are Doris's too but
not read here: such a load is refused before it starts. An empty header, or `plain`, is no
compression. Doris 2.1 compresses CSV bodies only; JSON bodies are read compressed as Doris 3.0
does (the Kafka and Flink connectors send gzip by default).

The decompressed stream is read a block at a time by the CSV and JSON readers
(server/http/load_source.py), so a compressed body is never held whole. A body that is not
what its header says fails the load with Doris's data quality message.
"""

from __future__ import annotations

import bz2
import gzip
import io
import zlib

import lz4.frame

from catalog.errors import AnalysisError, DataQualityError

READ_SIZE = 1 << 20
OUTPUT_SIZE = 8 << 20
SUPPORTED = ("gz", "bz2", "lz4", "deflate")
UNSUPPORTED = ("lzo", "lzop", "lz4_block", "snappy_block")


def parse_compress_type(raw: str) -> str | None:
    """The header's codec (lower case), None for a plain body."""
    name = raw.strip().lower()
    if name in ("", "plain"):
        return None
    if name in SUPPORTED:
        return name
    if name in UNSUPPORTED:
        raise AnalysisError(f"compress_type {raw.strip()} is not supported here; use gz, bz2, "
                            f"lz4 or deflate")
    raise AnalysisError(f"unknown compress_type: {raw.strip()}")


def decompressed(stream, codec: str | None):
    """`stream` (a file-like with `read`) read through `codec`; itself when None."""
    if codec is None:
        return stream
    if codec == "gz":
        inner = gzip.GzipFile(fileobj=stream, mode="rb")
    elif codec == "bz2":
        inner = bz2.BZ2File(stream, mode="rb")
    elif codec == "lz4":
        inner = lz4.frame.LZ4FrameFile(stream, mode="rb")
    else:
        inner = _Inflate(stream)
    return _Checked(inner, codec)


class _Inflate(io.RawIOBase):
    """A zlib stream's decompressed bytes, pulled from `stream` as they are asked for."""

    def __init__(self, stream):
        self._stream = stream
        self._z = zlib.decompressobj()
        self._pending = b""
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending and not self._eof:
            # at most OUTPUT_SIZE bytes out per call: a small body cannot inflate at once
            tail = self._z.unconsumed_tail
            raw = tail or self._stream.read(READ_SIZE)
            if raw:
                self._pending = self._z.decompress(raw, OUTPUT_SIZE)
                continue
            self._pending = self._z.flush()
            if not self._z.eof:
                raise zlib.error("incomplete deflate stream")
            self._eof = True
        n = min(len(view), len(self._pending))
        view[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


class _Checked:
    """The decompressor's reads, its failures turned into the load's data quality error."""

    def __init__(self, inner, codec: str):
        self._inner, self._codec = inner, codec

    def read(self, size: int = -1) -> bytes:
        try:
            return self._inner.read(size)
        except (OSError, EOFError, ValueError, RuntimeError, zlib.error) as e:
            raise DataQualityError(f"[DATA_QUALITY_ERROR]failed to decompress the {self._codec} "
                                   f"body: {e}") from None

    def readable(self) -> bool:
        return True
