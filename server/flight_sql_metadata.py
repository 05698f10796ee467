"""Flight SQL's metadata commands (what ADBC's get_objects / get_table_schema / get_info and
Flight SQL JDBC's DatabaseMetaData send), answered from information_schema through the
caller's session, so a user sees only what its privileges show:

    CommandGetCatalogs      internal
    CommandGetDbSchemas     the databases, filtered by a LIKE pattern
    CommandGetTables        the tables and views (TABLE / VIEW / SYSTEM VIEW), filtered by
                            database and name patterns and table types; with include_schema,
                            each one's Arrow schema (IPC-serialized), as a query returns it
    CommandGetTableTypes    TABLE, VIEW, SYSTEM VIEW
    CommandGetPrimaryKeys   the key columns of a UNIQUE table (Doris's only primary keys)
    CommandGetSqlInfo       the server's name, version, Arrow version, read-only flag, SQL and
                            Substrait support (Flight SQL's SqlInfo codes 0-5)

Each returns (Arrow schema, [tables]) in the layout FlightSql.proto fixes for the command.
"""

from __future__ import annotations

import re
from typing import Callable

import pyarrow as pa

from catalog.multi_catalog import INTERNAL

Query = Callable[[str], list[tuple]]      # SQL -> rows, through the session
SchemaOf = Callable[[str, str], pa.Schema]  # (db, table) -> the Arrow schema a SELECT gives

_TYPES = {"BASE TABLE": "TABLE", "VIEW": "VIEW", "SYSTEM VIEW": "SYSTEM VIEW"}


def _like(pattern: str) -> re.Pattern | None:
    """SQL LIKE (% and _, backslash escapes) as a regex; None matches everything."""
    if not pattern:
        return None
    out, i = "", 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out += re.escape(pattern[i + 1])
            i += 1
        elif ch == "%":
            out += ".*"
        elif ch == "_":
            out += "."
        else:
            out += re.escape(ch)
        i += 1
    return re.compile(out + r"\Z", re.S)


def _matches(pattern: re.Pattern | None, value: str) -> bool:
    return pattern is None or pattern.match(value) is not None


def catalogs() -> tuple[pa.Schema, list[pa.Table]]:
    schema = pa.schema([pa.field("catalog_name", pa.string(), nullable=False)])
    return schema, [pa.table({"catalog_name": [INTERNAL]}, schema=schema)]


def _wrong_catalog(catalog: str) -> bool:
    return bool(catalog) and catalog.lower() != INTERNAL


def db_schemas(query: Query, catalog: str, pattern: str) -> tuple[pa.Schema, list[pa.Table]]:
    schema = pa.schema([pa.field("catalog_name", pa.string()),
                        pa.field("db_schema_name", pa.string(), nullable=False)])
    like = _like(pattern)
    names = [] if _wrong_catalog(catalog) else sorted(
        r[0] for r in query("SELECT SCHEMA_NAME FROM information_schema.schemata")
        if _matches(like, r[0]))
    return schema, [pa.table({"catalog_name": [INTERNAL] * len(names),
                              "db_schema_name": names}, schema=schema)]


def tables(query: Query, schema_of: SchemaOf, catalog: str, db_pattern: str,
           table_pattern: str, types: list[str], include_schema: bool
           ) -> tuple[pa.Schema, list[pa.Table]]:
    fields = [pa.field("catalog_name", pa.string()), pa.field("db_schema_name", pa.string()),
              pa.field("table_name", pa.string(), nullable=False),
              pa.field("table_type", pa.string(), nullable=False)]
    if include_schema:
        fields.append(pa.field("table_schema", pa.binary(), nullable=False))
    schema = pa.schema(fields)
    db_like, table_like = _like(db_pattern), _like(table_pattern)
    wanted = {t.upper() for t in types}
    rows = [] if _wrong_catalog(catalog) else sorted(
        (db, name, _TYPES.get(kind, kind)) for db, name, kind in
        query("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.tables")
        if _matches(db_like, db) and _matches(table_like, name)
        and (not wanted or _TYPES.get(kind, kind) in wanted))
    columns = {"catalog_name": [INTERNAL] * len(rows), "db_schema_name": [r[0] for r in rows],
               "table_name": [r[1] for r in rows], "table_type": [r[2] for r in rows]}
    if include_schema:
        columns["table_schema"] = [schema_of(db, name).serialize().to_pybytes()
                                   for db, name, _ in rows]
    return schema, [pa.table(columns, schema=schema)]


def table_types() -> tuple[pa.Schema, list[pa.Table]]:
    schema = pa.schema([pa.field("table_type", pa.string(), nullable=False)])
    return schema, [pa.table({"table_type": sorted(set(_TYPES.values()))}, schema=schema)]


def primary_keys(query: Query, catalog: str, db: str, table: str
                 ) -> tuple[pa.Schema, list[pa.Table]]:
    schema = pa.schema([pa.field("catalog_name", pa.string()),
                        pa.field("db_schema_name", pa.string()),
                        pa.field("table_name", pa.string(), nullable=False),
                        pa.field("column_name", pa.string(), nullable=False),
                        pa.field("key_name", pa.string()),
                        pa.field("key_sequence", pa.int32(), nullable=False)])
    rows = [] if _wrong_catalog(catalog) else [
        r for r in query("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION "
                         "FROM information_schema.columns WHERE COLUMN_KEY = 'UNI'")
        if (not db or r[0] == db) and r[1] == table]
    rows.sort(key=lambda r: int(r[3]))
    return schema, [pa.table({
        "catalog_name": [INTERNAL] * len(rows), "db_schema_name": [r[0] for r in rows],
        "table_name": [r[1] for r in rows], "column_name": [r[2] for r in rows],
        "key_name": [None] * len(rows),
        "key_sequence": pa.array(range(1, len(rows) + 1), pa.int32())}, schema=schema)]


# Flight SQL's SqlInfo value union (FlightSql.proto: CommandGetSqlInfo's result schema).
_VALUE = pa.dense_union([
    pa.field("string_value", pa.string()), pa.field("bool_value", pa.bool_()),
    pa.field("bigint_value", pa.int64()), pa.field("int32_bitmask", pa.int32()),
    pa.field("string_list", pa.list_(pa.string())),
    pa.field("int32_to_int32_list_map", pa.map_(pa.int32(), pa.list_(pa.int32())))])


def sql_info(codes: list[int], server_version: str) -> tuple[pa.Schema, list[pa.Table]]:
    known: dict[int, str | bool] = {
        0: "minidoris", 1: server_version, 2: pa.__version__,
        3: False, 4: True, 5: False}  # name, version, Arrow version, read-only, SQL, Substrait
    picked = [c for c in (codes or sorted(known)) if c in known]
    strings = [known[c] for c in picked if isinstance(known[c], str)]
    bools = [known[c] for c in picked if isinstance(known[c], bool)]
    type_ids, offsets, seen = [], [], {0: 0, 1: 0}
    for c in picked:
        kind = 1 if isinstance(known[c], bool) else 0
        type_ids.append(kind)
        offsets.append(seen[kind])
        seen[kind] += 1
    children = [pa.array(strings, pa.string()), pa.array(bools, pa.bool_()),
                pa.array([], pa.int64()), pa.array([], pa.int32()),
                pa.array([], pa.list_(pa.string())),
                pa.array([], pa.map_(pa.int32(), pa.list_(pa.int32())))]
    values = pa.UnionArray.from_dense(pa.array(type_ids, pa.int8()),
                                      pa.array(offsets, pa.int32()), children,
                                      [f.name for f in _VALUE], list(range(6)))
    schema = pa.schema([pa.field("info_name", pa.uint32(), nullable=False),
                        pa.field("value", _VALUE, nullable=False)])
    return schema, [pa.Table.from_arrays([pa.array(picked, pa.uint32()), values],
                                         schema=schema)]
