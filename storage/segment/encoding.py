"""Value encodings: how one page's values become bytes, and back into an Arrow array.

Owns the uncompressed body of a data page (page.py frames, checksums and compresses it). Every
section starts on an 8-byte boundary of the body, so decoded Arrow buffers are aligned views of
the decompressed page (no copy for fixed-width and plain string pages).

    body := [validity]  payload                       validity present iff the page has NULLs:
                                                      ceil(n/8) bytes, bit i = row i is not NULL
                                                      (Arrow's LSB-first bitmap), padded to 8

    PLAIN   (fixed width)  payload := n x width bytes, little-endian (NULL slots are zero bytes):
                           TINYINT 1, SMALLINT 2, INT/FLOAT 4, DATE 4 (int32 days),
                           BIGINT/DOUBLE 8, DATETIME 8 (int64 microseconds),
                           LARGEINT/DECIMAL 16 (two's-complement unscaled value)
    BITS    (BOOLEAN)      payload := ceil(n/8) bytes, LSB-first, padded to 8
    BINARY  (strings)      payload := (n+1) x int32 offsets (pad 8) | concatenated UTF-8 bytes
    DICT    (strings)      payload := u32 dict_count | u8 code_width (1,2,4) | 3 zero bytes
                                      | (dict_count+1) x int32 offsets (pad 8) | dict bytes (pad 8)
                                      | n x code_width codes, little-endian

    IPC     (ARRAY, MAP,   payload := one Arrow IPC stream holding one record batch of one
             STRUCT)                  column `v` (the page's list values, offsets, element
                                      validity and nested children as Arrow lays them out);
                                      the page carries no separate validity section

A string page is written as DICT when that body is smaller than BINARY (decided per page).
An ARRAY, MAP or STRUCT page is IPC: Arrow's own nested layout, compressed by the page frame
like the others.
A JSON page is a string page (BINARY or DICT) of the values' normalized JSON texts, read back
as Arrow's JSON extension type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from storage.types import DataType, as_json, json_storage

PLAIN = 0
BITS = 1
BINARY = 2
DICT = 3
IPC = 4
ENCODING_NAMES = {PLAIN: "PLAIN", BITS: "BITS", BINARY: "BINARY", DICT: "DICT", IPC: "IPC"}

FIXED_WIDTH = {"TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "LARGEINT": 16, "FLOAT": 4,
               "DOUBLE": 8, "DECIMAL": 16, "DATE": 4, "DATETIME": 8}
_CODE_TYPES = {1: pa.uint8(), 2: pa.uint16(), 4: pa.uint32()}
_ZERO_PAD = bytes(8)


@dataclass
class EncodedPage:
    """One page's body before compression."""

    encoding: int
    has_nulls: bool
    num_values: int
    parts: list  # buffers (bytes / memoryview) that concatenate to the body

    def body(self) -> bytes:
        return b"".join(self.parts)


def _pad(size: int) -> int:
    return (-size) % 8


def _padded(parts: list, data) -> None:
    parts.append(data)
    extra = _pad(memoryview(data).nbytes)
    if extra:
        parts.append(_ZERO_PAD[:extra])


# -- encoding ------------------------------------------------------------------------------------
def encode(arr: pa.Array, dtype: DataType, allow_dict: bool = True) -> EncodedPage:
    """Encode one page worth of values (an Arrow array of `dtype.arrow()`)."""
    if dtype.is_nested:  # ARRAY / MAP / STRUCT: one Arrow IPC stream per page
        return _encode_ipc(arr)
    if dtype.is_json:
        arr = json_storage(arr)
    parts: list = []
    has_nulls = arr.null_count > 0
    if has_nulls:
        _padded(parts, np.packbits(np.asarray(arr.is_valid()), bitorder="little"))
    if dtype.kind == "BOOLEAN":
        values = np.asarray(pc.fill_null(arr, False)) if has_nulls else np.asarray(arr)
        _padded(parts, np.packbits(values, bitorder="little"))
        return EncodedPage(BITS, has_nulls, len(arr), parts)
    if dtype.is_string or dtype.is_json:
        return _encode_strings(arr, has_nulls, parts, allow_dict)
    width = FIXED_WIDTH[dtype.kind]
    data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    data = data[arr.offset * width:(arr.offset + len(arr)) * width]
    if has_nulls:  # zero the bytes under NULLs: stable files, better compression
        data = data.reshape(len(arr), width).copy()
        data[~np.asarray(arr.is_valid())] = 0
    parts.append(data)
    return EncodedPage(PLAIN, has_nulls, len(arr), parts)


def _encode_ipc(arr: pa.Array) -> EncodedPage:
    sink = pa.BufferOutputStream()
    batch = pa.record_batch([arr], names=["v"])
    with ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return EncodedPage(IPC, False, len(arr), [sink.getvalue()])


def _string_buffers(arr: pa.Array) -> tuple[np.ndarray, memoryview]:
    """Rebased int32 offsets and the bytes they index, for a (possibly sliced) string array."""
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset:arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    start, end = int(offsets[0]), int(offsets[-1])
    raw = memoryview(data)[start:end] if data is not None else memoryview(b"")
    return offsets - offsets[0], raw


def _encode_strings(arr: pa.Array, has_nulls: bool, parts: list, allow_dict: bool) -> EncodedPage:
    offsets, raw = _string_buffers(arr)
    plain_size = 4 * (len(arr) + 1) + raw.nbytes
    if allow_dict and len(arr) > 1:
        encoded = pc.dictionary_encode(arr)
        dictionary = encoded.dictionary
        d_offsets, d_raw = _string_buffers(dictionary)
        width = 1 if len(dictionary) <= 0xFF else 2 if len(dictionary) <= 0xFFFF else 4
        dict_size = 8 + 4 * (len(dictionary) + 1) + d_raw.nbytes + 16 + width * len(arr)
        if dict_size < plain_size:
            codes = np.asarray(pc.fill_null(encoded.indices, 0)).astype(f"<u{width}")
            header = np.array([len(dictionary), width], dtype="<u4").tobytes()[:5] + bytes(3)
            parts.append(header)
            _padded(parts, d_offsets.astype("<i4"))
            _padded(parts, d_raw)
            parts.append(codes)
            return EncodedPage(DICT, has_nulls, len(arr), parts)
    _padded(parts, offsets.astype("<i4"))
    parts.append(raw)
    return EncodedPage(BINARY, has_nulls, len(arr), parts)


# -- decoding ------------------------------------------------------------------------------------
def decode(encoding: int, has_nulls: bool, body: pa.Buffer, n: int, dtype: DataType) -> pa.Array:
    """Arrow array over `body`: zero-copy views, except DICT which gathers from its dictionary."""
    if encoding == IPC:
        return _decode_ipc(body, n, dtype)
    pos = 0
    validity = None
    if has_nulls:
        size = (n + 7) // 8
        validity = body.slice(0, size)
        pos = size + _pad(size)
    arrow_type = dtype.arrow()
    if encoding == PLAIN:
        width = FIXED_WIDTH[dtype.kind]
        _check(body, pos + n * width)
        return pa.Array.from_buffers(arrow_type, n, [validity, body.slice(pos, n * width)])
    if encoding == BITS:
        _check(body, pos + (n + 7) // 8)
        return pa.Array.from_buffers(arrow_type, n, [validity, body.slice(pos, (n + 7) // 8)])
    if encoding in (BINARY, DICT):
        decoded = (_decode_binary if encoding == BINARY else _decode_dict)(body, pos, n, validity)
        return as_json(decoded) if dtype.is_json else decoded
    raise ValueError(f"unknown page encoding {encoding}")


def _decode_ipc(body: pa.Buffer, n: int, dtype: DataType) -> pa.Array:
    table = ipc.open_stream(body).read_all()
    if table.num_columns != 1 or table.num_rows != n:
        raise ValueError(f"IPC page holds {table.num_rows} rows, the page header says {n}")
    column = table.column(0)
    if column.type != dtype.arrow():
        raise ValueError(f"IPC page holds {column.type}, the column is {dtype.arrow()}")
    return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)


def _check(body: pa.Buffer, needed: int) -> None:
    if needed > body.size:
        raise ValueError(f"page body is {body.size} bytes, layout needs {needed}")


def _decode_binary(body: pa.Buffer, pos: int, n: int, validity) -> pa.Array:
    osize = 4 * (n + 1)
    _check(body, pos + osize)
    offsets = np.frombuffer(body, dtype="<i4", count=n + 1, offset=pos)
    data_pos = pos + osize + _pad(osize)
    _check(body, data_pos + int(offsets[-1]))
    if n and (offsets[0] != 0 or np.any(np.diff(offsets) < 0)):
        raise ValueError("string offsets are not monotonic")
    return pa.Array.from_buffers(pa.string(), n, [validity, body.slice(pos, osize),
                                                  body.slice(data_pos, int(offsets[-1]))])


def _decode_dict(body: pa.Buffer, pos: int, n: int, validity) -> pa.Array:
    _check(body, pos + 8)
    header = np.frombuffer(body, dtype=np.uint8, count=8, offset=pos)
    count = int(header[:4].view("<u4")[0])
    width = int(header[4])
    if width not in _CODE_TYPES:
        raise ValueError(f"bad dictionary code width {width}")
    dictionary = _decode_binary(body, pos + 8, count, None)
    osize = 4 * (count + 1)
    dsize = len(dictionary.buffers()[2]) if count else 0
    codes_pos = pos + 8 + osize + _pad(osize) + dsize + _pad(dsize)
    _check(body, codes_pos + n * width)
    codes = pa.Array.from_buffers(_CODE_TYPES[width], n,
                                  [validity, body.slice(codes_pos, n * width)])
    if n and count and int(pc.max(codes).as_py() or 0) >= count:
        raise ValueError("dictionary code out of range")
    return dictionary.take(codes)
