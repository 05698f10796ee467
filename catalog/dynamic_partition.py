"""Dynamic partition rules: what partitions a dynamic table should gain and lose at a given time.

Pure functions of (rule, partition column type, existing partitions, now): no catalog, no clock,
no I/O. `plan` is the body of one scheduler pass for one table; `catalog/dynamic_scheduler.py`
applies its result; `prepare_create` checks a new table's rule and plans its first partitions
for `Catalog.create_table`. Seed 001 is the specification:

- A range for offset i (0 = the current unit) starts at `border(i)` and ends at `border(i + 1)`:
  HOUR: the hour of now + i hours; DAY: the day of now + i days; WEEK: the week of now + i
  weeks, moved to its `start_day_of_week` (Doris moves within the ISO week, Monday = 1);
  MONTH: the `start_day_of_month` of the month of now + i months (one month earlier while today
  is before that day); YEAR: January 1st of the year of now + i years. DATE columns get
  `yyyy-MM-dd` bounds, DATETIME columns `yyyy-MM-dd HH:mm:ss` (00:00:00 but for HOUR), integer
  columns `yyyyMMdd`.
- A partition is named prefix + the lower bound as yyyyMMddHH, yyyyMMdd, yyyy_ww, yyyyMM or
  yyyy. The week number is Java's Calendar WEEK_OF_YEAR (weeks start on Sunday, week 1 holds
  January 1st); a late-December week that Java calls week 1 is week 53 of its own year
  (2019-12-31 -> 2019_53, 2020-01-01 -> 2020_01).
- Creation covers offsets 0..end, or effective_start..end with create_history_partition. A range
  that intersects an existing partition keeps that partition and creates nothing (a conflict
  unless the ranges are equal).
- With `start` set, partitions entirely before border(start) are dropped unless they intersect a
  reserved_history_periods range; partitions after `end` are kept.

`now` is an aware datetime (converted to the rule's time zone) or a naive one, taken as the wall
time in the rule's zone (what tests and ADMIN SET DYNAMIC PARTITION TIME inject). Shortcut:
HOUR offsets are added to the wall time, so a DST change shifts them by the change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from catalog.dynamic_periods import parse_periods
from catalog.dynamic_properties import (MIN_START, PREFIX, DynamicProperty, analyze,
                                        effective_start, has_dynamic, read)
from catalog.errors import DdlError
from catalog.model import OlapTable
from catalog.partitions import format_range
from catalog.values import parse_value
from storage.types import DataType

Key = object  # a typed bound: date, datetime or int; None below means MIN (lower) / MAX (upper)


@dataclass
class RangeItem:
    """An existing partition: its name and typed bounds."""

    name: str
    lower: Key | None
    upper: Key | None
    lower_text: list = field(default_factory=list)
    upper_text: list = field(default_factory=list)


@dataclass
class NewPartition:
    name: str
    lower: str
    upper: str


@dataclass
class DynamicPlan:
    """One pass over one table. `create_events` are Doris's runtime message updates in order:
    a message records a conflict, None clears the last one (an equal range already there)."""

    add: list[NewPartition] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)
    create_events: list[str | None] = field(default_factory=list)
    drop_error: str | None = None


class RangeError(Exception):
    """A border fell outside the representable dates (start or end too far)."""


# -- borders and names --------------------------------------------------------------------------
def local_now(now: datetime, prop: DynamicProperty) -> datetime:
    if now.tzinfo is None:
        return now
    return now.astimezone(prop.tz).replace(tzinfo=None)


def border(prop: DynamicProperty, local: datetime, offset: int) -> datetime:
    """The start of the range `offset` units away from the one holding `local`."""
    try:
        if prop.time_unit == "HOUR":
            return (local + timedelta(hours=offset)).replace(minute=0, second=0, microsecond=0)
        day = local.replace(hour=0, minute=0, second=0, microsecond=0)
        if prop.time_unit == "DAY":
            return day + timedelta(days=offset)
        if prop.time_unit == "WEEK":
            moved = day + timedelta(weeks=offset)
            return moved + timedelta(days=prop.start_day_of_week - moved.isoweekday())
        if prop.time_unit == "MONTH":
            real = offset - 1 if local.day < prop.start_day_of_month else offset
            months = day.year * 12 + day.month - 1 + real
            return day.replace(year=months // 12, month=months % 12 + 1,
                               day=prop.start_day_of_month)
        return day.replace(year=day.year + offset, month=1, day=1)
    except (OverflowError, ValueError) as e:
        raise RangeError(str(e)) from None


def bound_text(moment: datetime, kind: str) -> str:
    if kind == "DATE":
        return moment.strftime("%Y-%m-%d")
    if kind == "DATETIME":
        return moment.strftime("%Y-%m-%d %H:%M:%S")
    return moment.strftime("%Y%m%d")


def java_week_of_year(d: date) -> int:
    """java.util.Calendar WEEK_OF_YEAR in en_US: Sunday-first weeks, week 1 holds January 1."""
    week_start = d - timedelta(days=d.isoweekday() % 7)
    if week_start + timedelta(days=6) >= date(d.year + 1, 1, 1):
        return 1
    jan1 = date(d.year, 1, 1)
    first_start = jan1 - timedelta(days=jan1.isoweekday() % 7)
    return (week_start - first_start).days // 7 + 1


def name_suffix(moment: datetime, time_unit: str) -> str:
    if time_unit == "HOUR":
        return moment.strftime("%Y%m%d%H")
    if time_unit == "DAY":
        return moment.strftime("%Y%m%d")
    if time_unit == "MONTH":
        return moment.strftime("%Y%m")
    if time_unit == "YEAR":
        return moment.strftime("%Y")
    week = java_week_of_year(moment.date())
    if week <= 1 and moment.month == 12:
        week += 52  # Doris: the week holding next January 1st is week 53 of this year
    return f"{moment.year}_{week:02d}"


def partition_name(prop: DynamicProperty, moment: datetime) -> str:
    return prop.prefix + name_suffix(moment, prop.time_unit)


# -- typed keys ---------------------------------------------------------------------------------
def to_key(moment: datetime, kind: str) -> Key:
    if kind == "DATE":
        return moment.date()
    if kind == "DATETIME":
        return moment
    return int(moment.strftime("%Y%m%d"))


def items_of(table: OlapTable) -> list[RangeItem]:
    """A single-column RANGE table's partitions as typed ranges."""
    t = table.column(table.partition_info.columns[0]).type
    out = []
    for p in table.sorted_partitions():
        lower = parse_value(t, p.lower[0]) if p.lower and p.lower[0] is not None else None
        upper = parse_value(t, p.upper[0]) if p.upper and p.upper[0] is not None else None
        out.append(RangeItem(p.name, lower, upper, list(p.lower or []), list(p.upper or [])))
    return out


def _intersects(a_lo: Key | None, a_hi: Key | None, b_lo: Key | None, b_hi: Key | None) -> bool:
    """[a_lo, a_hi) and [b_lo, b_hi) overlap; None is MIN for lows and MAX for highs."""
    return (a_lo is None or b_hi is None or a_lo < b_hi) and \
        (b_lo is None or a_hi is None or b_lo < a_hi)


# -- the plan -----------------------------------------------------------------------------------
def plan(prop: DynamicProperty, column_type: DataType, items: list[RangeItem],
         now: datetime, first_time: bool = False) -> DynamicPlan:
    """What one scheduler pass does to the table at `now`. With `first_time` (CREATE TABLE) a
    conflict or an impossible range raises DdlError instead of being recorded."""
    kind = column_type.kind
    local = local_now(now, prop)
    result = DynamicPlan()
    first = effective_start(prop.start, prop.history_partition_num, prop.create_history_partition)
    placed = list(items)
    names = {i.name.lower() for i in items}
    for offset in range(first, prop.end + 1):
        try:
            lo, hi = border(prop, local, offset), border(prop, local, offset + 1)
        except RangeError as e:
            if first_time:
                raise DdlError(f"maybe dynamic_partition.start is too small, error: {e}") from None
            continue
        new = RangeItem(partition_name(prop, lo), to_key(lo, kind), to_key(hi, kind),
                        [bound_text(lo, kind)], [bound_text(hi, kind)])
        clash = next((i for i in placed if _intersects(new.lower, new.upper, i.lower, i.upper)),
                     None)
        if clash is not None:
            if (clash.lower, clash.upper) == (new.lower, new.upper):
                result.create_events.append(None)
                continue
            message = (f"Range {format_range([column_type], new.lower_text, new.upper_text)} is "
                       f"intersected with range: "
                       f"{format_range([column_type], clash.lower_text, clash.upper_text)}")
            if first_time:
                raise DdlError(message)
            result.create_events.append(message)
            continue
        if new.name.lower() in names:
            if first_time:
                raise DdlError(f"Duplicate partition name {new.name}")
            result.create_events.append(f"Duplicate partition name {new.name}")
            continue
        placed.append(new)
        names.add(new.name.lower())
        result.add.append(NewPartition(new.name, new.lower_text[0], new.upper_text[0]))
    _plan_drops(prop, kind, items, local, result)
    return result


def _plan_drops(prop: DynamicProperty, kind: str, items: list[RangeItem], local: datetime,
                result: DynamicPlan) -> None:
    if prop.start == MIN_START:
        return  # start not set: never drop
    try:
        keep_from = to_key(border(prop, local, prop.start), kind)
    except RangeError as e:
        result.drop_error = (f"'dynamic_partition.start' = {prop.start}, maybe it's too small, "
                             f"can use alter table sql to increase it. , error: {e}")
        return
    reserved: list[tuple[Key, Key]] = []
    for a, b in parse_periods(prop.reserved_history_periods, prop.time_unit):
        reserved.append((_period_key(a, kind), _period_key(b, kind)))
    for item in sorted(items, key=lambda i: (i.upper is None, i.upper)):
        if item.upper is None or item.upper > keep_from:
            continue
        if any((item.lower is None or item.lower <= b) and a < item.upper for a, b in reserved):
            continue
        result.drop.append(item.name)


def _period_key(moment: datetime, kind: str) -> Key:
    """A reserved period end as the partition format shows it (minutes and seconds dropped)."""
    return to_key(moment.replace(minute=0, second=0), kind)


def prepare_create(table: OlapTable, now: datetime, max_partitions: int,
                   backend_num: int) -> tuple[DynamicProperty, DynamicPlan] | None:
    """CREATE TABLE with dynamic_partition.* properties: check them, store them normalised in
    the table's properties, and plan the partitions the table starts with (at `now`, against
    its explicit partitions; a conflict fails the statement). None without such properties;
    an empty plan while the rule is disabled."""
    if not has_dynamic(table.properties):
        return None
    if table.partition_info.kind != "RANGE":  # InternalCatalog.createOlapTable's check
        raise DdlError("Only support dynamic partition properties on range partition table")
    given = {k: v for k, v in table.properties.items() if k.startswith(PREFIX)}
    for key in given:
        del table.properties[key]
    table.properties.update(analyze(table, given, backend_num, max_partitions))
    prop = read(table.properties)
    if not prop.enable:
        return prop, DynamicPlan()
    column_type = table.column(table.partition_info.columns[0]).type
    return prop, plan(prop, column_type, items_of(table), now, first_time=True)
