"""Parsers for resources and asynchronous loads (entries of statement.py:_OWN_PARSERS).

sqlglot cannot parse Doris's LOAD LABEL, and leaves CREATE/DROP/SHOW RESOURCE(S), SHOW [STREAM]
LOAD and CANCEL LOAD raw; the grammar (catalog/load_statements.py) follows Doris's Broker/Spark
Load. A SET or WHERE expression inside a data description is kept as SQL text (the tokens up
to the closing parenthesis or comma at its depth); the load parses it with sqlglot.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.load_statements import (CancelLoadStmt, CreateResourceStmt, DataDescription,
                                     DropResourceStmt, LoadFilter, LoadStmt, ShowLoadStmt,
                                     ShowResourcesStmt, ShowStreamLoadStmt)
from catalog.errors import AnalysisError
from server.parser.tokens import TokenCursor

_FORMATS = {"csv": "csv", "csv_with_names": "csv", "parquet": "parquet", "orc": "orc",
            "json": "json"}


def _name(cur: TokenCursor, what: str) -> str:
    t = cur.peek()
    if t is not None and t.token_type == TokenType.STRING:
        return cur.next().text
    return cur.identifier(what)


def parse_create_resource(cur: TokenCursor) -> CreateResourceStmt:
    cur.expect("CREATE")
    cur.accept("EXTERNAL")
    cur.expect("RESOURCE")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = _name(cur, "resource name")
    cur.expect("PROPERTIES")
    props = cur.properties()
    cur.expect_end()
    return CreateResourceStmt(name, props, if_not_exists)


def parse_drop_resource(cur: TokenCursor) -> DropResourceStmt:
    cur.expect("DROP", "RESOURCE")
    if_exists = cur.accept("IF", "EXISTS")
    name = _name(cur, "resource name")
    cur.expect_end()
    return DropResourceStmt(name, if_exists)


def parse_show_resources(cur: TokenCursor) -> ShowResourcesStmt:
    cur.expect("SHOW", "RESOURCES")
    stmt = ShowResourcesStmt()
    if cur.accept("WHERE"):
        while True:
            word = cur.identifier("NAME or RESOURCETYPE").upper()
            if word == "NAME" and cur.accept("LIKE"):
                stmt.name_like = cur.string("pattern")
            elif word in ("NAME", "RESOURCETYPE"):
                cur.expect_type(TokenType.EQ, "=")
                value = cur.string("value")
                if word == "NAME":
                    stmt.name = value
                else:
                    stmt.resource_type = value
            else:
                raise cur.error("Only NAME and RESOURCETYPE may be tested")
            if not cur.accept("AND"):
                break
    if not cur.at_end() and not (cur.is_word("ORDER", "BY") or cur.is_word("LIMIT")):
        raise cur.error("Expected ORDER BY or LIMIT")
    stmt.tail = cur.rest_sql()
    return stmt


def _where_text(cur: TokenCursor) -> str:
    """A WHERE predicate inside the data description: up to its closing parenthesis."""
    return cur.expression_text(stop_at_comma=False, what="a predicate")


def _set_item(cur: TokenCursor) -> tuple[str, str]:
    column = cur.identifier("column name")
    cur.expect_type(TokenType.EQ, "=")
    return column, cur.expression_text()


def _data_description(cur: TokenCursor) -> DataDescription:
    cur.accept("APPEND")
    cur.expect("DATA")
    if cur.accept("FROM", "TABLE"):
        raise cur.error("Loading from a Hive table is not supported; use DATA INFILE")
    cur.expect("INFILE")
    files = cur.paren_list(lambda: cur.string("file path"))
    negative = cur.accept("NEGATIVE")
    cur.expect("INTO", "TABLE")
    table = cur.identifier("table name")
    d = DataDescription(files, table, negative=negative)
    if cur.accept("PARTITION") or cur.accept("PARTITIONS"):
        d.partitions = cur.paren_list(lambda: cur.identifier("partition name"))
    if cur.accept("COLUMNS", "TERMINATED", "BY"):
        d.column_separator = cur.string("column separator")
    if cur.accept("LINES", "TERMINATED", "BY"):
        d.line_delimiter = cur.string("line delimiter")
    if cur.accept("FORMAT", "AS"):
        fmt = _name(cur, "format").lower()
        if fmt not in _FORMATS:
            raise cur.error(f"Unknown format {fmt}")
        d.format = _FORMATS[fmt]
    if cur.is_type(TokenType.L_PAREN):
        d.columns = cur.paren_list(lambda: cur.identifier("column name"))
    if cur.accept("COLUMNS", "FROM", "PATH", "AS"):
        raise cur.error("COLUMNS FROM PATH AS is not supported")
    if cur.accept("SET"):
        d.set_exprs = cur.paren_list(lambda: _set_item(cur))
    if cur.accept("WHERE"):
        d.where = _where_text(cur)
    return d


def parse_load(cur: TokenCursor) -> LoadStmt:
    cur.expect("LOAD", "LABEL")
    db, label = cur.qualified_name()
    data = cur.paren_list(lambda: _data_description(cur))
    resource, resource_props = None, {}
    if cur.accept("WITH"):
        if not cur.accept("RESOURCE"):
            raise cur.error("Only WITH RESOURCE (Spark Load) is supported; Broker Load is not")
        resource = _name(cur, "resource name")
        if cur.is_type(TokenType.L_PAREN):
            resource_props = cur.properties()
    props = {}
    if cur.accept("PROPERTIES"):
        props = cur.properties()
    cur.expect_end()
    return LoadStmt(db, label, data, resource, resource_props, props)


_SHOW_LOAD_WHERE = ("Where clause should looks like: LABEL = \"your_load_label\", or LABEL LIKE "
                    "\"matcher\", or STATE = \"PENDING|ETL|LOADING|FINISHED|CANCELLED\", or "
                    "compound predicate with operator AND")
_STREAM_LOAD_WHERE = ("Where clause should looks like: LABEL = \"your_load_label\", or LABEL LIKE "
                      "\"matcher\",  or STATUS = \"SUCCESS|FAIL\",  or compound predicate with "
                      "operator AND")


def _load_filter(cur: TokenCursor, state_word: str = "STATE", states: tuple[str, ...] = (),
                 message: str = _SHOW_LOAD_WHERE) -> LoadFilter:
    """LABEL = 'x' | LABEL LIKE 'x' | <state_word> = 'x', joined by AND (`states`: the
    accepted values, upper case; empty: any)."""
    f = LoadFilter()
    while True:
        word = cur.identifier(f"LABEL or {state_word}").upper()
        if word == "LABEL" and cur.accept("LIKE"):
            f.label_like = cur.string("pattern")
        elif word in ("LABEL", state_word):
            cur.expect_type(TokenType.EQ, "=")
            value = cur.string("value")
            if word == "LABEL":
                f.label = value
            elif states and value.upper() not in states:
                raise AnalysisError(message)
            else:
                f.state = value.upper()
        else:
            raise AnalysisError(message)  # Doris's analysis error, not a syntax error
        if not cur.accept("AND"):
            return f


def _order_limit(cur: TokenCursor, stmt) -> None:
    """[ORDER BY col [ASC|DESC], ...] [LIMIT [offset,] n] [OFFSET n] into `stmt`."""
    if cur.accept("ORDER", "BY"):
        while True:
            column = cur.identifier("column name")
            desc = cur.accept("DESC")
            if not desc:
                cur.accept("ASC")
            stmt.order_by.append((column, desc))
            if not cur.accept_type(TokenType.COMMA):
                break
    if cur.accept("LIMIT"):
        first = cur.number("limit")
        if cur.accept_type(TokenType.COMMA):
            stmt.offset, stmt.limit = first, cur.number("limit")
        else:
            stmt.limit = first
    if cur.accept("OFFSET"):
        stmt.offset = cur.number("offset")
    cur.expect_end()


def parse_show_load(cur: TokenCursor) -> ShowLoadStmt:
    cur.expect("SHOW", "LOAD")
    if cur.is_word("WARNINGS") or cur.is_word("PROFILE"):
        return None  # other SHOW LOAD forms are not ours
    stmt = ShowLoadStmt(None)
    if cur.accept("FROM") or cur.accept("IN"):
        stmt.db = cur.identifier("database name")
    if cur.accept("WHERE"):
        stmt.where = _load_filter(cur)
    _order_limit(cur, stmt)
    return stmt


def parse_show_stream_load(cur: TokenCursor) -> ShowStreamLoadStmt:
    cur.expect("SHOW", "STREAM", "LOAD")
    stmt = ShowStreamLoadStmt(None)
    if cur.accept("FROM") or cur.accept("IN"):
        stmt.db = cur.identifier("database name")
    if cur.accept("WHERE"):
        stmt.where = _load_filter(cur, "STATUS", ("SUCCESS", "FAIL"), _STREAM_LOAD_WHERE)
    _order_limit(cur, stmt)
    return stmt


def parse_cancel_load(cur: TokenCursor) -> CancelLoadStmt:
    cur.expect("CANCEL", "LOAD")
    stmt = CancelLoadStmt(None)
    if cur.accept("FROM") or cur.accept("IN"):
        stmt.db = cur.identifier("database name")
    cur.expect("WHERE")
    stmt.where = _load_filter(cur)
    cur.expect_end()
    return stmt


OWN_PARSERS = (
    (("CREATE", "RESOURCE"), parse_create_resource),
    (("CREATE", "EXTERNAL", "RESOURCE"), parse_create_resource),
    (("DROP", "RESOURCE"), parse_drop_resource),
    (("SHOW", "RESOURCES"), parse_show_resources),
    (("LOAD", "LABEL"), parse_load),
    (("SHOW", "LOAD"), parse_show_load),
    (("SHOW", "STREAM", "LOAD"), parse_show_stream_load),
    (("CANCEL", "LOAD"), parse_cancel_load),
)
