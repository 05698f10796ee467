"""Parsers for index DDL, DELETE and SHOW QUERY PROFILE (entries of statement.py:_OWN_PARSERS).

    ALTER TABLE [db.]t ADD INDEX [IF NOT EXISTS] i (c) [USING BITMAP | INVERTED]
                            [PROPERTIES ("k" = "v", ...)] [COMMENT 'c']
    ALTER TABLE [db.]t DROP INDEX [IF EXISTS] i
    CREATE INDEX [IF NOT EXISTS] i ON [db.]t (c) [USING BITMAP | INVERTED] [PROPERTIES (..)]
                 [COMMENT 'c']
    DROP INDEX [IF EXISTS] i ON [db.]t
    BUILD INDEX i ON [db.]t [PARTITION (p1, ...)]
    SHOW INDEX | INDEXES | KEYS FROM | IN [db.]t [FROM | IN db]
    DELETE FROM [db.]t [alias] [PARTITION p | PARTITION[S] (p1, ...)] [USING relations]
                [WHERE cond]
    SHOW QUERY PROFILE "/" | "/query_id"

sqlglot leaves CREATE INDEX and SHOW QUERY PROFILE raw and fails on `PARTITION p` without
parentheses; one parser for each family keeps the rules in one place. Another ALTER TABLE form
returns None (the next parser gets it). A DELETE's WHERE is parsed by sqlglot and flattened
into `DeleteCondition`s with Doris's messages for what a delete predicate cannot be.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from catalog.errors import AnalysisError, SyntaxError_
from catalog.statements import IndexDef
from catalog.storage_statements import (BuildIndexStmt, CreateIndexStmt, DeleteCondition,
                                        DeleteStmt, DropIndexStmt, ShowIndexStmt,
                                        ShowQueryProfileStmt)
from server.parser.tokens import TokenCursor

_OPS = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _index_tail(cur: TokenCursor, name: str, columns: list[str]) -> IndexDef:
    d = IndexDef(name=name, columns=columns, using="BITMAP")
    if cur.accept("USING"):
        d.using = cur.identifier("index type").upper()
    if cur.accept("PROPERTIES"):
        d.properties = cur.properties()
    if cur.accept("COMMENT"):
        d.comment = cur.string("comment")
    return d


def parse_alter_index(cur: TokenCursor) -> object | None:
    cur.expect("ALTER", "TABLE")
    db, table = cur.qualified_name()
    if cur.accept("ADD", "INDEX"):
        if_not_exists = cur.accept("IF", "NOT", "EXISTS")
        name = cur.identifier("index name")
        columns = cur.paren_list(lambda: cur.identifier("column name"))
        d = _index_tail(cur, name, columns)
        cur.expect_end()
        return CreateIndexStmt(db, table, d, if_not_exists)
    if cur.accept("DROP", "INDEX"):
        if_exists = cur.accept("IF", "EXISTS")
        name = cur.identifier("index name")
        cur.expect_end()
        return DropIndexStmt(db, table, name, if_exists)
    return None


def parse_create_index(cur: TokenCursor) -> CreateIndexStmt:
    cur.expect("CREATE", "INDEX")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = cur.identifier("index name")
    cur.expect("ON")
    db, table = cur.qualified_name()
    columns = cur.paren_list(lambda: cur.identifier("column name"))
    d = _index_tail(cur, name, columns)
    cur.expect_end()
    return CreateIndexStmt(db, table, d, if_not_exists)


def parse_drop_index(cur: TokenCursor) -> DropIndexStmt:
    cur.expect("DROP", "INDEX")
    if_exists = cur.accept("IF", "EXISTS")
    name = cur.identifier("index name")
    cur.expect("ON")
    db, table = cur.qualified_name()
    cur.expect_end()
    return DropIndexStmt(db, table, name, if_exists)


def parse_build_index(cur: TokenCursor) -> BuildIndexStmt:
    cur.expect("BUILD", "INDEX")
    name = cur.identifier("index name")
    cur.expect("ON")
    db, table = cur.qualified_name()
    partitions = cur.partition_names()
    cur.expect_end()
    return BuildIndexStmt(db, table, name, partitions)


def parse_show_index(cur: TokenCursor) -> ShowIndexStmt:
    cur.expect("SHOW")
    cur.next()  # INDEX | INDEXES | KEYS
    if not (cur.accept("FROM") or cur.accept("IN")):
        raise cur.error("Expected FROM or IN")
    db, table = cur.qualified_name()
    if cur.accept("FROM") or cur.accept("IN"):
        db = cur.identifier("database name")
    cur.expect_end()
    return ShowIndexStmt(db, table)


def parse_show_query_profile(cur: TokenCursor) -> ShowQueryProfileStmt:
    cur.expect("SHOW", "QUERY", "PROFILE")
    t = cur.next()
    cur.expect_end()
    return ShowQueryProfileStmt(t.text)


_AFTER_DELETE_TARGET = ("PARTITION", "PARTITIONS", "TEMPORARY", "USING", "WHERE")


def parse_delete(cur: TokenCursor) -> DeleteStmt:
    """DELETE FROM [db.]t [alias] [PARTITION ...] [USING relations] [WHERE cond]: the WHERE as
    delete conditions when it is one (Doris's DeleteStmt rules), else kept with the reason for
    a Unique table to delete the rows it selects (server/handlers/delete_using.py)."""
    cur.expect("DELETE", "FROM")
    db, table = cur.qualified_name()
    alias = None
    if cur.accept("AS") or (cur.peek() is not None
                            and not any(cur.is_word(w) for w in _AFTER_DELETE_TARGET)
                            and cur.peek().token_type != TokenType.SEMICOLON):
        alias = cur.identifier("table alias")
    partitions = cur.partition_names()
    using = None
    if cur.accept("USING"):
        start = cur.peek()
        if start is None or cur.is_word("WHERE"):
            raise cur.error("Expected the relations of USING")
        end, depth = start, 0
        while cur.peek() is not None and not (depth == 0 and cur.is_word("WHERE")) \
                and cur.peek().token_type != TokenType.SEMICOLON:
            t = cur.next()
            depth += (t.token_type == TokenType.L_PAREN) - (t.token_type == TokenType.R_PAREN)
            end = t
        using = cur.sql[start.start:end.end + 1]
    conditions: list[DeleteCondition] = []
    where_text, error = None, None
    if cur.accept("WHERE"):
        where_text = cur.rest_sql().rstrip().rstrip(";")
        try:
            where = sqlglot.parse_one(where_text, read="doris")
        except (ParseError, TokenError) as e:
            raise SyntaxError_(f"Syntax error in line 1:\n{str(e).splitlines()[0]}") from None
        if using is None:
            try:
                conditions = _conditions(where)
            except AnalysisError as exc:
                error = exc
    elif using is not None:
        raise cur.error("Expected WHERE after the relations of USING")
    return DeleteStmt(db, table, partitions, conditions, alias, using, where_text, error)


def _sql(e: exp.Expression) -> str:
    return e.sql(dialect="doris")


def _conditions(e: exp.Expression) -> list[DeleteCondition]:
    """AND-joined simple predicates, flattened (Doris `DeleteStmt.analyzePredicate`)."""
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.And):
        return [*_conditions(e.this), *_conditions(e.expression)]
    if isinstance(e, exp.Or):
        raise AnalysisError("Compound predicate's op should be AND")
    if type(e) in _OPS:
        op = _OPS[type(e)]
        left, right = e.this, e.expression
        if not isinstance(left, exp.Column) and isinstance(right, exp.Column):
            left, right, op = right, left, _FLIP[op]
        if not isinstance(left, exp.Column):
            raise AnalysisError("Left expr of binary predicate should be column name, "
                                f"predicate: {_sql(e)}")
        value = _literal(right)
        if value is _NOT_LITERAL:
            raise AnalysisError("Right expr of binary predicate should be value, "
                                f"predicate: {_sql(e)}")
        return [DeleteCondition(left.name, op, [value])]
    if isinstance(e, exp.In) or (isinstance(e, exp.Not) and isinstance(e.this, exp.In)):
        negated = isinstance(e, exp.Not)
        inner = e.this if negated else e
        if not isinstance(inner.this, exp.Column):
            raise AnalysisError("Left expr of binary predicate should be column name, "
                                f"predicate: {_sql(e)}")
        if inner.args.get("query"):
            raise AnalysisError(f"Child of in predicate should be value, predicate: {_sql(e)}")
        values = [_literal(v) for v in inner.expressions]
        if any(v is _NOT_LITERAL for v in values):
            raise AnalysisError(f"Child of in predicate should be value, predicate: {_sql(e)}")
        return [DeleteCondition(inner.this.name, "not_in" if negated else "in", values)]
    is_not = isinstance(e, exp.Not) and isinstance(e.this, exp.Is)
    if isinstance(e, exp.Is) or is_not:
        inner = e.this if is_not else e
        if not isinstance(inner.expression, exp.Null):
            raise AnalysisError(_unsupported(e))
        if not isinstance(inner.this, exp.Column):
            raise AnalysisError("Left expr of is_null predicate should be column name, "
                                f"predicate: {_sql(e)}")
        return [DeleteCondition(inner.this.name, "is_not_null" if is_not else "is_null")]
    raise AnalysisError(_unsupported(e))


def _unsupported(e: exp.Expression) -> str:
    return ("Where clause only supports compound predicate, binary predicate, is_null "
            f"predicate or in predicate. But we meet {_sql(e)}")


_NOT_LITERAL = object()


def _literal(e: exp.Expression):
    """The text of a literal (None for NULL), or _NOT_LITERAL."""
    if isinstance(e, exp.Literal):
        return e.this
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
        return "-" + e.this.this
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Boolean):
        return "true" if e.this else "false"
    return _NOT_LITERAL


OWN_PARSERS = (
    (("ALTER", "TABLE"), parse_alter_index),
    (("CREATE", "INDEX"), parse_create_index),
    (("DROP", "INDEX"), parse_drop_index),
    (("BUILD", "INDEX"), parse_build_index),
    (("SHOW", "INDEX"), parse_show_index),
    (("SHOW", "INDEXES"), parse_show_index),
    (("SHOW", "KEYS"), parse_show_index),
    (("SHOW", "QUERY", "PROFILE"), parse_show_query_profile),
    (("DELETE",), parse_delete),
)
