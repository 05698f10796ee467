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

Between chained operations the values stay int64: `Unscaled` holds the int64 values, the
NULLs, the Doris result type and an upper bound of the absolute values (computed once from the
data at the leaves, then carried through each operation: |x*y| <= |x|max * |y|max), and is
written as decimal128 only when something other than + - * (or an aggregate) reads it. The
bound decides, without a pass over the data, whether the next operation may overflow.
"""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_LIMIT = 2**62  # headroom under 2**63 for the rounding step
_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 20}  # as casts.decimal_of


class Unscaled:
    """A DECIMAL array as int64 unscaled values: `values` (NULL slots hold 0), `valid` (bool,
    None when there is no NULL), the decimal128 `type`, and `bound` >= every |value|.

    `of_column` wraps a decimal128 column of at most 18 digits without reading it: its values
    are taken (from each chunk, without combining the chunks first) only when an operation needs
    them, and `to_arrow` gives the column itself."""

    __slots__ = ("_values", "_valid", "type", "_bound", "_arrow", "_chunks", "_column")

    def __init__(self, values: np.ndarray | None, valid: np.ndarray | None, type_: pa.DataType,
                 bound: int | None):
        self._values, self._valid, self.type, self._bound = values, valid, type_, bound
        self._arrow: pa.Array | None = None
        self._chunks: list[pa.Array] | None = None
        self._column: Callable[[], pa.Array] | None = None

    @classmethod
    def of_column(cls, chunks: list[pa.Array], type_: pa.DataType,
                  column: Callable[[], pa.Array]) -> Unscaled:
        lazy = cls(None, None, type_, None)
        lazy._chunks, lazy._column = chunks, column
        return lazy

    def _read(self) -> None:
        chunks = [c for c in self._chunks if len(c)]
        if len(chunks) == 1 and not chunks[0].null_count:
            c = chunks[0]  # the low words in place, no copy (read-only: nothing writes to it)
            words = np.frombuffer(c.buffers()[1], np.int64)[2 * c.offset:2 * (c.offset + len(c))]
            self._values, self._valid, self._chunks = words[0::2], None, None
            return
        values = np.empty(sum(len(c) for c in chunks), np.int64)
        valid = np.ones(len(values), bool) if any(c.null_count for c in chunks) else None
        pos = 0
        for c in chunks:
            words = np.frombuffer(c.buffers()[1], np.int64)[2 * c.offset:2 * (c.offset + len(c))]
            end = pos + len(c)
            if c.null_count:
                ok = np.asarray(pc.is_valid(c))
                np.copyto(values[pos:end], np.where(ok, words[0::2], 0))
                valid[pos:end] = ok
            else:
                values[pos:end] = words[0::2]  # at most 18 digits: the low word is the value
            pos = end
        self._values, self._valid, self._chunks = values, valid, None

    @property
    def values(self) -> np.ndarray:
        if self._chunks is not None:
            self._read()
        return self._values

    @property
    def valid(self) -> np.ndarray | None:
        if self._chunks is not None:
            self._read()
        return self._valid

    @property
    def bound(self) -> int:
        if self._bound is None:
            self._bound = _bound(self.values)
        return self._bound

    def __len__(self) -> int:
        if self._chunks is not None:
            return sum(len(c) for c in self._chunks)
        return len(self._values)

    def to_arrow(self) -> pa.Array:
        """The decimal128 array (written once, then kept)."""
        if self._arrow is None:
            self._arrow = self._column() if self._column is not None else \
                from_unscaled(self.values, self.valid, self.type)
        return self._arrow


class _Const:
    """A non-NULL constant operand: its unscaled Python int and decimal type."""

    __slots__ = ("values", "valid", "type", "bound")

    def __init__(self, value: int, type_: pa.DataType):
        self.values, self.valid, self.type, self.bound = value, None, type_, abs(value)


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
    elif arr.type.precision <= 18:
        return np.ascontiguousarray(low)  # |value| < 10**18 < 2**63: the high word is the sign
    if not np.array_equal(high, low >> 63):
        return None
    return low


def _valid(arr: pa.Array) -> np.ndarray | None:
    return np.asarray(pc.is_valid(arr)) if arr.null_count else None


def _bound(x: np.ndarray) -> int:
    return max(abs(int(x.max())), abs(int(x.min()))) if len(x) else 0


def of_array(arr: pa.Array) -> Unscaled | None:
    """A decimal128, integer or boolean array as `Unscaled` (integers as the DECIMAL(p, 0) that
    `casts.decimal_of` gives them), or None if a value does not fit in int64."""
    t = arr.type
    if pa.types.is_decimal128(t):
        values, out = unscaled(arr), t
    elif pa.types.is_integer(t) and not pa.types.is_unsigned_integer(t):
        values = np.asarray(arr.fill_null(0) if arr.null_count else arr).astype(np.int64, copy=False)
        out = pa.decimal128(_INT_DIGITS[t.bit_width], 0)
    elif pa.types.is_boolean(t):
        values = np.asarray(arr.fill_null(False) if arr.null_count else arr).astype(np.int64)
        out = pa.decimal128(1, 0)
    else:
        return None
    if values is None:
        return None
    return Unscaled(values, _valid(arr), out, _bound(values))


def _of_scalar(v: pa.Scalar) -> _Const | None:
    t = v.type
    if not v.is_valid:
        return None
    if pa.types.is_decimal128(t):
        value = to_unscaled(v.as_py(), t.scale)
    elif pa.types.is_integer(t) and not pa.types.is_unsigned_integer(t):
        value = int(v.as_py())
        t = next(pa.decimal128(_INT_DIGITS[bits], 0) for bits in (8, 16, 32, 64)
                 if abs(value) < 2 ** (bits - 1))
    else:
        return None
    return _Const(value, t) if abs(value) < _LIMIT else None


def operand(v) -> Unscaled | _Const | None:
    """An arithmetic operand as int64 unscaled values, or None when not applicable."""
    if isinstance(v, Unscaled):
        return v
    if isinstance(v, pa.Scalar):
        return _of_scalar(v)
    if isinstance(v, pa.ChunkedArray):
        v = v.combine_chunks()
    return of_array(v)


def from_unscaled(values: np.ndarray, valid: np.ndarray | None, out: pa.DataType) -> pa.Array:
    """A decimal128 array of type `out` holding the int64 unscaled `values`."""
    words = np.empty((len(values), 2), dtype=np.int64)  # (low, high) little-endian pairs
    words[:, 0] = values
    np.right_shift(values, 63, out=words[:, 1])
    validity = None
    if valid is not None:
        validity = pa.array(np.asarray(valid, dtype=bool)).buffers()[1]
    return pa.Array.from_buffers(out, len(values), [validity, pa.py_buffer(words)])


def arith_unscaled(op: str, a, b, out: pa.DataType) -> Unscaled | None:
    """`a op b` (op in + - *) of two operands (see `operand`; at least one an `Unscaled`) as
    `out`, or None when int64 cannot be shown to hold the exact result."""
    if not pa.types.is_decimal128(out):
        return None
    x, y = a.values, b.values
    s1, s2 = a.type.scale, b.type.scale
    if op == "*":
        bound = a.bound * b.bound
        if bound >= _LIMIT:
            return None
        result, scale = x * y, s1 + s2
    else:
        scale = max(s1, s2)
        fx, fy = 10 ** (scale - s1), 10 ** (scale - s2)
        bound = a.bound * fx + b.bound * fy
        if bound >= _LIMIT:
            return None
        if fx != 1:
            x = x * fx
        if fy != 1:
            y = y * fy
        result = x + y if op == "+" else x - y
    if out.scale < scale:
        d = 10 ** (scale - out.scale)
        result = np.sign(result) * ((np.abs(result) + d // 2) // d)
        bound = (bound + d // 2) // d
    elif out.scale > scale:
        factor = 10 ** (out.scale - scale)
        if bound * factor >= _LIMIT:
            return None
        result, bound = result * factor, bound * factor
    if out.precision < 19 and bound >= 10 ** out.precision:
        bound = _bound(result)  # the carried bound is loose: look at the values
        if bound >= 10 ** out.precision:
            return None  # does not fit the result type: Arrow's path raises the overflow
    if a.valid is None:
        valid = b.valid
    elif b.valid is None:
        valid = a.valid
    else:
        valid = a.valid & b.valid
    return Unscaled(result, valid, out, bound)


def negate(a: Unscaled) -> Unscaled:
    return Unscaled(-a.values, a.valid, a.type, a.bound)


def arith(op: str, a: pa.Array, b: pa.Array, out: pa.DataType) -> pa.Array | None:
    """`a op b` (op in + - *) of two decimal128 arrays as `out`, or None (see module doc)."""
    x, y = operand(a), operand(b)
    if x is None or y is None or not (pa.types.is_decimal128(a.type)
                                      and pa.types.is_decimal128(b.type)):
        return None
    result = arith_unscaled(op, x, y, out)
    return None if result is None else result.to_arrow()


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


# Exact for any DECIMAL(38) (the default context keeps 28 digits).
_EXACT = Context(prec=80)


def to_unscaled(value: Decimal, scale: int) -> int:
    """The unscaled integer of a Decimal at `scale` (exact)."""
    return int(value.scaleb(scale, context=_EXACT))


def to_decimal(value: int, scale: int) -> Decimal:
    """The Decimal of an unscaled integer at `scale` (exact)."""
    return Decimal(value).scaleb(-scale, context=_EXACT)
