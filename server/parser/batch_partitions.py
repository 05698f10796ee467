"""Batch range partitions in CREATE TABLE, as Doris's MultiPartitionDesc expands them:

    FROM ("2024-01-01") TO ("2024-02-01") INTERVAL 1 DAY     p_20240101 [01-01, 01-02), ...
    FROM ("2024-01-01") TO ("2024-06-01") INTERVAL 1 WEEK    p_2024_01 ... (weeks from Monday)
    FROM ("2024-01-01") TO ("2025-01-01") INTERVAL 1 MONTH   p_202401 ...
    FROM ("2020-01-01") TO ("2024-01-01") INTERVAL 1 YEAR    p_2020 ...
    FROM ("2024-01-01 00:00:00") TO (...) INTERVAL 6 HOUR    p_2024010100 ...
    FROM (1) TO (100) INTERVAL 10                            p_1_11 [1, 11), ... p_91_100

Bounds keep the input's form (a date, or a date and time). The last partition ends at TO (a
DAY step may pass it, as in Doris). At most `MAX_MULTI_PARTITIONS` (Doris's
max_multi_partition_num) partitions.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from catalog.errors import AnalysisError
from catalog.statements import PartitionDesc
from server.parser.tokens import TokenCursor

MAX_MULTI_PARTITIONS = 4096
PREFIX = "p_"
_UNITS = ("HOUR", "DAY", "WEEK", "MONTH", "YEAR")
_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H", "%Y-%m-%d", "%Y%m%d%H", "%Y%m%d", "%Y-%m",
            "%Y%m", "%Y")


def parse_batch(cur: TokenCursor) -> list[PartitionDesc]:
    cur.expect("FROM")
    start = cur.paren_list(lambda: cur.literal())
    cur.expect("TO")
    end = cur.paren_list(lambda: cur.literal())
    cur.expect("INTERVAL")
    interval = cur.number("interval")
    unit = None
    if cur.peek() is not None and cur.peek().text.upper() in _UNITS + ("MINUTE", "SECOND",
                                                                       "QUARTER"):
        unit = cur.next().text.upper()
    if len(start) != 1 or len(end) != 1:
        raise AnalysisError("partition column number in multi partition clause must be one but "
                            f"start column size is {len(start)}, end column size is "
                            f"{len(end)}.")
    if interval <= 0:
        raise AnalysisError("Multi partition time interval must be larger than zero.")
    if unit is not None and unit not in _UNITS:
        raise AnalysisError(f"Multi build partition does not support time interval type: {unit}")
    if unit is None:
        return _numbers(str(start[0]), str(end[0]), interval)
    return _times(str(start[0]), str(end[0]), interval, unit)


def _numbers(start: str, end: str, interval: int) -> list[PartitionDesc]:
    try:
        begin, stop = int(start), int(end)
    except ValueError:
        raise AnalysisError("Batch build partition INTERVAL is number type but From or TO does "
                            "not type match.") from None
    if begin >= stop:
        raise AnalysisError("Batch build partition From value should less then TO value.")
    out = []
    while begin < stop:
        upper = min(begin + interval, stop)
        out.append(PartitionDesc(f"{PREFIX}{begin}_{upper}", "FIXED", upper=[str(upper)],
                                 lower=[str(begin)]))
        begin = upper
        _check_count(out)
    return out


def _parse_time(text: str) -> datetime:
    for fmt in _FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise AnalysisError("Multi build partition start or end time style is illegal.")


def _times(start_text: str, end_text: str, interval: int, unit: str) -> list[PartitionDesc]:
    start, end = _parse_time(start_text), _parse_time(end_text)
    if start >= end:
        raise AnalysisError("Multi build partition start time should less than end time.")
    lower_fmt = "%Y-%m-%d %H:%M:%S" if len(start_text) > 10 else "%Y-%m-%d"
    upper_fmt = "%Y-%m-%d %H:%M:%S" if len(end_text) > 10 else "%Y-%m-%d"
    out = []
    while start < end:
        lower = start.strftime(lower_fmt)
        if unit == "HOUR":
            name = start.strftime("%Y%m%d%H")
            start = start + timedelta(hours=interval)
        elif unit == "DAY":
            name = start.strftime("%Y%m%d")
            start = start + timedelta(days=interval)
        elif unit == "WEEK":
            jan1 = start.replace(month=1, day=1, hour=0, minute=0, second=0)
            week = ((start - jan1).days + jan1.weekday()) // 7 + 1
            name = f"{start.year}_{week:02d}"
            start = start - timedelta(days=start.weekday()) + timedelta(weeks=interval)
        elif unit == "MONTH":
            name = start.strftime("%Y%m")
            total = start.year * 12 + start.month - 1 + interval
            start = start.replace(year=total // 12, month=total % 12 + 1, day=1)
        else:
            name = start.strftime("%Y")
            start = start.replace(year=start.year + interval, month=1, day=1)
        if unit != "DAY" and start > end:
            start = end
        out.append(PartitionDesc(PREFIX + name, "FIXED", upper=[start.strftime(upper_fmt)],
                                 lower=[lower]))
        _check_count(out)
    return out


def _check_count(out: list) -> None:
    if len(out) > MAX_MULTI_PARTITIONS:
        raise AnalysisError("The number of Multi partitions too much, should not exceed:"
                            f"{MAX_MULTI_PARTITIONS}")
