"""Renaming tables: ALTER TABLE t RENAME n, ALTER TABLE a REPLACE WITH TABLE b (dbt swaps a
model's new table in this way). Journal operations (entries of `catalog/catalog.py:_APPLY`):

    op             data
    rename_table   {db, name, new_name}
    replace_table  {db, name, other, swap}   swap: names exchanged; else `other` takes `name`
                                             and the old `name` table is dropped

Tablets are keyed by id, so only the catalog's names change (and a dropped table's tablets go).
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


def replace_table(cat: Catalog, db_name: str | None, name: str, other: str, swap: bool) -> None:
    with cat.lock:
        db = cat.get_db(db_name)
        cat.get_table(db.name, name)
        cat.get_table(db.name, other)
        cat._log("replace_table", {"db": db.name, "name": name, "other": other,  # noqa: SLF001
                                   "swap": swap})


def _apply_rename(cat: Catalog, data: dict) -> None:
    tables = cat.dbs[data["db"]].tables
    table = tables.pop(data["name"])
    table.name = data["new_name"]
    tables[table.name] = table


def _apply_replace(cat: Catalog, data: dict) -> None:
    from catalog.catalog import _apply_drop_table  # the one way a table's tablets go
    tables = cat.dbs[data["db"]].tables
    old, new = tables[data["name"]], tables[data["other"]]
    if data["swap"]:
        old.name, new.name = new.name, old.name
        tables[old.name], tables[new.name] = old, new
        return
    _apply_drop_table(cat, {"db": data["db"], "name": data["name"]})
    tables.pop(data["other"])
    new.name = data["name"]
    tables[new.name] = new


APPLY = {"rename_table": _apply_rename, "replace_table": _apply_replace}
