"""The bulk-insert fast path: `INSERT INTO t [(cols)] VALUES (literal, ...), ...` without sqlglot.

sqlglot builds an AST node per value (~8k rows/s). Bulk inserts are nearly always literal tuples,
so this module recognises exactly that shape and hands back the values column by column.
Anything else — an expression, a function call, a second statement, a comment — makes it
return None and the statement takes the normal path, so the fast path can never change what a
statement means.

Two ways through, with the same result:
- the bulk way (`_bulk_columns`): the first row gives the width; one `re.split` on the
  literal pattern separates every literal's text from the punctuation between them in C; the
  punctuation must be exactly rows of that many literals; each column becomes an Arrow array
  with Arrow kernels (quotes stripped, numbers parsed by Arrow). A column whose literals mix kinds, or strings with
  escapes, is converted in Python like the token way would;
  Before that split, `_csv_columns` splits rows and fields at commas (strings holding no
  comma, quote or row break): in Python for statements up to SPLIT_IN_PYTHON_BYTES (integer
  columns parsed by numpy, holding the GIL), by Arrow's CSV reader above (its fixed cost, a
  hand-off to Arrow's I/O thread of 0.1-1 ms, pays only on large statements: under 16
  concurrent writers it was the largest item of a 100-row INSERT);
- the token way (`_token_columns`): a token loop with a small state machine, for short
  statements and for anything the bulk way does not take.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

_IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_$]*)"
_HEADER = re.compile(
    rf"\s*INSERT\s+INTO\s+(?P<first>{_IDENT})(?:\s*\.\s*(?P<second>{_IDENT}))?\s*"
    rf"(?:WITH\s+LABEL\s+(?P<label>{_IDENT})\s*)?"
    rf"(?:\((?P<cols>\s*{_IDENT}(?:\s*,\s*{_IDENT})*\s*)\))?\s*VALUES\s*",
    re.IGNORECASE)
_TOKEN = re.compile(r"""
    \s*(?:
      (?P<str>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
    | (?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
    | (?P<word>NULL|TRUE|FALSE)\b
    | (?P<punct>[(),;])
    )""", re.IGNORECASE | re.VERBOSE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "Z": "\x1a"}
_ESCAPE_RE = re.compile(r"\\(.)|''|\"\"", re.DOTALL)


@dataclass
class FastInsert:
    db: str | None
    table: str
    columns: list[str] | None
    values: list  # per column: a pa.Array (bulk way) or a list of Python values (token way)
    label: str | None = None  # INSERT INTO t WITH LABEL l


def _ident(text: str) -> str:
    return text[1:-1].replace("``", "`") if text.startswith("`") else text


def _unescape(body: str) -> str:
    if "\\" not in body and "''" not in body and '""' not in body:
        return body
    return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)) if m.group(1) is not None
                          else m.group(0)[0], body)


def _number(text: str):
    if "." not in text and "e" not in text and "E" not in text:
        return int(text)
    if "e" in text or "E" in text:
        return float(text)
    return Decimal(text)


def parse_fast_insert(sql: str) -> FastInsert | None:
    m = _HEADER.match(sql)
    if m is None:
        return None
    second = m.group("second")
    db, table = (_ident(m.group("first")), _ident(second)) if second else (None, _ident(m.group("first")))
    cols = [_ident(c.strip()) for c in m.group("cols").split(",")] if m.group("cols") else None
    values = None
    if len(sql) - m.end() > _BULK_MIN_BYTES:
        values = _bulk_columns(sql, m.end())
    if values is None:
        values = _token_columns(sql, m.end())
    if values is None:
        return None
    label = _ident(m.group("label")) if m.group("label") else None
    return FastInsert(db, table, cols, values, label)


_BULK_MIN_BYTES = 1024  # below, the token loop costs less than the bulk way's kernels
_VALUE = (r"""(?:'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"""
          r"""|(?:NULL|TRUE|FALSE)\b)""")
_VALUE_RE = re.compile(_VALUE, re.IGNORECASE)
_NUMBER_KINDS = (("int", r"^[-+]?\d+$"), ("decimal", r"^[-+]?(?:\d+\.\d*|\.\d+)$"))


_SPLIT_RE = re.compile("(" + _VALUE + ")", re.IGNORECASE)
_WHOLE_VALUE = "^" + _VALUE + "$"
_ROW_BREAK = re.compile(r"\)\s*,\s*\(")
_SPACE = str.maketrans("", "", " \t\r\n")


def _bulk_columns(sql: str, start: int) -> list | None:
    first = _token_columns(sql, start, first_row_only=True)
    if not first:
        return None
    width = len(first)
    columns = _csv_columns(sql, start, width, first)
    if columns is not None:
        return columns
    parts = _SPLIT_RE.split(sql[start:])  # separator, literal, separator, ..., separator
    texts = parts[1::2]
    if not texts or len(texts) % width:
        return None
    # Everything between the literals must be exactly "(", ",", ..., ")" joined by ",".
    skeleton = "".join(parts[0::2]).translate(_SPACE)
    if skeleton.endswith(";"):
        skeleton = skeleton[:-1]
    row = "(" + "," * (width - 1) + ")"
    if skeleton != ",".join([row] * (len(texts) // width)):
        return None  # not rows of `width` literals each: the token way decides
    return [_column(texts[j::width]) for j in range(width)]


def _csv_columns(sql: str, start: int, width: int, first: list | None = None) -> list | None:
    """The bulk way through Arrow's CSV reader: rows become lines (every `)` `,` `(` between
    rows a line break), fields are split on commas without quote handling, and each field must
    then be exactly one literal (checked with one regex per column). A string holding a comma,
    a quote or `),(` breaks that shape, so the statement goes the `re.split` way instead.

    A column whose value in the `first` row is an integer is read by Arrow as int64 at once
    (its strict integer parser: every field exactly an integer literal, else the read fails
    and every column is read as text, checked as above)."""
    body = sql[start:].rstrip()
    if body.endswith(";"):
        body = body[:-1].rstrip()
    if len(body) < 2 or body[0] != "(" or body[-1] != ")":
        return None
    lines = _ROW_BREAK.sub("\n", body[1:-1])
    if len(lines) <= SPLIT_IN_PYTHON_BYTES:
        return _split_columns(lines, width, first)
    text = pa.py_buffer(lines.encode())
    # Arrow's integer parser also takes hex (0x1f): a statement holding one reads as text
    hex_free = "0x" not in lines and "0X" not in lines
    guess = [pa.int64() if type(v) is int and hex_free else pa.string()
             for v in first or [None] * width]
    table = _read_fields(text, guess)
    if table is None and pa.int64() in guess:
        table = _read_fields(text, [pa.string()] * width)
    if table is None:
        return None
    columns = []
    for col in table.columns:
        typed = col.combine_chunks() if col.type == pa.int64() else _text_column(col.combine_chunks())
        if typed is None:
            return None
        columns.append(typed)
    return columns


SPLIT_IN_PYTHON_BYTES = 64 * 1024
_INT_FIELDS = re.compile(r"[0-9+\- \t\r\n]*")  # int() then takes exactly the integer literals


def _split_columns(lines: str, width: int, first: list | None) -> list | None:
    """`_csv_columns` of a small statement: its lines split at commas with str methods, a
    column whose first value is an integer parsed by numpy (int() of fields made only of
    digits, signs and spaces: exactly the integer literals), the others as Arrow's reader's
    text columns are. None when a row has another width or a column is not literals."""
    rows = lines.split("\n")
    if any(row.count(",") != width - 1 for row in rows):
        return None
    flat = lines.replace("\n", ",").split(",")
    columns = []
    for j in range(width):
        fields = flat[j::width]
        typed = None
        if first is not None and type(first[j]) is int:
            typed = _int_column(fields)
        if typed is None:
            typed = _text_column(pa.array(fields, pa.string()))
        if typed is None:
            return None
        columns.append(typed)
    return columns


def _int_column(fields: list[str]) -> pa.Array | None:
    if _INT_FIELDS.fullmatch("".join(fields)) is None:
        return None
    try:
        return pa.array(np.array(fields, dtype=np.int64))
    except (ValueError, OverflowError):  # an empty field, "1-2", beyond BIGINT: not this way
        return None


def _text_column(raw: pa.Array) -> pa.Array | None:
    """A column of literal texts (trimmed here) as a typed array; None when a field is not
    exactly one literal."""
    arr = pc.utf8_trim_whitespace(raw)
    typed = _plain_column(arr)
    if typed is None:  # NULLs, decimals, escapes...: check each literal, then type
        if not pc.all(pc.match_substring_regex(arr, _WHOLE_VALUE, ignore_case=True)).as_py():
            return None
        typed = _column(arr)
    return typed


def _read_fields(text: pa.Buffer, types: list[pa.DataType]) -> pa.Table | None:
    """The lines of `text` split on commas into len(types) columns of these types, or None."""
    names = [f"c{i}" for i in range(len(types))]
    try:
        return pacsv.read_csv(
            text,
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter=",", quote_char=False, escape_char=False,
                                             ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=dict(zip(names, types)), strings_can_be_null=False,
                quoted_strings_can_be_null=False, null_values=[]))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _plain_column(arr: pa.Array) -> pa.Array | None:
    """The two common columns in few kernels: all integers, or all quoted strings without
    escapes or quotes inside; None for anything else."""
    if pc.all(pc.match_substring_regex(arr, r"^[-+]?\d+$")).as_py():
        try:
            return arr.cast(pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # out of BIGINT range: the general way decides
    if pc.all(pc.starts_with(arr, "'")).as_py() and pc.all(pc.ends_with(arr, "'")).as_py() \
            and pc.min(pc.utf8_length(arr)).as_py() >= 2:
        inner = pc.utf8_slice_codeunits(arr, 1, -1)
        if not pc.any(pc.match_substring_regex(inner, r"[\\'\"]")).as_py():
            return inner
    return None


def _column(texts: list[str] | pa.Array) -> pa.Array | list:
    """One column's literal texts as an Arrow array typed as the token way types its values."""
    if isinstance(texts, pa.Array):
        arr, texts = texts, _Lazy(texts)
    else:
        arr = pa.array(texts, pa.string())
    upper = pc.utf8_upper(arr)
    head = pc.utf8_slice_codeunits(upper, 0, 1)
    null = pc.equal(upper, "NULL")
    quoted = pc.is_in(head, pa.array(["'", '"']))
    word = pc.is_in(head, pa.array(["T", "F"]))  # TRUE / FALSE (quoted text starts with a quote)
    n_null = pc.sum(null).as_py() or 0
    n_quoted = pc.sum(quoted).as_py() or 0
    n_word = pc.sum(word).as_py() or 0
    valid = pc.invert(null)
    if n_quoted + n_null == len(texts):
        inner = pc.utf8_slice_codeunits(arr, 1, -1)
        if pc.any(pc.match_substring_regex(inner, r"[\\'\"]")).as_py():
            return _python_values(texts)  # escapes or doubled quotes: the token way's rules
        return pc.if_else(valid, inner, pa.scalar(None, pa.string()))
    if n_word + n_null == len(texts):
        return pc.if_else(valid, pc.equal(upper, "TRUE"), pa.scalar(None, pa.bool_()))
    if n_quoted or n_word:
        return _python_values(texts)  # mixed kinds: loaded as text by the insert handler
    numbers = pc.if_else(valid, arr, pa.scalar(None, pa.string()))
    n_int = pc.sum(pc.match_substring_regex(numbers, _NUMBER_KINDS[0][1])).as_py() or 0
    n_dec = pc.sum(pc.match_substring_regex(numbers, _NUMBER_KINDS[1][1])).as_py() or 0
    try:
        if n_int + n_null == len(texts):
            return numbers.cast(pa.int64())
        if n_dec + n_null == len(texts):
            scale = pc.max(pc.subtract(pc.utf8_length(numbers),
                                       pc.add(pc.find_substring(numbers, "."), 1))).as_py() or 0
            return numbers.cast(pa.decimal128(38, scale))
        if n_int + n_dec == 0:
            return numbers.cast(pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    return _python_values(texts)


class _Lazy:
    """An Arrow string array's values as a Python list, built only if needed."""

    def __init__(self, arr: pa.Array):
        self.arr = arr

    def __len__(self) -> int:
        return len(self.arr)

    def __iter__(self):
        return iter(self.arr.to_pylist())


def _python_values(texts) -> list:
    out = []
    for text in texts:
        c = text[0]
        if c in "'\"":
            out.append(_unescape(text[1:-1]))
        elif c in "nN":
            out.append(None)
        elif c in "tTfF":
            out.append(text.upper() == "TRUE")
        else:
            out.append(_number(text))
    return out


def _token_columns(sql: str, start: int, first_row_only: bool = False) -> list | None:
    rows: list[list] = []
    row: list | None = None
    want = "("  # what may come next: "(" a row, "v" a value, ",)" inside a row, ",;" after a row
    pos = start
    for tok in _TOKEN.finditer(sql, pos):
        if tok.start() != pos:
            return None  # something the fast path does not know: fall back
        pos = tok.end()
        kind = tok.lastgroup
        text = tok.group(kind)
        if kind != "punct":
            if want != "v":
                return None
            if kind == "str":
                row.append(_unescape(text[1:-1]))
            elif kind == "num":
                row.append(_number(text))
            else:
                word = text.upper()
                row.append(None if word == "NULL" else word == "TRUE")
            want = ",)"
        elif text == "(" and want == "(":
            row, want = [], "v"
        elif text == "," and want == ",)":
            want = "v"
        elif text == ")" and want == ",)":
            if first_row_only:
                return row
            rows.append(row)
            row, want = None, ",;"
        elif text == "," and want == ",;":
            want = "("
        elif text == ";" and want == ",;":
            want = "end"
        else:
            return None
    if want not in (",;", "end"):
        return None
    if sql[pos:].strip() or not rows:
        return None
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        return None  # let the normal path report the error
    return [list(col) for col in zip(*rows)]
