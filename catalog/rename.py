"""Renaming tables: ALTER TABLE t RENAME n. Journal operation (an entry of
`catalog/catalog.py:_APPLY`):

    op             data
    rename_table   {db, name, new_name}

Tablets are keyed by id, so only the catalog's names change. `ALTER TABLE a REPLACE WITH TABLE
b` (dbt swaps a model's new table in this way) is catalog/temp_partitions.py:replace_table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.errors import TableExists
from catalog.names import check_table_name

if TYPE_CHECKING:
    from catalog.catalog import Catalog


def rename_table(cat: Catalog, db_name: str | None, name: str, new_name: str) -> None:
    with cat.lock:
        db = cat.get_db(db_name)
        cat.get_table(db.name, name)
        check_table_name(new_name)
        if new_name in db.tables or new_name in db.views:
            raise TableExists(new_name)
        cat._log("rename_table", {"db": db.name, "name": name, "new_name": new_name})  # noqa: SLF001


def _apply_rename(cat: Catalog, data: dict) -> None:
    tables = cat.dbs[data["db"]].tables
    table = tables.pop(data["name"])
    table.name = data["new_name"]
    tables[table.name] = table
    base = table.indexes.get(table.base_index_id)
    if base is not None:
        base.name = table.name  # the base index carries the table's name (EXPLAIN, DESC ALL)


APPLY = {"rename_table": _apply_rename}
