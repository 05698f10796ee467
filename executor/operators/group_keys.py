"""Grouping keys as int64 "digits", packed into one int64 code per row where they fit.

Acero's hash aggregation hashes every key column per row; two 1-character string keys (TPC-H
Q1's l_returnflag, l_linestatus) cost it more than all the sums together. Here each key of a
supported type becomes a dense int64 digit (value - min + 1, 0 for NULL, radix max - min + 2),
computed with numpy, and the digits are packed into one code (mixed radix) when the product of
the radixes stays under 2^62; otherwise each digit is its own int64 key column. Unsupported keys
(floats, wide decimals, variable-length strings, ...) stay as they are. Equal key tuples get
equal codes, so grouping by the codes gives the same groups in the same (first appearance)
order; `KeyCodes.decode` turns a group's code back into its key values.

Supported: integers, booleans, DATE, DATETIME, DECIMAL of at most 18 digits (and DECIMALs still
held as int64, `decimal_int64.Unscaled`), strings whose non-NULL values all have the same length
of at most 8 bytes (their bytes read as one integer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.errors import check_key_type
from executor.expressions.decimal_int64 import Unscaled, from_unscaled, unscaled
from storage.arrays import contiguous

_PACK_LIMIT = 2**62


@dataclass
class _Digit:
    """One key as int64 digits: 0 for NULL, else value - low + 1 (value as an integer)."""

    digits: np.ndarray
    radix: int
    low: int
    type: pa.DataType
    width: int = 0            # strings: bytes per value


def integer_view(arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(the values as integers with NULL slots 0, validity or None) of an integer, boolean,
    DATE or DATETIME array; None for other types."""
    t = arr.type
    if not (pa.types.is_integer(t) or pa.types.is_date32(t) or pa.types.is_timestamp(t)
            or pa.types.is_boolean(t)):
        return None
    if pa.types.is_boolean(t):
        values = arr.cast(pa.int8())
    else:
        values = arr if pa.types.is_integer(t) else \
            arr.view(pa.int32() if pa.types.is_date32(t) else pa.int64())
    valid = np.asarray(pc.is_valid(arr)) if arr.null_count else None
    return np.asarray(values.fill_null(0) if values.null_count else values), valid


def _integers(arr) -> tuple[np.ndarray, np.ndarray | None, pa.DataType, int] | None:
    """(integer view of the values, validity or None, type, string width) of a supported key."""
    if isinstance(arr, Unscaled):
        return arr.values, arr.valid, arr.type, 0
    arr = contiguous(arr)
    t = arr.type
    found = integer_view(arr)
    if found is not None:
        return found[0], found[1], t, 0
    valid = np.asarray(pc.is_valid(arr)) if arr.null_count else None
    if pa.types.is_decimal128(t) and t.precision <= 18:
        return unscaled(arr), valid, t, 0
    if pa.types.is_string(t):
        return _fixed_width(arr, valid)
    return None


def _fixed_width(arr: pa.Array, valid: np.ndarray | None):
    if valid is not None:
        filled = arr.filter(pa.array(valid))
        if len(filled) == 0:
            return None
        arr = arr.fill_null(filled[0])
    offsets = np.frombuffer(arr.buffers()[1], np.int32)[arr.offset:arr.offset + len(arr) + 1]
    n = len(arr)
    if n == 0:
        return None
    width = int(offsets[1] - offsets[0])
    if not 1 <= width <= 8 or offsets[-1] - offsets[0] != n * width \
            or not np.all(np.diff(offsets) == width):
        return None
    data = np.frombuffer(arr.buffers()[2], np.uint8)[offsets[0]:offsets[-1]]
    size = 1 if width == 1 else 2 if width == 2 else 4 if width <= 4 else 8
    if size != width:
        padded = np.zeros((n, size), np.uint8)
        padded[:, :width] = data.reshape(n, width)
        data = padded
    # Unsigned up to 4 bytes (widened by the caller's subtraction), 8 bytes as int64 bits.
    values = np.ascontiguousarray(data).view(f"<u{size}" if size < 8 else "<i8").reshape(n)
    return values, valid, pa.string(), width


def _digit(arr) -> _Digit | None:
    found = _integers(arr)
    if found is None:
        return None
    values, valid, t, width = found
    present = values if valid is None else values[valid]
    if len(present) == 0:
        low, high = 0, 0
    else:
        low, high = int(present.min()), int(present.max())
    radix = high - low + 2
    if radix >= _PACK_LIMIT:
        return None
    digits = np.subtract(values, low - 1, dtype=np.int64)  # int64: the packing multiplies
    if valid is not None:
        digits[~valid] = 0
    return _Digit(digits, radix, low, t, width)


class KeyCodes:
    """The key columns Acero groups by (packed codes, digit columns or the keys as they are),
    and the way back from a group's key values there to the original keys."""

    def __init__(self, keys: list):
        for k in keys:
            check_key_type(k.type)
        self._parts: list[tuple[list[int], list[_Digit]] | tuple[int, None]] = []
        self.columns: list = []
        digits = [(i, _digit(k)) for i, k in enumerate(keys)]
        pack: list[tuple[int, _Digit]] = []
        product = 1
        for i, d in digits:
            if d is None:
                self._parts.append((i, None))
                self.columns.append(keys[i])
            elif product * d.radix < _PACK_LIMIT:
                pack.append((i, d))
                product *= d.radix
            else:
                self._parts.append(([i], [d]))
                self.columns.append(pa.array(d.digits))
        self.packed: np.ndarray | None = None  # the one code, when every key is packed in it
        self.radix = product
        if pack:
            code = pack[0][1].digits
            for _, d in pack[1:]:
                code = code * d.radix + d.digits
            self._parts.append(([i for i, _ in pack], [d for _, d in pack]))
            self.columns.append(pa.array(code))
            if len(pack) == len(keys):
                self.packed = code
        self.width = len(keys)

    def decode(self, grouped: list) -> list[pa.Array]:
        """The original key columns, given the grouped values of `self.columns`."""
        out: list = [None] * self.width
        for (where, ds), col in zip(self._parts, grouped):
            if ds is None:
                out[where] = col
                continue
            code = np.asarray(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
            for i, d in reversed(list(zip(where, ds))):
                out[i] = _decode_digit(code % d.radix, d)
                code = code // d.radix
        return out


def _decode_digit(digits: np.ndarray, d: _Digit) -> pa.Array:
    valid = digits != 0
    values = digits + (d.low - 1)
    mask = None if valid.all() else ~valid
    t = d.type
    if pa.types.is_decimal128(t):
        return from_unscaled(np.where(valid, values, 0), None if mask is None else valid, t)
    if pa.types.is_string(t):
        n, w = len(values), d.width
        size = 1 if w == 1 else 2 if w == 2 else 4 if w <= 4 else 8
        raw = np.ascontiguousarray(values.astype(f"<u{size}").view(np.uint8).reshape(n, size)[:, :w])
        offsets = np.arange(n + 1, dtype=np.int32) * w
        strings = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(raw))
        return strings if mask is None else pc.if_else(pa.array(valid), strings, None)
    if pa.types.is_boolean(t):
        return pa.array(values != 0, mask=mask)
    if pa.types.is_integer(t):
        return pa.array(values.astype(t.to_pandas_dtype()), t, mask=mask)
    storage = pa.int32() if pa.types.is_date32(t) else pa.int64()
    return pa.array(values.astype(storage.to_pandas_dtype()), storage, mask=mask).view(t)
