"""DECIMAL + - * on the unscaled integers, in int64, when the values allow it.

Arrow computes decimal128 products in 128-bit arithmetic and needs decimal256 (much slower)
once the declared result precision passes 38 digits, as it does for
`price * (1 - discount) * (1 + tax)` on DECIMAL(15,2) columns; the stored values are usually
far smaller. A decimal128 array is an array of 128-bit unscaled integers: when every value fits
in an int64 and the bounds of the operands show that the exact result does too, numpy computes
it exactly, the result is rounded half away from zero to the result scale (as
`casts.rescale_decimal` does) and written back as decimal128 of the result type. Anything else
(a value outside int64, a possible overflow, a result wider than its precision) returns None and
the caller takes Arrow's exact path, which also raises the errors.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_LIMIT = 2**62  # headroom under 2**63 for the rounding step


def unscaled(arr: pa.Array) -> np.ndarray | None:
    """The unscaled values of a decimal128 array as int64 (NULL slots 0), or None if one does
    not fit."""
    if not pa.types.is_decimal128(arr.type):
        return None
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64)[2 * arr.offset:2 * (arr.offset + len(arr))]
    low, high = words[0::2], words[1::2]
    if arr.null_count:
        valid = np.asarray(pc.is_valid(arr))
        low, high = np.where(valid, low, 0), np.where(valid, high, 0)
    if not np.array_equal(high, low >> 63):
        return None
    return low


def from_unscaled(values: np.ndarray, valid: pa.Array | None, out: pa.DataType) -> pa.Array:
    """A decimal128 array of type `out` holding the int64 unscaled `values`."""
    words = np.empty((len(values), 2), dtype=np.int64)  # (low, high) little-endian pairs
    words[:, 0] = values
    np.right_shift(values, 63, out=words[:, 1])
    validity = None
    if valid is not None:
        validity = pa.array(np.asarray(valid, dtype=bool)).buffers()[1]
    return pa.Array.from_buffers(out, len(values), [validity, pa.py_buffer(words)])


def _bound(x: np.ndarray) -> int:
    return int(np.abs(x).max()) if len(x) else 0


def arith(op: str, a: pa.Array, b: pa.Array, out: pa.DataType) -> pa.Array | None:
    """`a op b` (op in + - *) of two decimal128 arrays as `out`, or None (see module doc)."""
    if not pa.types.is_decimal128(out):
        return None
    x, y = unscaled(a), unscaled(b)
    if x is None or y is None:
        return None
    s1, s2 = a.type.scale, b.type.scale
    if op == "*":
        if _bound(x) * _bound(y) >= _LIMIT:
            return None
        result, scale = x * y, s1 + s2
    else:
        scale = max(s1, s2)
        fx, fy = 10 ** (scale - s1), 10 ** (scale - s2)
        if _bound(x) * fx + _bound(y) * fy >= _LIMIT:
            return None
        if fx != 1:
            x = x * fx
        if fy != 1:
            y = y * fy
        result = x + y if op == "+" else x - y
    if out.scale < scale:
        d = 10 ** (scale - out.scale)
        result = np.sign(result) * ((np.abs(result) + d // 2) // d)
    elif out.scale > scale:
        if _bound(result) * 10 ** (out.scale - scale) >= _LIMIT:
            return None
        result = result * 10 ** (out.scale - scale)
    if out.precision < 19 and _bound(result) >= 10 ** out.precision:
        return None  # does not fit the result type: Arrow's path raises the overflow
    valid = None
    if a.null_count or b.null_count:
        valid = np.asarray(pc.and_(pc.is_valid(a), pc.is_valid(b)))
    return from_unscaled(result, valid, out)


def retyped(arr: pa.Array | pa.ChunkedArray, target: pa.DataType):
    """`arr` as decimal128 `target` with no fewer integer digits: for the same scale the same
    bytes (Arrow's cast would check every value against the new precision), for a larger scale
    the unscaled values times 10^k in int64 when they fit; None if not applicable."""
    t = arr.type
    if not (pa.types.is_decimal128(t) and pa.types.is_decimal128(target)
            and t.scale <= target.scale
            and t.precision - t.scale <= target.precision - target.scale):
        return None
    if isinstance(arr, pa.ChunkedArray):
        chunks = [retyped(c, target) for c in arr.chunks]
        return None if any(c is None for c in chunks) else pa.chunked_array(chunks, target)
    if t.scale == target.scale:
        return pa.Array.from_buffers(target, len(arr), arr.buffers()[:2],
                                     null_count=arr.null_count, offset=arr.offset)
    values = unscaled(arr)
    factor = 10 ** (target.scale - t.scale)
    if values is None or _bound(values) * factor >= _LIMIT:
        return None
    valid = np.asarray(pc.is_valid(arr)) if arr.null_count else None
    return from_unscaled(values * factor, valid, target)
