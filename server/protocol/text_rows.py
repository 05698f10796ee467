"""Vectorised encoding of result rows into MySQL text-protocol packets.

A text row packet is `len(3 bytes LE) | seq(1) | field...`, each field a length-encoded string
(`<251: 1 byte`, `0xFC + 2`, `0xFD + 3`, `0xFE + 8`) or 0xFB for NULL. Given each column as an
Arrow string array, numpy computes every row's field prefixes and packet header as small binary
arrays, and one `binary_join_element_wise` (Arrow C++) concatenates header, prefix and value of
every field row by row: the data buffer of its result is the packets, back to back. No Python
loop over rows, except for a row whose payload reaches 16 MiB (split into several packets, as
the protocol requires; rare enough to frame one by one). A few rows (a point lookup, `SELECT 1`)
are framed in Python: the vectorised path's fixed cost is larger than its work there.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MAX_PAYLOAD = 0xFFFFFF
_INT32_MAX = (1 << 31) - 1
_WIDE = ((0xFC, 3), (0xFD, 4), (0xFE, 9))  # marker, prefix width


def encode_rows(columns: list[pa.Array], seq: int) -> tuple[bytes | memoryview, int]:
    """Packets for all rows of `columns` (string arrays); returns (bytes, next sequence id)."""
    n = len(columns[0]) if columns else 0
    if n == 0:
        return b"", seq
    if n <= FEW_ROWS:
        few = _encode_few(columns, n, seq)
        if few is not None:
            return few
    values, prefixes, payload = [], [], np.zeros(n, np.int64)
    for arr in columns:
        value, prefix, size = _field(arr)
        values.append(value)
        prefixes.append(prefix)
        payload += size
    if int(payload.max()) >= MAX_PAYLOAD:
        return _encode_large(prefixes, values, seq)
    header = np.empty((n, 4), np.uint8)
    header[:, 0] = payload & 0xFF
    header[:, 1] = (payload >> 8) & 0xFF
    header[:, 2] = payload >> 16
    header[:, 3] = (seq + np.arange(n)) & 0xFF
    parts = [_fixed_binary(header, 4)]
    for prefix, value in zip(prefixes, values):
        parts += [prefix, value]
    wide = int(payload.sum()) + 4 * n > _INT32_MAX
    return _joined(parts, wide), (seq + n) % 256


FEW_ROWS = 16


def _lenenc(size: int) -> bytes:
    if size < 251:
        return bytes((size,))
    for marker, width in _WIDE:
        if size < 1 << (8 * (width - 1)):
            return bytes((marker,)) + size.to_bytes(width - 1, "little")
    raise ValueError(size)


def _encode_few(columns: list[pa.Array], n: int, seq: int) -> tuple[bytes, int] | None:
    """`encode_rows` for a few rows, framed one by one; None if a payload reaches 16 MiB."""
    return encode_values([arr.to_pylist() for arr in columns], n, seq)


def encode_values(values: list[list], n: int, seq: int) -> tuple[bytes, int] | None:
    """Packets for `n` rows given as a list of texts (str, or None for NULL) per column, framed
    one by one in Python (a few rows); None if a payload reaches 16 MiB."""
    out = bytearray()
    for i in range(n):
        row = bytearray()
        for col in values:
            v = col[i]
            if v is None:
                row.append(0xFB)
                continue
            data = v.encode() if isinstance(v, str) else v
            row += _lenenc(len(data))
            row += data
        if len(row) >= MAX_PAYLOAD:
            return None
        out += len(row).to_bytes(3, "little")
        out.append(seq)
        out += row
        seq = (seq + 1) % 256
    return bytes(out), seq


def _field(arr: pa.Array) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """(value bytes with NULL as empty, length-encoded prefixes, field sizes) of one column."""
    if pa.types.is_large_string(arr.type):
        arr = arr.view(pa.large_binary())
    elif pa.types.is_string(arr.type):
        arr = arr.view(pa.binary())
    n = len(arr)
    lengths = pc.binary_length(arr).to_numpy(zero_copy_only=False)
    valid = None
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        lengths = np.where(valid, lengths, 0)
        arr = pc.fill_null(arr, b"")
    lengths = lengths.astype(np.int64, copy=False)
    if n and int(lengths.max()) < 251:  # the common case: one byte per prefix
        first = lengths.astype(np.uint8)
        if valid is not None:
            first[~valid] = 0xFB
        return arr, _fixed_binary(first, 1), lengths + 1
    width = np.select([lengths < 251, lengths < 1 << 16, lengths < 1 << 24], [1, 3, 4], 9)
    if valid is not None:
        width[~valid] = 1
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(width, out=offsets[1:])
    data = np.zeros(int(offsets[-1]), np.uint8)
    start = offsets[:-1]
    short = width == 1
    data[start[short]] = lengths[short]
    for marker, w in _WIDE:
        sel = width == w
        if sel.any():
            p, ln = start[sel], lengths[sel]
            data[p] = marker
            for b in range(w - 1):
                data[p + 1 + b] = (ln >> (8 * b)) & 0xFF
    if valid is not None:
        data[start[~valid]] = 0xFB
    prefix = pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets),
                                                          pa.py_buffer(data)])
    return arr, prefix, lengths + width


def _fixed_binary(data: np.ndarray, width: int) -> pa.Array:
    """A binary array of len(data) // width values of `width` bytes each."""
    n = data.size // width
    offsets = np.arange(0, n * width + 1, width, dtype=np.int32)
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(np.ascontiguousarray(data))])


def _joined(parts: list[pa.Array], wide: bool) -> memoryview:
    """The data bytes of the row-wise concatenation of `parts`."""
    kind = pa.large_binary() if wide or any(pa.types.is_large_binary(p.type) for p in parts) \
        else pa.binary()
    parts = [p if p.type == kind else p.cast(kind) for p in parts]
    out = pc.binary_join_element_wise(*parts, pa.scalar(b"", kind))
    _, offsets, data = out.buffers()
    o = np.frombuffer(offsets, np.int64 if kind == pa.large_binary() else np.int32,
                      count=len(out) + 1, offset=out.offset * (8 if kind == pa.large_binary() else 4))
    return memoryview(data)[int(o[0]):int(o[-1])]


def _encode_large(prefixes: list[pa.Array], values: list[pa.Array], seq: int) -> tuple[bytes, int]:
    """Rows of which some reach 16 MiB: each payload split into packets of at most 0xFFFFFF
    bytes (a payload of exactly that size is followed by an empty packet)."""
    parts = [p for pair in zip(prefixes, values) for p in pair]
    rows = pc.binary_join_element_wise(*[p.cast(pa.large_binary()) for p in parts],
                                       pa.scalar(b"", pa.large_binary()))
    out = bytearray()
    for i in range(len(rows)):
        data = rows[i].as_buffer()
        view = memoryview(data) if data is not None else memoryview(b"")
        while True:
            chunk = view[:MAX_PAYLOAD]
            view = view[MAX_PAYLOAD:]
            out += len(chunk).to_bytes(3, "little") + bytes([seq])
            out += chunk
            seq = (seq + 1) % 256
            if len(chunk) < MAX_PAYLOAD:
                break
    return bytes(out), seq
