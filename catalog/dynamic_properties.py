"""Dynamic partition properties: the `dynamic_partition.*` table properties, checked as Doris
checks them (DynamicPartitionUtil), with their defaults, and read back as one typed object.

A table's dynamic partition rule lives in its `properties` (journaled with the table), stored
normalised by `analyze` in Doris's order and spelling, so SHOW CREATE TABLE prints it as Doris
does. `analyze` serves CREATE TABLE (`existing` is None: time_unit, prefix and end are required,
the rest get defaults) and ALTER TABLE SET (the new values are merged over the stored ones and
the whole rule is checked again). Every error names the property and carries Doris's error
number (5065-5079) where Doris gives one.

    property                    default                   check
    enable                      true                      true | false
    time_unit                   (required)                HOUR DAY WEEK MONTH YEAR; no HOUR on DATE
    time_zone                   the system's zone         an IANA name or +hh:mm
    start                       -2147483648 (no drops)    an int < 0
    end                         (required)                an int > 0
    prefix                      (required)                a partition name
    buckets                     the table's buckets       an int > 0
    replication_num             the table's replicas      an int > 0, <= backends
    start_day_of_week           1 (Monday)                1..7
    start_day_of_month          1                         1..28
    create_history_partition    false                     true | false
    history_partition_num       -1 (not set)              -1 or >= 0
    reserved_history_periods    NULL                      [yyyy-MM-dd,yyyy-MM-dd],... (HOUR: with times)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from catalog.dynamic_periods import NOT_SET_PERIODS, check_reserved_periods
from catalog.errors import CodedDdlError, DdlError
from catalog.model import OlapTable

PREFIX = "dynamic_partition."
MIN_START = -(2**31)
NOT_SET_HISTORY_NUM = -1
TIME_UNITS = ("HOUR", "DAY", "WEEK", "MONTH", "YEAR")
SUPPORTED_KINDS = ("DATE", "DATETIME", "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT")
_INT32 = re.compile(r"^[+-]?\d{1,10}$")
_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")
_DAY_NAMES = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")

# Stored keys in Doris's order (DynamicPartitionProperty.getProperties).
KEYS = ("enable", "time_unit", "time_zone", "start", "end", "prefix", "replication_allocation",
        "buckets", "create_history_partition", "history_partition_num", "hot_partition_num",
        "reserved_history_periods", "storage_medium", "start_day_of_week", "start_day_of_month")
ACCEPTED = frozenset(KEYS) | {"replication_num", "storage_policy"}


@dataclass
class DynamicProperty:
    """A table's dynamic partition rule, typed."""

    enable: bool
    time_unit: str
    time_zone: str
    start: int
    end: int
    prefix: str
    buckets: int
    replication_num: int | None = None  # None: the table's replication_num
    create_history_partition: bool = False
    history_partition_num: int = NOT_SET_HISTORY_NUM
    hot_partition_num: int = 0
    reserved_history_periods: str = NOT_SET_PERIODS
    storage_medium: str = ""
    start_day_of_week: int = 1
    start_day_of_month: int = 1

    @property
    def tz(self) -> tzinfo:
        return zone(self.time_zone)

    def start_of_text(self) -> str:
        """SHOW DYNAMIC PARTITION TABLES' StartOf: MONDAY, 3rd, or N/A."""
        if self.time_unit == "WEEK":
            return _DAY_NAMES[self.start_day_of_week - 1]
        if self.time_unit == "MONTH":
            return ordinal(self.start_day_of_month)
        return "N/A"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# -- time zones ---------------------------------------------------------------------------------
def system_time_zone() -> str:
    """The machine's zone name, as the JVM finds it: $TZ, /etc/localtime's link, /etc/timezone."""
    env = os.environ.get("TZ", "").lstrip(":")
    if env and _valid_zone(env):
        return env
    link = Path("/etc/localtime")
    if link.is_symlink():
        target = str(link.resolve())
        if "zoneinfo/" in target and _valid_zone(target.split("zoneinfo/", 1)[1]):
            return target.split("zoneinfo/", 1)[1]
    try:
        name = Path("/etc/timezone").read_text().strip()
        if _valid_zone(name):
            return name
    except OSError:
        pass
    return "UTC"


def _valid_zone(name: str) -> bool:
    try:
        zone(name)
        return True
    except DdlError:
        return False


def zone(name: str) -> tzinfo:
    """An IANA zone or a fixed `+hh:mm` offset; Doris's error for anything else."""
    m = re.fullmatch(r"([+-])(\d{1,2}):(\d{2})", name.strip())
    if m:
        hours, minutes = int(m.group(2)), int(m.group(3))
        if hours <= 14 and minutes < 60:
            sign = 1 if m.group(1) == "+" else -1
            return timezone(sign * timedelta(hours=hours, minutes=minutes))
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise CodedDdlError(f"Unknown or incorrect time zone: '{name}'", 1298, "HY000") from None


# -- reading stored properties ------------------------------------------------------------------
def has_dynamic(properties: dict[str, str]) -> bool:
    return any(k.startswith(PREFIX) for k in properties)


def dynamic_items(properties: dict[str, str]) -> dict[str, str]:
    """The dynamic partition properties without their prefix."""
    return {k[len(PREFIX):]: v for k, v in properties.items() if k.startswith(PREFIX)}


def read(properties: dict[str, str]) -> DynamicProperty | None:
    """The rule stored by `analyze` in a table's properties, or None."""
    d = dynamic_items(properties)
    if "time_unit" not in d:
        return None
    replicas = d.get("replication_allocation")
    return DynamicProperty(
        enable=d.get("enable", "true").lower() == "true", time_unit=d["time_unit"].upper(),
        time_zone=d.get("time_zone", "UTC"), start=int(d.get("start", MIN_START)),
        end=int(d["end"]), prefix=d["prefix"], buckets=int(d["buckets"]),
        replication_num=int(replicas.rsplit(":", 1)[1]) if replicas else None,
        create_history_partition=d.get("create_history_partition", "false").lower() == "true",
        history_partition_num=int(d.get("history_partition_num", NOT_SET_HISTORY_NUM)),
        hot_partition_num=int(d.get("hot_partition_num", 0)),
        reserved_history_periods=d.get("reserved_history_periods", NOT_SET_PERIODS),
        storage_medium=d.get("storage_medium", ""),
        start_day_of_week=int(d.get("start_day_of_week", 1)),
        start_day_of_month=int(d.get("start_day_of_month", 1)))


# -- analysis -----------------------------------------------------------------------------------
def check_keys(properties: dict[str, str]) -> None:
    bad = [k for k in properties if k.startswith(PREFIX) and k[len(PREFIX):] not in ACCEPTED]
    if bad:
        raise DdlError(f"Invalid dynamic partition properties: {', '.join(bad)}")


def analyze(table: OlapTable, given: dict[str, str], backend_num: int,
            max_partitions: int) -> dict[str, str]:
    """The table's complete, checked dynamic partition properties (prefixed keys, Doris's
    order) after applying `given` (prefixed keys) over what the table already has."""
    check_keys(given)
    info = table.partition_info
    if info.kind != "RANGE" or len(info.columns) != 1:
        raise DdlError("Dynamic partition only support single-column range partition")
    existing = dynamic_items(table.properties)
    merged = {**existing, **dynamic_items(given)}
    if not existing:
        _fill_defaults(merged, table)
    column = table.column(info.columns[0])
    out = _check_all(merged, column.name, column.type.kind, backend_num, max_partitions)
    return {PREFIX + k: out[k] for k in KEYS if k in out}


def _fill_defaults(d: dict[str, str], table: OlapTable) -> None:
    """Doris's checkInputDynamicPartitionProperties: required keys, then defaults."""
    d.setdefault("enable", "true")
    for required in ("time_unit", "prefix"):
        if not d.get(required):
            raise DdlError(f"Must assign dynamic_partition.{required} properties")
    d.setdefault("start", str(MIN_START))
    if not d.get("end"):
        raise DdlError("Must assign dynamic_partition.end properties")
    d.setdefault("buckets", str(table.distribution.buckets))
    d.setdefault("time_zone", system_time_zone())
    d.setdefault("create_history_partition", "false")
    d.setdefault("history_partition_num", str(NOT_SET_HISTORY_NUM))
    d.setdefault("reserved_history_periods", NOT_SET_PERIODS)


def _check_all(d: dict[str, str], column: str, kind: str, backend_num: int,
               max_partitions: int) -> dict[str, str]:
    out = dict(d)
    out["time_unit"] = _check_time_unit(d["time_unit"], column, kind)
    if not _NAME.match(d["prefix"]):
        raise CodedDdlError(f"Invalid dynamic partition prefix: {d['prefix']}.", 5069)
    _check_positive(d["buckets"], "buckets", 5067)
    out["enable"] = _check_bool(d["enable"], "Invalid dynamic partition enable: {}. "
                                "Expected true or false", 5068)
    start = _check_start(d["start"])
    end = _check_end(d["end"])
    history = out["create_history_partition"] = _check_bool(
        d["create_history_partition"],
        "Invalid dynamic partition create_history_partition: {}. Expected true or false", 5074)
    history_num = _check_history_num(d["history_partition_num"])
    expect = end - effective_start(start, history_num, history == "true")
    if out["enable"] == "true" and expect > max_partitions:
        raise DdlError(f"Too many dynamic partitions: {expect}. Limit: {max_partitions}")
    for key, lo, hi in (("start_day_of_month", 1, 28), ("start_day_of_week", 1, 7)):
        if key in d:
            _check_between(d[key], key, lo, hi)
    zone(d["time_zone"])
    if "hot_partition_num" in d:
        _check_hot(d["hot_partition_num"])
    _check_replication(out, backend_num)
    if "storage_medium" in d and d["storage_medium"].upper() not in ("SSD", "HDD"):
        raise DdlError(f"invalid storage medium: {d['storage_medium']}. Should be SSD or HDD")
    if out.pop("storage_policy", ""):
        raise DdlError(f"dynamic_partition.storage_policy: {d['storage_policy']} doesn't exist.")
    check_reserved_periods(d["reserved_history_periods"], out["time_unit"])
    return out


def effective_start(start: int, history_num: int, create_history: bool) -> int:
    """Where creation starts, as an offset: 0 without history partitions, else
    max(start, -history_partition_num). With neither start nor history_partition_num set,
    create_history_partition has no effect (seed 001)."""
    if not create_history:
        return 0
    if history_num == NOT_SET_HISTORY_NUM:
        return 0 if start == MIN_START else start
    return max(start, -history_num)


def _check_time_unit(value: str, column: str, kind: str) -> str:
    unit = value.upper()
    if unit not in TIME_UNITS:
        raise CodedDdlError(f"Unsupported time unit {value}. Expect HOUR/DAY/WEEK/MONTH/YEAR.",
                            5065)
    if kind not in SUPPORTED_KINDS:
        raise DdlError("Dynamic Partition Only Support DATE, DATETIME and INTEGER Type Now.")
    if unit == "HOUR" and kind == "DATE":
        raise DdlError(f"dynamic_partition.time_unit could not be HOUR when type of partition "
                       f"column {column} is DATE or DATEV2")
    if unit == "HOUR" and kind != "DATETIME":
        raise DdlError(f"dynamic_partition.time_unit could not be HOUR when type of partition "
                       f"column {column} is Integer")
    return unit


def _int(value: str) -> int:
    if not _INT32.match(value or "") or not MIN_START <= int(value) < 2**31:
        raise ValueError(value)
    return int(value)


def _check_bool(value: str, message: str, code: int) -> str:
    if (value or "").lower() not in ("true", "false"):
        raise CodedDdlError(message.format(value), code)
    return value.lower()


def _check_positive(value: str, name: str, code: int) -> None:
    if not value:
        raise CodedDdlError(f"Dynamic partition {name} is empty", 5066)
    try:
        n = _int(value)
    except ValueError:
        raise CodedDdlError(f"Invalid dynamic partition {name} {value}", code) from None
    if n <= 0:
        raise CodedDdlError(f"Dynamic partition {name} must greater than 0", code)


def _check_start(value: str) -> int:
    try:
        n = _int(value)
    except ValueError:
        raise CodedDdlError(f"Invalid dynamic partition start {value}", 5066) from None
    if n >= 0:
        raise CodedDdlError("Dynamic partition start must less than 0", 5066)
    return n


def _check_end(value: str) -> int:
    if not value:
        raise CodedDdlError("Dynamic partition end is empty", 5066)
    try:
        n = _int(value)
    except ValueError:
        raise CodedDdlError(f"Invalid dynamic partition end {value}", 5066) from None
    if n <= 0:
        raise CodedDdlError("Dynamic partition end must greater than 0", 5066)
    return n


def _check_history_num(value: str) -> int:
    try:
        n = _int(value)
    except ValueError:
        raise DdlError("Invalid properties: dynamic_partition.history_partition_num") from None
    if n < 0 and n != NOT_SET_HISTORY_NUM:
        raise CodedDdlError("Dynamic history partition num must greater than 0", 5075)
    return n


def _check_between(value: str, key: str, lo: int, hi: int) -> None:
    try:
        n = _int(value)
    except ValueError:
        raise DdlError(f"Invalid properties: dynamic_partition.{key}") from None
    if not lo <= n <= hi:
        raise DdlError(f"dynamic_partition.{key} should between {lo} and {hi}")


def _check_hot(value: str) -> None:
    try:
        n = _int(value)
    except ValueError:
        raise DdlError("Invalid dynamic_partition.hot_partition_num value") from None
    if n < 0:
        raise DdlError("dynamic_partition.hot_partition_num must larger than 0.")


def _check_replication(out: dict[str, str], backend_num: int) -> None:
    """replication_num (or replication_allocation) becomes replication_allocation."""
    raw = out.pop("replication_num", None)
    alloc = out.get("replication_allocation")
    if raw is None and alloc is None:
        return
    if raw is None:
        raw = alloc.rsplit(":", 1)[-1].strip()
    try:
        n = _int(raw)
    except ValueError:
        raise CodedDdlError(f"Invalid dynamic partition replication num: {raw}.", 5072) from None
    if n <= 0:
        raise CodedDdlError("Dynamic partition replication num must greater than 0", 5071)
    if n > backend_num:
        raise DdlError(
            "Failed to find enough backend, please check the replication num,replication tag and "
            "storage medium and avail capacity of backends.\nCreate failed replications:\n"
            "replication tag: {\"location\" : \"default\"}, "
            f"replication num: {n}, storage medium: HDD")
    out["replication_allocation"] = f"tag.location.default: {n}"
