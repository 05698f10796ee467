"""Statement parsing: split a COM_QUERY into statements and parse each one.

sqlglot's Doris dialect parses queries and most DML/DDL; the statements it leaves raw or gets
wrong (CREATE TABLE with aggregation types or ROLLUP, SHOW PARTITIONS, SHOW CREATE TABLE,
DESC t ALL, ADMIN ...) are routed by their leading words to the project's own parsers in this
package. A statement sqlglot cannot parse becomes Doris's syntax error (1105,
`errCode = 2, detailMessage = Syntax error ...`).
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from catalog.errors import SyntaxError_
from catalog.statements import (DescFunctionStmt, DescStmt, ExplainStmt, ShowCreateTableStmt,
                                ShowPartitionsStmt)
from server.parser import dialect, encrypt_key_refs, partition_names  # noqa: F401  (dialect: changes sqlglot once)
from server.parser.admin import PARTITION_PARSERS
from server.parser.analyze import OWN_PARSERS as ANALYZE_PARSERS
from server.parser.auth import OWN_PARSERS as AUTH_PARSERS
from server.parser.create_table import parse_create_table
from server.parser.load import OWN_PARSERS as LOAD_PARSERS
from server.parser.clients import CLIENT_PARSERS, resolve_catalogs
from server.parser.storage import OWN_PARSERS as STORAGE_PARSERS
from server.parser.async_mv import OWN_PARSERS as ASYNC_MV_PARSERS
from server.parser.rollup import OWN_PARSERS as ROLLUP_PARSERS
from server.parser.pipes import PIPES_AS_CONCAT, DorisPipes
from server.parser.recycle_bin import OWN_PARSERS as RECYCLE_BIN_PARSERS
from server.parser.show_misc import OWN_PARSERS as SHOW_MISC_PARSERS
from server.parser.alter_database import OWN_PARSERS as ALTER_DATABASE_PARSERS
from server.parser.show_replicas import OWN_PARSERS as REPLICA_PARSERS
from server.parser.export import OWN_PARSERS as EXPORT_PARSERS
from server.parser.functions import OWN_PARSERS as FUNCTION_PARSERS
from server.parser.admin_objects import OWN_PARSERS as ADMIN_OBJECT_PARSERS
from server.parser.backup_restore import OWN_PARSERS as BACKUP_RESTORE_PARSERS
from server.parser.schema_change import OWN_PARSERS as SCHEMA_CHANGE_PARSERS
from server.parser.system import OWN_PARSERS as SYSTEM_PARSERS
from server.parser.row_policy import OWN_PARSERS as ROW_POLICY_PARSERS
from server.parser.temp_partitions import parse_temp_partition_alter
from server.parser.enable_feature import parse_enable_feature
from server.parser.outfile import split_outfile
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
    if cur.is_word("SELECT") or cur.is_word("WITH"):
        outfile = split_outfile(text, cur.tokens)  # SELECT ... INTO OUTFILE
        if outfile is not None:
            return outfile
    for words, parser in _OWN_PARSERS:
        if cur.is_word(*words):
            stmt = parser(cur)
            if stmt is not None:
                return stmt
            cur.i = 0  # a form this parser leaves alone (ALTER TABLE ADD COLUMN, ...)
    text, tokens, label = _insert_label(text, cur.tokens)
    text = partition_names.rewrite(text, tokens)
    text = _quoted_charset_column(text, tokens)
    text = encrypt_key_refs.rewrite(text, tokens)  # aes_encrypt(s, KEY k)
    stmt = resolve_catalogs(parse_sqlglot(_join_hints_as_comments(text, tokenize(text))))
    if label is not None:
        stmt.meta["label"] = label  # server/handlers/insert.py gives it to the load
    return stmt


def _insert_label(text: str, tokens: list) -> tuple[str, list, str | None]:
    """Doris's `INSERT INTO t WITH LABEL l ...` (which sqlglot cannot parse): the statement
    without the clause, its tokens, and the label."""
    words = [t.text.upper() for t in tokens[:8]]
    if words[:2] != ["INSERT", "INTO"]:
        return text, tokens, None
    for j in range(3, min(len(tokens) - 2, 6)):
        if words[j] == "WITH" and words[j + 1] == "LABEL":
            label = tokens[j + 2].text.strip("`")
            rest = text[:tokens[j].start] + " " * (tokens[j + 2].end + 1 - tokens[j].start) \
                + text[tokens[j + 2].end + 1:]
            return rest, tokenize(rest), label
    return text, tokens, None


def _quoted_charset_column(text: str, tokens: list) -> str:
    """`SHOW COLLATION | CHARSET WHERE Charset = ...`: sqlglot reads the column name Charset
    as the CHARSET keyword and cannot parse the WHERE; quoted, it is the column."""
    words = [t.text.upper() for t in tokens[:3]]
    if words[:1] != ["SHOW"] or not ({"COLLATION", "CHARSET", "CHARACTER"} & set(words[1:3])):
        return text
    after_where = False
    out, pos = [], 0
    for t in tokens:
        if t.text.upper() == "WHERE":
            after_where = True
        elif after_where and t.text.upper() == "CHARSET" and t.token_type != TokenType.IDENTIFIER:
            out.append(text[pos:t.start] + "`Charset`")
            pos = t.end + 1
    return "".join(out) + text[pos:] if out else text


def parse_sqlglot(text: str) -> object:
    try:
        parsed = sqlglot.parse_one(text, read=DorisPipes if PIPES_AS_CONCAT.get() else "doris")
    except (ParseError, TokenError) as e:
        raise SyntaxError_(_syntax_message(text, e)) from None
    except AttributeError as e:
        # sqlglot's function builders validate a call without their parser (date_add(d)):
        # the call is malformed either way; any other AttributeError is a bug, raised as is
        if _innermost_function(e) != "validate_expression":
            raise
        raise SyntaxError_("Syntax error in line 1:\nwrong number of arguments in a function "
                           "call") from None
    if parsed is None:
        raise SyntaxError_("Syntax error in line 1:\nempty statement")
    return parsed


def _join_hints_as_comments(text: str, tokens: list) -> str:
    """Doris's `JOIN [broadcast]` (which sqlglot cannot parse) becomes `JOIN /*+join_hint:
    broadcast*/`; sqlglot keeps the comment on the Join node, where the binder reads it."""
    out, pos = [], 0
    for i, t in enumerate(tokens[:-3]):
        if t.token_type == TokenType.JOIN and tokens[i + 1].token_type == TokenType.L_BRACKET \
                and tokens[i + 3].token_type == TokenType.R_BRACKET:
            out.append(text[pos:tokens[i + 1].start])
            out.append(f"/*+join_hint:{tokens[i + 2].text}*/")
            pos = tokens[i + 3].end + 1
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _explain(cur: TokenCursor) -> ExplainStmt:
    cur.next()  # EXPLAIN / DESC / DESCRIBE
    level = "NORMAL"
    for word in ("VERBOSE", "GRAPH", "ANALYZE", "PARSED", "ANALYZED", "REWRITTEN", "OPTIMIZED",
                 "PHYSICAL", "SHAPE", "MEMO", "DISTRIBUTED", "ALL"):
        if cur.accept(word):
            level = word
            cur.accept("PLAN")
            break
    start = cur.peek()
    if start is None:
        raise cur.error("Expected a query")
    rest = partition_names.rewrite_text(cur.sql[start.start:])
    return ExplainStmt(parse_sqlglot(_join_hints_as_comments(rest, tokenize(rest))), level)


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


# sqlglot names the clause it could not complete by its class: the clause's SQL words instead
_CLAUSES = {"Where": "WHERE", "Order": "ORDER BY", "Group": "GROUP BY", "Having": "HAVING",
            "Limit": "LIMIT", "Offset": "OFFSET", "Join": "JOIN", "Qualify": "QUALIFY",
            "Select": "SELECT", "From": "FROM", "Lateral": "LATERAL VIEW", "Window": "OVER",
            "Values": "VALUES", "Cast": "CAST", "Case": "CASE", "In": "IN", "Between": "BETWEEN"}
_MISSING = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]*\.(\w+)'>")
_GOT_TOKEN = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+.*?>")


def _missing(name: str) -> str:
    if name in _CLAUSES:
        return f"incomplete {_CLAUSES[name]} clause"
    if name == "If":  # IF(...) and CASE WHEN ... both parse to If
        return "incomplete IF / CASE expression"
    cls = getattr(exp, name, None)
    if isinstance(cls, type) and issubclass(cls, exp.Func):
        return f"wrong number of arguments to {cls.sql_names()[0]}"
    return f"incomplete {name.upper()}"


def _description(text: str) -> str:
    """sqlglot's error description in SQL words: no Python class or token reprs."""
    text = _MISSING.sub(lambda m: _missing(m.group(1)), text)
    return _GOT_TOKEN.sub(lambda m: "<EOF>" if m.group(1) == "SENTINEL" else f"'{m.group(2)}'",
                          text)


def _innermost_function(e: BaseException) -> str:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_name if tb is not None else ""


def _syntax_message(text: str, e: Exception) -> str:
    errors = getattr(e, "errors", None) or []
    if errors:
        first = errors[0]
        line = first.get("line", 1)
        near = first.get("highlight", "") or "<EOF>"
        what = _description(first.get("description", "syntax error"))
        return f"Syntax error in line {line}:\n{what} near '{near}'"
    return f"Syntax error in line 1:\n{_description(str(e).splitlines()[0])}"


def _show_partitions(cur: TokenCursor) -> ShowPartitionsStmt:
    cur.expect("SHOW")
    temporary = cur.accept("TEMPORARY")
    cur.expect("PARTITIONS")
    if not (cur.accept("FROM") or cur.accept("IN")):
        raise cur.error("Expected FROM")
    db, table = cur.qualified_name()
    return ShowPartitionsStmt(db, table, temporary, cur.rest_sql())


def _show_create_table(cur: TokenCursor) -> ShowCreateTableStmt:
    cur.expect("SHOW", "CREATE", "TABLE")
    db, table = cur.qualified_name()
    cur.expect_end()
    return ShowCreateTableStmt(db, table)


def _desc(cur: TokenCursor) -> object:
    """DESC t [ALL]; DESC FUNCTION tvf(...); DESC <query> is EXPLAIN <query> (Doris prints
    the same plan)."""
    start = cur.i
    cur.next()
    if cur.is_word("SELECT") or cur.is_word("WITH") or cur.is_type(TokenType.L_PAREN) \
            or cur.is_word("VERBOSE") or cur.is_word("GRAPH"):
        cur.i = start
        return _explain(cur)
    if cur.is_word("FUNCTION"):  # DESC FUNCTION local("file_path" = ..., ...)
        cur.next()
        return DescFunctionStmt(parse_sqlglot(f"SELECT * FROM {cur.rest_sql()}"))
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
    (("EXPLAIN",), _explain),
    (("DESC",), _desc),
    (("DESCRIBE",), _desc),
    *SYSTEM_PARSERS,  # ALTER SYSTEM, CANCEL DECOMMISSION, SHOW BACKENDS, SHOW PROC
    (("ALTER", "TABLE"), parse_temp_partition_alter),  # TEMPORARY PARTITION, REPLACE ...
    (("ALTER", "TABLE"), parse_enable_feature),  # ENABLE FEATURE "BATCH_DELETE" | "SEQUENCE_LOAD"
    *PARTITION_PARSERS,  # ALTER TABLE ADD/DROP PARTITION and SET (...), ADMIN, SHOW DYNAMIC
    *RECYCLE_BIN_PARSERS,  # RECOVER ..., SHOW / DROP CATALOG RECYCLE BIN (before DROP CATALOG)
    *CLIENT_PARSERS,  # SET TRANSACTION; catalogs (SWITCH, SHOW CATALOGS, CREATE CATALOG)
    *STORAGE_PARSERS,  # ALTER TABLE ADD/DROP INDEX, CREATE/DROP INDEX, SHOW INDEX, DELETE,
                       # SHOW QUERY PROFILE
    *AUTH_PARSERS,  # users, roles, passwords, GRANT/REVOKE, SHOW GRANTS/ROLES/PROPERTY
    *LOAD_PARSERS,  # CREATE/DROP/SHOW RESOURCE(S), LOAD LABEL, SHOW LOAD, CANCEL LOAD
    *ASYNC_MV_PARSERS,  # asynchronous materialized views (None: the synchronous form)
    *ROLLUP_PARSERS,  # ADD/DROP ROLLUP, SHOW/CANCEL ALTER TABLE, CREATE/DROP MATERIALIZED VIEW
    *SCHEMA_CHANGE_PARSERS,  # ADD/DROP/MODIFY/RENAME COLUMN, ORDER BY, SHOW/CANCEL ... COLUMN
    *ANALYZE_PARSERS,  # ANALYZE TABLE, SHOW COLUMN/TABLE STATS, DROP STATS
    *SHOW_MISC_PARSERS,  # SHOW LAST INSERT, SHOW TABLE <id>, SHOW EXPORT / ROUTINE LOAD
    *ALTER_DATABASE_PARSERS,  # ALTER DATABASE RENAME / SET DATA | REPLICA QUOTA
    *REPLICA_PARSERS,  # SHOW TABLET <id>, ADMIN SHOW REPLICA STATUS | DISTRIBUTION, SHOW DATA SKEW
    *EXPORT_PARSERS,  # EXPORT TABLE, SHOW EXPORT, CANCEL EXPORT
    *FUNCTION_PARSERS,  # CREATE ALIAS FUNCTION, DROP FUNCTION, SHOW FUNCTIONS
    *ROW_POLICY_PARSERS,  # CREATE / DROP / SHOW ROW POLICY
    *ADMIN_OBJECT_PARSERS,  # SQL_BLOCK_RULE, WORKLOAD GROUP(S), ENCRYPTKEY(S)
    *BACKUP_RESTORE_PARSERS,  # SHOW REPOSITORIES / BACKUP / RESTORE / SNAPSHOT, REPOSITORY DDL
)


def is_query(stmt: object) -> bool:
    return isinstance(stmt, (exp.Select, exp.Union, exp.Subquery, exp.Intersect, exp.Except))
