"""Handlers of ALTER DATABASE (server/parser/alter_database.py, catalog/database_alter.py)."""

from __future__ import annotations

from catalog.database_alter import rename_database, set_quota
from server.handlers.context import StatementContext
from server.parser.alter_database import RenameDatabaseStmt, SetDatabaseQuotaStmt
from server.results import OkResult


def rename(stmt: RenameDatabaseStmt, ctx: StatementContext) -> OkResult:
    rename_database(ctx.catalog, stmt.name, stmt.new_name)
    return OkResult()


def quota(stmt: SetDatabaseQuotaStmt, ctx: StatementContext) -> OkResult:
    set_quota(ctx.catalog, stmt.name, stmt.data_quota, stmt.replica_quota)
    return OkResult()


HANDLERS = {RenameDatabaseStmt: rename, SetDatabaseQuotaStmt: quota}
