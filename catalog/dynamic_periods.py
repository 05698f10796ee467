"""dynamic_partition.reserved_history_periods: its format check and its parsed ranges.

The value is "NULL" (not set) or pairs `[first,second]` joined by commas, dates for DAY, WEEK,
MONTH and YEAR (`[2020-06-01,2020-06-20],[2020-10-31,2020-11-15]`) and date-times for HOUR
(`[2020-06-01 00:00:00,2020-06-01 03:00:00]`); each pair is a closed range whose partitions the
scheduler never drops, and first <= second. Errors are Doris's (5076, 5077, 5079).
"""

from __future__ import annotations

import re
from datetime import datetime

from catalog.errors import CodedDdlError, DdlError

NOT_SET_PERIODS = "NULL"
_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_DATETIME = _DATE + r" [0-9]{2}:[0-9]{2}:[0-9]{2}"


def _periods_pattern(time_unit: str) -> re.Pattern:
    one = _DATETIME if time_unit == "HOUR" else _DATE
    return re.compile(rf"\[({one}),({one})\]")


def parse_periods(value: str, time_unit: str) -> list[tuple[datetime, datetime]]:
    """The [first, second] pairs of a checked reserved_history_periods value (closed ranges)."""
    if value == NOT_SET_PERIODS:
        return []
    fmt = "%Y-%m-%d %H:%M:%S" if time_unit == "HOUR" else "%Y-%m-%d"
    return [(datetime.strptime(a, fmt), datetime.strptime(b, fmt))
            for a, b in _periods_pattern(time_unit).findall(value)]


def check_reserved_periods(value: str, time_unit: str) -> None:
    if not value:
        raise CodedDdlError("Dynamic reserved history periods is empty.", 5076)
    if value == NOT_SET_PERIODS:
        return
    invalid = CodedDdlError(
        f'Invalid " dynamic_partition.reserved_history_periods " value {value}. It must be like '
        '"[yyyy-MM-dd,yyyy-MM-dd],[...,...]" while time_unit is DAY/WEEK/MONTH or '
        '"[yyyy-MM-dd HH:mm:ss,yyyy-MM-dd HH:mm:ss],[...,...]" while time_unit is HOUR.', 5077)
    if not (value.startswith("[") and value.endswith("]")):
        raise invalid
    pairs = _periods_pattern(time_unit).findall(value)
    if len(pairs) != len(value.split("],[")):
        raise invalid
    fmt = "%Y-%m-%d %H:%M:%S" if time_unit == "HOUR" else "%Y-%m-%d"
    for a, b in pairs:
        try:
            datetime.strptime(a, fmt), datetime.strptime(b, fmt)
        except ValueError:
            raise DdlError(
                "Invalid dynamic_partition.reserved_history_periods value. It must be correct "
                'DATE value "[yyyy-MM-dd,yyyy-MM-dd],[...,...]" while time_unit is DAY/WEEK/MONTH '
                'or "[yyyy-MM-dd HH:mm:ss,yyyy-MM-dd HH:mm:ss],[...,...]" while time_unit is '
                "HOUR.") from None
        if a > b:
            raise CodedDdlError(f"The first date is larger than the second date, [{a},{b}] is "
                                "invalid.", 5079)


def sorted_periods_text(value: str, time_unit: str) -> str:
    """SHOW DYNAMIC PARTITION TABLES' ReservedHistoryPeriods: NULL or the pairs by first date."""
    if value == NOT_SET_PERIODS:
        return value
    pairs = sorted(_periods_pattern(time_unit).findall(value))
    return ",".join(f"[{a},{b}]" for a, b in pairs)
