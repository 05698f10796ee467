"""Rollup and materialized view statements; the rules live in catalog/rollup_ddl.py,
catalog/rollup.py and catalog/materialized_view.py, these handlers only route."""

from __future__ import annotations

from catalog import rollup_ddl
from catalog.materialized_view import create_materialized_view
from catalog.statements import (AddRollupStmt, AdminWaitAlterStmt, CancelAlterTableStmt,
                                CreateMaterializedViewStmt, DropRollupStmt, ShowAlterTableStmt)
from server.handlers import show_filter
from server.handlers.context import StatementContext
from server.results import OkResult, RowsResult, text_columns


def add_rollup(stmt: AddRollupStmt, ctx: StatementContext) -> OkResult:
    rollup_ddl.add_rollups(ctx.catalog, ctx.db, stmt)
    return OkResult()


def drop_rollup(stmt: DropRollupStmt, ctx: StatementContext) -> OkResult:
    rollup_ddl.drop_rollups(ctx.catalog, ctx.db, stmt)
    return OkResult()


def show_alter(stmt: ShowAlterTableStmt, ctx: StatementContext) -> RowsResult:
    tail = show_filter.parse_tail(stmt.tail)
    columns = rollup_ddl.SHOW_COLUMNS
    if stmt.kind == "COLUMN":
        from catalog.schema_change_job import SHOW_COLUMNS as columns
    return show_filter.apply(text_columns(columns,
                                          rollup_ddl.show_rows(ctx.catalog, stmt.db or ctx.db,
                                                               stmt.kind)), tail)


def cancel_alter(stmt: CancelAlterTableStmt, ctx: StatementContext) -> OkResult:
    rollup_ddl.cancel(ctx.catalog, ctx.db, stmt)
    return OkResult()


def create_mv(stmt: CreateMaterializedViewStmt, ctx: StatementContext) -> OkResult:
    create_materialized_view(ctx.catalog, ctx.db, stmt)
    return OkResult()


def admin_wait(stmt: AdminWaitAlterStmt, ctx: StatementContext) -> OkResult:
    rollup_ddl.wait_jobs(ctx.catalog, stmt.db or ctx.db)
    return OkResult()


ROLLUP_HANDLERS = {
    AddRollupStmt: add_rollup,
    DropRollupStmt: drop_rollup,
    ShowAlterTableStmt: show_alter,
    CancelAlterTableStmt: cancel_alter,
    CreateMaterializedViewStmt: create_mv,
    AdminWaitAlterStmt: admin_wait,
}
