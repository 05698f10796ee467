"""ADMIN statements: FE configs (SET / SHOW FRONTEND CONFIG) and minidoris's hooks into the
dynamic partition scheduler (RUN DYNAMIC PARTITION, SET DYNAMIC PARTITION TIME)."""

from __future__ import annotations

from datetime import datetime

from catalog.errors import AnalysisError
from catalog.statements import (AdminRunDynamicPartitionStmt, AdminSetConfigStmt,
                                AdminSetDynamicPartitionTimeStmt, AdminShowConfigStmt)
from server.handlers.context import StatementContext
from server.handlers.show import like_filter
from server.results import OkResult, RowsResult, text_columns

CONFIG_COLUMNS = ["Key", "Value", "Type", "IsMutable", "MasterOnly", "Comment"]


def set_config(stmt: AdminSetConfigStmt, ctx: StatementContext) -> OkResult:
    for key, value in stmt.properties.items():
        ctx.fe_config.set(key, value)
    return OkResult()


def show_config(stmt: AdminShowConfigStmt, ctx: StatementContext) -> RowsResult:
    return text_columns(CONFIG_COLUMNS, ctx.fe_config.rows(like_filter(stmt.like)))


def run_dynamic_partition(stmt: AdminRunDynamicPartitionStmt, ctx: StatementContext) -> OkResult:
    if stmt.table is not None:
        db = stmt.db or ctx.db
        with ctx.catalog.lock:
            ctx.catalog.get_table(db, stmt.table)
        ctx.dynamic.run_pass(db_name=db, table_name=stmt.table)
        return OkResult()
    if stmt.db is not None:
        ctx.catalog.get_db(stmt.db)
    ctx.dynamic.run_pass(db_name=stmt.db)
    return OkResult()


def set_dynamic_partition_time(stmt: AdminSetDynamicPartitionTimeStmt,
                               ctx: StatementContext) -> OkResult:
    fixed = None
    if stmt.value is not None:
        try:
            fixed = datetime.fromisoformat(stmt.value.strip())
        except ValueError:
            raise AnalysisError(f"Invalid time: '{stmt.value}'. Expected "
                                "'yyyy-MM-dd HH:mm:ss'") from None
        fixed = fixed.replace(tzinfo=None)
    ctx.dynamic.set_time(fixed)
    return OkResult()
