"""Parser for schema change DDL (an entry of statement.py:_OWN_PARSERS):

    ALTER TABLE [db.]t clause [, clause ...] [PROPERTIES (...)]
      ADD COLUMN col_def [FIRST | AFTER col] [TO rollup] [PROPERTIES (...)]
      ADD COLUMN (col_def, ...) [TO rollup]
      DROP COLUMN col [FROM rollup]
      MODIFY COLUMN col_def [FIRST | AFTER col] [FROM rollup]
      MODIFY COLUMN col COMMENT 'text'
      RENAME COLUMN old [TO] new
      ORDER BY (col, ...) [FROM rollup]
      MODIFY COMMENT 'text'
    SHOW ALTER TABLE COLUMN [FROM | IN db] [WHERE ...] [ORDER BY ...] [LIMIT n]
    CANCEL ALTER TABLE COLUMN FROM [db.]t [(job_id, ...)]

Any other ALTER TABLE returns None (the next parser gets it).
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.statements import (AddColumnClause, CancelAlterTableStmt, ColumnPosition,
                                DropColumnClause, ModifyColumnClause, ModifyColumnCommentClause,
                                ModifyTableCommentClause, RenameColumnClause,
                                ReorderColumnsClause, SchemaChangeStmt, ShowAlterTableStmt)
from server.parser.create_table import parse_column_def
from server.parser.tokens import TokenCursor

_STOP = ("FIRST", "AFTER", "TO", "FROM", "PROPERTIES")
_STARTS = (("ADD", "COLUMN"), ("DROP", "COLUMN"), ("MODIFY", "COLUMN"), ("RENAME", "COLUMN"),
           ("ORDER", "BY"), ("MODIFY", "COMMENT"))


def parse_schema_change(cur: TokenCursor) -> SchemaChangeStmt | None:
    cur.expect("ALTER", "TABLE")
    db, table = cur.qualified_name()
    if not any(cur.is_word(*words) for words in _STARTS):
        return None
    stmt = SchemaChangeStmt(db, table, [])
    while True:
        stmt.clauses.append(_clause(cur))
        if cur.accept("PROPERTIES"):
            stmt.properties.update(cur.properties())
        if not cur.accept_type(TokenType.COMMA):
            break
    cur.expect_end()
    return stmt


def _clause(cur: TokenCursor) -> object:
    if cur.accept("ADD", "COLUMN"):
        if cur.is_type(TokenType.L_PAREN):
            columns = cur.paren_list(lambda: parse_column_def(cur))
            return AddColumnClause(columns, None, _index(cur, "TO"))
        col = parse_column_def(cur, _STOP)
        return AddColumnClause([col], _position(cur), _index(cur, "TO"))
    if cur.accept("DROP", "COLUMN"):
        return DropColumnClause(cur.identifier("column name"), _index(cur, "FROM"))
    if cur.accept("MODIFY", "COLUMN"):
        if cur.is_word("COMMENT", ahead=1):
            name = cur.identifier("column name")
            cur.expect("COMMENT")
            return ModifyColumnCommentClause(name, cur.string("comment"))
        col = parse_column_def(cur, _STOP)
        return ModifyColumnClause(col, _position(cur), _index(cur, "FROM"))
    if cur.accept("RENAME", "COLUMN"):
        old = cur.identifier("column name")
        cur.accept("TO")
        return RenameColumnClause(old, cur.identifier("column name"))
    if cur.accept("ORDER", "BY"):
        columns = cur.paren_list(lambda: cur.identifier("column name"))
        return ReorderColumnsClause(columns, _index(cur, "FROM"))
    cur.expect("MODIFY", "COMMENT")
    return ModifyTableCommentClause(cur.string("comment"))


def _position(cur: TokenCursor) -> ColumnPosition | None:
    if cur.accept("FIRST"):
        return ColumnPosition(first=True)
    if cur.accept("AFTER"):
        return ColumnPosition(after=cur.identifier("column name"))
    return None


def _index(cur: TokenCursor, word: str) -> str | None:
    return cur.identifier("rollup name") if cur.accept(word) else None


def parse_show_alter_column(cur: TokenCursor) -> ShowAlterTableStmt | None:
    cur.expect("SHOW", "ALTER", "TABLE")
    if not cur.accept("COLUMN"):
        return None
    db = cur.identifier("database name") if cur.accept("FROM") or cur.accept("IN") else None
    return ShowAlterTableStmt("COLUMN", db, cur.rest_sql())  # [WHERE] [ORDER BY] [LIMIT]


def parse_cancel_alter_column(cur: TokenCursor) -> CancelAlterTableStmt | None:
    cur.expect("CANCEL", "ALTER", "TABLE")
    if not cur.accept("COLUMN"):
        return None
    cur.expect("FROM")
    db, table = cur.qualified_name()
    ids = cur.paren_list(lambda: cur.number("job id")) if cur.is_type(TokenType.L_PAREN) else []
    cur.expect_end()
    return CancelAlterTableStmt("COLUMN", db, table, ids)


OWN_PARSERS = (
    (("ALTER", "TABLE"), parse_schema_change),
    (("SHOW", "ALTER", "TABLE"), parse_show_alter_column),
    (("CANCEL", "ALTER", "TABLE"), parse_cancel_alter_column),
)
