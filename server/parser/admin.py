"""Parsers for ADMIN statements and SHOW DYNAMIC PARTITION TABLES (sqlglot fails on ADMIN and
leaves SHOW DYNAMIC PARTITION raw), and `PARTITION_PARSERS`, the partition statements'
entries of `statement.py:_OWN_PARSERS` (ALTER TABLE forms are in `alter_table.py`).

    ADMIN SET [ALL] FRONTEND[S] CONFIG ("k" = "v")
    ADMIN SHOW FRONTEND CONFIG [LIKE 'pattern']
    ADMIN COMPACT TABLE [db.]t PARTITION p WHERE type = 'BASE' | 'CUMULATIVE'
    SHOW DYNAMIC PARTITION TABLES [FROM | IN db]
  minidoris only (the dynamic partition scheduler's test hooks):
    ADMIN RUN DYNAMIC PARTITION [FROM db | FOR [db.]table]
    ADMIN SET DYNAMIC PARTITION TIME = 'yyyy-MM-dd HH:mm:ss' | DEFAULT

Another ADMIN statement returns None and goes on to the next parser.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.errors import AnalysisError
from catalog.statements import (AdminCompactTableStmt, AdminRunDynamicPartitionStmt, AdminSetConfigStmt,
                                AdminSetDynamicPartitionTimeStmt, AdminShowConfigStmt,
                                ShowDynamicPartitionStmt)
from server.parser.alter_table import parse_alter_table
from server.parser.tokens import TokenCursor


def parse_admin(cur: TokenCursor) -> object | None:
    cur.expect("ADMIN")
    if cur.accept("SET", "FRONTEND", "CONFIG") or cur.accept("SET", "ALL", "FRONTENDS", "CONFIG"):
        properties = cur.properties()
        cur.expect_end()
        if len(properties) != 1:
            raise AnalysisError("config parameter size is not equal to 1")
        return AdminSetConfigStmt(properties)
    if cur.accept("SHOW", "FRONTEND", "CONFIG"):
        like = cur.string("pattern") if cur.accept("LIKE") else None
        cur.expect_end()
        return AdminShowConfigStmt(like)
    if cur.accept("RUN", "DYNAMIC", "PARTITION"):
        stmt = AdminRunDynamicPartitionStmt()
        if cur.accept("FROM"):
            stmt.db = cur.identifier("database name")
        elif cur.accept("FOR"):
            stmt.db, stmt.table = cur.qualified_name()
        cur.expect_end()
        return stmt
    if cur.accept("COMPACT", "TABLE"):
        return _compact_table(cur)
    if cur.accept("SET", "DYNAMIC", "PARTITION", "TIME"):
        cur.accept_type(TokenType.EQ)
        value = None if cur.accept("DEFAULT") else cur.string("time")
        cur.expect_end()
        return AdminSetDynamicPartitionTimeStmt(value)
    return None


def _compact_table(cur: TokenCursor) -> AdminCompactTableStmt:
    """Doris's AdminCompactTableStmt.analyze: exactly one partition, then the WHERE."""
    db, table = cur.qualified_name()
    partitions = cur.partition_names()
    if partitions is None:
        raise AnalysisError("No partition selected for compaction")
    if len(partitions) != 1:
        raise AnalysisError("Only support single partition for compaction")
    if not cur.accept("WHERE"):
        cur.expect_end()
        raise AnalysisError("Compaction type must be specified in Where clause like: "
                            "type = 'BASE/CUMULATIVE'")
    kind = None
    if cur.accept("TYPE") and cur.accept_type(TokenType.EQ):
        t = cur.peek()
        if t is not None and t.token_type == TokenType.STRING:
            cur.next()
            kind = t.text.upper()
    if kind not in ("BASE", "CUMULATIVE") or not cur.at_end():
        raise AnalysisError("Where clause should looks like: type = 'BASE/CUMULATIVE'")
    return AdminCompactTableStmt(db, table, partitions, kind.lower())


def parse_show_dynamic(cur: TokenCursor) -> ShowDynamicPartitionStmt:
    cur.expect("SHOW", "DYNAMIC", "PARTITION", "TABLES")
    db = None
    if cur.accept("FROM") or cur.accept("IN"):
        db = cur.identifier("database name")
    cur.expect_end()
    return ShowDynamicPartitionStmt(db)


# Routed by server/parser/statement.py; a parser returning None hands the statement on.
PARTITION_PARSERS = (
    (("ALTER", "TABLE"), parse_alter_table),  # partitions and SET (...) only
    (("ADMIN",), parse_admin),
    (("SHOW", "DYNAMIC", "PARTITION"), parse_show_dynamic),
)
