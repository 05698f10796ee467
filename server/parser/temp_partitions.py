"""Parser for the ALTER TABLE forms of temporary partitions and table swaps
(`catalog/temp_partitions.py` holds the statements and rules):

    ALTER TABLE [db.]t ADD TEMPORARY PARTITION tp VALUES ... [DISTRIBUTED BY ... BUCKETS n]
    ALTER TABLE [db.]t DROP TEMPORARY PARTITION [IF EXISTS] tp [FORCE]
    ALTER TABLE [db.]t REPLACE PARTITION (p, ...) WITH TEMPORARY PARTITION (tp, ...)
                       [PROPERTIES ("strict_range" = "...", "use_temp_partition_name" = "...")]
    ALTER TABLE [db.]t REPLACE WITH TABLE t2 [PROPERTIES ("swap" = "true" | "false")]

Any other ALTER TABLE returns None and goes on to the next parser.
"""

from __future__ import annotations

from catalog.temp_partitions import (AddTempPartitionStmt, DropTempPartitionStmt,
                                     ReplacePartitionStmt, ReplaceTableStmt)
from server.parser.alter_table import _add_partition
from server.parser.tokens import TokenCursor


def parse_temp_partition_alter(cur: TokenCursor) -> object | None:
    cur.expect("ALTER", "TABLE")
    db, table = cur.qualified_name()
    if cur.accept("ADD", "TEMPORARY"):
        return AddTempPartitionStmt(_add_partition(cur, db, table))
    if cur.accept("DROP", "TEMPORARY", "PARTITION"):
        if_exists = cur.accept("IF", "EXISTS")
        name = cur.identifier("partition name")
        cur.accept("FORCE")
        cur.expect_end()
        return DropTempPartitionStmt(db, table, name, if_exists)
    if not cur.accept("REPLACE"):
        return None
    if cur.accept("WITH", "TABLE"):
        other = cur.identifier("table name")
        stmt = ReplaceTableStmt(db, table, other, _properties(cur))
        cur.expect_end()
        return stmt
    if not (cur.accept("PARTITION") or cur.accept("PARTITIONS")):
        raise cur.error("Expected PARTITION or WITH TABLE")
    parts = cur.paren_list(lambda: cur.identifier("partition name"))
    cur.expect("WITH", "TEMPORARY")
    if not (cur.accept("PARTITION") or cur.accept("PARTITIONS")):
        raise cur.error("Expected PARTITION")
    temps = cur.paren_list(lambda: cur.identifier("partition name"))
    stmt = ReplacePartitionStmt(db, table, parts, temps, _properties(cur))
    cur.expect_end()
    return stmt


def _properties(cur: TokenCursor) -> dict[str, str]:
    return cur.properties() if cur.accept("PROPERTIES") else {}
