"""Parser for the ALTER TABLE forms about partitions and properties (sqlglot leaves ADD
PARTITION raw and fails on DROP PARTITION):

    ALTER TABLE [db.]t ADD PARTITION [IF NOT EXISTS] p VALUES ... [("k" = "v")]
                       [DISTRIBUTED BY HASH (cols) | RANDOM [BUCKETS n]]
    ALTER TABLE [db.]t DROP PARTITION [IF EXISTS] p [FORCE]
    ALTER TABLE [db.]t SET ("k" = "v", ...)
    ALTER TABLE [db.]t MODIFY PARTITION p | (p1, ...) | (*) SET ("k" = "v", ...)
    ALTER TABLE [db.]t MODIFY DISTRIBUTION DISTRIBUTED BY HASH (cols) | RANDOM [BUCKETS n | AUTO]

Any other ALTER TABLE returns None, and the statement goes on to the next parser (sqlglot).
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.statements import (AddPartitionStmt, AlterTablePropertiesStmt, DropPartitionStmt,
                                ModifyDistributionStmt, ModifyPartitionStmt)
from server.parser.partition_desc import parse_partition_desc
from server.parser.tokens import TokenCursor


def parse_alter_table(cur: TokenCursor) -> object | None:
    cur.expect("ALTER", "TABLE")
    db, table = cur.qualified_name()
    if cur.accept("ADD"):
        if not cur.is_word("PARTITION"):
            return None
        return _add_partition(cur, db, table)
    if cur.accept("DROP", "PARTITION"):
        if_exists = cur.accept("IF", "EXISTS")
        name = cur.identifier("partition name")
        force = cur.accept("FORCE")
        cur.expect_end()
        return DropPartitionStmt(db, table, name, if_exists, force)
    if cur.is_word("SET") and cur.is_type(TokenType.L_PAREN, ahead=1):
        cur.next()
        properties = cur.properties()
        cur.expect_end()
        return AlterTablePropertiesStmt(db, table, properties)
    if cur.accept("MODIFY", "PARTITION"):
        return _modify_partition(cur, db, table)
    if cur.accept("MODIFY", "DISTRIBUTION"):
        kind, columns, buckets = _distribution(cur)
        cur.expect_end()
        return ModifyDistributionStmt(db, table, kind, columns, buckets)
    return None


def _modify_partition(cur: TokenCursor, db: str | None, table: str) -> ModifyPartitionStmt:
    if cur.accept_type(TokenType.L_PAREN):
        if cur.accept_type(TokenType.STAR):
            names = None
            cur.expect_type(TokenType.R_PAREN, "')'")
        else:
            cur.i -= 1
            names = cur.paren_list(lambda: cur.identifier("partition name"))
    else:
        names = [cur.identifier("partition name")]
    cur.expect("SET")
    properties = cur.properties()
    cur.expect_end()
    return ModifyPartitionStmt(db, table, names, properties)


def _distribution(cur: TokenCursor) -> tuple[str, list[str], int | None]:
    """DISTRIBUTED BY HASH (cols) | RANDOM [BUCKETS n | AUTO]: (kind, columns, buckets)."""
    cur.expect("DISTRIBUTED", "BY")
    columns: list[str] = []
    if cur.accept("HASH"):
        kind = "HASH"
        columns = cur.paren_list(lambda: cur.identifier("column name"))
    elif cur.accept("RANDOM"):
        kind = "RANDOM"
    else:
        raise cur.error("Expected HASH or RANDOM")
    buckets = None
    if cur.accept("BUCKETS"):
        buckets = None if cur.accept("AUTO") else cur.number("bucket number")
    return kind, columns, buckets


def _add_partition(cur: TokenCursor, db: str | None, table: str) -> AddPartitionStmt:
    stmt = AddPartitionStmt(db, table, parse_partition_desc(cur, None))
    if cur.is_word("DISTRIBUTED", "BY"):
        stmt.distribution_kind, stmt.distribution_columns, stmt.buckets = _distribution(cur)
    cur.expect_end()
    return stmt
