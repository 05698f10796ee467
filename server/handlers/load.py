"""Handlers of resources and loads: CREATE/DROP/SHOW RESOURCE(S), LOAD LABEL, SHOW LOAD,
CANCEL LOAD (Spark Load jobs run in pipeline/load_manager.py, `Services.load_manager`), and
SHOW STREAM LOAD (server/http/stream_load_records.py)."""

from __future__ import annotations

import fnmatch

from catalog.load_jobs import create_resource, drop_resource
from catalog.load_statements import (CancelLoadStmt, CreateResourceStmt, DropResourceStmt,
                                     LoadStmt, ShowLoadStmt, ShowResourcesStmt,
                                     ShowStreamLoadStmt)
from catalog.errors import AnalysisError, NoDatabaseSelected
from pipeline.load_manager import SHOW_LOAD_COLUMNS
from server.handlers import show_filter
from server.handlers.context import StatementContext
from server.http.stream_load_records import COLUMNS as STREAM_LOAD_COLUMNS
from server.results import OkResult, RowsResult, text_columns


def _manager(ctx: StatementContext):
    return ctx.session.services.load_manager


def create(stmt: CreateResourceStmt, ctx: StatementContext) -> OkResult:
    create_resource(ctx.catalog, stmt.name, stmt.properties, stmt.if_not_exists)
    return OkResult()


def drop(stmt: DropResourceStmt, ctx: StatementContext) -> OkResult:
    drop_resource(ctx.catalog, stmt.name, stmt.if_exists)
    return OkResult()


def show_resources(stmt: ShowResourcesStmt, ctx: StatementContext) -> RowsResult:
    rows = []
    with ctx.catalog.lock:
        resources = sorted(ctx.catalog.resources.items())
    for name, res in resources:
        if stmt.name is not None and name != stmt.name:
            continue
        if stmt.name_like is not None and not fnmatch.fnmatchcase(
                name, stmt.name_like.replace("%", "*").replace("_", "?")):
            continue
        if stmt.resource_type is not None and res["type"] != stmt.resource_type.lower():
            continue
        rows.append((name, res["type"], "type", res["type"]))
        for k, v in sorted(res["properties"].items()):
            if k != "type":
                rows.append((name, res["type"], k, v))
    return show_filter.apply(text_columns(["Name", "ResourceType", "Item", "Value"], rows),
                             show_filter.parse_tail(stmt.tail))  # ORDER BY, LIMIT


def load(stmt: LoadStmt, ctx: StatementContext) -> OkResult:
    _manager(ctx).submit(stmt, ctx.db, ctx.session.username or "root")
    return OkResult()


def show_load(stmt: ShowLoadStmt, ctx: StatementContext) -> RowsResult:
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(stmt.db or ctx.db).name
    rows = _manager(ctx).show(db, stmt.where)
    return text_columns(SHOW_LOAD_COLUMNS, _order_limit(rows, SHOW_LOAD_COLUMNS, stmt))


def show_stream_load(stmt: ShowStreamLoadStmt, ctx: StatementContext) -> RowsResult:
    """The Stream Loads recorded for the database (server/http/stream_load_records.py), of
    the tables the user may load into (Doris checks LOAD_PRIV per record), by FinishTime
    unless ORDER BY says otherwise."""
    if not (stmt.db or ctx.db):
        raise NoDatabaseSelected()
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(stmt.db or ctx.db).name
    records = ctx.session.services.stream_loads
    access = ctx.session.access
    f = stmt.where
    rows = [[r[c] for c in STREAM_LOAD_COLUMNS] for r in (records.of_db(db) if records else [])
            if (access is None or access.check_tbl(db, r["Table"], "LOAD"))
            and (f.label is None or r["Label"] == f.label)
            and (f.label_like is None or f.label_like in r["Label"])
            and (f.state is None or r["Status"].upper() == f.state)]
    if not stmt.order_by:
        stmt.order_by = [("FinishTime", False)]
    return text_columns(STREAM_LOAD_COLUMNS, _order_limit(rows, STREAM_LOAD_COLUMNS, stmt))


def _order_limit(rows: list, columns, stmt) -> list[tuple]:
    """`rows` sorted by the statement's ORDER BY columns (NULL first), then OFFSET, LIMIT;
    an unknown column is Doris's error."""
    for column, desc in reversed(stmt.order_by):
        i = next((k for k, c in enumerate(columns) if c.lower() == column.lower()), None)
        if i is None:
            raise AnalysisError(f"Title name[{column}] does not exist")
        rows.sort(key=lambda r: (r[i] is not None, r[i] if r[i] is not None else 0), reverse=desc)
    rows = rows[stmt.offset:]
    if stmt.limit is not None:
        rows = rows[:stmt.limit]
    return [tuple(r) for r in rows]


def cancel(stmt: CancelLoadStmt, ctx: StatementContext) -> OkResult:
    _manager(ctx).cancel(stmt, ctx.db)
    return OkResult()


LOAD_HANDLERS = {
    CreateResourceStmt: create,
    DropResourceStmt: drop,
    ShowResourcesStmt: show_resources,
    LoadStmt: load,
    ShowLoadStmt: show_load,
    ShowStreamLoadStmt: show_stream_load,
    CancelLoadStmt: cancel,
}
