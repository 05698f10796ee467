"""Typed values: converting text and Arrow arrays into a column's Doris type, strictly.

Two jobs, one set of rules:
- `parse_value(dtype, text)`: a single value written in DDL (partition bounds, defaults) as the
  Python value it denotes, for comparisons in the catalog.
- `coerce_array(array, dtype, nullable, column)`: a whole column of a load (INSERT VALUES,
  INSERT SELECT) cast into the column's Arrow type in strict mode (an ARRAY element by element,
  array text parsed first): a value that does not fit
  (bad text, overflow, too long a string, NULL into NOT NULL) fails the load with a message that
  names the column and the value, and nothing is written. Vectorised: pyarrow casts and checks.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal, InvalidOperation

import pyarrow as pa
import pyarrow.compute as pc

from catalog.errors import DataQualityError, DdlError
from executor.expressions import nested_casts
from executor.expressions.array_text import parse_array_text
from executor.expressions.casts import cast_value, widened
from executor.expressions.json_text import parse_json_text
from executor.expressions.variant_text import to_variant
from executor.expressions.list_layout import build, parts
from executor.expressions.nested_parse import parse_nested_text
from executor.expressions.temporal import parse_datetime  # the one string -> date parser
from storage.types import DataType, is_json_type

INT_RANGE = {
    "TINYINT": (-(2**7), 2**7 - 1), "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1), "BIGINT": (-(2**63), 2**63 - 1),
    "LARGEINT": (-(10**38) + 1, 10**38 - 1),
}


def parse_value(dtype: DataType, text: str) -> object:
    """The Python value of `text` as a `dtype` value (DDL literals); DdlError if it does not fit."""
    try:
        if dtype.is_integer:
            v = int(text)
            lo, hi = INT_RANGE[dtype.kind]
            if not lo <= v <= hi:
                raise ValueError
            return v
        if dtype.kind == "BOOLEAN":
            low = text.strip().lower()
            if low in ("true", "1"):
                return True
            if low in ("false", "0"):
                return False
            raise ValueError
        if dtype.is_float:
            return float(text)
        if dtype.kind == "DECIMAL":
            return Decimal(text)
        if dtype.kind == "DATE":
            return dt.date.fromisoformat(text.strip()[:10])
        if dtype.kind == "DATETIME":
            s = text.strip()
            return dt.datetime.fromisoformat(s) if len(s) > 10 else dt.datetime.fromisoformat(s + " 00:00:00")
        return text
    except (ValueError, InvalidOperation):
        raise DdlError(f"Invalid {dtype.sql()} value: '{text}'") from None


def format_value(dtype: DataType, value: object) -> str:
    """Doris's text for a typed DDL value (partition keys in SHOW PARTITIONS / SHOW CREATE)."""
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _fail(column: str, dtype: DataType, detail: str) -> DataQualityError:
    return DataQualityError(
        f"Insert has filtered data in strict mode. First error: column [{column}] "
        f"value {detail} is invalid for type {dtype.sql()}")


def _first_bad(array: pa.Array, bad: pa.Array) -> str:
    idx = pc.index(bad, True).as_py()
    return _sql_text(array[idx].as_py() if idx >= 0 else None)


def _sql_text(value: object) -> str:
    """A value in an error message as SQL writes it (not Python's repr: Decimal('1.5'))."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, (Decimal, dt.date)):
        return str(value)
    return "NULL" if value is None else repr(value)


def coerce_array(array: pa.Array | pa.ChunkedArray, dtype: DataType, nullable: bool,
                 column: str) -> pa.Array:
    """Cast `array` to `dtype` strictly; raise DataQualityError naming the first bad value."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    target = dtype.arrow()
    src = array.type
    if pa.types.is_null(src):
        array = pa.nulls(len(array), target)
    elif dtype.is_array:
        array = _coerce_list(array, dtype, column)
    elif dtype.is_map or dtype.is_struct:
        array = _coerce_nested(array, dtype, column)
    elif dtype.is_json:
        array = _coerce_json(array, dtype, column)
    elif src != target:
        array = _cast(array, dtype, column)
    if dtype.kind in ("CHAR", "VARCHAR"):
        too_long = pc.greater(pc.binary_length(array), dtype.length)
        if pc.any(too_long).as_py():
            raise _fail(column, dtype, f"{_first_bad(array, too_long)} (length exceeds {dtype.length} bytes)")
    if not nullable and array.null_count:
        raise DataQualityError(
            f"Insert has filtered data in strict mode. First error: null value for not null column [{column}]")
    return array


def _coerce_json(array: pa.Array, dtype: DataType, column: str) -> pa.Array:
    """A JSON column's values: text parsed and normalized (json_text.py); text that is not
    JSON fails the load as a bad scalar does (a non-strict INSERT filters those rows first,
    server/handlers/insert.py). A VARIANT column takes any value: its canonical text, text
    that is not JSON a string value (variant_text.py)."""
    if dtype.is_variant:
        return to_variant(array)
    if is_json_type(array.type):
        return array
    parsed, bad = parse_json_text(array) if pa.types.is_string(array.type) else \
        (cast_value(array, dtype.arrow()), None)
    if bad is not None and bad.any():
        raise _fail(column, dtype, f"{_first_bad(array, pa.array(bad))}")
    return parsed


def _coerce_list(array: pa.Array, dtype: DataType, column: str) -> pa.Array:
    """An ARRAY column's values: array text parsed (`'[1, 2]'`), then every element coerced
    strictly to the element type (a bad element fails the load, as a bad scalar does)."""
    src = array.type
    if pa.types.is_string(src) or pa.types.is_large_string(src):
        parsed, bad = parse_array_text(array, dtype.element)
        if bad.any():
            raise _fail(column, dtype, f"({_first_bad(array, pa.array(bad))})")
        array = parsed
    elif not (pa.types.is_list(src) or pa.types.is_large_list(src)):
        raise _fail(column, dtype, f"{_first_bad(array, pc.is_valid(array))}")
    if array.type == dtype.arrow():
        return array
    offsets, values, valid = parts(array)
    return build(offsets, coerce_array(values, dtype.element, True, column), valid)


def _coerce_nested(array: pa.Array, dtype: DataType, column: str) -> pa.Array:
    """A MAP / STRUCT column's values: their text read (`'{"a":1}'`, nested_parse.py), then
    every key, value and field coerced strictly (a bad one fails the load); a STRUCT of
    another field count, or a value of another kind, fails too."""
    src = array.type
    if pa.types.is_string(src) or pa.types.is_large_string(src):
        parsed, bad = parse_nested_text(array, dtype)
        if bad.any():
            raise _fail(column, dtype, f"({_first_bad(array, pa.array(bad))})")
        array = parsed
    elif pa.types.is_map(src) != dtype.is_map or pa.types.is_struct(src) != dtype.is_struct:
        raise _fail(column, dtype, f"{_first_bad(array, pc.is_valid(array))}")
    if array.type == dtype.arrow():
        return array
    convert = (lambda a, t: coerce_array(a, t, True, column))
    if dtype.is_map:
        return nested_casts.convert_map(array, dtype, convert)
    try:
        return nested_casts.convert_struct(array, dtype, convert)
    except ValueError as e:
        raise _fail(column, dtype, f"{_first_bad(array, pc.is_valid(array))} ({e})") from None


HALF_UP = "half_towards_infinity"  # Doris rounds a value's dropped digits half away from zero


def _cast(array: pa.Array, dtype: DataType, column: str) -> pa.Array:
    target = dtype.arrow()
    src = array.type
    try:
        if (pa.types.is_string(src) or pa.types.is_large_string(src)) and \
                dtype.kind in ("DATE", "DATETIME"):
            return _parse_temporal(array, dtype, column)
        if pa.types.is_integer(src) and dtype.kind in ("DATE", "DATETIME"):
            # 20240101 as Doris casts an integer to a date: its digits, read as text
            return _parse_temporal(pc.cast(array, pa.string()), dtype, column)
        if pa.types.is_string(src) or pa.types.is_large_string(src):
            array = _prepare_text(array, dtype)
            if pa.types.is_decimal(target):
                # LARGEINT (precision 0 here) has 38 integer digits; the text's digits past the
                # wide decimal's integer digits would wrap silently in Arrow's cast: refused
                int_digits = (dtype.precision - dtype.scale) if dtype.precision else 38
                wide_scale = min(dtype.scale + 6, 38 - max(int_digits, 1))
                too_long = rf"^\s*[-+]?0*[1-9]\d{{{38 - wide_scale},}}"
                if pc.any(pc.match_substring_regex(array, too_long)).as_py():
                    raise pa.ArrowInvalid(f"Decimal value does not fit in precision {38}")
                wide = pc.cast(array, pa.decimal128(38, wide_scale))
                return pc.cast(pc.round(wide, dtype.scale, round_mode=HALF_UP), target)
            if dtype.kind == "BOOLEAN":
                low = pc.utf8_lower(array)
                return pc.if_else(pc.is_in(low, pa.array(["1", "true"])), True,
                                  pc.if_else(pc.is_in(low, pa.array(["0", "false"])), False,
                                             pc.cast(low, pa.bool_())))
        if pa.types.is_decimal(target) and pa.types.is_integer(src):
            # via a decimal wide enough for any integer at the target's scale (Arrow refuses
            # int64 -> decimal(10, 2) outright); the narrowing cast then checks each value
            wide = pa.decimal128(38, dtype.scale) if dtype.scale <= 18 else \
                pa.decimal256(76, dtype.scale)
            return pc.cast(pc.cast(array, wide), target)
        if pa.types.is_decimal(target) and (pa.types.is_decimal(src) or pa.types.is_floating(src)):
            if pa.types.is_floating(src):
                array = pc.cast(pc.round(array, dtype.scale, round_mode=HALF_UP),
                                pa.decimal128(38, dtype.scale))
            elif src.scale > dtype.scale:
                array = pc.round(widened(array), dtype.scale, round_mode=HALF_UP)  # 9.995
            return pc.cast(array, target)
        if pa.types.is_floating(src) and dtype.is_integer:
            array = pc.round(array)
        if pa.types.is_floating(target) and pa.types.is_decimal(src):
            # Arrow's decimal -> float cast scales in floating point (6.28 became 6.2799997
            # in a FLOAT, 2.718281828 2.7182818280000003): through the text, correctly rounded
            return pc.cast(pc.cast(array, pa.string()), target)
        if pa.types.is_timestamp(target) and pa.types.is_date(src):
            return pc.cast(array, target)
        if pa.types.is_date(target) and pa.types.is_timestamp(src):
            return pc.cast(pc.floor_temporal(array, unit="day"), target, safe=False)
        if pa.types.is_string(target) and not pa.types.is_string(src):
            return _to_text(array)
        return pc.cast(array, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise _fail(column, dtype, _describe_cast_error(array, dtype, e)) from None


def _parse_temporal(array: pa.Array, dtype: DataType, column: str) -> pa.Array:
    """Text as Doris's string -> DATE/DATETIME cast reads it ('2024-1-2', '2024/01/02 3:4:5',
    '20240102', '240102', ...; the parser is the executor's CAST); a value it cannot read fails
    the load (strict mode). A DATE keeps the date part of a datetime text."""
    parsed = parse_datetime(array)
    bad = pc.and_(pc.is_null(parsed), pc.is_valid(array))
    if pc.any(bad).as_py():
        raise _fail(column, dtype, f"({_first_bad(array, bad)})")
    if dtype.kind == "DATE":
        return pc.cast(pc.floor_temporal(parsed, unit="day"), dtype.arrow(), safe=False)
    if dtype.scale < 6:  # fractional digits past the column's scale are rounded off
        parsed = pc.round_temporal(parsed, multiple=10 ** (6 - dtype.scale), unit="microsecond")
    return pc.cast(parsed, dtype.arrow())


def _prepare_text(array: pa.Array, dtype: DataType) -> pa.Array:
    array = pc.utf8_trim_whitespace(array)
    if dtype.kind == "DATETIME":
        # Doris accepts a bare date for a DATETIME: it means midnight.
        is_date = pc.equal(pc.utf8_length(array), 10)
        array = pc.if_else(is_date, pc.binary_join_element_wise(array, " 00:00:00", ""), array)
    if dtype.kind == "DATE":
        # '2017-10-01 00:00:00' is accepted for a DATE column: keep the date part.
        array = pc.utf8_slice_codeunits(array, 0, 10)
    return array


def _to_text(array: pa.Array) -> pa.Array:
    if pa.types.is_timestamp(array.type):
        return pc.strftime(array, "%Y-%m-%d %H:%M:%S")
    return pc.cast(array, pa.string())


def _describe_cast_error(array: pa.Array, dtype: DataType, err: Exception) -> str:
    """The first value that does not cast, as Doris names it; found by halving the array
    (log2(n) casts on the error path), else pyarrow's own message."""
    errors = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)
    target = dtype.arrow()
    try:
        pc.cast(array, target)
    except errors:
        lo, n = 0, len(array)
        while n > 1:
            half = n // 2
            try:
                pc.cast(array.slice(lo, half), target)
                lo, n = lo + half, n - half
            except errors:
                n = half
        return _sql_text(array[lo].as_py())
    return f"({str(err).splitlines()[0]})"
