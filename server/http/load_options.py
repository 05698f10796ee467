"""Stream Load headers, validated: what a load reads and how it maps onto the table.

Doris's names and defaults: `column_separator` \\t, `line_delimiter` \\n (both may be written
as hex, `\\x01`), `format` csv (also csv_with_names, csv_with_names_and_types, json, and the
typed formats parquet, orc and arrow: an Arrow IPC stream), `compress_type` (gz, bz2, lz4,
deflate: server/http/body_codec.py),
`columns` (source columns in file order, plus derived `name = expr` columns), `where`,
`max_filter_ratio` 0, `strict_mode` false, `partitions`, `skip_lines`, `enclose`, `escape`,
`trim_double_quotes`, `read_json_by_line`, `strip_outer_array`, `json_root` and `jsonpaths`
(server/http/json_paths.py), and for Unique tables
`merge_type` (APPEND, DELETE, MERGE with `delete`), `function_column.sequence_col` and
`hidden_columns` (server/http/merge_type.py). A bad value is an error that names the header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from catalog.group_commit import check_mode
from catalog.errors import AnalysisError
from server.http.body_codec import parse_compress_type
from server.http.json_paths import parse_paths, parse_root

_FORMATS = ("csv", "csv_with_names", "csv_with_names_and_types", "json", "parquet", "orc", "arrow")
COLUMNAR_FORMATS = ("parquet", "orc", "arrow")  # read whole, typed (server/http/columnar_body.py)
_HEX = re.compile(r"\\x([0-9a-fA-F]{2})")


@dataclass
class StreamLoadOptions:
    label: str | None = None
    column_separator: str = "\t"
    line_delimiter: str = "\n"
    format: str = "csv"
    columns: list[tuple[str, exp.Expression | None]] | None = None  # (name, derivation)
    where: exp.Expression | None = None
    max_filter_ratio: float = 0.0
    strict_mode: bool = False
    partitions: list[str] = field(default_factory=list)
    temporary_partitions: bool = False
    skip_lines: int = 0
    enclose: str | None = None
    escape: str | None = None
    trim_double_quotes: bool = False
    read_json_by_line: bool = False
    strip_outer_array: bool = False
    json_root: str | None = None        # $.a.b: each document's node holding the rows
    jsonpaths: list[str] | None = None  # ["$.k1", "$.k3.k1"]: the fields, in source order
    partial_columns: bool = False  # merge-on-write partial update (catalog/partial_update.py)
    # batch delete and sequence column (server/http/merge_type.py)
    merge_type: str = "APPEND"  # APPEND | DELETE | MERGE
    delete: exp.Expression | None = None  # MERGE's `delete` condition
    sequence_col: str | None = None  # header function_column.sequence_col
    hidden_columns: list[str] = field(default_factory=list)  # header hidden_columns
    group_commit: str = "off_mode"  # header group_commit: catalog/group_commit.py
    compress_type: str | None = None  # gz | bz2 | lz4 | deflate: server/http/body_codec.py

    @classmethod
    def from_headers(cls, headers: dict[str, str]) -> "StreamLoadOptions":
        h = {k.lower(): v for k, v in headers.items()}
        o = cls()
        o.label = h.get("label") or None
        if h.get("group_commit", "").strip():
            try:
                o.group_commit = check_mode(h["group_commit"])
            except ValueError:
                raise AnalysisError(f"group_commit can only be [async_mode, sync_mode, "
                                    f"off_mode], but got {h['group_commit']}") from None
        if "column_separator" in h:
            o.column_separator = _separator(h["column_separator"], "column_separator")
        if "line_delimiter" in h:
            o.line_delimiter = _separator(h["line_delimiter"], "line_delimiter")
        fmt = h.get("format", "csv").strip().lower()
        if fmt not in _FORMATS:
            raise AnalysisError(f"format:{fmt} is not supported.")
        o.format = fmt
        o.compress_type = parse_compress_type(h.get("compress_type", ""))
        if o.compress_type is not None and fmt in COLUMNAR_FORMATS:
            raise AnalysisError(f"compress_type is not supported for the {fmt} format")
        o.merge_type = h.get("merge_type", "APPEND").strip().upper() or "APPEND"
        if o.merge_type not in ("APPEND", "DELETE", "MERGE"):
            raise AnalysisError(f"unknown merge type {h['merge_type']}")
        if h.get("delete", "").strip():
            o.delete = _expression(h["delete"], "delete")
        # DataDescription.checkMergeType's texts
        if o.merge_type != "MERGE" and o.delete is not None:
            raise AnalysisError("not support DELETE ON clause when merge type is not MERGE.")
        if o.merge_type == "MERGE" and o.delete is None:
            raise AnalysisError("Excepted DELETE ON clause when merge type is MERGE.")
        o.sequence_col = h.get("function_column.sequence_col", "").strip() or None
        o.hidden_columns = [c.strip() for c in h.get("hidden_columns", "").split(",")
                            if c.strip()]
        if h.get("columns", "").strip():
            o.columns = parse_columns(h["columns"])
        if h.get("where", "").strip():
            o.where = _expression(h["where"], "where")
        o.max_filter_ratio = _ratio(h.get("max_filter_ratio", "0"))
        o.strict_mode = _bool(h, "strict_mode")
        o.trim_double_quotes = _bool(h, "trim_double_quotes")
        o.read_json_by_line = _bool(h, "read_json_by_line")
        o.strip_outer_array = _bool(h, "strip_outer_array")
        o.json_root = parse_root(h["json_root"]) if h.get("json_root", "").strip() else None
        o.jsonpaths = parse_paths(h["jsonpaths"]) if h.get("jsonpaths", "").strip() else None
        o.partial_columns = _bool(h, "partial_columns")
        parts = h.get("partitions") or h.get("temporary_partitions") or ""
        o.temporary_partitions = "temporary_partitions" in h
        o.partitions = [p.strip() for p in parts.split(",") if p.strip()]
        try:
            o.skip_lines = int(h.get("skip_lines", "0"))
        except ValueError:
            raise AnalysisError(f"Invalid skip_lines: {h['skip_lines']}") from None
        if o.skip_lines < 0:
            raise AnalysisError(f"Invalid skip_lines: {o.skip_lines}")
        for name in ("enclose", "escape"):
            if h.get(name):
                value = _separator(h[name], name)
                if len(value.encode()) != 1:
                    raise AnalysisError(f"{name} must be single-char")
                setattr(o, name, value)
        return o


def parse_columns(text: str) -> list[tuple[str, exp.Expression | None]]:
    """`k1, k2, tmp, v = tmp * 2` -> [(k1, None), (k2, None), (tmp, None), (v, tmp * 2)]:
    parsed as a select list, where `v = expr` is an equality with a column on the left."""
    try:
        items = sqlglot.parse_one(f"SELECT {text}", dialect="doris").expressions
    except sqlglot.errors.ParseError:
        raise AnalysisError(f"Syntax error in columns: {text.strip()}") from None
    out: list[tuple[str, exp.Expression | None]] = []
    for item in items:
        if isinstance(item, exp.Column) and not item.table:
            out.append((item.name, None))
        elif isinstance(item, exp.EQ) and isinstance(item.this, exp.Column) and not item.this.table:
            out.append((item.this.name, item.expression))
        else:
            raise AnalysisError(f"Invalid item in columns: {item.sql(dialect='doris')}")
    if len({n.lower() for n, _ in out}) != len(out):
        raise AnalysisError("Duplicate column in columns header")
    return out


def _expression(text: str, header: str) -> exp.Expression:
    try:
        return sqlglot.parse_one(text, dialect="doris")
    except sqlglot.errors.ParseError:
        raise AnalysisError(f"Syntax error in {header}: {text.strip()}") from None


def _separator(raw: str, header: str) -> str:
    if not raw:
        raise AnalysisError(f"{header} cannot be empty")
    value = _HEX.sub(lambda m: chr(int(m.group(1), 16)), raw)
    return value.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r")


def _ratio(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise AnalysisError(f"Invalid max_filter_ratio: {raw}") from None
    if not 0 <= value <= 1:
        raise AnalysisError(f"max_filter_ratio must between 0 and 1, but get {raw}")
    return value


def _bool(h: dict[str, str], name: str) -> bool:
    raw = h.get(name, "false").strip().lower()
    if raw not in ("true", "false"):
        raise AnalysisError(f"Invalid {name}: {h[name]}, it must be true or false")
    return raw == "true"
