"""Date and time functions (DATE -> date32, DATETIME -> timestamp[us], naive local time).

- NOW()/CURRENT_TIMESTAMP/LOCALTIME[STAMP] are `ctx.now` (fixed per statement, truncated to
  seconds unless a precision is given); CURDATE()/CURRENT_DATE its date; CURTIME() a 'HH:MM:SS'
  string (no TIME type here); UTC_TIMESTAMP() `ctx.now` moved from `ctx.time_zone` to UTC.
- Parts: YEAR, DAYOFYEAR -> SMALLINT; MONTH, DAY, QUARTER, DAYOFWEEK (1 = Sunday), WEEKDAY
  (0 = Monday), WEEKOFYEAR (ISO), WEEK(d[, mode 0-3]), HOUR, MINUTE, SECOND -> TINYINT;
  MICROSECOND -> INT. Strings are parsed as DATETIME first.
- DATE_ADD/DATE_SUB/ADDDATE/SUBDATE/TIMESTAMPADD/`d +- INTERVAL n unit`/DAYS_ADD...: units
  MICROSECOND..YEAR plus the MySQL compound units ('1:30' HOUR_MINUTE, constant strings only).
  MONTH/QUARTER/YEAR clamp to the month's last day (2020-01-31 + 1 month = 2020-02-29). A DATE
  plus DAY/WEEK/MONTH/QUARTER/YEAR stays DATE, anything else gives DATETIME; a string literal
  without a time part counts as a DATE. Results outside 0000-01-01..9999-12-31 are NULL.
- DATEDIFF(a, b) = days(a) - days(b) as INT; TIMESTAMPDIFF(unit, a, b) = b - a in whole units
  (months counted as MySQL does, by calendar with day/time carry) as BIGINT; YEARS_DIFF(a, b)
  ... SECONDS_DIFF are a - b.
- DATE_FORMAT, STR_TO_DATE, FROM_UNIXTIME(n, fmt): sqlglot rewrites MySQL formats into its own
  strftime dialect; `mysql_format` maps them back and `temporal` implements MySQL's specifiers.
- UNIX_TIMESTAMP([x[, fmt]]) reads x in `ctx.time_zone` and returns INT seconds (0 outside
  1970..2038, as Doris); FROM_UNIXTIME(n) formats in `ctx.time_zone` and returns a string.
- DATE_TRUNC(x, unit) (either argument order) floors to second..year (weeks start Monday).
"""

from __future__ import annotations

import re
from datetime import timezone
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp
from sqlglot.dialects.doris import Doris

from executor.expressions import temporal
from executor.expressions.casts import TEMPORAL, cast_value, kind
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError, UnsupportedExpression
from executor.expressions.time_zones import convert_tz_zone
from executor.expressions.temporal import DATE, TIMESTAMP, US_PER_DAY, US_PER_SECOND, Parts
from executor.expressions.vectors import (from_numpy, map_distinct, map_distinct_params, null_of,
                                          on_arrays, to_numpy, valid_mask)

_MONTH_UNITS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
_FIXED_UNITS = {"MICROSECOND": 1, "MILLISECOND": 1000, "SECOND": US_PER_SECOND, "MINUTE": 60 * US_PER_SECOND,
                "HOUR": 3600 * US_PER_SECOND, "DAY": US_PER_DAY, "WEEK": 7 * US_PER_DAY}
_DATE_UNITS = {"DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "YEAR_MONTH"}
# Compound units: the fields of the constant string, most significant first.
_COMPOUND = {
    "YEAR_MONTH": ["YEAR", "MONTH"], "DAY_HOUR": ["DAY", "HOUR"],
    "DAY_MINUTE": ["DAY", "HOUR", "MINUTE"], "DAY_SECOND": ["DAY", "HOUR", "MINUTE", "SECOND"],
    "HOUR_MINUTE": ["HOUR", "MINUTE"], "HOUR_SECOND": ["HOUR", "MINUTE", "SECOND"],
    "MINUTE_SECOND": ["MINUTE", "SECOND"],
}
_SPAN_DAYS = temporal.MAX_DAY - temporal.MIN_DAY + 1


# sqlglot's strftime tokens -> MySQL's, from the dialect's own MySQL -> strftime table (single
# tokens only: '%T' and '%r' come back as their expansions, which mean the same).
_TO_MYSQL = {v: k for k, v in sorted(Doris.TIME_MAPPING.items(), reverse=True)
             if re.fullmatch(r"%-?[A-Za-z]", v)}


# The Java-style formats Doris's date functions also take, whole (BE: DateFormat's
# yyyyMMdd, yyyy-MM-dd, yyyy-MM-dd HH:mm:ss, ... fast paths)
_JAVA_FORMATS = {"yyyyMMdd": "%Y%m%d", "yyyy-MM-dd": "%Y-%m-%d",
                 "yyyy-MM-dd HH:mm:ss": "%Y-%m-%d %H:%i:%s", "yyyy-MM-dd HH:mm": "%Y-%m-%d %H:%i",
                 "yyyy-MM": "%Y-%m", "yyyyMM": "%Y%m", "yyyy": "%Y"}


def mysql_format(fmt: str) -> str:
    """Undo sqlglot's MySQL -> strftime rewrite of a format string (token by token; sqlglot's
    own inverse `format_time` drops mappings after a failed multi-token match, e.g. '%H:%M');
    Doris's Java-style formats as their MySQL ones."""
    if fmt in _JAVA_FORMATS:
        return _JAVA_FORMATS[fmt]
    return re.sub(r"%%|%-?[A-Za-z]", lambda m: _TO_MYSQL.get(m.group(0), m.group(0)), fmt)


# -- coercion to temporal values -----------------------------------------------------------------
def to_temporal(v: Value) -> Value:
    """DATE/DATETIME pass through; a string literal without a time part is a DATE; other
    strings and numbers become DATETIME."""
    k = kind(v.type)
    if k in TEMPORAL:
        return v
    if k == "null":
        return null_of(TIMESTAMP)
    if k == "string" and isinstance(v, pa.Scalar) and v.is_valid and \
            re.fullmatch(r"\s*\d{4}[-/.]?\d{1,2}[-/.]?\d{1,2}\s*", v.as_py()):
        return cast_value(v, DATE)
    return cast_value(v, TIMESTAMP)


def _parts_fn(fn: Callable[[Parts], np.ndarray], out: pa.DataType) -> Callable[[Value, Frame], Value]:
    def apply(v: Value, frame: Frame) -> Value:
        def kernel(arr: pa.Array) -> pa.Array:
            parts = temporal.split(arr)
            return from_numpy(fn(parts).astype(out.to_pandas_dtype()), parts.valid, out)
        return on_arrays(kernel, to_temporal(v), n=frame.n)
    return apply


_PARTS: dict[str, Callable[[Value, Frame], Value]] = {
    "YEAR": _parts_fn(lambda p: p.year, pa.int16()),
    "QUARTER": _parts_fn(lambda p: (p.month - 1) // 3 + 1, pa.int8()),
    "MONTH": _parts_fn(lambda p: p.month, pa.int8()),
    "DAY": _parts_fn(lambda p: p.day, pa.int8()),
    "DAYOFWEEK": _parts_fn(lambda p: (p.weekday + 1) % 7 + 1, pa.int8()),
    "WEEKDAY": _parts_fn(lambda p: p.weekday, pa.int8()),
    "DAYOFYEAR": _parts_fn(lambda p: p.day_of_year, pa.int16()),
    "WEEKOFYEAR": _parts_fn(lambda p: temporal.week_number(p, 3)[0], pa.int8()),
    "HOUR": _parts_fn(lambda p: p.hour, pa.int8()),
    "MINUTE": _parts_fn(lambda p: p.minute, pa.int8()),
    "SECOND": _parts_fn(lambda p: p.second, pa.int8()),
    "MICROSECOND": _parts_fn(lambda p: p.microsecond, pa.int32()),
}
_PARTS["WEEK"] = _parts_fn(lambda p: temporal.week_number(p, 0)[0], pa.int8())
_PARTS["DAYOFMONTH"] = _PARTS["DAY"]
_PARTS["DOW"] = _PARTS["DAYOFWEEK"]
_PARTS["DOY"] = _PARTS["DAYOFYEAR"]


def _part(name: str) -> Callable[[exp.Func, Frame], Value]:
    """Handler for a part function: YEAR(x) nodes, or WEEKDAY(x) left as exp.Anonymous."""
    apply = _PARTS[name]

    def handler(node: exp.Func, frame: Frame) -> Value:
        if isinstance(node, exp.Anonymous):
            if len(node.expressions) != 1:
                raise ExpressionError(f"Function {name} takes 1 argument")
            return apply(frame.eval(node.expressions[0]), frame)
        return apply(frame.eval(node.this), frame)
    return handler


def eval_week(node: exp.Week, frame: Frame) -> Value:
    mode_node = node.args.get("mode")
    mode = 0
    if mode_node is not None:
        value = frame.eval(mode_node)
        if not isinstance(value, pa.Scalar) or value.as_py() not in range(8):
            raise UnsupportedExpression("WEEK", "mode must be a constant 0..7")
        mode = value.as_py()
    return _parts_fn(lambda p: temporal.week_number(p, mode)[0], pa.int8())(
        frame.eval(node.this), frame)


def eval_extract(node: exp.Extract, frame: Frame) -> Value:
    unit = node.this.name.upper()
    part = _PARTS.get(unit)
    if part is None:
        raise UnsupportedExpression(f"EXTRACT({unit})")
    return part(frame.eval(node.expression), frame)


def eval_dayname(node: exp.Dayname, frame: Frame) -> Value:
    fmt = "%a" if node.args.get("abbreviated") else "%W"
    return _format(to_temporal(frame.eval(node.this)), pa.scalar(fmt), frame)


# -- now and friends -----------------------------------------------------------------------------
def _now(frame: Frame, precision: exp.Expression | None) -> pa.Scalar:
    digits = 0 if precision is None else int(frame.eval(precision).as_py() or 0)
    now = frame.ctx.now
    micro = now.microsecond - now.microsecond % (10 ** (6 - max(0, min(digits, 6))))
    return pa.scalar(now.replace(microsecond=micro), TIMESTAMP)


def eval_now(node: exp.Expression, frame: Frame) -> Value:
    precision = node.expressions[0] if isinstance(node, exp.Anonymous) and node.expressions \
        else node.this if isinstance(node.this, exp.Expression) else None
    return _now(frame, precision)


def eval_curdate(node: exp.Expression, frame: Frame) -> Value:
    return pa.scalar(frame.ctx.now.date(), DATE)


def eval_curtime(node: exp.Expression, frame: Frame) -> Value:
    return pa.scalar(frame.ctx.now.strftime("%H:%M:%S"), pa.string())


def eval_utc_timestamp(node: exp.Expression, frame: Frame) -> Value:
    local = frame.ctx.now.replace(tzinfo=frame.ctx.zone, microsecond=0)
    return pa.scalar(local.astimezone(timezone.utc).replace(tzinfo=None), TIMESTAMP)


# -- conversions -------------------------------------------------------------------------------
def eval_to_date(node: exp.Expression, frame: Frame) -> Value:
    if node.args.get("format") is not None:
        raise UnsupportedExpression("TO_DATE with a format")
    return cast_value(frame.eval(node.this), DATE)


def eval_to_datetime(node: exp.Expression, frame: Frame) -> Value:
    return cast_value(frame.eval(node.this), TIMESTAMP)


def _format(v: Value, fmt: Value, frame: Frame) -> Value:
    fmt = cast_value(fmt, pa.string())

    def kernel(values: Value, pattern: str | None) -> Value:
        if pattern is None:
            return pa.nulls(len(values), pa.string()) if isinstance(values, pa.Array) \
                else null_of(pa.string())
        return on_arrays(lambda arr: temporal.format_datetime(arr, pattern), values, n=frame.n)
    return map_distinct_params(kernel, v, [fmt], pa.string(), frame.n)


def eval_time_to_str(node: exp.TimeToStr, frame: Frame) -> Value:
    mysql = _map_format(frame.eval(node.args["format"]))
    return _format(to_temporal(frame.eval(node.this)), mysql, frame)


def _map_format(fmt: Value) -> Value:
    """sqlglot strftime formats back to MySQL ones (once per distinct format)."""
    return map_distinct(cast_value(fmt, pa.string()), mysql_format, pa.string())


def eval_str_to_date(node: exp.StrToDate | exp.StrToTime, frame: Frame) -> Value:
    fmt = node.args.get("format")
    if fmt is None:
        return cast_value(frame.eval(node.this), DATE)
    mapped = _map_format(frame.eval(fmt))
    out = DATE if isinstance(node, exp.StrToDate) else TIMESTAMP
    if out == DATE and isinstance(mapped, pa.Scalar) and mapped.is_valid and \
            temporal.format_has_time(mapped.as_py()):  # a Java-style format sqlglot read as a date
        out = TIMESTAMP
    return str_to_date(frame.eval(node.this), mapped, out, frame)


def str_to_date(s: Value, fmt: Value, out: pa.DataType | None, frame: Frame) -> Value:
    """STR_TO_DATE with a MySQL format; `out` None picks DATE/DATETIME from the format."""
    s = cast_value(s, pa.string())
    if out is None:
        if not isinstance(fmt, pa.Scalar):
            out = TIMESTAMP
        else:
            out = TIMESTAMP if temporal.format_has_time(fmt.as_py() or "") else DATE

    def kernel(values: Value, pattern: str | None) -> Value:
        if pattern is None:
            return null_of(out) if isinstance(values, pa.Scalar) else pa.nulls(len(values), out)
        parsed = on_arrays(lambda arr: temporal.parse_with_format(arr, pattern), values,
                           n=frame.n)
        return cast_value(parsed, out)
    return map_distinct_params(kernel, s, [cast_value(fmt, pa.string())], out, frame.n)


# -- interval arithmetic ---------------------------------------------------------------------
def _unit_name(unit: exp.Expression | None) -> str:
    return "DAY" if unit is None else unit.name.upper()


def _amount(v: Value, unit: str) -> tuple[Value, str]:
    """The interval amount as BIGINT in a simple unit (compound strings are converted)."""
    if unit in _COMPOUND:
        if not isinstance(v, pa.Scalar):
            raise UnsupportedExpression(f"INTERVAL ... {unit}", "the amount must be a constant")
        text = str(v.as_py() or "")
        numbers = [int(x) for x in re.findall(r"\d+", text)]
        fields = _COMPOUND[unit][-len(numbers):] if numbers else []
        sign = -1 if text.strip().startswith("-") else 1
        if unit == "YEAR_MONTH":
            total = sum(n * _MONTH_UNITS[f] for n, f in zip(numbers, fields))
            return pa.scalar(sign * total, pa.int64()), "MONTH"
        total = sum(n * _FIXED_UNITS[f] for n, f in zip(numbers, fields))
        return pa.scalar(sign * total, pa.int64()), "MICROSECOND"
    if unit not in _MONTH_UNITS and unit not in _FIXED_UNITS:
        raise UnsupportedExpression(f"INTERVAL unit {unit}")
    if kind(v.type) in ("string", "decimal", "float"):
        v = pc.round(cast_value(v, pa.float64()), 0, round_mode="half_towards_infinity")
    return cast_value(v, pa.int64()), unit


def add_interval(value: Value, amount: Value, unit: str, sign: int, frame: Frame) -> Value:
    value = to_temporal(value)
    amount, simple_unit = _amount(amount, unit)
    if sign < 0:
        amount = pc.negate(amount)
    as_date = pa.types.is_date32(value.type) and unit in _DATE_UNITS
    return on_arrays(lambda v, a: _shift(v, a, simple_unit, as_date), value, amount, n=frame.n)


def _shift(values: pa.Array, amount: pa.Array, unit: str, as_date: bool) -> pa.Array:
    p = temporal.split(values)
    amt = to_numpy(amount, 0)
    valid = p.valid & valid_mask(amount)
    if unit in _MONTH_UNITS:
        months = amt * _MONTH_UNITS[unit]
        valid &= np.abs(months) <= 12 * 10_000
        months = np.where(valid, months, 0)
        total = p.year * 12 + (p.month - 1) + months
        year, month = total // 12, total % 12 + 1
        day = np.minimum(p.day, temporal.days_in_month(year, month))
        days, micros = temporal.month_start_days(year, month) + day - 1, p.micros
    else:
        step = _FIXED_UNITS[unit]
        valid &= np.abs(amt) <= _SPAN_DAYS * US_PER_DAY // step
        total = p.days * US_PER_DAY + p.micros + np.where(valid, amt, 0) * step
        days = total // US_PER_DAY
        micros = total - days * US_PER_DAY
    return temporal.from_days_micros(days, micros, valid, as_date)


def add_interval_node(value_node: exp.Expression, interval: exp.Interval, sign: int,
                      frame: Frame) -> Value:
    return add_interval(frame.eval(value_node), frame.eval(interval.this),
                        _unit_name(interval.args.get("unit")), sign, frame)


def _date_add(sign: int) -> Callable[[exp.Func, Frame], Value]:
    def handler(node: exp.Func, frame: Frame) -> Value:
        amount = node.expression
        unit = node.args.get("unit")
        if isinstance(amount, exp.Interval):  # ADDDATE(d, INTERVAL 1 DAY) kept as an Interval
            unit, amount = amount.args.get("unit"), amount.this
        return add_interval(frame.eval(node.this), frame.eval(amount), _unit_name(unit), sign,
                            frame)
    return handler


def eval_add_months(node: exp.AddMonths, frame: Frame) -> Value:
    return add_interval(frame.eval(node.this), frame.eval(node.expression), "MONTH", 1, frame)


def _units_add(unit: str, sign: int) -> Callable[[exp.Anonymous, Frame], Value]:
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        if len(node.expressions) != 2:
            raise ExpressionError(f"Function {str(node.this).upper()} takes 2 arguments")
        value, amount = (frame.eval(e) for e in node.expressions)
        return add_interval(value, amount, unit, sign, frame)
    return handler


# -- differences -------------------------------------------------------------------------------
def eval_date_diff(node: exp.DateDiff, frame: Frame) -> Value:
    unit = _unit_name(node.args.get("unit"))
    a, b = frame.eval(node.this), frame.eval(node.expression)
    if unit != "DAY":
        return timestamp_diff(unit, a, b, frame)
    a, b = cast_value(to_temporal(a), DATE), cast_value(to_temporal(b), DATE)

    def kernel(x: pa.Array, y: pa.Array) -> pa.Array:
        px, py = temporal.split(x), temporal.split(y)
        diff = mysql_day_number(px.days) - mysql_day_number(py.days)
        return from_numpy(diff.astype(np.int32), px.valid & py.valid, pa.int32())
    return on_arrays(kernel, a, b, n=frame.n)


# MySQL's calendar (TO_DAYS, FROM_DAYS, and so DATEDIFF) is proleptic Gregorian except that year
# 0 is not a leap year: day 1 is 0000-01-01 and 0000-03-01 is day 60. sqlglot rewrites
# TO_DAYS(d) as DATEDIFF(d, '0000-01-01') + 1, which this keeps exact.
_MARCH_0000 = temporal.MIN_DAY + 31 + 29


def mysql_day_number(days: np.ndarray) -> np.ndarray:
    return days - temporal.MIN_DAY + 1 - (days >= _MARCH_0000)


def timestamp_diff(unit: str, later: Value, earlier: Value, frame: Frame) -> Value:
    """`later - earlier` in whole `unit`s, truncated toward zero, as BIGINT."""
    later = cast_value(to_temporal(later), TIMESTAMP)
    earlier = cast_value(to_temporal(earlier), TIMESTAMP)
    if unit not in _MONTH_UNITS and unit not in _FIXED_UNITS:
        raise UnsupportedExpression(f"TIMESTAMPDIFF unit {unit}")

    def kernel(x: pa.Array, y: pa.Array) -> pa.Array:
        px, py = temporal.split(x), temporal.split(y)
        valid = px.valid & py.valid
        if unit in _MONTH_UNITS:
            months = (px.year * 12 + px.month) - (py.year * 12 + py.month)
            rest_x = px.day * US_PER_DAY + px.micros
            rest_y = py.day * US_PER_DAY + py.micros
            months = months - ((months > 0) & (rest_x < rest_y)) + ((months < 0) & (rest_x > rest_y))
            result = np.fix(months / _MONTH_UNITS[unit]).astype(np.int64)
        else:
            delta = (px.days - py.days) * US_PER_DAY + (px.micros - py.micros)
            step = _FIXED_UNITS[unit]
            result = np.sign(delta) * (np.abs(delta) // step)
        return from_numpy(result, valid, pa.int64())
    return on_arrays(kernel, later, earlier, n=frame.n)


def eval_timestamp_diff(node: exp.TimestampDiff, frame: Frame) -> Value:
    return timestamp_diff(_unit_name(node.args.get("unit")), frame.eval(node.this),
                          frame.eval(node.expression), frame)


def eval_timediff(node: exp.Expression, frame: Frame) -> Value:
    """TIMEDIFF(a, b): a - b as TIME text, `[-]HH:MM:SS[.ffffff]` (hours may pass 24); the
    server has no TIME type, so the result is a string (Connector/NET reads it at connect)."""
    args = [node.this, node.expression] if not isinstance(node, exp.Anonymous) else \
        node.expressions
    if len(args) != 2:
        raise ExpressionError("Function TIMEDIFF takes 2 arguments")
    a, b = (cast_value(to_temporal(frame.eval(e)), TIMESTAMP) for e in args)

    def kernel(x: pa.Array, y: pa.Array) -> pa.Array:
        px, py = temporal.split(x), temporal.split(y)
        delta = (px.days - py.days) * US_PER_DAY + (px.micros - py.micros)
        valid = px.valid & py.valid
        sign = np.where(delta < 0, "-", "")
        total = np.abs(delta)
        seconds, micros = total // US_PER_SECOND, total % US_PER_SECOND
        parts = [pa.array(sign)]
        for value, sep in ((seconds // 3600, ":"), (seconds // 60 % 60, ":"), (seconds % 60, "")):
            parts += [pc.utf8_lpad(pc.cast(pa.array(value), pa.string()), 2, "0"), sep]
        text = pc.binary_join_element_wise(*parts, "")
        frac = pc.utf8_lpad(pc.cast(pa.array(micros), pa.string()), 6, "0")
        text = pc.if_else(pa.array(micros > 0), pc.binary_join_element_wise(text, frac, "."),
                          text)
        return pc.if_else(pa.array(valid), text, pa.nulls(len(x), pa.string()))
    return on_arrays(kernel, a, b, n=frame.n)


def _units_diff(unit: str) -> Callable[[exp.Anonymous, Frame], Value]:
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        a, b = (frame.eval(e) for e in node.expressions)
        return timestamp_diff(unit, a, b, frame)
    return handler


# -- truncation, month ends, day numbers -------------------------------------------------------
_TRUNC_UNITS = {"SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}


def eval_timestamp_trunc(node: exp.TimestampTrunc | exp.DateTrunc, frame: Frame) -> Value:
    unit = _unit_name(node.args.get("unit"))
    if unit not in _TRUNC_UNITS:
        raise UnsupportedExpression(f"DATE_TRUNC unit {unit}")
    value = to_temporal(frame.eval(node.this))
    return on_arrays(lambda arr: pc.floor_temporal(arr, unit=unit.lower(),
                                                   week_starts_monday=True), value, n=frame.n)


def eval_last_day(node: exp.LastDay, frame: Frame) -> Value:
    def kernel(arr: pa.Array) -> pa.Array:
        p = temporal.split(arr)
        days = temporal.month_start_days(p.year, p.month + 1) - 1
        return temporal.from_days_micros(days, p.micros, p.valid, as_date=True)
    return on_arrays(kernel, to_temporal(frame.eval(node.this)), n=frame.n)


def fn_makedate(node: exp.Anonymous, frame: Frame) -> Value:
    year, doy = (cast_value(frame.eval(e), pa.int64()) for e in node.expressions)

    def kernel(y: pa.Array, d: pa.Array) -> pa.Array:
        yv, dv = to_numpy(y, 1970), to_numpy(d, 1)
        valid = valid_mask(y) & valid_mask(d) & (dv > 0) & (yv >= 0) & (yv <= 9999)
        yv = np.where(valid, yv, 1970)
        days = temporal.month_start_days(yv, np.ones_like(yv)) + np.where(valid, dv, 1) - 1
        return temporal.from_days_micros(days, np.zeros_like(days), valid, as_date=True)
    return on_arrays(kernel, year, doy, n=frame.n)


def fn_from_days(node: exp.Anonymous, frame: Frame) -> Value:
    (n,) = (cast_value(frame.eval(e), pa.int64()) for e in node.expressions)

    def kernel(arr: pa.Array) -> pa.Array:
        nv = to_numpy(arr, 0)
        days = temporal.MIN_DAY + nv - 1 + (nv >= 60)  # inverse of mysql_day_number
        return temporal.from_days_micros(days, np.zeros_like(days), valid_mask(arr) & (nv > 0),
                                         as_date=True)
    return on_arrays(kernel, n, n=frame.n)


def fn_yearweek(node: exp.Anonymous, frame: Frame) -> Value:
    """YEARWEEK(d[, mode]): year * 100 + week, the week always 1..53 (MySQL: mode | 2)."""
    args = [frame.eval(e) for e in node.expressions]
    mode = args[1].as_py() if len(args) > 1 and isinstance(args[1], pa.Scalar) else 0
    if len(args) not in (1, 2) or mode not in range(8):
        raise UnsupportedExpression("YEARWEEK", "takes a date and a constant mode 0..7")

    def value(p: Parts) -> np.ndarray:
        week, year = temporal.week_number(p, mode | 2)
        return year * 100 + week
    return _parts_fn(value, pa.int32())(args[0], frame)


def fn_to_monday(node: exp.Anonymous, frame: Frame) -> Value:
    """TO_MONDAY(d): the Monday of d's week as a DATE; Doris maps 1970-01-01..04 (before the
    first Monday of the epoch) to 1970-01-01."""
    if len(node.expressions) != 1:
        raise ExpressionError("Function TO_MONDAY takes 1 argument")

    def kernel(arr: pa.Array) -> pa.Array:
        p = temporal.split(arr)
        days = p.days - (p.days + 3) % 7
        days = np.where((p.days >= 0) & (p.days <= 3), 0, days)
        return temporal.from_days_micros(days, np.zeros_like(days), p.valid, as_date=True)
    return on_arrays(kernel, to_temporal(frame.eval(node.expressions[0])), n=frame.n)


# -- unix time -------------------------------------------------------------------------------
def fn_unix_timestamp(node: exp.Anonymous, frame: Frame) -> Value:
    args = [frame.eval(e) for e in node.expressions]
    if not args:
        value: Value = _now(frame, None)
    elif len(args) == 1:
        value = cast_value(to_temporal(args[0]), TIMESTAMP)
    else:
        value = str_to_date(args[0], cast_value(args[1], pa.string()), TIMESTAMP, frame)
    zone = frame.ctx.zone_key

    def kernel(arr: pa.Array) -> pa.Array:
        utc = local_to_utc(arr, zone)
        seconds = pc.floor(pc.divide(utc.cast(pa.int64()).cast(pa.float64()), 1e6))
        in_range = pc.and_(pc.greater_equal(seconds, 0.0), pc.less(seconds, 2.0 ** 31))
        return pc.if_else(in_range, seconds, 0.0).cast(pa.int32())
    return on_arrays(kernel, value, n=frame.n)


def eval_unix_to_time(node: exp.UnixToTime, frame: Frame) -> Value:
    seconds = cast_value(frame.eval(node.this), pa.int64())
    fmt_node = node.args.get("format")
    fmt = _map_format(frame.eval(fmt_node)) if fmt_node is not None \
        else pa.scalar("%Y-%m-%d %H:%i:%s")
    zone = frame.ctx.zone_key
    max_seconds = int((temporal.MAX_DAY + 1) * 86_400 - 1)

    def kernel(arr: pa.Array) -> pa.Array:
        ok = pc.and_(pc.greater_equal(arr, 0), pc.less_equal(arr, max_seconds))
        us = pc.multiply(pc.if_else(ok, arr, None), US_PER_SECOND)
        utc = us.cast(pa.timestamp("us", "UTC"))
        return pc.local_timestamp(utc.cast(pa.timestamp("us", zone))).cast(TIMESTAMP)
    local = on_arrays(kernel, seconds, n=frame.n)
    return _format(local, fmt, frame)


def local_to_utc(arr: pa.Array, zone: str) -> pa.Array:
    """Local times in `zone` as UTC instants (timestamp[us, UTC]) the way cctz resolves them
    for Doris's BE: a repeated hour takes the earlier offset, a skipped one ('2024-03-10 02:30'
    in New York) the offset in force before the change (07:30 UTC, not the gap's edge)."""
    earliest = pc.assume_timezone(arr, timezone=zone, ambiguous="earliest",
                                  nonexistent="earliest")
    back = pc.local_timestamp(earliest.cast(pa.timestamp("us", zone))).cast(pa.int64())
    micros = arr.cast(pa.int64())
    offset = pc.subtract(back, earliest.cast(pa.int64()))  # the offset before the change
    skipped = pc.not_equal(back, micros)
    utc = pc.if_else(skipped, pc.subtract(micros, offset), earliest.cast(pa.int64()))
    return utc.cast(pa.timestamp("us", "UTC"))


def _zone_of(zone: pa.Scalar) -> str | None:
    """The zone a constant CONVERT_TZ argument names; None (the call gives NULL) for an unknown
    zone and for NULL."""
    return convert_tz_zone(str(zone.as_py())) if zone.is_valid else None


def eval_convert_tz(node: exp.ConvertTimezone, frame: Frame) -> Value:
    value = cast_value(to_temporal(frame.eval(node.args["timestamp"])), TIMESTAMP)
    source = node.args.get("source_tz")
    source_tz = frame.eval(source) if source is not None else pa.scalar(frame.ctx.zone_key)
    target_tz = frame.eval(node.args["target_tz"])
    if not isinstance(source_tz, pa.Scalar) or not isinstance(target_tz, pa.Scalar):
        raise UnsupportedExpression("CONVERT_TZ", "time zones must be constants")
    source, target = _zone_of(source_tz), _zone_of(target_tz)
    if source is None or target is None:
        return null_of(TIMESTAMP) if isinstance(value, pa.Scalar) else pa.nulls(frame.n, TIMESTAMP)

    def kernel(arr: pa.Array) -> pa.Array:
        utc = local_to_utc(arr, source)
        return pc.local_timestamp(utc.cast(pa.timestamp("us", target))).cast(TIMESTAMP)
    return on_arrays(kernel, value, n=frame.n)


HANDLERS = {
    exp.CurrentTimestamp: eval_now, exp.Localtimestamp: eval_now, exp.Localtime: eval_now,
    exp.CurrentDate: eval_curdate, exp.CurrentTime: eval_curtime,
    exp.UtcTimestamp: eval_utc_timestamp,
    exp.Year: _part("YEAR"), exp.Quarter: _part("QUARTER"), exp.Month: _part("MONTH"),
    exp.Day: _part("DAY"), exp.DayOfMonth: _part("DAY"), exp.DayOfWeek: _part("DAYOFWEEK"),
    exp.DayOfYear: _part("DAYOFYEAR"), exp.WeekOfYear: _part("WEEKOFYEAR"), exp.Week: eval_week,
    exp.Hour: _part("HOUR"), exp.Minute: _part("MINUTE"), exp.Second: _part("SECOND"),
    exp.Extract: eval_extract,
    exp.Dayname: eval_dayname, exp.TsOrDsToDate: eval_to_date,
    exp.TsOrDsToTimestamp: eval_to_datetime, exp.Timestamp: eval_to_datetime,
    exp.TimeToStr: eval_time_to_str, exp.StrToDate: eval_str_to_date,
    exp.StrToTime: eval_str_to_date, exp.DateAdd: _date_add(1), exp.DateSub: _date_add(-1),
    exp.TimestampAdd: _date_add(1), exp.AddMonths: eval_add_months,
    exp.DateDiff: eval_date_diff, exp.TimestampDiff: eval_timestamp_diff,
    exp.TimestampTrunc: eval_timestamp_trunc, exp.DateTrunc: eval_timestamp_trunc,
    exp.LastDay: eval_last_day,
    exp.UnixToTime: eval_unix_to_time, exp.ConvertTimezone: eval_convert_tz,
}
FUNCTIONS = {
    "NOW": eval_now, "CURDATE": eval_curdate, "CURTIME": eval_curtime,
    "UNIX_TIMESTAMP": fn_unix_timestamp, "MAKEDATE": fn_makedate, "FROM_DAYS": fn_from_days,
    "WEEKDAY": _part("WEEKDAY"), "MICROSECOND": _part("MICROSECOND"),
    "YEARWEEK": fn_yearweek, "TO_MONDAY": fn_to_monday, "TIMEDIFF": eval_timediff,
}
for _unit in ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND",
              "MILLISECOND", "MICROSECOND"):
    FUNCTIONS[f"{_unit}S_ADD"] = _units_add(_unit, 1)
    FUNCTIONS[f"{_unit}S_SUB"] = _units_add(_unit, -1)
    FUNCTIONS[f"{_unit}S_DIFF"] = _units_diff(_unit)
