"""Math functions.

Typing follows Doris: ABS keeps DECIMAL/DOUBLE and widens integers to BIGINT; ROUND, TRUNCATE,
CEIL and FLOOR keep DOUBLE, keep integers, and give DECIMAL(p, min(s, max(d, 0))) for
DECIMAL(p, s) (d = 0 when omitted); everything transcendental (POW, SQRT, EXP, LN, LOG...,
trigonometry) is DOUBLE; SIGN is TINYINT. ROUND is half away from zero (MySQL's rule for exact
values). Domain errors (SQRT(-1), LN(0), LOG(1, x)) give NULL, as MySQL does. GREATEST/LEAST
return NULL when any argument is NULL and compare in the branches' common type.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.arithmetic import LARGEINT, float_mod
from executor.expressions.casts import cast_value, kind, union_type, widened
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ArithmeticOverflow, ExpressionError
from executor.expressions.vectors import (from_numpy, map_distinct_params, null_of, on_arrays,
                                          scalar_wrap, to_numpy, valid_mask)

DOUBLE = pa.float64()


def _number(v: Value) -> Value:
    """Strings (and temporal values) take part in math as DOUBLE."""
    k = kind(v.type)
    if k in ("int", "decimal", "float"):
        return v
    if k == "bool":
        return cast_value(v, pa.int64())
    if k == "null":
        return null_of(DOUBLE)
    return cast_value(v, DOUBLE)


def _double(v: Value) -> Value:
    return cast_value(v, DOUBLE)


def eval_abs(node: exp.Abs, frame: Frame) -> Value:
    v = _number(frame.eval(node.this))
    if pa.types.is_integer(v.type):
        v = cast_value(v, pa.int64())
        try:
            return pc.abs_checked(v)
        except pa.ArrowInvalid as e:  # the BIGINT minimum: a LARGEINT, as Doris's ABS(BIGINT)
            if isinstance(v, pa.Scalar):  # (a constant only: see arithmetic.int_arith)
                return pc.abs(pc.cast(v, LARGEINT))
            raise ArithmeticOverflow("ABS of BIGINT minimum") from e
    return pc.abs(v)


def _rounding(mode: str) -> Callable[[exp.Func, Frame], Value]:
    """ROUND / TRUNCATE / CEIL / FLOOR with an optional digits argument."""
    def handler(node: exp.Func, frame: Frame) -> Value:
        v = _number(frame.eval(node.this))
        digits_node = node.args.get("decimals")
        digits = cast_value(frame.eval(digits_node), pa.int64()) if digits_node is not None \
            else pa.scalar(0, pa.int64())
        return round_value(v, digits, mode, frame)
    return handler


def round_value(v: Value, digits: Value, mode: str, frame: Frame) -> Value:
    t = v.type
    if pa.types.is_decimal(t):
        if not isinstance(digits, pa.Scalar):
            raise ExpressionError("The digits argument of ROUND on a DECIMAL must be a constant")
        d = digits.as_py()
        if d is None:
            return null_of(t)
        out = pa.decimal128(t.precision, max(0, min(t.scale, d)))
        rounded = pc.round(widened(v), d, round_mode=mode)
        return cast_value(rounded, out)

    def kernel(values: Value, d: int | None) -> Value:
        if d is None:
            return null_of(values.type) if isinstance(values, pa.Scalar) else \
                pa.nulls(len(values), values.type)
        if pa.types.is_integer(values.type) and d >= 0:
            return values
        return pc.round(values, d, round_mode=mode)
    return map_distinct_params(kernel, v, [digits], t, frame.n)


def _unary_double(fn: Callable[[Value], Value],
                  domain: Callable[[Value], Value] | None = None
                  ) -> Callable[[exp.Func, Frame], Value]:
    """A DOUBLE function; rows outside `domain` (and NaN/inf results) become NULL."""
    def handler(node: exp.Func, frame: Frame) -> Value:
        x = _double(frame.eval(node.this))
        if domain is not None:
            x = pc.if_else(domain(x), x, null_of(DOUBLE))
        return _finite(fn(x))
    return handler


def _finite(v: Value) -> Value:
    return pc.if_else(pc.is_finite(v), v, null_of(DOUBLE))


def eval_pow(node: exp.Pow, frame: Frame) -> Value:
    return _finite(pc.power(_double(frame.eval(node.this)), _double(frame.eval(node.expression))))


def eval_log(node: exp.Log, frame: Frame) -> Value:
    """LOG(b, x) (LOG2/LOG10 arrive as LOG(2, x) / LOG(10, x)); LOG(x) arrives as LN."""
    if node.expression is None:
        return _unary_double(pc.ln, lambda x: pc.greater(x, 0.0))(node, frame)
    base, x = _double(frame.eval(node.this)), _double(frame.eval(node.expression))
    x = pc.if_else(pc.greater(x, 0.0), x, null_of(DOUBLE))
    if isinstance(base, pa.Scalar) and base.as_py() in (2.0, 10.0):
        return (pc.log2 if base.as_py() == 2.0 else pc.log10)(x)
    ok = pc.and_(pc.greater(base, 0.0), pc.not_equal(base, 1.0))
    return _finite(pc.divide(pc.ln(x), pc.ln(pc.if_else(ok, base, null_of(DOUBLE)))))


def eval_sign(node: exp.Sign, frame: Frame) -> Value:
    return pc.sign(_double(frame.eval(node.this))).cast(pa.int8())


def eval_pi(node: exp.Pi, frame: Frame) -> Value:
    return pa.scalar(math.pi, DOUBLE)


def eval_rand(node: exp.Rand, frame: Frame) -> Value:
    """rand() / rand(seed): a DOUBLE in [0, 1); random(a, b): a BIGINT in [a, b] (Doris)."""
    seed, upper = node.this, node.args.get("lower")  # sqlglot keeps random(a, b)'s b there
    if seed is not None and upper is not None:
        lo, hi = int(frame.eval(seed).as_py()), int(frame.eval(upper).as_py())
        if lo > hi:
            raise ExpressionError(f"random's first argument {lo} is larger than its second {hi}")
        return pa.array(np.random.default_rng().integers(lo, hi + 1, frame.n), pa.int64())
    rng = np.random.default_rng(None if seed is None else int(frame.eval(seed).as_py() or 0))
    return pa.array(rng.random(frame.n), type=DOUBLE)


def _extreme(fn: Callable[..., Value]) -> Callable[[exp.Func, Frame], Value]:
    def handler(node: exp.Func, frame: Frame) -> Value:
        values = [frame.eval(e) for e in [node.this, *node.expressions]]
        t = union_type(values)
        if pa.types.is_null(t):
            return values[0]
        values = [cast_value(v, t) for v in values]
        return on_arrays(lambda *arrays: fn(*arrays, skip_nulls=False), *values, n=frame.n)
    return handler


def eval_atan2(node: exp.Atan2, frame: Frame) -> Value:
    return _finite(pc.atan2(_double(frame.eval(node.this)), _double(frame.eval(node.expression))))


def _args(node: exp.Anonymous, frame: Frame, count: int) -> list[Value]:
    if len(node.expressions) != count:
        raise ExpressionError(f"Function {str(node.this).upper()} takes {count} argument(s)")
    return [frame.eval(e) for e in node.expressions]


def fn_fmod(node: exp.Anonymous, frame: Frame) -> Value:
    a, b = (_double(v) for v in _args(node, frame, 2))
    return on_arrays(float_mod, a, b, n=frame.n)


def fn_pmod(node: exp.Anonymous, frame: Frame) -> Value:
    """PMOD(a, b): ((a % b) + b) % b, always non-negative for positive b."""
    a, b = (_double(v) for v in _args(node, frame, 2))
    r = on_arrays(float_mod, a, b, n=frame.n)
    return on_arrays(float_mod, pc.add(r, b), b, n=frame.n)


def fn_positive(node: exp.Anonymous, frame: Frame) -> Value:
    return _number(_args(node, frame, 1)[0])


def _round_to_integer(mode: str) -> Callable[[exp.Anonymous, Frame], Value]:
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        v = _number(_args(node, frame, 1)[0])
        return round_value(v, pa.scalar(0, pa.int64()), mode, frame)
    return handler


def eval_negative(node: exp.Negative, frame: Frame) -> Value:
    v = _number(frame.eval(node.this))
    return pc.negate_checked(v) if pa.types.is_integer(v.type) else pc.negate(v)


_cbrt = scalar_wrap(lambda a: from_numpy(np.cbrt(to_numpy(a, 0.0)), valid_mask(a), DOUBLE))


HANDLERS = {
    exp.Abs: eval_abs, exp.Round: _rounding("half_towards_infinity"),
    exp.Trunc: _rounding("towards_zero"), exp.Ceil: _rounding("up"), exp.Floor: _rounding("down"),
    exp.Pow: eval_pow, exp.Sqrt: _unary_double(pc.sqrt, lambda x: pc.greater_equal(x, 0.0)),
    exp.Exp: _unary_double(pc.exp), exp.Ln: _unary_double(pc.ln, lambda x: pc.greater(x, 0.0)),
    exp.Log: eval_log, exp.Sign: eval_sign, exp.Pi: eval_pi, exp.Rand: eval_rand,
    exp.Greatest: _extreme(pc.max_element_wise), exp.Least: _extreme(pc.min_element_wise),
    exp.Sin: _unary_double(pc.sin), exp.Cos: _unary_double(pc.cos), exp.Tan: _unary_double(pc.tan),
    exp.Asin: _unary_double(pc.asin), exp.Acos: _unary_double(pc.acos),
    exp.Atan: _unary_double(pc.atan), exp.Atan2: eval_atan2,
    exp.Degrees: _unary_double(lambda x: pc.multiply(x, 180.0 / math.pi)),
    exp.Radians: _unary_double(lambda x: pc.multiply(x, math.pi / 180.0)),
    exp.Cbrt: _unary_double(_cbrt), exp.Negative: eval_negative,
}
FUNCTIONS = {
    "FMOD": fn_fmod, "PMOD": fn_pmod, "POSITIVE": fn_positive,
    "DCEIL": _round_to_integer("up"), "DFLOOR": _round_to_integer("down"),
    "DROUND": _round_to_integer("half_towards_infinity"),
}
