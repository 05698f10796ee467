"""COM_FIELD_LIST: the column definitions of one table, as Doris's FE sends them.

The mysql CLI sends it for every table of the current database at start-up (auto-rehash, its
name completion). Doris (ConnectProcessor.handleFieldList) answers with one column definition
per base-schema column, each followed by its default value, then an EOF; an empty name, an
unknown database or an unknown table is an error and the session goes on.
"""

from __future__ import annotations

from catalog.system_dbs import system_db
from catalog.errors import DorisError
from server.protocol.format import column_definition


class BadTable(DorisError):
    code = 1051
    sqlstate = "42S02"
    doris_prefix = False


class BadDatabase(DorisError):
    code = 1049
    sqlstate = "42000"
    doris_prefix = False


def field_list_packets(catalog, db: str | None, table_name: str, access=None) -> list[bytes]:
    """Column definitions of `db`.`table_name` (information_schema included); DorisError if
    there is no such table, or if `access` (the session's user) may not see it."""
    if not table_name:
        raise BadTable("Empty tableName")
    sysdb = system_db(db)
    if sysdb is not None:
        columns = sysdb.columns_of(table_name)
        if columns is None:
            raise BadTable(f"Unknown table({table_name})")
        return [column_definition(name, t, schema=sysdb.NAME, table=table_name, field_list=True)
                for name, t in columns]
    with catalog.lock:
        database = catalog.dbs.get(db) if db else None
        if database is None:
            raise BadDatabase(f"Unknown database({db})")
        table = database.tables.get(table_name)
        if table is None:
            raise BadTable(f"Unknown table({table_name})")
        if access is not None:
            access.require_tbl(database.name, table.name, "SHOW")
        return [column_definition(c.name, c.type, c.nullable, schema=db, table=table.name,
                                  field_list=True,
                                  default=None if c.default is None else str(c.default))
                for c in table.columns]
