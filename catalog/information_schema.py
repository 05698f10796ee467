"""information_schema: MySQL's metadata tables, built from the catalog when a query reads them.

BI tools, JDBC's DatabaseMetaData and ORMs discover schemas through these tables. Each is an
Arrow table made on demand from a catalog snapshot (SCHEMATA, TABLES and COLUMNS with views'
rows, VIEWS, PARTITIONS, SESSION/GLOBAL_VARIABLES ...); tables that minidoris has nothing to
put in (ROUTINES, TRIGGERS, ...) exist with Doris's / MySQL's columns and no rows, so the
queries tools send succeed. `table_status` / `view_status` are also SHOW TABLE STATUS's rows.
The planner scans them like any relation, so filters, joins and ORDER BY work. Columns have
the types Doris's SchemaTable.java gives them (`columns_of`: varchar(N), bigint, int,
datetime), which DESC, SHOW COLUMNS, result metadata and COM_FIELD_LIST report.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

import pyarrow as pa

from catalog import information_schema_doris, mysql_db
from catalog.access import visible_db, visible_tbl
from catalog.errors import DorisError
from catalog.model import OlapTable
from storage.types import DataType

NAME = "information_schema"
_NAME_LEN = 64  # Doris's NAME_CHAR_LEN: a column without a type below is varchar(64)


def _column(spec: str) -> tuple[str, DataType]:
    """`NAME:T` -> (NAME, Doris type): T is i bigint, n int, t datetime, s text, v<N>
    varchar(N), c<N> char(N); no T: varchar(64)."""
    name, _, t = spec.partition(":")
    if t.startswith(("v", "c")) or not t:
        kind = "CHAR" if t.startswith("c") else "VARCHAR"
        return name, DataType(kind, length=int(t[1:]) if t else _NAME_LEN)
    return name, {"i": DataType("BIGINT"), "n": DataType("INT"),
                  "t": DataType("DATETIME", scale=0), "s": DataType("STRING")}[t]


def typed_columns(*specs: str) -> list[tuple[str, DataType]]:
    """The columns of a system table with the types Doris's SchemaTable gives them."""
    return [_column(s) for s in specs]


# Columns and types as Doris's SchemaTable.java declares them (the MySQL tables' subset
# minidoris fills; PARAMETERS also has MySQL's CHARACTER_MAXIMUM_LENGTH, which JDBC's
# getProcedureColumns / getFunctionColumns select).
_COLUMNS = {
    "SCHEMATA": typed_columns("CATALOG_NAME:v512", "SCHEMA_NAME:v32",
                              "DEFAULT_CHARACTER_SET_NAME:v32", "DEFAULT_COLLATION_NAME:v32",
                              "SQL_PATH:v512", "DEFAULT_ENCRYPTION:v3"),
    "TABLES": typed_columns("TABLE_CATALOG:v512", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE",
                            "ENGINE", "VERSION:i", "ROW_FORMAT:v10", "TABLE_ROWS:i",
                            "AVG_ROW_LENGTH:i", "DATA_LENGTH:i", "MAX_DATA_LENGTH:i",
                            "INDEX_LENGTH:i", "DATA_FREE:i", "AUTO_INCREMENT:i", "CREATE_TIME:t",
                            "UPDATE_TIME:t", "CHECK_TIME:t", "TABLE_COLLATION:v32", "CHECKSUM:i",
                            "CREATE_OPTIONS:v255", "TABLE_COMMENT:v2048"),
    "COLUMNS": typed_columns("TABLE_CATALOG:v512", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME",
                             "ORDINAL_POSITION:i", "COLUMN_DEFAULT:v1024", "IS_NULLABLE:v3",
                             "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH:i", "CHARACTER_OCTET_LENGTH:i",
                             "NUMERIC_PRECISION:i", "NUMERIC_SCALE:i", "DATETIME_PRECISION:i",
                             "CHARACTER_SET_NAME:v32", "COLLATION_NAME:v32", "COLUMN_TYPE:v32",
                             "COLUMN_KEY:v3", "EXTRA:v27", "PRIVILEGES:v80",
                             "COLUMN_COMMENT:v1024", "COLUMN_SIZE:i", "DECIMAL_DIGITS:i",
                             "GENERATION_EXPRESSION", "SRS_ID:i"),
    "PARTITIONS": typed_columns("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "PARTITION_NAME",
                                "SUBPARTITION_NAME", "PARTITION_ORDINAL_POSITION:n",
                                "SUBPARTITION_ORDINAL_POSITION:n", "PARTITION_METHOD:v13",
                                "SUBPARTITION_METHOD:v13", "PARTITION_EXPRESSION:v2048",
                                "SUBPARTITION_EXPRESSION:v2048", "PARTITION_DESCRIPTION:s",
                                "TABLE_ROWS:i", "AVG_ROW_LENGTH:i", "DATA_LENGTH:i",
                                "MAX_DATA_LENGTH:i", "INDEX_LENGTH:i", "DATA_FREE:i",
                                "CREATE_TIME:i", "UPDATE_TIME:t", "CHECK_TIME:t", "CHECKSUM:i",
                                "PARTITION_COMMENT:s", "NODEGROUP:v256", "TABLESPACE_NAME:v268"),
    "STATISTICS": typed_columns("TABLE_CATALOG:v512", "TABLE_SCHEMA", "TABLE_NAME", "NON_UNIQUE:i",
                                "INDEX_SCHEMA", "INDEX_NAME", "SEQ_IN_INDEX:i", "COLUMN_NAME",
                                "COLLATION:v1", "CARDINALITY:i", "SUB_PART:i", "PACKED:v10",
                                "NULLABLE:v3", "INDEX_TYPE:v16", "COMMENT:v16",
                                "INDEX_COMMENT:v1024"),
    "VIEWS": typed_columns("TABLE_CATALOG:v512", "TABLE_SCHEMA", "TABLE_NAME",
                           "VIEW_DEFINITION:v8096", "CHECK_OPTION:v8", "IS_UPDATABLE:v3",
                           "DEFINER:v77", "SECURITY_TYPE:v7", "CHARACTER_SET_CLIENT:v32",
                           "COLLATION_CONNECTION:v32"),
    "ROUTINES": typed_columns("SPECIFIC_NAME", "ROUTINE_CATALOG", "ROUTINE_SCHEMA", "ROUTINE_NAME",
                              "ROUTINE_TYPE", "DTD_IDENTIFIER", "ROUTINE_BODY",
                              "ROUTINE_DEFINITION", "EXTERNAL_NAME", "EXTERNAL_LANGUAGE",
                              "PARAMETER_STYLE", "IS_DETERMINISTIC", "SQL_DATA_ACCESS", "SQL_PATH",
                              "SECURITY_TYPE", "CREATED:t", "LAST_ALTERED:t", "SQL_MODE",
                              "ROUTINE_COMMENT", "DEFINER", "CHARACTER_SET_CLIENT",
                              "COLLATION_CONNECTION", "DATABASE_COLLATION"),
    "PARAMETERS": typed_columns("SPECIFIC_CATALOG", "SPECIFIC_SCHEMA", "SPECIFIC_NAME",
                                "ORDINAL_POSITION:v77", "PARAMETER_MODE:v77",
                                "PARAMETER_NAME:v77", "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH",
                                "CHARACTER_OCTET_LENGTH", "NUMERIC_PRECISION:v512",
                                "NUMERIC_SCALE", "DATETIME_PRECISION", "CHARACTER_SET_NAME:v256",
                                "COLLATION_NAME", "DTD_IDENTIFIER", "ROUTINE_TYPE",
                                "DATA_TYPEDTD_IDENDS"),
    "TRIGGERS": typed_columns("TRIGGER_CATALOG:v512", "TRIGGER_SCHEMA", "TRIGGER_NAME",
                              "EVENT_MANIPULATION:v6", "EVENT_OBJECT_TABLE",
                              "ACTION_STATEMENT:v512", "ACTION_TIMING:v6"),
    "EVENTS": typed_columns("EVENT_CATALOG", "EVENT_SCHEMA", "EVENT_NAME", "DEFINER:v77",
                            "STATUS:v18"),
    "KEY_COLUMN_USAGE": typed_columns("CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME",
                                      "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME",
                                      "ORDINAL_POSITION:i", "POSITION_IN_UNIQUE_CONSTRAINT:i",
                                      "REFERENCED_TABLE_SCHEMA", "REFERENCED_TABLE_NAME",
                                      "REFERENCED_COLUMN_NAME"),
    "TABLE_CONSTRAINTS": typed_columns("CONSTRAINT_CATALOG:v512", "CONSTRAINT_SCHEMA",
                                       "CONSTRAINT_NAME", "TABLE_SCHEMA", "TABLE_NAME",
                                       "CONSTRAINT_TYPE"),
    "REFERENTIAL_CONSTRAINTS": typed_columns("CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA",
                                             "CONSTRAINT_NAME", "UNIQUE_CONSTRAINT_CATALOG",
                                             "UNIQUE_CONSTRAINT_SCHEMA", "UNIQUE_CONSTRAINT_NAME",
                                             "MATCH_OPTION", "UPDATE_RULE", "DELETE_RULE",
                                             "TABLE_NAME", "REFERENCED_TABLE_NAME"),
    "ENGINES": typed_columns("ENGINE", "SUPPORT:v8", "COMMENT:v80", "TRANSACTIONS:v3", "XA:v3",
                             "SAVEPOINTS:v3"),
    "CHARACTER_SETS": typed_columns("CHARACTER_SET_NAME:v512", "DEFAULT_COLLATE_NAME",
                                    "DESCRIPTION", "MAXLEN:i"),
    "COLLATIONS": typed_columns("COLLATION_NAME:v512", "CHARACTER_SET_NAME", "ID:i", "IS_DEFAULT",
                                "IS_COMPILED", "SORTLEN:i"),
    "PROCESSLIST": typed_columns("ID:i", "USER:v32", "HOST:v261", "DB", "COMMAND:v16", "TIME:n",
                                 "STATE", "INFO:v65533"),
    "USER_PRIVILEGES": typed_columns("GRANTEE:v81", "TABLE_CATALOG:v512", "PRIVILEGE_TYPE",
                                     "IS_GRANTABLE:v3"),
    "SCHEMA_PRIVILEGES": typed_columns("GRANTEE:v81", "TABLE_CATALOG:v512", "TABLE_SCHEMA",
                                       "PRIVILEGE_TYPE", "IS_GRANTABLE:v3"),
    "TABLE_PRIVILEGES": typed_columns("GRANTEE:v81", "TABLE_CATALOG:v512", "TABLE_SCHEMA",
                                      "TABLE_NAME", "PRIVILEGE_TYPE", "IS_GRANTABLE:v3"),
    "COLUMN_PRIVILEGES": typed_columns("GRANTEE:v128", "TABLE_CATALOG:v512", "TABLE_SCHEMA",
                                       "TABLE_NAME", "COLUMN_NAME", "PRIVILEGE_TYPE",
                                       "IS_GRANTABLE:v3"),
    "FILES": typed_columns("FILE_ID:i", "FILE_NAME:s", "FILE_TYPE:v256", "TABLESPACE_NAME:v256",
                           "ENGINE"),
    "GLOBAL_VARIABLES": typed_columns("VARIABLE_NAME", "VARIABLE_VALUE:v1024",
                                      "DEFAULT_VALUE:v1024", "CHANGED:v4"),
    "SESSION_VARIABLES": typed_columns("VARIABLE_NAME", "VARIABLE_VALUE:v1024",
                                       "DEFAULT_VALUE:v1024", "CHANGED:v4"),
    # MySQL's SHOW PROFILE rows (Doris's SchemaProfilingScanner): always empty, read by Navicat
    "PROFILING": typed_columns("QUERY_ID:i", "SEQ:i", "STATE:v30", "DURATION:v9",
                               "CPU_USER:v9", "CPU_SYSTEM:v9", "CONTEXT_VOLUNTARY:i",
                               "CONTEXT_INVOLUNTARY:i", "BLOCK_OPS_IN:i", "BLOCK_OPS_OUT:i",
                               "MESSAGES_SENT:i", "MESSAGES_RECEIVED:i", "PAGE_FAULTS_MAJOR:i",
                               "PAGE_FAULTS_MINOR:i", "SWAPS:i", "SOURCE_FUNCTION:v30",
                               "SOURCE_FILE:v20", "SOURCE_LINE:i"),
    # HISTOGRAM is jsonb in Doris; reported as text here (the histograms are JSON text)
    "COLUMN_STATISTICS": typed_columns("SCHEMA_NAME", "TABLE_NAME", "COLUMN_NAME", "HISTOGRAM:s"),
    # Doris's own tables (rowsets, table_options, ...): catalog/information_schema_doris.py
    **{name: typed_columns(*specs)
       for name, specs in information_schema_doris.column_specs().items()},
}


def arrow_schema(columns: list[tuple[str, DataType]]) -> pa.Schema:
    return pa.schema([pa.field(name, t.arrow()) for name, t in columns])


_SCHEMAS = {name: arrow_schema(cols) for name, cols in _COLUMNS.items()}


def table_names() -> list[str]:
    return sorted(_SCHEMAS)


def schema_of(name: str) -> pa.Schema | None:
    return _SCHEMAS.get(name.upper())


def columns_of(name: str) -> list[tuple[str, DataType]] | None:
    """(column, Doris type) of information_schema.<name>: DESC, result metadata, COM_FIELD_LIST."""
    return _COLUMNS.get(name.upper())


def _data_type(t) -> str:
    return "text" if t.kind == "STRING" else t.kind.lower()


def _column_row(db: str, table: str, position: int, name: str, t, nullable: bool) -> dict:
    char_len = t.length if t.is_string else None
    precision = t.precision if t.kind == "DECIMAL" else {
        "TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19, "LARGEINT": 39,
        "FLOAT": 12, "DOUBLE": 22, "BOOLEAN": 1}.get(t.kind)
    scale = t.scale if t.kind == "DECIMAL" else (0 if t.is_integer else None)
    return {
        "TABLE_CATALOG": "internal", "TABLE_SCHEMA": db, "TABLE_NAME": table,
        "COLUMN_NAME": name, "ORDINAL_POSITION": position, "COLUMN_DEFAULT": None,
        "IS_NULLABLE": "YES" if nullable else "NO", "DATA_TYPE": _data_type(t),
        "CHARACTER_MAXIMUM_LENGTH": char_len,
        "CHARACTER_OCTET_LENGTH": char_len * 4 if char_len else None,
        "NUMERIC_PRECISION": precision, "NUMERIC_SCALE": scale,
        "DATETIME_PRECISION": t.scale if t.kind == "DATETIME" else None,
        "CHARACTER_SET_NAME": "utf8mb4" if t.is_string else None,
        "COLLATION_NAME": "utf8mb4_0900_bin" if t.is_string else None,
        "COLUMN_TYPE": t.sql(), "COLUMN_KEY": "", "EXTRA": "", "PRIVILEGES": "SELECT",
        "COLUMN_COMMENT": "", "COLUMN_SIZE": char_len or precision,
        "DECIMAL_DIGITS": scale, "GENERATION_EXPRESSION": None, "SRS_ID": None}


def _column_rows(db: str, table: OlapTable) -> list[dict]:
    rows = []
    for i, c in enumerate(table.columns, 1):
        row = _column_row(db, table.name, i, c.name, c.type, c.nullable)
        row.update({
            "COLUMN_DEFAULT": c.default,
            "COLUMN_KEY": information_schema_doris.table_model(table.keys_type) if c.is_key
            else "",
            "EXTRA": c.aggregation if c.aggregation and table.keys_type == "AGG_KEYS" else "",
            "COLUMN_COMMENT": c.comment})
        rows.append(row)
    return rows


def view_column_rows(db: str, view: dict, columns: list) -> list[dict]:
    """information_schema.columns rows of a view, from its query's result columns."""
    return [_column_row(db, view["name"], i, c.name, c.type, c.nullable)
            for i, c in enumerate(columns, 1)]


def _visible_views(catalog) -> list[tuple[str, dict]]:
    return [(db.name, v) for db in catalog.dbs.values() for v in db.views.values()
            if visible_tbl(db.name, v["name"])]


def table_totals(table, index_id: int | None = None) -> tuple[int, int, int]:
    """(bytes of all replicas, replica count, rows of one replica) of a table or one index,
    from the published rowsets in the catalog."""
    size = replicas = rows = 0
    for p in table.partitions.values():
        for iid, tablet_ids in p.tablets_by_index.items():
            if index_id is not None and iid != index_id:
                continue
            for tid in tablet_ids:
                meta = p.tablets[tid]
                size += meta.data_size() * len(meta.replicas)
                replicas += len(meta.replicas)
                rows += meta.row_count()
    return size, replicas, rows


def _time(seconds: float | None) -> datetime | None:
    return datetime.fromtimestamp(int(seconds)) if seconds else None


def table_status(table: OlapTable) -> dict:
    """What Doris reports of a table in information_schema.tables and SHOW TABLE STATUS: its
    base index's rows and bytes (all replicas), the average row length, the create time and
    the last publish as update time, collation `utf-8`; MySQL's other columns NULL."""
    size, _, rows = table_totals(table, table.base_index_id)
    update = max((p.visible_version_time for p in table.partitions.values()), default=0)
    return {"TABLE_TYPE": "BASE TABLE", "ENGINE": "Doris", "TABLE_ROWS": rows,
            "AVG_ROW_LENGTH": size // rows if rows else 0, "DATA_LENGTH": size,
            "INDEX_LENGTH": 0, "CREATE_TIME": _time(table.create_time),
            "UPDATE_TIME": _time(update), "TABLE_COLLATION": "utf-8",
            "TABLE_COMMENT": table.comment or ""}


def system_view_status() -> dict:
    """An information_schema table's row of SHOW TABLE STATUS (Doris: engine SYSTEM VIEW)."""
    return {"TABLE_TYPE": "SYSTEM VIEW", "ENGINE": "SYSTEM VIEW", "TABLE_ROWS": 0,
            "AVG_ROW_LENGTH": 0, "DATA_LENGTH": 0, "INDEX_LENGTH": 0, "CREATE_TIME": None,
            "UPDATE_TIME": None, "TABLE_COLLATION": "utf-8", "TABLE_COMMENT": ""}


def view_status(view: dict) -> dict:
    """A view's row of information_schema.tables / SHOW TABLE STATUS (engine `View`)."""
    return {"TABLE_TYPE": "VIEW", "ENGINE": "View", "TABLE_ROWS": 0, "AVG_ROW_LENGTH": 0,
            "DATA_LENGTH": 0, "INDEX_LENGTH": 0, "CREATE_TIME": _time(view.get("create_time")),
            "UPDATE_TIME": None, "TABLE_COLLATION": "utf-8",
            "TABLE_COMMENT": view.get("comment", "")}


def build(name: str, catalog, variables: list[tuple[str, object]],
          view_columns: Callable | None = None) -> pa.Table:
    """The rows of information_schema.<name> now (visible databases only). `view_columns`
    (db, view) -> the view's result columns: COLUMNS lists views' columns with it (it runs
    the view's query, so outside the catalog lock)."""
    schema = _SCHEMAS[name.upper()]
    builder = _BUILDERS.get(name.upper())
    rows: list[dict] = []
    views: list[tuple[str, dict]] = []
    if builder is not None:
        with catalog.lock:
            rows = builder(catalog, variables)
            if name.upper() == "COLUMNS" and view_columns is not None:
                views = _visible_views(catalog)
    for db, view in views:
        try:
            rows += view_column_rows(db, view, view_columns(db, view))
        except DorisError:  # a view over a dropped table or column: listed without columns
            continue
    columns = {f.name: pa.array([r.get(f.name) for r in rows], f.type) for f in schema}
    return pa.table(columns, schema=schema)


def _visible_tables(catalog) -> list:
    """(database, table) pairs the current user may see (catalog/access.py)."""
    return [(db, t) for db in catalog.dbs.values() for t in db.tables.values()
            if visible_tbl(db.name, t.name)]


def _schemata(catalog, variables) -> list[dict]:
    return [{"CATALOG_NAME": "internal", "SCHEMA_NAME": n, "DEFAULT_CHARACTER_SET_NAME": "utf8mb4",
             "DEFAULT_COLLATION_NAME": "utf8mb4_0900_bin", "DEFAULT_ENCRYPTION": "NO"}
            for n in [NAME, mysql_db.NAME, *sorted(catalog.dbs)] if visible_db(n)]


def _tables(catalog, variables) -> list[dict]:
    rows = [{"TABLE_CATALOG": "internal", "TABLE_SCHEMA": db, "TABLE_NAME": n,
             **system_view_status()}
            for db, names in ((NAME, table_names()), (mysql_db.NAME, mysql_db.table_names()))
            for n in names]
    for db, t in _visible_tables(catalog):
        rows.append({"TABLE_CATALOG": "internal", "TABLE_SCHEMA": db.name,
                     "TABLE_NAME": t.name, **table_status(t)})
    for db, v in _visible_views(catalog):  # catalog/views.py
        rows.append({"TABLE_CATALOG": "internal", "TABLE_SCHEMA": db,
                     "TABLE_NAME": v["name"], **view_status(v)})
    return rows


def _views(catalog, variables) -> list[dict]:
    return [{"TABLE_CATALOG": "internal", "TABLE_SCHEMA": db, "TABLE_NAME": v["name"],
             "VIEW_DEFINITION": v["sql"], "CHECK_OPTION": "NONE", "IS_UPDATABLE": "NO",
             "DEFINER": "root@%", "SECURITY_TYPE": "DEFINER", "CHARACTER_SET_CLIENT": "utf8mb4",
             "COLLATION_CONNECTION": "utf8mb4_0900_bin"}
            for db, v in _visible_views(catalog)]


def _columns(catalog, variables) -> list[dict]:
    """Every visible table's columns, the system databases' first (as Doris lists them)."""
    system = [_column_row(db, table, i, name, t, True)
              for db, names, typed in ((NAME, table_names(), columns_of),
                                       (mysql_db.NAME, mysql_db.table_names(), mysql_db.columns_of))
              for table in names for i, (name, t) in enumerate(typed(table), 1)]
    return system + [r for db, t in _visible_tables(catalog) for r in _column_rows(db.name, t)]


def _partitions(catalog, variables) -> list[dict]:
    rows = []
    for db, t in _visible_tables(catalog):
        for i, p in enumerate(t.sorted_partitions(), 1):
            base = [p.tablets[tid] for tid in p.tablets_by_index[t.base_index_id]]
            count = sum(m.row_count() for m in base)
            size = sum(m.data_size() * len(m.replicas) for m in base)
            rows.append({"TABLE_CATALOG": "internal", "TABLE_SCHEMA": db.name,
                         "TABLE_NAME": t.name, "PARTITION_NAME": p.name,
                         "PARTITION_ORDINAL_POSITION": i,
                         "PARTITION_METHOD": t.partition_info.kind,
                         "PARTITION_EXPRESSION": ", ".join(t.partition_info.columns),
                         "TABLE_ROWS": count, "AVG_ROW_LENGTH": size // count if count else 0,
                         "DATA_LENGTH": size, "UPDATE_TIME": _time(p.visible_version_time)})
    return rows


def _engines(catalog, variables) -> list[dict]:
    return [{"ENGINE": "Doris", "SUPPORT": "DEFAULT", "COMMENT": "Doris OLAP engine",
             "TRANSACTIONS": "YES", "XA": "NO", "SAVEPOINTS": "NO"}]


def _charsets(catalog, variables) -> list[dict]:
    return [{"CHARACTER_SET_NAME": "utf8mb4", "DEFAULT_COLLATE_NAME": "utf8mb4_0900_bin",
             "DESCRIPTION": "UTF-8 Unicode", "MAXLEN": 4}]


def _collations(catalog, variables) -> list[dict]:
    return [{"COLLATION_NAME": "utf8mb4_0900_bin", "CHARACTER_SET_NAME": "utf8mb4", "ID": 309,
             "IS_DEFAULT": "Yes", "IS_COMPILED": "Yes", "SORTLEN": 1}]


def _variable_text(v) -> str | None:
    if isinstance(v, bool):
        return "true" if v else "false"
    return None if v is None else str(v)


def _variable_rows(variables, position: int) -> list[dict]:
    """Rows of session_variables (position 1) or global_variables (2) from the (name,
    session, global, default) tuples, as SHOW VARIABLES prints them."""
    return [{"VARIABLE_NAME": row[0], "VARIABLE_VALUE": _variable_text(row[position]),
             "DEFAULT_VALUE": _variable_text(row[3]), "CHANGED": str(int(row[position] != row[3]))}
            for row in variables]


_BUILDERS: dict[str, Callable] = {
    "SCHEMATA": _schemata, "TABLES": _tables, "COLUMNS": _columns, "PARTITIONS": _partitions,
    "ENGINES": _engines, "CHARACTER_SETS": _charsets, "COLLATIONS": _collations,
    "GLOBAL_VARIABLES": lambda catalog, variables: _variable_rows(variables, 2),
    "SESSION_VARIABLES": lambda catalog, variables: _variable_rows(variables, 1), "VIEWS": _views,
    **information_schema_doris.BUILDERS,
}
