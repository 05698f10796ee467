"""Parsers for rollup and synchronous materialized view DDL (entries of statement.py:_OWN_PARSERS).

    ALTER TABLE [db.]t ADD ROLLUP r (cols) [DUPLICATE KEY (cols)] [FROM idx] [PROPERTIES (...)]
                                  [, r2 (...) ...]
    ALTER TABLE [db.]t DROP ROLLUP r [PROPERTIES (...)] [, r2 ...]
    SHOW ALTER TABLE ROLLUP | MATERIALIZED VIEW [FROM | IN db] [WHERE] [ORDER BY] [LIMIT]
    CANCEL ALTER TABLE ROLLUP | MATERIALIZED VIEW FROM [db.]t [(job_id, ...)]
    CREATE MATERIALIZED VIEW [IF NOT EXISTS] mv AS SELECT ... [PROPERTIES (...)]
    DROP MATERIALIZED VIEW [IF EXISTS] mv ON [db.]t
    ADMIN WAIT ALTER TABLE [FROM db]                       (minidoris-only, for tests)

Another ALTER TABLE form returns None: the next parser gets it.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.statements import (AddRollupStmt, AdminWaitAlterStmt, CancelAlterTableStmt,
                                CreateMaterializedViewStmt, DropRollupStmt, RollupDesc,
                                ShowAlterTableStmt)
from server.parser.tokens import TokenCursor


def parse_alter_rollup(cur: TokenCursor) -> object | None:
    cur.expect("ALTER", "TABLE")
    db, table = cur.qualified_name()
    if cur.accept("ADD", "ROLLUP"):
        return AddRollupStmt(db, table, _comma_list(cur, _rollup))
    if cur.accept("DROP", "ROLLUP"):
        return DropRollupStmt(db, table, _comma_list(cur, _drop_item))
    return None


def _comma_list(cur: TokenCursor, item) -> list:
    """item, item, ... up to the end of the statement."""
    items = [item(cur)]
    while cur.accept_type(TokenType.COMMA):
        items.append(item(cur))
    cur.expect_end()
    return items


def _rollup(cur: TokenCursor) -> RollupDesc:
    desc = RollupDesc(cur.identifier("rollup name"),
                      cur.paren_list(lambda: cur.identifier("column name")))
    if cur.accept("DUPLICATE", "KEY"):
        desc.dup_keys = cur.paren_list(lambda: cur.identifier("column name"))
    if cur.accept("FROM"):
        desc.from_index = cur.identifier("index name")
    if cur.accept("PROPERTIES"):
        desc.properties = cur.properties()
    return desc


def _drop_item(cur: TokenCursor) -> str:
    name = cur.identifier("rollup name")
    if cur.accept("PROPERTIES"):
        cur.properties()
    return name


def _kind(cur: TokenCursor) -> str:
    if cur.accept("ROLLUP"):
        return "ROLLUP"
    if cur.accept("MATERIALIZED", "VIEW"):
        return "MATERIALIZED VIEW"
    raise cur.error("Expected ROLLUP or MATERIALIZED VIEW")


def parse_show_alter(cur: TokenCursor) -> object | None:
    cur.expect("SHOW", "ALTER", "TABLE")
    if not (cur.is_word("ROLLUP") or cur.is_word("MATERIALIZED")):
        return None  # SHOW ALTER TABLE COLUMN: not ours
    kind = _kind(cur)
    db = cur.identifier("database name") if cur.accept("FROM") or cur.accept("IN") else None
    return ShowAlterTableStmt(kind, db, cur.rest_sql())


def parse_cancel_alter(cur: TokenCursor) -> object | None:
    cur.expect("CANCEL", "ALTER", "TABLE")
    if not (cur.is_word("ROLLUP") or cur.is_word("MATERIALIZED")):
        return None
    kind = _kind(cur)
    cur.expect("FROM")
    db, table = cur.qualified_name()
    ids = cur.paren_list(lambda: cur.number("job id")) if cur.is_type(TokenType.L_PAREN) else []
    cur.expect_end()
    return CancelAlterTableStmt(kind, db, table, ids)


def parse_create_mv(cur: TokenCursor) -> CreateMaterializedViewStmt:
    from server.parser.statement import parse_sqlglot  # statement.py imports this module

    cur.expect("CREATE", "MATERIALIZED", "VIEW")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = cur.identifier("materialized view name")
    properties = {}
    if cur.accept("PROPERTIES"):
        properties = cur.properties()
    cur.expect("AS")
    sql = cur.rest_sql().strip().rstrip(";")
    return CreateMaterializedViewStmt(name, parse_sqlglot(sql), sql, if_not_exists, properties)


def parse_drop_mv(cur: TokenCursor) -> DropRollupStmt:
    cur.expect("DROP", "MATERIALIZED", "VIEW")
    if_exists = cur.accept("IF", "EXISTS")
    name = cur.identifier("materialized view name")
    cur.expect("ON")
    db, table = cur.qualified_name()
    cur.expect_end()
    return DropRollupStmt(db, table, [name], if_exists, is_mv=True)


def parse_admin_wait(cur: TokenCursor) -> AdminWaitAlterStmt:
    cur.expect("ADMIN", "WAIT", "ALTER", "TABLE")
    db = cur.identifier("database name") if cur.accept("FROM") else None
    cur.expect_end()
    return AdminWaitAlterStmt(db)


OWN_PARSERS = (
    (("ALTER", "TABLE"), parse_alter_rollup),
    (("SHOW", "ALTER", "TABLE"), parse_show_alter),
    (("CANCEL", "ALTER", "TABLE"), parse_cancel_alter),
    (("CREATE", "MATERIALIZED", "VIEW"), parse_create_mv),
    (("DROP", "MATERIALIZED", "VIEW"), parse_drop_mv),
    (("ADMIN", "WAIT", "ALTER"), parse_admin_wait),
)
