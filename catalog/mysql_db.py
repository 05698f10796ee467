"""The `mysql` database: Doris's read-only system database kept for MySQL tools.

Doris 2.1 (MysqlDb / MysqlDBTable) has one table in it, `procs_priv`, always empty, so that
tools which read MySQL's grant tables (DBeaver, Navicat) find it; users get SELECT on
`internal.mysql` by default (catalog/auth.py). Like information_schema it is listed by
SHOW DATABASES, can be USEd, its tables are described and queried, and nothing can be
created, changed or dropped in it.
"""

from __future__ import annotations

import pyarrow as pa

from storage.types import DataType

NAME = "mysql"

# Doris's MysqlDBTable columns: every one a CHAR of MySQL's width
_COLUMNS = {
    "procs_priv": [(name, DataType("CHAR", length=n)) for name, n in (
        ("Host", 60), ("Db", 64), ("User", 32), ("Routine_name", 64), ("Routine_type", 9),
        ("Grantor", 93), ("Proc_priv", 16), ("Timestamp", 1))],
}


def table_names() -> list[str]:
    return sorted(_COLUMNS)


def columns_of(name: str) -> list[tuple[str, DataType]] | None:
    return _COLUMNS.get(name.lower())


def schema_of(name: str) -> pa.Schema | None:
    columns = columns_of(name)
    return None if columns is None else pa.schema([pa.field(c, t.arrow()) for c, t in columns])


def build(name: str, catalog, variables, view_columns=None) -> pa.Table:
    """The rows of mysql.<name> now: none (Doris keeps these tables empty)."""
    return schema_of(name).empty_table()
