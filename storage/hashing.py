"""Bucketing: which bucket (tablet) of a partition a row belongs to.

Owns `bucket_ids`, the one definition of Doris-style hash distribution used by every writer: the
load path, rollups, and the Spark Load pipeline (which imports this module so that rows written by
Spark land in the same buckets as rows inserted through SQL).

Definition, per row, over the distribution columns c1..ck in order:

    h = zlib.crc32(bytes(c1), 0)
    h = zlib.crc32(bytes(c2), h)   ...   h = zlib.crc32(bytes(ck), h)
    bucket = h % num_buckets        (h is the unsigned 32-bit CRC)

bytes(value), by type (all fixed-width values little-endian):

    BOOLEAN 1 byte (0/1)   TINYINT 1   SMALLINT 2   INT 4   BIGINT 8   FLOAT 4   DOUBLE 8
    LARGEINT, DECIMAL(p,s)  16 bytes: the two's-complement unscaled 128-bit value
    DATE     4 bytes: int32 days since 1970-01-01
    DATETIME 8 bytes: int64 microseconds since 1970-01-01 00:00:00
    CHAR, VARCHAR, STRING   the UTF-8 bytes, no length, no padding
    NULL (any type)         the single byte 0x00

This follows Doris's scheme (zlib CRC32 chained over the columns, modulo the bucket count) but
not its exact bytes: Doris hashes NULL as four zero bytes and DATEV2/DATETIMEV2 in their packed
internal forms. minidoris never exchanges buckets with a real Doris BE, so only self-consistency
matters; this table is the contract.

Implementation: CRC32 is computed for all rows at once with numpy, table driven (the reflected
polynomial 0xEDB88320, as zlib): fixed-width values four bytes per step with two lookups in
16-bit tables (slicing-by-4), strings one byte position at a time across all rows. Strings are
processed in order of decreasing length, so at byte position j the rows still active are a
prefix of that order: the work is proportional to the total number of bytes, not rows x max length.
"""

from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.arrays import contiguous
from storage.types import DataType

_POLY = np.uint32(0xEDB88320)
_NULL_MARKER = np.uint8(0)


def _crc_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ _POLY, table >> 1).astype(np.uint32)
    return table


CRC_TABLE = _crc_table()


def _slice_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """16-bit tables for CRC32 by 2 and 4 bytes at a time (slicing-by-4, two bytes per lookup).

    With T0 = CRC_TABLE and Tk[i] = (T(k-1)[i] >> 8) ^ T0[T(k-1)[i] & 0xFF], four input bytes
    w (little-endian uint32) advance a state c as  v = c ^ w,
    c' = T3[v & 0xFF] ^ T2[v >> 8 & 0xFF] ^ T1[v >> 16 & 0xFF] ^ T0[v >> 24]
       = LOW4[v & 0xFFFF] ^ HIGH4[v >> 16];  two bytes (uint16 w) as
    c' = PAIR[(c ^ w) & 0xFFFF] ^ (c >> 16).
    """
    t = [CRC_TABLE]
    for _ in range(3):
        t.append((t[-1] >> 8) ^ CRC_TABLE[t[-1] & 0xFF])
    idx = np.arange(1 << 16, dtype=np.uint32)
    lo, hi = idx & 0xFF, idx >> 8
    return t[3][lo] ^ t[2][hi], t[1][lo] ^ t[0][hi], t[1][lo] ^ t[0][hi]


LOW4, HIGH4, PAIR = _slice_tables()

# Physical little-endian width of fixed-width kinds (BOOLEAN is widened to one byte).
_WIDTH = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "FLOAT": 4,
          "DOUBLE": 8, "LARGEINT": 16, "DECIMAL": 16, "DATE": 4, "DATETIME": 8}


def bucket_ids(columns: list[pa.Array | pa.ChunkedArray], types: list[DataType],
               num_buckets: int) -> np.ndarray:
    """Bucket number (int64, in [0, num_buckets)) of every row; see the module docstring."""
    if num_buckets <= 0:
        raise ValueError(f"num_buckets must be positive, got {num_buckets}")
    if len(columns) != len(types) or not columns:
        raise ValueError("bucket_ids needs one DataType per distribution column")
    return crc32_rows(columns, types).astype(np.int64) % np.int64(num_buckets)


def bucket_of(values: tuple, types: list[DataType], num_buckets: int) -> int | None:
    """`bucket_ids` of one row of Python values (a key lookup's constants), with zlib's CRC32
    directly over the same bytes; None for a type this scalar form does not cover (use
    bucket_ids): only integers (TINYINT..LARGEINT), CHAR/VARCHAR/STRING and NULL."""
    h = 0
    for value, dtype in zip(values, types):
        if value is None:
            data = bytes([_NULL_MARKER])
        elif dtype.is_string and isinstance(value, str):
            data = value.encode("utf-8")
        elif dtype.is_integer and dtype.kind in _WIDTH and isinstance(value, int) \
                and not isinstance(value, bool):
            data = value.to_bytes(_WIDTH[dtype.kind], "little", signed=True)
        else:
            return None
        h = zlib.crc32(data, h)
    return h % num_buckets


def crc32_rows(columns: list[pa.Array | pa.ChunkedArray], types: list[DataType]) -> np.ndarray:
    """The chained CRC32 of each row (uint32), before the modulo."""
    n = len(columns[0])
    h = np.zeros(n, dtype=np.uint32)
    for arr, dtype in zip(columns, types):
        if len(arr) != n:
            raise ValueError("distribution columns have different lengths")
        arr = _as_array(arr, dtype)
        before = h
        if dtype.is_string:
            h = _crc_strings(arr, h)
        else:
            h = _crc_fixed(_fixed_bytes(arr, dtype), h)
        if arr.null_count:
            nulls = np.asarray(arr.is_null())
            marker = np.full((int(nulls.sum()), 1), _NULL_MARKER)
            h[nulls] = _crc_fixed(marker, before[nulls])
    return h


def _as_array(arr: pa.Array | pa.ChunkedArray, dtype: DataType) -> pa.Array:
    arr = contiguous(arr)
    if arr.type != dtype.arrow():
        arr = arr.cast(dtype.arrow())
    return arr


def _fixed_bytes(arr: pa.Array, dtype: DataType) -> np.ndarray:
    """(n, width) uint8 matrix of little-endian values (NULL rows are re-hashed later)."""
    width = _WIDTH[dtype.kind]
    n = len(arr)
    if dtype.kind == "BOOLEAN":
        values = np.asarray(pc.fill_null(arr, False)).astype(np.uint8)
        return values.reshape(n, 1)
    data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    start = arr.offset * width
    return data[start:start + n * width].reshape(n, width)


def _crc_fixed(matrix: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Continue CRC32 states `h` over the bytes of each row of `matrix`: four bytes per step
    (two 16-bit table lookups), then two, then one."""
    crc = h ^ np.uint32(0xFFFFFFFF)
    width = matrix.shape[1]
    words = width // 4
    if words:
        quads = np.ascontiguousarray(matrix[:, :4 * words]).view("<u4")
        for j in range(words):
            v = crc ^ quads[:, j]
            crc = LOW4[v & 0xFFFF] ^ HIGH4[v >> 16]
    j = 4 * words
    if width - j >= 2:
        pair = np.ascontiguousarray(matrix[:, j:j + 2]).view("<u2")[:, 0]
        crc = PAIR[(crc ^ pair) & 0xFFFF] ^ (crc >> 16)
        j += 2
    if j < width:
        crc = CRC_TABLE[(crc ^ matrix[:, j]) & 0xFF] ^ (crc >> 8)
    return crc ^ np.uint32(0xFFFFFFFF)


def _crc_strings(arr: pa.Array, h: np.ndarray) -> np.ndarray:
    """Continue CRC32 states over each row's UTF-8 bytes (vectorised by byte position)."""
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset:arr.offset + n + 1]
    data = arr.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1].astype(np.int64)
    lengths = np.diff(offsets).astype(np.int64)
    order = np.argsort(-lengths, kind="stable")
    sorted_len = lengths[order]
    sorted_start = starts[order]
    crc = h[order] ^ np.uint32(0xFFFFFFFF)
    max_len = int(sorted_len[0]) if n else 0
    # active[j] = number of rows longer than j; they are the first active[j] rows of `order`.
    active = np.searchsorted(-sorted_len, -np.arange(max_len), side="left")
    for j in range(max_len):
        k = int(active[j])
        byte = data[sorted_start[:k] + j]
        crc[:k] = CRC_TABLE[(crc[:k] ^ byte) & 0xFF] ^ (crc[:k] >> 8)
    out = np.empty(n, dtype=np.uint32)
    out[order] = crc ^ np.uint32(0xFFFFFFFF)
    return out
