"""Doris's bit functions: bitand / bitor / bitxor / bitnot, bit_count, bit_shift_left /
bit_shift_right (function_bit.cpp, function_bit_count.cpp, function_bit_shift.cpp).

    bitand(a, b) / bitor / bitxor   the arguments' common integer type (TINYINT .. LARGEINT)
    bitnot(a)                       a's integer type
    bit_count(a)                    TINYINT (SMALLINT for LARGEINT): the 1 bits of a's two's
                                    complement at a's width (bit_count(-1) = 8 for a TINYINT)
    bit_shift_left(a, n)            BIGINT: a << n as unsigned 64 bits; n < 0 or n >= 64 give 0
    bit_shift_right(a, n)           BIGINT: a logical (unsigned) shift right, same limits

Integer literals are typed as Doris's planner types them, by the smallest integer type that
holds them (so bit_count(-1) is 8 and bitand(3, 5) a TINYINT); other non-integer arguments are
rounded to BIGINT as the `&` operators do. NULL in gives NULL out.

Everything runs on numpy arrays, except LARGEINT (decimal128(38, 0) here, no numpy int128),
whose values go through Python integers row by row.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
from sqlglot import exp

from executor.expressions.arithmetic import _as_bigint
from executor.expressions.casts import cast_value, kind
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_functions import call_args
from executor.expressions.vectors import all_scalar, to_array, to_numpy, valid_mask

LARGEINT = pa.decimal128(38, 0)
_INTS = [pa.int8(), pa.int16(), pa.int32(), pa.int64()]
_WIDTH = {t: i for i, t in enumerate(_INTS + [LARGEINT])}


def _literal_type(node: exp.Expression) -> pa.DataType | None:
    """The smallest integer type holding an integer literal (`7`, `-1`), else None."""
    inner, sign = (node.this, -1) if isinstance(node, exp.Neg) else (node, 1)
    if not (isinstance(inner, exp.Literal) and not inner.is_string and inner.this.isdigit()):
        return None
    value = sign * int(inner.this)
    for t in _INTS:
        if -(1 << (t.bit_width - 1)) <= value < (1 << (t.bit_width - 1)):
            return t
    return None


def _integer(node: exp.Expression, frame: Frame) -> Value:
    """An argument as a Doris integer type."""
    v = frame.eval(node)
    narrow = _literal_type(node)
    if narrow is not None and pa.types.is_integer(v.type):
        return cast_value(v, narrow)
    if pa.types.is_integer(v.type) or v.type == LARGEINT:
        return v
    if pa.types.is_null(v.type):
        return cast_value(v, pa.int8())
    if kind(v.type) == "bool":
        return cast_value(v, pa.int8())
    return _as_bigint(v)


def _signed(t: pa.DataType) -> pa.DataType:
    return pa.int64() if pa.types.is_unsigned_integer(t) else t


def _common(values: list[Value]) -> pa.DataType:
    return max((_signed(v.type) for v in values), key=lambda t: _WIDTH.get(t, 3))


def _apply(values: list[Value], out: pa.DataType, n: int,
           numpy_fn: Callable[..., np.ndarray], python_fn: Callable[..., int],
           arg_type: pa.DataType | None = None) -> Value:
    """fn over the arguments' values (cast to `arg_type`), NULL where any is NULL."""
    arg_type = arg_type or out
    scalar = all_scalar(*values)
    rows = 1 if scalar else n
    arrays = [to_array(cast_value(v, arg_type), rows) for v in values]
    valid = np.ones(rows, bool)
    for arr in arrays:
        valid &= valid_mask(arr)
    if arg_type == LARGEINT:
        ints = [[int(x) if x is not None else 0 for x in arr.to_pylist()] for arr in arrays]
        result = pa.array([python_fn(*row) if ok else None
                           for row, ok in zip(zip(*ints), valid)], out)
    else:
        raw = numpy_fn(*[to_numpy(arr, 0) for arr in arrays])
        result = pa.array(raw.astype(out.to_pandas_dtype()), out,
                          mask=None if valid.all() else ~valid)
    return result[0] if scalar else result


def _two_ints(node: exp.Expression, frame: Frame, name: str) -> list[Value]:
    args = call_args(node)
    if len(args) != 2:
        raise ExpressionError(f"{name} takes two integers")
    return [_integer(a, frame) for a in args]


def _wrap128(v: int) -> int:
    v &= (1 << 128) - 1
    return v - (1 << 128) if v >> 127 else v


def _binary(numpy_fn: Callable, python_fn: Callable, name: str):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        values = _two_ints(node, frame, name)
        out = _common(values)
        return _apply(values, out, frame.n, numpy_fn, lambda a, b: _wrap128(python_fn(a, b)))
    return handler


def _one_int(node: exp.Expression, frame: Frame, name: str) -> Value:
    args = call_args(node) if not isinstance(node, exp.BitwiseCount) else [node.this]
    if len(args) != 1:
        raise ExpressionError(f"{name} takes one integer")
    return _integer(args[0], frame)


def eval_bitnot(node: exp.Expression, frame: Frame) -> Value:
    v = _one_int(node, frame, "bitnot")
    out = _signed(v.type)
    return _apply([v], out, frame.n, np.invert, lambda a: ~a)


def _popcount(values: np.ndarray) -> np.ndarray:
    unsigned = values.view(f"u{values.dtype.itemsize}")
    return np.bitwise_count(unsigned)


def eval_bit_count(node: exp.Expression, frame: Frame) -> Value:
    v = _one_int(node, frame, "bit_count")
    t = _signed(v.type)
    out = pa.int16() if t == LARGEINT else pa.int8()
    return _apply([v], out, frame.n, _popcount,
                  lambda a: bin(a & ((1 << 128) - 1)).count("1"), arg_type=t)


def _shift(left: bool):
    def numpy_fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ok = (b >= 0) & (b < 64)
        amount = np.where(ok, b, 0).astype(np.uint64)
        unsigned = a.view(np.uint64)
        shifted = (unsigned << amount) if left else (unsigned >> amount)
        return np.where(ok, shifted, 0).view(np.int64)

    def handler(node: exp.Expression, frame: Frame) -> Value:
        name = "bit_shift_left" if left else "bit_shift_right"
        a, b = _two_ints(node, frame, name)
        b = cast_value(b, pa.int64()) if b.type != LARGEINT else _as_bigint(b)
        return _apply([cast_value(a, pa.int64()), b], pa.int64(), frame.n, numpy_fn,
                      lambda x, y: 0)
    return handler


HANDLERS = {exp.BitwiseCount: eval_bit_count}
FUNCTIONS = {
    "BITAND": _binary(np.bitwise_and, lambda a, b: a & b, "bitand"),
    "BITOR": _binary(np.bitwise_or, lambda a, b: a | b, "bitor"),
    "BITXOR": _binary(np.bitwise_xor, lambda a, b: a ^ b, "bitxor"),
    "BITNOT": eval_bitnot, "BIT_COUNT": eval_bit_count,
    "BIT_SHIFT_LEFT": _shift(True), "BIT_SHIFT_RIGHT": _shift(False),
}
