"""A Stream Load body as Arrow columns: CSV through pyarrow's reader, JSON through its parser.

CSV values stay text (`\\N` is NULL, as in Doris); the load converts them to the column types.
A line with the wrong number of fields is not an error of the load: it is counted as a
filtered row with its reason, and the load goes on (the filter ratio decides).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson

from catalog.errors import AnalysisError, DataQualityError
from server.http.load_options import StreamLoadOptions

_MAX_ERRORS_KEPT = 100


@dataclass
class SourceRows:
    table: pa.Table                 # source columns, named
    bad_lines: int = 0              # lines that could not be split into the expected fields
    errors: list[str] = field(default_factory=list)  # first few reasons, with the source line


def read_source(body: bytes, opts: StreamLoadOptions, names: list[str]) -> SourceRows:
    """The body's rows as columns called `names` (in file order)."""
    if opts.format == "json":
        return SourceRows(_read_json(body, opts, names))
    return _read_csv(body, opts, names)


def _valid_utf8(body: bytes) -> bytes:
    """The body with invalid UTF-8 sequences replaced by U+FFFD: pyarrow's CSV reader cannot
    hand a row that is not UTF-8 to the invalid-row handler (it fails while decoding it)."""
    if body.isascii():
        return body
    try:
        body.decode("utf-8")
        return body
    except UnicodeDecodeError:
        return body.decode("utf-8", "replace").encode("utf-8")


def _read_csv(body: bytes, opts: StreamLoadOptions, names: list[str]) -> SourceRows:
    sep, delim = opts.column_separator, opts.line_delimiter
    body = _valid_utf8(body)
    if delim not in ("\n", "\r\n"):
        body = body.replace(delim.encode(), b"\n")
    if len(sep.encode()) != 1:
        # pyarrow splits on one byte: a multi-byte separator becomes a byte the data lacks.
        stand_in = next((c for c in (b"\x1f", b"\x1e", b"\x1d", b"\x01") if c not in body), None)
        if stand_in is None:
            raise AnalysisError(f"column_separator {sep!r} is not supported for this data")
        body, sep = body.replace(sep.encode(), stand_in), stand_in.decode()
    skip = opts.skip_lines + {"csv": 0, "csv_with_names": 1, "csv_with_names_and_types": 2}[opts.format]
    result = SourceRows(pa.table({n: pa.array([], pa.string()) for n in names}))
    if not body.strip(b"\r\n"):
        return result

    def invalid(row: pacsv.InvalidRow) -> str:
        result.bad_lines += 1
        if len(result.errors) < _MAX_ERRORS_KEPT:
            result.errors.append(
                f"Reason: actual column number in csv file is {'less' if row.actual_columns < row.expected_columns else 'more'} "
                f"than schema column number.actual number: {row.actual_columns}, schema column "
                f"number: {row.expected_columns}; line delimiter: [{delim!r}], column separator: "
                f"[{opts.column_separator!r}], . src line [{row.text}];")
        return "skip"

    quote = opts.enclose or ('"' if opts.trim_double_quotes else False)
    read = pacsv.ReadOptions(column_names=names, skip_rows=skip, use_threads=True,
                             block_size=16 << 20)
    parse = pacsv.ParseOptions(delimiter=sep, quote_char=quote, double_quote=bool(quote),
                               escape_char=opts.escape or False, newlines_in_values=bool(opts.enclose),
                               ignore_empty_lines=True, invalid_row_handler=invalid)
    convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                   null_values=["\\N"], strings_can_be_null=True,
                                   quoted_strings_can_be_null=False)
    try:
        result.table = pacsv.read_csv(io.BytesIO(body), read, parse, convert)
    except pa.ArrowInvalid as e:
        raise DataQualityError(f"[DATA_QUALITY_ERROR]{str(e).splitlines()[0]}") from None
    return result


def _read_json(body: bytes, opts: StreamLoadOptions, names: list[str]) -> pa.Table:
    """JSON objects (one per line, or an array with strip_outer_array); fields by name."""
    try:
        if opts.read_json_by_line or not opts.strip_outer_array:
            if not opts.read_json_by_line and body.lstrip().startswith(b"["):
                raise AnalysisError("JSON data is an array, strip_outer_array must be set true")
            table = pajson.read_json(io.BytesIO(body))
        else:
            rows = json.loads(body)
            if not isinstance(rows, list):
                raise AnalysisError("JSON data is not an array-object, strip_outer_array must be set false")
            table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, json.JSONDecodeError) as e:
        raise DataQualityError(f"[DATA_QUALITY_ERROR]Parse json data failed: {str(e).splitlines()[0]}") from None
    by_lower = {c.lower(): c for c in table.column_names}
    columns = {}
    for n in names:
        src = by_lower.get(n.lower())
        columns[n] = table.column(src) if src is not None else pa.nulls(table.num_rows, pa.string())
    return pa.table(columns)
