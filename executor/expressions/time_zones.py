"""Time-zone names as Doris reads them: which `SET time_zone` values are valid and how they are
stored (`standardize`: FE TimeUtils.checkTimeZoneValidAndStandardize), and the zone a stored
name stands for when a statement evaluates NOW(), UNIX_TIMESTAMP, FROM_UNIXTIME, CONVERT_TZ
(`arrow_zone`: an IANA name or a fixed `+hh:mm` offset, both understood by Arrow), and the zones
CONVERT_TZ's arguments name (`convert_tz_zone`: the BE's own lookup).

Doris accepts a fixed offset `[+-]h[h]:mm` between -12:00 and +14:00 (stored as `+05:30`,
`+5:00` -> `+05:00`), `GMT` / `UTC` followed by such an offset, any IANA region name (it has a
`/`), and the aliases of Java's ZoneId.SHORT_IDS with CST and PRC meaning Asia/Shanghai, UTC and
GMT meaning UTC (case-insensitive); anything else is `Unknown or incorrect time zone` (1298).
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import timedelta, timezone, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_OFFSET = re.compile(r"([+-]?)(\d{1,2}):(\d{2})")
_ALIASES = {
    "CST": "Asia/Shanghai", "PRC": "Asia/Shanghai", "SYSTEM": "Asia/Shanghai",
    "UTC": "UTC", "GMT": "UTC", "Z": "UTC",
    "EST": "-05:00", "MST": "-07:00", "HST": "-10:00", "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires", "ART": "Africa/Cairo",
    "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
}


class UnknownTimeZone(ValueError):
    """A name Doris does not accept as a time zone; its text is Doris's message."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Unknown or incorrect time zone: '{name}'")


def _offset(text: str) -> str | None:
    """`+hh:mm` for an offset text Doris accepts, None when the text is no offset."""
    m = _OFFSET.fullmatch(text)
    if m is None:
        return None
    sign = "-" if m.group(1) == "-" else "+"
    hours, minutes = int(m.group(2)), int(m.group(3))
    value = f"{sign}{hours:02d}:{minutes:02d}"
    if hours * 100 + minutes > (1200 if sign == "-" else 1400) or minutes >= 60:
        raise UnknownTimeZone(value)
    return value


def standardize(name: str) -> str:
    """The value `SET time_zone = name` stores; UnknownTimeZone for a name Doris refuses."""
    offset = _offset(name)
    if offset is not None:
        return offset
    if "/" not in name and name.upper() not in _ALIASES:
        if name[:3] in ("GMT", "UTC") and _OFFSET.fullmatch(name[3:]):
            return name[:3] + (_offset(name[3:]) or "")
        raise UnknownTimeZone(name)
    arrow_zone(name)
    return name


def arrow_zone(name: str) -> str:
    """The IANA name or `+hh:mm` offset a stored time-zone name stands for."""
    offset = _offset(name)
    if offset is not None:
        return offset
    alias = _ALIASES.get(name.upper())
    if alias is not None:
        return alias
    if name[:3] in ("GMT", "UTC") and _OFFSET.fullmatch(name[3:]):
        return _offset(name[3:]) or "UTC"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UnknownTimeZone(name) from None
    return name


def tz_of(key: str) -> tzinfo:
    """A Python tzinfo for an `arrow_zone` key."""
    m = _OFFSET.fullmatch(key)
    if m is None:
        return ZoneInfo(key)
    delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
    return timezone(-delta if m.group(1) == "-" else delta)


_BE_OFFSET = re.compile(r"[+-]\d{2}:\d{2}")


@lru_cache(maxsize=1)
def _iana_by_lower() -> dict[str, str]:
    return {name.lower(): name for name in zoneinfo.available_timezones()}


def convert_tz_zone(name: str) -> str | None:
    """The zone a CONVERT_TZ argument names, as Doris's BE looks it up: an IANA name in any case
    ('america/new_york'), CST for Asia/Shanghai, a `+hh:mm` offset with two-digit hours; None
    (the call gives NULL) for anything else ('+8:00', 'PST')."""
    if _BE_OFFSET.fullmatch(name):
        return name
    if name.lower() == "cst":
        return "Asia/Shanghai"
    return _iana_by_lower().get(name.lower())
