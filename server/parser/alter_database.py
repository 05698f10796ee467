"""Parser of ALTER DATABASE (catalog/database_alter.py):

    ALTER DATABASE db RENAME new_name
    ALTER DATABASE db SET DATA QUOTA <n>[B|K|KB|M|MB|G|GB|T|TB|P|PB]   (or a quoted size)
    ALTER DATABASE db SET REPLICA QUOTA <n>
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.database_alter import parse_data_volume
from server.parser.tokens import TokenCursor


@dataclass
class RenameDatabaseStmt:
    name: str
    new_name: str


@dataclass
class SetDatabaseQuotaStmt:
    name: str
    data_quota: int | None = None
    replica_quota: int | None = None


def parse_alter_database(cur: TokenCursor) -> object | None:
    cur.expect("ALTER", "DATABASE")
    name = cur.identifier("database name")
    if cur.accept("RENAME"):
        new_name = cur.identifier("database name")
        cur.expect_end()
        return RenameDatabaseStmt(name, new_name)
    if cur.accept("SET", "DATA", "QUOTA"):
        text = cur.rest_sql().strip().rstrip(";").strip().strip("'\"")
        return SetDatabaseQuotaStmt(name, data_quota=parse_data_volume(text))
    if cur.accept("SET", "REPLICA", "QUOTA"):
        count = cur.number("replica quota")
        cur.expect_end()
        return SetDatabaseQuotaStmt(name, replica_quota=count)
    return None


OWN_PARSERS = ((("ALTER", "DATABASE"), parse_alter_database),)
