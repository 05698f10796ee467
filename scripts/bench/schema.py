"""The benchmark suites' table definitions, read from the Doris DDL in `scripts/bench/ddl/`.

The DDL files are the one source of truth for column names and types: `ddl_statements` splits a
file into its CREATE TABLE statements (sent to minidoris as written), and `arrow_schemas` maps
each table's columns to the Arrow types the generators cast their data to, so minidoris and
DuckDB load identical values (INT -> int32, BIGINT -> int64, DECIMAL(p, s) -> decimal128(p, s),
DATE -> date32, VARCHAR/CHAR/STRING -> string).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

BENCH_DIR = Path(__file__).resolve().parent
DDL_DIR = BENCH_DIR / "ddl"
QUERY_DIR = BENCH_DIR / "queries"
SUITES = ("tpch", "ssb")

_CREATE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`?(\w+)`?\s*\(", re.I)
_COLUMN = re.compile(r"^\s*`?(\w+)`?\s+(\w+)(?:\s*\(\s*(\d+)(?:\s*,\s*(\d+))?\s*\))?", re.I)
_SIMPLE_TYPES = {
    "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(), "INTEGER": pa.int32(),
    "BIGINT": pa.int64(), "DATE": pa.date32(), "DATETIME": pa.timestamp("us"),
    "VARCHAR": pa.string(), "CHAR": pa.string(), "STRING": pa.string(),
    "DOUBLE": pa.float64(), "FLOAT": pa.float32(),
}


def ddl_text(suite: str) -> str:
    return (DDL_DIR / f"{suite}.sql").read_text()


def ddl_statements(suite: str) -> list[str]:
    """The CREATE TABLE statements of a suite's DDL file, comments removed."""
    lines = [ln for ln in ddl_text(suite).splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def _arrow_type(name: str, p: str | None, s: str | None) -> pa.DataType:
    name = name.upper()
    if name in ("DECIMAL", "DECIMALV3"):
        return pa.decimal128(int(p or 9), int(s or 0))
    try:
        return _SIMPLE_TYPES[name]
    except KeyError:
        raise ValueError(f"no Arrow type for column type {name}") from None


def arrow_schemas(suite: str) -> dict[str, pa.Schema]:
    """Table name -> Arrow schema, in the DDL's column order."""
    out: dict[str, pa.Schema] = {}
    for stmt in ddl_statements(suite):
        m = _CREATE.search(stmt)
        if not m:
            continue
        body = stmt[m.end():]
        depth, end = 1, 0
        for end, ch in enumerate(body):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                break
        fields = []
        for line in _split_columns(body[:end]):
            c = _COLUMN.match(line)
            if c is None:
                raise ValueError(f"cannot read column definition {line!r} in {suite}.sql")
            nullable = "NOT NULL" not in line.upper()
            fields.append(pa.field(c.group(1).lower(), _arrow_type(*c.group(2, 3, 4)), nullable))
        out[m.group(1).lower()] = pa.schema(fields)
    return out


def _split_columns(text: str) -> list[str]:
    """Split a column list at top-level commas (DECIMAL(15, 2) holds one)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def query_names(suite: str) -> list[str]:
    """The suite's query names (file stems), in order: q01..q22, or q11..q43."""
    return sorted(p.stem for p in (QUERY_DIR / suite).glob("q*.sql"))


def query_text(suite: str, name: str) -> str:
    """A query's SQL without its comment lines and trailing semicolon."""
    lines = [ln for ln in (QUERY_DIR / suite / f"{name}.sql").read_text().splitlines()
             if not ln.lstrip().startswith("--")]
    return "\n".join(lines).strip().rstrip(";").strip()


def cast_to_schema(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Select the schema's columns from `table` and cast them (string_view -> string etc.)."""
    arrays = []
    for field in schema:
        col = table.column(field.name)
        arrays.append(col.cast(field.type) if col.type != field.type else col)
    return pa.Table.from_arrays(arrays, schema=schema)
