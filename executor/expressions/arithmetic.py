"""Arithmetic operators: + - * / % DIV, unary minus and the bitwise operators.

Result types (Doris/MySQL):
- integers (and booleans): + - * give BIGINT. Doris types BIGINT + - * BIGINT as LARGEINT;
  a shortcut here: only a constant past BIGINT's range becomes its exact LARGEINT value
  (`9223372036854775807 + 1`, `-(-9223372036854775808)`, ABS of it); a column's values past
  it raise `ArithmeticOverflow` (a LARGEINT type for every BIGINT sum would turn (a + b) / 2
  into a DECIMAL division and integer arguments into decimals, since LARGEINT is held as
  DECIMAL(38, 0)); unary minus is 0 - x; % gives the wider operand type; DIV gives BIGINT,
  truncating toward zero.
- `/` on integers, floats or strings gives DOUBLE (7/2 = 3.5).
- any FLOAT/DOUBLE or string operand makes the operation DOUBLE (strings are cast like CAST).
- DECIMAL (an integer mixed with a decimal is promoted, see `casts.decimal_of`), with Doris's
  precision rules (docs "DECIMAL / Precision Deduction", MAX_P = 38, decimal_overflow_scale 6):
      +,-  p = max(p1-s1, p2-s2) + max(s1,s2) + 1   s = max(s1,s2)
      *    p = p1 + p2                                s = s1 + s2
      /    p = p1 + s2 + 4                            s = s1 + 4   (div_precision_increment)
      %    p = max(p1-s1, p2-s2) + max(s1,s2)         s = max(s1,s2)
  capped at 38 digits with the documented overflow scales; decimal division truncates at the
  result scale (as Doris's integer-based division does). Values that do not fit the result
  type raise `ArithmeticOverflow` ("Arithmetic overflow"), as Doris reports.
- x / 0, x % 0 and x DIV 0 are NULL.
- + and - with an INTERVAL operand are date arithmetic (`datetime_functions.add_interval`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import datetime_functions, decimal_int64
from executor.expressions.casts import (MAX_PRECISION, TEMPORAL, cast_value, decimal_of, kind,
                                        number_literal, numeric_common, rescale_decimal)
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ArithmeticOverflow, ExpressionError
from executor.expressions.vectors import from_numpy, null_of, on_arrays, to_numpy, valid_mask

OVERFLOW_SCALE = 6  # Doris session variable decimal_overflow_scale (default)


def _operand_class(a: Value, b: Value, op: str) -> str:
    """'float', 'decimal' or 'int': the arithmetic family an operation runs in."""
    kinds = {kind(a.type), kind(b.type)} - {"null"}
    if kinds & set(TEMPORAL):
        raise ExpressionError(
            f"Arithmetic '{op}' on DATE/DATETIME values is not supported; use DATE_ADD, "
            "DATEDIFF or TIMESTAMPDIFF")
    if kinds - {"bool", "int", "decimal", "float", "string"}:
        raise ExpressionError(f"Invalid operand types for '{op}': {a.type}, {b.type}")
    if "float" in kinds or "string" in kinds:
        return "float"
    if "decimal" in kinds:
        return "decimal"
    return "int"


def _as_double(v: Value) -> Value:
    return cast_value(v, pa.float64())


def _fill_null_operands(a: Value, b: Value) -> tuple[Value, Value]:
    """Give a bare NULL the other operand's type so typing rules apply unchanged."""
    if pa.types.is_null(a.type) and not pa.types.is_null(b.type):
        a = null_of(b.type) if isinstance(a, pa.Scalar) else pa.nulls(len(a), b.type)
    elif pa.types.is_null(b.type) and not pa.types.is_null(a.type):
        b = null_of(a.type) if isinstance(b, pa.Scalar) else pa.nulls(len(b), a.type)
    elif pa.types.is_null(a.type):
        a = null_of(pa.int64()) if isinstance(a, pa.Scalar) else pa.nulls(len(a), pa.int64())
        b = null_of(pa.int64()) if isinstance(b, pa.Scalar) else pa.nulls(len(b), pa.int64())
    return a, b


# -- + - * -----------------------------------------------------------------------------------
_CHECKED = {"+": pc.add_checked, "-": pc.subtract_checked, "*": pc.multiply_checked}
_PLAIN = {"+": pc.add, "-": pc.subtract, "*": pc.multiply}


def arith(op: str, a: Value, b: Value, frame: Frame) -> Value:
    a, b = _fill_null_operands(a, b)
    family = _operand_class(a, b, op)
    if family == "float":
        a, b = _as_double(a), _as_double(b)
        if op == "/":
            return _divide_float(a, b, frame)
        if op == "%":
            return on_arrays(float_mod, a, b, n=frame.n)
        if op == "DIV":
            return cast_value(pc.trunc(_divide_float(a, b, frame)), pa.int64())
        return _PLAIN[op](a, b)
    if family == "decimal":
        return decimal_arith(op, a, b, frame)
    if op == "/":
        return _divide_float(_as_double(a), _as_double(b), frame)
    if op == "%":
        t = numeric_common([a, b])
        t = pa.int8() if pa.types.is_boolean(t) else t
        return on_arrays(lambda x, y: _int_mod(x, y, t), cast_value(a, t), cast_value(b, t),
                         n=frame.n)
    if op == "DIV":
        return on_arrays(_int_div, cast_value(a, pa.int64()), cast_value(b, pa.int64()), n=frame.n)
    return int_arith(op, a, b, frame)


# -- integer + - * -------------------------------------------------------------------------------
LARGEINT = pa.decimal128(38, 0)


def int_arith(op: str, a: Value, b: Value, frame: Frame) -> Value:
    """+ - * over integers: BIGINT; a constant past BIGINT's range is the exact LARGEINT value
    (Doris promotes BIGINT + - * BIGINT to LARGEINT; BIGINT * BIGINT always fits). Columns
    past it raise: their batches must keep one type (the shortcut the module docstring names)."""
    a, b = cast_value(a, pa.int64()), cast_value(b, pa.int64())
    try:
        return _CHECKED[op](a, b)
    except pa.ArrowInvalid as e:
        if isinstance(a, pa.Scalar) and isinstance(b, pa.Scalar):
            return pc.cast(decimal_arith(op, a, b, frame), LARGEINT)
        raise ArithmeticOverflow(f"BIGINT {op}") from e


def _divide_float(a: Value, b: Value, frame: Frame) -> Value:
    zero = pc.equal(b, 0.0)
    return pc.if_else(zero, null_of(pa.float64()), pc.divide(a, pc.if_else(zero, 1.0, b)))


def float_mod(a: pa.Array, b: pa.Array) -> pa.Array:
    av, bv = to_numpy(a, 0.0), to_numpy(b, 1.0)
    valid = valid_mask(a) & valid_mask(b) & (bv != 0)
    return from_numpy(np.fmod(av, np.where(bv == 0, 1.0, bv)), valid, pa.float64())


def _int_mod(a: pa.Array, b: pa.Array, t: pa.DataType) -> pa.Array:
    av, bv = to_numpy(a, 0), to_numpy(b, 1)
    valid = valid_mask(a) & valid_mask(b) & (bv != 0)
    safe = np.where(bv == 0, 1, bv)
    # np.fmod keeps the dividend's sign, as C and MySQL do; MIN % -1 is 0.
    with np.errstate(all="ignore"):
        result = np.where(safe == -1, 0, np.fmod(av, safe))
    return from_numpy(result.astype(t.to_pandas_dtype()), valid, t)


def _int_div(a: pa.Array, b: pa.Array) -> pa.Array:
    av, bv = to_numpy(a, 0), to_numpy(b, 1)
    valid = valid_mask(a) & valid_mask(b) & (bv != 0)
    safe = np.where(bv == 0, 1, bv)
    if np.any(valid & (av == np.iinfo(np.int64).min) & (safe == -1)):
        raise ArithmeticOverflow("BIGINT DIV")
    with np.errstate(all="ignore"):
        q = np.floor_divide(av, safe)
        q = q + ((av - q * safe != 0) & ((av < 0) != (safe < 0)))  # floor -> toward zero
    return from_numpy(q, valid, pa.int64())


# -- decimals ----------------------------------------------------------------------------------
def decimal_result_type(op: str, t1: pa.DataType, t2: pa.DataType,
                        increment: int = 4) -> pa.Decimal128Type:
    p1, s1, p2, s2 = t1.precision, t1.scale, t2.precision, t2.scale
    int_digits = max(p1 - s1, p2 - s2)
    if op in "+-":
        p, s = int_digits + max(s1, s2) + 1, max(s1, s2)
        if p > MAX_PRECISION:
            s = MAX_PRECISION - int_digits
    elif op == "*":
        p, s = p1 + p2, s1 + s2
        if p > MAX_PRECISION:
            if p - s < MAX_PRECISION - OVERFLOW_SCALE:
                s = min(s, MAX_PRECISION - (p - s))
            elif s >= OVERFLOW_SCALE:
                s = OVERFLOW_SCALE
    elif op == "/":
        p, s = p1 + s2 + increment, s1 + increment
        if p > MAX_PRECISION:
            if p - s1 < MAX_PRECISION - OVERFLOW_SCALE:
                s = MAX_PRECISION - (p - s1) + increment
            elif s1 >= OVERFLOW_SCALE:
                s = OVERFLOW_SCALE + increment
    else:  # "%"
        p, s = int_digits + max(s1, s2), max(s1, s2)
        if p > MAX_PRECISION:
            s = MAX_PRECISION - int_digits
    p = min(p, MAX_PRECISION)
    s = max(0, min(s, p))
    return pa.decimal128(p, s)


def decimal_arith(op: str, a: Value, b: Value, frame: Frame) -> Value:
    t1, t2 = decimal_of(a), decimal_of(b)
    a, b = cast_value(a, t1), cast_value(b, t2)
    if op == "DIV":
        quotient = decimal_arith("/", a, b, frame)
        return cast_value(pc.trunc(quotient), pa.int64())
    result_type = decimal_result_type(op, t1, t2, frame.ctx.div_precision_increment)
    return on_arrays(lambda x, y: _decimal_kernel(op, x, y, result_type), a, b, n=frame.n)


def _wide(arr: pa.Array) -> pa.Array:
    return arr.cast(pa.decimal256(arr.type.precision, arr.type.scale))


def _shrunk(arr: pa.Array) -> pa.Array:
    """decimal256 with the precision the data actually needs: Arrow sizes intermediate results
    from declared precisions, which for two DECIMAL(38, s) operands can exceed even 76."""
    largest = pc.max(pc.abs(arr)).as_py()
    int_digits = max(largest.adjusted() + 1, 1) if largest else 1
    return arr.cast(pa.decimal256(int_digits + arr.type.scale, arr.type.scale))


def _decimal_kernel(op: str, a: pa.Array, b: pa.Array, out: pa.DataType) -> pa.Array:
    """Compute in decimal128 when Arrow's exact result type fits 38 digits, else in decimal256
    (76 digits, no intermediate overflow); then round/check into `out`. + - * first try the
    unscaled int64 values (decimal_int64.py)."""
    if op in "+-*" and len(a) > 1:
        fast = decimal_int64.arith(op, a, b, out)
        if fast is not None:
            return fast
    zero = None
    try:
        if op in "+-*":
            p1, s1, p2, s2 = a.type.precision, a.type.scale, b.type.precision, b.type.scale
            exact = p1 + p2 + 1 if op == "*" else max(p1 - s1, p2 - s2) + max(s1, s2) + 1
            if exact > 76:
                a, b = _shrunk(a), _shrunk(b)
            elif exact > MAX_PRECISION:
                a, b = _wide(a), _wide(b)
            result = _PLAIN[op](a, b)
        else:
            zero = pc.equal(b, 0)
            if b.type.precision == b.type.scale:  # DECIMAL(p, p) (0.5) cannot hold the 1
                b = b.cast((pa.decimal128 if b.type.precision < MAX_PRECISION
                            else pa.decimal256)(b.type.precision + 1, b.type.scale))
            b = pc.if_else(zero, pa.scalar(Decimal(1), b.type), b)
            kernel = _decimal_divide if op == "/" else _decimal_mod
            try:
                result = kernel(a, b, out.scale, wide=False)
            except (pa.ArrowInvalid, ValueError):  # decimal128 cannot hold the intermediate
                result = kernel(_shrunk(a), _shrunk(b), out.scale, wide=True)
    except pa.ArrowInvalid as e:
        raise ArithmeticOverflow(f"decimal {op}") from e
    if op == "/" and result.type.scale > out.scale:
        result = pc.round(result, out.scale, round_mode="towards_zero")
    fitted = rescale_decimal(result, out, overflow_to_null=False)
    if zero is not None:
        fitted = pc.if_else(zero, pa.scalar(None, out), fitted)
    return fitted


def _decimal_divide(a: pa.Array, b: pa.Array, scale: int, wide: bool) -> pa.Array:
    # Arrow's decimal division yields scale max(4, s1 + p2 - s2 + 1), truncating; pre-scale the
    # dividend so that this is at least the wanted scale.
    p1, s1, p2, s2 = a.type.precision, a.type.scale, b.type.precision, b.type.scale
    extra = max(0, scale - (s1 + p2 - s2 + 1))
    if wide:
        return pc.divide(a.cast(pa.decimal256(min(p1 + extra, 76), s1 + extra)), _wide(b))
    return pc.divide(a.cast(pa.decimal128(p1 + extra, s1 + extra)), b)


def _decimal_mod(a: pa.Array, b: pa.Array, scale: int, wide: bool) -> pa.Array:
    scale = max(a.type.scale, b.type.scale)
    make = pa.decimal256 if wide else pa.decimal128
    wa = a.cast(make(a.type.precision - a.type.scale + scale, scale))
    wb = b.cast(make(b.type.precision - b.type.scale + scale, scale))
    quotient = pc.trunc(pc.divide(wa, wb))
    return pc.subtract(wa, pc.multiply(quotient, wb))


# -- handlers ------------------------------------------------------------------------------------
def _binary(op: str) -> Callable[[exp.Binary, Frame], Value]:
    def handler(node: exp.Binary, frame: Frame) -> Value:
        left, right = node.this, node.expression
        if op in "+-" and isinstance(right, exp.Interval):
            return datetime_functions.add_interval_node(left, right, -1 if op == "-" else 1,
                                                        frame)
        if op == "+" and isinstance(left, exp.Interval):
            return datetime_functions.add_interval_node(right, left, 1, frame)
        if op not in "+-*":
            return arith(op, frame.eval(left), frame.eval(right), frame)
        a, b = frame.eval_raw(left), frame.eval_raw(right)
        fast = _int64_decimal(op, a, b, frame)
        if fast is not None:
            return fast
        return arith(op, _arrow(a), _arrow(b), frame)
    return handler


def _arrow(v):
    return v.to_arrow() if isinstance(v, decimal_int64.Unscaled) else v


def _int64_decimal(op: str, a, b, frame: Frame) -> decimal_int64.Unscaled | None:
    """DECIMAL `a op b` (+ - *) kept as int64 unscaled values when exact (decimal_int64.py);
    None: take `arith`. Same result type as `decimal_arith`."""
    kinds = {kind(a.type), kind(b.type)}
    if "decimal" not in kinds or not kinds <= {"decimal", "int", "bool"} or frame.n <= 1 \
            or (isinstance(a, pa.Scalar) and isinstance(b, pa.Scalar)):
        return None
    x, y = decimal_int64.operand(a), decimal_int64.operand(b)
    if x is None or y is None:
        return None
    out = decimal_result_type(op, x.type, y.type, frame.ctx.div_precision_increment)
    return decimal_int64.arith_unscaled(op, x, y, out)


def eval_neg(node: exp.Neg, frame: Frame) -> Value:
    inner = node.this
    if isinstance(inner, exp.Literal) and not inner.is_string:
        # Type '-9223372036854775808' as the literal it is (BIGINT), not as -(LARGEINT).
        return number_literal("-" + inner.this)
    v = frame.eval_raw(inner)
    if isinstance(v, decimal_int64.Unscaled):
        return decimal_int64.negate(v)
    k = kind(v.type)
    if k == "null":
        return v
    if k in ("int", "bool"):  # Doris's -x is 0 - x: -(BIGINT minimum) is a LARGEINT
        return int_arith("-", pa.scalar(0, pa.int8()), v, frame)
    if k in ("decimal", "float"):
        return pc.negate(v)
    if k == "string":
        return pc.negate(_as_double(v))
    raise ExpressionError(f"Cannot negate a value of type {v.type}")


def _as_bigint(v: Value) -> Value:
    if kind(v.type) in ("float", "decimal", "string"):
        v = pc.round(cast_value(v, pa.float64()), 0, round_mode="half_towards_infinity")
    return cast_value(v, pa.int64())


def _bitwise(fn: Callable[[Value, Value], Value]) -> Callable[[exp.Binary, Frame], Value]:
    def handler(node: exp.Binary, frame: Frame) -> Value:
        return fn(_as_bigint(frame.eval(node.this)), _as_bigint(frame.eval(node.expression)))
    return handler


def eval_bitwise_not(node: exp.BitwiseNot, frame: Frame) -> Value:
    return pc.bit_wise_not(_as_bigint(frame.eval(node.this)))


HANDLERS = {
    exp.Add: _binary("+"), exp.Sub: _binary("-"), exp.Mul: _binary("*"), exp.Div: _binary("/"),
    exp.Mod: _binary("%"), exp.IntDiv: _binary("DIV"), exp.Neg: eval_neg,
    exp.BitwiseAnd: _bitwise(pc.bit_wise_and), exp.BitwiseOr: _bitwise(pc.bit_wise_or),
    exp.BitwiseXor: _bitwise(pc.bit_wise_xor), exp.BitwiseNot: eval_bitwise_not,
    exp.BitwiseLeftShift: _bitwise(pc.shift_left), exp.BitwiseRightShift: _bitwise(pc.shift_right),
}
