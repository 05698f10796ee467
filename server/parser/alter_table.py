"""Parser for the ALTER TABLE forms about partitions and properties (sqlglot leaves ADD
PARTITION raw and fails on DROP PARTITION):

    ALTER TABLE [db.]t ADD PARTITION [IF NOT EXISTS] p VALUES ... [("k" = "v")]
                       [DISTRIBUTED BY HASH (cols) | RANDOM [BUCKETS n]]
    ALTER TABLE [db.]t DROP PARTITION [IF EXISTS] p [FORCE]
    ALTER TABLE [db.]t SET ("k" = "v", ...)

Any other ALTER TABLE returns None, and the statement goes on to the next parser (sqlglot).
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.statements import AddPartitionStmt, AlterTablePropertiesStmt, DropPartitionStmt
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
    return None


def _add_partition(cur: TokenCursor, db: str | None, table: str) -> AddPartitionStmt:
    stmt = AddPartitionStmt(db, table, parse_partition_desc(cur, None))
    if cur.accept("DISTRIBUTED", "BY"):
        if cur.accept("HASH"):
            stmt.distribution_kind = "HASH"
            stmt.distribution_columns = cur.paren_list(lambda: cur.identifier("column name"))
        elif cur.accept("RANDOM"):
            stmt.distribution_kind = "RANDOM"
        else:
            raise cur.error("Expected HASH or RANDOM")
        if cur.accept("BUCKETS"):
            stmt.buckets = None if cur.accept("AUTO") else cur.number("bucket number")
    cur.expect_end()
    return stmt
