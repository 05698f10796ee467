"""Parsers for the recycle bin statements (catalog/recycle_bin.py):

    RECOVER DATABASE db [db_id] [AS new_db]
    RECOVER TABLE [db.]t [table_id] [AS new_t]
    RECOVER PARTITION p [partition_id] [AS new_p] FROM [db.]t
    SHOW CATALOG RECYCLE BIN [WHERE NAME = 'x' | NAME LIKE 'x%']
    DROP CATALOG RECYCLE BIN WHERE 'DbId' | 'TableId' | 'PartitionId' = id
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from catalog.errors import AnalysisError
from catalog.recycle_ops import ID_TYPES
from server.parser.tokens import TokenCursor


@dataclass
class RecoverDatabaseStmt:
    name: str
    db_id: int = -1
    new_name: str | None = None


@dataclass
class RecoverTableStmt:
    db: str | None
    table: str
    table_id: int = -1
    new_name: str | None = None


@dataclass
class RecoverPartitionStmt:
    db: str | None
    table: str
    name: str
    partition_id: int = -1
    new_name: str | None = None


@dataclass
class ShowRecycleBinStmt:
    tail: str  # the WHERE clause's text, filtered by server/handlers/show_filter.py


@dataclass
class DropRecycleBinStmt:
    kind: str  # DbId, TableId or PartitionId
    object_id: int


def _id_and_alias(cur: TokenCursor, what: str) -> tuple[int, str | None]:
    object_id = cur.number(what) if cur.is_type(TokenType.NUMBER) else -1
    new_name = cur.identifier("new name") if cur.accept("AS") else None
    return object_id, new_name


def parse_recover_database(cur: TokenCursor) -> RecoverDatabaseStmt:
    cur.expect("RECOVER", "DATABASE")
    name = cur.identifier("database name")
    db_id, new_name = _id_and_alias(cur, "database id")
    cur.expect_end()
    return RecoverDatabaseStmt(name, db_id, new_name)


def parse_recover_table(cur: TokenCursor) -> RecoverTableStmt:
    cur.expect("RECOVER", "TABLE")
    db, table = cur.qualified_name()
    table_id, new_name = _id_and_alias(cur, "table id")
    cur.expect_end()
    return RecoverTableStmt(db, table, table_id, new_name)


def parse_recover_partition(cur: TokenCursor) -> RecoverPartitionStmt:
    cur.expect("RECOVER", "PARTITION")
    name = cur.identifier("partition name")
    partition_id, new_name = _id_and_alias(cur, "partition id")
    cur.expect("FROM")
    db, table = cur.qualified_name()
    cur.expect_end()
    return RecoverPartitionStmt(db, table, name, partition_id, new_name)


def parse_show_recycle_bin(cur: TokenCursor) -> ShowRecycleBinStmt:
    cur.expect("SHOW", "CATALOG", "RECYCLE", "BIN")
    tail = cur.rest_sql().strip().rstrip(";").strip()
    if tail:
        _check_where(cur)
    return ShowRecycleBinStmt(tail)


def _check_where(cur: TokenCursor) -> None:
    """ShowCatalogRecycleBinStmt accepts `NAME = "x"` or `NAME LIKE "x"` only."""
    ok = cur.accept("WHERE") and cur.accept("NAME") and (
        cur.accept_type(TokenType.EQ) is not None or cur.accept("LIKE")) \
        and cur.accept_type(TokenType.STRING) is not None
    cur.accept_type(TokenType.SEMICOLON)
    if not ok or not cur.at_end():
        raise AnalysisError('Where clause should looks like: NAME = "name", or NAME LIKE '
                            '"matcher"')


def parse_drop_recycle_bin(cur: TokenCursor) -> DropRecycleBinStmt:
    cur.expect("DROP", "CATALOG", "RECYCLE", "BIN", "WHERE")
    kind = ID_TYPES.get(cur.string("'DbId', 'TableId' or 'PartitionId'").lower())
    if kind is None:
        raise AnalysisError("DROP CATALOG RECYCLE BIN: idType should be 'DbId', 'TableId' or "
                            "'PartitionId'.")
    cur.expect_type(TokenType.EQ, "=")
    object_id = cur.number("id")
    cur.expect_end()
    return DropRecycleBinStmt(kind, object_id)


OWN_PARSERS = (
    (("RECOVER", "DATABASE"), parse_recover_database),
    (("RECOVER", "TABLE"), parse_recover_table),
    (("RECOVER", "PARTITION"), parse_recover_partition),
    (("SHOW", "CATALOG", "RECYCLE", "BIN"), parse_show_recycle_bin),
    (("DROP", "CATALOG", "RECYCLE", "BIN"), parse_drop_recycle_bin),
)
