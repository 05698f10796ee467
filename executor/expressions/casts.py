"""Types and conversions: the Doris type of a value, implicit coercion rules, and CAST.

Values are typed by their Arrow type (the Doris <-> Arrow mapping is `storage.types`):

    bool  BOOLEAN        int8/16/32/64  TINYINT..BIGINT    decimal128(p,s)  DECIMAL / LARGEINT
    float32/64 FLOAT/DOUBLE   string  CHAR/VARCHAR/STRING   date32 DATE   timestamp[us] DATETIME
    null  the type of a bare NULL (adopts the other operand's type)

Coercion rules (MySQL/Doris):
- comparison: string vs number -> DOUBLE; string vs DATE/DATETIME -> DATETIME; DATE vs DATETIME
  -> DATETIME; int vs decimal -> decimal; anything vs float -> DOUBLE.
- union (CASE/IF/COALESCE/GREATEST branches): ints -> widest int; ints+decimals -> decimal with
  the widest integer part and scale; any float -> DOUBLE; DATE+DATETIME -> DATETIME; otherwise a
  string is involved and everything becomes a string.
- an integer promoted to decimal takes Doris's width: TINYINT 3, SMALLINT 5, INT 10, BIGINT 20
  digits; an integer *constant* is typed like a Doris literal, by the smallest int type holding it
  (so `price * 2` is DECIMAL(p+3, s), as in Doris).

CAST follows Doris's non-strict mode: text that is not a number/date gives NULL, out-of-range
values give NULL; numbers to integers truncate toward zero ('1.9' -> 1; text is read as the BE
reads it, no exponent or hex: '1e3' -> NULL); DATE/DATETIME to numbers give yyyymmdd[hhmmss];
DATETIME(n) rounds fractional digits past n half up; CHAR/VARCHAR lengths in CAST are ignored
(no truncation).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import temporal
from executor.expressions.binary_text import binary_to_text, is_binary
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ArithmeticOverflow, ExpressionError, UnsupportedExpression
from executor.expressions.vectors import null_of, scalar_wrap
from executor.expressions.decimal_int64 import retyped
from executor.expressions.decimal_text import decimal_text
from planner.cast_types import cast_kind, cast_type
from storage.types import JSON_ARROW, from_arrow, is_json_type

MAX_PRECISION = 38
TIMESTAMP = temporal.TIMESTAMP
DATE = temporal.DATE
_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 20}
_NUMBER_RE = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
_INTEGER_RE = r"^[+-]?\d+$"
_INT_TEXT_RE = r"^[+-]?\d+(\.\d*)?$"


# -- classification ----------------------------------------------------------------------------
def kind(t: pa.DataType) -> str:
    if pa.types.is_null(t):
        return "null"
    if is_json_type(t):
        return "json"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_decimal(t):
        return "decimal"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "datetime"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list"
    if pa.types.is_map(t):
        return "map"
    if pa.types.is_struct(t):
        return "struct"
    return "other"


NUMERIC = ("bool", "int", "decimal", "float")
TEMPORAL = ("date", "datetime")


def normalize_column(arr: pa.Array) -> pa.Array:
    """Bring a scanned column onto the Arrow types this evaluator works with."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return normalize_column(arr.dictionary_decode())
    if pa.types.is_large_string(t):
        return arr.cast(pa.string())
    if pa.types.is_unsigned_integer(t):  # no unsigned types in Doris: the next wider signed
        wider = {8: pa.int16(), 16: pa.int32(), 32: pa.int64()}.get(t.bit_width)
        return arr.cast(wider or pa.decimal128(20, 0))
    if pa.types.is_date64(t):
        return arr.cast(DATE)
    if pa.types.is_timestamp(t) and t != TIMESTAMP:
        return arr.cast(pa.timestamp("us", t.tz)).cast(TIMESTAMP) if t.tz else arr.cast(TIMESTAMP)
    if pa.types.is_float16(t):
        return arr.cast(pa.float32())
    return arr


def decimal_of(v: Value) -> pa.Decimal128Type:
    """The decimal type an int/bool/decimal value takes when promoted (see module docstring)."""
    t = v.type
    if pa.types.is_decimal(t):
        return t
    if pa.types.is_boolean(t) or pa.types.is_null(t):
        return pa.decimal128(1, 0)
    if isinstance(v, pa.Scalar) and v.is_valid:
        value = abs(int(v.as_py()))
        for bits in (8, 16, 32, 64):
            if value < 2 ** (bits - 1):
                return pa.decimal128(_INT_DIGITS[bits], 0)
    return pa.decimal128(_INT_DIGITS[t.bit_width], 0)


def decimal_type(int_digits: int, scale: int) -> pa.Decimal128Type:
    """DECIMAL(int_digits + scale, scale), capped at 38 digits by giving up scale first."""
    int_digits = min(max(int_digits, 1 if scale == 0 else 0), MAX_PRECISION)
    scale = max(0, min(scale, MAX_PRECISION - int_digits))
    return pa.decimal128(max(int_digits + scale, 1), scale)


def numeric_common(values: Sequence[Value]) -> pa.DataType:
    kinds = {kind(v.type) for v in values} - {"null"}
    if not kinds:
        return pa.null()
    if "float" in kinds:
        types = {v.type for v in values if kind(v.type) != "null"}
        return pa.float32() if types == {pa.float32()} else pa.float64()
    if "decimal" in kinds:
        decs = [decimal_of(v) for v in values if kind(v.type) != "null"]
        return decimal_type(max(d.precision - d.scale for d in decs), max(d.scale for d in decs))
    if kinds == {"bool"}:
        return pa.bool_()
    ints = [v.type for v in values if kind(v.type) == "int"]
    return max(ints, key=lambda t: t.bit_width) if ints else pa.int8()


def comparison_type(a: Value, b: Value) -> pa.DataType:
    """The type both sides of a comparison are cast to."""
    ka, kb = kind(a.type), kind(b.type)
    if ka == "null":
        return b.type
    if kb == "null" or a.type == b.type:
        return a.type
    pair = {ka, kb}
    if pair <= set(TEMPORAL):
        return TIMESTAMP
    if pair & set(TEMPORAL) and "string" in pair:
        return TIMESTAMP
    if pair == {"string"}:
        return pa.string()
    if pair <= set(NUMERIC):
        return numeric_common([a, b])
    return pa.float64()  # string vs number, temporal vs number: MySQL compares as DOUBLE


def union_type(values: Sequence[Value]) -> pa.DataType:
    """The result type of branches that must share one type (CASE, IF, COALESCE...)."""
    present = [v for v in values if kind(v.type) != "null"]
    if not present:
        return pa.null()
    types = {v.type for v in present}
    if len(types) == 1:
        return types.pop()
    kinds = {kind(t) for t in types}
    if kinds <= set(NUMERIC):
        return numeric_common(present)
    if kinds <= set(TEMPORAL):
        return TIMESTAMP
    if kinds == {"list"}:  # [[1], []]: the elements' common type; an empty list's is NULL
        element = union_type([pa.nulls(0, t.value_type) for t in types])
        return pa.list_(element)
    return pa.string()


_MAX_BIGINT = 2 ** 63 - 1


def number_literal(text: str) -> pa.Scalar:
    """Doris literal typing: BIGINT, then LARGEINT (decimal128(38,0)); `1.5` is DECIMAL(2,1);
    exponent forms and decimals wider than 38 digits are DOUBLE."""
    if re.fullmatch(r"-?\d+", text):
        value = int(text)
        if -_MAX_BIGINT - 1 <= value <= _MAX_BIGINT:
            return pa.scalar(value, pa.int64())
        if len(text.lstrip("-0")) <= MAX_PRECISION:
            return pa.scalar(Decimal(value), pa.decimal128(MAX_PRECISION, 0))
        return pa.scalar(float(text), pa.float64())
    if re.fullmatch(r"-?\d*\.\d*", text) and re.search(r"\d", text):
        try:
            value = Decimal(text)
        except InvalidOperation as e:
            raise ExpressionError(f"Invalid number literal {text}") from e
        digits = value.as_tuple().digits
        scale = max(-int(value.as_tuple().exponent), 0)
        precision = max(len(digits), scale, 1)
        if precision <= MAX_PRECISION:
            return pa.scalar(value, pa.decimal128(precision, scale))
    try:
        return pa.scalar(float(text), pa.float64())
    except ValueError as e:
        raise ExpressionError(f"Invalid number literal {text}") from e


# -- conversions ---------------------------------------------------------------------------------
def cast_value(v: Value, target: pa.DataType) -> Value:
    """Convert a value to `target` with Doris's non-strict CAST semantics."""
    source = v.type
    if source == target:
        return v
    if is_binary(source):  # bytes (aes_encrypt, unhex) read as text
        v = binary_to_text(v)
        source = v.type
        if source == target:
            return v
    if pa.types.is_null(source):
        return null_of(target) if isinstance(v, pa.Scalar) else pa.nulls(len(v), target)
    target_kind = kind(target)
    if kind(source) == "json" and target_kind != "json":
        # from JSON: its text (CAST(j AS STRING) is the JSON text, `"abc"` quoted), then the
        # string cast to the target ('100' -> 100, '"abc"' -> NULL)
        from executor.expressions.json_text import json_texts
        return cast_value(json_texts(v), target)
    converter = _CONVERTERS.get(target_kind)
    if converter is None or kind(source) == "other":
        raise UnsupportedExpression(f"CAST from {source} to {target}")
    return scalar_wrap(lambda arr: converter(arr, target))(v)


def scalar_text(arr: pa.Array, _dtype=None) -> pa.Array:
    """CAST(x AS STRING) of a scalar column (nested_text.py's writer for values inside)."""
    return _to_string(arr, pa.string())


def _to_string(arr: pa.Array, target: pa.DataType) -> pa.Array:
    k = kind(arr.type)
    if pa.types.is_nested(arr.type):  # `[1, 2]`, `{"a":1}`, as MySQL shows them (nested_text)
        from executor.expressions.nested_text import format_nested
        from storage.types import from_arrow
        return format_nested(arr, from_arrow(arr.type), scalar_text)
    if k == "bool":
        return pc.if_else(arr, "1", "0")
    if k == "datetime":
        return datetime_to_string(arr)
    if pa.types.is_decimal(arr.type):
        return decimal_text(arr)
    return arr.cast(pa.string())


def datetime_to_string(arr: pa.Array) -> pa.Array:
    """'YYYY-MM-DD HH:MM:SS', with '.ffffff' only where the value has microseconds."""
    base = temporal.canonical_text(arr)
    micros = pc.subtract(arr.cast(pa.int64()),
                         pc.floor_temporal(arr, unit="second").cast(pa.int64()))
    has_fraction = pc.not_equal(micros, 0)
    if not pc.any(has_fraction).as_py():
        return base
    fraction = pc.utf8_lpad(micros.cast(pa.string()), width=6, padding="0")
    return pc.if_else(has_fraction, pc.binary_join_element_wise(base, fraction, "."), base)


def _to_int(arr: pa.Array, target: pa.DataType) -> pa.Array:
    k = kind(arr.type)
    if k == "bool":
        return arr.cast(target)
    if k == "int":
        return _int_in_range(arr, arr, target)
    if k == "float":
        truncated = pc.trunc(arr)
        return _int_in_range(truncated, truncated, target)
    if k == "decimal":
        # Integral after truncation: drop the scale so comparing with the bounds stays within
        # 38 digits even for DECIMAL(38, 37).
        t = arr.type
        make = pa.decimal256 if isinstance(t, pa.Decimal256Type) else pa.decimal128
        truncated = pc.trunc(arr).cast(make(max(t.precision - t.scale, 1), 0))
        return _int_in_range(truncated, truncated, target)
    if k == "string":
        if not pc.any(pc.match_substring(arr, "x", ignore_case=True)).as_py():
            try:  # the common case, plain integers in range: one parse straight to the target
                return arr.cast(target)  # (Arrow also reads '0x10', which Doris refuses)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
            try:  # integers, some out of the target's range: Arrow's parser, then the range check
                exact = arr.cast(pa.int64())
                return _int_in_range(exact, exact, target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        # Doris's BE parser (StringParser::string_to_int): digits, then optionally a '.' and
        # digits that are dropped ('1.9' -> 1, '3.' -> 3), surrounding whitespace; no exponent,
        # hex or bare fraction ('1e3', '0x10', '.5' -> NULL)
        text = pc.utf8_trim_whitespace(arr)
        is_int = pc.and_(pc.match_substring_regex(text, _INT_TEXT_RE),
                         pc.less_equal(pc.utf8_length(text), MAX_PRECISION))
        whole = pc.replace_substring_regex(pc.replace_substring_regex(text, r"^\+", ""),
                                           r"\.\d*$", "")
        return _to_int(pc.if_else(is_int, whole, None).cast(pa.decimal128(MAX_PRECISION, 0)),
                       target)
    if k in TEMPORAL:
        return _to_int(temporal_to_number(arr), target)
    raise UnsupportedExpression(f"CAST from {arr.type} to {target}")


def _int_in_range(values: pa.Array, compare: pa.Array, target: pa.DataType) -> pa.Array:
    """Cast to an int type, nulling values outside its range (and NaN)."""
    info = np.iinfo(target.to_pandas_dtype())
    if pa.types.is_floating(compare.type):
        low, high = pa.scalar(float(info.min)), pa.scalar(float(info.max) + 1.0)
        ok = pc.and_(pc.greater_equal(compare, low), pc.less(compare, high))
    elif pa.types.is_decimal(compare.type):
        ok = pc.and_(pc.greater_equal(compare, pa.scalar(Decimal(int(info.min)))),
                     pc.less_equal(compare, pa.scalar(Decimal(int(info.max)))))
    elif compare.type.bit_width <= target.bit_width:
        return values.cast(target)
    else:
        if values is compare:
            try:  # all in range (the usual case): one checked cast
                return values.cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        ok = pc.and_(pc.greater_equal(compare, int(info.min)), pc.less_equal(compare, int(info.max)))
    kept = pc.if_else(ok, values, null_of(values.type))
    return kept.cast(target, safe=False)


def _to_float(arr: pa.Array, target: pa.DataType) -> pa.Array:
    k = kind(arr.type)
    if k in ("bool", "int"):  # beyond 2^53 the nearest double, as Doris (not an error)
        return arr.cast(target, safe=False)
    if k == "float":
        return arr.cast(target)
    if k == "decimal":
        # Arrow's decimal->double conversion is inexact (-1.7 -> -1.7000000000000002); going
        # through the decimal's text gives the correctly rounded double.
        return arr.cast(pa.string()).cast(pa.float64()).cast(target)
    if k == "string":
        text = pc.utf8_trim_whitespace(arr)
        ok = pc.match_substring_regex(text, _NUMBER_RE)
        return pc.if_else(ok, text, None).cast(pa.float64()).cast(target)
    if k in TEMPORAL:
        return temporal_to_number(arr).cast(target)
    raise UnsupportedExpression(f"CAST from {arr.type} to {target}")


def _to_decimal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    k = kind(arr.type)
    if k == "bool":
        arr, k = arr.cast(pa.int8()), "int"
    if k == "int":
        arr, k = arr.cast(decimal_of(arr)), "decimal"
    if k in TEMPORAL:
        arr, k = temporal_to_number(arr).cast(pa.decimal128(20, 0)), "decimal"
    if k == "string":
        try:  # the common case, text that fits the target exactly: Arrow's parser
            return arr.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        text = pc.utf8_trim_whitespace(arr)
        text = pc.if_else(pc.match_substring_regex(text, _NUMBER_RE), text, None)
        try:
            arr, k = text.cast(pa.decimal256(76, MAX_PRECISION)), "decimal"
        except pa.ArrowInvalid:  # more than 38 digits on either side: go through DOUBLE
            arr, k = text.cast(pa.float64()), "float"
    if k == "float":
        rounded = pc.round(arr, target.scale, round_mode="half_towards_infinity")
        bound = float(10 ** (target.precision - target.scale))
        ok = pc.and_(pc.less(pc.abs(rounded), bound), pc.is_finite(rounded))
        return pc.if_else(ok, rounded, None).cast(target, safe=False)
    if k == "decimal":
        return rescale_decimal(arr, target, overflow_to_null=True)
    raise UnsupportedExpression(f"CAST from {arr.type} to {target}")


def widened(arr: Value) -> Value:
    """A decimal with one more integer digit, so that rounding up (9.99 -> 10.0, 0.5 -> 1)
    fits: Arrow's round keeps its input's precision and fails otherwise."""
    t = arr.type
    if pa.types.is_decimal128(t) and t.precision < MAX_PRECISION:
        return arr.cast(pa.decimal128(t.precision + 1, t.scale))
    if t.precision < 76:
        return arr.cast(pa.decimal256(t.precision + 1, t.scale))
    return arr


def rescale_decimal(arr: pa.Array, target: pa.DataType, overflow_to_null: bool) -> pa.Array:
    """Round (half away from zero) to the target scale and check the target precision."""
    source = arr.type
    if source.scale > target.scale:
        arr = pc.round(widened(arr), target.scale, round_mode="half_towards_infinity")
    int_digits = target.precision - target.scale
    if source.precision - source.scale > int_digits or source.scale > target.scale:
        scale = arr.type.scale
        if max(arr.type.precision - scale, int_digits + 1) + scale <= MAX_PRECISION:
            bound = pa.scalar(Decimal(10) ** int_digits, pa.decimal128(int_digits + 1, 0))
            ok = pc.and_(pc.less(arr, bound), pc.greater(arr, pc.negate(bound)))
        else:
            bound = pa.scalar(Decimal(10) ** int_digits, pa.decimal256(int_digits + 1, 0))
            wide = arr.cast(pa.decimal256(76, scale))
            if scale > target.scale:  # rounded above: only zero digits go, and the comparison
                # with the bound needs no more than 76 digits (LARGEINT from text: 38 + 38)
                wide = wide.cast(pa.decimal256(76 - scale + target.scale, target.scale),
                                 safe=False)
            ok = pc.less(pc.abs(wide), bound)
        if pc.all(ok).as_py() is False:  # None: no non-null values to check
            if not overflow_to_null:
                raise ArithmeticOverflow(f"value does not fit in decimal({target.precision},"
                                         f"{target.scale})")
            arr = pc.if_else(ok, arr, None)
    # Values were rounded to the target scale and range-checked above, so this cast only drops
    # zero digits (or only relabels the precision: then the bytes stay as they are).
    same_bytes = retyped(arr, target)
    return same_bytes if same_bytes is not None else arr.cast(target, safe=False)


def _to_bool(arr: pa.Array, target: pa.DataType) -> pa.Array:
    k = kind(arr.type)
    if k in ("int", "float", "decimal"):
        return pc.not_equal(arr, 0)
    if k == "string":
        text = pc.utf8_lower(pc.utf8_trim_whitespace(arr))
        named = pc.if_else(pc.equal(text, "true"), True,
                           pc.if_else(pc.equal(text, "false"), False, None))
        return pc.coalesce(named, pc.not_equal(_to_float(arr, pa.float64()), 0.0))
    if k in TEMPORAL:
        return pc.if_else(pc.is_valid(arr), True, None)
    raise UnsupportedExpression(f"CAST from {arr.type} to BOOLEAN")


def _to_temporal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    k = kind(arr.type)
    if k == "string":
        ts = temporal.parse_datetime(arr)
    elif k in TEMPORAL:
        ts = arr
    elif k in ("int", "decimal", "float", "bool"):
        # MySQL/Doris read numbers as YYYYMMDD or YYYYMMDDHHMMSS.
        ts = temporal.parse_datetime(_to_int(arr, pa.int64()).cast(pa.string()))
    else:
        raise UnsupportedExpression(f"CAST from {arr.type} to {target}")
    parts = temporal.split(ts)
    return temporal.from_days_micros(parts.days, parts.micros, parts.valid,
                                     as_date=pa.types.is_date32(target))


def temporal_to_number(arr: pa.Array) -> pa.Array:
    """DATE -> yyyymmdd, DATETIME -> yyyymmddhhmmss (as int64), as MySQL converts them."""
    p = temporal.split(arr)
    number = p.year * 10_000 + p.month * 100 + p.day
    if pa.types.is_timestamp(arr.type):
        number = number * 1_000_000 + p.hour * 10_000 + p.minute * 100 + p.second
    return pa.array(number, type=pa.int64(), mask=None if p.valid.all() else ~p.valid)


def _to_list(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """CAST to ARRAY<T>: from array text (`'[1, 2]'`, array_text.py) or another ARRAY, each
    element cast to T non-strictly (an element that does not convert is NULL)."""
    from executor.expressions.array_text import parse_array_text
    from executor.expressions.list_layout import build, parts
    from storage.types import from_arrow
    k = kind(arr.type)
    if k == "string":
        arr, _ = parse_array_text(arr, from_arrow(target.value_type))
    elif k != "list":
        raise ExpressionError(f"can not cast from origin type {from_arrow(arr.type).desc_sql()}"
                              f" to target type={from_arrow(target).desc_sql()}")
    offsets, values, valid = parts(arr)
    return build(offsets, to_array_value(cast_value(values, target.value_type)), valid)


def _to_nested(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """CAST to MAP<K, V> / STRUCT<...>: from their text (`'{"a":1}'`, nested_parse.py) or a
    value of the same kind, each child cast non-strictly (nested_casts.py)."""
    from executor.expressions import nested_casts
    from executor.expressions.nested_parse import parse_nested_text
    from storage.types import from_arrow
    dtype, k = from_arrow(target), kind(arr.type)
    if k == "string":
        arr, _ = parse_nested_text(arr, dtype)
    elif k != kind(target) or k == "struct" and arr.type.num_fields != target.num_fields:
        raise ExpressionError(f"can not cast from origin type {from_arrow(arr.type).desc_sql()}"
                              f" to target type={dtype.desc_sql()}")
    convert = (lambda a, t: to_array_value(cast_value(a, t.arrow())))
    if dtype.is_map:
        return nested_casts.convert_map(arr, dtype, convert)
    return nested_casts.convert_struct(arr, dtype, convert)


def to_array_value(v: Value) -> pa.Array:
    return v if not isinstance(v, pa.Scalar) else pa.array([v.as_py()], v.type)


def _to_json(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """CAST to JSON: text parsed and normalized (not JSON: NULL, json_text.py); a number its
    JSON number, a boolean true / false."""
    from executor.expressions.json_text import parse_json_text
    k = kind(arr.type)
    if k == "bool":
        arr = pc.if_else(arr, "true", "false")
    elif k in ("int", "float", "decimal"):
        arr = arr.cast(pa.string())
    elif k != "string":
        raise ExpressionError(f"can not cast from origin type {from_arrow(arr.type).desc_sql()}"
                              f" to target type=JSON")
    return parse_json_text(arr)[0]


_CONVERTERS: dict[str, Callable[[pa.Array, pa.DataType], pa.Array]] = {
    "string": _to_string, "int": _to_int, "float": _to_float, "decimal": _to_decimal,
    "bool": _to_bool, "date": _to_temporal, "datetime": _to_temporal, "list": _to_list,
    "json": _to_json, "map": _to_nested, "struct": _to_nested,
}


def truthy(v: Value) -> Value:
    """A value used as a condition (WHERE, AND, IF): numbers are true when non-zero."""
    k = kind(v.type)
    if k == "bool":
        return v
    if k == "null":
        return null_of(pa.bool_())
    if k in ("int", "float", "decimal"):
        return pc.not_equal(v, 0)
    if k == "string":
        return pc.not_equal(cast_value(v, pa.float64()), 0.0)
    if k in TEMPORAL:
        return pc.if_else(pc.is_valid(v), True, None) if isinstance(v, pa.Array) else \
            pa.scalar(v.is_valid or None, pa.bool_())
    raise ExpressionError(f"Cannot use a value of type {v.type} as a condition")


# -- sqlglot types -> Arrow ------------------------------------------------------------------------
_T = exp.DataType.Type


def arrow_type_of(dt: exp.DataType) -> pa.DataType | None:
    """The Arrow type of a CAST target; None for CONVERT(x USING charset) (identity)."""
    if dt.this == _T.CHARACTER_SET:
        return None
    if dt.this in (_T.JSON, _T.JSONB):
        return JSON_ARROW
    if dt.this == _T.ARRAY:  # CAST(x AS ARRAY<T>)
        element = arrow_type_of(dt.expressions[0]) if dt.expressions else pa.string()
        return pa.list_(element)
    if dt.this == _T.MAP and len(dt.expressions) == 2:  # CAST(x AS MAP<K, V>)
        return pa.map_(*(arrow_type_of(e) for e in dt.expressions))
    if dt.this == _T.STRUCT:  # CAST(x AS STRUCT<f1:T1, ...>): ColumnDefs
        return pa.struct([pa.field(e.name, arrow_type_of(e.args["kind"]))
                          for e in dt.expressions])
    if cast_kind(dt) is None:
        raise UnsupportedExpression(f"CAST to {dt.sql(dialect='doris')}")
    try:  # CHAR/VARCHAR lengths are not enforced by CAST (see module docstring)
        return cast_type(dt).arrow()
    except ValueError as e:
        raise ExpressionError(str(e)) from e


def eval_cast(node: exp.Cast, frame: Frame) -> Value:
    target = arrow_type_of(node.args["to"])
    value = frame.eval(node.this)
    if target is None:
        return value
    if node.args["to"].this == _T.INT128:
        value = _integral(value)
    result = cast_value(value, target)
    if kind(target) == "datetime":
        result = _to_scale(result, cast_type(node.args["to"]).scale)
    return result


def _to_scale(v: Value, scale: int) -> Value:
    """A DATETIME(scale) CAST's result: fractional digits past the scale rounded half up, as
    Doris rounds them from text and from a wider DATETIME ('...12.5' AS DATETIME is '...13')."""
    if scale >= 6:
        return v
    return scalar_wrap(lambda arr: pc.round_temporal(arr, multiple=10 ** (6 - scale),
                                                      unit="microsecond"))(v)


def _integral(v: Value) -> Value:
    """A CAST to LARGEINT's operand with its fraction dropped toward zero, as every integer
    CAST does ('12.7' -> 12); LARGEINT is held as DECIMAL(38, 0), whose own CAST rounds."""
    k = kind(v.type)
    if k == "string":
        v, k = cast_value(v, pa.decimal256(76, MAX_PRECISION)), "decimal"
    return pc.trunc(v) if k in ("decimal", "float") else v


def eval_try_cast(node: exp.TryCast, frame: Frame) -> Value:
    return eval_cast(node, frame)  # casts are already non-strict


HANDLERS = {exp.Cast: eval_cast, exp.TryCast: eval_try_cast}


def coerce(values: Sequence[Value], target: pa.DataType) -> list[Value]:
    return [cast_value(v, target) for v in values]
