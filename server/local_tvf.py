"""Doris's `local()` table-valued function: files on a backend's disk, queried as a table.

    SELECT * FROM local("file_path" = "data/orders.csv", "backend_id" = "10001",
                        "format" = "csv_with_names", "column_separator" = ",")
    INSERT INTO t SELECT ... FROM local(...)

As Doris's LocalTableValuedFunction: `file_path` (several paths separated by commas, each may
hold `*` / `?` wildcards) and `backend_id` are required, the other properties are the file
format's (those of Stream Load: format, column_separator, line_delimiter, enclose, escape,
trim_double_quotes, skip_lines, compress_type, read_json_by_line, strip_outer_array,
json_root, jsonpaths, plus `csv_schema`), and any other key is "<key> is invalid property".
Only ADMIN users may call it (it reads the server's disk).

Paths are relative to the BE config `user_files_secure_path` (Doris's default is DORIS_HOME;
here the directory the server was started in) and must stay inside it once symlinks and `..`
are resolved: a path that leaves it is refused, never opened.

Columns, as Doris infers them: CSV `c1, c2, ...` (csv_with_names: the header's names), all
text unless `csv_schema` = "name:type;..." gives names and types; JSON the first object's
keys; Parquet, ORC and Arrow their own schema. The files are read with Stream Load's readers
(server/http/load_source.py), whole, into the InlineTable the binder scans (at most MAX_BYTES
of files: Stream Load is the way for more): a line that does not split into the columns fails
the query with the load's reason.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
from pathlib import Path

import pyarrow as pa

from catalog.access import CURRENT
from catalog.errors import AnalysisError
from executor.expressions.casts import cast_value
from planner import table_functions
from server.http.body_codec import decompressed
from server.http.columnar_body import file_columns
from server.http.load_options import COLUMNAR_FORMATS, StreamLoadOptions
from server.http.load_source import read_batches
from server.parser.create_table import parse_type
from server.parser.tokens import TokenCursor

LOCATION = ("file_path", "backend_id")
FORMAT_PROPERTIES = ("format", "column_separator", "line_delimiter", "enclose", "escape",
                     "trim_double_quotes", "skip_lines", "compress_type", "read_json_by_line",
                     "strip_outer_array", "json_root", "jsonpaths", "num_as_string",
                     "fuzzy_parse", "csv_schema")
MAX_FILES = 10000
# The files are read whole into the plan (an InlineTable): bounded, so that one query cannot
# take the server's memory (Stream Load streams a body of any size instead).
MAX_BYTES = 1 << 30


class LocalTvf:
    def __init__(self, catalog, root: str):
        self.catalog = catalog
        self.root = Path(root or os.getcwd()).resolve()

    def __call__(self, args: dict[str, str]) -> tuple[pa.Table, list | None]:
        access = CURRENT.get()
        if access is not None:
            access.require_global("ADMIN")
        for key in args:
            if key not in LOCATION and key not in FORMAT_PROPERTIES:
                raise AnalysisError(f"{key} is invalid property")
        for key in LOCATION:
            if key not in args:
                raise AnalysisError(f"Configuration '{key}' is required.")
        try:
            backend = int(args["backend_id"])
        except ValueError:
            raise AnalysisError(f"Invalid backend_id: {args['backend_id']}") from None
        if backend not in self.catalog.backends:
            raise AnalysisError(f"backend not found with backend_id = {backend}")
        headers = {k: v for k, v in args.items() if k in FORMAT_PROPERTIES and k != "csv_schema"}
        opts = StreamLoadOptions.from_headers(headers)
        files = self.files(args["file_path"])
        schema = _csv_schema(args["csv_schema"]) if args.get("csv_schema") else None
        names = [n for n, _ in schema] if schema else self._names(files[0], opts)
        tables = [t for f in files for t in _read(f, opts, names)]
        table = pa.concat_tables(tables, promote_options="permissive") if tables else \
            pa.table({n: pa.array([], pa.string()) for n in names})
        if not schema:
            return table, None
        return pa.table({n: cast_value(table.column(n).combine_chunks(), t.arrow())
                         for n, t in schema}), [t for _, t in schema]

    def files(self, file_path: str) -> list[Path]:
        """The files named, each inside the secure path; wildcards expanded, in name order."""
        found: list[Path] = []
        for part in (p.strip() for p in file_path.split(",")):
            if not part:
                continue
            pattern = part if os.path.isabs(part) else str(self.root / part)
            matches = sorted(glob.glob(pattern)) if glob.has_magic(part) else [pattern]
            for m in matches:
                path = Path(m).resolve()
                if not path.is_relative_to(self.root):
                    raise AnalysisError(f"file path {part} is not under user_files_secure_path "
                                        f"{self.root}")
                if not path.is_file():
                    raise AnalysisError(f"file not found: {part}")
                found.append(path)
        if not found:
            raise AnalysisError(f"No files match file_path: {file_path}")
        if len(found) > MAX_FILES:
            raise AnalysisError(f"file_path matches more than {MAX_FILES} files")
        total = sum(f.stat().st_size for f in found)
        if total > MAX_BYTES:
            raise AnalysisError(f"local() reads its files whole here: {total} bytes is more than "
                                f"{MAX_BYTES}; load them with Stream Load instead")
        return found

    def _names(self, first: Path, opts: StreamLoadOptions) -> list[str]:
        """The columns Doris infers from the first file."""
        if opts.format in COLUMNAR_FORMATS:
            with first.open("rb") as f:
                return file_columns(f, opts.format)
        with first.open("rb") as raw:
            head = decompressed(raw, opts.compress_type).read(1 << 20)
        text = head.decode("utf-8", "replace")
        if opts.format == "json":
            return _json_keys(text, opts)
        lines = text.split(opts.line_delimiter)[opts.skip_lines:]
        line = lines[0] if lines else ""
        fields = next(csv.reader(io.StringIO(line), delimiter=opts.column_separator[0],
                                 quotechar=opts.enclose or '"'), []) \
            if len(opts.column_separator) == 1 else line.split(opts.column_separator)
        if opts.format in ("csv_with_names", "csv_with_names_and_types"):
            return [f.strip() for f in fields]
        return [f"c{i + 1}" for i in range(max(len(fields), 1))]


def _read(path: Path, opts: StreamLoadOptions, names: list[str]) -> list[pa.Table]:
    with path.open("rb") as f:
        out = []
        for src in read_batches(f, opts, names):
            if src.bad_lines:
                raise AnalysisError(f"{path.name}: {src.errors[0] if src.errors else 'bad line'}")
            out.append(src.table)
        return out


def _json_keys(text: str, opts: StreamLoadOptions) -> list[str]:
    body = text.strip()
    try:
        if body.startswith("["):
            first = json.loads(body)[0] if opts.strip_outer_array else None
        else:
            first = json.loads(body.splitlines()[0]) if body else None
    except (json.JSONDecodeError, IndexError):
        first = None
    if not isinstance(first, dict):
        raise AnalysisError("Can not infer the columns of the json file: its first object "
                            "was not found (set strip_outer_array for an array)")
    return list(first)


def _csv_schema(text: str) -> list[tuple[str, object]]:
    """`csv_schema` = "k1:int;k2:varchar(10)": (name, DataType) pairs."""
    out = []
    for item in (i.strip() for i in text.split(";")):
        if not item:
            continue
        name, sep, type_text = item.partition(":")
        if not sep or not name.strip():
            raise AnalysisError(f"invalid csv_schema: {text}")
        try:
            out.append((name.strip(), parse_type(TokenCursor(type_text.strip()))))
        except (ValueError, AnalysisError):
            raise AnalysisError(f"invalid csv_schema type: {type_text.strip()}") from None
    return out


def register(catalog, root: str) -> None:
    table_functions.register("local", LocalTvf(catalog, root))
