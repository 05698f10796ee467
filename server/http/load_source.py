"""A Stream Load body as Arrow columns: CSV through pyarrow's streaming reader, JSON its parser,
Parquet / ORC / Arrow IPC through server/http/columnar_body.py; a compressed body (header
`compress_type`) through its decompressor first (server/http/body_codec.py).

A CSV body is read block by block as the load takes its batches (`read_batches`), so only a
few blocks are in memory at a time whatever the body's size; the byte-level fixes pyarrow needs
(invalid UTF-8, another line delimiter, a multi-byte column separator) are applied per block.

CSV values stay text (`\\N` is NULL, as in Doris); the load converts them to the column types.
A line with the wrong number of fields is not an error of the load: it is counted as a
filtered row with its reason, and the load goes on (the filter ratio decides).
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson

from catalog.errors import AnalysisError, DataQualityError
from server.http.body_codec import decompressed
from server.http.columnar_body import read_columnar
from server.http.load_options import COLUMNAR_FORMATS, StreamLoadOptions
from server.http.json_paths import apply_paths, apply_root

_MAX_ERRORS_KEPT = 100
BLOCK_SIZE = 16 << 20  # bytes of CSV per batch (pyarrow's block)


@dataclass
class SourceRows:
    table: pa.Table                 # source columns, named
    bad_lines: int = 0              # lines that could not be split into the expected fields
    errors: list[str] = field(default_factory=list)  # first few reasons, with the source line


def read_batches(stream, opts: StreamLoadOptions, names: list[str],
                 block_size: int = BLOCK_SIZE, typed: dict | None = None,
                 json_columns: frozenset[str] = frozenset()) -> Iterator[SourceRows]:
    """The rows of a file-like body as batches of columns called `names` (in file order),
    about `block_size` bytes each; the body is read as the batches are taken. JSON objects one
    per line are parsed in runs of whole lines (each run's types inferred on its own: the load
    converts every batch to the table's types); a JSON array (strip_outer_array) is read whole,
    its size bounded by streaming_load_json_max_mb. `json_columns` (lower case): fields loaded
    into JSON, MAP and STRUCT columns, read as JSON text (`_json_fields`; a MAP / STRUCT
    column then reads the object's text, nested_parse.py)."""
    stream = decompressed(stream, opts.compress_type)
    if opts.format in COLUMNAR_FORMATS:
        for table in read_columnar(stream, opts.format, names, bool(opts.columns)):
            yield SourceRows(table)
    elif opts.format != "json":
        yield from _read_csv(stream, opts, names, block_size, typed or {})
    elif opts.strip_outer_array and not opts.read_json_by_line:
        yield SourceRows(_read_json(stream.read(), opts, names, json_columns))
    else:
        empty = True
        for chunk in _whole_lines(stream, block_size):
            if empty or chunk.strip():
                yield SourceRows(_read_json(chunk, opts, names, json_columns))
                empty = False
        if empty:
            yield SourceRows(_read_json(b"", opts, names, json_columns))


def _whole_lines(stream, block_size: int) -> Iterator[bytes]:
    """The stream in pieces of about `block_size` bytes that end at a line end."""
    carry = b""
    while True:
        raw = _read_full(stream, block_size)
        if not raw:
            if carry:
                yield carry
            return
        data = carry + raw
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        carry = data[cut:]
        yield data[:cut]


def read_source(body: bytes, opts: StreamLoadOptions, names: list[str],
                typed: dict | None = None) -> SourceRows:
    """The body's rows as columns called `names` (in file order), in one table. `typed` (CSV):
    columns parsed straight to an Arrow type; a value that type cannot take fails the read
    with DataQualityError (the caller then reads the body as text)."""
    parts = list(read_batches(io.BytesIO(body), opts, names, typed=typed))
    if not parts:
        return SourceRows(_empty(names))
    return SourceRows(pa.concat_tables([p.table for p in parts]),
                      sum(p.bad_lines for p in parts),
                      [e for p in parts for e in p.errors][:_MAX_ERRORS_KEPT])


def _empty(names: list[str]) -> pa.Table:
    return pa.table({n: pa.array([], pa.string()) for n in names})


class _Replace:
    """bytes.replace over a stream of blocks: a tail that may begin an occurrence of `old`
    waits for the next block."""

    def __init__(self, old: bytes, new: bytes):
        self.old, self.new, self.carry = old, new, b""

    def feed(self, block: bytes) -> bytes:
        data = self.carry + block
        last = data.rfind(self.old)
        start = 0 if last < 0 else last + len(self.old)
        cut = next((q for q in range(max(start, len(data) - len(self.old) + 1), len(data))
                    if self.old.startswith(data[q:])), len(data))
        self.carry = data[cut:]
        return data[:cut].replace(self.old, self.new)

    def end(self) -> bytes:
        rest, self.carry = self.carry, b""
        return rest.replace(self.old, self.new)


class _Utf8:
    """Invalid UTF-8 sequences replaced by U+FFFD, block by block (pyarrow's CSV reader cannot
    hand a row that is not UTF-8 to the invalid-row handler: it fails while decoding it)."""

    def __init__(self):
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.pending = False  # the decoder holds the start of a multi-byte sequence

    def feed(self, block: bytes) -> bytes:
        if not self.pending and block.isascii():
            return block
        text = self.decoder.decode(block)
        self.pending = bool(self.decoder.getstate()[0])
        return text.encode("utf-8")

    def end(self) -> bytes:
        if not self.pending:
            return b""
        self.pending = False
        return self.decoder.decode(b"", final=True).encode("utf-8")


class _TextBlocks:
    """The body's blocks made readable by pyarrow's CSV reader: valid UTF-8, lines ending in
    \\n, and a one-byte column `separator` (a multi-byte one becomes a control byte the first
    block lacks; a later block holding that byte fails the load)."""

    def __init__(self, stream, opts: StreamLoadOptions, block_size: int):
        self.stream, self.block_size = stream, block_size
        self.steps: list = [_Utf8()]
        if opts.line_delimiter not in ("\n", "\r\n"):
            self.steps.append(_Replace(opts.line_delimiter.encode(), b"\n"))
        self.given = opts.column_separator
        self.separator = self.given if len(self.given.encode()) == 1 else None

    def __iter__(self) -> Iterator[bytes]:
        while True:
            raw = _read_full(self.stream, self.block_size)
            if raw and self.separator is None:
                stand_in = next((c for c in _STAND_INS if c not in raw), None)
                if stand_in is None:
                    raise AnalysisError(f"column_separator {self.given!r} is not supported for this data")
                self.separator = stand_in.decode()
                self.steps.append(_Replace(self.given.encode(), stand_in))
            elif raw and len(self.given.encode()) != 1 and self.separator.encode() in raw:
                raise AnalysisError(f"column_separator {self.given!r} is not supported for this data")
            block = _through(self.steps, raw) if raw else _finish(self.steps)
            if block:
                yield block
            if not raw:
                return


def _read_full(stream, size: int) -> bytes:
    """`size` bytes of the stream, fewer only at its end (a chunked body arrives in pieces)."""
    parts, left = [], size
    while left > 0:
        data = stream.read(left)
        if not data:
            break
        parts.append(data)
        left -= len(data)
    return parts[0] if len(parts) == 1 else b"".join(parts)


_STAND_INS = (b"\x1f", b"\x1e", b"\x1d", b"\x01")


def _through(steps: list, block: bytes) -> bytes:
    for step in steps:
        block = step.feed(block)
    return block


def _finish(steps: list) -> bytes:
    """What the steps still hold at the end of the body, passed through the later steps."""
    out = []
    for i, step in enumerate(steps):
        rest = step.end()
        for later in steps[i + 1:]:
            rest = later.feed(rest)
        out.append(rest)  # a later step's own end comes after: it is fed before it ends
    return b"".join(out)


class _BlockStream(io.RawIOBase):
    """A file-like view of an iterator of blocks (what pyarrow's streaming reader reads)."""

    def __init__(self, first: bytes, blocks: Iterator[bytes]):
        self._buffer, self._offset, self._blocks = memoryview(first), 0, blocks

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        """Fills `buffer` unless the blocks end (pyarrow takes a short read for a block)."""
        view = memoryview(buffer).cast("B")
        filled = 0
        while filled < len(view):
            if self._offset >= len(self._buffer):
                block = next(self._blocks, None)
                if block is None:
                    break
                self._buffer, self._offset = memoryview(block), 0
            n = min(len(view) - filled, len(self._buffer) - self._offset)
            # (a view: slicing the bytes would copy each piece into a fresh allocation first)
            view[filled:filled + n] = self._buffer[self._offset:self._offset + n]
            self._offset += n
            filled += n
        return filled


def _read_csv(stream, opts: StreamLoadOptions, names: list[str],
              block_size: int, typed: dict) -> Iterator[SourceRows]:
    delim = opts.line_delimiter
    text = _TextBlocks(stream, opts, block_size)
    blocks = iter(text)
    first = b""
    for block in blocks:
        first += block
        if first.strip(b"\r\n"):
            break
    if not first.strip(b"\r\n"):
        for _ in blocks:
            pass  # nothing but line ends
        return
    sep = text.separator
    skip = opts.skip_lines + {"csv": 0, "csv_with_names": 1, "csv_with_names_and_types": 2}[opts.format]
    pending = SourceRows(_empty(names))  # bad lines seen since the last batch

    def invalid(row: pacsv.InvalidRow) -> str:
        pending.bad_lines += 1
        if len(pending.errors) < _MAX_ERRORS_KEPT:
            pending.errors.append(
                f"Reason: actual column number in csv file is {'less' if row.actual_columns < row.expected_columns else 'more'} "
                f"than schema column number.actual number: {row.actual_columns}, schema column "
                f"number: {row.expected_columns}; line delimiter: [{delim!r}], column separator: "
                f"[{opts.column_separator!r}], . src line [{row.text}];")
        return "skip"

    quote = opts.enclose or ('"' if opts.trim_double_quotes else False)
    read = pacsv.ReadOptions(column_names=names, skip_rows=skip, use_threads=True,
                             block_size=block_size)
    parse = pacsv.ParseOptions(delimiter=sep, quote_char=quote, double_quote=bool(quote),
                               escape_char=opts.escape or False, newlines_in_values=bool(opts.enclose),
                               ignore_empty_lines=True, invalid_row_handler=invalid)
    convert = pacsv.ConvertOptions(column_types={n: typed.get(n, pa.string()) for n in names},
                                   null_values=["\\N"], strings_can_be_null=True,
                                   quoted_strings_can_be_null=False)
    try:
        reader = pacsv.open_csv(_BlockStream(first, blocks), read, parse, convert)
        for batch in reader:
            yield SourceRows(pa.Table.from_batches([batch]), pending.bad_lines, pending.errors)
            pending.bad_lines, pending.errors = 0, []
    except pa.ArrowInvalid as e:
        raise DataQualityError(f"[DATA_QUALITY_ERROR]{str(e).splitlines()[0]}") from None
    if pending.bad_lines:
        yield pending


def _read_json(body: bytes, opts: StreamLoadOptions, names: list[str],
               json_columns: frozenset[str] = frozenset()) -> pa.Table:
    """JSON objects (one per line, or an array with strip_outer_array); fields by name."""
    if any(n.lower() in json_columns for n in names) or opts.json_root or opts.jsonpaths:
        return _json_fields(body, opts, names, json_columns)
    try:
        if opts.read_json_by_line or not opts.strip_outer_array:
            if not opts.read_json_by_line and body.lstrip().startswith(b"["):
                raise AnalysisError("JSON data is an array, strip_outer_array must be set true")
            table = _without_timestamps(body, pajson.read_json(io.BytesIO(body)))
        else:
            rows = json.loads(body)
            if not isinstance(rows, list):
                raise AnalysisError("JSON data is not an array-object, strip_outer_array must be set false")
            table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, json.JSONDecodeError) as e:
        raise DataQualityError(f"[DATA_QUALITY_ERROR]Parse json data failed: {str(e).splitlines()[0]}") from None
    by_lower = {c.lower(): c for c in table.column_names}
    present = _present(names, by_lower.__contains__)
    omit = _default_when_absent(opts, present)
    columns = {}
    for n in names:
        if n in present:
            columns[n] = table.column(by_lower[n.lower()])
        elif not omit:
            columns[n] = pa.nulls(table.num_rows, pa.string())
    return pa.table(columns)


def _without_timestamps(body: bytes, table: pa.Table) -> pa.Table:
    """`table` with the text fields Arrow took for timestamps read again as the text they are
    ("2017-10-05" stays that text: loaded into a VARCHAR it must not become a datetime's)."""
    stamps = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
    if not stamps:
        return table
    schema = pa.schema([pa.field(n, pa.string()) for n in stamps])
    return pajson.read_json(io.BytesIO(body), parse_options=pajson.ParseOptions(
        explicit_schema=schema, unexpected_field_behavior="infer"))


def _default_when_absent(opts: StreamLoadOptions, present: set[str]) -> bool:
    """A field no object of the batch has is left out of it, so the load gives the column its
    default (Doris's NewJsonReader fills a missing field with the column's default value);
    kept as NULLs when the `columns` header or jsonpaths name it, or when no field is there
    at all (the rows must still count)."""
    return not opts.columns and not opts.jsonpaths and bool(present)


def _present(names: list[str], has) -> set[str]:
    """The names whose lower case `has` finds among the batch's fields."""
    return {n for n in names if has(n.lower())}


def _json_fields(body: bytes, opts: StreamLoadOptions, names: list[str],
                 json_columns: frozenset[str]) -> pa.Table:
    """`_read_json` for a table with JSON columns, through Python's json module (Arrow's
    reader turns objects into structs, losing which keys a row lacks): a JSON column's field
    becomes its JSON text (`{"a":[1,2]}`; a string field is taken as JSON text to parse, as
    Doris reads `"j":"{\"a\":1}"`), the other fields Arrow columns as `_read_json` makes them.
    Costs a Python pass over the rows: only loads into tables with JSON columns take it."""
    try:
        if opts.json_root:  # the documents (a line each, or the body), rows under the root
            docs = [json.loads(line) for line in body.splitlines() if line.strip()] \
                if opts.read_json_by_line else ([json.loads(body)] if body.strip() else [])
            rows = apply_root(docs, opts.json_root, opts.strip_outer_array)
        elif opts.read_json_by_line or not opts.strip_outer_array:
            if not opts.read_json_by_line and body.lstrip().startswith(b"["):
                raise AnalysisError("JSON data is an array, strip_outer_array must be set true")
            rows = [json.loads(line) for line in body.splitlines() if line.strip()]
        else:
            rows = json.loads(body) if body.strip() else []
            if not isinstance(rows, list):
                raise AnalysisError("JSON data is not an array-object, strip_outer_array must be set false")
    except json.JSONDecodeError as e:
        raise DataQualityError(f"[DATA_QUALITY_ERROR]Parse json data failed: {e}") from None
    rows = [r if isinstance(r, dict) else {} for r in rows]
    if opts.jsonpaths:
        rows = apply_paths(rows, opts.jsonpaths, names)
    keys = {k.lower() for r in rows for k in r} if not opts.jsonpaths else set()
    present = set(names) if opts.jsonpaths else _present(names, keys.__contains__)
    columns = {}
    for n in names:
        if n not in present and _default_when_absent(opts, present):
            continue
        key = next((k for k in (rows[0] if rows else {}) if k.lower() == n.lower()), n)
        values = [r.get(key) for r in rows]
        if n.lower() in json_columns:
            columns[n] = pa.array([v if v is None or isinstance(v, str) else
                                   json.dumps(v, separators=(",", ":"), ensure_ascii=False)
                                   for v in values], pa.string())
        else:
            try:
                columns[n] = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                columns[n] = pa.array([None if v is None else str(v) for v in values])
    return pa.table(columns) if names else pa.table({})
