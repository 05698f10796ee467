"""Calendar arithmetic on Arrow temporal arrays: parsing strings, composing values from parts,
splitting values into parts, and MySQL's DATE_FORMAT / STR_TO_DATE format language.

Everything is vectorised with numpy over int64 microseconds (DATETIME -> timestamp[us]) or int32
days (DATE -> date32); the Gregorian calendar is proleptic and valid from 0000-01-01 to
9999-12-31 (Doris's range); anything outside or invalid (2020-02-30) becomes NULL, as in Doris's
non-strict casts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.errors import ExpressionError
from executor.expressions.vectors import to_numpy, valid_mask

US_PER_SECOND = 1_000_000
US_PER_DAY = 86_400 * US_PER_SECOND
TIMESTAMP = pa.timestamp("us")
DATE = pa.date32()

MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December"]
DAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# Doris accepts '-', '/' or '.' between date parts, 'T' or spaces before the time, and 1-2 digit
# month/day/hour/minute/second; plus the compact YYYYMMDD[HHMMSS] forms.
_DELIMITED = (r"^\s*(?P<y>\d{4}|\d{2})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})"
              r"(?:(?:[Tt]|\s+)(?P<H>\d{1,2}):(?P<M>\d{1,2})(?::(?P<S>\d{1,2})"
              r"(?:\.(?P<f>\d*))?)?)?\s*$")
_COMPACT = (r"^\s*(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})"
            r"(?:[Tt]?(?P<H>\d{2})(?P<M>\d{2})(?P<S>\d{2})(?:\.(?P<f>\d*))?)?\s*$")
# YYMMDD and YYMMDDHHMMSS: a two-digit year, as MySQL and Doris read 6 and 12 digits.
_COMPACT_YY = (r"^\s*(?P<y>\d{2})(?P<m>\d{2})(?P<d>\d{2})"
               r"(?:(?P<H>\d{2})(?P<M>\d{2})(?P<S>\d{2})(?:\.(?P<f>\d*))?)?\s*$")


# -- days <-> civil dates -------------------------------------------------------------------------
# Howard Hinnant's integer algorithms (chrono-Compatible Low-Level Date Algorithms): plain numpy
# integer arithmetic, several times faster than numpy datetime64 unit conversions.
def civil_from_days(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of day numbers counted from 1970-01-01 (int32: every intermediate fits,
    and int32 division is several times faster than int64 in numpy)."""
    z = days.astype(np.int32) + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1_460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year.astype(np.int64), month.astype(np.int64), day.astype(np.int64)


def days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Day numbers (from 1970-01-01) of (year, month 1..12, day) triples."""
    y = year.astype(np.int32) - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * np.where(month > 2, month - 3, month + 9) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return (era * 146_097 + doe - 719_468).astype(np.int64)


def _normalize_month(year: np.ndarray, month: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    total = year.astype(np.int32) * 12 + (month.astype(np.int32) - 1)
    return np.floor_divide(total, 12), total % 12 + 1


def month_start_days(year: np.ndarray, month: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of the first day of (year, month); month may run past 1..12."""
    y, m = _normalize_month(year, month)
    return days_from_civil(y, m, np.ones_like(m))


_DAYS_IN_MONTH = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int32)


def days_in_month(year: np.ndarray, month: np.ndarray) -> np.ndarray:
    y, m = _normalize_month(year, month)
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    return (_DAYS_IN_MONTH[m] + ((m == 2) & leap)).astype(np.int64)


@dataclass
class Parts:
    """A temporal array split into numpy parts (nulls filled with 1970-01-01 00:00:00)."""

    days: np.ndarray      # days since epoch
    micros: np.ndarray    # microseconds since midnight
    valid: np.ndarray

    @cached_property
    def _civil(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return civil_from_days(self.days)

    @property
    def year(self) -> np.ndarray:
        return self._civil[0]

    @property
    def month(self) -> np.ndarray:
        return self._civil[1]

    @property
    def day(self) -> np.ndarray:
        return self._civil[2]

    @property
    def day_of_year(self) -> np.ndarray:
        return self.days - month_start_days(self.year, np.ones_like(self.year)) + 1

    @property
    def weekday(self) -> np.ndarray:
        """0 = Monday .. 6 = Sunday (1970-01-01 was a Thursday)."""
        return (self.days + 3) % 7

    @property
    def hour(self) -> np.ndarray:
        return self.micros // (3600 * US_PER_SECOND)

    @property
    def minute(self) -> np.ndarray:
        return self.micros // (60 * US_PER_SECOND) % 60

    @property
    def second(self) -> np.ndarray:
        return self.micros // US_PER_SECOND % 60

    @property
    def microsecond(self) -> np.ndarray:
        return self.micros % US_PER_SECOND


def split(arr: pa.Array) -> Parts:
    """Split a date32 or timestamp array into day number and time of day."""
    valid = valid_mask(arr)
    if pa.types.is_date32(arr.type):
        days = to_numpy(arr.cast(pa.int32()), 0).astype(np.int64)
        return Parts(days, np.zeros(len(arr), dtype=np.int64), valid)
    us = to_numpy(arr.cast(TIMESTAMP).cast(pa.int64()), 0)
    days = us // US_PER_DAY
    return Parts(days, us - days * US_PER_DAY, valid)


def compose(year: np.ndarray, month: np.ndarray, day: np.ndarray, hour: np.ndarray,
            minute: np.ndarray, second: np.ndarray, micro: np.ndarray,
            valid: np.ndarray) -> pa.Array:
    """Build timestamp[us] from parts; out-of-range parts make the row NULL."""
    valid = (valid & (year >= 0) & (year <= 9999) & (month >= 1) & (month <= 12) & (day >= 1)
             & (hour >= 0) & (hour <= 23) & (minute >= 0) & (minute <= 59)
             & (second >= 0) & (second <= 59) & (micro >= 0) & (micro < US_PER_SECOND))
    y = np.where(valid, year, 1970)
    m = np.where(valid, month, 1)
    valid &= day <= days_in_month(y, m)
    days = month_start_days(y, m) + np.where(valid, day, 1) - 1
    us = days * US_PER_DAY + ((hour * 60 + minute) * 60 + second) * US_PER_SECOND + micro
    us = np.where(valid, us, 0)
    return pa.array(us, type=TIMESTAMP, mask=None if valid.all() else ~valid)


def in_range(days: np.ndarray) -> np.ndarray:
    """True where a day number lies within 0000-01-01 .. 9999-12-31."""
    return (days >= MIN_DAY) & (days <= MAX_DAY)


MIN_DAY = int(days_from_civil(np.array([0]), np.array([1]), np.array([1]))[0])
MAX_DAY = int(days_from_civil(np.array([9999]), np.array([12]), np.array([31]))[0])


def from_days_micros(days: np.ndarray, micros: np.ndarray, valid: np.ndarray,
                     as_date: bool) -> pa.Array:
    valid = valid & in_range(days)
    mask = None if valid.all() else ~valid
    if as_date:
        return pa.array(np.where(valid, days, 0).astype(np.int32), type=pa.int32(),
                        mask=mask).cast(DATE)
    us = np.where(valid, days * US_PER_DAY + micros, 0)
    return pa.array(us, type=pa.int64(), mask=mask).cast(TIMESTAMP)


# -- strings -> temporal ---------------------------------------------------------------------------
def parse_datetime(strings: pa.Array) -> pa.Array:
    """Parse strings into timestamp[us]; unparseable or invalid values become NULL."""
    if len(strings) == 0:
        return pa.array([], type=TIMESTAMP)
    try:
        return pc.cast(strings, TIMESTAMP)  # fast path: clean ISO text
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    parts = None
    for pattern in (_DELIMITED, _COMPACT, _COMPACT_YY):
        extracted = pc.extract_regex(strings, pattern=pattern)
        fields = _fields(extracted, "ymdHMSf")
        # A two-digit year is 2000-2069 for 00-69 and 1970-1999 for 70-99 (MySQL's rule).
        short = to_numpy(pc.equal(pc.utf8_length(extracted.field("y")), 2), False)
        fields["y"] = np.where(short, fields["y"] + np.where(fields["y"] < 70, 2000, 1900),
                               fields["y"])
        if parts is None:
            parts = fields
        else:
            use = fields["valid"]
            parts = {k: np.where(use, fields[k], parts[k]) for k in fields}
            parts["valid"] = use | parts["valid"]
    assert parts is not None
    return compose(parts["y"], parts["m"], parts["d"], parts["H"], parts["M"], parts["S"],
                   parts["f"], parts["valid"])


def _fields(extracted: pa.StructArray, names: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {"valid": valid_mask(extracted)}
    for name in names:
        text = extracted.field(name)
        if name == "f":
            text = pc.utf8_rpad(pc.utf8_slice_codeunits(text, 0, 6), width=6, padding="0")
        else:
            text = pc.if_else(pc.equal(text, ""), "0", text)
        out[name] = to_numpy(pc.cast(text.fill_null("0"), pa.int64()), 0)
    return out


# -- MySQL format language -------------------------------------------------------------------------
def tokenize_format(fmt: str) -> list[tuple[str, str]]:
    """Split a MySQL format into ('spec', letter) and ('text', literal) tokens."""
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%" and i + 1 < len(fmt):
            letter = fmt[i + 1]
            tokens.append(("text", letter) if letter not in _SPECS else ("spec", letter))
            i += 2
        else:
            tokens.append(("text", ch))
            i += 1
    return tokens


_SPECS = set("abcDdefHhIijklMmprSsTUuVvWwXxYy")


# Specifiers that are fixed slices of Arrow's 'YYYY-MM-DD HH:MM:SS' rendering (fast C++ cast),
# and the separators between them there.
_SLICES = {"Y": (0, 4), "m": (5, 7), "d": (8, 10), "H": (11, 13), "i": (14, 16), "s": (17, 19),
           "S": (17, 19), "T": (11, 19)}
_SEPARATORS = {4: "-", 7: "-", 10: " ", 13: ":", 16: ":"}


def canonical_text(arr: pa.Array) -> pa.Array:
    """'YYYY-MM-DD HH:MM:SS' for date32/timestamp values (seconds floored)."""
    if pa.types.is_date32(arr.type):
        arr = arr.cast(pa.timestamp("s"))
    else:
        arr = pc.floor_temporal(arr, unit="second").cast(pa.timestamp("s"))
    return arr.cast(pa.string())


def format_datetime(arr: pa.Array, fmt: str) -> pa.Array:
    """MySQL DATE_FORMAT over a date32/timestamp array (NULL in, NULL out)."""
    parts = split(arr)
    canonical: list[pa.Array] = []
    pieces: list[pa.Array | pa.Scalar | tuple[int, int]] = []
    for kind, value in tokenize_format(fmt):
        last = pieces[-1] if pieces else None
        if kind == "spec" and value in _SLICES:
            start, stop = _SLICES[value]
            if isinstance(last, tuple) and last[1] == start:
                pieces[-1] = (last[0], stop)
            else:
                pieces.append((start, stop))
        elif kind == "text" and isinstance(last, tuple) and _SEPARATORS.get(last[1]) == value:
            pieces[-1] = (last[0], last[1] + 1)
        elif kind == "text":
            pieces.append(pa.scalar(value))
        else:
            pieces.append(_format_spec(value, parts))
    columns: list[pa.Array] = []
    for piece in pieces:
        if isinstance(piece, tuple):
            if not canonical:
                canonical.append(canonical_text(arr))
            columns.append(pc.utf8_slice_codeunits(canonical[0], start=piece[0], stop=piece[1]))
        elif isinstance(piece, pa.Scalar):
            columns.append(pa.repeat(piece, len(arr)))
        else:
            columns.append(piece)
    if not columns:
        result: pa.Array = pa.repeat(pa.scalar(""), len(arr))
    elif len(columns) == 1:
        result = columns[0]
    else:
        result = pc.binary_join_element_wise(*columns, "")
    if parts.valid.all():
        return result
    return pc.if_else(pa.array(parts.valid), result, pa.scalar(None, pa.string()))


def _num(values: np.ndarray, width: int = 0) -> pa.Array:
    text = pa.array(values, type=pa.int64()).cast(pa.string())
    return pc.utf8_lpad(text, width=width, padding="0") if width else text


def _names(names: list[str], index: np.ndarray, length: int = 0) -> pa.Array:
    table = pa.array([n[:length] if length else n for n in names])
    return table.take(pa.array(index))


def _format_spec(letter: str, p: Parts) -> pa.Array:
    if letter == "Y":
        return _num(p.year, 4)
    if letter == "y":
        return _num(p.year % 100, 2)
    if letter in "mc":
        return _num(p.month, 2 if letter == "m" else 0)
    if letter in "de":
        return _num(p.day, 2 if letter == "d" else 0)
    if letter in "Hk":
        return _num(p.hour, 2 if letter == "H" else 0)
    if letter in "hIl":
        return _num((p.hour + 11) % 12 + 1, 0 if letter == "l" else 2)
    if letter == "i":
        return _num(p.minute, 2)
    if letter in "sS":
        return _num(p.second, 2)
    if letter == "f":
        return _num(p.microsecond, 6)
    if letter == "p":
        return _names(["AM", "PM"], (p.hour >= 12).astype(np.int64))
    if letter == "M":
        return _names(MONTH_NAMES, p.month - 1)
    if letter == "b":
        return _names(MONTH_NAMES, p.month - 1, 3)
    if letter == "W":
        return _names(DAY_NAMES, p.weekday)
    if letter == "a":
        return _names(DAY_NAMES, p.weekday, 3)
    if letter == "w":
        return _num((p.weekday + 1) % 7)
    if letter == "j":
        return _num(p.day_of_year, 3)
    if letter == "T":
        return pc.binary_join_element_wise(_num(p.hour, 2), _num(p.minute, 2),
                                           _num(p.second, 2), ":")
    if letter == "r":
        clock = pc.binary_join_element_wise(_num((p.hour + 11) % 12 + 1, 2),
                                            _num(p.minute, 2), _num(p.second, 2), ":")
        return pc.binary_join_element_wise(clock, _format_spec("p", p), " ")
    if letter == "D":
        day = p.day
        teen = (day % 100 >= 11) & (day % 100 <= 13)
        suffix = np.where(teen | (day % 10 > 3), 0, day % 10)
        return pc.binary_join_element_wise(_num(day), _names(["th", "st", "nd", "rd"], suffix), "")
    if letter == "U":
        return _num(week_number(p, 0)[0], 2)
    if letter == "u":
        return _num(week_number(p, 1)[0], 2)
    if letter in "VX":
        week, year = week_number(p, 2)
        return _num(week, 2) if letter == "V" else _num(year, 4)
    if letter in "vx":
        week, year = week_number(p, 3)
        return _num(week, 2) if letter == "v" else _num(year, 4)
    raise ExpressionError(f"Unsupported date format specifier %{letter}")


# MySQL's WEEK modes: (weeks start on Sunday, week 1 is the first with 4+ days of the year
# (else the first holding the week's first day), numbered 1-53 (else 0-53))
_WEEK_MODES = {0: (True, False, False), 1: (False, True, False), 2: (True, False, True),
               3: (False, True, True), 4: (True, True, False), 5: (False, False, False),
               6: (True, True, True), 7: (False, False, True)}


def week_number(p: Parts, mode: int) -> tuple[np.ndarray, np.ndarray]:
    """MySQL WEEK(date, mode) for modes 0-7, with the year the week belongs to.

    Modes 0/2/4/6 start weeks on Sunday, 1/3/5/7 on Monday; in 1/3/4/6 week 1 is the first
    with 4+ days in the year, in the others the first holding the week's first day. Modes
    0/1/4/5 number the days before week 1 as week 0; the others give them the previous
    year's last week, and with the 4-day rule (3, ISO 8601, and 6) late-December days may be
    week 1 of the next year.
    """
    sunday_first, four_days, from_one = _WEEK_MODES[mode]
    year = p.year
    week, base = _week_in_year(p.days, year, sunday_first, four_days)
    if not from_one:
        return week, year
    prev_week, _ = _week_in_year(p.days, year - 1, sunday_first, four_days)
    out_week = np.where(week == 0, prev_week, week)
    out_year = np.where(week == 0, year - 1, year)
    if four_days:
        next_week, next_base = _week_in_year(p.days, year + 1, sunday_first, four_days)
        roll = p.days >= next_base
        out_week = np.where(roll, 1, out_week)
        out_year = np.where(roll, year + 1, out_year)
    return out_week, out_year


def _week_in_year(days: np.ndarray, year: np.ndarray, sunday_first: bool,
                  four_days: bool) -> tuple[np.ndarray, np.ndarray]:
    jan1 = month_start_days(year, np.ones_like(year))
    weekday = (jan1 + (4 if sunday_first else 3)) % 7  # days since the week's first day
    if four_days:
        first = np.where(weekday <= 3, jan1 - weekday, jan1 + 7 - weekday)
    else:
        first = jan1 + (7 - weekday) % 7  # the year's first Sunday / Monday
    week = np.floor_divide(days - first, 7) + 1
    return np.maximum(week, 0), first


# -- STR_TO_DATE -----------------------------------------------------------------------------------
_PARSE_PATTERNS = {
    "Y": r"\d{1,4}", "y": r"\d{1,2}", "m": r"\d{1,2}", "c": r"\d{1,2}", "d": r"\d{1,2}",
    "e": r"\d{1,2}", "H": r"\d{1,2}", "k": r"\d{1,2}", "h": r"\d{1,2}", "I": r"\d{1,2}",
    "l": r"\d{1,2}", "i": r"\d{1,2}", "s": r"\d{1,2}", "S": r"\d{1,2}", "f": r"\d{1,6}",
    "j": r"\d{1,3}", "p": r"(?i:AM|PM)",
    "M": "(?i:" + "|".join(MONTH_NAMES) + ")", "b": "(?i:" + "|".join(n[:3] for n in MONTH_NAMES) + ")",
    "W": "(?i:" + "|".join(DAY_NAMES) + ")", "a": "(?i:" + "|".join(n[:3] for n in DAY_NAMES) + ")",
    "D": r"\d{1,2}(?:st|nd|rd|th)", "w": r"\d", "U": r"\d{1,2}", "u": r"\d{1,2}",
    "V": r"\d{1,2}", "v": r"\d{1,2}", "X": r"\d{4}", "x": r"\d{4}",
}
_EXPAND = {"T": "%H:%i:%s", "r": "%h:%i:%s %p"}
TIME_SPECS = set("HkhIlisSfpTr")


def format_has_time(fmt: str) -> bool:
    return any(k == "spec" and v in TIME_SPECS for k, v in tokenize_format(fmt))


def parse_with_format(strings: pa.Array, fmt: str) -> pa.Array:
    """MySQL STR_TO_DATE: match `fmt` at the start of each string (trailing text is ignored).
    Text that ends within the time part leaves the rest of the format unused, as Doris's BE
    stops at the input's end ('2024-12-28' read with '%Y-%m-%d %H:%i:%s' is midnight,
    '... 10:11:12' with '...%s.%f' has no fraction)."""
    for short, long in _EXPAND.items():
        fmt = fmt.replace("%" + short, long)
    pieces: list[str] = []
    groups: dict[str, str] = {}
    tokens = tokenize_format(fmt)
    for i, (kind, value) in enumerate(tokens):
        if kind == "text":
            pieces.append(r"\s*" if value.isspace() else re.escape(value))
        else:
            name = f"g{i}"
            groups[value] = name
            pieces.append(f"(?P<{name}>{_PARSE_PATTERNS[value]})")
    # the tokens after the last date specifier may each be where the text ends
    last_date = max((i for i, (kind, value) in enumerate(tokens)
                     if kind == "spec" and value not in TIME_SPECS), default=len(tokens) - 1)
    tail = ""
    for piece in reversed(pieces[last_date + 1:]):
        tail = f"(?:{piece}{tail})?"
    regex = [r"^\s*", *pieces[:last_date + 1], tail]
    if len(strings) == 0:
        return pa.array([], type=TIMESTAMP)
    if not groups:
        return pa.nulls(len(strings), TIMESTAMP)
    extracted = pc.extract_regex(strings, pattern="".join(regex))
    valid = valid_mask(extracted)
    n = len(strings)

    def number(*letters: str, default: int = 0) -> np.ndarray:
        for letter in letters:
            if letter in groups:
                text = extracted.field(groups[letter])
                if letter == "f":
                    text = pc.utf8_rpad(text, width=6, padding="0")
                text = pc.if_else(pc.equal(text, ""), "0", text).fill_null("0")
                return to_numpy(pc.cast(text, pa.int64()), 0)
        return np.full(n, default, dtype=np.int64)

    def name_index(letter: str, names: list[str], length: int) -> np.ndarray:
        text = pc.utf8_lower(extracted.field(groups[letter]).fill_null(""))
        table = pa.array([x[:length].lower() if length else x.lower() for x in names])
        return to_numpy(pc.index_in(text, value_set=table), -1) + 1

    if "Y" not in groups and "y" not in groups:
        valid = np.zeros(n, dtype=bool)  # Doris: no year, no date
    year = number("Y")
    if "y" in groups and "Y" not in groups:
        yy = number("y")
        year = np.where(yy < 70, yy + 2000, yy + 1900)
    month = number("m", "c", default=1)
    if "M" in groups:
        month = name_index("M", MONTH_NAMES, 0)
    elif "b" in groups:
        month = name_index("b", MONTH_NAMES, 3)
    day = number("d", "e", default=1)
    if "D" in groups:
        text = pc.utf8_slice_codeunits(extracted.field(groups["D"]).fill_null("0th"), 0, -2)
        day = to_numpy(pc.cast(text, pa.int64()), 0)
    hour = number("H", "k")
    if any(k in groups for k in "hIl"):
        hour12 = number("h", "I", "l")
        letter = next(k for k in "hIl" if k in groups)
        read = to_numpy(pc.not_equal(extracted.field(groups[letter]), ""), False)
        valid &= ~read | ((hour12 >= 1) & (hour12 <= 12))  # unread: the text ended before
        hour = hour12 % 12
    if "p" in groups:
        pm = to_numpy(pc.equal(pc.utf8_upper(extracted.field(groups["p"]).fill_null("AM")), "PM"),
                      False)
        hour = np.where(pm, hour % 12 + 12, hour)
    if "j" in groups:
        doy = number("j")
        valid &= (doy >= 1) & (doy <= 366)
        base = compose(year, np.ones(n, np.int64), np.ones(n, np.int64), hour, number("i"),
                       number("s", "S"), number("f"), valid)
        return pc.add(base, pa.array((doy - 1) * US_PER_DAY).cast(pa.duration("us")))
    return compose(year, month, day, hour, number("i"), number("s", "S"), number("f"), valid)
