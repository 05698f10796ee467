"""Doris 2.x multi-catalog names: the one catalog here is `internal` (Doris's built-in one).

Clients address a database as `internal.db` (the handshake's database, COM_INIT_DB, USE, JDBC
URLs `host:9030/internal.db`, pydoris `doris://.../internal.db`) and a table as
`internal.db.tbl`. `database_name` and `check_catalog` turn those into the plain names the
catalog keys by, and refuse other catalogs with Doris's error. minidoris has no external
catalogs (hive, iceberg, jdbc, ...): CREATE CATALOG is refused and changes nothing.
"""

from __future__ import annotations

from catalog.errors import DorisError

INTERNAL = "internal"
INTERNAL_ID = 0
INTERNAL_COMMENT = "Doris internal catalog"


class UnknownCatalog(DorisError):
    def __init__(self, name: str):
        super().__init__(f"Unknown catalog '{name}'")


def check_catalog(name: str | None) -> None:
    """Nothing for no catalog or `internal` (any case); UnknownCatalog otherwise."""
    if name and name.lower() != INTERNAL:
        raise UnknownCatalog(name)


def database_name(name: str) -> str:
    """`internal.db` -> `db`; `db` stays; `other.db` -> UnknownCatalog."""
    catalog, dot, db = name.partition(".")
    if not dot:
        return name
    check_catalog(catalog)
    return db
