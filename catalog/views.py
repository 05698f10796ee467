"""Views: a name in a database standing for a stored query (CREATE [OR REPLACE] VIEW, DROP VIEW).

A view is kept as its query text (and optional column names) on its `Database.views`; the
binder parses and binds that text where the view's name stands in a FROM clause, in the view's
own database. Views and tables share one namespace, as in Doris. Journal operations (entries of
`catalog/catalog.py:_APPLY`):

    op           data
    create_view  {db, view: {view_id, name, sql, columns, comment, create_time}}  (also OR REPLACE)
    drop_view    {db, name}
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from catalog.errors import DorisError, TableExists

if TYPE_CHECKING:
    from catalog.catalog import Catalog


class UnknownView(DorisError):
    code = 1146
    sqlstate = "42S02"

    def __init__(self, name: str, db: str):
        super().__init__(f"Unknown table '{name}' in {db}")


class NotAView(DorisError):
    def __init__(self, name: str):
        super().__init__(f"'{name}' is not VIEW")


def create_view(cat: Catalog, db_name: str | None, name: str, sql: str, columns: list[str],
                comment: str = "", if_not_exists: bool = False, or_replace: bool = False) -> None:
    with cat.lock:
        db = cat.get_db(db_name)
        if name in db.tables:
            raise TableExists(name)
        if name in db.views and not or_replace:
            if if_not_exists:
                return
            raise TableExists(name)
        view_id = db.views[name]["view_id"] if name in db.views else cat._alloc_id()  # noqa: SLF001
        cat._log("create_view", {"db": db.name, "view": {  # noqa: SLF001
            "view_id": view_id, "name": name, "sql": sql, "columns": columns, "comment": comment,
            "create_time": time.time()}})


def drop_view(cat: Catalog, db_name: str | None, name: str, if_exists: bool = False) -> None:
    with cat.lock:
        db = cat.get_db(db_name)
        if name not in db.views:
            if name in db.tables:
                raise NotAView(name)
            if if_exists:
                return
            raise UnknownView(name, db.name)
        cat._log("drop_view", {"db": db.name, "name": name})  # noqa: SLF001


def _apply_create_view(cat: Catalog, data: dict) -> None:
    view = data["view"]
    cat.dbs[data["db"]].views[view["name"]] = view
    cat.next_id = max(cat.next_id, view["view_id"] + 1)


def _apply_drop_view(cat: Catalog, data: dict) -> None:
    cat.dbs[data["db"]].views.pop(data["name"], None)


APPLY = {"create_view": _apply_create_view, "drop_view": _apply_drop_view}
