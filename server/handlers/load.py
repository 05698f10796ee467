"""Handlers of resources and Spark Load: CREATE/DROP/SHOW RESOURCE(S), LOAD LABEL, SHOW LOAD,
CANCEL LOAD. The jobs themselves run in pipeline/load_manager.py (`Services.load_manager`)."""

from __future__ import annotations

import fnmatch

from catalog.load_jobs import create_resource, drop_resource
from catalog.load_statements import (CancelLoadStmt, CreateResourceStmt, DropResourceStmt,
                                     LoadStmt, ShowLoadStmt, ShowResourcesStmt)
from pipeline.load_manager import SHOW_LOAD_COLUMNS
from server.handlers import show_filter
from server.handlers.context import StatementContext
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
    for column, desc in reversed(stmt.order_by):
        i = next((k for k, c in enumerate(SHOW_LOAD_COLUMNS) if c.lower() == column.lower()), None)
        if i is not None:
            rows.sort(key=lambda r: (r[i] is not None, r[i] if r[i] is not None else 0), reverse=desc)
    rows = rows[stmt.offset:]
    if stmt.limit is not None:
        rows = rows[:stmt.limit]
    return text_columns(SHOW_LOAD_COLUMNS, [tuple(r) for r in rows])


def cancel(stmt: CancelLoadStmt, ctx: StatementContext) -> OkResult:
    _manager(ctx).cancel(stmt, ctx.db)
    return OkResult()


LOAD_HANDLERS = {
    CreateResourceStmt: create,
    DropResourceStmt: drop,
    ShowResourcesStmt: show_resources,
    LoadStmt: load,
    ShowLoadStmt: show_load,
    CancelLoadStmt: cancel,
}
