"""Parsers for Doris's statistics statements:

    ANALYZE TABLE [db.]t [(c1, c2)] [WITH SYNC] [WITH SAMPLE PERCENT n | ROWS n] [PROPERTIES (...)]
    SHOW COLUMN [CACHED] STATS [db.]t [(c1, ...)]
    SHOW TABLE STATS [db.]t
    DROP STATS [db.]t [(c1, ...)]
    SHOW [AUTO] ANALYZE [[db.]t | job_id] [WHERE state = '...'] [ORDER BY ...] [LIMIT n]
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from server.parser.tokens import TokenCursor


@dataclass
class AnalyzeTableStmt:
    db: str | None
    table: str
    columns: list[str] | None
    sync: bool


@dataclass
class ShowColumnStatsStmt:
    db: str | None
    table: str
    columns: list[str] | None


@dataclass
class ShowTableStatsStmt:
    db: str | None
    table: str


@dataclass
class DropStatsStmt:
    db: str | None
    table: str
    columns: list[str] | None


@dataclass
class ShowAnalyzeStmt:
    db: str | None
    table: str | None
    job_id: int | None
    auto: bool
    tail: str  # WHERE / ORDER BY / LIMIT (server/handlers/show_filter.py)


def _columns(cur: TokenCursor) -> list[str] | None:
    if cur.is_type(TokenType.L_PAREN):
        return cur.paren_list(lambda: cur.identifier("column name"))
    return None


def parse_analyze(cur: TokenCursor) -> AnalyzeTableStmt:
    cur.expect("ANALYZE", "TABLE")
    db, table = cur.qualified_name()
    columns = _columns(cur)
    sync = False
    while cur.accept("WITH"):
        if cur.accept("SYNC"):
            sync = True
        elif cur.accept("SAMPLE"):  # sampling is accepted; the whole table is read
            cur.next()
            cur.number("sample size")
        else:
            cur.next()  # WITH FULL / INCREMENTAL / ...
    if cur.accept("PROPERTIES"):
        cur.properties()
    cur.expect_end()
    return AnalyzeTableStmt(db, table, columns, sync)


def parse_show_column_stats(cur: TokenCursor) -> ShowColumnStatsStmt:
    cur.expect("SHOW", "COLUMN")
    cur.accept("CACHED")
    cur.expect("STATS")
    db, table = cur.qualified_name()
    columns = _columns(cur)
    cur.expect_end()
    return ShowColumnStatsStmt(db, table, columns)


def parse_show_table_stats(cur: TokenCursor) -> ShowTableStatsStmt:
    cur.expect("SHOW", "TABLE", "STATS")
    db, table = cur.qualified_name()
    cur.expect_end()
    return ShowTableStatsStmt(db, table)


def parse_drop_stats(cur: TokenCursor) -> DropStatsStmt:
    cur.expect("DROP", "STATS")
    db, table = cur.qualified_name()
    columns = _columns(cur)
    cur.expect_end()
    return DropStatsStmt(db, table, columns)


def parse_show_analyze(cur: TokenCursor) -> ShowAnalyzeStmt:
    cur.expect("SHOW")
    auto = bool(cur.accept("AUTO"))
    cur.expect("ANALYZE")
    db = table = job_id = None
    if cur.is_type(TokenType.NUMBER):
        job_id = cur.number("job id")
    elif cur.peek() is not None and not cur.is_word("WHERE") and not cur.is_word("ORDER") \
            and not cur.is_word("LIMIT") and not cur.is_type(TokenType.SEMICOLON):
        db, table = cur.qualified_name()
    return ShowAnalyzeStmt(db, table, job_id, auto, cur.rest_sql())


OWN_PARSERS = (
    (("ANALYZE", "TABLE"), parse_analyze),
    (("SHOW", "COLUMN", "STATS"), parse_show_column_stats),
    (("SHOW", "COLUMN", "CACHED", "STATS"), parse_show_column_stats),
    (("SHOW", "TABLE", "STATS"), parse_show_table_stats),
    (("DROP", "STATS"), parse_drop_stats),
    (("SHOW", "ANALYZE"), parse_show_analyze),
    (("SHOW", "AUTO", "ANALYZE"), parse_show_analyze),
)
