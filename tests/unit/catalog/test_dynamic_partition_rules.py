"""The dynamic partition rules as pure functions of `now`: every example of seed 001."""

from datetime import date, datetime, timezone

import pytest

from catalog.dynamic_partition import (RangeItem, border, java_week_of_year, name_suffix, plan)
from catalog.dynamic_properties import MIN_START, DynamicProperty
from catalog.errors import DdlError
from storage.types import DataType

DATE = DataType.of("DATE")
DATETIME = DataType.of("DATETIME")
INT = DataType.of("INT")


def rule(unit: str, start: int = MIN_START, end: int = 3, **kw) -> DynamicProperty:
    return DynamicProperty(enable=True, time_unit=unit, time_zone="Asia/Shanghai", start=start,
                           end=end, prefix="p", buckets=8, **kw)


def added(prop, now, items=(), column=DATE):
    return [(n.name, n.lower, n.upper) for n in plan(prop, column, list(items), now).add]


def item(name: str, lower, upper) -> RangeItem:
    return RangeItem(name, lower, upper, [str(lower)] if lower else [], [str(upper)] if upper else [])


def days(names_and_bounds):
    return [item(n, date.fromisoformat(a), date.fromisoformat(b)) for n, a, b in names_and_bounds]


# -- example 1: DAY, start -7, end 3 -------------------------------------------------------------
def test_day_example_creates_today_to_end():
    assert added(rule("DAY", -7, 3), datetime(2020, 5, 29, 10)) == [
        ("p20200529", "2020-05-29", "2020-05-30"), ("p20200530", "2020-05-30", "2020-05-31"),
        ("p20200531", "2020-05-31", "2020-06-01"), ("p20200601", "2020-06-01", "2020-06-02")]


def test_day_example_next_day_adds_one_and_drops_after_seven_days():
    existing = days([("p20200529", "2020-05-29", "2020-05-30"),
                     ("p20200530", "2020-05-30", "2020-05-31"),
                     ("p20200531", "2020-05-31", "2020-06-01"),
                     ("p20200601", "2020-06-01", "2020-06-02")])
    nxt = plan(rule("DAY", -7, 3), DATE, existing, datetime(2020, 5, 30, 8))
    assert [a.name for a in nxt.add] == ["p20200602"] and nxt.drop == []
    # Equal ranges already there: no conflict (each clears the message).
    assert nxt.create_events == [None, None, None]
    later = plan(rule("DAY", -7, 3), DATE, existing, datetime(2020, 6, 6, 8))
    assert later.drop == ["p20200529"]


def test_now_is_taken_in_the_rules_time_zone():
    # 2020-05-28 20:00 UTC is 2020-05-29 04:00 in Shanghai.
    now = datetime(2020, 5, 28, 20, tzinfo=timezone.utc)
    assert added(rule("DAY", end=1), now)[0][0] == "p20200529"
    utc = DynamicProperty(True, "DAY", "UTC", MIN_START, 1, "p", 8)
    assert added(utc, now)[0][0] == "p20200528"


# -- example 2: WEEK ----------------------------------------------------------------------------
def test_week_example_monday_and_datetime_bounds():
    assert added(rule("WEEK", -2, 2), datetime(2020, 5, 29), column=DATETIME) == [
        ("p2020_22", "2020-05-25 00:00:00", "2020-06-01 00:00:00"),
        ("p2020_23", "2020-06-01 00:00:00", "2020-06-08 00:00:00"),
        ("p2020_24", "2020-06-08 00:00:00", "2020-06-15 00:00:00")]


def test_week_example_start_day_of_week_3():
    prop = rule("WEEK", -2, 2, start_day_of_week=3)
    assert added(prop, datetime(2020, 5, 29), column=DATETIME) == [
        ("p2020_22", "2020-05-27 00:00:00", "2020-06-03 00:00:00"),
        ("p2020_23", "2020-06-03 00:00:00", "2020-06-10 00:00:00"),
        ("p2020_24", "2020-06-10 00:00:00", "2020-06-17 00:00:00")]


def test_week_example_drops_two_weeks_back_in_week_25():
    existing = [item("p2020_22", datetime(2020, 5, 25), datetime(2020, 6, 1)),
                item("p2020_23", datetime(2020, 6, 1), datetime(2020, 6, 8)),
                item("p2020_24", datetime(2020, 6, 8), datetime(2020, 6, 15))]
    result = plan(rule("WEEK", -2, 2), DATETIME, existing, datetime(2020, 6, 15, 9))
    assert result.drop == ["p2020_22"]
    assert [a.name for a in result.add] == ["p2020_25", "p2020_26", "p2020_27"]


def test_week_names_across_the_new_year():
    assert name_suffix(datetime(2019, 12, 31), "WEEK") == "2019_53"
    assert name_suffix(datetime(2020, 1, 1), "WEEK") == "2020_01"
    assert java_week_of_year(date(2020, 5, 25)) == 22 and java_week_of_year(date(2020, 5, 31)) == 23
    # Doris moves within the ISO week: on a Tuesday a Wednesday-start week begins tomorrow.
    wed = rule("WEEK", end=0, start_day_of_week=3)
    assert border(wed, datetime(2019, 12, 31), 0) == datetime(2020, 1, 1)


# -- example 3: MONTH ----------------------------------------------------------------------------
def test_month_example_start_day_3():
    assert added(rule("MONTH", end=2, start_day_of_month=3), datetime(2020, 5, 29)) == [
        ("p202005", "2020-05-03", "2020-06-03"), ("p202006", "2020-06-03", "2020-07-03"),
        ("p202007", "2020-07-03", "2020-08-03")]


def test_month_example_start_day_28_before_the_28th():
    assert added(rule("MONTH", end=2, start_day_of_month=28), datetime(2020, 5, 20)) == [
        ("p202004", "2020-04-28", "2020-05-28"), ("p202005", "2020-05-28", "2020-06-28"),
        ("p202006", "2020-06-28", "2020-07-28")]


def test_month_without_start_never_drops():
    old = days([("p201901", "2019-01-01", "2019-02-01")])
    assert plan(rule("MONTH", end=1), DATE, old, datetime(2020, 5, 29)).drop == []


# -- HOUR, YEAR, integer columns -------------------------------------------------------------------
def test_hour_and_year_names():
    assert added(rule("HOUR", end=1), datetime(2020, 3, 25, 1, 30), column=DATETIME) == [
        ("p2020032501", "2020-03-25 01:00:00", "2020-03-25 02:00:00"),
        ("p2020032502", "2020-03-25 02:00:00", "2020-03-25 03:00:00")]
    assert added(rule("YEAR", end=1), datetime(2020, 3, 25)) == [
        ("p2020", "2020-01-01", "2021-01-01"), ("p2021", "2021-01-01", "2022-01-01")]


def test_integer_column_gets_yyyymmdd_bounds():
    assert added(rule("DAY", end=0), datetime(2020, 3, 25), column=INT) == [
        ("p20200325", "20200325", "20200326")]


# -- history partitions on 2021-05-20 --------------------------------------------------------------
@pytest.mark.parametrize("history_num, first", [(1, "p20210519"), (5, "p20210517"),
                                                (-1, "p20210517")])
def test_history_partition_num(history_num, first):
    prop = rule("DAY", -3, 3, create_history_partition=True, history_partition_num=history_num)
    names = [n for n, _, _ in added(prop, datetime(2021, 5, 20, 12))]
    assert names[0] == first and names[-1] == "p20210523"
    assert len(names) == 23 - int(first[-2:]) + 1


def test_history_needs_create_history_partition():
    prop = rule("DAY", -3, 3, history_partition_num=5)
    assert added(prop, datetime(2021, 5, 20))[0][0] == "p20210520"


def test_create_history_without_start_or_num_has_no_effect():
    prop = rule("DAY", end=1, create_history_partition=True)
    assert [n for n, _, _ in added(prop, datetime(2021, 5, 20))] == ["p20210520", "p20210521"]


# -- reserved_history_periods ----------------------------------------------------------------------
def test_reserved_history_periods_day():
    prop = rule("DAY", -3, 3,
                reserved_history_periods="[2020-06-01,2020-06-20],[2020-10-31,2020-11-15]")
    existing = days([("p20200531", "2020-05-31", "2020-06-01"),
                     ("p20200601", "2020-06-01", "2020-06-02"),
                     ("p20200620", "2020-06-20", "2020-06-21"),
                     ("p20200621", "2020-06-21", "2020-06-22"),
                     ("p20201030", "2020-10-30", "2020-10-31"),
                     ("p20201115", "2020-11-15", "2020-11-16"),
                     ("p20201116", "2020-11-16", "2020-11-17"),
                     ("p20210903", "2021-09-03", "2021-09-04")])
    result = plan(prop, DATE, existing, datetime(2021, 9, 6))
    assert result.drop == ["p20200531", "p20200621", "p20201030", "p20201116"]


def test_reserved_history_periods_hour():
    prop = rule("HOUR", -3, 3, reserved_history_periods="[2020-06-01 00:00:00,2020-06-01 03:00:00]")
    existing = [item(f"p20200601{h:02d}", datetime(2020, 6, 1, h), datetime(2020, 6, 1, h + 1))
                for h in range(0, 6)]
    result = plan(prop, DATETIME, existing, datetime(2020, 6, 2, 10))
    assert result.drop == ["p2020060104", "p2020060105"]


# -- conflicts -------------------------------------------------------------------------------------
def test_day_to_month_conflict_keeps_existing_and_creates_what_fits():
    existing = days([("p20200519", "2020-05-19", "2020-05-20"),
                     ("p20200520", "2020-05-20", "2020-05-21"),
                     ("p20200521", "2020-05-21", "2020-05-22")])
    result = plan(rule("MONTH", end=1), DATE, existing, datetime(2020, 5, 21))
    assert [(a.name, a.lower, a.upper) for a in result.add] == [
        ("p202006", "2020-06-01", "2020-07-01")]
    assert len(result.create_events) == 1 and "is intersected with range" in result.create_events[0]
    with pytest.raises(DdlError, match="is intersected with range"):
        plan(rule("MONTH", end=1), DATE, existing, datetime(2020, 5, 21), first_time=True)


def test_manual_partitions_after_end_are_kept():
    existing = days([("p_future", "2030-01-01", "2030-02-01")])
    result = plan(rule("DAY", -3, 1), DATE, existing, datetime(2020, 5, 21))
    assert result.drop == [] and [a.name for a in result.add] == ["p20200521", "p20200522"]


def test_partitions_with_min_lower_bound_before_start_are_dropped():
    existing = [item("p_less", None, date(2020, 1, 1)), item("p_max", date(2025, 1, 1), None)]
    assert plan(rule("DAY", -3, 1), DATE, existing, datetime(2020, 5, 21)).drop == ["p_less"]


def test_same_name_with_another_range_is_reported():
    existing = days([("p20200522", "2020-06-01", "2020-06-02")])
    result = plan(rule("DAY", end=1), DATE, existing, datetime(2020, 5, 21))
    assert [a.name for a in result.add] == ["p20200521"]
    assert result.create_events == ["Duplicate partition name p20200522"]


def test_start_too_small_is_reported_not_raised():
    result = plan(rule("DAY", -(2**31 - 1), 1), DATE, [], datetime(2020, 5, 21))
    assert "maybe it's too small" in result.drop_error
    with pytest.raises(DdlError, match="maybe dynamic_partition.start is too small"):
        plan(rule("DAY", -(2**31 - 1), 1, create_history_partition=True), DATE, [],
             datetime(2020, 5, 21), first_time=True)
