"""The declared DATETIME(n) of a select item computed from DATETIME(n) values.

Doris types `date_add(t, INTERVAL 1 DAY)`, `date_trunc(t, 'minute')`, `MAX(t)`,
`COALESCE(t, u)`, `LAG(t) OVER (...)` on a DATETIME(3) column as DATETIMEV2(3): the result
prints three fractional digits (`2024-01-02 00:00:00.123`, `.000` for a truncated value).
Without a declared type the server decides the scale from the values (0 or 6), so such an
item printed `.123000`. `datetime_scale` follows the scale through the functions that keep
it (adding MILLISECOND widens it to at least 3, MICROSECOND to 6; NOW(n) is DATETIME(n)),
reading the scale of
columns from the scope and of CAST(x AS DATETIME(n)); None when any DATETIME input's scale is
not known this way (the values decide, as before).
"""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from planner.cast_types import declared_cast_type
from storage.types import DataType

_UNITS_KEEPING = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")
# <unit>s_add / <unit>s_sub and <unit>_floor / <unit>_ceil keep the argument's scale
_KEEPING = {f"{u}s_{op}" for u in _UNITS_KEEPING for op in ("add", "sub")} | \
    {f"{u}_{op}" for u in _UNITS_KEEPING for op in ("floor", "ceil")} | {"date_trunc"}
_WIDENING = {"milliseconds_add": 3, "milliseconds_sub": 3, "microseconds_add": 6,
             "microseconds_sub": 6}
_INTERVAL_WIDENING = {"MILLISECOND": 3, "MICROSECOND": 6}
_NOW = ("now", "current_timestamp", "localtime", "localtimestamp")  # NOW(n): DATETIME(n)
# functions typed DATETIME(n) whatever their arguments (executor/expressions/epoch_functions.py)
_FIXED = {"from_second": 0, "from_millisecond": 3, "from_microsecond": 6}
_PASSING = (exp.Max, exp.Min, exp.AnyValue, exp.Lag, exp.Lead, exp.FirstValue,
            exp.LastValue, exp.Nullif, exp.TimestampTrunc, exp.Paren, exp.Window)


def datetime_scale(node: exp.Expression, declared: Callable[[exp.Column], DataType | None]
                   ) -> int | None:
    """The DATETIME scale `node` keeps from its inputs, None when it is not known."""
    if isinstance(node, exp.Column):
        t = declared(node)
        return t.scale if t is not None and t.kind == "DATETIME" else None
    if isinstance(node, exp.Cast):
        t = declared_cast_type(node.to)
        return t.scale if t is not None and t.kind == "DATETIME" else None
    if isinstance(node, _PASSING):
        return datetime_scale(node.this, declared)
    if isinstance(node, exp.ConvertTimezone):  # convert_tz(t, from, to) keeps t's scale
        return datetime_scale(node.args["timestamp"], declared)
    if isinstance(node, (exp.DateAdd, exp.DateSub, exp.TimestampAdd, exp.TimestampSub)):
        return _widened(datetime_scale(node.this, declared), node.args.get("unit"))
    if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
        return _widened(datetime_scale(node.this, declared), node.expression.args.get("unit"))
    if isinstance(node, (exp.CurrentTimestamp, exp.Localtimestamp)):
        return _precision(node.this)
    if isinstance(node, exp.Anonymous) and node.name.lower() in _NOW:
        return _precision(node.expressions[0]) if len(node.expressions) == 1 else None
    if isinstance(node, exp.Anonymous) and node.expressions:
        name = node.name.lower()
        if name in _FIXED:
            return _FIXED[name]
        if name in _KEEPING:
            return datetime_scale(node.expressions[0], declared)
        if name in _WIDENING:
            inner = datetime_scale(node.expressions[0], declared)
            return None if inner is None else max(inner, _WIDENING[name])
        return None
    if isinstance(node, exp.Coalesce):
        return _common([node.this, *node.expressions], declared)
    if isinstance(node, (exp.Greatest, exp.Least)):
        return _common([node.this, *node.expressions], declared)
    if isinstance(node, exp.If):
        return _common([node.args.get("true"), node.args.get("false")], declared)
    if isinstance(node, exp.Case):
        return _common([i.args.get("true") for i in node.args.get("ifs") or []]
                       + [node.args.get("default")], declared)
    return None


def _precision(arg: exp.Expression | None) -> int | None:
    """NOW(n)'s n when it is a literal 0-6."""
    if isinstance(arg, exp.Literal) and not arg.is_string and arg.this.isdigit() \
            and int(arg.this) <= 6:
        return int(arg.this)
    return None


def _widened(scale: int | None, unit: exp.Expression | None) -> int | None:
    if scale is None:
        return None
    name = unit.name.upper() if unit is not None else "DAY"
    return max(scale, _INTERVAL_WIDENING.get(name, 0))


def _common(branches: list[exp.Expression | None],
            declared: Callable[[exp.Column], DataType | None]) -> int | None:
    """The widest scale of the branches; None if a branch other than NULL is not known."""
    scales = []
    for b in branches:
        if b is None or isinstance(b, exp.Null):
            continue
        s = datetime_scale(b, declared)
        if s is None:
            return None
        scales.append(s)
    return max(scales) if scales else None
