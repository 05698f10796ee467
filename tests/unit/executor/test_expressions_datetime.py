"""Date/time functions: parts, formatting, parsing, interval arithmetic, differences, unix time.
CTX.now is 2024-05-17 10:11:12.345678 in Asia/Shanghai (UTC+8)."""

from datetime import date, datetime, timedelta

import pyarrow as pa
import pytest

from executor.expressions import EvalContext
from expr_helpers import col, col_type, ev, ev_typed, run

DATE, DATETIME = pa.date32(), pa.timestamp("us")


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("NOW()", DATETIME, datetime(2024, 5, 17, 10, 11, 12)),
    ("NOW(3)", DATETIME, datetime(2024, 5, 17, 10, 11, 12, 345000)),
    ("CURRENT_TIMESTAMP", DATETIME, datetime(2024, 5, 17, 10, 11, 12)),
    ("CURRENT_TIMESTAMP()", DATETIME, datetime(2024, 5, 17, 10, 11, 12)),
    ("LOCALTIMESTAMP", DATETIME, datetime(2024, 5, 17, 10, 11, 12)),
    ("CURDATE()", DATE, date(2024, 5, 17)),
    ("CURRENT_DATE", DATE, date(2024, 5, 17)),
    ("CURRENT_DATE()", DATE, date(2024, 5, 17)),
    ("CURTIME()", pa.string(), "10:11:12"),
    ("UTC_TIMESTAMP()", DATETIME, datetime(2024, 5, 17, 2, 11, 12)),
])
def test_now(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("YEAR('2020-03-04')", pa.int16(), 2020),
    ("MONTH('2020-03-04')", pa.int8(), 3),
    ("QUARTER('2020-08-04')", pa.int8(), 3),
    ("DAY('2020-03-04')", pa.int8(), 4),
    ("DAYOFMONTH('2020-03-04 10:00:00')", pa.int8(), 4),
    ("DAYOFWEEK('2024-01-07')", pa.int8(), 1),      # Sunday
    ("DAYOFWEEK('2024-01-13')", pa.int8(), 7),      # Saturday
    ("WEEKDAY('2024-01-07')", pa.int8(), 6),
    ("DAYOFYEAR('2020-12-31')", pa.int16(), 366),
    ("WEEKOFYEAR('2021-01-03')", pa.int8(), 53),
    ("WEEK('2021-01-03')", pa.int8(), 1),
    ("WEEK('2021-01-02')", pa.int8(), 0),
    ("WEEK('2021-01-03', 3)", pa.int8(), 53),
    ("HOUR('2020-01-01 10:11:12')", pa.int8(), 10),
    ("MINUTE('2020-01-01 10:11:12')", pa.int8(), 11),
    ("SECOND('2020-01-01 10:11:12')", pa.int8(), 12),
    ("HOUR(DATE '2020-01-01')", pa.int8(), 0),
    ("MICROSECOND('2020-01-01 10:11:12.5')", pa.int32(), 500000),
    ("EXTRACT(YEAR FROM DATE '2020-01-01')", pa.int16(), 2020),
    ("EXTRACT(MINUTE FROM TIMESTAMP '2020-01-01 10:11:12')", pa.int8(), 11),
    ("YEAR(NULL)", pa.int16(), None),
    ("MONTH('not a date')", pa.int8(), None),
    ("DATE('2020-01-01 10:11:12')", DATE, date(2020, 1, 1)),
    ("TO_DATE('2020-01-01 10:11:12')", DATE, date(2020, 1, 1)),
    ("DAYNAME('2024-01-07')", pa.string(), "Sunday"),
    ("MONTHNAME('2024-01-07')", pa.string(), "January"),
    ("LAST_DAY('2020-02-10')", DATE, date(2020, 2, 29)),
    ("LAST_DAY('2021-12-10 10:00:00')", DATE, date(2021, 12, 31)),
    ("MAKEDATE(2020, 60)", DATE, date(2020, 2, 29)),
    ("MAKEDATE(2020, 0)", DATE, None),
    ("TO_DAYS('2007-10-07')", pa.int64(), 733321),
    ("FROM_DAYS(733321)", DATE, date(2007, 10, 7)),
])
def test_parts_and_conversions(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


@pytest.mark.parametrize("fmt, expected", [
    ("%Y-%m-%d %H:%i:%s", "2020-01-05 13:04:05"),
    ("%y/%c/%e %k:%i", "20/1/5 13:04"),
    ("%M %b %W %a", "January Jan Sunday Sun"),
    ("%D %j %w", "5th 005 0"),
    ("%h %I %l %p", "01 01 1 PM"),
    ("%T|%r", "13:04:05|01:04:05 PM"),
    ("%U %u %V %v %X %x", "01 01 01 01 2020 2020"),
    ("%f", "000000"),
    ("100%% %Q", "100% Q"),
])
def test_date_format(fmt, expected):
    assert ev(f"DATE_FORMAT('2020-01-05 13:04:05', '{fmt}')") == expected


def test_date_format_week_numbers_match_python():
    days = [date(2019, 12, 25) + timedelta(days=k) for k in range(0, 800, 3)]
    batch = pa.table({"d": pa.array(days, pa.date32())})
    got = run("DATE_FORMAT(d, '%U|%v|%x|%D')", batch).to_pylist()
    for day, text in zip(days, got):
        iso = day.isocalendar()
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(day.day % 10 if day.day not in (11, 12, 13)
                                                  else 0, "th")
        assert text == f"{day:%U}|{iso[1]:02d}|{iso[0]}|{day.day}{suffix}", day


def test_date_format_columns_and_nulls():
    assert col("DATE_FORMAT(dt, '%Y/%m/%d %T.%f')") == [
        "2017/10/01 06:00:00.000000", None, "2020/01/31 23:59:59.000000",
        "2020/02/29 00:00:00.000500"]
    assert col("DATE_FORMAT(d, '%W, %M %D %Y')")[0] == "Sunday, October 1st 2017"
    assert ev("DATE_FORMAT(NULL, '%Y')") is None


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("DATE_ADD('2020-01-31', INTERVAL 1 MONTH)", DATE, date(2020, 2, 29)),
    ("DATE_ADD(DATE '2020-01-31', INTERVAL 1 MONTH)", DATE, date(2020, 2, 29)),
    ("DATE_ADD(DATE '2019-01-31', INTERVAL 1 MONTH)", DATE, date(2019, 2, 28)),
    ("DATE_ADD(DATE '2020-02-29', INTERVAL 1 YEAR)", DATE, date(2021, 2, 28)),
    ("DATE_ADD(DATE '2020-11-30', INTERVAL 1 QUARTER)", DATE, date(2021, 2, 28)),
    ("DATE_SUB(TIMESTAMP '2020-03-31 10:00:00', INTERVAL 1 MONTH)", DATETIME,
     datetime(2020, 2, 29, 10, 0)),
    ("DATE_ADD(DATE '2020-01-31', INTERVAL 1 HOUR)", DATETIME, datetime(2020, 1, 31, 1, 0)),
    ("DATE_ADD('2020-01-01', INTERVAL -2 WEEK)", DATE, date(2019, 12, 18)),
    ("DATE_ADD('2020-01-01 23:00:00', INTERVAL 90 MINUTE)", DATETIME, datetime(2020, 1, 2, 0, 30)),
    ("DATE_SUB('2020-01-01', INTERVAL 1 SECOND)", DATETIME, datetime(2019, 12, 31, 23, 59, 59)),
    ("ADDDATE('2020-01-01', 5)", DATE, date(2020, 1, 6)),
    ("SUBDATE('2020-01-01', INTERVAL 1 DAY)", DATE, date(2019, 12, 31)),
    ("DATE '2020-01-01' + INTERVAL 1 DAY", DATE, date(2020, 1, 2)),
    ("INTERVAL 1 DAY + DATE '2020-01-01'", DATE, date(2020, 1, 2)),
    ("DATE '2020-01-01' - INTERVAL 1 YEAR", DATE, date(2019, 1, 1)),
    ("TIMESTAMPADD(HOUR, 2, '2020-01-01')", DATETIME, datetime(2020, 1, 1, 2, 0)),
    ("DATE_ADD('2020-01-01 10:00:00', INTERVAL '1:30' HOUR_MINUTE)", DATETIME,
     datetime(2020, 1, 1, 11, 30)),
    ("DATE_ADD('2020-01-01', INTERVAL '1-2' YEAR_MONTH)", DATE, date(2021, 3, 1)),
    ("DAYS_ADD('2020-01-01', 3)", DATE, date(2020, 1, 4)),
    ("MONTHS_ADD('2020-01-31', 1)", DATE, date(2020, 2, 29)),
    ("YEARS_SUB('2020-02-29', 1)", DATE, date(2019, 2, 28)),
    ("HOURS_ADD('2020-01-01', 1)", DATETIME, datetime(2020, 1, 1, 1, 0)),
    ("DATE_ADD('9999-12-31', INTERVAL 1 DAY)", DATE, None),
    ("DATE_ADD(NULL, INTERVAL 1 DAY)", DATETIME, None),
    ("DATE_ADD('2020-01-01', INTERVAL NULL DAY)", DATE, None),
])
def test_interval_arithmetic(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


def test_interval_arithmetic_over_columns():
    assert col("DATE_ADD(d, INTERVAL t MONTH)") == [date(2017, 11, 1), None, date(2020, 1, 31),
                                                    None]
    assert col_type("DATE_ADD(d, INTERVAL t MONTH)") == DATE
    assert col("DATE_ADD(dt, INTERVAL i DAY)")[2] == datetime(2020, 1, 24, 23, 59, 59)
    assert col_type("d + INTERVAL 1 HOUR") == DATETIME


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("DATEDIFF('2020-03-01', '2020-02-01')", pa.int32(), 29),
    ("DATEDIFF('2020-03-01 23:00:00', '2020-03-02 01:00:00')", pa.int32(), -1),
    ("DATEDIFF(NULL, '2020-01-01')", pa.int32(), None),
    ("TIMESTAMPDIFF(MONTH, '2020-01-31', '2020-02-29')", pa.int64(), 0),
    ("TIMESTAMPDIFF(MONTH, '2020-01-31', '2020-03-01')", pa.int64(), 1),
    ("TIMESTAMPDIFF(MONTH, '2020-03-01', '2020-01-31')", pa.int64(), -1),
    ("TIMESTAMPDIFF(YEAR, '2000-02-29', '2020-02-28')", pa.int64(), 19),
    ("TIMESTAMPDIFF(QUARTER, '2020-01-01', '2020-12-31')", pa.int64(), 3),
    ("TIMESTAMPDIFF(DAY, '2020-01-01 10:00:00', '2020-01-03 09:00:00')", pa.int64(), 1),
    ("TIMESTAMPDIFF(HOUR, '2020-01-03 09:00:00', '2020-01-01 10:00:00')", pa.int64(), -47),
    ("TIMESTAMPDIFF(SECOND, '2020-01-01', '2020-01-01 00:01:00')", pa.int64(), 60),
    ("TIMESTAMPDIFF(WEEK, '2020-01-01', '2020-01-15')", pa.int64(), 2),
    ("YEARS_DIFF('2020-01-01', '2010-06-01')", pa.int64(), 9),
    ("DAYS_DIFF('2020-12-25 22:00:00', '2020-12-24 22:00:01')", pa.int64(), 0),
])
def test_differences(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("STR_TO_DATE('2020-01-05', '%Y-%m-%d')", DATE, date(2020, 1, 5)),
    ("STR_TO_DATE('2020-1-5', '%Y-%m-%d')", DATE, date(2020, 1, 5)),
    ("STR_TO_DATE('20200105', '%Y%m%d')", DATE, date(2020, 1, 5)),
    ("STR_TO_DATE('2020-01-05 10:11:12', '%Y-%m-%d %H:%i:%s')", DATETIME,
     datetime(2020, 1, 5, 10, 11, 12)),
    ("STR_TO_DATE('05/01/2020 1:02:03 PM', '%d/%m/%Y %h:%i:%s %p')", DATETIME,
     datetime(2020, 1, 5, 13, 2, 3)),
    ("STR_TO_DATE('12:00:00 AM 2020-01-05', '%r %Y-%m-%d')", DATETIME, datetime(2020, 1, 5)),
    ("STR_TO_DATE('May 5, 2020', '%M %e, %Y')", DATE, date(2020, 5, 5)),
    ("STR_TO_DATE('2014-12-21 12:34:56', '%Y-%m-%d')", DATE, date(2014, 12, 21)),
    ("STR_TO_DATE('2020-02-30', '%Y-%m-%d')", DATE, None),
    ("STR_TO_DATE('garbage', '%Y-%m-%d')", DATE, None),
    ("STR_TO_DATE(NULL, '%Y')", DATE, None),
])
def test_str_to_date(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("DATE_TRUNC('2020-05-17 10:11:12', 'month')", DATETIME, datetime(2020, 5, 1)),
    ("DATE_TRUNC('week', TIMESTAMP '2024-05-17 10:11:12')", DATETIME, datetime(2024, 5, 13)),
    ("DATE_TRUNC(TIMESTAMP '2024-05-17 10:11:12', 'hour')", DATETIME, datetime(2024, 5, 17, 10)),
    ("DATE_TRUNC(TIMESTAMP '2024-05-17 10:11:12', 'quarter')", DATETIME, datetime(2024, 4, 1)),
    ("DATE_TRUNC(TIMESTAMP '2024-05-17 10:11:12', 'year')", DATETIME, datetime(2024, 1, 1)),
    ("DATE_TRUNC(DATE '2024-05-17', 'month')", DATE, date(2024, 5, 1)),
])
def test_date_trunc(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("UNIX_TIMESTAMP()", pa.int32(), 1715911872),
    ("UNIX_TIMESTAMP('1970-01-01 08:00:01')", pa.int32(), 1),
    ("UNIX_TIMESTAMP('1970-01-01 00:00:00')", pa.int32(), 0),   # before the epoch: 0
    ("UNIX_TIMESTAMP('2020-01-01', '%Y-%m-%d')", pa.int32(), 1577808000),
    ("FROM_UNIXTIME(0)", pa.string(), "1970-01-01 08:00:00"),
    ("FROM_UNIXTIME(1577808000, '%Y-%m-%d %H:%i')", pa.string(), "2020-01-01 00:00"),
    ("FROM_UNIXTIME(-1)", pa.string(), None),
    ("CONVERT_TZ('2020-01-01 00:00:00', 'UTC', 'Asia/Shanghai')", DATETIME,
     datetime(2020, 1, 1, 8)),
])
def test_unix_time(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


def test_unix_time_follows_session_time_zone():
    utc = EvalContext(now=datetime(2024, 5, 17, 10, 11, 12), time_zone="UTC")
    assert run("UNIX_TIMESTAMP('1970-01-01 00:00:10')", ctx=utc)[0].as_py() == 10
    assert run("FROM_UNIXTIME(10)", ctx=utc)[0].as_py() == "1970-01-01 00:00:10"
    plus8 = EvalContext(now=datetime(2024, 5, 17), time_zone="+08:00")
    assert run("FROM_UNIXTIME(0)", ctx=plus8)[0].as_py() == "1970-01-01 08:00:00"
