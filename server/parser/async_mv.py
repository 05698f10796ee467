"""Parsers of Doris's asynchronous materialized view statements (entries of
statement.py:_OWN_PARSERS, ahead of the synchronous view's in server/parser/rollup.py).

    CREATE MATERIALIZED VIEW [IF NOT EXISTS] [db.]mv [(col [COMMENT ''], ...)]
        [BUILD IMMEDIATE | DEFERRED] [REFRESH [COMPLETE | AUTO | NEVER] [ON MANUAL |
        ON SCHEDULE EVERY n UNIT [STARTS 'ts'] | ON COMMIT]] [[DUPLICATE] KEY (cols)]
        [COMMENT ''] [PARTITION BY (col)] [DISTRIBUTED BY HASH (cols) | RANDOM
        [BUCKETS n | AUTO]] [PROPERTIES (...)] AS query
    REFRESH MATERIALIZED VIEW mv [COMPLETE | AUTO | PARTITIONS (p, ...)]
    ALTER MATERIALIZED VIEW mv RENAME new | REFRESH method [trigger] | REFRESH trigger
                               | SET ("k" = "v", ...)
    DROP MATERIALIZED VIEW [IF EXISTS] [db.]mv            (with ON t: the synchronous view)
    PAUSE | RESUME MATERIALIZED VIEW JOB ON mv
    CANCEL MATERIALIZED VIEW TASK id ON mv
    SHOW CREATE MATERIALIZED VIEW mv                      (with ON t: the synchronous view)

Which CREATE is asynchronous follows Doris's LogicalPlanBuilder.visitCreateMTMV: one with none
of BUILD, a refresh method or trigger, a column list, KEY, DISTRIBUTED BY HASH | RANDOM or
BUCKETS is the synchronous form; this parser returns None for it (and for DROP ... ON t).
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.mtmv_statements import (AlterMTMVStmt, CancelMTMVTaskStmt, ColumnSpec,
                                     CreateMTMVStmt, DropMTMVStmt, MTMVJobStmt, RefreshMTMVStmt,
                                     RefreshTrigger, ShowCreateMTMVStmt)
from server.parser.tokens import TokenCursor

_UNITS = ("SECOND", "MINUTE", "HOUR", "DAY", "WEEK")
_METHODS = ("COMPLETE", "AUTO", "NEVER")


def parse_create(cur: TokenCursor) -> CreateMTMVStmt | None:
    cur.expect("CREATE", "MATERIALIZED", "VIEW")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    db, name = cur.qualified_name()
    stmt = CreateMTMVStmt(db, name, "", if_not_exists)
    is_async = False
    if cur.is_type(TokenType.L_PAREN):
        stmt.columns = cur.paren_list(lambda: _column_spec(cur))
        is_async = True
    if cur.accept("BUILD"):
        stmt.build_mode = _one_of(cur, ("IMMEDIATE", "DEFERRED"), "IMMEDIATE or DEFERRED")
        is_async = True
    if cur.accept("REFRESH"):
        method = _method(cur)
        stmt.refresh_method = method or stmt.refresh_method
        trigger = _trigger(cur)
        stmt.trigger = trigger or stmt.trigger
        is_async = is_async or method is not None or trigger is not None
    if cur.accept("DUPLICATE", "KEY") or cur.accept("KEY"):
        stmt.keys = cur.paren_list(lambda: cur.identifier("column name"))
        is_async = True
    if cur.accept("COMMENT"):
        stmt.comment = cur.string("comment")
    if cur.accept("PARTITION BY"):
        cur.expect_type(TokenType.L_PAREN, "(")
        stmt.partition_column = cur.expression_text(what="a partition column")
        cur.expect_type(TokenType.R_PAREN, ")")
    if cur.accept("DISTRIBUTED", "BY"):
        is_async = True
        if cur.accept("HASH"):
            stmt.distribution_kind = "HASH"
            stmt.distribution_columns = cur.paren_list(lambda: cur.identifier("column name"))
        else:
            cur.expect("RANDOM")
            stmt.distribution_kind = "RANDOM"
        if cur.accept("BUCKETS"):
            stmt.buckets = None if cur.accept("AUTO") else cur.number("bucket number")
    if not is_async:
        return None  # the synchronous CREATE MATERIALIZED VIEW (server/parser/rollup.py)
    if cur.accept("PROPERTIES"):
        stmt.properties = cur.properties()
    cur.expect("AS")
    stmt.query = cur.rest_sql().strip().rstrip(";").strip()
    if not stmt.query:
        raise cur.error("Expected a query")
    return stmt


def _column_spec(cur: TokenCursor) -> ColumnSpec:
    name = cur.identifier("column name")
    comment = cur.string("comment") if cur.accept("COMMENT") else None
    return ColumnSpec(name, comment)


def _one_of(cur: TokenCursor, words: tuple[str, ...], what: str) -> str:
    for w in words:
        if cur.accept(w):
            return w
    raise cur.error(f"Expected {what}")


def _method(cur: TokenCursor) -> str | None:
    for w in _METHODS:
        if cur.accept(w):
            return w
    return None


def _trigger(cur: TokenCursor) -> RefreshTrigger | None:
    if not cur.accept("ON"):
        return None
    if cur.accept("MANUAL"):
        return RefreshTrigger("MANUAL")
    if cur.accept("COMMIT"):
        return RefreshTrigger("COMMIT")
    cur.expect("SCHEDULE")
    cur.expect("EVERY")
    interval = cur.number("interval")
    unit = _one_of(cur, _UNITS, "a time unit").upper()
    starts = cur.string("start time") if cur.accept("STARTS") else None
    return RefreshTrigger("SCHEDULE", interval, unit, starts)


def parse_drop(cur: TokenCursor) -> DropMTMVStmt | None:
    cur.expect("DROP", "MATERIALIZED", "VIEW")
    if_exists = cur.accept("IF", "EXISTS")
    db, name = cur.qualified_name()
    if cur.is_word("ON"):
        return None  # DROP MATERIALIZED VIEW mv ON t: the synchronous view
    cur.expect_end()
    return DropMTMVStmt(db, name, if_exists)


def parse_refresh(cur: TokenCursor) -> RefreshMTMVStmt:
    cur.expect("REFRESH", "MATERIALIZED", "VIEW")
    db, name = cur.qualified_name()
    if cur.accept("COMPLETE"):
        stmt = RefreshMTMVStmt(db, name, "COMPLETE")
    elif cur.accept("AUTO"):
        stmt = RefreshMTMVStmt(db, name, "AUTO")
    else:
        parts = cur.partition_names()
        if parts is None:
            raise cur.error("Expected COMPLETE, AUTO or PARTITIONS")
        stmt = RefreshMTMVStmt(db, name, "PARTITIONS", parts)
    cur.expect_end()
    return stmt


def parse_alter(cur: TokenCursor) -> AlterMTMVStmt:
    cur.expect("ALTER", "MATERIALIZED", "VIEW")
    db, name = cur.qualified_name()
    stmt = AlterMTMVStmt(db, name)
    if cur.accept("RENAME"):
        stmt.new_name = cur.identifier("new name")
    elif cur.accept("REFRESH"):
        stmt.refresh_method = _method(cur)
        stmt.trigger = _trigger(cur)
        if stmt.refresh_method is None and stmt.trigger is None:
            raise cur.error("Expected a refresh method or trigger")
    elif cur.accept("SET"):
        stmt.properties = cur.properties()
    else:
        raise cur.error("Expected RENAME, REFRESH or SET")
    cur.expect_end()
    return stmt


def parse_job(cur: TokenCursor) -> MTMVJobStmt:
    pause = cur.accept("PAUSE")
    if not pause:
        cur.expect("RESUME")
    cur.expect("MATERIALIZED", "VIEW", "JOB", "ON")
    db, name = cur.qualified_name()
    cur.expect_end()
    return MTMVJobStmt(db, name, pause)


def parse_cancel_task(cur: TokenCursor) -> CancelMTMVTaskStmt:
    cur.expect("CANCEL", "MATERIALIZED", "VIEW", "TASK")
    task_id = cur.number("task id")
    cur.expect("ON")
    db, name = cur.qualified_name()
    cur.expect_end()
    return CancelMTMVTaskStmt(db, name, task_id)


def parse_show_create(cur: TokenCursor) -> ShowCreateMTMVStmt | None:
    cur.expect("SHOW", "CREATE", "MATERIALIZED", "VIEW")
    db, name = cur.qualified_name()
    if cur.is_word("ON"):
        return None  # SHOW CREATE MATERIALIZED VIEW mv ON t: the synchronous view
    cur.expect_end()
    return ShowCreateMTMVStmt(db, name)


OWN_PARSERS = (
    (("CREATE", "MATERIALIZED", "VIEW"), parse_create),
    (("DROP", "MATERIALIZED", "VIEW"), parse_drop),
    (("REFRESH", "MATERIALIZED", "VIEW"), parse_refresh),
    (("ALTER", "MATERIALIZED", "VIEW"), parse_alter),
    (("PAUSE", "MATERIALIZED", "VIEW"), parse_job),
    (("RESUME", "MATERIALIZED", "VIEW"), parse_job),
    (("CANCEL", "MATERIALIZED", "VIEW", "TASK"), parse_cancel_task),
    (("SHOW", "CREATE", "MATERIALIZED", "VIEW"), parse_show_create),
)
