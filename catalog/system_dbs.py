"""The system databases every catalog has besides the users' ones: information_schema and
mysql. Each is a module with NAME, table_names(), schema_of(t), columns_of(t) (Doris types)
and build(t, catalog, variables, view_columns) (the rows now); they are read-only, always
listed (catalog/access.py ALWAYS_VISIBLE) and need no privilege to read."""

from __future__ import annotations

from types import ModuleType

from catalog import information_schema, mysql_db

SYSTEM_DBS: dict[str, ModuleType] = {information_schema.NAME: information_schema,
                                     mysql_db.NAME: mysql_db}


def system_db(name: str | None) -> ModuleType | None:
    """The system database `name` names (any case), or None for a user database."""
    return SYSTEM_DBS.get(name.lower()) if name else None
