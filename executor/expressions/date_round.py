"""Rounding a date or datetime to the period it falls in, as Doris does: periods of n units
counted from 0001-01-01 00:00:00 (a Monday, so weeks start on Mondays).

    date_floor(t, INTERVAL n unit)   the start of t's period
    date_ceil(t, INTERVAL n unit)    the start of the next period, or t if t starts one
    <unit>_floor(t[, n]) / <unit>_ceil(t[, n])   the same with the unit in the name
                                     (second, minute, hour, day, week, month, quarter, year)

Second to week periods are whole microseconds and round by integer arithmetic; month, quarter
and year periods count months: from 0001-01 for date_floor / date_ceil (which Doris rewrites
to <unit>_floor(t, n, '0001-01-01 00:00:00')), from year 0 for <unit>_floor(t, n) without an
origin, as Doris's documented results show (date_floor(t, INTERVAL 5 YEAR) is 2021-01-01,
year_floor(t, 5) 2020-01-01, for t = '2023-07-13 22:28:18'). Vectorised with numpy over the split day/time columns; a DATE
stays a DATE, a DATETIME a DATETIME.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
from sqlglot import exp

from executor.expressions import temporal
from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.datetime_functions import to_temporal
from executor.expressions.errors import ExpressionError
from executor.expressions.temporal import US_PER_DAY, US_PER_SECOND
from executor.expressions.vectors import on_arrays, to_numpy, valid_mask

_FIXED = {"SECOND": US_PER_SECOND, "MINUTE": 60 * US_PER_SECOND, "HOUR": 3600 * US_PER_SECOND,
          "DAY": US_PER_DAY, "WEEK": 7 * US_PER_DAY}
_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
_EPOCH_0001 = 719162  # days from 0001-01-01 to 1970-01-01


def _round(values: pa.Array, periods: pa.Array, unit: str, ceil: bool,
           origin_year: int) -> pa.Array:
    p = temporal.split(values)
    n = to_numpy(periods, 1)
    valid = p.valid & valid_mask(periods) & (n > 0)
    n = np.where(valid, n, 1)
    as_date = pa.types.is_date32(values.type)
    if unit in _FIXED:
        step = n * _FIXED[unit]
        total = (p.days + _EPOCH_0001) * US_PER_DAY + p.micros
        rest = total % step
        start = total - rest + np.where(ceil & (rest != 0), step, 0)
        days = start // US_PER_DAY - _EPOCH_0001
        return temporal.from_days_micros(days, start % US_PER_DAY, valid, as_date)
    step = n * _MONTHS[unit]
    months = (p.year - origin_year) * 12 + (p.month - 1)
    rest = months % step
    exact = (rest == 0) & (p.day == 1) & (p.micros == 0)
    start = months - rest + np.where(ceil & ~exact, step, 0)
    days = temporal.month_start_days(start // 12 + origin_year, start % 12 + 1)
    return temporal.from_days_micros(days, np.zeros_like(days), valid, as_date)


def _apply(value: Value, periods: Value, unit: str, ceil: bool, frame: Frame,
           origin_year: int = 1) -> Value:
    if unit not in _FIXED and unit not in _MONTHS:
        raise ExpressionError(f"date_{'ceil' if ceil else 'floor'}: unsupported time unit {unit}")
    return on_arrays(lambda v, k: _round(v, k, unit, ceil, origin_year), to_temporal(value),
                     cast_value(periods, pa.int64()), n=frame.n)


def _by_interval(ceil: bool) -> Callable[[exp.Anonymous, Frame], Value]:
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        args = node.expressions
        name = f"date_{'ceil' if ceil else 'floor'}"
        if len(args) != 2 or not isinstance(args[1], exp.Interval):
            raise ExpressionError(f"{name} takes a date and an INTERVAL: "
                                  f"{name}(t, INTERVAL n unit)")
        unit = args[1].args.get("unit")
        return _apply(frame.eval(args[0]), frame.eval(args[1].this),
                      unit.name.upper() if unit is not None else "DAY", ceil, frame)
    return handler


def _by_name(unit: str, ceil: bool) -> Callable[[exp.Anonymous, Frame], Value]:
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        args = node.expressions
        if len(args) not in (1, 2):
            raise ExpressionError(f"{unit.lower()}_{'ceil' if ceil else 'floor'} takes a date "
                                  "and an optional period")
        periods = frame.eval(args[1]) if len(args) == 2 else pa.scalar(1, pa.int64())
        return _apply(frame.eval(args[0]), periods, unit, ceil, frame, origin_year=0)
    return handler


HANDLERS: dict = {}
FUNCTIONS = {"DATE_FLOOR": _by_interval(False), "DATE_CEIL": _by_interval(True)}
for _unit in (*_FIXED, *_MONTHS):
    FUNCTIONS[f"{_unit}_FLOOR"] = _by_name(_unit, False)
    FUNCTIONS[f"{_unit}_CEIL"] = _by_name(_unit, True)
