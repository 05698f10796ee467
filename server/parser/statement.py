"""Statement parsing: split a COM_QUERY into statements and parse each one.

sqlglot's Doris dialect parses queries and most DML/DDL; the statements it leaves raw or gets
wrong (CREATE TABLE with aggregation types or ROLLUP, SHOW PARTITIONS, SHOW CREATE TABLE,
DESC t ALL, ADMIN ...) are routed by their leading words to the project's own parsers in this
package. A statement sqlglot cannot parse becomes Doris's syntax error (1105,
`errCode = 2, detailMessage = Syntax error ...`).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from catalog.errors import SyntaxError_
from catalog.statements import DescStmt, ShowCreateTableStmt, ShowPartitionsStmt
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor, tokenize


def split_statements(sql: str) -> list[tuple[str, list]]:
    """(text, tokens) of each non-empty statement, split at top-level semicolons."""
    tokens = tokenize(sql)
    out, current = [], []
    for t in tokens:
        if t.token_type == TokenType.SEMICOLON:
            if current:
                out.append((sql[current[0].start:current[-1].end + 1], current))
            current = []
        else:
            current.append(t)
    if current:
        out.append((sql[current[0].start:current[-1].end + 1], current))
    return out


def parse_statement(text: str, tokens: list) -> object:
    cur = TokenCursor(text, _rebase(tokens, text))  # positions relative to the statement
    for words, parser in _OWN_PARSERS:
        if cur.is_word(*words):
            return parser(cur)
    try:
        parsed = sqlglot.parse_one(text, read="doris")
    except (ParseError, TokenError) as e:
        raise SyntaxError_(_syntax_message(text, e)) from None
    if parsed is None:
        raise SyntaxError_("Syntax error in line 1:\nempty statement")
    return parsed


def _rebase(tokens: list, text: str) -> list:
    """The statement's tokens with positions relative to its own text."""
    if not tokens:
        return tokens
    base = tokens[0].start
    if base == 0:
        return tokens
    for t in tokens:
        t.start -= base
        t.end -= base
    return tokens


def _syntax_message(text: str, e: Exception) -> str:
    errors = getattr(e, "errors", None) or []
    if errors:
        first = errors[0]
        line = first.get("line", 1)
        near = first.get("highlight", "")
        return f"Syntax error in line {line}:\n{first.get('description', 'syntax error')} near '{near}'"
    return f"Syntax error in line 1:\n{str(e).splitlines()[0]}"


def _show_partitions(cur: TokenCursor) -> ShowPartitionsStmt:
    cur.expect("SHOW")
    temporary = cur.accept("TEMPORARY")
    cur.expect("PARTITIONS")
    if not (cur.accept("FROM") or cur.accept("IN")):
        raise cur.error("Expected FROM")
    db, table = cur.qualified_name()
    return ShowPartitionsStmt(db, table, temporary)


def _show_create_table(cur: TokenCursor) -> ShowCreateTableStmt:
    cur.expect("SHOW", "CREATE", "TABLE")
    db, table = cur.qualified_name()
    cur.expect_end()
    return ShowCreateTableStmt(db, table)


def _desc(cur: TokenCursor) -> object:
    """DESC t [ALL] goes here; DESC/EXPLAIN <query> goes to sqlglot."""
    start = cur.i
    cur.next()
    if cur.is_word("SELECT") or cur.is_word("WITH") or cur.is_type(TokenType.L_PAREN) \
            or cur.is_word("VERBOSE") or cur.is_word("GRAPH"):
        cur.i = start
        return sqlglot.parse_one(cur.sql, read="doris")
    db, table = cur.qualified_name()
    all_ = cur.accept("ALL")
    cur.expect_end()
    return DescStmt(db, table, all_)


_OWN_PARSERS = (
    (("CREATE", "TABLE"), parse_create_table),
    (("CREATE", "EXTERNAL", "TABLE"), parse_create_table),
    (("SHOW", "PARTITIONS"), _show_partitions),
    (("SHOW", "TEMPORARY", "PARTITIONS"), _show_partitions),
    (("SHOW", "CREATE", "TABLE"), _show_create_table),
    (("DESC",), _desc),
    (("DESCRIBE",), _desc),
)


def is_query(stmt: object) -> bool:
    return isinstance(stmt, (exp.Select, exp.Union, exp.Subquery, exp.Intersect, exp.Except))
