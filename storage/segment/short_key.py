"""Short key (prefix) index: a sparse, memcomparable index of the sort key (seed 003 §2).

Owns the key encoding, the short key page and the search of seed 003 §2.2.

Key encoding. Row r's prefix is the schema's short key columns (seed 004: at most 3 columns,
36 bytes, strings cut) encoded so that comparing the bytes (memcmp) orders rows as the sort key
does, NULL first. Every column has a fixed-width slot, so every encoded key has the same width W
(numpy compares them as fixed-width byte strings):

    slot := marker  value
    marker           0x01 NULL (value bytes are then all zero), 0x02 not NULL
    BOOLEAN          1 byte 0/1
    TINYINT..BIGINT, DATE (int32 days), DATETIME (int64 us)
                     big-endian two's complement with the sign bit flipped
    LARGEINT, DECIMAL 16 bytes, same (unscaled value; one scale per column)
    FLOAT, DOUBLE    IEEE bits big-endian; negative: all bits flipped, else sign bit set
                     (-0.0 is encoded as 0.0)
    CHAR, VARCHAR, STRING   the first `width` bytes, zero padded to `width`, then 1 byte: the
                     number of bytes kept. Padding + length orders a prefix before its
                     extensions ("a" < "a\\0" < "ab"), as an escape + terminator would.

A search bound is a prefix of these slots followed by a fill: 0x00 for "the smallest key with
this prefix" (below every marker), 0xFF for "the largest".

Short key page body (page type SHORT_KEY):

    u32 num_entries | u32 interval | u32 entry_width (W) | u32 num_rows
    | num_entries x W bytes: entry i encodes row i * interval
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.arrays import contiguous
from storage.segment.encoding import FIXED_WIDTH
from storage.types import DataType

NULL_MARKER = 1
VALUE_MARKER = 2


def slot_width(dtype: DataType, width: int) -> int:
    """Bytes of one column's slot: marker + value (+ length byte for strings)."""
    return 1 + (width + 1 if dtype.is_string else FIXED_WIDTH.get(dtype.kind, 1))


def encode_keys(arrays: list[pa.Array], types: list[DataType], widths: list[int]) -> np.ndarray:
    """(n, W) uint8 matrix: each row's encoded prefix over the given columns."""
    n = len(arrays[0]) if arrays else 0
    slots = []
    for arr, dtype, width in zip(arrays, types, widths):
        arr = contiguous(arr)
        value = _encode_strings(arr, width) if dtype.is_string else _encode_fixed(arr, dtype)
        slot = np.empty((n, 1 + value.shape[1]), dtype=np.uint8)
        slot[:, 0] = VALUE_MARKER
        slot[:, 1:] = value
        if arr.null_count:
            nulls = np.asarray(arr.is_null())
            slot[nulls, 0] = NULL_MARKER
            slot[nulls, 1:] = 0
        slots.append(slot)
    return np.hstack(slots) if slots else np.zeros((n, 0), np.uint8)


def as_sortable(matrix: np.ndarray) -> np.ndarray:
    """View an (n, W) key matrix as n fixed-width byte strings numpy compares like memcmp."""
    matrix = np.ascontiguousarray(matrix)
    return matrix.view(f"S{matrix.shape[1]}").reshape(-1)


def _fixed_values(arr: pa.Array, width: int) -> np.ndarray:
    data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    return data[arr.offset * width:(arr.offset + len(arr)) * width]


def _encode_fixed(arr: pa.Array, dtype: DataType) -> np.ndarray:
    n = len(arr)
    if dtype.kind == "BOOLEAN":
        return np.asarray(pc.fill_null(arr, False)).astype(np.uint8).reshape(n, 1)
    width = FIXED_WIDTH[dtype.kind]
    raw = _fixed_values(arr, width)
    if width == 16:
        out = raw.reshape(n, 16)[:, ::-1].copy()
        out[:, 0] ^= 0x80
        return out
    if dtype.is_float:
        return _encode_float(raw.view(f"<f{width}"), width)
    unsigned = raw.view(f"<u{width}") ^ np.array(1 << (8 * width - 1), dtype=f"u{width}")
    return unsigned.astype(f">u{width}").view(np.uint8).reshape(n, width)


def _encode_float(values: np.ndarray, width: int) -> np.ndarray:
    values = np.where(values == 0, np.zeros(1, values.dtype), values)  # -0.0 -> 0.0
    bits = values.view(f"u{width}")
    sign = np.array(1 << (8 * width - 1), dtype=f"u{width}")
    bits = np.where(bits & sign, ~bits, bits | sign)
    return bits.astype(f">u{width}").view(np.uint8).reshape(len(values), width)


def _encode_strings(arr: pa.Array, width: int) -> np.ndarray:
    n = len(arr)
    out = np.zeros((n, width + 1), dtype=np.uint8)
    if n == 0:
        return out
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset:arr.offset + n + 1]
    buf = arr.buffers()[2]
    data = np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1].astype(np.int64)
    kept = np.minimum(np.diff(offsets), width)
    for j in range(width):
        rows = np.flatnonzero(kept > j)
        if not len(rows):
            break
        out[rows, j] = data[starts[rows] + j]
    out[:, width] = kept
    return out


def encode_bounds(prefixes: list[list], types: list[DataType], widths: list[int],
                  total_width: int, fill: int, not_null_next: bool = False) -> np.ndarray:
    """Encode key prefixes (`prefixes[c]`: column c's value per bound, None = NULL; every
    column as long) and fill the remaining slots: one S{total_width} key per bound.

    `not_null_next` starts the next slot with the value marker: with fill 0x00 that is the
    smallest non-NULL key after the prefix (a range predicate never matches NULL).
    """
    return fill_bounds(encode_prefixes(prefixes, types, widths), total_width, fill,
                       not_null_next)


def encode_prefixes(prefixes: list[list], types: list[DataType], widths: list[int]) -> np.ndarray:
    """The (count, w) matrix of the prefixes' slots (`encode_bounds` before the fill), to fill
    more than once (a lookup's lower and upper bound share it)."""
    count = len(prefixes[0]) if prefixes else 1
    arrays = [pa.array(values, type=t.arrow()) for values, t in zip(prefixes, types)]
    return encode_keys(arrays, types[:len(arrays)], widths[:len(arrays)]) if arrays else \
        np.zeros((count, 0), np.uint8)


def fill_bounds(matrix: np.ndarray, total_width: int, fill: int,
                not_null_next: bool = False) -> np.ndarray:
    """`encode_bounds` from the encoded prefixes: the remaining slots filled."""
    count = matrix.shape[0]
    out = np.full((count, total_width), fill, dtype=np.uint8)
    out[:, :matrix.shape[1]] = matrix
    if not_null_next:
        out[:, matrix.shape[1]] = VALUE_MARKER
    return as_sortable(out)


# -- the index page ------------------------------------------------------------------------------
def build_page_body(entries: np.ndarray, interval: int, num_rows: int) -> bytes:
    header = np.array([entries.shape[0], interval, entries.shape[1], num_rows], dtype="<u4")
    return header.tobytes() + np.ascontiguousarray(entries).tobytes()


@dataclass
class ShortKeyIndex:
    entries: np.ndarray  # S{W}, entry i encodes row i * interval
    interval: int
    width: int
    num_rows: int

    @staticmethod
    def parse(body: pa.Buffer) -> ShortKeyIndex:
        count, interval, width, num_rows = (int(x) for x in np.frombuffer(body, "<u4", 4))
        if body.size != 16 + count * width or interval <= 0 or width <= 0:
            raise ValueError("short key page layout is inconsistent")
        matrix = np.frombuffer(body, np.uint8, count * width, 16).reshape(count, width)
        return ShortKeyIndex(as_sortable(matrix), interval, width, num_rows)

    def first_rows(self, keys: np.ndarray, strict: bool,
                   load_keys: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
        """For each key, the first row whose key is > it (strict) or >= it, as seed 003 §2.2
        finds it, for all keys at once.

        The sparse entries bound each answer to one interval: entry j-1 is below the key and
        entry j is not, so the row lies in ((j-1) * interval, j * interval]. Only the rows of
        those intervals are loaded (`load_keys(starts, ends)` -> sortable keys of the rows of
        the ascending, disjoint ranges [starts[i], ends[i]), concatenated) and binary searched.
        """
        side = "right" if strict else "left"
        targets = keys.astype(f"S{self.width}", copy=False)
        if len(targets) == 1:
            return np.array([self._first_row(targets[0], side, load_keys)], dtype=np.int64)
        j = np.searchsorted(self.entries, targets, side=side).astype(np.int64)
        lo = np.maximum(j - 1, 0) * self.interval + 1
        hi = np.minimum(j * self.interval, self.num_rows)
        result = np.where(j == 0, 0, hi)
        open_ = np.flatnonzero((j > 0) & (lo < hi))
        if len(open_) == 0:
            return result
        windows, which = np.unique(j[open_], return_inverse=True)
        starts = (windows - 1) * self.interval + 1
        ends = np.minimum(windows * self.interval, self.num_rows)
        loaded = load_keys(starts, ends)
        # the windows' keys, concatenated, are sorted: a key's position among them, less the
        # keys of the windows before its own, is its position inside its window
        base = np.concatenate([[0], np.cumsum(ends - starts)])[:-1]
        pos = np.searchsorted(loaded, targets[open_], side=side) - base[which]
        result[open_] = starts[which] + np.clip(pos, 0, (ends - starts)[which])
        return result

    def _first_row(self, target: bytes, side: str,
                   load_keys: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> int:
        """`first_rows` for one key (a point lookup's bound), with scalar arithmetic."""
        j = int(np.searchsorted(self.entries, target, side=side))
        if j == 0:
            return 0
        lo, hi = (j - 1) * self.interval + 1, min(j * self.interval, self.num_rows)
        if lo >= hi:
            return hi
        loaded = load_keys(np.array([lo], np.int64), np.array([hi], np.int64))
        pos = int(np.searchsorted(loaded, target, side=side))
        return lo + min(max(pos, 0), hi - lo)
