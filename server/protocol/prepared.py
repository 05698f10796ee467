"""Server-side prepared statements: COM_STMT_PREPARE / EXECUTE parameters and binary rows.

mysql-mimic pastes parameters into the SQL unescaped (`it's` breaks; injection) and rejects
DATE/DATETIME/DECIMAL parameters. Here:
- `placeholders(sql)` finds the `?` tokens with the SQL tokenizer (never inside strings);
- `read_params` decodes COM_STMT_EXECUTE's binary parameters of every MySQL type, remembering
  the types a client sent once (`new_params_bound_flag` = 0 reuses them);
- `bind_sql` puts each value in as a properly quoted SQL literal, by token position;
- `binary_row` encodes a result row in the binary protocol (rows of prepared statements are
  few: a per-row Python encoder is acceptable here; the text protocol path is vectorised).
"""

from __future__ import annotations

import datetime as dt
import io
import struct
from decimal import Decimal

from mysql_mimic.types import Capabilities, ColumnType, str_len
from sqlglot.tokens import TokenType

from server.parser.tokens import tokenize

_PARAM_COUNT_AVAILABLE = 0x08


def placeholders(sql: str) -> list[tuple[int, int]]:
    """(start, end) of each `?` placeholder in `sql`."""
    return [(t.start, t.end + 1) for t in tokenize(sql) if t.token_type == TokenType.PLACEHOLDER]


def _lenenc(r: io.BytesIO) -> int:
    first = r.read(1)[0]
    if first < 0xFB:
        return first
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(r.read(size), "little")


def _temporal(r: io.BytesIO, kind: int):
    n = r.read(1)[0]
    raw = r.read(n)
    if kind == ColumnType.TIME:
        if n == 0:
            return "00:00:00"
        neg, days, h, m, s = struct.unpack_from("<BIBBB", raw)
        us = struct.unpack_from("<I", raw, 8)[0] if n >= 12 else 0
        total_h = days * 24 + h
        return f"{'-' if neg else ''}{total_h:02d}:{m:02d}:{s:02d}" + (f".{us:06d}" if us else "")
    if n == 0:
        return "0000-00-00 00:00:00"
    y, mo, d = struct.unpack_from("<HBB", raw)
    if n == 4 and kind == ColumnType.DATE:
        return dt.date(y, mo, d)
    h = m = s = us = 0
    if n >= 7:
        h, m, s = struct.unpack_from("<BBB", raw, 4)
    if n >= 11:
        us = struct.unpack_from("<I", raw, 7)[0]
    return dt.datetime(y, mo, d, h, m, s, us)


_FIXED = {ColumnType.TINY: ("<b", "<B", 1), ColumnType.SHORT: ("<h", "<H", 2),
          ColumnType.YEAR: ("<h", "<H", 2), ColumnType.LONG: ("<i", "<I", 4),
          ColumnType.INT24: ("<i", "<I", 4), ColumnType.LONGLONG: ("<q", "<Q", 8),
          ColumnType.FLOAT: ("<f", "<f", 4), ColumnType.DOUBLE: ("<d", "<d", 8)}


def _value(r: io.BytesIO, kind: int, unsigned: bool, charset: str):
    if kind in _FIXED:
        signed_fmt, unsigned_fmt, size = _FIXED[kind]
        return struct.unpack(unsigned_fmt if unsigned else signed_fmt, r.read(size))[0]
    if kind in (ColumnType.DATE, ColumnType.DATETIME, ColumnType.TIMESTAMP, ColumnType.TIME):
        return _temporal(r, kind)
    if kind == ColumnType.NULL:
        return None
    raw = r.read(_lenenc(r))
    if kind in (ColumnType.DECIMAL, ColumnType.NEWDECIMAL):
        return Decimal(raw.decode())
    return raw.decode(charset, errors="replace")


def read_params(data: bytes, num_params: int, saved_types: list | None, capabilities,
                charset: str) -> tuple[int, bool, list, list]:
    """(stmt_id, use_cursor, values, types) from a COM_STMT_EXECUTE body."""
    r = io.BytesIO(data)
    stmt_id = struct.unpack("<I", r.read(4))[0]
    flags = r.read(1)[0]
    r.read(4)  # iteration count, always 1
    count = num_params
    if Capabilities.CLIENT_QUERY_ATTRIBUTES in capabilities and (num_params or flags & _PARAM_COUNT_AVAILABLE):
        count = _lenenc(r)
    if count == 0:
        return stmt_id, bool(flags & 0x01), [], saved_types or []
    nulls = r.read((count + 7) // 8)
    bound = r.read(1)[0]
    types = saved_types or []
    if bound:
        types = []
        for _ in range(count):
            kind, flag = r.read(1)[0], r.read(1)[0]
            if Capabilities.CLIENT_QUERY_ATTRIBUTES in capabilities:
                r.read(_lenenc(r))  # parameter name (query attributes only)
            types.append((kind, bool(flag & 0x80)))
    values = []
    for i in range(count):
        if nulls[i // 8] >> (i % 8) & 1:
            values.append(None)
            continue
        kind, unsigned = types[i]
        values.append(_value(r, kind, unsigned, charset))
    return stmt_id, bool(flags & 0x01), values[:num_params], types


def sql_literal(value) -> str:
    if value is None:
        return "NULL"
    if value is True or value is False:
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float, Decimal)):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, dt.datetime):
        return "'" + value.isoformat(sep=" ") + "'"
    if isinstance(value, dt.date):
        return f"'{value.isoformat()}'"
    # a quote doubled (the standard's escape: a lookup's split keeps it, server/parser/
    # literals.py), a backslash and NUL escaped
    text = str(value).replace("\\", "\\\\").replace("'", "''").replace("\0", "\\0")
    return f"'{text}'"


def bind_sql(sql: str, spots: list[tuple[int, int]], values: list) -> str:
    out, pos = [], 0
    for (start, end), value in zip(spots, values):
        out.append(sql[pos:start])
        out.append(sql_literal(value))
        pos = end
    out.append(sql[pos:])
    return "".join(out)


def _length_encoded(value) -> bytes:
    return str_len(value if isinstance(value, bytes) else str(value).encode())


_PACKERS = {ColumnType.SHORT: struct.Struct("<h").pack, ColumnType.LONG: struct.Struct("<i").pack,
            ColumnType.LONGLONG: struct.Struct("<q").pack,
            ColumnType.FLOAT: struct.Struct("<f").pack, ColumnType.DOUBLE: struct.Struct("<d").pack}


def value_encoder(mysql_type: int):
    """`lambda value: _binary_value(value, mysql_type)`, as one function chosen per column of a
    result rather than a chain of type tests per value (a prepared lookup's row)."""
    packer = _PACKERS.get(mysql_type)
    if packer is not None:
        return packer
    if mysql_type in (ColumnType.TINY, ColumnType.DATE, ColumnType.DATETIME):
        return lambda value: _binary_value(value, mysql_type)
    if mysql_type in (ColumnType.DECIMAL, ColumnType.NEWDECIMAL):
        return _decimal_text  # positional: str(Decimal) would send 0E-10
    return _length_encoded


def _decimal_text(value) -> bytes:
    return str_len(format(value, "f").encode() if isinstance(value, Decimal)
                   else str(value).encode())


def _binary_value(value, mysql_type: int) -> bytes:
    if mysql_type == ColumnType.TINY:
        return struct.pack("<b", int(value))
    if mysql_type == ColumnType.SHORT:
        return struct.pack("<h", value)
    if mysql_type == ColumnType.LONG:
        return struct.pack("<i", value)
    if mysql_type == ColumnType.LONGLONG:
        return struct.pack("<q", value)
    if mysql_type == ColumnType.FLOAT:
        return struct.pack("<f", value)
    if mysql_type == ColumnType.DOUBLE:
        return struct.pack("<d", value)
    if mysql_type == ColumnType.DATE:
        return struct.pack("<BHBB", 4, value.year, value.month, value.day)
    if mysql_type == ColumnType.DATETIME:
        if value.microsecond:
            return struct.pack("<BHBBBBBI", 11, value.year, value.month, value.day, value.hour,
                               value.minute, value.second, value.microsecond)
        return struct.pack("<BHBBBBB", 7, value.year, value.month, value.day, value.hour,
                           value.minute, value.second)
    return _length_encoded(value)


def binary_row(values, encoders: list) -> bytes:
    """A binary-protocol row: 0x00, NULL bitmap (offset 2), then the non-NULL values, each by
    its column's `value_encoder`."""
    bitmap = bytearray((len(encoders) + 7 + 2) // 8)
    parts = [b"\x00", b""]
    for i, (value, encode) in enumerate(zip(values, encoders)):
        if value is None:
            bit = i + 2
            bitmap[bit // 8] |= 1 << (bit % 8)
        else:
            parts.append(encode(value))
    parts[1] = bytes(bitmap)
    return b"".join(parts)
