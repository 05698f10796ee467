"""ALTER TABLE column clauses (ADD / DROP / MODIFY / RENAME COLUMN, ORDER BY, MODIFY COMMENT);
the rules live in catalog/schema_change.py, the job in catalog/schema_change_job.py."""

from __future__ import annotations

from catalog.schema_change import alter_columns
from catalog.statements import SchemaChangeStmt
from server.handlers.context import StatementContext
from server.results import OkResult


def schema_change(stmt: SchemaChangeStmt, ctx: StatementContext) -> OkResult:
    alter_columns(ctx.catalog, ctx.db, stmt)
    return OkResult()


SCHEMA_CHANGE_HANDLERS = {SchemaChangeStmt: schema_change}
